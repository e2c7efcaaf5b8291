// Cell coordinates and keys of the broad phase's grids: the particles' uniform grid and the mesh
// bins (the HGrid's keys, which add a level, are in core/grid/hgrid.hpp).
#pragma once
#include <cstdint>

#include "core/geometry/periodic.hpp"
#include "core/grid/hilbert.hpp"
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
  // Cells along each periodic axis (0: not periodic). There the grid starts at the box's lower
  // face and its cells tile the period: n = floor(L / cell_size) cells, the last one taking the
  // remainder, so every cell is at least cell_size wide and a partner within cell_size lies in
  // the same or an adjacent cell, counted modulo n.
  Int3 wrap{0, 0, 0};
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

// Periodic axes: a particle's own cell (its position lies in the box; one that rounded onto the
// upper face, or into the remainder, belongs to the last cell), and a neighbour cell's
// coordinate taken modulo the cell count. Other axes pass through.
DEM_HD inline std::int32_t home_coord(std::int32_t c, std::int32_t n) { return n > 0 ? dem_clamp(c, 0, n - 1) : c; }
DEM_HD inline std::int32_t wrap_coord(std::int32_t c, std::int32_t n) {
  if (n <= 0) return c;
  const std::int32_t m = c % n;
  return m < 0 ? m + n : m;
}
DEM_HD inline Int3 home_cell(Vec3 x, const CellGrid& g) {
  const Int3 c = cell_coords(x, g);
  return Int3{home_coord(c.x, g.wrap.x), home_coord(c.y, g.wrap.y), home_coord(c.z, g.wrap.z)};
}
DEM_HD inline Int3 wrap_cell(Int3 c, const CellGrid& g) {
  return Int3{wrap_coord(c.x, g.wrap.x), wrap_coord(c.y, g.wrap.y), wrap_coord(c.z, g.wrap.z)};
}

// Cells along an axis of period `length` with cells at least `cell_size` wide (at least one).
DEM_HD inline std::int32_t periodic_cells(real length, real cell_size) {
  const real n = std::floor(length / cell_size);
  return n < 1 ? 1 : (n > kMaxCellCoord ? static_cast<std::int32_t>(kMaxCellCoord) : static_cast<std::int32_t>(n));
}

// The cells of size cell_size along each periodic axis of b (0 on the others: CellGrid::wrap).
DEM_HD inline Int3 periodic_cells(const PeriodicBox& b, real cell_size) {
  return Int3{b.length.x > 0 ? periodic_cells(b.length.x, cell_size) : 0,
              b.length.y > 0 ? periodic_cells(b.length.y, cell_size) : 0,
              b.length.z > 0 ? periodic_cells(b.length.z, cell_size) : 0};
}

// Row-major key in a bounded grid; coordinates outside are clamped to the boundary cells, which
// only adds candidates (never loses one) for particles that left the box.
DEM_HD inline std::uint32_t cell_key(Int3 c, const CellGrid& g) {
  const std::int32_t x = dem_clamp(c.x, 0, g.dims.x - 1);
  const std::int32_t y = dem_clamp(c.y, 0, g.dims.y - 1);
  const std::int32_t z = dem_clamp(c.z, 0, g.dims.z - 1);
  return static_cast<std::uint32_t>((z * g.dims.y + y) * g.dims.x + x);
}

// A bounded grid's cell along the Hilbert curve over its cells (core/grid/hilbert.hpp), clamped as
// cell_key: distinct cells, distinct keys, where every axis has at most 2^21 cells (curve_fits).
DEM_HD inline bool curve_fits(const CellGrid& g) {
  const std::int32_t most = static_cast<std::int32_t>(kHilbertCoordMax) + 1;
  return g.dims.x <= most && g.dims.y <= most && g.dims.z <= most;
}
// Where every axis has at most 2^10 cells the keys lie below 2^30 (the curve fills the cube of
// side 2^k at its start, the origin, with its first 8^k cells): 32-bit keys sort them.
DEM_HD inline bool curve_fits_32_bits(const CellGrid& g) { return g.dims.x <= 1024 && g.dims.y <= 1024 && g.dims.z <= 1024; }
DEM_HD inline std::uint64_t cell_curve_key(Int3 c, const CellGrid& g) {
  return hilbert_key(static_cast<std::uint32_t>(dem_clamp(c.x, 0, g.dims.x - 1)),
                     static_cast<std::uint32_t>(dem_clamp(c.y, 0, g.dims.y - 1)),
                     static_cast<std::uint32_t>(dem_clamp(c.z, 0, g.dims.z - 1)));
}

// Hashed key (Teschner et al. 2003 primes) for unbounded domains. Collisions put distant cells in
// one bucket: they add candidates that the narrow phase rejects, never lose a contact.
DEM_HD inline std::uint32_t hashed_cell_key(Int3 c, std::uint32_t hash_size) {
  const std::uint32_t h = (static_cast<std::uint32_t>(c.x) * 73856093u) ^
                          (static_cast<std::uint32_t>(c.y) * 19349663u) ^
                          (static_cast<std::uint32_t>(c.z) * 83492791u);
  return h % hash_size;
}

// A grid and its key: linear in a bounded grid over the box (every key distinct), hashed buckets
// otherwise. core/grid/grid_sizing.hpp chooses which.
struct GridKeys {
  CellGrid grid;
  bool bounded;
  DEM_HD std::uint32_t key(Int3 c) const { return bounded ? cell_key(c, grid) : hashed_cell_key(c, grid.hash_size); }
};

// Number of key bits a radix sort over keys in [0, n) needs.
DEM_HD inline int key_bits(std::uint32_t n) {
  int bits = 0;
  while (bits < 32 && (std::uint64_t(1) << bits) < n) ++bits;
  return bits;
}

}  // namespace dem
