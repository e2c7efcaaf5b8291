// Domain decomposition of a run over the MPI ranks. Each rank runs the host engine on the
// particles it owns, those inside its box of a recursive coordinate bisection (rcb.hpp), plus
// ghosts: copies of the particles other ranks own within a halo of its box. Every step each owner
// sends its ghosts' new state (host::StepStates: position, velocity, spin and, in a run with
// polyhedra, orientation and PAD, which decide their contacts and how their planes are found) to the ranks that hold them,
// and each engine keeps its pair and mesh lists on its own, built at the steps where any rank's
// engine builds one (Simulation::set_list_agreement: no rank waits for another's build). When a
// particle anywhere has moved farther than the halo allows since the last hand-over (travel_, or
// more for a particle far from the other ranks' boxes), every rank hands its
// particles to their owners with their whole state (fields, pair histories, mesh slots), the
// ghosts are chosen anew, and each rank starts a new engine from what it holds, as a restart does.
// The cut is made anew there when the owned costs are out of balance by more than
// DecompositionSettings::rebalance.
//
// Why the bits are those of one process: a particle's pair loads are integer sums (order-free)
// over the same touching pairs with the same histories, its mesh loads come from its own mesh
// slots, body loads are integer sums over the ranks (Comm::sum), and a list built at another step
// holds the same touching pairs (an engine's results do not depend on when its lists were built:
// the checkpoint tests restart at any step). The loads' units agree: each engine sizes them from
// the scene (EngineSettings::load_radius, load_materials), and the first hand-over checks that
// every rank got the same.
//
// Every method is collective (each rank calls it, in the same order); arguments marked "root's"
// are read on rank 0 and broadcast. On periodic axes a ghost is sent where an image of it is near
// a box (the engines pair particles by their nearest images). Polyhedra too: a pair's common plane
// is history that lives while the bounding spheres overlap (core/engine/polyhedron_phases.hpp),
// moved with the pair like a sphere pair's spring.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/mpi/comm.hpp"
#include "host/mpi/rcb.hpp"
#include "host/omp/engine.hpp"
#include "host/sim/contact_forces.hpp"

namespace dem::mpi {

// What every rank builds its engine from besides the particles (rank 0's, broadcast).
struct EngineInputs {
  host::MeshSet meshes;
  std::vector<ContactParams> params;
  int num_materials = 0;
  host::EngineSettings settings;
  std::string engine = "cpu";  // which engine each rank runs: cpu, omp or gpu (as --device)
};

// Makes a rank's engine of the kind EngineInputs::engine names (host_engine_maker: the host
// engine; tools/dem_main.cpp's also the device engine).
using EngineMaker = std::function<std::unique_ptr<host::Simulation>(
    const std::string& engine, host::ParticleArrays particles, host::MeshSet meshes, std::vector<ContactParams> params,
    int num_materials, host::EngineSettings settings)>;
EngineMaker host_engine_maker();

struct DecompositionSettings {
  // Re-cut when the largest rank's cost (measured: cut()) exceeds the mean by this factor. A re-cut
  // at a hand-over costs little more than the hand-over.
  double rebalance = 1.05;
};

using DecompositionReport = host::RanksReport;  // what it reports (summary.json)

class Decomposition {
 public:
  // Rank 0 gives the run's particles and inputs (the others' are ignored and come from rank 0).
  Decomposition(const Comm& comm, host::ParticleArrays particles, EngineInputs inputs, EngineMaker make_engine,
                DecompositionSettings settings = {});
  ~Decomposition();

  // As host::Simulation's, collectively. restore_state takes root's contacts (for the particles
  // given at construction) before the first step.
  void restore_state(const host::ContactState& contacts, std::uint64_t step);
  void step();
  // Up to `steps` (root's) steps, each health-checked with root's limits, as
  // host::Simulation::advance: one reduction a step for the body loads, the checks and the travel.
  host::Simulation::Advanced advance(std::uint64_t steps, const HealthLimits& limits);
  void compute_forces();
  bool check_health(const HealthLimits& limits);  // root's limits
  bool check_health_again();  // with the limits of the last check_health
  // Every particle (root; empty elsewhere), in increasing id.
  host::ParticleArrays gather_particles();
  // Root: the whole state (particles in increasing id, their contacts); elsewhere empty.
  void export_state(host::ParticleArrays& particles, host::ContactState& contacts);
  bool export_contact_forces(host::ContactForces& out);
  void keep_contact_forces(bool on);  // root's
  // Root's ids to remove and particles to add; returns the number removed (every rank).
  std::size_t edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more);
  void set_tags(const std::vector<std::int64_t>& ids, const std::vector<std::int32_t>& tags);  // root's
  void set_body_motion(std::size_t body, const MeshBodyMotion& motion);                          // root's
  host::ContactStats stats();
  host::PhaseTimes phase_times();  // the slowest rank's, phase by phase
  std::size_t touching_pairs();
  std::size_t mesh_contacts();
  double max_overlap();
  DecompositionReport report();

