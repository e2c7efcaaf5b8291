// The OpenMP host engine: particle state in plain arrays, a broad phase behind one interface,
// sphere-sphere and sphere-mesh contacts with persistent history, and central-difference
// integration. Every per-contact and per-particle body is a core/ function; this file only owns
// the arrays, the loops and their (fixed, thread-count independent) orders.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/contact/contact_law.hpp"
#include "core/dhm/h2_filter.hpp"
#include "core/grid/cell_grid.hpp"
#include "core/integrate/central_difference.hpp"
#include "host/engine/broad_phase.hpp"

namespace dem::host {

// Particle state, structure of arrays. Everything a restart needs is in here or in the contact
// arrays of Engine (plain vectors that can be written out as they are).
struct ParticleArrays {
  std::vector<std::int64_t> id;        // stable particle id, unique (contact roles and sum orders follow it)
  std::vector<Vec3> x;                 // m
  std::vector<Vec3> v;                 // m/s, at t - dt/2 (central differences)
  std::vector<Vec3> w;                 // rad/s, at t - dt/2
  std::vector<Quat> q;                 // orientation
  std::vector<real> radius;            // m
  std::vector<real> inv_mass;          // 1/kg
  std::vector<real> inv_inertia;       // 1/(kg m^2)
  std::vector<std::int32_t> material;  // index into the material table
  std::vector<std::uint8_t> prescribed;  // 1: velocity imposed, not integrated
  std::vector<Vec3> force;             // N, total contact force of the last step (no gravity)
  std::vector<Vec3> torque;            // N m, total contact torque of the last step

  std::size_t size() const { return id.size(); }
  void resize(std::size_t n);
  void push_back(std::int64_t pid, Vec3 pos, Vec3 vel, Vec3 ang, real r, real density, std::int32_t mat,
                 bool fixed_velocity);
};

// Rigid mesh bodies with prescribed motion. Elements of all bodies share one index space.
struct MeshBody {
  std::string name;
  std::int32_t material = 0;
  Vec3 velocity{0, 0, 0};          // m/s
  Vec3 angular_velocity{0, 0, 0};  // rad/s, about `center`
  Vec3 center0{0, 0, 0};           // m, rotation centre at t = 0
  index_t first_vertex = 0, vertex_count = 0;
  index_t first_element = 0, element_count = 0;
};

struct MeshSet {
  std::vector<MeshBody> bodies;
  std::vector<Vec3> ref_vertices;       // m, at t = 0
  std::vector<Vec3> vertices;           // m, at the current time
  std::vector<index_t> elem_offsets{0};   // CSR: element e uses elem_vertices[offsets[e], offsets[e+1])
  std::vector<index_t> elem_vertices;     // global vertex indices
  std::vector<index_t> elem_body;         // body of each element
  std::vector<Vec3> ref_normals;          // unit winding normal of each element at t = 0
  std::vector<Vec3> normals;              // the same at the current time (rotated with the body)
  double time = 0;                        // s, time of `vertices`

