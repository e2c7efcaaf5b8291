// What the driver, the output and the benchmarks see of an engine, whichever it is: the OpenMP
// host engine (host/omp/engine.hpp) or the device engine (cuda/device_engine.hpp, on CUDA or on
// Thrust's OpenMP system). Reads of particles and meshes are host copies; a device engine
// downloads them when asked (once per step at most), so read them at output times only.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/engine/fixed_loads.hpp"
#include "host/sim/contact_forces.hpp"
#include "host/sim/engine_types.hpp"
#include "host/sim/field_sums.hpp"
#include "host/sim/mixing_contents.hpp"

namespace dem::host {

// The state a step changes of some particles, as ghosts take it from their owners under MPI
// (Simulation::set_states): position, velocity, spin and, where the run has polyhedra
// (`shaped`), orientation and PAD (nezami2004 §6.3, ParticleView::pad), which decide their
// contacts and how their pairs' planes are found. A sphere's orientation enters none of its
// contacts, so a run of spheres leaves q and pad empty: a ghost's own is never read.
struct StepStates {
  std::vector<Vec3> x, v, w;
  std::vector<Quat> q;
  std::vector<real> pad;
  void resize(std::size_t n, bool shaped) {
    x.resize(n), v.resize(n), w.resize(n), q.resize(shaped ? n : 0), pad.resize(shaped ? n : 0);
  }
  // f(column) for each field held, in one fixed order (the ghost updates' columns)
  template <class F>
  void for_each_column(F&& f) {
    f(x), f(v), f(w);
    if (!q.empty()) f(q);
    if (!pad.empty()) f(pad);
  }
};

class Simulation {
 public:
  virtual ~Simulation() = default;

  virtual void step() = 0;  // advance one time step
  // Up to `steps` steps, each followed by check_health(limits), as a driver's loop runs them
  // between two outputs; stops after the first step whose check fails (its status then says why,
  // or the check found a particle outside the domain). Returns the steps taken and whether the
  // last check passed. The same bits as step() and check_health called in turn; the device
  // engine queues the steps without waiting for the device between them (cuda/run_ahead.inl).
  struct Advanced {
    std::uint64_t steps = 0;
    bool healthy = true;
  };
  virtual Advanced advance(std::uint64_t steps, const HealthLimits& limits);
  // Brings the mesh pose, the contact forces and the body loads to the current time without
  // integrating, so that every output field belongs to one time. The next step integrates with
  // these forces instead of evaluating the contacts again, so a run gives the same bits whether or
  // not (and how often) this was called; a second call before the next step does nothing.
  virtual void compute_forces() = 0;

