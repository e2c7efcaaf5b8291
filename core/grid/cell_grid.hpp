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

// Cell containing x; coordinates are unbounded (positions outside the box give negative or large
// values; the hashed key accepts them, the linear key clamps).
DEM_HD inline Int3 cell_coords(Vec3 x, const CellGrid& g) {
  const real inv = real(1) / g.cell_size;
  return Int3{static_cast<std::int32_t>(std::floor((x.x - g.origin.x) * inv)),
              static_cast<std::int32_t>(std::floor((x.y - g.origin.y) * inv)),
              static_cast<std::int32_t>(std::floor((x.z - g.origin.z) * inv))};
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
