// Broad phase: which pairs of spheres, and which mesh elements per sphere, are worth a narrow-phase
// test. Sphere pairs come from a BroadPhase (one interface, so a hierarchical grid can sit beside
// the uniform one); mesh elements from MeshBins (santasusana2016 Sect. 3.1).
#pragma once
#include <cstdint>
#include <memory>
#include <limits>
#include <vector>

#include "core/geometry/periodic.hpp"
#include "core/geometry/polygon.hpp"
#include "core/grid/cell_grid.hpp"
#include "core/grid/grid_sizing.hpp"
#include "core/grid/hgrid.hpp"
#include "host/sim/broad_phase_choice.hpp"
#include "host/sim/engine_types.hpp"

namespace dem::host {

// The particles in the order of the cells of size `cell` (m) along a 3-D Hilbert curve
// (core/grid/hilbert.hpp; at a million spheres a cell-row order puts the layer above megabytes
// away: a cache miss per partner). Ties in increasing index. For re-sorting the particle arrays; the
// results never depend on the order. Loops over at most parallel_min points run on one thread.
std::vector<std::int64_t> hilbert_order(const std::vector<Vec3>& x, real cell, std::size_t parallel_min = kParallelMin);

// Counting sort (count -> exclusive scan -> stable fill; Cabana's LinkedCellList order) of items
// 0..keys.size()-1 by key in [0, num_keys): afterwards the items of key k are
// order[offsets[k] .. offsets[k+1]), in increasing item index. Serial: it runs once per rebuild,
// O(n + num_keys), and its output order must not depend on the thread count.
void counting_sort(const std::vector<std::uint32_t>& keys, std::uint32_t num_keys,
                   std::vector<std::int32_t>& offsets, std::vector<std::int32_t>& order);

class BroadPhase {
 public:
  virtual ~BroadPhase() = default;
  // Sorts the particles into cells. Positions in m; reach: each particle's search radius in m, its
  // radius plus its share of the skin (a pair is a candidate while |x_a - x_b| < reach_a + reach_b).
  virtual void build(const std::vector<Vec3>& x, const std::vector<real>& reach) = 0;
  // Particle indices in an order that keeps neighbours close in memory (for re-sorting the
  // particle arrays; results never depend on the order). x: the positions of the last build.
  virtual std::vector<std::int64_t> spatial_order(const std::vector<Vec3>& x) const = 0;
  // All pairs (a < b, particle indices) with |x_a - x_b| < reach_a + reach_b, each once, sorted by
  // (a, b) (so the list is in rows of a, as the engine's CSR pair list needs). Never misses one
  // (tests compare with an N^2 oracle).
  virtual void find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach, std::vector<std::int32_t>& a,
                          std::vector<std::int32_t>& b) const = 0;
  // Appends to out every particle j whose position at the last build lies within radius +
  // reach_j of q (nearest images on periodic axes), and possibly others, in no particular order:
  // the engine's exact check of a list that some particles have outgrown (Engine::list_holds).
  // Returns false, appending nothing, where the answer would cost about what a rebuild does.
  virtual bool near(Vec3 q, real radius, std::vector<std::int32_t>& out) const = 0;
  virtual const char* name() const = 0;
  virtual BroadPhaseReport report() const = 0;
  // Loops over fewer items run on one thread (tests set 0 to exercise the threaded paths).
  void set_parallel_min(std::size_t n) { parallel_min_ = n; }
  // Periodic axes: positions lie in the box, and a pair's distance is that of the nearest images.
  void set_periodic(const PeriodicBox& b) { periodic_ = b; }

 protected:
  std::size_t parallel_min_ = kParallelMin;
  PeriodicBox periodic_{};
};

