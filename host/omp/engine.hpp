// The OpenMP host engine: particle state in plain arrays, a broad phase behind one interface,
// sphere-sphere and sphere-mesh contacts with persistent history, and central-difference
// integration. Every per-contact and per-particle body is a core/ function; the engine only owns
// the arrays, the loops and their (fixed, thread-count independent) orders. Its methods are
// defined one phase a file, named as the device engine's (cuda/*.inl): engine.cpp (construction,
// the step), pair_list.cpp, pair_pass.cpp, mesh_lists.cpp, mesh_pass.cpp, integration.cpp,
// health.cpp, state.cpp.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/fixed_loads.hpp"
#include "core/engine/phases.hpp"
#include "core/grid/cell_grid.hpp"
#include "host/omp/broad_phase.hpp"
#include "host/omp/parallel.hpp"
#include "host/sim/load_sizing.hpp"
#include "host/sim/simulation.hpp"

namespace dem::host {

// The pair histories as two arrays (ContactHistory's two vectors): the default law's pass reads
// and writes only the tangential spring, 24 of the 48 bytes, and leaves the rolling one alone.
struct PairHistory {
  NoInitVector<Vec3> xi, roll;  // tangential, rolling (ContactHistory::tangential, ::rolling)
  // Whether roll is stored: not when no law of the table uses it (uses_second_history), where it
  // is zero for every pair (81 bytes per particle on a bed).
  bool with_roll = true;

  std::size_t size() const { return xi.size(); }
  void resize(std::size_t n) {
    xi.resize(n);
    roll.resize(with_roll ? n : 0);
  }
  void swap(PairHistory& o) {
    xi.swap(o.xi);
    roll.swap(o.roll);
    std::swap(with_roll, o.with_roll);
  }
  ContactHistory get(std::size_t k) const { return ContactHistory{xi[k], with_roll ? roll[k] : Vec3{0, 0, 0}}; }
  SplitHistory view() { return SplitHistory{xi.data(), with_roll ? roll.data() : nullptr}; }
  // As ContactHistory records (a contact state's), and back.
  std::vector<ContactHistory> records() const {
    std::vector<ContactHistory> out(size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = get(k);
    return out;
  }
  void assign(const std::vector<ContactHistory>& h) {
    resize(h.size());
    for (std::size_t k = 0; k < h.size(); ++k) set(k, h[k]);
  }
  void set(std::size_t k, const ContactHistory& h) {
    xi[k] = h.tangential;
    if (with_roll) roll[k] = h.rolling;
  }
  void swap_entries(std::size_t a, std::size_t b) {
    std::swap(xi[a], xi[b]);
    if (with_roll) std::swap(roll[a], roll[b]);
  }
};

class Engine final : public Simulation {
 public:
  Engine(ParticleArrays particles, MeshSet meshes, std::vector<ContactParams> params, int num_materials,
         EngineSettings settings);

  void step() override;
  void compute_forces() override;
  void update_meshes(double t) { meshes_.update(t); }

