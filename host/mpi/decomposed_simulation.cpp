#include "host/mpi/decomposed_simulation.hpp"

#include <cstdio>
#include <cstring>
#include <exception>

#include "host/sim/errors.hpp"

namespace dem::mpi {
namespace {

enum Op : int {
  kFinish = 0,
  kConstruct,
  kStep,
  kComputeForces,
  kGather,
  kStats,
  kPhaseTimes,
  kCheckHealth,
  kTouching,
  kMeshContacts,
  kMaxOverlap,
  kExportState,
  kKeepContacts,
  kContactForces,
  kRestore,
  kBodyMotion,
  kEdit,
  kTags,
  kReport,
  kCheckHealthAgain,  // check_health with the limits of the last one (they are not sent again)
  kAdvance,
};

bool g_finished = false;  // rank 0 has let the other ranks go

// A failure inside a collective call leaves the other ranks waiting in it: every rank stops.
[[noreturn]] void abort_all(const Comm& comm, const char* what) {
  std::fprintf(stderr, "dem: error on rank %d: %s (stopping every rank)\n", comm.rank(), what);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 4);
  std::abort();
}

template <class F>
auto collective(const Comm& comm, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {
    abort_all(comm, e.what());
  }
}

int next_op() {
  int op = kFinish;
  MPI_Bcast(&op, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return op;
}

}  // namespace

DecomposedSimulation::DecomposedSimulation(const Comm& comm, host::ParticleArrays particles, EngineInputs inputs,
                                           EngineMaker make_engine)
    : comm_(comm) {
  call(kConstruct);
  d_ = collective(comm_, [&] {
    return std::make_unique<Decomposition>(comm_, std::move(particles), std::move(inputs), std::move(make_engine));
  });
}

DecomposedSimulation::~DecomposedSimulation() {
  call(kFinish);
  g_finished = true;
}

void DecomposedSimulation::call(int op) const {
  int v = op;
  MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

void DecomposedSimulation::step() {
  gathered_valid_ = false;
  call(kStep);
  collective(comm_, [&] { d_->step(); });
}

host::Simulation::Advanced DecomposedSimulation::advance(std::uint64_t steps, const HealthLimits& limits) {
  gathered_valid_ = false;
  call(kAdvance);
  last_limits_ = limits;  // (every rank's check_health_again checks these now)
  limits_sent_ = true;
  return collective(comm_, [&] { return d_->advance(steps, limits); });
}

void DecomposedSimulation::compute_forces() {
  gathered_valid_ = false;  // (the force fields)
  call(kComputeForces);
  collective(comm_, [&] { d_->compute_forces(); });
}

const host::ParticleArrays& DecomposedSimulation::particles() const {
  if (!gathered_valid_) {
    call(kGather);
    gathered_ = collective(comm_, [&] { return d_->gather_particles(); });
    gathered_valid_ = true;
  }
  return gathered_;
}

const host::ContactStats& DecomposedSimulation::stats() const {
  call(kStats);
  stats_ = collective(comm_, [&] { return d_->stats(); });
  const std::uint64_t steps = stats_.steps;
  stats_.add(carried_);
  stats_.steps = steps;  // (a step count, not a sum)
  return stats_;
}

const host::PhaseTimes& DecomposedSimulation::phase_times() const {
  call(kPhaseTimes);
  times_ = collective(comm_, [&] { return d_->phase_times(); });
  return times_;
}

bool DecomposedSimulation::check_health(const HealthLimits& limits) {
  // The limits are the run's and rarely change: sent only when they do (two broadcasts a step fewer).
  if (limits_sent_ && std::memcmp(&limits, &last_limits_, sizeof(HealthLimits)) == 0) {
    call(kCheckHealthAgain);
    return collective(comm_, [&] { return d_->check_health_again(); });
  }
  call(kCheckHealth);
  last_limits_ = limits;
  limits_sent_ = true;
  return collective(comm_, [&] { return d_->check_health(limits); });
}

std::size_t DecomposedSimulation::touching_pairs() const {
  call(kTouching);
  return collective(comm_, [&] { return d_->touching_pairs(); });
}

std::size_t DecomposedSimulation::mesh_contacts() const {
  call(kMeshContacts);
  return collective(comm_, [&] { return d_->mesh_contacts(); });
}

double DecomposedSimulation::max_overlap() const {
  call(kMaxOverlap);
  return collective(comm_, [&] { return d_->max_overlap(); });
}

void DecomposedSimulation::export_state(host::ParticleArrays& particles, host::ContactState& contacts) const {
  call(kExportState);
  collective(comm_, [&] { d_->export_state(particles, contacts); });
}

void DecomposedSimulation::keep_contact_forces(bool on) {
  call(kKeepContacts);
  collective(comm_, [&] { d_->keep_contact_forces(on); });
}

bool DecomposedSimulation::export_contact_forces(host::ContactForces& out) const {
  call(kContactForces);
  return collective(comm_, [&] { return d_->export_contact_forces(out); });
}

void DecomposedSimulation::restore_state(const host::ContactState& contacts, std::uint64_t step) {
  gathered_valid_ = false;
  call(kRestore);
  collective(comm_, [&] { d_->restore_state(contacts, step); });
}

void DecomposedSimulation::set_stats(const host::ContactStats& stats) {
  carried_ = stats;  // (rank 0's: the ranks' own counts are added to it)
}

void DecomposedSimulation::set_body_motion(std::size_t body, const MeshBodyMotion& motion) {
  call(kBodyMotion);
  collective(comm_, [&] { d_->set_body_motion(body, motion); });
}

std::size_t DecomposedSimulation::edit_particles(const std::vector<std::int64_t>& remove_ids,
                                                 const host::ParticleArrays& more) {
  gathered_valid_ = false;
  call(kEdit);
  return collective(comm_, [&] { return d_->edit_particles(remove_ids, more); });
}

void DecomposedSimulation::set_tags(const std::vector<std::int32_t>& tags) {
  const host::ParticleArrays& p = particles();  // (the order the tags are given in)
  if (tags.size() != p.size()) throw std::invalid_argument("set_tags: the tags are for another particle count");
  std::vector<std::int64_t> ids = p.id;
  gathered_.tag = tags;
  call(kTags);
  collective(comm_, [&] { d_->set_tags(ids, tags); });
}

host::RanksReport DecomposedSimulation::ranks_report() const {
  call(kReport);
  return collective(comm_, [&] { return d_->report(); });
}

void finish_serving(const Comm& comm) {
  if (g_finished || comm.rank() != 0) return;
  int op = kFinish;
  MPI_Bcast(&op, 1, MPI_INT, 0, MPI_COMM_WORLD);
  g_finished = true;
}

int serve(const Comm& comm, const EngineMaker& make_engine) {
  std::unique_ptr<Decomposition> d;
  const auto need = [&]() -> Decomposition& {
    if (!d) throw std::logic_error("rank 0 named a call before the decomposition was made");
    return *d;
  };
  for (;;) {
    const int op = next_op();
    if (op == kFinish) return 0;
    collective(comm, [&] {
      host::ParticleArrays p;
      host::ContactState c;
      host::ContactForces f;
      switch (op) {
        case kConstruct: d = std::make_unique<Decomposition>(comm, host::ParticleArrays{}, EngineInputs{}, make_engine); break;
        case kStep: need().step(); break;
        case kComputeForces: need().compute_forces(); break;
        case kGather: need().gather_particles(); break;
        case kStats: need().stats(); break;
        case kPhaseTimes: need().phase_times(); break;
        case kCheckHealth: need().check_health(HealthLimits{}); break;
        case kCheckHealthAgain: need().check_health_again(); break;
        case kAdvance: need().advance(0, HealthLimits{}); break;
        case kTouching: need().touching_pairs(); break;
        case kMeshContacts: need().mesh_contacts(); break;
        case kMaxOverlap: need().max_overlap(); break;
        case kExportState: need().export_state(p, c); break;
        case kKeepContacts: need().keep_contact_forces(false); break;
        case kContactForces: need().export_contact_forces(f); break;
        case kRestore: need().restore_state(c, 0); break;
        case kBodyMotion: need().set_body_motion(0, MeshBodyMotion{}); break;
        case kEdit: need().edit_particles({}, p); break;
        case kTags: need().set_tags({}, {}); break;
        case kReport: need().report(); break;
        default: throw std::logic_error("rank 0 named an unknown call");
      }
    });
  }
}

}  // namespace dem::mpi