// Uniform grid. The cell size is twice the reach that 99 % of the particles stay within, so the
// partners of these "narrow" particles lie in the 27 surrounding cells. The few "wide" ones (large
// spheres, or fast ones with a large skin) search the cube of cells their own reach spans, like a
// two-level hierarchical grid. A bounded grid over the particles' box when that box is compact,
// otherwise cells hashed into 2N buckets (spread-out domains, memory O(N)). On periodic axes the
// cells tile the period and wrap (CellGrid::wrap); the half stencil of the bounded grid then needs
// three cells per periodic axis, fewer take the hashed path (which visits each distinct cell once).
class UniformGridBroadPhase : public BroadPhase {
 public:
  void build(const std::vector<Vec3>& x, const std::vector<real>& reach) override;
  // The cells in Hilbert order (the cell-row order of the search would put the layer above a
  // whole layer of the box away: at 1.3 million spheres Z order measured 8 % faster per step than
  // rows, and the Hilbert curve's pair phase 2-8 % faster than Z order's in five in-process A/Bs).
  std::vector<std::int64_t> spatial_order(const std::vector<Vec3>& x) const override {
    return hilbert_order(x, grid_.cell_size, parallel_min_);
  }
  void find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach, std::vector<std::int32_t>& a,
                  std::vector<std::int32_t>& b) const override;
  bool near(Vec3 q, real radius, std::vector<std::int32_t>& out) const override;
  const char* name() const override { return "uniform-grid"; }
  BroadPhaseReport report() const override { return BroadPhaseReport{"grid", {double(grid_.cell_size)}, ""}; }
  std::size_t wide_count() const { return wide_.size(); }

 private:
  std::uint32_t key_of(Int3 c) const;
  int neighbour_keys(Int3 c, std::uint32_t out[27]) const;
  // The keys of the cells within `span` cells of c (each once); false, with none, where there are
  // more such cells than particles.
  bool keys_around(Int3 c, int span, std::vector<std::uint32_t>& keys) const;
  // Pairs of one wide particle i: every partner in the cells its reach spans that is narrow, or
  // wide with a larger index.
  void wide_pairs(std::int32_t i, const std::vector<Vec3>& x, const std::vector<real>& reach,
                  std::vector<std::int32_t>& pa, std::vector<std::int32_t>& pb) const;

  CellGrid grid_{};
  bool bounded_ = false;
  real narrow_reach_ = 0;  // m, the largest reach of a narrow particle (half a cell)
  real max_reach_ = 0;     // m
  std::vector<std::int32_t> offsets_, order_;
  // Positions and reaches in cell order (order_), from build(), one array per coordinate (the pair
  // test reads them in vector lanes) and kTestLanes entries of padding; reach < 0 marks a wide
  // particle (the half-stencil test then fails).
  std::vector<real> sorted_x_, sorted_y_, sorted_z_, sorted_reach_;
  std::vector<std::int32_t> wide_;   // indices of the wide particles, increasing
  std::vector<std::uint8_t> is_wide_;
};

// Hierarchical grid (krijgsman2014, core/grid/hgrid.hpp): levels and cell sizes from
// choose_hgrid_levels (or given), the paper's Top-Down search (each particle meets the particles of
// its own level and of the levels below), cells hashed with their level into 2N buckets.
class HGridBroadPhase : public BroadPhase {
 public:
  // levels: 0 chooses them (choose_hgrid_levels); cell_sizes: given sizes (m, increasing), else chosen.
  HGridBroadPhase(int levels = 0, std::vector<double> cell_sizes = {}) : levels_(levels), cell_sizes_(std::move(cell_sizes)) {}
  void build(const std::vector<Vec3>& x, const std::vector<real>& reach) override;
  std::vector<std::int64_t> spatial_order(const std::vector<Vec3>&) const override {
    return std::vector<std::int64_t>(locality_.begin(), locality_.end());
  }
  void find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach, std::vector<std::int32_t>& a,
                  std::vector<std::int32_t>& b) const override;
  bool near(Vec3 q, real radius, std::vector<std::int32_t>& out) const override;
  const char* name() const override { return "hgrid"; }
  BroadPhaseReport report() const override {
    BroadPhaseReport r{"hgrid", {}, ""};
    for (int h = 0; h < grid_.count; ++h) r.cell_sizes.push_back(double(grid_.cell[h]));
    return r;
  }
  const HGridLevels& levels() const { return grid_; }

 private:
  int levels_;
  std::vector<double> cell_sizes_;
  HGridLevels grid_{};
  // The last choice of levels and what it was made for (particles, reach range, box volume): made
  // again only when one of them has changed by more than a few percent (the choice costs about a
  // third of a build of 10,000 particles, and any levels give the same pairs).
  HGridLevels chosen_{};
  std::int64_t chosen_n_ = -1;
  double chosen_lo_ = 0, chosen_hi_ = 0, chosen_volume_ = 0;
  std::vector<std::int32_t> offsets_, order_, locality_;
  std::vector<std::uint8_t> level_;  // per particle
  std::vector<Int3> cell_;
  // per entry (bucket order): position, search radius, level, home cell
  std::vector<Vec3> sx_;
  std::vector<real> sr_;
  std::vector<std::uint8_t> sl_;
  std::vector<Int3> sc_;
};

// Binary space partitioning (petocz-armero1998 Sects. 3-4), on the host: a binary tree over the
// particle centres, each node half of its parent's cell (the longest side halved), children made
// only where there are particles, leaves of at most kBspLeaf particles (the paper goes down to
// one); each node keeps the largest reach below it. A particle's partners come from a preorder
// traversal that skips every node whose cell, grown by that reach, misses the particle's sphere of
// search. Periodic axes: the query is split into the (disjoint) pieces of its box inside the box.
class BspBroadPhase : public BroadPhase {
 public:
  static constexpr int kBspLeaf = 8;
  void build(const std::vector<Vec3>& x, const std::vector<real>& reach) override;
  std::vector<std::int64_t> spatial_order(const std::vector<Vec3>&) const override {
    return std::vector<std::int64_t>(perm_.begin(), perm_.end());
  }
  void find_pairs(const std::vector<Vec3>& x, const std::vector<real>& reach, std::vector<std::int32_t>& a,
                  std::vector<std::int32_t>& b) const override;
  bool near(Vec3 q, real radius, std::vector<std::int32_t>& out) const override;
  const char* name() const override { return "bsp"; }
  BroadPhaseReport report() const override { return BroadPhaseReport{"bsp", {}, ""}; }
  std::size_t nodes() const { return nodes_.size(); }

