// The run ahead: the steps between two rebuilds queued without the host waiting for the device.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
//
// A step that neither rebuilds the pair list nor renews the mesh lists, and whose health check
// passes, needs nothing of the host: what it decides (whether the lists still hold, whether the
// check found anything) the device can decide. advance queues such steps one after the other.
// The launches that end a step check its state (health), run the next step's skin tests and kept
// lists' checks on it, and decide on the device whether the next step may run (the lists hold: as
// rebuild_if_needed and update_mesh_candidates decide), in four launches and one thread
// (launch_step_end, launch_state_checks). Where it may not, they close a gate that every later
// pass reads first (RunAheadTally::open): the passes of that step and of every step queued after
// it change nothing. A step that fails its health check, or fills a particle's block of mesh
// slots, closes the gate after it. A quiet step is then its passes (mesh, pairs, integration),
// the next step's pose where a body moves, and those five launches. Once the queued steps are
// done, the host reads the record back (the one wait) and takes up the state where the gate
// closed: the step that found a list broken then runs as step() runs it (its rebuild or
// renewal), the step that failed its check has its check again (which names the particle).
// Every step runs on the lists, and at the step, the plain path would: the same bits, and the
// same decisions, taken where the data lies.
//
// How far ahead the host queues (EngineSettings::run_ahead): steps past the last one it has
// seen decided (RunAheadSignal::peek, which reads mapped host memory on CUDA without waiting),
// so that when the gate closes only a few steps queued behind it are left undone. On the OpenMP
// system every launch has finished when it returns: the host sees the gate close at once.
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// Steps the next run ahead may take of `most`: none where the next step needs the host (a
// rebuild due, lists to make, forces already evaluated for an output, a stopped run), or where
// its phases would need the host each step (MPI ghosts their states or other ranks agree on its
// builds, a zero skin rebuilds every step); at most up to a rebuild due by the interval.
std::uint64_t DeviceEngine::run_ahead_steps(std::uint64_t most) const {
  const bool meshes = !d_elem_body_.empty();
  if (settings_.run_ahead <= 0 || most == 0 || n_ == 0 || !status_.ok || forces_current_ || !pairs_.have ||
      needs_build_ || remove_pending_ != 0 || settings_.skin == 0 || !ghost_ids_.empty() || list_agreement_ ||
      (meshes && !mesh_lists_.have))
    return 0;
  if (settings_.neighbour_interval > 0) {
    const std::uint64_t since = steps_ - last_build_step_, every = std::uint64_t(settings_.neighbour_interval);
    if (since >= every) return 0;
    most = std::min(most, every - since);
  }
  return most;
}

host::Simulation::Advanced DeviceEngine::advance(std::uint64_t steps, const HealthLimits& limits) {
  Advanced done;
  fold_mesh();  // (a step taken without its check: a block it filled stops the run before any other)
  bool check_pending = false;  // the last step's check, left to the next run ahead (on the device)
  while (done.steps < steps) {
    const std::uint64_t ahead = run_ahead_steps(steps - done.steps);
    if (ahead > 0) {
      const RunAheadTally r = run_ahead(ahead, limits, check_pending);
      check_pending = false;
      done.steps += static_cast<std::uint64_t>(r.ran);
      if (r.stop == kRunAheadOpen) continue;
      if (r.stop == kRunAheadChecks) {  // the last step ran: its check again names what it found
        if (!check_health(limits)) {
          done.healthy = false;
          return done;
        }
        continue;
      }
      // kRunAheadSkins: the step whose lists broke, as step() runs it (with its rebuild or renewal)
    }
    step();
    ++done.steps;
    if (done.steps < steps && run_ahead_steps(steps - done.steps) > 0) {
      check_pending = true;  // (saves the check's wait: the run ahead that follows checks first)
      continue;
    }
    if (!check_health(limits)) {
      done.healthy = false;
      return done;
    }
  }
  return done;
}