  std::size_t num_elements() const { return elem_body.size(); }
  void update(double t);  // moves every body (vertices and element normals) to its pose at time t
  Polygon polygon(index_t e) const;
  Vec3 center(index_t body) const;  // rotation centre at the current time
  BodyKinematics kinematics(index_t body) const;
};

struct EngineSettings {
  real dt = 0;                           // s
  Vec3 gravity{0, 0, 0};                 // m/s^2
  real skin = -1;                        // m; >= 0: fixed pair skin; < 0: adaptive per particle
                                         // (the mesh skin is this, or 0.5 * largest radius)
  int neighbour_interval = 0;            // > 0: also rebuild every this many steps
  real h2_tolerance = kH2DefaultCoplanarTol;
  std::size_t parallel_min = kParallelMin;  // loops over fewer items run on one thread
};

// Contact statistics, cumulative since the start (the counts reported in santasusana2016 Fig. 30).
struct ContactStats {
  std::uint64_t broad_phase_builds = 0;
  std::uint64_t pair_candidates = 0;   // summed over steps
  std::uint64_t pair_contacts = 0;     // touching sphere pairs, summed over steps
  std::uint64_t fe_potential = 0;      // Fast Intersection Test calls
  std::uint64_t fe_contact = 0;        // elements that passed it
  std::uint64_t valid_entities = 0;    // contacts left by H2
  std::uint64_t h2_compactions = 0;
  std::uint64_t mesh_list_renewals = 0;  // per-particle mesh candidate lists made
  std::uint64_t steps = 0;
};

// Wall time spent in each phase of the step, cumulative (s).
struct PhaseTimes {
  double broad_phase = 0;    // cell sort, re-sorting, candidate pairs, history carry-over
  double pair_contacts = 0;  // sphere-sphere geometry and contact law
  double mesh_bins = 0;      // search bins over the mesh elements (Sect. 3.1)
  double mesh_contacts = 0;  // per particle: Fast Intersection Test, H2, contact law, body loads
  double gather = 0;         // per-particle sums, and in step() the central
                             // differences, fused with the sums (one pass over the particles)
  double mesh_motion = 0;    // moving the mesh bodies
  double total() const { return broad_phase + pair_contacts + mesh_bins + mesh_contacts + gather + mesh_motion; }
};

// A problem found during a step (NaN, a full contact list): the engine stops with this message.
struct EngineStatus {
  bool ok = true;
  std::string message;
};

class Engine {
 public:
  Engine(ParticleArrays particles, MeshSet meshes, std::vector<ContactParams> params, int num_materials,
         EngineSettings settings);

  void step();                // advance one time step
  void compute_forces();      // contact forces at the current state, without integrating
  void update_meshes(double t) { meshes_.update(t); }

  double time() const { return time_; }
  std::uint64_t step_count() const { return steps_; }
  const ParticleArrays& particles() const { return p_; }
  ParticleArrays& particles_mutable() { return p_; }  // for tests and drivers that steer particles
  const MeshSet& meshes() const { return meshes_; }
  const ContactStats& stats() const { return stats_; }
  const PhaseTimes& phase_times() const { return times_; }
  const EngineStatus& status() const { return status_; }
  real skin() const { return skin_; }  // m: the mesh skin, and the pair skin when fixed
  bool adaptive_skin() const { return settings_.skin < 0; }  // pair skins sized per particle
  // Force and torque (about the rotation centre) the particles exert on each body, last step.
  const std::vector<Vec3>& body_force() const { return body_force_; }
  const std::vector<Vec3>& body_torque() const { return body_torque_; }
  // Index of the particle with this id, or -1 (particles are re-sorted, so indices change).
  std::int64_t index_of(std::int64_t id) const;
  // Checks positions and velocities for NaN/inf; on failure sets status and returns false.
  bool check_finite();
  // Re-sorts the particle arrays by `order` (new index i takes old index order[i]); contact
  // history follows the particles (tests use this to show that it does).
  void permute_particles(const std::vector<std::int64_t>& order);
  // Loops over fewer items than n run on one thread (tests set 0 to exercise the threaded paths).
  void set_parallel_min(std::size_t n) {
    settings_.parallel_min = n;
    broad_phase_->set_parallel_min(n);
  }
  // Number of sphere-sphere contacts with overlap > 0 in the last force computation.
  std::size_t touching_pairs() const { return touching_pairs_; }
  std::size_t mesh_contacts() const { return mesh_contacts_; }

 private:
  void rebuild_if_needed();
  void rebuild();
  void update_half_skins();
  void build_gather_lists();
  void pair_forces();
  void update_mesh_candidates();
  void mesh_forces();
  // Per-particle force sums (the body loads are summed in mesh_forces); with and_integrate, each
  // particle is advanced by central differences as soon as its sums are complete (one pass).
  void gather_and_reduce(bool and_integrate);
  const ContactParams& params(std::int32_t ma, std::int32_t mb) const {
    return params_[static_cast<std::size_t>(ma) * num_materials_ + mb];
  }

