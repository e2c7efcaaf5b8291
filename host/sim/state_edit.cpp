#include "host/sim/state_edit.hpp"
#include "host/sim/mesh_slots.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dem::host {

void keep_particles(ParticleArrays& p, ContactState& c, const std::vector<std::uint8_t>& keep) {
  const std::size_t n = p.size();
  if (keep.size() != n) throw std::invalid_argument("keep_particles: the mask is for another particle count");
  checked_mesh_slots(c, n, "keep_particles");
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
  std::size_t slot = 0;  // the packed slots of particle i start here
  for (std::size_t i = 0; i < n; ++i) {
    const int used = c.mesh_count[i];
    if (keep[i]) {
      d.mesh_count.push_back(c.mesh_count[i]);
      d.mesh_entity.insert(d.mesh_entity.end(), c.mesh_entity.begin() + slot, c.mesh_entity.begin() + slot + used);
      d.mesh_normal.insert(d.mesh_normal.end(), c.mesh_normal.begin() + slot, c.mesh_normal.begin() + slot + used);
      d.mesh_history.insert(d.mesh_history.end(), c.mesh_history.begin() + slot, c.mesh_history.begin() + slot + used);
    }
    slot += static_cast<std::size_t>(used);
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
  c.mesh_count.insert(c.mesh_count.end(), k, 0);  // no mesh contacts yet: no slots
}

}  // namespace dem::host