  // The same on every rank, without communication:
  double time() const { return local_->time(); }
  std::uint64_t step_count() const { return local_->step_count(); }
  std::size_t num_particles() const { return total_particles_; }
  const host::MeshSet& meshes() const { return local_->meshes(); }
  const std::vector<PolyShape>& shapes() const { return local_->shapes(); }
  const host::EngineStatus& status() const { return status_; }
  const std::vector<Vec3>& body_force() const { return body_force_; }
  const std::vector<Vec3>& body_torque() const { return body_torque_; }
  const host::Simulation& engine() const { return *local_; }  // this rank's
  const Comm& comm() const { return comm_; }

 private:
  // A rank's part of the state: particles (any order), their contacts (ContactState's layout:
  // mesh slots in particle order) and which of them the rank owns.
  struct Part {
    host::ParticleArrays p;
    host::ContactState c;
    std::vector<std::uint8_t> own;
  };
  Part local_part() const;  // the engine's state, exported
  void hand_over(Part part);
  void cut(const Part& part, double engine_seconds, std::uint64_t engine_steps);
  int owner(Vec3 x) const;
  bool after_evaluation(bool evaluated, bool advanced, bool check);
  bool step_once(bool check);
  void forward_ghosts();  // (timed)
  void forward_ghost_states();
  bool travelled();
  void refresh_indices();
  void agree_status(bool mine_counts);

  Comm comm_;
  EngineInputs inputs_;
  DecompositionSettings dsettings_;
  EngineMaker make_engine_;
  std::unique_ptr<host::Simulation> local_;
  std::vector<std::int64_t> ghost_ids_;  // the ghosts this rank holds, ascending
  bool is_ghost(std::int64_t id) const;
  host::ParticleArrays initial_;  // root: the particles given, until the first step
  std::vector<RcbBox> boxes_;     // one per rank; the outer faces at infinity
  // A rank holds the particles within halo_ of its box; the particles are handed over again when
  // one has moved farther than its limit (home_limit_) from where it was at the last hand-over
  // (home_x_, of its own particles home_ids_, at home_index_ in the engine): travel_, or more for
  // one that stays far from the other boxes. Wider travel: fewer hand-overs, more ghosts. It is
  // what the fastest particle covers in kTravelSteps steps, between kTravelMin and kTravelMax
  // largest radii (a settled bed: a quarter radius, a halo of 2.5 radii, close to LAMMPS's 2 r_max +
  // skin, and few hand-overs; one radius gave 60 % more ghosts and ran 3 to 9 % slower; the
  // ribbon mixer's blade: 12 hand-overs per 1000 steps at three radii,
  // bench/results/dev-2core-epyc/mpi_ranks.md and mpi_scaling.md).
  static constexpr double kTravelSteps = 200, kTravelMin = 0.25, kTravelMax = 3;
  double halo_ = 0, travel_ = 0;  // m
  std::vector<std::int64_t> home_ids_;
  std::vector<Vec3> home_x_;
  std::vector<double> home_limit_;  // m
  std::vector<std::int32_t> home_index_;
  // The ghost updates: the ids each rank sends to each other (increasing) and receives from each,
  // and their indices in the engine (refreshed when its arrays were re-sorted).
  std::vector<std::vector<std::int64_t>> send_ids_, recv_ids_;
  std::vector<std::vector<std::int32_t>> send_index_, recv_index_;
  std::uint64_t indexed_builds_ = ~std::uint64_t(0);  // the engine's build count the indices are of
  std::uint64_t index_version_ = 0;  // counts the refreshes (Simulation::get_states' version)
  std::vector<std::int32_t> send_all_;  // send_index_'s, one rank after the other
  host::StepStates sent_states_;        // their states, from the engine
  // The ghost updates' buffers, kept between steps: x, v, w and, in a run with polyhedra, q and
  // pad (ghost_bytes() a ghost: 72 bytes for a sphere in double precision), a column each, per
  // rank in rank order.
  bool ghosts_shaped() const { return !inputs_.settings.shapes.empty(); }
  std::size_t ghost_bytes() const { return 3 * sizeof(Vec3) + (ghosts_shaped() ? sizeof(Quat) + sizeof(real) : 0); }
  std::vector<char> ghost_send_, ghost_recv_;
  std::vector<int> ghost_send_count_, ghost_recv_count_;
  std::vector<std::int32_t> ghost_index_;
  host::StepStates ghost_states_;
  std::uint64_t restored_step_ = 0;  // the step restore_state gave (before the first engine)
  std::uint64_t engine_start_step_ = 0;  // the step this rank's engine started at
  // The cut's measured weights (cut()): from kWeighSteps steps of the engines on, in integer units
  // of 1/kWeighUnits of the slowest rank's time per counted cost.
  static constexpr std::uint64_t kWeighSteps = 20;
  static constexpr std::int64_t kWeighUnits = 64;
  bool need_hand_over_ = false;
  bool forces_current_ = false;
  bool keep_contacts_ = false;
  bool quanta_checked_ = false;
  std::size_t total_particles_ = 0;
  host::EngineStatus status_;
  HealthLimits limits_{};  // the last check_health's (every rank's copy of root's)
  std::vector<Vec3> body_force_, body_torque_;
  DecompositionReport report_;
  host::PhaseTimes past_times_;  // the phase times of the engines before this one
  double bytes_sent_ = 0;
  std::uint64_t steps_forwarded_ = 0;
};

}  // namespace dem::mpi
