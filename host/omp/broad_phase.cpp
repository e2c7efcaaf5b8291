#include "host/omp/broad_phase.hpp"
#include "core/grid/hilbert.hpp"
#include "host/omp/parallel.hpp"
#include "host/omp/short_sort.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <omp.h>

namespace dem::host {

namespace {
constexpr int kTestLanes = 16;  // partners per vectorised distance test of the uniform grid's search
}  // namespace

std::vector<std::int64_t> hilbert_order(const std::vector<Vec3>& x, real cell, std::size_t parallel_min) {
  const std::size_t n = x.size();
  Vec3 lo, hi;
  points_box(x, lo, hi, parallel_min);
  const real inv = real(1) / cell;
  const auto coord = [inv](real c, real l) {
    const real q = (c - l) * inv;
    return static_cast<std::uint32_t>(std::min<real>(q > 0 ? q : 0, real(kHilbertCoordMax)));
  };
  std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(n);
#pragma omp parallel for schedule(static) if (n > parallel_min)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i)
    keyed[i] = {hilbert_key(coord(x[i].x, lo.x), coord(x[i].y, lo.y), coord(x[i].z, lo.z)), i};
  std::sort(keyed.begin(), keyed.end());
  std::vector<std::int64_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = keyed[i].second;
  return order;
}

void counting_sort(const std::vector<std::uint32_t>& keys, std::uint32_t num_keys,
                   std::vector<std::int32_t>& offsets, std::vector<std::int32_t>& order) {
  offsets.assign(static_cast<std::size_t>(num_keys) + 1, 0);
  for (std::uint32_t k : keys) ++offsets[k + 1];                              // count
  for (std::uint32_t k = 0; k < num_keys; ++k) offsets[k + 1] += offsets[k];  // exclusive scan
  order.resize(keys.size());
  std::vector<std::int32_t> cursor(offsets.begin(), offsets.end() - 1);
  for (std::size_t i = 0; i < keys.size(); ++i) order[cursor[keys[i]]++] = static_cast<std::int32_t>(i);  // stable fill
}

// Pairs found by `teams` threads (part_a[t][k] < part_b[t][k]) into rows: each thread counts its
// own pairs per row, a scan gives every (row, thread) its cursor, and each thread scatters its
// pairs without atomics; then each row is sorted by partner. The result does not depend on how
// the search was split.
void pairs_to_rows(std::int64_t n, int teams, const std::vector<std::vector<std::int32_t>>& part_a,
                   const std::vector<std::vector<std::int32_t>>& part_b, std::vector<std::int32_t>& a,
                   std::vector<std::int32_t>& b, std::size_t parallel_min) {
  std::vector<std::int32_t> row(static_cast<std::size_t>(n) + 1);
  std::vector<std::vector<std::int32_t>> cursor(teams);
  std::vector<std::int64_t> block_total(teams);
  std::size_t np = 0;
  for (int t = 0; t < teams; ++t) np += part_a[t].size();
  a.resize(np);
  b.resize(np);
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::vector<std::int32_t>& pa = part_a[t];
    const std::vector<std::int32_t>& pb = part_b[t];
    std::vector<std::int32_t>& cur = cursor[t];
    cur.assign(static_cast<std::size_t>(n), 0);
    for (std::int32_t i : pa) ++cur[i];
#pragma omp barrier
    scan_row_cursors(n, t, nt, [](std::int64_t) { return 0; }, cursor, row.data(), block_total);
    for (std::size_t k = 0; k < pa.size(); ++k) b[cur[pa[k]]++] = pb[k];
  }
#pragma omp parallel for schedule(static) if (static_cast<std::size_t>(n) > parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    std::fill(a.begin() + row[i], a.begin() + row[i + 1], static_cast<std::int32_t>(i));
    sort_short_list(b.data() + row[i], row[i + 1] - row[i]);
  }
}

void UniformGridBroadPhase::build(const std::vector<Vec3>& x, const std::vector<real>& reach) {
  const std::size_t n = x.size();
  Vec3 lo, hi;
  points_box(x, lo, hi, parallel_min_);
  // Cells of twice the 99th-percentile reach: one outlier (a large sphere, a fast one) no longer
  // sets the cell size for all. With equal reaches every particle is narrow.
  max_reach_ = 0;
  narrow_reach_ = 0;
  if (n) {
    std::vector<real> r(reach);
    const std::size_t q = std::min(n - 1, n - n / 100);
    std::nth_element(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(q), r.end());
    narrow_reach_ = r[q];
    max_reach_ = *std::max_element(r.begin() + static_cast<std::ptrdiff_t>(q), r.end());
  }
  // (A particle gathers no row of its own here: a wide particle's pairs come from its own search.)
  const GridKeys gk = size_particle_grid(lo, hi, periodic_, real(2) * narrow_reach_, static_cast<std::int64_t>(n), true);
  grid_ = gk.grid;
  bounded_ = gk.bounded;
  std::vector<std::uint32_t> keys(n);
#pragma omp parallel for schedule(static) if (n > parallel_min_)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) keys[i] = key_of(home_cell(x[i], grid_));
  counting_sort(keys, grid_.hash_size, offsets_, order_);
  is_wide_.resize(n);
  wide_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    is_wide_[i] = reach[i] > narrow_reach_ ? 1 : 0;
    if (is_wide_[i]) wide_.push_back(static_cast<std::int32_t>(i));
  }
  // Positions and reaches in cell order: the pair search then reads each cell as one contiguous run.
  for (std::vector<real>* v : {&sorted_x_, &sorted_y_, &sorted_z_, &sorted_reach_})
    v->assign(n + kTestLanes, real(0));  // (the padding: read by the last lanes, never kept)
