#include "host/sim/broad_phase_choice.hpp"

#include <algorithm>
#include <cmath>

#include <omp.h>

namespace dem::host {

void points_box(const std::vector<Vec3>& x, Vec3& lo, Vec3& hi, std::size_t parallel_min) {
  lo = hi = x.empty() ? Vec3{0, 0, 0} : x[0];
  real lx = lo.x, ly = lo.y, lz = lo.z, hx = hi.x, hy = hi.y, hz = hi.z;
  const std::int64_t n = static_cast<std::int64_t>(x.size());
#pragma omp parallel for reduction(min : lx, ly, lz) reduction(max : hx, hy, hz) schedule(static) if (x.size() > parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    lx = std::min(lx, x[i].x), ly = std::min(ly, x[i].y), lz = std::min(lz, x[i].z);
    hx = std::max(hx, x[i].x), hy = std::max(hy, x[i].y), hz = std::max(hz, x[i].z);
  }
  lo = Vec3{lx, ly, lz};
  hi = Vec3{hx, hy, hz};
}

double search_volume(const std::vector<Vec3>& x, real r_max) {
  Vec3 lo, hi;
  points_box(x, lo, hi);
  const Vec3 d = hi - lo + Vec3{2 * r_max, 2 * r_max, 2 * r_max};
  return double(d.x) * double(d.y) * double(d.z);
}

namespace {

// The reaches in log-spaced bins between the smallest and the largest: the q = 1 sizes and the
// cost model are evaluated on it (O(N) per choice, whatever the distribution).
struct ReachHistogram {
  double lo = 0, hi = 0;          // m
  std::vector<double> count;      // particles per bin
  std::vector<double> center;     // m, geometric centre of each bin
  std::vector<double> edge;       // m, twice the upper edge of each bin (a cell size closing a level there)
  double total = 0;
};

ReachHistogram histogram_of(const std::vector<real>& reach) {
  ReachHistogram h;
  if (reach.empty()) return h;
  h.lo = h.hi = reach[0];
  for (real r : reach) h.lo = std::min(h.lo, double(r)), h.hi = std::max(h.hi, double(r));
  const int bins = h.hi > h.lo * (1 + 1e-9) ? 256 : 1;
  h.count.assign(bins, 0);
  h.center.resize(bins);
  const double span = std::log(h.hi / h.lo);
  h.edge.resize(bins);
  for (int k = 0; k < bins; ++k) {
    h.center[k] = h.lo * std::exp(span * (k + 0.5) / bins);
    h.edge[k] = 2 * h.lo * std::exp(span * double(k + 1) / double(bins));
  }
  for (real r : reach) {
    const int k = bins == 1 ? 0 : std::min(bins - 1, static_cast<int>(std::log(double(r) / h.lo) / span * bins));
    h.count[k] += 1;
  }
  h.total = double(reach.size());
  return h;
}

// The level of a reach among cell sizes s (the lowest whose cells hold its diameter).
int level_of(const std::vector<double>& s, double reach) {
  for (std::size_t h = 0; h + 1 < s.size(); ++h)
    if (2 * reach <= s[h]) return static_cast<int>(h);
  return static_cast<int>(s.size()) - 1;
}

// Top-Down cost (Eq. 27 with Eqs. 11, 16, 23, 24; 27 cells at the level of insertion, half of the
// pairs kept) of the cell sizes s for the histogram in a box of `volume`.
double top_down_cost(const ReachHistogram& hist, const std::vector<double>& s, double volume, double k) {
  const int levels = static_cast<int>(s.size());
  std::vector<double> n(levels, 0), m(levels, 0);
  for (std::size_t b = 0; b < hist.count.size(); ++b) n[level_of(s, hist.center[b])] += hist.count[b];
  for (int h = 0; h < levels; ++h) m[h] = n[h] * s[h] * s[h] * s[h] / volume;  // particles per cell
  double cost = 0;
  for (std::size_t b = 0; b < hist.count.size(); ++b) {
    if (hist.count[b] == 0) continue;
    const int h = level_of(s, hist.center[b]);
    double checks = 13.5 * m[h], cells = 27;
    for (int j = 0; j < h; ++j) {
      const double side = 2 * hist.center[b] / s[j] + 2;  // Eq. 16: cells per axis of the box at level j
      checks += m[j] * side * side * side;
      cells += side * side * side;
    }
    cost += hist.count[b] * (checks + k * cells);
  }
  return cost;
}

// Cell sizes for `levels` levels with s^3 (particles at the level) the same at every level (q = 1),
// the last one twice the largest reach: the constant is found by bisection (in its logarithm).
std::vector<double> equal_occupancy_sizes(const ReachHistogram& hist, int levels) {
  const double top = 2 * hist.hi;
  if (levels <= 1) return {top};
  // Walking up the histogram, close a level once s^3 times its count reaches c; returns the sizes
  // (the last one is the top, whatever its occupancy).
  auto walk = [&](double c, std::vector<double>& s) {
    s.clear();
    double count = 0;
    for (std::size_t b = 0; b < hist.count.size(); ++b) {  // (counting on past the last closure: the top's share)
      count += hist.count[b];
      const double edge = hist.edge[b];  // (precomputed: the bisection walks the bins 60 times per level count)
      if (int(s.size()) < levels - 1 && count > 0 && edge * edge * edge * count >= c && edge < top) {
        s.push_back(edge);
        count = 0;
      }
    }
    s.push_back(top);
    return count;  // particles left for the top level
  };
  std::vector<double> s;
  double lo = std::log(std::pow(2 * hist.lo, 3)), hi = std::log(std::pow(top, 3) * hist.total);
  for (int it = 0; it < 60; ++it) {
    const double mid = 0.5 * (lo + hi);
    const double left = walk(std::exp(mid), s);
    // too small a constant closes the lower levels early and leaves the top crowded
    if (top * top * top * left > std::exp(mid) && int(s.size()) == levels) lo = mid;  // the top too crowded
    else hi = mid;  // the top too empty, or too few levels closed
  }
  walk(std::exp(lo), s);
  return s;
}

}  // namespace

