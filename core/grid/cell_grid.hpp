// Cell coordinates and keys for the broad phase (uniform grid now; an HGrid adds a level to the
// same hashed key later, MercuryDPM's computeHashBucketIndex).
#pragma once
#include <cstdint>

#include "core/math/vec3.hpp"

namespace dem {

struct Int3 {
  std::int32_t x, y, z;
};

struct CellGrid {
  Vec3 origin;         // m, lower corner of cell (0, 0, 0)
  real cell_size;      // m
  Int3 dims;           // cells per axis of the bounded (linear-key) grid
  std::uint32_t hash_size;  // buckets of the hashed grid (a power of two is not required)
};

// Largest cell coordinate magnitude: far enough for any grid, and its 27-cell stencil and key
// arithmetic stay inside int32.
constexpr real kMaxCellCoord = real(1 << 28);

// Cell containing x; coordinates outside the box give negative or large values (the hashed key
// accepts them, the linear key clamps). They are clamped to +-2^28 (a NaN to 0), so a particle far
// away (or a box of absurd extent) never overflows the int32 conversion: it shares a cell with
// others, which only adds candidates the narrow phase rejects.
DEM_HD inline std::int32_t cell_coord(real offset, real inv_cell) {
  const real c = std::floor(offset * inv_cell);
  return static_cast<std::int32_t>(c >= -kMaxCellCoord ? (c <= kMaxCellCoord ? c : kMaxCellCoord) : (c < 0 ? -kMaxCellCoord : real(0)));
}
DEM_HD inline Int3 cell_coords(Vec3 x, const CellGrid& g) {
  const real inv = real(1) / g.cell_size;
  return Int3{cell_coord(x.x - g.origin.x, inv), cell_coord(x.y - g.origin.y, inv), cell_coord(x.z - g.origin.z, inv)};
}

// Row-major key in a bounded grid; coordinates outside are clamped to the boundary cells, which
// only adds candidates (never loses one) for particles that left the box.
DEM_HD inline std::uint32_t cell_key(Int3 c, const CellGrid& g) {
  const std::int32_t x = dem_clamp(c.x, 0, g.dims.x - 1);
  const std::int32_t y = dem_clamp(c.y, 0, g.dims.y - 1);
  const std::int32_t z = dem_clamp(c.z, 0, g.dims.z - 1);
  return static_cast<std::uint32_t>((z * g.dims.y + y) * g.dims.x + x);
}

// Hashed key (Teschner et al. 2003 primes) for unbounded domains. Collisions put distant cells in
// one bucket: they add candidates that the narrow phase rejects, never lose a contact.
DEM_HD inline std::uint32_t hashed_cell_key(Int3 c, std::uint32_t hash_size) {
  const std::uint32_t h = (static_cast<std::uint32_t>(c.x) * 73856093u) ^
                          (static_cast<std::uint32_t>(c.y) * 19349663u) ^
                          (static_cast<std::uint32_t>(c.z) * 83492791u);
  return h % hash_size;
}

// Number of key bits a radix sort over keys in [0, n) needs.
DEM_HD inline int key_bits(std::uint32_t n) {
  int bits = 0;
  while (bits < 32 && (std::uint64_t(1) << bits) < n) ++bits;
  return bits;
}

}  // namespace dem