#pragma omp parallel for schedule(static) if (n > parallel_min_)
  for (std::int64_t s = 0; s < static_cast<std::int64_t>(n); ++s) {
    const std::int32_t i = order_[s];
    sorted_x_[s] = x[i].x, sorted_y_[s] = x[i].y, sorted_z_[s] = x[i].z;
    sorted_reach_[s] = is_wide_[i] ? real(-1) : reach[i];
  }
}

std::uint32_t UniformGridBroadPhase::key_of(Int3 c) const { return GridKeys{grid_, bounded_}.key(c); }

// The distinct keys of the 3x3x3 cells around c. Bounded grid: the cells inside it. Hashed:
// collisions can map two cells to one bucket, which must be scanned once.
int UniformGridBroadPhase::neighbour_keys(Int3 c, std::uint32_t out[27]) const {
  int n = 0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const Int3 q = wrap_cell(Int3{c.x + dx, c.y + dy, c.z + dz}, grid_);
        if (bounded_) {
          if (q.x < 0 || q.y < 0 || q.z < 0 || q.x >= grid_.dims.x || q.y >= grid_.dims.y || q.z >= grid_.dims.z) continue;
          out[n++] = cell_key(q, grid_);
        } else {
          const std::uint32_t k = hashed_cell_key(q, grid_.hash_size);
          if (std::find(out, out + n, k) == out + n) out[n++] = k;
        }
      }
  return n;
}

bool UniformGridBroadPhase::keys_around(Int3 c, int span, std::vector<std::uint32_t>& keys) const {
  keys.clear();
  if (std::pow(2.0 * span + 1, 3) > double(order_.size())) return false;
  for (int dz = -span; dz <= span; ++dz)
    for (int dy = -span; dy <= span; ++dy)
      for (int dx = -span; dx <= span; ++dx) {
        const Int3 q = wrap_cell(Int3{c.x + dx, c.y + dy, c.z + dz}, grid_);
        if (bounded_) {
          if (q.x < 0 || q.y < 0 || q.z < 0 || q.x >= grid_.dims.x || q.y >= grid_.dims.y || q.z >= grid_.dims.z) continue;
          keys.push_back(cell_key(q, grid_));
        } else {
          keys.push_back(hashed_cell_key(q, grid_.hash_size));
        }
      }
  if (!bounded_ || periodic_.any()) {  // colliding or wrapped cells repeat: each once
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  }
  return true;
}

// Every particle of the cells within radius + max_reach of q (cell indices differ by at most
// floor(d / h) + 1), as in wide_pairs; no answer beyond 7 x 7 x 7 cells.
bool UniformGridBroadPhase::near(Vec3 q, real radius, std::vector<std::int32_t>& out) const {
  if (order_.empty()) return true;
  const real span_cells = std::floor((radius + max_reach_) / grid_.cell_size) + 1;
  if (!(span_cells <= 3)) return false;
  std::vector<std::uint32_t> keys;
  if (!keys_around(home_cell(q, grid_), static_cast<int>(span_cells), keys)) return false;
  for (std::uint32_t key : keys) out.insert(out.end(), order_.begin() + offsets_[key], order_.begin() + offsets_[key + 1]);
  return true;
}

void UniformGridBroadPhase::wide_pairs(std::int32_t i, const std::vector<Vec3>& x, const std::vector<real>& reach,
                                       std::vector<std::int32_t>& pa, std::vector<std::int32_t>& pb) const {
  const Vec3 xi = x[i];
  // Cells within reach_i + max_reach of the centre: cell indices differ by at most floor(d / h) + 1.
  const int span = static_cast<int>(std::floor((reach[i] + max_reach_) / grid_.cell_size)) + 1;
  const Int3 c = home_cell(xi, grid_);
  auto test = [&](std::int32_t j) {
    if (j == i || (is_wide_[j] && j < i)) return;  // a wide pair is found from its lower index
    const real r = reach[i] + reach[j];
    if (norm2(nearest_image(periodic_, xi - x[j])) < r * r) {
      pa.push_back(std::min(i, j));
      pb.push_back(std::max(i, j));
    }
  };
  std::vector<std::uint32_t> keys;
  if (!keys_around(c, span, keys)) {  // more cells than particles (a huge reach): test them all
    for (std::int32_t j = 0; j < static_cast<std::int32_t>(order_.size()); ++j) test(j);
    return;
  }
  for (std::uint32_t key : keys)
    for (std::int32_t s = offsets_[key]; s < offsets_[key + 1]; ++s) test(order_[s]);
}

