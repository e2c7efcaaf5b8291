// The broad phase's choice, made alike by both engines: the volume it assumes, whether the HGrid
// pays, and the HGrid's levels and cell sizes (krijgsman2014).
#pragma once
#include <cstddef>
#include <limits>
#include <vector>

#include "core/grid/hgrid.hpp"
#include "core/math/vec3.hpp"

namespace dem::host {

// K of krijgsman2014 Eq. 27, T = sum (T_cd + K T_ca): the weight of one cell access against one
// sphere-overlap test. The paper found 0.2 for MercuryDPM; for this code it was measured by
// bench/dem_hgrid_bench (bench/results/dev-2core-cpu/hgrid.md): a cell access hashes the cell,
// walks its bucket and checks each entry's own cell, an overlap test is a few multiplications.
constexpr double kHGridK = 15;

// The box around a set of points (both zero when there are none); on the OpenMP threads above
// parallel_min points (min and max are exact in any order).
void points_box(const std::vector<Vec3>& x, Vec3& lo, Vec3& hi,
                std::size_t parallel_min = std::numeric_limits<std::size_t>::max());
// The volume the broad phase's choice assumes (m^3): the particles' box grown by r_max on each side.
double search_volume(const std::vector<Vec3>& x, real r_max);

// HGrid levels for particles of these search radii (reach, m) in a box of `volume` (m^3): the
// cell sizes keep the number of particles per cell equal at every level (the paper's q = 1 rule,
// on the actual distribution through a log-spaced histogram), from twice the smallest reach to
// twice the largest, and the number of levels (1..kMaxHGridLevels, or `levels` if > 0) minimises
// the Top-Down cost of Eq. 27 with cell-access weight k.
HGridLevels choose_hgrid_levels(const std::vector<real>& reach, double volume, int levels = 0, double k = kHGridK);
// The Top-Down work of Eq. 27 (overlap tests plus k times cell accesses) for these levels.
double hgrid_model_cost(const std::vector<real>& reach, double volume, const HGridLevels& g, double k = kHGridK);
// Whether BroadPhaseMethod::Auto takes the HGrid: where the model predicts it does less than a
// fifth of the work of one level (bench/results/dev-2core-cpu/hgrid.md: the uniform grid, whose
// widest 1 % search on their own, was faster up to a predicted ratio of 4.7 and slower from 10 on).
bool auto_wants_hgrid(const std::vector<real>& reach, double volume);

}  // namespace dem::host
