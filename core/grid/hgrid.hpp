// Hierarchical grid (krijgsman2014): L levels of cubic cells of increasing size s_1 < ... < s_L.
// A particle is inserted at the lowest level whose cells are at least its search diameter (twice
// its reach: radius plus half skin), and its partners are the particles of every level whose
// centres lie in the box x +- (reach + s_j / 2) (Eq. 5: a particle of level j reaches at most
// s_j / 2). Written once for both engines: the host engine keeps the pairs with the higher index
// (each pair once), the device engine every partner (full rows).
//
// Cells have bounded keys (each level's cells over the particles' box numbered in turn, so the
// cells of a row are neighbours in memory and a box is clipped to the level's cells) when all
// levels together have at most max(8 n, 4096) cells; otherwise they are hashed with their level
// into buckets. A bucket can then hold several cells (collisions), so a candidate is taken only
// from its own cell (its level and cell are stored per particle) and every cell of a box is
// visited once: each partner is met exactly once, whatever collides. (Hashed keys made a cell
// access cost about 15 sphere-overlap tests, bench/results/dev-2core-cpu/hgrid.md.)
// Periodic axes: each level's cells tile the period (n = floor(L / s) cells, the last taking the
// remainder, as in the uniform grid), and a box that wraps is walked on the unrolled line of cells.
#pragma once
#include <cstdint>

#include "core/geometry/periodic.hpp"
#include "core/grid/cell_grid.hpp"