namespace {

// The half stencil's distance tests of one sphere against a run of cell-sorted ones: kTestLanes
// partners at a time in one vectorised loop into a bit mask (the scalar test's arithmetic, so the
// same pairs), then only the hits appended, as (lower index, higher index). One at a time, each
// test cost a dozen scalar instructions and the ribbon mixer's rebuilds a fifth of its step.
struct SortedRun {
  const real *x, *y, *z, *reach;  // padded by kTestLanes
  const std::int32_t* order;
  PeriodicBox box;
  std::int32_t *qa, *qb;  // room for every partner in the run

  // Sphere s against u in [from, to); appends at count, returns the new count.
  template <bool kPeriodic>
  std::size_t test(std::int32_t s, std::int32_t from, std::int32_t to, std::size_t count) const {
    const real xs = x[s], ys = y[s], zs = z[s], rs = reach[s];
    const std::int32_t i = order[s];
    for (std::int32_t base = from; base < to; base += kTestLanes) {
      const std::int32_t lanes = to - base;  // those at or beyond it are not in the run
      std::uint32_t hits = 0;
      const real *px = x + base, *py = y + base, *pz = z + base, *pr = reach + base;
#pragma omp simd reduction(| : hits)
      for (int l = 0; l < kTestLanes; ++l) {
        real ex = xs - px[l], ey = ys - py[l], ez = zs - pz[l];
        if (kPeriodic) {
          ex = nearest_image_coord(ex, box.length.x, box.half.x);
          ey = nearest_image_coord(ey, box.length.y, box.half.y);
          ez = nearest_image_coord(ez, box.length.z, box.half.z);
        }
        const real r = rs + pr[l];
        const bool hit = (ex * ex + ey * ey + ez * ez < r * r) & (pr[l] >= 0) & (l < lanes);
        hits |= std::uint32_t(hit) << l;
      }
      for (; hits != 0; hits &= hits - 1) {
        const std::int32_t j = order[base + __builtin_ctz(hits)];
        qa[count] = std::min(i, j);
        qb[count] = std::max(i, j);
        ++count;
      }
    }
    return count;
  }
};

}  // namespace

