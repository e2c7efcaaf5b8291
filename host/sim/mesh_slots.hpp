// Packing and unpacking the engines' per-particle mesh slots for ContactState (checkpoints, edits).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "host/sim/engine_types.hpp"

namespace dem::host {

// Mesh slots between an engine's blocks (kMaxMeshContacts slots each; particle i's slot s at
// block[i] * kMaxMeshContacts + s, or at i * kMaxMeshContacts + s when block is null) and the packed
// layout of ContactState. pack_mesh_slots fills c.mesh_count and the packed arrays;
// unpack_mesh_slots fills `blocks` blocks (the particles with contacts must have one; unused slots
// zero).
void pack_mesh_slots(const std::vector<std::uint8_t>& count, const std::int32_t* block,
                     const std::vector<EntityContact>& entity, const std::vector<Vec3>& normal,
                     const std::vector<ContactHistory>& history, ContactState& c);
void unpack_mesh_slots(const ContactState& c, const std::int32_t* block, std::size_t blocks,
                       std::vector<EntityContact>& entity, std::vector<Vec3>& normal, std::vector<ContactHistory>& history);
// The number of packed slots c holds, after checking that its arrays agree with its counts and
// that it is for n particles (throws std::runtime_error naming `who` otherwise).
std::size_t checked_mesh_slots(const ContactState& c, std::size_t n, const char* who);

}  // namespace dem::host