// check_first: the last step's health check (and its mesh pass's sums) not yet taken: the run
// ahead takes them first, with the first step's skin tests, as the end of the step before it (its
// record's step -1).
RunAheadTally DeviceEngine::run_ahead(std::uint64_t steps, const HealthLimits& limits, bool check_first) {
  const bool pre_mesh = check_first && mesh_pending_;  // (else folded here: the steps fold their own)
  if (!pre_mesh) fold_mesh();
  ahead_valid_ = false;  // (each step's skin tests run at the end of the step before)
  ensure(sb_, readback_, 1);
  ensure(sb_, tally_, 1);
  ensure(sb_, counts_, n_ + 1);
  (void)field_scratch();  // (sized here: nothing grows among the queued steps)
  RunAheadTally* ra = raw(tally_);
  RunAheadMirror* mirror = signal_.device();
  signal_.reset();
  for_each_index(sb_, 1, [ra] DEM_HD(std::int64_t) {
    RunAheadTally t{};
    t.open = 1;
    t.stop = kRunAheadOpen;
    t.mesh = MeshStepStats{0, 0, 0, 0, 0, kNoId, 0};
    t.overflow_step = -1;
    t.health = HealthFinding{kNoId, -1, kHealthy};
    *ra = t;
  });
  const std::uint64_t steps0 = steps_, stats_steps0 = stats_.steps;
  const real travel0 = mesh_lists_.travel;
  const double mesh_time0 = mesh_time_;
  const bool meshes = !d_elem_body_.empty();
  std::uint64_t launched = 0;
  gate_ = &ra->open;
  try {
    move_meshes(time_);  // (the first step's pose: its kept mesh lists' check meets it)
    launch_step_end(ra, mirror, check_first ? &limits : nullptr, pre_mesh, planes_pending_, true);
    mesh_pending_ = false;  // (its sums in the record, where pre_mesh)
    planes_pending_ = false;  // (the last pair pass's common planes, likewise)
    const std::int64_t depth = settings_.run_ahead;
    while (launched < steps) {
      // (step `launched` was decided by the launches before; at most `depth` steps decided unseen)
      if (!settings_.run_ahead_blind && signal_.wait_for(static_cast<std::int64_t>(launched) + 1 - depth).open == 0) break;
      launch_quiet_step(ra, mirror, limits, launched + 1 < steps);
      ++launched;
    }
  } catch (...) {
    gate_ = nullptr;
    throw;
  }
  gate_ = nullptr;
  const RunAheadTally r = read_one(sb_, tally_, 0);  // the run ahead's one wait
  // The host's part of the state as the steps that ran left it.
  const std::uint64_t ran = static_cast<std::uint64_t>(r.ran);
  steps_ = steps0 + ran;
  stats_.steps = stats_steps0 + ran;
  time_ = static_cast<double>(steps_) * settings_.dt;
  stats_.pair_candidates += ran * static_cast<std::uint64_t>(pairs_.total / 2);
  stats_.pair_contacts += r.pair_contacts;
  stats_.lists_kept += r.lists_kept;
  stats_.add_planes(r.planes);
  if (r.folded) touching_pairs_ = static_cast<std::size_t>(r.last_touching / 2);
  touch_pending_ = false;  // (every pass that ran was folded by the launches that end its step)
  if (meshes) {
    mesh_lists_.travel = travel0;
    for (std::uint64_t k = 0; k < ran; ++k) mesh_lists_.travel += mesh_step_;  // (as the steps added it)
    mesh_lists_.past = -1;
    mesh_lists_.broken = -1;
    if (ran > 0) {
      stats_.mesh_lists_kept += r.mesh_lists_kept;
      mesh_lists_.check_ahead = r.last_mesh_past != 0;
    }
    if (ran > 0 || pre_mesh) {  // the passes' sums, as a mesh pass's copy brings them (a full block: its step)
      StepReadback sums{};
      sums.found.mesh = r.mesh;
      mesh_pending_ = true;
      mesh_pending_step_ = steps0 + static_cast<std::uint64_t>(r.overflow_step);  // (-1: the step before)
      mesh_pending_time_ = static_cast<double>(mesh_pending_step_) * settings_.dt;
      apply_mesh_readback(sums);
    }
  }
  // The step that closed it takes its skin tests from the record, as from a health check's copy
  // (rebuild_if_needed; its touching count is folded already).
  if (r.stop == kRunAheadSkins) {
    ahead_readback_ = StepReadback{};
    ahead_readback_.tests.skins = r.closing_skins;
    ahead_readback_.found.list_broken = r.closing_list_broken;
    ahead_readback_.found.mesh_broken = r.closing_mesh_broken;
    const bool mesh = meshes && mesh_lists_.have;
    ahead_run_ = SkinTests{mesh, false, true, mesh};
    ahead_valid_ = true;
    ahead_step_ = steps_;
  }
  // The meshes as the last step that ran posed them, or, where a step's lists broke, as that step
  // poses them (it runs next, as step() runs it). The launches that end a step pose the next
  // one's meshes (whatever the gate), but for the last one queued.
  const double pose_time = r.stop == kRunAheadSkins ? time_
                                                    : (ran > 0 ? static_cast<double>(steps_ - 1) * settings_.dt : mesh_time0);
  if (pose_time != mesh_time_) move_meshes(pose_time);
  return r;
}

