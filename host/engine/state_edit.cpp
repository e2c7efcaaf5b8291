#include "host/engine/state_edit.hpp"

#include <algorithm>
#include <stdexcept>

namespace dem::host {

void keep_particles(ParticleArrays& p, ContactState& c, const std::vector<std::uint8_t>& keep) {
  const std::size_t n = p.size();
  if (keep.size() != n || c.mesh_count.size() != n)
    throw std::invalid_argument("keep_particles: the mask or the contact state is for another particle count");
  std::vector<std::int64_t> gone;
  for (std::size_t i = 0; i < n; ++i)
    if (!keep[i]) gone.push_back(p.id[i]);
  ParticleArrays q;
#define DEM_KEEP_FIELD(T, name) \
  for (std::size_t i = 0; i < n; ++i) \
    if (keep[i]) q.name.push_back(p.name[i]);
  DEM_PARTICLE_FIELDS(DEM_KEEP_FIELD)
#undef DEM_KEEP_FIELD
  ContactState d;
  std::sort(gone.begin(), gone.end());
  for (std::size_t k = 0; k < c.pair_a.size(); ++k)
    if (!std::binary_search(gone.begin(), gone.end(), c.pair_a[k]) &&
        !std::binary_search(gone.begin(), gone.end(), c.pair_b[k])) {
      d.pair_a.push_back(c.pair_a[k]);
      d.pair_b.push_back(c.pair_b[k]);
      d.pair_history.push_back(c.pair_history[k]);
    }
  for (std::size_t i = 0; i < n; ++i) {
    if (!keep[i]) continue;
    d.mesh_count.push_back(c.mesh_count[i]);
    for (int s = 0; s < kMaxMeshContacts; ++s) {
      d.mesh_entity.push_back(c.mesh_entity[i * kMaxMeshContacts + s]);
      d.mesh_normal.push_back(c.mesh_normal[i * kMaxMeshContacts + s]);
      d.mesh_history.push_back(c.mesh_history[i * kMaxMeshContacts + s]);
    }
  }
  d.forces_current = c.forces_current;
  d.body_force = std::move(c.body_force);
  d.body_torque = std::move(c.body_torque);
  p = std::move(q);
  c = std::move(d);
}

void append_particles(ParticleArrays& p, ContactState& c, const ParticleArrays& more) {
#define DEM_APPEND_FIELD(T, name) \
  if (more.name.size() != more.size()) throw std::invalid_argument("append_particles: field " #name " is incomplete"); \
  p.name.insert(p.name.end(), more.name.begin(), more.name.end());
  DEM_PARTICLE_FIELDS(DEM_APPEND_FIELD)
#undef DEM_APPEND_FIELD
  const std::size_t k = more.size();
  c.mesh_count.insert(c.mesh_count.end(), k, 0);
  c.mesh_entity.resize(c.mesh_entity.size() + k * kMaxMeshContacts);
  c.mesh_normal.resize(c.mesh_normal.size() + k * kMaxMeshContacts);
  c.mesh_history.resize(c.mesh_history.size() + k * kMaxMeshContacts);
}

}  // namespace dem::host