void UniformGridBroadPhase::find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach,
                                       std::vector<std::int32_t>& a, std::vector<std::int32_t>& b) const {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const int teams = static_cast<std::size_t>(n) > parallel_min_ ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::int32_t>> part_a(teams), part_b(teams);
  const std::size_t expect = (a.size() + a.size() / 4) / static_cast<std::size_t>(teams);  // last call's count
  const std::int64_t wide = static_cast<std::int64_t>(wide_.size());
  if (!bounded_) {
    // Hashed cells: per narrow particle, the narrow partners j > i in the (distinct) buckets of
    // its 27 cells; per wide particle, its whole reach. Threads take contiguous ranges.
#pragma omp parallel num_threads(teams) if (teams > 1)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      std::vector<std::int32_t>& pa = part_a[t];
      std::vector<std::int32_t>& pb = part_b[t];
      for (std::int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i) {
        if (is_wide_[i]) continue;
        std::uint32_t keys[27];
        const Vec3 xi = x[i];
        const int nk = neighbour_keys(home_cell(xi, grid_), keys);
        for (int k = 0; k < nk; ++k)
          for (std::int32_t s = offsets_[keys[k]]; s < offsets_[keys[k] + 1]; ++s) {
            const std::int32_t j = order_[s];
            const real r = reach[i] + reach[j];
            if (j > i && !is_wide_[j] && norm2(nearest_image(periodic_, xi - x[j])) < r * r) {
              pa.push_back(static_cast<std::int32_t>(i));
              pb.push_back(j);
            }
          }
      }
      for (std::int64_t w = wide * t / nt; w < wide * (t + 1) / nt; ++w) wide_pairs(wide_[w], x, reach, pa, pb);
    }
  } else {
    // Bounded grid, half stencil over cells: each non-empty cell meets its own particles pairwise
    // and the particles of the 13 cells after it in key order, so each pair of narrow particles is
    // met exactly once. Threads take contiguous ranges of cells (split by particle count).
    const std::int64_t cells = static_cast<std::int64_t>(offsets_.size()) - 1;
#pragma omp parallel num_threads(teams) if (teams > 1)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      std::vector<std::int32_t>& pa = part_a[t];
      std::vector<std::int32_t>& pb = part_b[t];
      std::size_t count = 0;
      pa.resize(std::max<std::size_t>(expect, 1024));
      pb.resize(pa.size());
      auto first_cell = [&](std::int64_t p) {  // the cell holding position p in cell order
        return static_cast<std::int64_t>(std::upper_bound(offsets_.begin(), offsets_.end(), static_cast<std::int32_t>(p)) -
                                         offsets_.begin()) - 1;
      };
      const std::int64_t c0 = t == 0 ? 0 : first_cell(n * t / nt);
      const std::int64_t c1 = t == nt - 1 ? cells : first_cell(n * (t + 1) / nt);
      const std::int32_t dx = grid_.dims.x, dy = grid_.dims.y, dz = grid_.dims.z;
      const std::int32_t wx = grid_.wrap.x, wy = grid_.wrap.y, wz = grid_.wrap.z;
      const bool per = periodic_.any();
      const PeriodicBox box = periodic_;
      for (std::int64_t c = c0; c < c1; ++c) {
        const std::int32_t s0 = offsets_[c], s1 = offsets_[c + 1];
        if (s0 == s1) continue;
        const std::int32_t cx = static_cast<std::int32_t>(c % dx), cy = static_cast<std::int32_t>((c / dx) % dy),
                           cz = static_cast<std::int32_t>(c / (std::int64_t(dx) * dy));
        // The 13 forward cells as runs along x: (+1, 0, 0), then x - 1 .. x + 1 in the rows
        // (y + 1, z), (y - 1 .. y + 1, z + 1). Neighbouring cells along x have consecutive keys,
        // so a run is one range of the cell-sorted particles unless it wraps or leaves the grid;
        // the cell's own particles after s run on into (+1, 0, 0) when that cell is the next key.
        // (The own cell's tail with (+1, 0, 0), then four runs of three cells: five inner loops
        // instead of 14; the rebuilds of the ribbon mixer's lists 7 % faster.)
        std::int32_t lo[10], hi[10];
        int nr = 0;
        std::size_t reach_count = 0;  // particles in the forward cells
        const auto add_run = [&](std::int32_t qy, std::int32_t qz, std::int32_t x0, std::int32_t x1) {
          qy = wrap_coord(qy, wy);
          qz = wrap_coord(qz, wz);
          if (qy < 0 || qz < 0 || qy >= dy || qz >= dz) return;
          const std::int32_t row = (qz * dy + qy) * dx;
          std::int32_t first = -1, last = -2;  // the current run of consecutive keys
          const auto close = [&] {
            if (first < 0) return;
            const std::int32_t from = offsets_[row + first], to = offsets_[row + last + 1];
            if (from < to) {
              lo[nr] = from, hi[nr] = to, ++nr;
              reach_count += static_cast<std::size_t>(to - from);
            }
          };
          for (std::int32_t ex = x0; ex <= x1; ++ex) {
            const std::int32_t qx = wrap_coord(ex, wx);
            if (qx < 0 || qx >= dx) continue;
            if (qx != last + 1) {
              close();
              first = qx;
            }
            last = qx;
          }
          close();
        };
        add_run(cy, cz, cx + 1, cx + 1);
        // the own cell's tail joins the first run when (+1, 0, 0) is the next key
        const bool joined = nr > 0 && lo[0] == s1;
        add_run(cy + 1, cz, cx - 1, cx + 1);
        for (int ey = -1; ey <= 1; ++ey) add_run(cy + ey, cz + 1, cx - 1, cx + 1);
        // Room for every candidate of this cell, so the loops below append without branching on
        // the (unpredictable) distance test.
        const std::size_t need = count + std::size_t(s1 - s0) * (reach_count + std::size_t(s1 - s0));
        if (need > pa.size()) {
          pa.resize(2 * need);
          pb.resize(2 * need);
        }
        const SortedRun run{sorted_x_.data(), sorted_y_.data(), sorted_z_.data(), sorted_reach_.data(),
                            order_.data(), box, pa.data(), pb.data()};
        for (std::int32_t s = s0; s < s1; ++s) {
          if (sorted_reach_[s] < 0) continue;  // wide: searched on its own below
          int k = 0;
          const auto test = [&](std::int32_t from, std::int32_t to) {
            count = per ? run.test<true>(s, from, to, count) : run.test<false>(s, from, to, count);
          };
          if (joined) {
            test(s + 1, hi[0]);
            k = 1;
          } else {
            test(s + 1, s1);
          }
          for (; k < nr; ++k) test(lo[k], hi[k]);
        }
      }
      pa.resize(count);
      pb.resize(count);
      for (std::int64_t w = wide * t / nt; w < wide * (t + 1) / nt; ++w) wide_pairs(wide_[w], x, reach, pa, pb);
    }
  }
  pairs_to_rows(n, teams, part_a, part_b, a, b, parallel_min_);
}

// ---------------------------------------------------------------------------------------------
// Hierarchical grid

std::unique_ptr<BroadPhase> make_broad_phase(const BroadPhaseSpec& spec, const std::vector<real>& reach, double volume) {
  const bool hgrid = spec.method == BroadPhaseMethod::HGrid ||
                     (spec.method == BroadPhaseMethod::Auto && auto_wants_hgrid(reach, volume));
  if (spec.method == BroadPhaseMethod::Bsp) return std::make_unique<BspBroadPhase>();
  if (hgrid) return std::make_unique<HGridBroadPhase>(spec.levels, spec.cell_sizes);
  return std::make_unique<UniformGridBroadPhase>();
}

