// The units of the pair loads' and the body loads' integer sums (core/engine/fixed_loads.hpp),
// agreed by both engines.
#pragma once
#include <cstdint>
#include <vector>

#include "core/engine/fixed_loads.hpp"
#include "host/sim/engine_types.hpp"

namespace dem::host {

// The units of the pair loads' integer sums, one engine's: sized for the largest radius and the
// materials its particles can have (from the settings and every particle it has held), as
// quanta_for the largest pair_force_bound over the table's pairs of those materials. Compiled
// once on the host for both engines, so that they use the same units. quantum() throws
// std::invalid_argument naming the materials where that bound is not finite (a rigid particle
// material: the scene loader refuses those, a scene made in code may not).
//
// The body loads' units (BodyLoadSum) likewise: for the largest force a mesh contact can carry (a
// particle of the largest radius against a body's material, the pair_force_bound of a sphere of
// twice that radius: a wall's R* is the particle's radius, not half of it) and the longest lever
// about a body's centre (its farthest vertex, the bodies being rigid, plus two radii).
struct LoadSizing {
  std::vector<std::uint8_t> used;  // per material
  real radius = 0;                 // m
  std::vector<std::int32_t> body_materials;  // per mesh body
  real lever = 0;                  // m, the farthest vertex of a body from its centre
  void start(const EngineSettings& settings, int num_materials, const std::vector<std::int32_t>& materials,
             const std::vector<real>& radii);
  void add(const std::vector<std::int32_t>& materials, const std::vector<real>& radii);
  void set_bodies(const MeshSet& meshes);
  LoadQuantum quantum(const std::vector<ContactParams>& table, int num_materials) const;
};

}  // namespace dem::host
