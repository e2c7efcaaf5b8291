// Health: the deepest overlap and the per-step checks of every particle.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

struct MaxReal {
  DEM_HD real operator()(real a, real b) const { return a < b ? b : a; }
};

// A particle's deepest overlap: its mesh slots', and its touching pairs' by its row of the full
// list. kPolyhedra: the polyhedral pairs' measure compiled in (pair_overlap_fraction), only for
// scenes with shapes: its placed vertices would otherwise swell every sphere scene's kernel.
template <bool kPolyhedra>
struct DeepestOverlap {
  ParticleView pv;
  MeshSlotsView sv;
  bool list;
  const std::int64_t* off;
  const std::int32_t* nbr;
  const std::uint8_t* touch;
  SplitHistory hist;  // (polyhedral pairs: their planes)
  DEM_HD real rows(std::int64_t i) const {  // its touching pairs'
    real worst = 0;
    if (list)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k)
        if (touch[k])
          worst = dem_max(worst, pair_overlap_fraction<kPolyhedra>(pv, static_cast<index_t>(i), nbr[k], hist.get(k).rolling));
    return worst;
  }
  DEM_HD real operator()(std::int64_t i) const { return dem_max(mesh_overlap_fraction(pv, sv, static_cast<index_t>(i)), rows(i)); }
};
// A particle's health: the per-particle checks, then its overlaps: its mesh slots, and its row of
// touching pairs unless the last pair pass's deepest overlap in it (seen, where given), with the
// particle's move and the fastest one's since (rb->tests.moving), stays within the limit.
template <bool kPolyhedra>
struct ExamineHealth {
  DeepestOverlap<kPolyhedra> deepest;
  HealthLimits limits;
  const real* seen;  // per particle, or nullptr: every row read
  const StepReadback* rb;
  real dt, r_min;
  DEM_HD HealthFinding operator()(std::int64_t i) const {
    const ParticleView& pv = deepest.pv;
    int h = particle_health(pv, static_cast<index_t>(i), limits);
    if (h == kHealthy) {
      const bool rows = seen == nullptr ||
                        !(pair_overlap_bound(seen[i], (std::sqrt(norm2(pv.v[i])) + std::sqrt(rb->tests.moving.speed2)) * dt, r_min,
                                             rb->tests.moving.reach) < limits.max_overlap);
      if (mesh_overlap_fraction(pv, deepest.sv, static_cast<index_t>(i)) > limits.max_overlap ||
          (rows && deepest.rows(i) > limits.max_overlap))
        h = kOverlap;
    }
    return h == kHealthy ? HealthFinding{kNoId, -1, kHealthy}
                         : HealthFinding{pv.id[i], static_cast<std::int32_t>(i), static_cast<std::int32_t>(h)};
  }
};

double DeviceEngine::max_overlap() const {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  if (n == 0) return 0;
  DeviceEngine& self = const_cast<DeviceEngine&>(*this);  // views of the buffers; nothing is changed
  const bool list = pairs_.have;
  const DeepestOverlap<true> deepest{self.pview(),
                                     self.slot_view(),
                                     list,
                                     list ? raw(self.pairs_.offsets) : nullptr,
                                     list ? raw(self.pairs_.index) : nullptr,
                                     list ? raw(self.pairs_.touching) : nullptr,
                                     self.history_view(self.pairs_.xi, self.pairs_.roll)};
  if (shapes_.empty())
    return reduce_index(self.sb_, n, DeepestOverlap<false>{deepest.pv, deepest.sv, list, deepest.off, deepest.nbr, deepest.touch, deepest.hist},
                        real(0), MaxReal{});
  return reduce_index(self.sb_, n, deepest, real(0), MaxReal{});
}

// Each particle's health (ExamineHealth) into found[i] on the device (launch_state_checks): where
// gate_ is set and closed (a run ahead's), the examination writes nothing, and what the reduction
// of the findings gives is not read.
template <bool kPolyhedra>
struct ExamineOpen {
  ExamineHealth<kPolyhedra> examine;
  HealthFinding* found;
  const std::int32_t* gate;
  DEM_HD void operator()(std::int64_t i) const {
    if (gate_closed(gate)) return;
    found[i] = examine(i);
  }
};

bool DeviceEngine::check_health(const HealthLimits& limits) {
  ensure(sb_, readback_, 1);
  // The examination's finding into the readback record, whose one copy also brings back the last
  // mesh pass's results where they wait. The next step's skin tests too, on the positions it will
  // start from: rebuild_if_needed takes them from this copy, so that a driver's step waits once
  // (twice before). Not where a rebuild is due. The kept mesh lists' check, where it runs, meets
  // the meshes at this time, posed apart (pose_ahead): the present pose stays the last
  // evaluation's (what meshes() returns, on both engines) until the step poses them. Not where the
  // forces of this state are already computed (compute_forces): the step integrates with them
  // without the tests.
  StateChecks want;
  want.health = &limits;
  want.skins = !rebuild_due() && !forces_current_;
  want.mesh_sums = mesh_pending_;
  MeshView next{};
  if (want.skins && mesh_check_wanted()) {
    next = pose_ahead();
    want.pose = &next;
  }
  const SkinTests run = launch_state_checks(raw(readback_), want);
  const StepReadback r = read_one(sb_, readback_, 0);
  if (want.skins) {
    if (run.touching) fold_touching(r.tests.skins.touching);
    ahead_valid_ = true;
    ahead_step_ = steps_;
    ahead_run_ = run;
    ahead_readback_ = r;
  }
  apply_mesh_readback(r);
  if (!status_.ok) return false;  // the first error stands (Engine::check_health)
  const HealthFinding f = r.found.health;
  if (f.index < 0) return true;
  const std::size_t at = static_cast<std::size_t>(f.index);
  const Vec3 x = read_one(sb_, p_.x, at), v = read_one(sb_, p_.v, at);
  status_ = host::EngineStatus{false, host::health_message(f.problem, f.id, x, v, steps_, time_, limits), f.problem,
                                 f.id};
  return false;
}

std::vector<ContactHistory> DeviceEngine::download_histories(const dvec<Vec3>& xi, const dvec<Vec3>& roll,
                                                             std::size_t n) const {
  std::vector<Vec3> t, r;
  download(sb_, xi, n, t);
  if (with_roll_) download(sb_, roll, n, r);
  std::vector<ContactHistory> h(n);
  for (std::size_t k = 0; k < n; ++k) h[k] = ContactHistory{t[k], with_roll_ ? r[k] : Vec3{0, 0, 0}};
  return h;
}

}  // namespace dem::device::DEM_DEVICE_NS