  ParticleArrays p_;
  MeshSet meshes_;
  std::vector<ContactParams> params_;  // num_materials^2, row-major
  int num_materials_;
  EngineSettings settings_;
  real skin_;
  std::unique_ptr<BroadPhase> broad_phase_;
  double time_ = 0;
  std::uint64_t steps_ = 0;
  std::uint64_t last_build_step_ = 0;
  bool needs_build_ = true;
  static constexpr std::uint64_t kResortInterval = 16;  // rebuilds between re-sorts of the arrays
  std::uint64_t rebuilds_since_resort_ = 0;
  std::vector<Vec3> x_at_build_;
  // Per-particle skins of the pair list (see update_half_skins): reach r_i + s_i, and s_i^2.
  std::vector<real> reach_, half_skin2_;
  static constexpr int kSkinSteps = 16;        // steps an adaptive skin is sized for
  static constexpr real kMinHalfSkin = 0.05;   // in radii: the half skin of a particle at rest
  static constexpr real kMaxHalfSkin = 2;      // in largest radii
  real r_max_ = 0;

  // Sphere-sphere candidate pairs, a half list in CSR over the lower particle index: row i holds
  // the pairs (i, j), j > i, in increasing j. Indices change only when the arrays are re-sorted,
  // and the list is remapped with them (permute_particles), so a rebuild carries each pair's
  // history by merging its new row with the old one. Role A of a pair (the sign convention of the
  // tangential spring) is the particle with the smaller id, so it never changes.
  std::vector<std::int32_t> pair_offsets_;       // n + 1 (empty before the first build)
  std::vector<std::int32_t> pair_i_, pair_j_;    // lower and higher particle index
  std::vector<std::int32_t> scratch_a_, scratch_b_;  // the previous rebuild's pair_i_, pair_j_
  std::vector<ContactHistory> pair_history_;
  std::vector<std::uint8_t> pair_touching_;      // overlap > 0 at the last evaluation (else history 0)
  struct PairLoad {
    Vec3 force_on_a, torque_on_a, torque_on_b;   // N, N m (valid where pair_touching_)
  };
  std::vector<PairLoad> pair_load_;
  // Per-particle list of (pair index, role) for the gather (CSR), sorted by the partner's id: a
  // summation order that depends neither on the thread count nor on the particle order.
  std::vector<std::int32_t> gather_offsets_, gather_entries_;  // entry = 2 * pair + (role B ? 1 : 0)

  // Sphere-mesh contacts: kMaxMeshContacts slots per particle.
  std::vector<std::uint8_t> mesh_count_;
  std::vector<EntityContact> mesh_entity_;          // entity of each slot
  std::vector<Vec3> mesh_normal_;                   // normal of each slot (history matching)
  std::vector<ContactHistory> mesh_history_;
  std::vector<Vec3> mesh_force_, mesh_torque_;      // per particle sums over its mesh contacts
  static constexpr std::int64_t kBodyChunk = 1024;  // particles per chunk of the body-load sums
  std::vector<Vec3> chunk_force_, chunk_torque_;     // per chunk and body: loads on the body
  MeshBins bins_;
  std::vector<std::int64_t> mesh_cand_offsets_;  // CSR: candidate elements of each particle
  std::vector<std::int32_t> mesh_cand_;
  std::vector<Vec3> x_at_mesh_build_;
  real mesh_travel_ = 0;                         // m, bound on mesh motion since the lists were built
  std::vector<real> body_reach_;                 // m, largest distance of a body's points from its rotation axis

  std::vector<Vec3> body_force_, body_torque_;
  ContactStats stats_;
  PhaseTimes times_;
  EngineStatus status_;
  std::size_t touching_pairs_ = 0, mesh_contacts_ = 0;
};

}  // namespace dem::host
