// Checkpoints: everything the next step needs, so that a run of 2N steps and a run of N steps, a
// checkpoint and N more give the same bits, on either engine (a checkpoint written by one engine
// restarts on the other). Format (version 1, binary, this build's byte order and struct layouts,
// which the header records and the reader checks):
//   "DEMCKPT" NUL, u32 version, u32 byte-order mark 0x01020304, u32 sizeof(real),
//   u32 sizeof(EntityContact), u32 sizeof(ContactHistory), u64 step, f64 time,
//   f64 dt, f64 gravity[3], u64 hash of the contact parameters, u64 hash of the meshes,
//   u64 particle count n, then every particle field of DEM_PARTICLE_FIELDS in order (n values each),
//   u64 touching pairs m, m ids a, m ids b, m histories, then the mesh slots: n counts,
//   8n entities, 8n normals, 8n histories.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/engine/engine_types.hpp"

namespace dem::host {

constexpr std::uint32_t kCheckpointVersion = 1;

struct Checkpoint {
  std::uint64_t step = 0;
  double time = 0;  // s
  // The physics the state belongs to: a restart under other physics is refused.
  double dt = 0;     // s
  Vec3 gravity{0, 0, 0};
  std::uint64_t params_hash = 0, meshes_hash = 0;
  ParticleArrays particles;
  ContactState contacts;
};

// Hashes of the physics (field by field, so padding never enters).
std::uint64_t hash_contact_params(const std::vector<ContactParams>& params);
std::uint64_t hash_meshes(const MeshSet& meshes);

// Written to path + ".tmp", checked, renamed onto path; throws WriteError naming the file.
void write_checkpoint(const std::string& path, const Checkpoint& c);
// Throws InputError naming the file for anything that is not a checkpoint of this format.
Checkpoint read_checkpoint(const std::string& path);

}  // namespace dem::host
