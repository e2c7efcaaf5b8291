// Inflow and outflow during a run: the scene's inlets add particles at their rates (random places
// in their regions, without overlaps with the particles there, each other or the meshes), its
// outlets remove the particles whose centres enter them and count them. Both act between steps
// through Simulation::edit_particles, the same way on every engine; ids are new and never reused.
// Used by `dem run` and the Python module; the state a restart needs is FlowState.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "host/sim/checkpoint.hpp"
#include "host/sim/simulation.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

// Everything a restart needs to continue the inflow and outflow with the same bits.
struct FlowState {
  std::int64_t next_id = 0;               // the next new particle's id
  std::vector<std::uint64_t> inserted;    // per inlet: particles added so far
  std::vector<double> inserted_mass;      // kg
  std::vector<double> pending_radius;     // m: the next particle's radius, drawn already (0: none)
  std::vector<std::string> rng;           // each inlet's random engine, as text (std::mt19937_64 <<)
  std::vector<std::uint64_t> removed;     // per outlet: particles removed so far
  std::vector<double> removed_mass;       // kg
  std::vector<double> residence_sum, residence_sum2;  // per outlet: their residence times' sum (s) and squares' (s^2)
  std::vector<double> next_inlet, next_outlet;  // s: the next batch and check of each
};

// A particle an outlet removed: when it entered the run (ParticleArrays::born) and when it left.
struct Residence {
  std::size_t outlet;
  std::int64_t id;
  double inserted, removed;  // s
};

// What one call of FlowController::apply did.
struct FlowEvents {
  std::uint64_t inserted = 0;
  std::vector<std::uint64_t> removed;     // per outlet
  std::vector<double> removed_mass;       // per outlet, kg
  std::vector<Residence> residences;      // every particle removed, in the order of outlets and ids
  // per outlet, the run's residence sums after this call (FlowState's; empty when nothing was due)
  std::vector<double> residence_sum, residence_sum2;
};

class FlowController {
 public:
  // next_id: above every id in use or used before (a new run: the particle count). inlet_shapes:
  // each inlet's polyhedral shape in the simulation's shape table, -1 for spheres
  // (SceneInputs::inlet_shapes; empty: every inlet pours spheres).
  FlowController(const SceneConfig& scene, std::int64_t next_id, std::vector<std::int32_t> inlet_shapes = {});
  bool empty() const { return inlets_.empty() && outlets_.empty(); }
  // Adds and removes what is due at the simulation's time (call after each step, before output).
  FlowEvents apply(Simulation& sim);
  FlowState state() const;  // (the random engines written out as text)
  void restore(const FlowState& s);  // throws InputError when it does not fit the scene's inlets and outlets
  // k new ids for particles added by other means (the Python module): the first of them.
  std::int64_t allocate_ids(std::size_t k) {
    const std::int64_t first = state_.next_id;
    state_.next_id += static_cast<std::int64_t>(k);
    return first;
  }
  std::uint64_t inserted() const;
  std::uint64_t removed() const;
  const std::vector<std::string>& outlet_names() const { return outlet_names_; }

 private:
  std::vector<InletSpec> inlets_;
  std::vector<OutletSpec> outlets_;
  std::vector<std::string> outlet_names_;
  std::vector<double> densities_;  // kg/m^3, per material
  PeriodicBox periodic_;           // the scene's periodic axes (new particles avoid others across them)
  std::vector<std::int32_t> material_;  // per inlet
  std::vector<std::int32_t> shape_;     // per inlet: its polyhedra's shape, or -1 (spheres)
  double dt_ = 0;
  FlowState state_;
  std::vector<std::mt19937_64> rng_;
  std::vector<double> next_inlet_, next_outlet_;  // s: the next event of each
  std::vector<char> warned_;                        // an inlet that fell behind has said so once
};

// The flow's state into a checkpoint, and back (a version 1 checkpoint: the next id from its
// particles). restore_flow throws InputError when the checkpoint's inlets and outlets are not the scene's.
void store_flow(const FlowController& flow, Checkpoint& c);
void restore_flow(FlowController& flow, const Checkpoint& c);

}  // namespace dem::host