  virtual double time() const = 0;
  virtual std::uint64_t step_count() const = 0;
  // (Not concurrently with another call on the same engine: a read may complete the particles'
  // force fields, or download them, first.)
  virtual const ParticleArrays& particles() const = 0;
  virtual std::size_t num_particles() const = 0;  // without a download
  virtual const MeshSet& meshes() const = 0;
  // The polyhedral shapes (ParticleArrays::shape indexes them; EngineSettings::shapes).
  virtual const std::vector<PolyShape>& shapes() const = 0;
  // Force and torque (about the rotation centre) the particles exert on each body, at the last
  // force evaluation: of the current time after compute_forces, else of the step before.
  virtual const std::vector<Vec3>& body_force() const = 0;
  virtual const std::vector<Vec3>& body_torque() const = 0;
  virtual const ContactStats& stats() const = 0;
  virtual const PhaseTimes& phase_times() const = 0;
  virtual const EngineStatus& status() const = 0;
  // Checks positions and velocities for NaN/inf; on failure sets status and returns false.
  bool check_finite() {
    const real inf = std::numeric_limits<real>::infinity();
    return check_health(HealthLimits{inf, Vec3{-inf, -inf, -inf}, Vec3{inf, inf, inf}, inf});
  }
  // Checks every particle against the limits (finite, not too fast, inside the domain); on failure
  // sets status to a message naming the particle with the smallest id that fails, and returns false.
  virtual bool check_health(const HealthLimits& limits) = 0;
  virtual real skin() const = 0;           // m: the mesh skin, and the pair skin when fixed
  virtual bool adaptive_skin() const = 0;  // pair skins sized per particle
  // Sphere-sphere contacts with overlap > 0, and sphere-mesh contacts, in the last force computation.
  virtual std::size_t touching_pairs() const = 0;
  virtual std::size_t mesh_contacts() const = 0;
  // The deepest contact at the last force evaluation: overlap over the smaller radius (sphere
  // pairs) or over the radius (mesh contacts); 0 when nothing touches.
  virtual double max_overlap() const = 0;
  // "host-openmp", "device-cuda" or "device-omp" (the device engine on Thrust's OpenMP system).
  virtual std::string engine_name() const = 0;
  // The processor it runs on, in words (a GPU's name, or "cpu").
  virtual std::string device_name() const = 0;
  // The state a restart needs: the particles (in the engine's current order) and their contacts.
  virtual void export_state(ParticleArrays& particles, ContactState& contacts) const = 0;
  // The touching pairs alone (pair_a, pair_b, pair_history of export_state; no mesh slots), for
  // the analyses that read contacts (the mixing indices). By default through export_state.
  virtual void export_pairs(ContactState& contacts) const {
    ParticleArrays particles;
    export_state(particles, contacts);
  }
  // With on, each evaluation of compute_forces also keeps every contact's force (a store per
  // contact and, on a device, a buffer the size of the pair list), for export_contact_forces. The
  // steps' own evaluations never keep them, so the trajectory keeps its bits either way.
  virtual void keep_contact_forces(bool on) = 0;
  // The contacts of the current time with their forces (ContactForces, any order): true when
  // compute_forces evaluated them with keep_contact_forces on; false, out empty, when this time's
  // forces were not evaluated so (before compute_forces, or after a restore whose state held its
  // forces already: a checkpoint keeps the forces per particle, not per contact).
  virtual bool export_contact_forces(ContactForces& out) const = 0;
  // Before the first step of an engine built from exported particles (same order): their contacts'
  // history and the step count. The next steps then give the same bits as the run that exported them.
  virtual void restore_state(const ContactState& contacts, std::uint64_t step) = 0;
  // Carries the cumulative statistics over to an engine that continues a run (after a removal).
  virtual void set_stats(const ContactStats& stats) = 0;
  // Replaces mesh body `body`'s motion record (its geometry fields must stay as they are): for
  // restoring a checkpoint's motions. To change how a body moves, use change_body_motion.
  virtual void set_body_motion(std::size_t body, const MeshBodyMotion& motion) = 0;
  // From the current time on, `body` moves at `velocity` (m/s) and spins at `angular_velocity`
  // (rad/s) about its centre, starting from the pose it has now (no jump). The forces already
  // evaluated at this time stay; the new motion governs the steps after it.
  void change_body_motion(std::size_t body, Vec3 velocity, Vec3 angular_velocity);
  // Between steps: removes the particles with these ids (unknown ids are ignored) with their
  // contacts, and appends `more` (every field set; new ids, never used before; no contacts yet).
  // The engine rebuilds its lists at once, carrying every remaining contact's history, so the run
  // goes on as if the removed particles had left and the new ones had appeared (the rest keep their
  // bits when nothing they touch changed). If the forces of this time were already evaluated
  // (compute_forces), the next step integrates with them: new particles feel their contacts from
  // the step after. Returns the number removed.
  virtual std::size_t edit_particles(const std::vector<std::int64_t>& remove_ids, const ParticleArrays& more) = 0;
  // Between steps: every particle's tag (ParticleArrays::tag), in the order particles() gives them
  // now. No phase reads a tag, so the trajectory keeps its bits. Throws std::invalid_argument for
  // another particle count.
  virtual void set_tags(const std::vector<std::int32_t>& tags) = 0;
  // The engine's buffers and the bytes their capacities hold (device memory for a device
  // engine), one entry a buffer, every particle field in one ("particle fields"); empty where not
  // measured.
  virtual std::vector<StateBuffer> state_buffers() const { return {}; }
  // Bytes of engine state per particle: state_buffers summed over the particles (0 where not measured).
  virtual double bytes_per_particle() const;
  // The broad phase's method and cell sizes at its last build.
  virtual BroadPhaseReport broad_phase_report() const = 0;
  // How many times the host has waited for a device engine to finish the work queued before a
  // copy or a result it needed (counted alike on CUDA and on Thrust's OpenMP system, where nothing
  // waits: tests hold the count per step); 0 for the host engine.
  virtual std::uint64_t host_waits() const { return 0; }
  // How many algorithms a device engine has run on its device (each Thrust algorithm or CUB call:
  // a kernel or a few; counted alike on CUDA and on the OpenMP system, but for the steps a run
  // ahead queued past its close, which CUDA may leave queued); 0 for the host engine.
  virtual std::uint64_t device_launches() const { return 0; }
  // How the run is spread over MPI ranks (one process: ranks 1).
  virtual RanksReport ranks_report() const { return RanksReport{}; }

