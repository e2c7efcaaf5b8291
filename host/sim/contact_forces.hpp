// The contacts of one force evaluation with their forces: what the coarse-grained contact stress
// spreads along each branch (host/app/output/coarse_graining.hpp). An engine keeps them when asked
// (Simulation::keep_contact_forces) and exports them in this engine-neutral form.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/sim/engine_types.hpp"

namespace dem::host {

struct ContactForces {
  // Touching particle pairs: their ids (pair_a < pair_b), centres (m; b's at its image nearest a),
  // contact point (m, near a) and the force on a (N).
  std::vector<std::int64_t> pair_a, pair_b;
  std::vector<Vec3> pair_x_a, pair_x_b, pair_point, pair_force;
  // Mesh contacts: the particle's id, the entity (mesh_entity_key), the particle's centre (m), the
  // contact point (m, near the centre) and the force on the particle (N).
  std::vector<std::int64_t> wall_particle, wall_entity;
  std::vector<Vec3> wall_x, wall_point, wall_force;

  std::size_t pairs() const { return pair_a.size(); }
  std::size_t walls() const { return wall_particle.size(); }
};

// A mesh entity's key, unique within a particle's contacts: its element, type and feature.
DEM_HD inline std::int64_t mesh_entity_key(const EntityContact& e) {
  return std::int64_t(e.element) << 12 | std::int64_t(e.type) << 8 | std::int64_t(e.entity);
}

// Appends the touching pair of particles u and v of p (array indices, either order) with the force
// on the one of smaller id. point: the contact point a polyhedral pair's law recorded (world
// frame, near a's centre); null for two spheres, whose point lies mid-overlap on the line of centres.
void add_pair_force(const ParticleArrays& p, const PeriodicBox& box, std::size_t u, std::size_t v, Vec3 force_on_a,
                    const Vec3* point, ContactForces& out);

// Appends the used mesh slots of every particle (the engines' block layout: mesh_slots.hpp) with
// the force each slot exerts on its body (the particle feels its opposite).
void add_mesh_slot_forces(const ParticleArrays& p, const PeriodicBox& box, const std::vector<std::uint8_t>& count,
                          const std::int32_t* block, const EntityContact* entity, const Vec3* body_force,
                          ContactForces& out);

}  // namespace dem::host