void HGridBroadPhase::build(const std::vector<Vec3>& x, const std::vector<real>& reach) {
  const std::size_t n = x.size();
  Vec3 lo, hi;
  points_box(x, lo, hi, parallel_min_);
  const PeriodicBox& pb = periodic_;
  cover_periods(pb, lo, hi, 0);
  real max_reach = 0;
  for (real r : reach) max_reach = std::max(max_reach, r);
  if (!cell_sizes_.empty()) {
    grid_.count = static_cast<int>(std::min<std::size_t>(cell_sizes_.size(), kMaxHGridLevels));
    for (int h = 0; h < grid_.count; ++h) grid_.cell[h] = real(cell_sizes_[h]);
  } else {
    const Vec3 d = hi - lo;
    const double r_mean = reach.empty() ? 0 : 2 * double(max_reach);
    const double volume = (double(d.x) + r_mean) * (double(d.y) + r_mean) * (double(d.z) + r_mean);
    double min_reach = reach.empty() ? 0 : double(max_reach);
    for (real r : reach) min_reach = std::min(min_reach, double(r));
    auto moved = [](double now, double then, double by) { return !(std::abs(now - then) <= by * std::abs(then)); };
    if (chosen_n_ != static_cast<std::int64_t>(n) || moved(min_reach, chosen_lo_, 0.05) ||
        moved(double(max_reach), chosen_hi_, 0.05) || moved(volume, chosen_volume_, 0.1)) {
      chosen_ = choose_hgrid_levels(reach, volume, levels_);
      chosen_n_ = static_cast<std::int64_t>(n);
      chosen_lo_ = min_reach;
      chosen_hi_ = double(max_reach);
      chosen_volume_ = volume;
    }
    grid_ = chosen_;
  }
  // the top level holds the largest search diameter, whatever was given
  grid_.cell[grid_.count - 1] = std::max(grid_.cell[grid_.count - 1], 2 * max_reach);
  grid_.origin = lo;
  for (int h = 0; h < grid_.count; ++h)
    grid_.wrap[h] = periodic_cells(pb, grid_.cell[h]);
  hgrid_set_keys(grid_, pb, hi, static_cast<std::int64_t>(n));
  level_.resize(n);
  cell_.resize(n);
  for (int h = 0; h < kMaxHGridLevels; ++h) grid_.population[h] = 0;
  for (real r : reach) ++grid_.population[hgrid_level(grid_, r)];
  std::vector<std::uint32_t> keys(n), local(n);
  // locality order: a bounded linear key over the box at the top level's cells (few cells, so a
  // cell's particles are neighbours), for re-sorting the particle arrays
  const real top = grid_.cell[grid_.count - 1];
  const double span[3] = {double(hi.x - lo.x) / top, double(hi.y - lo.y) / top, double(hi.z - lo.z) / top};
  const bool bounded = (span[0] + 1) * (span[1] + 1) * (span[2] + 1) <= std::max(8.0 * double(n), 4096.0);
  const Int3 dims = bounded ? Int3{int(span[0]) + 1, int(span[1]) + 1, int(span[2]) + 1} : Int3{1, 1, 1};
  CellGrid coarse{lo, top, dims, 1, Int3{0, 0, 0}};
#pragma omp parallel for schedule(static) if (n > parallel_min_)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
    const int h = hgrid_level(grid_, reach[i]);
    level_[i] = static_cast<std::uint8_t>(h);
    cell_[i] = hgrid_cell(grid_, pb, h, x[i]);
    keys[i] = hgrid_key(grid_, cell_[i], h);
    local[i] = bounded ? cell_key(cell_coords(x[i], coarse), coarse) : keys[i];
  }
  counting_sort(keys, grid_.hash_size, offsets_, order_);
  sx_.resize(n);
  sr_.resize(n);
  sl_.resize(n);
  sc_.resize(n);
#pragma omp parallel for schedule(static) if (n > parallel_min_)
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(n); ++k) {
    const std::int32_t i = order_[k];
    sx_[k] = x[i];
    sr_[k] = reach[i];
    sl_[k] = level_[i];
    sc_[k] = cell_[i];
  }
  std::vector<std::int32_t> local_offsets;
  counting_sort(local, bounded ? std::uint32_t(dims.x * dims.y * dims.z) : grid_.hash_size, local_offsets, locality_);
}

void HGridBroadPhase::find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach,
                                 std::vector<std::int32_t>& a, std::vector<std::int32_t>& b) const {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const int teams = static_cast<std::size_t>(n) > parallel_min_ ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::int32_t>> part_a(teams), part_b(teams);
  const HGridView view{grid_, periodic_, offsets_.data(), order_.data(), sx_.data(), sr_.data(), sl_.data(), sc_.data()};
  (void)x;
  (void)reach;  // (the packed copies of build)
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<std::int32_t>& pa = part_a[t];
    std::vector<std::int32_t>& pb = part_b[t];
    for (std::int64_t s = n * t / nt; s < n * (t + 1) / nt; ++s) {  // in bucket order: neighbours are near
      const std::int32_t i = order_[s];
      // Top-Down: the levels up to its own; on its own level each pair from its earlier entry
      view.visit(s, sl_[s], [&](std::int32_t j) {
        pa.push_back(std::min(i, j));
        pb.push_back(std::max(i, j));
      }, true);
    }
  }
  pairs_to_rows(n, teams, part_a, part_b, a, b, parallel_min_);
}