 private:
  struct Node {
    Vec3 lo, hi;       // m, the cell
    real max_reach;    // m, the largest reach below
    std::int32_t left, right;   // children (-1: none)
    std::int32_t first, count;  // the particles below: perm_[first .. first + count)
  };
  template <class Leaf>
  void visit_leaves(Vec3 c, real r, std::vector<std::int32_t>& stack, Leaf&& leaf) const;
  std::vector<Node> nodes_;
  std::vector<std::int32_t> perm_;  // particle indices, each node's a contiguous run (depth-first order)
};

// The broad phase a spec asks for. Auto takes the HGrid where the model predicts it does less than a
// fifth of the work of one level, else the uniform grid: on the benchmark
// (bench/results/dev-2core-cpu/hgrid.md) the uniform grid, whose widest 1 % search on their own,
// was faster up to a predicted ratio of 2 (omega <= 10), even at 4.7 (omega 20), and slower from
// 10 on (omega >= 30; 1.46 times at omega 100).
std::unique_ptr<BroadPhase> make_broad_phase(const BroadPhaseSpec& spec, const std::vector<real>& reach, double volume);

// Pairs found by `teams` threads (part_a[t][k] < part_b[t][k]) into rows sorted by (a, b).
void pairs_to_rows(std::int64_t n, int teams, const std::vector<std::vector<std::int32_t>>& part_a,
                   const std::vector<std::vector<std::int32_t>>& part_b, std::vector<std::int32_t>& a,
                   std::vector<std::int32_t>& b, std::size_t parallel_min);

// Search bins over the mesh elements inside the intersection of the particle and mesh domains
// (Sect. 3.1 steps a-d), rebuilt at each renewal of the candidate lists (the paper rebuilds them
// every step). A particle then queries the bins its bounding box overlaps (step f).
class MeshBins {
 public:
  // particle_lo/hi: bounding box of all particles (m); r_max: how far around that box the bins
  // hold elements (m), at least the largest query radius (the largest particle radius plus any
  // skin); bin_query: the query radius the bins are sized for (m, default r_max; a larger query
  // spans several bins).
  void build(const MeshSet& meshes, Vec3 particle_lo, Vec3 particle_hi, real r_max, real bin_query = 0);
  // Elements whose bounding box overlaps the sphere's, each once (in a deterministic order).
  void query(Vec3 center, real r, std::vector<std::int32_t>& out) const;
  // Whether query(center, r) returns every such element: the sphere's box lies inside the
  // particles' box grown by r_max (the bins leave out only elements beyond it).
  bool covers(Vec3 center, real r) const {
    return center.x - r >= grown_lo_.x && center.y - r >= grown_lo_.y && center.z - r >= grown_lo_.z &&
           center.x + r <= grown_hi_.x && center.y + r <= grown_hi_.y && center.z + r <= grown_hi_.z;
  }
  // Squared distance from c to element e's bounding box at the build (0 inside it), the box grown
  // by planarity_slack: a lower bound of the squared distance from c to the element then, also as
  // the Fast Intersection Test sees a polygon bent out of its plane within the loader's tolerance.
  real box_distance2(std::int32_t e, Vec3 c) const {
    const real g = planarity_slack(e);
    const Vec3 lo = elem_lo_[e] - Vec3{g, g, g}, hi = elem_hi_[e] + Vec3{g, g, g};
    const auto out = [](real below, real above) { return dem_max(dem_max(below, above), real(0)); };
    const real dx = out(lo.x - c.x, c.x - hi.x), dy = out(lo.y - c.y, c.y - hi.y), dz = out(lo.z - c.z, c.z - hi.z);
    return dx * dx + dy * dy + dz * dz;
  }
  // Twice the loader's planarity tolerance (1e-6 of an element's size, check_planar_convex) for
  // element e, plus a rounding margin: how far the element may lie from its first vertex's plane.
  real planarity_slack(std::int32_t e) const {
    const Vec3 d = elem_hi_[e] - elem_lo_[e];
    return real(4e-6) * dem_max(dem_max(d.x, d.y), d.z);
  }
  bool empty() const { return elements_in_domain_ == 0; }
  std::size_t elements_in_domain() const { return elements_in_domain_; }

 private:
  std::uint32_t key_of(Int3 c) const;

  CellGrid grid_{};  // bounded (core mesh_bin_grid)
  Vec3 domain_lo_{0, 0, 0}, domain_hi_{0, 0, 0};  // the intersection domain Omega_I
  Vec3 grown_lo_{0, 0, 0}, grown_hi_{0, 0, 0};    // the particles' box grown by r_max
  std::vector<Vec3> elem_lo_, elem_hi_;            // element bounding boxes
  std::vector<std::int32_t> offsets_, entries_;    // bin -> element indices
  std::size_t elements_in_domain_ = 0;
};

}  // namespace dem::host
