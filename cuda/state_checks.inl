// The checks of a state between two steps: its health, the next step's skin tests and the kept
// lists' checks, in four launches and two reductions, their results left on the device.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// Entry k of the findings' reduction: particle k's health finding and kept lists' findings, and
// the record of the mesh pass's block k (each where given and k in range).
struct ReadStepFindings {
  const HealthFinding* health;  // per particle (launch_state_checks's examination), or nullptr
  const std::int64_t* lists;    // per particle, KeptListChecks's bits, or nullptr
  const MeshStepStats* mesh;    // per block, or nullptr
  std::int64_t n, blocks;
  static DEM_HD StepFindings none() {
    return StepFindings{HealthFinding{kNoId, -1, kHealthy}, MeshStepStats{0, 0, 0, 0, 0, kNoId, 0}, 0, 0};
  }
  DEM_HD StepFindings operator()(std::int64_t k) const {
    StepFindings f = none();
    if (health != nullptr && k < n) f.health = health[k];
    if (lists != nullptr && k < n) {
      f.list_broken = static_cast<std::int32_t>(lists[k] & 1);
      f.mesh_broken = static_cast<std::int32_t>((lists[k] >> 1) & 1);
    }
    if (mesh != nullptr && k < blocks) f.mesh = mesh[k];
    return f;
  }
};

// The checks `want` names of the present state, into rb on the device (no wait):
// 1. one reduction over the particles (rb->tests): the skin tests for the next step (the counts
//    past the pair and mesh skins, the largest excess over a skin, the last pair pass's touching
//    pairs where they wait to be folded) and the fastest speed the health check's bound reads;
// 2. the health examination, each particle's finding into the field scratch;
// 3. the kept lists' checks (KeptListChecks), which read (1) on the device and find nothing at
//    once where no particle is past its skin; the pair list's wherever it can be kept, the mesh
//    lists' where the last step had particles past their mesh skins (they stay past until the
//    lists are renewed: mesh_check_wanted) or everywhere (want.every_mesh_check: a run ahead's
//    steps, which decide on the device);
// 4. one reduction over the particles and the mesh pass's blocks (rb->found): the first finding of
//    (2), those of (3), and the last mesh pass's sums where they wait (want.mesh_sums: its blocks'
//    records, summed again as mesh_forces summed them; else rb->found.mesh holds nothing).
// The mesh skins are tested with the travel the next mesh pass will test them with, the kept
// mesh lists meet the meshes as want.pose poses them (nullptr: as they are now). What ran, for
// take_skin_tests.
DeviceEngine::SkinTests DeviceEngine::launch_state_checks(StepReadback* rb, const StateChecks& want) {
  if (mesh_pending_ && !want.mesh_sums)  // (the findings' reduction writes rb->found.mesh)
    throw std::logic_error("launch_state_checks: the last mesh pass's sums wait in the record; they must be summed again");
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const real travel = mesh_lists_.travel + mesh_step_;
  SkinTests run;
  if (want.skins) {
    run.mesh = mesh_lists_.have && !d_elem_body_.empty();
    run.touching = touch_pending_;
    run.can_keep = want.kept_lists && settings_.skin != 0 && pairs_.have;
    run.mesh_check = want.kept_lists && run.mesh && settings_.skin != 0 && (mesh_lists_.check_ahead || want.every_mesh_check);
  }
  const bool health = want.health != nullptr;
  const bool bound = health && shapes_.empty() && pairs_.have && pairs_.deepest_valid;  // (spheres: the rows' bound)
  // 1.
  if (want.skins || bound) {
    const bool skins = want.skins, mesh = run.mesh;
    const Vec3* x = raw(p_.x);
    const Vec3* v = raw(p_.v);
    const Vec3* x0 = skins ? raw(pairs_.x_at_build) : nullptr;
    const real* s2 = skins ? raw(pairs_.half_skin2) : nullptr;
    const PeriodicBox pb = settings_.periodic;
    const MeshSkinUsed mesh_used{x, mesh ? raw(mesh_lists_.x_at_build) : nullptr, mesh ? raw(mesh_lists_.skin) : nullptr, pb, travel};
    const std::int32_t* touching = run.touching ? raw(pairs_.touching_count) : nullptr;
    const StateTests none{PastSkins{0, 0, 0, 0}, SpeedAndReach{0, 0}};
    reduce_index_into(sb_, n, [=] DEM_HD(std::int64_t i) {
      StateTests t = none;
      if (skins) {
        const real d2 = moved2(pb, x[i], x0[i]);
        t.skins = PastSkins{d2 > s2[i] ? 1 : 0, half_skin_excess(d2, s2[i]), mesh && mesh_used(i) ? 1 : 0,
                            touching != nullptr ? std::int64_t(touching[i]) : std::int64_t(0)};
      }
      if (bound) t.moving = SpeedAndReach{norm2(v[i]), dem_max(dem_abs(x[i].x), dem_max(dem_abs(x[i].y), dem_abs(x[i].z)))};
      return t;
    }, none, StateTestsOp{}, &rb->tests);
  }
  // 2. (as the kept lists' checks: the examination in a for_each, its findings into scratch, the
  // re-sorts' field scratch, 32 bytes a particle; then the light reduction of 4)
  HealthFinding* found = nullptr;
  if (health) {
    static_assert(alignof(HealthFinding) <= alignof(std::uint64_t) && std::is_trivially_copyable_v<HealthFinding> &&
                  sizeof(HealthFinding) <= kScratchWords * sizeof(std::uint64_t));
    found = reinterpret_cast<HealthFinding*>(field_scratch());
    const bool list = pairs_.have;
    const DeepestOverlap<true> deepest{pview(),
                                       slot_view(),
                                       list,
                                       list ? raw(pairs_.offsets) : nullptr,
                                       list ? raw(pairs_.index) : nullptr,
                                       list ? raw(pairs_.touching) : nullptr,
                                       history_view(pairs_.xi, pairs_.roll)};
    const real dt = settings_.dt;
    if (shapes_.empty()) {
      const ExamineHealth<false> examine{
          DeepestOverlap<false>{deepest.pv, deepest.sv, list, deepest.off, deepest.nbr, deepest.touch, deepest.hist},
          *want.health, bound ? raw(pairs_.deepest) : nullptr, rb, dt, r_min_};
      for_each_index(sb_, n, ExamineOpen<false>{examine, found, gate_});
    } else {
      for_each_index(sb_, n, ExamineOpen<true>{ExamineHealth<true>{deepest, *want.health, nullptr, rb, dt, r_min_}, found, gate_});
    }
  }
  // 3.
  std::int64_t* lists = nullptr;
  if (run.can_keep || run.mesh_check) {
    ensure(sb_, counts_, n_ + 1);  // (scratch: its other uses write it before they read it)
    lists = raw(counts_);
    const KeptListChecks checks{kept_pair_list_check(rb), kept_mesh_lists_check(rb, travel, want.pose), run.can_keep,
                                run.mesh_check, gate_};
    for_each_index(sb_, n, StoreEach<KeptListChecks, std::int64_t>{checks, lists});
  }
  // 4.
  if (health || lists != nullptr || want.mesh_sums) {
    const std::int64_t blocks = want.mesh_sums ? slots_.blocks : 0;
    const ReadStepFindings read{found, lists, want.mesh_sums ? raw(slots_.stats) : nullptr, n, blocks};
    reduce_index_into(sb_, std::max(n, blocks), read, ReadStepFindings::none(), StepFindingsOp{}, &rb->found);
  }
  return run;
}

}  // namespace dem::device::DEM_DEVICE_NS