// Every particle in the cells of every level that a particle of that level within radius plus
// its own reach of q could lie in (HGridView::visit_cells: the search of a particle of reach
// `radius` at q over all levels).
bool HGridBroadPhase::near(Vec3 q, real radius, std::vector<std::int32_t>& out) const {
  if (order_.empty()) return true;
  const HGridView view{grid_, periodic_, offsets_.data(), order_.data(), sx_.data(), sr_.data(), sl_.data(), sc_.data()};
  view.visit_cells(q, radius, grid_.count - 1, [&](std::int32_t k, int j, Int3 c) {
    if (sl_[k] == j && sc_[k].x == c.x && sc_[k].y == c.y && sc_[k].z == c.z) out.push_back(order_[k]);
  });
  return true;
}

// ---------------------------------------------------------------------------------------------
// Binary space partitioning

void BspBroadPhase::build(const std::vector<Vec3>& x, const std::vector<real>& reach) {
  const std::int32_t n = static_cast<std::int32_t>(x.size());
  nodes_.clear();
  perm_.resize(static_cast<std::size_t>(n));
  for (std::int32_t i = 0; i < n; ++i) perm_[i] = i;
  if (n == 0) return;
  Vec3 lo, hi;
  points_box(x, lo, hi);
  // The working space redefined at each sort (Sect. 3.2): the particles' box, made cubic so that
  // halving keeps the cells near cubes.
  const real side = std::max({hi.x - lo.x, hi.y - lo.y, hi.z - lo.z, std::numeric_limits<real>::min()});
  hi = lo + Vec3{side, side, side};
  nodes_.push_back(Node{lo, hi, 0, -1, -1, 0, n});
  // Depth first, children after their parent: halve the longest side, children only where there
  // are particles. Equal centres cannot be separated: a node stops splitting at depth 64.
  struct Work {
    std::int32_t node, depth;
  };
  std::vector<Work> stack{{0, 0}};
  while (!stack.empty()) {
    const Work w = stack.back();
    stack.pop_back();
    Node nd = nodes_[w.node];
    if (nd.count <= kBspLeaf || w.depth >= 64) continue;
    const Vec3 d = nd.hi - nd.lo;
    const int axis = d.x >= d.y && d.x >= d.z ? 0 : (d.y >= d.z ? 1 : 2);
    const real mid = axis == 0 ? real(0.5) * (nd.lo.x + nd.hi.x) : axis == 1 ? real(0.5) * (nd.lo.y + nd.hi.y) : real(0.5) * (nd.lo.z + nd.hi.z);
    auto coord = [&](std::int32_t i) { return axis == 0 ? x[i].x : axis == 1 ? x[i].y : x[i].z; };
    std::int32_t* first = perm_.data() + nd.first;
    std::int32_t* split = std::stable_partition(first, first + nd.count, [&](std::int32_t i) { return coord(i) < mid; });
    const std::int32_t n_left = static_cast<std::int32_t>(split - first);
    Vec3 left_hi = nd.hi, right_lo = nd.lo;
    (axis == 0 ? left_hi.x : axis == 1 ? left_hi.y : left_hi.z) = mid;
    (axis == 0 ? right_lo.x : axis == 1 ? right_lo.y : right_lo.z) = mid;
    if (n_left > 0) {
      nodes_[w.node].left = static_cast<std::int32_t>(nodes_.size());
      nodes_.push_back(Node{nd.lo, left_hi, 0, -1, -1, nd.first, n_left});
      stack.push_back({nodes_[w.node].left, w.depth + 1});
    }
    if (nd.count - n_left > 0) {
      nodes_[w.node].right = static_cast<std::int32_t>(nodes_.size());
      nodes_.push_back(Node{right_lo, nd.hi, 0, -1, -1, nd.first + n_left, nd.count - n_left});
      stack.push_back({nodes_[w.node].right, w.depth + 1});
    }
  }
  // the largest reach below each node: children come after their parent, so in reverse order
  for (std::size_t k = nodes_.size(); k-- > 0;) {
    Node& nd = nodes_[k];
    if (nd.left < 0 && nd.right < 0) {
      for (std::int32_t m = nd.first; m < nd.first + nd.count; ++m) nd.max_reach = std::max(nd.max_reach, reach[perm_[m]]);
    } else {
      nd.max_reach = std::max(nd.left >= 0 ? nodes_[nd.left].max_reach : real(0), nd.right >= 0 ? nodes_[nd.right].max_reach : real(0));
    }
  }
}

// A preorder traversal (Sect. 4.1.1) that skips every node whose cell, grown by r plus the largest
// reach below it, misses the point c (through the faces on periodic axes); calls leaf(node) for
// each leaf it reaches. stack: scratch.
template <class Leaf>
void BspBroadPhase::visit_leaves(Vec3 c, real r, std::vector<std::int32_t>& stack, Leaf&& leaf) const {
  const PeriodicBox pb = periodic_;
  // The distance from a centre to a cell along one axis (through the faces on a periodic axis).
  auto gap = [](real y, real lo, real hi, real len) {
    auto one = [&](real z) { return z < lo ? lo - z : (z > hi ? z - hi : real(0)); };
    real d = one(y);
    if (len > 0) d = std::min(d, std::min(one(y + len), one(y - len)));
    return d;
  };
  stack.assign(1, 0);
  while (!stack.empty()) {
    const Node& nd = nodes_[stack.back()];
    stack.pop_back();
    const real gx = gap(c.x, nd.lo.x, nd.hi.x, pb.length.x), gy = gap(c.y, nd.lo.y, nd.hi.y, pb.length.y),
               gz = gap(c.z, nd.lo.z, nd.hi.z, pb.length.z), r_node = r + nd.max_reach;
    if (gx * gx + gy * gy + gz * gz >= r_node * r_node) continue;
    if (nd.left < 0 && nd.right < 0) {
      leaf(nd);
      continue;
    }
    if (nd.right >= 0) stack.push_back(nd.right);
    if (nd.left >= 0) stack.push_back(nd.left);
  }
}

