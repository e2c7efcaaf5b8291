#include "host/engine/state_edit.hpp"

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

void pack_mesh_slots(const std::vector<std::uint8_t>& count, const std::int32_t* block,
                     const std::vector<EntityContact>& entity, const std::vector<Vec3>& normal,
                     const std::vector<ContactHistory>& history, ContactState& c) {
  const std::vector<std::uint8_t> counts = count;  // count may be c.mesh_count itself
  c.mesh_entity.clear();
  c.mesh_normal.clear();
  c.mesh_history.clear();
  for (std::size_t i = 0; i < counts.size(); ++i)
    for (int s = 0; s < counts[i]; ++s) {
      const std::size_t from = static_cast<std::size_t>(block ? block[i] : std::int64_t(i)) * kMaxMeshContacts + s;
      c.mesh_entity.push_back(entity[from]);
      c.mesh_normal.push_back(normal[from]);
      c.mesh_history.push_back(history[from]);
    }
  c.mesh_count = counts;
}

void unpack_mesh_slots(const ContactState& c, const std::int32_t* block, std::size_t blocks,
                       std::vector<EntityContact>& entity, std::vector<Vec3>& normal, std::vector<ContactHistory>& history) {
  entity.assign(blocks * kMaxMeshContacts, EntityContact{});
  normal.assign(blocks * kMaxMeshContacts, Vec3{0, 0, 0});
  history.assign(blocks * kMaxMeshContacts, ContactHistory{{0, 0, 0}, {0, 0, 0}});
  std::size_t from = 0;
  for (std::size_t i = 0; i < c.mesh_count.size(); ++i)
    for (int s = 0; s < c.mesh_count[i]; ++s, ++from) {
      const std::size_t to = static_cast<std::size_t>(block ? block[i] : std::int64_t(i)) * kMaxMeshContacts + s;
      entity[to] = c.mesh_entity[from];
      normal[to] = c.mesh_normal[from];
      history[to] = c.mesh_history[from];
    }
}

std::size_t checked_mesh_slots(const ContactState& c, std::size_t n, const char* who) {
  if (c.mesh_count.size() != n)
    throw std::runtime_error(std::string(who) + ": the contact state is for " + std::to_string(c.mesh_count.size()) +
                             " particles, not " + std::to_string(n));
  std::size_t slots = 0;
  for (std::uint8_t k : c.mesh_count) {
    if (k > kMaxMeshContacts)
      throw std::runtime_error(std::string(who) + ": a particle with " + std::to_string(k) +
                               " mesh contacts, more than kMaxMeshContacts");
    slots += k;
  }
  if (c.mesh_entity.size() != slots || c.mesh_normal.size() != slots || c.mesh_history.size() != slots)
    throw std::runtime_error(std::string(who) + ": the contact state's mesh slots (" +
                             std::to_string(c.mesh_entity.size()) + ") do not add up to its counts (" +
                             std::to_string(slots) + ")");
  return slots;
}

}  // namespace dem::host