namespace dem {

constexpr int kMaxHGridLevels = 8;

struct HGridLevels {
  int count = 1;                        // L
  real cell[kMaxHGridLevels] = {};      // m, s_1 < ... < s_L (cell[L-1] >= the largest search diameter)
  Int3 wrap[kMaxHGridLevels] = {};      // cells per periodic axis at each level (0: not periodic)
  std::int32_t population[kMaxHGridLevels] = {};  // particles at each level (an empty level is not searched)
  Vec3 origin{0, 0, 0};                 // m: lower corner (the box's on periodic axes)
  std::uint32_t hash_size = 1;          // keys: buckets (a power of two, the key is masked) or cells
  bool bounded = false;                 // bounded keys (hgrid_set_keys), else hashed
  Int3 dims[kMaxHGridLevels] = {};      // bounded: cells per axis at each level
  std::uint32_t first[kMaxHGridLevels] = {};  // bounded: the key of each level's first cell
};

constexpr std::uint32_t kNoHGridCell = 0xFFFFFFFFu;  // a bounded key outside the particles' box

// Level of insertion: the lowest level whose cells hold the particle's search diameter.
DEM_HD inline int hgrid_level(const HGridLevels& g, real reach) {
  for (int h = 0; h < g.count - 1; ++h)
    if (2 * reach <= g.cell[h]) return h;
  return g.count - 1;
}

// One coordinate's cell on the unrolled line of cells: on a periodic axis of n cells, period k
// and cell c of it give k n + c (the last cell of a period takes the remainder); elsewhere the
// plain cell coordinate.
DEM_HD inline std::int64_t hgrid_unrolled(real y, real origin, real cell, std::int32_t n, real length) {
  if (n <= 0) return cell_coord(y - origin, real(1) / cell);
  real k = std::floor((y - origin) / length);
  k = k >= -kMaxCellCoord ? (k <= kMaxCellCoord ? k : kMaxCellCoord) : -kMaxCellCoord;  // (a NaN stays out of range below)
  const real u = (y - origin) - k * length;
  const real cf = std::floor(u / cell);  // (a NaN takes cell 0)
  const std::int64_t c = cf >= 0 ? (cf <= real(n - 1) ? static_cast<std::int64_t>(cf) : n - 1) : 0;
  return static_cast<std::int64_t>(k) * n + c;
}
DEM_HD inline std::int32_t hgrid_wrap(std::int64_t c, std::int32_t n) {
  if (n <= 0) return static_cast<std::int32_t>(c);
  const std::int64_t m = c % n;
  return static_cast<std::int32_t>(m < 0 ? m + n : m);
}

// The home cell of a position at a level.
DEM_HD inline Int3 hgrid_cell(const HGridLevels& g, const PeriodicBox& p, int level, Vec3 x) {
  const real s = g.cell[level];
  const Int3 n = g.wrap[level];
  return Int3{hgrid_wrap(hgrid_unrolled(x.x, g.origin.x, s, n.x, p.length.x), n.x),
              hgrid_wrap(hgrid_unrolled(x.y, g.origin.y, s, n.y, p.length.y), n.y),
              hgrid_wrap(hgrid_unrolled(x.z, g.origin.z, s, n.z, p.length.z), n.z)};
}

// The key of cell c (home cell coordinates, wrapped on periodic axes) at a level: bounded, or
// kNoHGridCell for a cell outside the box (it holds no particle); or hashed.
DEM_HD inline std::uint32_t hgrid_key(const HGridLevels& g, Int3 c, int level) {
  if (g.bounded) {
    const Int3 d = g.dims[level];
    if (c.x < 0 || c.y < 0 || c.z < 0 || c.x >= d.x || c.y >= d.y || c.z >= d.z) return kNoHGridCell;
    return g.first[level] +
           (static_cast<std::uint32_t>(c.z) * static_cast<std::uint32_t>(d.y) + static_cast<std::uint32_t>(c.y)) *
               static_cast<std::uint32_t>(d.x) +
           static_cast<std::uint32_t>(c.x);
  }
  const std::uint32_t h = (static_cast<std::uint32_t>(c.x) * 73856093u) ^ (static_cast<std::uint32_t>(c.y) * 19349663u) ^
                          (static_cast<std::uint32_t>(c.z) * 83492791u) ^ (static_cast<std::uint32_t>(level) * 2654435761u);
  return h & (g.hash_size - 1);
}

// Buckets for n particles: the power of two at or above 2 n.
inline std::uint32_t hgrid_buckets(std::int64_t n) {
  std::uint32_t b = 1;
  while (b < 2 * n && b < (1u << 31)) b <<= 1;
  return b;
}

// The keys for n particles in the box [g.origin, hi] (cells, wrap and origin set): bounded when
// all levels have at most max(8 n, 4096) cells, else hashed (hash_size = hgrid_buckets(n)).
inline void hgrid_set_keys(HGridLevels& g, const PeriodicBox& p, Vec3 hi, std::int64_t n) {
  double total = 0;
  const real top[3] = {hi.x, hi.y, hi.z}, o[3] = {g.origin.x, g.origin.y, g.origin.z};
  const real len[3] = {p.length.x, p.length.y, p.length.z};
  for (int h = 0; h < g.count; ++h) {
    const std::int32_t w[3] = {g.wrap[h].x, g.wrap[h].y, g.wrap[h].z};
    double d[3];
    for (int a = 0; a < 3; ++a)
      d[a] = w[a] > 0 ? double(w[a]) : double(hgrid_unrolled(top[a], o[a], g.cell[h], 0, len[a])) + 1;
    g.dims[h] = Int3{static_cast<std::int32_t>(d[0]), static_cast<std::int32_t>(d[1]), static_cast<std::int32_t>(d[2])};
    g.first[h] = static_cast<std::uint32_t>(total);
    total += d[0] * d[1] * d[2];
    if (!(d[0] >= 1 && d[1] >= 1 && d[2] >= 1)) total = 1e300;  // a NaN box: hashed
  }
  g.bounded = total <= std::max(8.0 * double(n), 4096.0);
  g.hash_size = g.bounded ? static_cast<std::uint32_t>(total) : hgrid_buckets(n);
  if (!g.bounded)
    for (int h = 0; h < g.count; ++h) g.dims[h] = Int3{0, 0, 0}, g.first[h] = 0;
}

// The sorted grid: bucket b holds entries [start[b], start[b + 1]); entry k is particle entry[k]
// (nullptr: k itself, the device's arrays being in entry order), with its position, search
// radius, level and home cell at ex[k], er[k], el[k], ec[k] (packed in entry order, so that a
// bucket is read as one contiguous run).
struct HGridView {
  HGridLevels g;
  PeriodicBox periodic;
  const std::int32_t* start;
  const std::int32_t* entry;
  const Vec3* ex;
  const real* er;
  const std::uint8_t* el;
  const Int3* ec;