bool BspBroadPhase::near(Vec3 q, real radius, std::vector<std::int32_t>& out) const {
  if (nodes_.empty()) return true;
  std::vector<std::int32_t> stack;
  visit_leaves(q, radius, stack, [&](const Node& leaf) {
    out.insert(out.end(), perm_.begin() + leaf.first, perm_.begin() + leaf.first + leaf.count);
  });
  return true;
}

void BspBroadPhase::find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach, std::vector<std::int32_t>& a,
                               std::vector<std::int32_t>& b) const {
  const std::int64_t n = static_cast<std::int64_t>(x.size());
  const int teams = static_cast<std::size_t>(n) > parallel_min_ ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::int32_t>> part_a(teams), part_b(teams);
  const PeriodicBox pb = periodic_;
#pragma omp parallel num_threads(teams) if (teams > 1 && n > 0)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<std::int32_t>& pa = part_a[t];
    std::vector<std::int32_t>& pbv = part_b[t];
    std::vector<std::int32_t> stack;
    for (std::int64_t s = n * t / nt; s < n * (t + 1) / nt; ++s) {
      const std::int32_t i = perm_[s];  // in tree order: neighbours query neighbouring nodes
      const Vec3 xi = x[i];
      const real ri = reach[i];
      visit_leaves(xi, ri, stack, [&](const Node& leaf) {
        for (std::int32_t m = leaf.first; m < leaf.first + leaf.count; ++m) {
          const std::int32_t j = perm_[m];
          if (j <= i) continue;  // each pair from its lower index
          const real r = ri + reach[j];
          if (norm2(nearest_image(pb, xi - x[j])) < r * r) {
            pa.push_back(i);
            pbv.push_back(j);
          }
        }
      });
    }
  }
  pairs_to_rows(n, teams, part_a, part_b, a, b, parallel_min_);
}

