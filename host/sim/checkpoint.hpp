// Checkpoints: everything the next step needs, so that a run of 2N steps and a run of N steps, a
// checkpoint and N more give the same bits, on either engine (a checkpoint written by one engine
// restarts on the other). Format (binary, this build's byte order and struct layouts,
// which the header records and the reader checks; this build reads versions 1 to 6; before
// version 4 the particle fields `shape` and `pad` are absent, and every particle a sphere; before
// version 5 the fields `tag` and `born` are absent, and every tag and birth time 0, and the
// outlets' residence sums; before version 6 the particles added and removed besides the inlets
// and outlets, taken as 0):
//   "DEMCKPT" NUL, u32 version, u32 byte-order mark 0x01020304, u32 sizeof(real),
//   u32 sizeof(EntityContact), u32 sizeof(ContactHistory), u64 step, f64 time,
//   f64 dt, f64 gravity[3], u64 hash of the contact parameters, u64 hash of the meshes,
//   u64 particle count n, then every particle field of DEM_PARTICLE_FIELDS in order (n values each),
//   u64 touching pairs m, m ids a, m ids b, m histories, then the mesh slots: n counts,
//   8n entities, 8n normals, 8n histories (version 3: the used slots only, packed in particle
//   order: as many of each as the counts add up to); version 2 adds u8 forces_current (1: the state was saved
//   after compute_forces, and the force fields are those of this state), u64 bodies B, B body
//   forces, B body torques (zero bodies unless forces_current), then u64 bodies M and per body its
//   motion: f64 velocity[3], angular_velocity[3], t0, displacement_t0[3], rotation_t0 (w x y z),
//   start, stop, oscillation amplitude[3], angular frequency, phase, u32 motion-table rows (0 when
//   the table gave way to a constant law during the run; the rows themselves are the scene's);
//   then the inflow and outflow: i64 next id, u64 inlets I and per inlet u64 inserted, f64 mass,
//   f64 pending radius, u64 length and the text of its random engine; u64 outlets O and per outlet
//   u64 removed, f64 mass, f64 residence times' sum and sum of squares (from version 5), then f64
//   the next batch time of each inlet and check time of each outlet; then (from version 6) u64
//   the particles added so far besides the inlets (the Python module's), u64 those removed
//   besides the outlets (for leaving the domain, or by the module).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "host/sim/engine_types.hpp"
#include "host/sim/simulation.hpp"

namespace dem::host {

constexpr std::uint32_t kCheckpointVersion = 6;

struct Checkpoint {
  std::uint64_t step = 0;
  double time = 0;  // s
  // The physics the state belongs to: a restart under other physics is refused.
  double dt = 0;     // s
  Vec3 gravity{0, 0, 0};
  std::uint64_t params_hash = 0, meshes_hash = 0;
  ParticleArrays particles;
  ContactState contacts;
  // The mesh bodies' motions (only the motion fields are written and read: velocity,
  // angular_velocity, t0, displacement_t0, rotation_t0, start, stop, the oscillation and the
  // table's row count), as changed during the run if they were.
  // Empty from a version 1 file: the scene's motions hold.
  std::vector<MeshBodyMotion> motions;
  // Inflow and outflow (host/app/scene/flow.hpp): the next id, each inlet's progress and random state,
  // each outlet's tally. From a version 1 file: next_id from the particles, no inlet progress.
  std::int64_t next_id = -1;  // -1: not recorded
  std::vector<std::uint64_t> inlet_inserted;
  std::vector<double> inlet_mass, inlet_pending_radius;
  std::vector<std::string> inlet_rng;
  std::vector<std::uint64_t> outlet_removed;
  std::vector<double> outlet_mass;
  std::vector<double> outlet_residence_sum, outlet_residence_sum2;  // s, s^2 (0 before version 5)
  std::vector<double> next_inlet, next_outlet;  // s
  // The particles added and removed so far besides the inlets and outlets: added through the
  // Python module; removed for leaving the domain (on_escape: remove) or through the module. 0
  // before version 6.
  std::uint64_t inserted_besides_inlets = 0, removed_besides_outlets = 0;
};

// The state of `sim` now, with the physics it belongs to (for write_checkpoint).
Checkpoint capture_checkpoint(const Simulation& sim, double dt, Vec3 gravity, std::uint64_t params_hash,
                              std::uint64_t meshes_hash);

// The checkpoint's motion fields applied to the simulation's bodies (for a restart).
void restore_body_motions(Simulation& sim, const Checkpoint& c);

// Hashes of the physics (field by field, so padding never enters).
// The contact parameters, and from the settings the periodic box where there is one and the
// polyhedral shapes with the common plane's tolerance where there are any.
std::uint64_t hash_contact_params(const std::vector<ContactParams>& params, const EngineSettings& settings);
std::uint64_t hash_meshes(const MeshSet& meshes);

// Written to path + ".tmp", checked, renamed onto path; throws WriteError naming the file.
void write_checkpoint(const std::string& path, const Checkpoint& c);
// Throws InputError naming the file for anything that is not a checkpoint of this format.
Checkpoint read_checkpoint(const std::string& path);

}  // namespace dem::host