  // Calls emit(j) for every particle j other than entry s's own, of levels 0..last_level, with
  // |x_s - x_j| < reach_s + reach_j (nearest images on periodic axes), each once, in no particular
  // order: all levels give the full row (the device engine). top_down: up to its own level, and on
  // it only the entries after s, so each pair once (the host engine: the paper's Top-Down search);
  // the partners skipped are not tested.
  template <class Emit>
  DEM_HD void visit(std::int64_t s, int last_level, Emit&& emit, bool top_down = false) const {
    const Vec3 xi = ex[s];
    const real ri = er[s];
    const int own = el[s];
    visit_cells(xi, ri, last_level, [&](std::int32_t k, int j, Int3 q) {
      const bool only_after = top_down && j == own;
      if (el[k] != j || ec[k].x != q.x || ec[k].y != q.y || ec[k].z != q.z || k == s || (only_after && k < s)) return;
      const real r = ri + er[k];
      if (norm2(nearest_image(periodic, xi - ex[k])) < r * r) emit(entry ? entry[k] : k);
    });
  }

  // Calls on_entry(k, j, q) for every entry k in a bucket of a cell q of level j (0..last_level)
  // that a particle of that level within reach `ri` of `xi` could lie in (so a particle of level j
  // within ri + its own reach). A bucket holds every cell hashed to it: on_entry checks the entry's
  // own level and cell where it matters.
  template <class OnEntry>
  DEM_HD void visit_cells(Vec3 xi, real ri, int last_level, OnEntry&& on_entry) const {
    for (int j = 0; j <= last_level; ++j) {
      const real size = g.cell[j];
      const real beta = ri + real(0.5) * size;
      const Int3 n = g.wrap[j];
      std::int64_t lo[3], hi[3];
      const real c[3] = {xi.x, xi.y, xi.z}, o[3] = {g.origin.x, g.origin.y, g.origin.z};
      const real len[3] = {periodic.length.x, periodic.length.y, periodic.length.z};
      const std::int32_t nn[3] = {n.x, n.y, n.z};
      if (g.population[j] == 0) continue;  // nothing to meet there
      const std::int32_t dd[3] = {g.dims[j].x, g.dims[j].y, g.dims[j].z};
      for (int a = 0; a < 3; ++a) {
        lo[a] = hgrid_unrolled(c[a] - beta, o[a], size, nn[a], len[a]);
        hi[a] = nn[a] > 0 && 2 * beta >= len[a] ? lo[a] + nn[a] - 1 : hgrid_unrolled(c[a] + beta, o[a], size, nn[a], len[a]);
        if (nn[a] > 0 && hi[a] - lo[a] + 1 > nn[a]) hi[a] = lo[a] + nn[a] - 1;  // the whole period, once
        if (g.bounded && nn[a] <= 0) {  // bounded keys: the box clipped to the level's cells
          lo[a] = lo[a] > 0 ? lo[a] : 0;
          hi[a] = hi[a] < dd[a] - 1 ? hi[a] : dd[a] - 1;
        }
      }
      for (std::int64_t uz = lo[2]; uz <= hi[2]; ++uz)
        for (std::int64_t uy = lo[1]; uy <= hi[1]; ++uy)
          for (std::int64_t ux = lo[0]; ux <= hi[0]; ++ux) {
            const Int3 q{hgrid_wrap(ux, nn[0]), hgrid_wrap(uy, nn[1]), hgrid_wrap(uz, nn[2])};
            const std::uint32_t key = hgrid_key(g, q, j);
            if (key == kNoHGridCell) continue;
            for (std::int32_t k = start[key]; k < start[key + 1]; ++k) on_entry(k, j, q);
          }
    }
  }
};

}  // namespace dem