HGridLevels choose_hgrid_levels(const std::vector<real>& reach, double volume, int levels, double k) {
  HGridLevels g;
  const ReachHistogram hist = histogram_of(reach);
  if (reach.empty() || !(volume > 0)) {
    g.count = 1;
    g.cell[0] = real(std::max(2 * hist.hi, 1e-300));
    return g;
  }
  std::vector<double> best;
  double best_cost = INFINITY;
  const int first = levels > 0 ? levels : 1, last = levels > 0 ? levels : kMaxHGridLevels;
  for (int l = first; l <= last; ++l) {
    std::vector<double> s = equal_occupancy_sizes(hist, l);
    const double cost = top_down_cost(hist, s, volume, k);
    if (cost < best_cost * (1 - 1e-9)) best_cost = cost, best = s;  // ties: fewer levels
  }
  g.count = static_cast<int>(best.size());
  for (int h = 0; h < g.count; ++h) g.cell[h] = real(best[h]);
  return g;
}

double hgrid_model_cost(const std::vector<real>& reach, double volume, const HGridLevels& g, double k) {
  return top_down_cost(histogram_of(reach), std::vector<double>(g.cell, g.cell + g.count), volume, k);
}

bool auto_wants_hgrid(const std::vector<real>& reach, double volume) {
  const HGridLevels chosen = choose_hgrid_levels(reach, volume);
  if (chosen.count == 1) return false;
  const double one = hgrid_model_cost(reach, volume, choose_hgrid_levels(reach, volume, 1));
  return one > 5 * hgrid_model_cost(reach, volume, chosen);
}

}  // namespace dem::host
