// The pair pass: each particle's pairs, their loads summed as integers.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// Per particle: its pairs' loads summed as integers (core/engine/fixed_loads.hpp: exact, so the
// row's order and the host's split of the pairs among threads do not matter; each touching pair
// evaluated from this side: same bits as from the other, and this side's copy of the history),
// plus its mesh sum, stored as the particle's force; then, in a second pass (partners read the
// state of the first), integration.
void DeviceEngine::pair_forces(bool and_integrate) {
  {
    Timer timer(clock_, times_.pair_contacts);
    fold_touching(-1);  // (the last pass's count, where this step's skin tests did not run)
    fold_planes();
    if (!shapes_.empty()) {
      pair_pass<true, true>();
    } else if (all_models_) {
      pair_pass<true, false>();
    } else {
      pair_pass<false, false>();
    }
    touch_pending_ = true;
    stats_.pair_candidates += static_cast<std::uint64_t>(pairs_.total / 2);
  }
  finish_particles(and_integrate);
}

// The last pass's common-plane counts (pairs of polyhedra), per particle, into the statistics.
void DeviceEngine::fold_planes() const {
  if (!planes_pending_) return;
  const PlaneCounts* c = thrust::raw_pointer_cast(plane_counts_.data());
  stats_.add_planes(reduce_index<PlaneCounts>(sb_, static_cast<std::int64_t>(n_), ReadEach<PlaneCounts>{c},
                                              PlaneCounts{}, PlaneCountsSum{}));
  planes_pending_ = false;
}

void DeviceEngine::fold_touching(std::int64_t both_sides) const {
  if (!touch_pending_) return;
  if (both_sides < 0) {
    const std::int32_t* cnt = thrust::raw_pointer_cast(pairs_.touching_count.data());
    both_sides = sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n_), [cnt] DEM_HD(std::int64_t i) { return std::int64_t(cnt[i]); });
  }
  touching_pairs_ = static_cast<std::size_t>(both_sides / 2);  // each pair counted from both sides
  stats_.pair_contacts += static_cast<std::uint64_t>(both_sides / 2);
  touch_pending_ = false;
}

template <bool kAllModels, bool kPolyhedra>
void DeviceEngine::pair_pass() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const ParticleView pv = pview();
  const ContactTable tab{raw(params_), num_materials_};
  const std::int64_t* off = raw(pairs_.offsets);
  const std::int32_t* nbr = raw(pairs_.index);
  const SplitHistory hist = history_view(pairs_.xi, pairs_.roll);
  std::uint8_t* touch = raw(pairs_.touching);
  const Vec3* mf = raw(slots_.particle_force);
  const Vec3* mt = raw(slots_.particle_torque);
  const std::int32_t* block = raw(slots_.block);
  std::int32_t* count = raw(pairs_.touching_count);
  real* deepest = nullptr;  // (spheres alone: check_health's bound)
  if (!kPolyhedra) {
    ensure(sb_, pairs_.deepest, n_);
    deepest = raw(pairs_.deepest);
  }
  pairs_.deepest_valid = !kPolyhedra;
  const real dt = settings_.dt;
  const LoadQuantum q = quantum_;
  // The contacts' forces for export_contact_forces, when compute_forces keeps them
  Vec3* kept_force = nullptr;
  Vec3* kept_point = nullptr;
  PlaneCounts* planes = nullptr;  // per particle, its pairs of polyhedra (fold_planes)
  if (kPolyhedra) {
    ensure(sb_, plane_counts_, n_);
    planes = raw(plane_counts_);
    planes_pending_ = true;
  }
  if (record_contacts_) {
    ensure(sb_, kept_force_, static_cast<std::size_t>(pairs_.total));
    kept_force = raw(kept_force_);
    if (kPolyhedra) {
      ensure(sb_, kept_point_, static_cast<std::size_t>(pairs_.total));
      kept_point = raw(kept_point_);
    }
  }
  const std::int32_t* gate = gate_;  // (a run ahead's: closed, the pass changes nothing)
  for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
    if (gate_closed(gate)) return;
    FixedLoad sum;
    std::int32_t c = 0;
    PlaneCounts plane_counts;
    real deep = 0;
    for (std::int64_t k = off[i]; k < off[i + 1]; ++k) {
      const std::int32_t j = nbr[k];
      PairLoad load;
      const bool was = touch[k] != 0;
      PolyPairLoad poly;
      const bool on = pair_contact<kAllModels, kPolyhedra>(pv, tab, static_cast<index_t>(i), j, hist, k, was, load, dt,
                                                           kPolyhedra ? &poly : nullptr);
      if (on != was) touch[k] = on ? 1 : 0;
      if (on) {
        const bool role_b = pv.id[i] > pv.id[j];
        add_pair_load(load, role_b, q, sum);
        // in contact: a pair with a polyhedron while its kept plane says so (its flag stays on
        // while the bounding spheres overlap)
        if (!kPolyhedra || pair_in_contact(pv.shape[i] >= 0 || pv.shape[j] >= 0, hist.get(k).rolling)) ++c;
        if (!kPolyhedra) deep = dem_max(deep, pair_overlap_fraction<false>(pv, static_cast<index_t>(i), j));
        if (kPolyhedra && !role_b) plane_counts.add(poly.plane);  // (each pair once: from A's side)
        if (kept_force != nullptr && !role_b) {
          kept_force[k] = load.force_on_a;
          if (kPolyhedra && kept_point != nullptr) kept_point[k] = poly.point;
        }
      }
    }
    if (kPolyhedra) planes[i] = plane_counts;
    else deepest[i] = deep;
    const std::int32_t b = block[i];
    finish_load_sum(sum, q, b >= 0 ? mf[b] : Vec3{0, 0, 0}, b >= 0 ? mt[b] : Vec3{0, 0, 0}, pv.force[i], pv.torque[i]);
    count[i] = c;
  });
}

}  // namespace dem::device::DEM_DEVICE_NS