  double time() const override { return time_; }
  std::uint64_t step_count() const override { return steps_; }
  const ParticleArrays& particles() const override { return p_; }
  // For tests and drivers that steer particles: the forces of the current state are stale then.
  std::size_t num_particles() const override { return p_.size(); }
  ParticleArrays& particles_mutable() {
    forces_current_ = false;
    contacts_kept_ = false;
    uniform_material_ = kMaterialUnknown;
    return p_;
  }
  const MeshSet& meshes() const override { return meshes_; }
  const std::vector<PolyShape>& shapes() const override { return settings_.shapes; }
  const ContactStats& stats() const override { return stats_; }
  const PhaseTimes& phase_times() const override { return times_; }
  const EngineStatus& status() const override { return status_; }
  real skin() const override { return skin_; }
  bool adaptive_skin() const override { return settings_.skin < 0; }
  // Force and torque (about the rotation centre) the particles exert on each body, last step.
  const std::vector<Vec3>& body_force() const override { return body_loads_.force; }
  const std::vector<Vec3>& body_torque() const override { return body_loads_.torque; }
  // Index of the particle with this id, or -1 (particles are re-sorted, so indices change).
  std::int64_t index_of(std::int64_t id) const;
  bool check_health(const HealthLimits& limits) override;
  // Re-sorts the particle arrays by `order` (new index i takes old index order[i]); contact
  // history follows the particles (tests use this to show that it does).
  void permute_particles(const std::vector<std::int64_t>& order);
  // Loops over fewer items than n run on one thread (tests set 0 to exercise the threaded paths).
  void set_parallel_min(std::size_t n) {
    settings_.parallel_min = n;
    broad_phase_->set_parallel_min(n);
  }
  // Number of sphere-sphere contacts with overlap > 0 in the last force computation.
  std::size_t touching_pairs() const override { return touching_pairs_; }
  std::size_t mesh_contacts() const override { return mesh_contacts_; }
  double max_overlap() const override;
  // The units of the pair loads' integer sums (core/engine/fixed_loads.hpp).
  const LoadQuantum& quantum() const { return quantum_; }
  std::string engine_name() const override { return "host-openmp"; }
  std::string device_name() const override { return "cpu"; }
  std::vector<StateBuffer> state_buffers() const override;
  BroadPhaseReport broad_phase_report() const override { return broad_phase_->report(); }
  void export_state(ParticleArrays& particles, ContactState& contacts) const override;
  void restore_state(const ContactState& contacts, std::uint64_t step) override;
  void set_stats(const ContactStats& s) override;
  void set_body_motion(std::size_t body, const MeshBodyMotion& motion) override;
  std::size_t edit_particles(const std::vector<std::int64_t>& remove_ids, const ParticleArrays& more) override;
  void export_pairs(ContactState& contacts) const override;
  void keep_contact_forces(bool on) override { keep_contacts_ = on; }
  bool export_contact_forces(ContactForces& out) const override;
  // Under MPI (Simulation's): the ghosts as a flag per particle (ghost_, following every
  // re-sort), left out of the mesh lists (mesh_lists.cpp: a ghost's mesh contacts are its
  // owner's, and its state after a step is its owner's), the body loads (mesh_pass.cpp) and the
  // contact counts (ghosts.cpp).
  void set_ghosts(const std::vector<std::int64_t>& ghost_ids) override;
  void set_list_agreement(ListAgreement agree) override { list_agreement_ = std::move(agree); }
  std::vector<BodyLoadSum> body_load_sums() const override { return body_sums_; }
  LoadQuantum load_quantum() const override { return quantum_; }
  std::size_t own_touching_pairs() const override;
  std::size_t own_mesh_contacts() const override;
  void set_states(const std::vector<std::int32_t>& index, const StepStates& states) override;
  void set_tags(const std::vector<std::int32_t>& tags) override {
    if (tags.size() != p_.size()) throw std::invalid_argument("set_tags: the tags are for another particle count");
    p_.tag = tags;
  }

