#include "host/sim/contact_forces.hpp"

#include "core/analysis/coarse_graining.hpp"

namespace dem::host {

void add_pair_force(const ParticleArrays& p, const PeriodicBox& box, std::size_t u, std::size_t v, Vec3 force_on_a,
                    const Vec3* point, ContactForces& out) {
  const std::size_t a = p.id[u] < p.id[v] ? u : v, b = a == u ? v : u;
  const Vec3 xa = p.x[a];
  const CgPairBranch branch = cg_pair_branch(box, xa, p.radius[a], p.x[b], p.radius[b], point);
  out.pair_a.push_back(p.id[a]);
  out.pair_b.push_back(p.id[b]);
  out.pair_x_a.push_back(xa);
  out.pair_x_b.push_back(branch.xb);
  out.pair_point.push_back(branch.c);
  out.pair_force.push_back(force_on_a);
}

void add_mesh_slot_forces(const ParticleArrays& p, const PeriodicBox& box, const std::vector<std::uint8_t>& count,
                          const std::int32_t* block, const EntityContact* entity, const Vec3* body_force,
                          ContactForces& out) {
  for (std::size_t i = 0; i < count.size(); ++i) {
    if (count[i] == 0) continue;
    const std::size_t base = std::size_t(block ? block[i] : std::int32_t(i)) * kMaxMeshContacts;
    for (std::size_t s = 0; s < count[i]; ++s) {
      const EntityContact& e = entity[base + s];
      out.wall_particle.push_back(p.id[i]);
      out.wall_entity.push_back(mesh_entity_key(e));
      out.wall_x.push_back(p.x[i]);
      out.wall_point.push_back(cg_wall_point(box, p.x[i], e.point));
      out.wall_force.push_back(-body_force[base + s]);
    }
  }
}

}  // namespace dem::host
