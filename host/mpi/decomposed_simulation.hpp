// A run decomposed over the MPI ranks (decomposition.hpp) as one host::Simulation: rank 0 drives
// it as it drives an engine (the `dem run` loop, the output, inlets and checkpoints run there
// unchanged), and each call is also made on the other ranks, which wait in serve() for rank 0 to
// name the next one. What a call returns on rank 0 is the whole run's: particles in increasing id,
// body loads and counts summed over the ranks, a stop found on any rank.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/mpi/decomposition.hpp"
#include "host/sim/simulation.hpp"

namespace dem::mpi {

class DecomposedSimulation final : public host::Simulation {
 public:
  // On rank 0, with the run's particles and inputs; the other ranks are in serve().
  DecomposedSimulation(const Comm& comm, host::ParticleArrays particles, EngineInputs inputs,
                       EngineMaker make_engine = host_engine_maker());
  ~DecomposedSimulation() override;  // lets the other ranks leave serve()

  void step() override;
  // The steps and their checks in one call to the other ranks, one reduction a step besides the
  // ghost updates and the lists' agreement (Decomposition::advance).
  Advanced advance(std::uint64_t steps, const HealthLimits& limits) override;
  void compute_forces() override;
  double time() const override { return d_->time(); }
  std::uint64_t step_count() const override { return d_->step_count(); }
  const host::ParticleArrays& particles() const override;
  std::size_t num_particles() const override { return d_->num_particles(); }
  const host::MeshSet& meshes() const override { return d_->meshes(); }
  const std::vector<PolyShape>& shapes() const override { return d_->shapes(); }
  const std::vector<Vec3>& body_force() const override { return d_->body_force(); }
  const std::vector<Vec3>& body_torque() const override { return d_->body_torque(); }
  const host::ContactStats& stats() const override;
  const host::PhaseTimes& phase_times() const override;
  const host::EngineStatus& status() const override { return d_->status(); }
  bool check_health(const HealthLimits& limits) override;
  real skin() const override { return d_->engine().skin(); }
  bool adaptive_skin() const override { return d_->engine().adaptive_skin(); }
  std::size_t touching_pairs() const override;
  std::size_t mesh_contacts() const override;
  double max_overlap() const override;
  std::string engine_name() const override { return d_->engine().engine_name(); }
  std::string device_name() const override { return d_->engine().device_name(); }
  void export_state(host::ParticleArrays& particles, host::ContactState& contacts) const override;
  void keep_contact_forces(bool on) override;
  bool export_contact_forces(host::ContactForces& out) const override;
  void restore_state(const host::ContactState& contacts, std::uint64_t step) override;
  void set_stats(const host::ContactStats& stats) override;
  void set_body_motion(std::size_t body, const MeshBodyMotion& motion) override;
  std::size_t edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more) override;
  void set_tags(const std::vector<std::int32_t>& tags) override;
  // (rank 0's engine)
  std::vector<host::StateBuffer> state_buffers() const override { return d_->engine().state_buffers(); }
  double bytes_per_particle() const override { return d_->engine().bytes_per_particle(); }
  host::BroadPhaseReport broad_phase_report() const override { return d_->engine().broad_phase_report(); }
  // The ranks, the imbalance, the ghosts and the traffic.
  host::RanksReport ranks_report() const override;

 private:
  void call(int op) const;  // names the next call to the other ranks

  Comm comm_;
  std::unique_ptr<Decomposition> d_;
  mutable host::ParticleArrays gathered_;
  mutable bool gathered_valid_ = false;
  mutable host::ContactStats stats_;
  mutable host::PhaseTimes times_;
  host::ContactStats carried_;  // set_stats's, added to the ranks' own
  HealthLimits last_limits_{};  // the limits check_health last sent to the other ranks
  bool limits_sent_ = false;
};

// The other ranks' side: makes every call rank 0's DecomposedSimulation names, until it is
// destroyed (or rank 0 calls finish_serving without having made one). Returns the exit code.
int serve(const Comm& comm, const EngineMaker& make_engine = host_engine_maker());
// On rank 0 when no DecomposedSimulation was made (the run failed before): the others leave serve().
void finish_serving(const Comm& comm);

}  // namespace dem::mpi