// One step of a run ahead, queued, its run decided on the device by the launches before it: the
// plain step's passes, every one gated, then the launches that end it (its check, the next
// step's skin tests and decision: decide_next, where a next step is queued). The next step's
// meshes are posed first: its kept mesh lists' check meets them.
void DeviceEngine::launch_quiet_step(RunAheadTally* ra, RunAheadMirror* mirror, const HealthLimits& limits, bool decide_next) {
  const bool meshes = !d_elem_body_.empty(), polyhedra = !shapes_.empty();
  if (meshes) {
    mesh_lists_.travel += mesh_step_;  // (update_mesh_candidates's)
    Timer timer(clock_, times_.mesh_contacts);
    if (polyhedra) {
      mesh_pass<true, true>();
    } else if (all_models_) {
      mesh_pass<true, false>();
    } else {
      mesh_pass<false, false>();
    }
  }
  {
    Timer timer(clock_, times_.pair_contacts);
    if (polyhedra) {
      pair_pass<true, true>();
    } else if (all_models_) {
      pair_pass<true, false>();
    } else {
      pair_pass<false, false>();
    }
  }
  touch_pending_ = true;
  finish_particles(true);
  forces_current_ = false;
  contacts_kept_ = false;
  ++steps_;
  ++stats_.steps;
  time_ = static_cast<double>(steps_) * settings_.dt;
  if (decide_next) move_meshes(time_);
  launch_step_end(ra, mirror, &limits, meshes, polyhedra, decide_next);
  planes_pending_ = false;  // (folded by the launches that end the step)
}

// The launches that end a step of a run ahead (or, first, the step before it): the state's checks
// (launch_state_checks: its health where limits are given, the skin tests and kept lists' checks
// of the next step, the last mesh pass's sums with tally_mesh; with planes, the last pair pass's
// common planes summed: one launch more), then one thread that takes their findings into the
// record, in the order a plain step takes them: the mesh pass's sums, the pair pass's touching
// count (where the skin tests brought it) and planes, the check (a failure or a full block closes
// the gate after the step: kRunAheadChecks); then, with decide_next, whether the next step runs:
// its lists hold (take_skin_tests and update_mesh_candidates's decisions), else the gate closes
// before it (kRunAheadSkins).
void DeviceEngine::launch_step_end(RunAheadTally* ra, RunAheadMirror* mirror, const HealthLimits* limits, bool tally_mesh,
                                   bool planes, bool decide_next) {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  StepReadback* rb = raw(readback_);
  StateChecks want;
  want.health = limits;
  want.skins = true;  // (also at the last step: they fold its pass's touching pairs)
  want.kept_lists = decide_next;
  want.every_mesh_check = true;
  want.mesh_sums = tally_mesh;
  const SkinTests run = launch_state_checks(rb, want);
  if (planes) {
    reduce_index_into(sb_, n, ReadEach<PlaneCounts>{raw(plane_counts_)}, PlaneCounts{}, PlaneCountsSum{}, &rb->planes);
  }
  const bool fold = run.touching, mesh = run.mesh, checks = limits != nullptr;
  for_each_index(sb_, 1, [ra, rb, mirror, n, tally_mesh, fold, planes, checks, decide_next, mesh] DEM_HD(std::int64_t) {
    if (ra->open == 0) return;
    const StepFindings& f = rb->found;
    if (tally_mesh) {
      const MeshStepStats& s = f.mesh;
      ra->mesh.potential += s.potential;
      ra->mesh.in_contact += s.in_contact;
      ra->mesh.valid += s.valid;
      ra->mesh.compactions += s.compactions;
      ra->mesh.slots = s.slots;
      if (s.overflow_id != kNoId && ra->mesh.overflow_id == kNoId) {
        ra->mesh.overflow_id = s.overflow_id;
        ra->mesh.overflow_count = s.overflow_count;
        ra->overflow_step = ra->ran - 1;
      }
    }
    const PastSkins s = rb->tests.skins;
    if (fold) {
      ra->pair_contacts += static_cast<std::uint64_t>(s.touching / 2);
      ra->last_touching = s.touching;
      ra->folded = 1;
    }
    if (planes) ra->planes.add(rb->planes);
    if (checks) ra->health = f.health;
    if (ra->mesh.overflow_id != kNoId || ra->health.index >= 0) {
      ra->open = 0;
      ra->stop = kRunAheadChecks;
      mirror->open = 0;
      return;
    }
    if (!decide_next) return;
    const bool pairs_hold = s.past == 0 || (few_past_skins(s.past, n) && f.list_broken == 0);
    const bool mesh_holds = !mesh || s.mesh_past == 0 || (few_past_skins(s.mesh_past, n) && f.mesh_broken == 0);
    if (!pairs_hold || !mesh_holds) {
      ra->open = 0;
      ra->stop = kRunAheadSkins;
      ra->closing_skins = s;
      ra->closing_list_broken = f.list_broken;
      ra->closing_mesh_broken = f.mesh_broken;
      mirror->open = 0;
      return;
    }
    if (s.past != 0) ++ra->lists_kept;
    if (mesh && s.mesh_past != 0) ++ra->mesh_lists_kept;
    ra->last_mesh_past = mesh ? s.mesh_past : 0;
    ++ra->ran;
    mirror->ran = ra->ran;
  });
}

}  // namespace dem::device::DEM_DEVICE_NS
