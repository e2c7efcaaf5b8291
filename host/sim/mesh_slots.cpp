#include "host/sim/mesh_slots.hpp"

#include <stdexcept>
#include <string>

namespace dem::host {

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
