#include "host/sim/load_sizing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace dem::host {

void LoadSizing::start(const EngineSettings& settings, int num_materials, const std::vector<std::int32_t>& materials,
                       const std::vector<real>& radii) {
  used.assign(static_cast<std::size_t>(std::max(num_materials, 0)), 0);
  radius = settings.load_radius;
  add(settings.load_materials, {});
  add(materials, radii);
}

void LoadSizing::add(const std::vector<std::int32_t>& materials, const std::vector<real>& radii) {
  for (const std::int32_t m : materials)
    if (m >= 0 && static_cast<std::size_t>(m) < used.size()) used[static_cast<std::size_t>(m)] = 1;
  for (const real r : radii) radius = std::max(radius, r);
}

void LoadSizing::set_bodies(const MeshSet& meshes) {
  body_materials.clear();
  lever = 0;
  for (const MeshBody& b : meshes.bodies) {
    body_materials.push_back(b.material);
    for (index_t v = b.first_vertex; v < b.first_vertex + b.vertex_count; ++v)
      lever = std::max(lever, norm(meshes.ref_vertices[static_cast<std::size_t>(v)] - b.center0));
  }
}

LoadQuantum LoadSizing::quantum(const std::vector<ContactParams>& table, int num_materials) const {
  real bound = 0;
  for (int a = 0; a < num_materials; ++a)
    for (int b = a; b < num_materials; ++b) {
      if (!used[a] || !used[b]) continue;
      const real f = pair_force_bound(table[static_cast<std::size_t>(a) * num_materials + b], radius);
      if (!std::isfinite(f))
        throw std::invalid_argument("the pair loads' units: spheres of materials " + std::to_string(a) + " and " +
                                    std::to_string(b) +
                                    " would meet with an infinite stiffness (a rigid material is for walls only)");
      bound = std::max(bound, f);
    }
  real body_bound = 0;
  for (int a = 0; a < num_materials; ++a)
    for (const std::int32_t m : body_materials) {
      if (!used[a] || m < 0 || m >= num_materials) continue;
      const real f = pair_force_bound(table[static_cast<std::size_t>(a) * num_materials + m], 2 * radius);
      if (!std::isfinite(f))
        throw std::invalid_argument("the body loads' units: a particle of material " + std::to_string(a) +
                                    " would meet a mesh of material " + std::to_string(m) +
                                    " with an infinite stiffness (one of the two must be deformable)");
      body_bound = std::max(body_bound, f);
    }
  return quanta_for_bodies(quanta_for(bound, radius), body_bound, lever + 2 * radius);
}

}  // namespace dem::host