  // What a rank's engine does under MPI (host/mpi/decomposition.hpp); both engines do it, and the
  // defaults throw std::logic_error naming the engine. set_ghosts: the particles with these ids
  // (ascending) are ghosts, copies of particles another rank owns kept for their contacts: their
  // mesh contacts are their owners' (both engines leave them out: a ghost's state after a step is
  // set_states' from its owner, whatever its own step made of it), as are their loads on the
  // bodies, and own_touching_pairs (the touching pairs whose particle of smaller id is no ghost)
  // and own_mesh_contacts leave them out, so that each contact counts on one rank. body_load_sums: the last evaluation's body loads as integer sums in
  // load_quantum()'s units, for the sum over the ranks. set_states: the state a step changes
  // (StepStates, one entry per index) of the particles at these indices of particles().
  virtual void set_ghosts(const std::vector<std::int64_t>& ghost_ids);
  // set_list_agreement: how the ranks agree on when to build lists. A rank's list build costs a
  // few steps' time, and the others wait for it at the next exchange; built on every rank at the
  // same step, none waits (and each build postpones the next). The engine calls `agree` once an
  // evaluation, on every rank alike, with kPairListBit and kMeshListsBit set for the lists it
  // would build, and builds the lists the result names (when a list is built does not change the
  // bits). Both engines do; by default (an engine that does not) nothing is asked.
  using ListAgreement = std::function<unsigned(unsigned)>;
  static constexpr unsigned kPairListBit = 1, kMeshListsBit = 2;
  virtual void set_list_agreement(ListAgreement) {}
  virtual std::vector<BodyLoadSum> body_load_sums() const;
  virtual LoadQuantum load_quantum() const;
  virtual std::size_t own_touching_pairs() const;
  virtual std::size_t own_mesh_contacts() const;
  virtual void set_states(const std::vector<std::int32_t>& index, const StepStates& states);
  // And each step: get_states, the states of the particles at these indices, as set_states takes
  // them (orientation and pad only where `shaped`); farther_than, whether a particle at `index[k]` lies farther
  // than `limit[k]` from its `origin[k]` (the nearest image on `period`'s axes). `version` changes
  // whenever the indices (or origins, or limits) do, so that an engine may keep them where its particles live. The
  // defaults read particles(); the device engine gathers on the device and copies back only these
  // states and one flag, not every particle.
  virtual void get_states(const std::vector<std::int32_t>& index, bool shaped, std::uint64_t version,
                          StepStates& out) const;
  virtual bool farther_than(const std::vector<std::int32_t>& index, const std::vector<Vec3>& origin,
                            const std::vector<double>& limit, const PeriodicBox& period, std::uint64_t version) const;
  // The particles' ids in their present order (particles().id; the device engine copies back these
  // alone): after a list rebuild, which may re-sort them, to find those indices again.
  virtual std::vector<std::int64_t> particle_ids() const { return particles().id; }

  // What the mixing indices need of the current state (host/sim/mixing_contents.hpp), gathered
  // where the particles live: by default from the host copies of the particles and the touching
  // pairs (export_pairs), which are the host engine's own state; the device engine gathers on the
  // device and copies back the samples' sums alone, with the same bits.
  virtual MixingContents mixing_contents(const MixingSampling& sampling);

  // The coarse-grained fields' sums (host/sim/field_sums.hpp), made where the particles live.
  // start_field_sums sets the grid and zeroes the sums; sample_fields adds one sample of the
  // current state, with the velocities at the step's time (call compute_forces first: they need
  // this time's forces) and, with the sampling's contact_stress, the contacts' forces that
  // compute_forces kept (keep_contact_forces; none kept: the sample counts no contacts);
  // take_field_sums hands over the sums since the last take and zeroes them. sample_fields throws
  // std::runtime_error naming a particle whose kernel leaves the grid. By default through the
  // host copies of the particles and contacts (HostFieldSampler), which are the host engine's own
  // state; the device engine sums on the device, with the same bits.
  virtual void start_field_sums(const FieldSampling& sampling);
  virtual void sample_fields(Vec3 gravity, real dt);
  virtual FieldSums take_field_sums();

 private:
  std::unique_ptr<HostFieldSampler> field_sampler_;
};

}  // namespace dem::host