void MeshBins::build(const MeshSet& meshes, Vec3 particle_lo, Vec3 particle_hi, real r_max, real bin_query) {
  if (!(bin_query > 0)) bin_query = r_max;
  const std::size_t ne = meshes.num_elements();
  elem_lo_.resize(ne);
  elem_hi_.resize(ne);
  elements_in_domain_ = 0;
  grown_lo_ = particle_lo - Vec3{r_max, r_max, r_max};
  grown_hi_ = particle_hi + Vec3{r_max, r_max, r_max};
  if (ne == 0) return;
  Vec3 mesh_lo{INFINITY, INFINITY, INFINITY}, mesh_hi{-INFINITY, -INFINITY, -INFINITY};
  for (std::size_t e = 0; e < ne; ++e) {  // (b) element bounding boxes
    Vec3 lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
    for (index_t k = meshes.elem_offsets[e]; k < meshes.elem_offsets[e + 1]; ++k) {
      const Vec3 v = meshes.vertices[meshes.elem_vertices[k]];
      lo = Vec3{std::min(lo.x, v.x), std::min(lo.y, v.y), std::min(lo.z, v.z)};
      hi = Vec3{std::max(hi.x, v.x), std::max(hi.y, v.y), std::max(hi.z, v.z)};
    }
    elem_lo_[e] = lo;
    elem_hi_[e] = hi;
    mesh_lo = Vec3{std::min(mesh_lo.x, lo.x), std::min(mesh_lo.y, lo.y), std::min(mesh_lo.z, lo.z)};
    mesh_hi = Vec3{std::max(mesh_hi.x, hi.x), std::max(mesh_hi.y, hi.y), std::max(mesh_hi.z, hi.z)};
  }
  // (a) the intersection domain of particles (grown by a radius) and meshes.
  const Vec3 grow{r_max, r_max, r_max};
  particle_lo -= grow;
  particle_hi += grow;
  domain_lo_ = Vec3{std::max(particle_lo.x, mesh_lo.x), std::max(particle_lo.y, mesh_lo.y), std::max(particle_lo.z, mesh_lo.z)};
  domain_hi_ = Vec3{std::min(particle_hi.x, mesh_hi.x), std::min(particle_hi.y, mesh_hi.y), std::min(particle_hi.z, mesh_hi.z)};
  if (domain_lo_.x > domain_hi_.x || domain_lo_.y > domain_hi_.y || domain_lo_.z > domain_hi_.z) return;
  auto overlaps_domain = [&](std::size_t e) {
    return elem_lo_[e].x <= domain_hi_.x && elem_hi_[e].x >= domain_lo_.x && elem_lo_[e].y <= domain_hi_.y &&
           elem_hi_[e].y >= domain_lo_.y && elem_lo_[e].z <= domain_hi_.z && elem_hi_[e].z >= domain_lo_.z;
  };
  // (c) the bins' size (core mesh_bins_fit).
  for (std::size_t e = 0; e < ne; ++e) elements_in_domain_ += overlaps_domain(e) ? 1 : 0;
  if (elements_in_domain_ == 0) return;
  real size = first_mesh_bin_size(bin_query);
  for (;;) {
    std::int64_t entries = 0;
    for (std::size_t e = 0; e < ne; ++e)
      if (overlaps_domain(e)) entries += element_bins_bound(elem_hi_[e] - elem_lo_[e], size);
    if (mesh_bins_fit(domain_lo_, domain_hi_, size, entries, static_cast<std::int64_t>(elements_in_domain_))) break;
    size *= 2;
  }
  grid_ = mesh_bin_grid(domain_lo_, domain_hi_, size).grid;
  // (d) every element into each bin its (clipped) box overlaps, then counting sort.
  std::vector<std::uint32_t> keys;
  std::vector<std::int32_t> elem_of_entry;
  std::vector<std::array<Int3, 2>> range(ne);
  std::size_t entries = 0;
  for (std::size_t e = 0; e < ne; ++e) {
    if (!overlaps_domain(e)) continue;
    const Vec3 lo{std::max(elem_lo_[e].x, domain_lo_.x), std::max(elem_lo_[e].y, domain_lo_.y), std::max(elem_lo_[e].z, domain_lo_.z)};
    const Vec3 hi{std::min(elem_hi_[e].x, domain_hi_.x), std::min(elem_hi_[e].y, domain_hi_.y), std::min(elem_hi_[e].z, domain_hi_.z)};
    range[e] = {cell_coords(lo, grid_), cell_coords(hi, grid_)};
    entries += std::size_t(range[e][1].x - range[e][0].x + 1) * std::size_t(range[e][1].y - range[e][0].y + 1) *
               std::size_t(range[e][1].z - range[e][0].z + 1);
  }
  keys.reserve(entries);
  elem_of_entry.reserve(entries);
  for (std::size_t e = 0; e < ne; ++e) {
    if (!overlaps_domain(e)) continue;
    const Int3 c0 = range[e][0], c1 = range[e][1];
    for (int z = c0.z; z <= c1.z; ++z)
      for (int y = c0.y; y <= c1.y; ++y)
        for (int x = c0.x; x <= c1.x; ++x) {
          keys.push_back(key_of(Int3{x, y, z}));
          elem_of_entry.push_back(static_cast<std::int32_t>(e));
        }
  }
  std::vector<std::int32_t> order;
  counting_sort(keys, grid_.hash_size, offsets_, order);
  entries_.resize(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) entries_[k] = elem_of_entry[order[k]];
}

std::uint32_t MeshBins::key_of(Int3 c) const { return cell_key(c, grid_); }

void MeshBins::query(Vec3 center, real r, std::vector<std::int32_t>& out) const {
  out.clear();
  if (elements_in_domain_ == 0) return;
  Vec3 lo{center.x - r, center.y - r, center.z - r}, hi{center.x + r, center.y + r, center.z + r};
  if (lo.x > domain_hi_.x || hi.x < domain_lo_.x || lo.y > domain_hi_.y || hi.y < domain_lo_.y ||
      lo.z > domain_hi_.z || hi.z < domain_lo_.z)
    return;  // (e) only particles inside Omega_I search
  lo = Vec3{std::max(lo.x, domain_lo_.x), std::max(lo.y, domain_lo_.y), std::max(lo.z, domain_lo_.z)};
  hi = Vec3{std::min(hi.x, domain_hi_.x), std::min(hi.y, domain_hi_.y), std::min(hi.z, domain_hi_.z)};
  const Int3 c0 = cell_coords(lo, grid_), c1 = cell_coords(hi, grid_);
  for (int z = c0.z; z <= c1.z; ++z)
    for (int y = c0.y; y <= c1.y; ++y)
      for (int x = c0.x; x <= c1.x; ++x) {
        const std::uint32_t key = key_of(Int3{x, y, z});
        for (std::int32_t s = offsets_[key]; s < offsets_[key + 1]; ++s) {
          const std::int32_t e = entries_[s];
          // (f) box-box check
          if (!(elem_lo_[e].x <= hi.x && elem_hi_[e].x >= lo.x && elem_lo_[e].y <= hi.y && elem_hi_[e].y >= lo.y &&
                elem_lo_[e].z <= hi.z && elem_hi_[e].z >= lo.z))
            continue;
          // Report each element once: from the first bin of the overlap of the two boxes.
          const Vec3 first{std::max(lo.x, elem_lo_[e].x), std::max(lo.y, elem_lo_[e].y), std::max(lo.z, elem_lo_[e].z)};
          const Int3 fc = cell_coords(first, grid_);
          if (fc.x == x && fc.y == y && fc.z == z) out.push_back(e);
        }
      }
}

}  // namespace dem::host
