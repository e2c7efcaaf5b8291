// Recursive coordinate bisection (RCB) of the domain between the ranks on the particles' measured
// cost: the box is cut across its longest side where the cost on either side is in proportion to
// the ranks each side gets, then each side again, until there is one box per part. The cut is
// found by histograms of the cost along the axis, summed over the ranks as integers (each rank
// counts the particles it holds) and refined bin by bin: every rank computes the same cuts from
// the same sums, so the boxes are the same bits whatever the rank count and whichever rank holds
// which particle (as LAMMPS's `balance rcb` and ExaDEM's RCB cut on measured cost).
#pragma once
#include <cstdint>
#include <vector>

#include "core/math/vec3.hpp"
#include "host/mpi/comm.hpp"

namespace dem::mpi {

struct RcbBox {
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};  // m; a point p is inside where lo <= p < hi
  bool contains(const double p[3]) const {
    for (int k = 0; k < 3; ++k)
      if (!(p[k] >= lo[k] && p[k] < hi[k])) return false;
    return true;
  }
  bool contains(Vec3 p) const {
    const double x[3] = {p.x, p.y, p.z};
    return contains(x);
  }
};

struct RcbSettings {
  int bins = 1024;    // histogram bins per refinement
  int refinements = 3;  // a cut is placed to (box side) / bins^refinements
};

// The boxes of `parts` parts of `domain` (part k: the k-th leaf, depth first, the lower side
// first), from the particles this rank holds at x with integer costs (e.g. contacts and mesh
// candidates counted per particle); points outside the domain count at its nearest face.
// Collective over comm: every rank calls it with the same domain, parts and settings.
std::vector<RcbBox> rcb_partition(const Comm& comm, const std::vector<Vec3>& x, const std::vector<std::int64_t>& cost,
                                  const RcbBox& domain, int parts, const RcbSettings& settings = {});

// Each part's cost (summed over the ranks) and the imbalance: the largest part's cost over the
// mean (1: balanced). Collective.
struct RcbLoad {
  std::vector<std::int64_t> cost;
  double imbalance = 1;
};
RcbLoad rcb_load(const Comm& comm, const std::vector<RcbBox>& boxes, const std::vector<Vec3>& x,
                 const std::vector<std::int64_t>& cost);

}  // namespace dem::mpi