 private:
  void decide_lists();
  void decide_pair_list();
  bool mesh_lists_due(bool renewed_anyway);
  bool mesh_lists_fit() const;
  void rebuild_if_needed();
  bool list_holds(const std::vector<std::int32_t>& over);
  bool mesh_lists_hold(const std::vector<std::int32_t>& over);
  void rebuild();
  void update_half_skins();
  void mark_swapped_pairs();
  void lay_out_stripes();
  void update_quantum();
  void ensure_pair_sums();
  void pair_forces();
  void update_mesh_candidates();
  void assign_mesh_blocks();
  void mesh_forces();
  // Per-particle force sums (the body loads are summed in mesh_forces); with and_integrate, each
  // particle is advanced by central differences as soon as its sums are complete (one pass).
  void gather_and_reduce(bool and_integrate);
  void evaluate(bool and_integrate);
  void choose_broad_phase();
  void integrate_only();  // central differences with the stored forces of the current state
  bool has_polyhedra() const { return !settings_.shapes.empty(); }
  ContactTable table() const { return ContactTable{params_.data(), num_materials_}; }
  ParticleView pview() {  // the particle arrays with the periodic box
    ParticleView v = p_.view();
    v.periodic = settings_.periodic;
    v.shapes = settings_.shapes.empty() ? nullptr : settings_.shapes.data();
    v.plane_tolerance = settings_.plane_tolerance;
    return v;
  }
  MeshSlotsView slot_view() {
    return MeshSlotsView{slots_.count.data(),        slots_.entity.data(),     slots_.normal.data(),
                         slots_.history.view(),      slots_.force.data(), slots_.torque.data(),
                         slots_.block.data()};
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
  bool mesh_lists_due_ = true;   // this step's mesh pass renews the candidate lists (decide_lists)
  ListAgreement list_agreement_;  // under MPI: the ranks' agreement on the builds (empty: none)
  // The forces, body loads and mesh pose are those of the current state (compute_forces ran since
  // the last step): the next step integrates with them instead of evaluating the contacts again.
  bool forces_current_ = false;
  // Contact forces for export_contact_forces: kept when asked (keep_contacts_) by compute_forces's
  // evaluation (record_contacts_ while it runs; contacts_kept_ until the lists change): per
  // candidate pair, the force on A and, where a polyhedron takes part, the contact point.
  bool keep_contacts_ = false, record_contacts_ = false, contacts_kept_ = false;
  std::vector<Vec3> pair_force_, pair_point_;
  static constexpr std::uint64_t kResortInterval = 16;  // rebuilds between re-sorts of the arrays
  std::uint64_t rebuilds_since_resort_ = 0;
  // The engine's state in four parts, named as the device engine's (cuda/device_engine_class.inl):
  // the pair list, the mesh lists, the mesh slots and the body loads.

  // Sphere-sphere candidate pairs (pair_list.cpp builds them, pair_pass.cpp evaluates them): a half
  // list in CSR over the lower particle index, row i holding the pairs (i, j), j > i, in increasing
  // j. Indices change only when the arrays are re-sorted, and the list is remapped with them
  // (permute_particles), so a rebuild carries each pair's history by merging its new row with the
  // old one. Role A of a pair (the sign convention of the tangential spring) is the particle with
  // the smaller id, so it never changes.
  struct PairList {
    std::vector<std::int32_t> offsets;       // n + 1 (empty before the first build)
    std::vector<std::int32_t> i, j;          // lower and higher particle index
    std::vector<std::int32_t> old_i, old_j;  // the previous rebuild's i, j
    PairHistory history;                     // (written in full by each rebuild)
    std::vector<std::uint8_t> touching;      // overlap > 0 at the last evaluation (else history 0)
    NoInitVector<std::uint8_t> swapped;      // 1 where the higher index has the smaller id (role A)
    // The positions at the build, and the per-particle skins (update_half_skins): reach r_i + s_i,
    // and s_i^2.
    std::vector<Vec3> x_at_build;
    std::vector<real> reach, half_skin2;
  };
  PairList pairs_;
  real r_max_ = 0;

  // The material every particle has, or kMaterialMixed; found at each rebuild (and after
  // particles_mutable), so that the pair pass looks the contact parameters up once.
  static constexpr std::int32_t kMaterialMixed = -1, kMaterialUnknown = -2;
  std::int32_t uniform_material_ = kMaterialUnknown;
  void find_uniform_material();
  // The pair loads' sums (core/engine/fixed_loads.hpp): per particle, in integer quanta, exact in
  // any order. The pair pass adds each touching pair's loads to both its particles; the gather
  // reads each sum and sets it back to zero (all zero between steps).
  LoadSizing load_sizing_;
  LoadQuantum quantum_;
  NoInitVector<FixedLoad> pair_sum_;
  // Who may add to which sums at once (pair_forces): the rows in stripes of about equal pair
  // counts (stripe_row_[s] .. stripe_row_[s + 1]; one stripe on one thread), taken in two rounds,
  // the even stripes then the odd ones. A stripe adds directly to the sums of its own particles
  // and of the next stripe's, which no other stripe of its round touches; a partner beyond
  // (a pair spanning more than a stripe of the particle order, rare) goes to spill_, per thread
  // and per range of the particles (the thread that owns it applies it after both rounds).
  std::vector<std::int32_t> stripe_row_;
  struct Spill {
    std::int32_t target;
    FixedLoad load;
  };
  std::vector<std::vector<std::vector<Spill>>> spill_;  // [thread][owner]

  // Candidate elements of each particle (mesh_lists.cpp), and how long they hold.
  struct MeshLists {
    MeshBins bins;
    std::vector<std::int64_t> offsets;  // CSR: candidate elements of each particle
    std::vector<std::int32_t> elements;
    std::vector<Vec3> x_at_build;
    std::vector<real> skin;  // m, per particle: its candidates are the elements within radius + this
    // m, per particle: how far beyond its radius the elements its list leaves out lay at the
    // renewal, those of still bodies and those of the moving bodies other than its nearest one
    // (each at least its mesh skin; at most a largest skin more: mesh_rooms_used); the particles
    // near a moving body, with their room in its frame (mesh_near_body_used)
    std::vector<real> room_still, room_moving;
    std::vector<MeshNearBody> near;
    real travel = 0;  // m, bound on mesh motion since the lists were built
  };
  MeshLists mesh_lists_;
  real mesh_step_ = 0;  // m, mesh_step_bound: how far a mesh point moves per step

  // Sphere-mesh contacts: blocks of kMaxMeshContacts slots, one per particle that has candidate
  // elements (assign_mesh_blocks, in particle order, whenever the candidate lists are made; the
  // others have none and no contacts). Between a restore, a re-sort or an edit and the next lists,
  // the particles with contacts keep their blocks (out of order; removed particles' blocks idle).
  struct MeshSlots {
    std::vector<std::uint8_t> count;
    std::vector<std::int32_t> block;    // per particle: its block, or -1
    std::vector<EntityContact> entity;  // entity of each slot
    std::vector<Vec3> normal;           // normal of each slot (history matching)
    PairHistory history;                // (the second only where a law uses it, as the pairs')
    std::vector<Vec3> force, torque;    // loads of each slot on its body
    // The previous blocks' slots while assign_mesh_blocks copies them over (kept: no reallocation)
    std::vector<EntityContact> spare_entity;
    std::vector<Vec3> spare_normal;
    PairHistory spare_history;
    std::vector<Vec3> particle_force, particle_torque;  // per block: its particle's sums over its mesh contacts
  };
  MeshSlots slots_;

  // The loads on the bodies, summed in integers (BodyLoadSum), whatever the particle order.
  struct BodyLoads {
    std::vector<Vec3> force, torque;  // per body, the last step's (about its rotation centre)
  };
  BodyLoads body_loads_;
  std::vector<BodyLoadSum> body_sums_;  // the same as integer sums (body_load_sums)
  std::vector<std::uint8_t> ghost_;     // per particle, under MPI (set_ghosts); empty: none
  std::vector<MeshBodyMotion> motions_;  // the bodies' motion records (for MeshView)

  ContactStats stats_;
  PhaseTimes times_;
  EngineStatus status_;
  std::size_t touching_pairs_ = 0, mesh_contacts_ = 0;
  // The deepest overlap fractions the last pair pass met among its touching pairs and the last
  // mesh pass left in the slots (+inf: unknown, after a restore or an edit, or with polyhedral
  // pairs): check_health passes over the pairs (pair_overlap_bound) and the slots only where
  // these reach its limit.
  real pair_overlap_seen_ = std::numeric_limits<real>::infinity();
  real mesh_overlap_seen_ = std::numeric_limits<real>::infinity();
};

}  // namespace dem::host
