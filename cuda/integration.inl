// Integration and the step: the forces completed, the central differences, and the order of the
// phases in a step.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// The particles' forces are complete: stored, and with and_integrate the central differences.
void DeviceEngine::finish_particles(bool and_integrate) {
  Timer timer(clock_, times_.gather);
  const ParticleView pv = pview();
  const Vec3 gravity = settings_.gravity;
  const real dt = settings_.dt;
  const std::int32_t* gate = gate_;  // (a run ahead's: closed, nothing moves)
  for_each_index(sb_, static_cast<std::int64_t>(n_), [=] DEM_HD(std::int64_t i) {
    if (gate_closed(gate)) return;
    finish_particle(pv, static_cast<index_t>(i), pv.force[i], pv.torque[i], gravity, dt, and_integrate);
  });
  host_p_fresh_ = false;
}

// The forces of t_n: boundary pose at t_n, lists, contacts, sums; with and_integrate, the central
// differences per particle (Eqs. 7-12).
void DeviceEngine::evaluate(bool and_integrate) {
  move_meshes(time_);
  rebuild_if_needed();
  mesh_forces();
  pair_forces(and_integrate);
}

void DeviceEngine::compute_forces() {
  if (forces_current_) return;  // already at this state: evaluating again would advance the history twice
  record_contacts_ = keep_contacts_;
  try {
    evaluate(false);
  } catch (...) {
    record_contacts_ = false;
    throw;
  }
  record_contacts_ = false;
  contacts_kept_ = keep_contacts_;
  forces_current_ = true;
}

void DeviceEngine::step() {
  if (forces_current_) finish_particles(true);  // the forces of t_n were computed for the output: the same bits
  else evaluate(true);
  forces_current_ = false;
  contacts_kept_ = false;
  ++steps_;
  ++stats_.steps;
  time_ = static_cast<double>(steps_) * settings_.dt;
}

}  // namespace dem::device::DEM_DEVICE_NS
