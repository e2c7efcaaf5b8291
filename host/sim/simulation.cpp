#include "host/sim/simulation.hpp"

#include "core/engine/phases.hpp"  // moved2

#include <stdexcept>
#include <string>

namespace dem::host {

void Simulation::change_body_motion(std::size_t body, Vec3 velocity, Vec3 angular_velocity) {
  if (body >= meshes().bodies.size())
    throw std::out_of_range("change_body_motion: no mesh body " + std::to_string(body) + " (the scene has " +
                            std::to_string(meshes().bodies.size()) + ")");
  MeshBodyMotion m = meshes().bodies[body];
  const BodyFrame now = body_frame(m, meshes().knots.data(), time());
  // the new law: constant, from now, from the present pose (a table, an oscillation, start and
  // stop give way to it)
  m.knot_count = 0;
  m.osc_omega = 0;
  m.osc_amplitude = Vec3{0, 0, 0};
  m.start = 0;
  m.stop = 1e300;
  m.t0 = time();
  m.displacement_t0 = now.center - m.center0;
  m.rotation_t0 = now.rotation;
  m.velocity = velocity;
  m.angular_velocity = angular_velocity;
  set_body_motion(body, m);
}

Simulation::Advanced Simulation::advance(std::uint64_t steps, const HealthLimits& limits) {
  Advanced done;
  while (done.steps < steps) {
    step();
    ++done.steps;
    if (!check_health(limits)) {
      done.healthy = false;
      break;
    }
  }
  return done;
}

MixingContents Simulation::mixing_contents(const MixingSampling& sampling) {
  ContactState contacts;
  export_pairs(contacts);
  return host::mixing_contents(particles(), contacts, sampling);
}

void Simulation::start_field_sums(const FieldSampling& sampling) {
  field_sampler_ = std::make_unique<HostFieldSampler>(sampling);
}

void Simulation::sample_fields(Vec3 gravity, real dt) {
  if (!field_sampler_) throw std::logic_error("sample_fields before start_field_sums");
  const ParticleArrays& p = particles();
  std::vector<Vec3> v(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) v[i] = velocity_at_step_time(p, i, gravity, dt);
  field_sampler_->sample(p, v, shapes());
  ContactForces contacts;  // (none kept: a restart's first sample)
  if (field_sampler_->sampling().contact_stress && export_contact_forces(contacts)) field_sampler_->sample_contacts(contacts);
}

FieldSums Simulation::take_field_sums() {
  if (!field_sampler_) throw std::logic_error("take_field_sums before start_field_sums");
  return field_sampler_->take();
}

namespace {
[[noreturn]] void not_under_mpi(const Simulation& s, const char* what) {
  throw std::logic_error(s.engine_name() + " does not run under MPI (Simulation::" + what + ")");
}
}  // namespace

double Simulation::bytes_per_particle() const {
  const std::size_t n = num_particles();
  if (n == 0) return 0;
  double bytes = 0;
  for (const StateBuffer& b : state_buffers()) bytes += b.bytes;
  return bytes / double(n);
}

void Simulation::set_ghosts(const std::vector<std::int64_t>&) { not_under_mpi(*this, "set_ghosts"); }
std::vector<BodyLoadSum> Simulation::body_load_sums() const { not_under_mpi(*this, "body_load_sums"); }
LoadQuantum Simulation::load_quantum() const { not_under_mpi(*this, "load_quantum"); }
std::size_t Simulation::own_touching_pairs() const { not_under_mpi(*this, "own_touching_pairs"); }
std::size_t Simulation::own_mesh_contacts() const { not_under_mpi(*this, "own_mesh_contacts"); }
void Simulation::get_states(const std::vector<std::int32_t>& index, bool shaped, std::uint64_t, StepStates& out) const {
  const ParticleArrays& p = particles();
  out.resize(index.size(), shaped);
  for (std::size_t k = 0; k < index.size(); ++k) {
    const std::size_t i = static_cast<std::size_t>(index[k]);
    out.x[k] = p.x[i];
    out.v[k] = p.v[i];
    out.w[k] = p.w[i];
    if (shaped) {
      out.q[k] = p.q[i];
      out.pad[k] = p.pad[i];
    }
  }
}

bool Simulation::farther_than(const std::vector<std::int32_t>& index, const std::vector<Vec3>& origin,
                              const std::vector<double>& limit, const PeriodicBox& period, std::uint64_t) const {
  const ParticleArrays& p = particles();
  const std::int64_t n = static_cast<std::int64_t>(index.size());
  int far = 0;
#pragma omp parallel for schedule(static) reduction(| : far) if (n > 4096)
  for (std::int64_t k = 0; k < n; ++k)
    far |= double(moved2(period, p.x[static_cast<std::size_t>(index[k])], origin[k])) > limit[k] * limit[k] ? 1 : 0;
  return far != 0;
}

void Simulation::set_states(const std::vector<std::int32_t>&, const StepStates&) {
  not_under_mpi(*this, "set_states");
}

}  // namespace dem::host
