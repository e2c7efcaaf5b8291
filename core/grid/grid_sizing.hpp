// How both engines size their grids: the particles' uniform grid and the bins over the mesh
// elements. What is sized from what (which reach, which query radius) is each engine's choice,
// said where it calls these; the rules are these.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/geometry/periodic.hpp"
#include "core/grid/cell_grid.hpp"

namespace dem {

// The smallest cell (all reaches zero): a normal number, so that 1 / cell_size stays finite.
constexpr real kSmallestCell = std::numeric_limits<real>::min();

// The particles' grid over the box [lo, hi] of n particles, cells of cell_size (twice the reach
// whose partners must lie in the 27 cells around a particle's own). On periodic axes the cells
// start at the box's lower face and tile the period. Bounded (linear keys, every key distinct)
// when the box has at most 8 cells per particle (or 4,096), else hashed into 2n buckets: memory
// O(n) however spread out the particles are. A search that visits a half stencil meets a cell of
// a period of one or two cells twice; with half_stencil such periods take the hashed path, whose
// search visits each distinct key once.
DEM_HD inline GridKeys size_particle_grid(Vec3 lo, Vec3 hi, const PeriodicBox& periodic, real cell_size, std::int64_t n,
                                   bool half_stencil) {
  GridKeys gk{};
  cover_periods(periodic, lo, hi, 0);
  gk.grid.origin = lo;
  gk.grid.cell_size = std::fmax(cell_size, kSmallestCell);
  gk.grid.wrap = periodic_cells(periodic, gk.grid.cell_size);
  Int3 top = n > 0 ? cell_coords(hi, gk.grid) : Int3{0, 0, 0};
  if (gk.grid.wrap.x) top.x = gk.grid.wrap.x - 1;
  if (gk.grid.wrap.y) top.y = gk.grid.wrap.y - 1;
  if (gk.grid.wrap.z) top.z = gk.grid.wrap.z - 1;
  const double cells = (double(top.x) + 1) * (double(top.y) + 1) * (double(top.z) + 1);
  const auto too_few = [half_stencil](std::int32_t w) { return half_stencil && w > 0 && w < 3; };
  gk.bounded = cells <= std::fmax(8.0 * double(n), 4096.0) && !too_few(gk.grid.wrap.x) && !too_few(gk.grid.wrap.y) &&
               !too_few(gk.grid.wrap.z);
  gk.grid.dims = gk.bounded ? Int3{top.x + 1, top.y + 1, top.z + 1} : Int3{0, 0, 0};
  gk.grid.hash_size = static_cast<std::uint32_t>(gk.bounded ? cells : double(n > 0 ? 2 * n : 1));
  return gk;
}

// The mesh bins (santasusana2016 §3: bins over the intersection domain of particles and meshes).
// They start at two query diameters (a query then touches 1 to 8 bins, 3.4 on average) and are
// doubled while large elements would occupy more than 16 bins each on average, or the domain would
// hold more than max(10^6, 64 per element) bins: memory stays bounded for meshes of large
// elements and for domains far larger than the query. The bins are always bounded (linear keys).
constexpr real kMeshBinQueries = 4;  // bin size over the largest query radius

// The bins' first size, for the largest query radius: two query diameters.
DEM_HD inline real first_mesh_bin_size(real query) { return dem_max(kMeshBinQueries * query, kSmallestCell); }

// The bins an element whose box has extent d can occupy at most, in bins of size s.
DEM_HD inline std::int64_t element_bins_bound(Vec3 d, real s) {
  return std::int64_t(std::floor(d.x / s) + 2) * std::int64_t(std::floor(d.y / s) + 2) * std::int64_t(std::floor(d.z / s) + 2);
}

// Whether bins of size s over the domain [lo, hi] fit: `entries` (the sum of element_bins_bound
// over the `elements` in the domain) and the bins' count within the bounds above.
DEM_HD inline bool mesh_bins_fit(Vec3 lo, Vec3 hi, real s, std::int64_t entries, std::int64_t elements) {
  CellGrid g{};
  g.origin = lo;
  g.cell_size = s;
  const Int3 top = cell_coords(hi, g);
  const double cells = (double(top.x) + 1) * (double(top.y) + 1) * (double(top.z) + 1);
  return entries <= 16 * 8 * elements && cells <= std::fmax(1.0e6, 64.0 * double(elements));
}

// The bins of size s over the domain [lo, hi] (cell (0, 0, 0) at lo).
DEM_HD inline GridKeys mesh_bin_grid(Vec3 lo, Vec3 hi, real s) {
  GridKeys gk{};
  gk.grid.origin = lo;
  gk.grid.cell_size = s;
  const Int3 top = cell_coords(hi, gk.grid);
  gk.grid.dims = Int3{top.x + 1, top.y + 1, top.z + 1};
  gk.grid.hash_size = static_cast<std::uint32_t>(gk.grid.dims.x * gk.grid.dims.y * gk.grid.dims.z);
  gk.bounded = true;
  return gk;
}

}  // namespace dem
