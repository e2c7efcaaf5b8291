// The pair list: the broad phase's choice, the skin tests' decisions, the kept list's check, the
// half skins and the rebuild (cell keys, sort, full neighbour rows, history carried across).
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;


// The broad phase the settings ask for. The HGrid's levels come from the radii grown by the
// smallest half skin (here, where the host keeps no copy of the reaches; the host engine uses the
// reaches of each rebuild): chosen at construction and after edits, with the top level stretched
// to the largest reach at each rebuild.
void DeviceEngine::choose_broad_phase() {
  const host::BroadPhaseSpec& spec = settings_.broad_phase;
  if (spec.method == host::BroadPhaseMethod::Bsp)
    throw std::invalid_argument("broad_phase.method: bsp runs on the host engine only (--device cpu); the device "
                                "engine has grid, hgrid and auto");
  std::vector<real> radius;
  std::vector<Vec3> pos;
  download(sb_, p_.radius, n_, radius);
  download(sb_, p_.x, n_, pos);
  const double volume = host::search_volume(pos, r_max_);
  // search radii: the radius plus the fixed half skin, or at least the smallest adaptive one
  for (real& r : radius) r = settings_.skin >= 0 ? r + real(0.5) * settings_.skin : r * (1 + kMinHalfSkin);
  use_hgrid_ = spec.method == host::BroadPhaseMethod::HGrid ||
               (spec.method == host::BroadPhaseMethod::Auto && host::auto_wants_hgrid(radius, volume));
  report_ = host::BroadPhaseReport{use_hgrid_ ? "hgrid" : "grid", {}, ""};
  if (!use_hgrid_) return;
  if (!spec.cell_sizes.empty()) {
    hgrid_.count = static_cast<int>(std::min<std::size_t>(spec.cell_sizes.size(), kMaxHGridLevels));
    for (int h = 0; h < hgrid_.count; ++h) hgrid_.cell[h] = real(spec.cell_sizes[h]);
  } else {
    hgrid_ = host::choose_hgrid_levels(radius, volume, spec.levels);
  }
}

// Whether this state's skin tests would decide anything: not where a rebuild is due anyway.
bool DeviceEngine::rebuild_due() const {
  return needs_build_ ||
         (settings_.neighbour_interval > 0 && steps_ - last_build_step_ >= std::uint64_t(settings_.neighbour_interval));
}

// The decisions from the copy of rb that launch_state_checks filled with the skin tests (the
// counts of touching pairs are the caller's: folded where the copy comes back).
void DeviceEngine::take_skin_tests(const SkinTests& run, const StepReadback& r) {
  const PastSkins& p = r.tests.skins;
  const bool holds = run.can_keep && few_past_skins(p.past, static_cast<std::int64_t>(n_)) && r.found.list_broken == 0;
  needs_build_ = p.past != 0 && !holds;
  if (p.past != 0 && !needs_build_) ++stats_.lists_kept;
  if (run.mesh && !needs_build_) {  // (a rebuild re-sorts: new mesh lists)
    mesh_lists_.past = p.mesh_past;
    mesh_lists_.broken = run.mesh_check ? r.found.mesh_broken : -1;
  }
}

void DeviceEngine::rebuild_if_needed() {
  mesh_lists_.past = -1;
  mesh_lists_.broken = -1;
  mesh_lists_.decided = false;
  // The driver's health check ran this state's skin tests in its copy (check_health), unless
  // something changed since.
  const bool ahead = ahead_valid_ && ahead_step_ == steps_;
  ahead_valid_ = false;
  if (!rebuild_due()) {
    if (ahead) {
      take_skin_tests(ahead_run_, ahead_readback_);
    } else {
      // A pair left out of the list was farther apart than reach_a + reach_b: while no particle
      // has moved its half skin, no such pair can touch. Past that, the kept list's check
      // (kept_pair_list_check) checks the few that have (as on the host engine). The tests, then
      // one copy back: one wait.
      ensure(sb_, readback_, 1);
      StateChecks want;
      want.skins = true;
      want.mesh_sums = mesh_pending_;
      const SkinTests run = launch_state_checks(raw(readback_), want);
      const StepReadback r = read_one(sb_, readback_, 0);
      if (run.touching) fold_touching(r.tests.skins.touching);
      apply_mesh_readback(r);  // (the last mesh pass's, where it waits: before a re-sort moves its slots)
      take_skin_tests(run, r);
    }
  } else {
    needs_build_ = true;  // (due by the interval, or already)
  }
  if (list_agreement_) agree_on_lists();
  if (needs_build_) {
    Timer timer(clock_, times_.broad_phase);
    rebuild();
  }
}

// Under MPI (Simulation::set_list_agreement): the mesh lists' renewal decided here, ahead of the
// mesh pass (a pair-list build re-sorts the particles, which renews them), then both builds
// agreed with the other ranks.
void DeviceEngine::agree_on_lists() {
  const bool meshes = !d_elem_body_.empty() && n_ > 0;  // (as mesh_forces)
  bool mesh = false;
  if (meshes && needs_build_) {
    mesh_lists_.travel += mesh_step_;
    mesh = true;
  } else if (meshes) {
    mesh = mesh_lists_due();
  }
  const unsigned agreed = list_agreement_((needs_build_ ? kPairListBit : 0u) | (mesh ? kMeshListsBit : 0u));
  needs_build_ = (agreed & kPairListBit) != 0;
  mesh_lists_.decided = meshes;
  mesh_lists_.renew = (agreed & kMeshListsBit) != 0;
}

// The kept pair list's check (KeptPairListCheck) over the last build's cells, reading the skin
// tests in rb on the device. It runs on every step where the skin tests run, also where it will
// find nothing (a short pass, and no wait: the host learns the counts only with its result; on
// the OpenMP system too, so that the tests run what CUDA runs).
KeptPairListCheck DeviceEngine::kept_pair_list_check(const StepReadback* rb) {
  const std::int32_t* start = raw(cell_start_);
  const Vec3* x0 = raw(pairs_.x_at_build);
  const PeriodicBox pb = settings_.periodic;
  const bool h_on = use_hgrid_;
  return KeptPairListCheck{rb,
                           static_cast<std::int64_t>(n_),
                           pview(),
                           x0,
                           raw(pairs_.half_skin2),
                           pb,
                           built_max_reach_,
                           CellNeighbours{built_keys_, x0, nullptr, start, built_on_curve_ ? raw(cell_end_) : start + 1, pb},
                           h_on,
                           HGridView{built_levels_, pb, start, nullptr, x0, nullptr, h_on ? raw(hlevel_) : nullptr,
                                     h_on ? raw(hcell_) : nullptr},
                           raw(pairs_.offsets),
                           raw(pairs_.index),
                           // (flags only of this list's order)
                           ghost_flag_.size() >= n_ && !ghost_ids_.empty() ? raw(ghost_flag_) : nullptr};
}

// Each particle's half skin, as on the host engine (core/engine/phases.hpp): fixed, or what it
// can travel in kSkinSteps steps at the largest speed around it (own, partners', moving bodies').
void DeviceEngine::update_half_skins() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  ensure(sb_, pairs_.reach, n_);
  ensure(sb_, pairs_.half_skin2, n_);
  real* reach = raw(pairs_.reach);
  real* s2 = raw(pairs_.half_skin2);
  const real* radius = raw(p_.radius);
  if (settings_.skin >= 0) {
    const real skin = skin_;
    for_each_index(sb_, n, [reach, s2, radius, skin] DEM_HD(std::int64_t i) { fixed_pair_skin(radius[i], skin, reach[i], s2[i]); });
    return;
  }
  ensure(sb_, pairs_.speed, n_);
  real* speed = raw(pairs_.speed);
  const Vec3* v = raw(p_.v);
  const Vec3* x = raw(p_.x);
  for_each_index(sb_, n, [speed, v] DEM_HD(std::int64_t i) { speed[i] = norm(v[i]); });
  const bool list = pairs_.have, cands = mesh_lists_.have;
  const std::int64_t* off = list ? raw(pairs_.offsets) : nullptr;
  const std::int32_t* nbr = list ? raw(pairs_.index) : nullptr;
  const std::int64_t* coff = cands ? raw(mesh_lists_.offsets) : nullptr;
  const std::int32_t* cand = cands ? raw(mesh_lists_.elements) : nullptr;
  const index_t* elem_body = raw(d_elem_body_);
  const MeshBodyMotion* bodies = raw(d_bodies_);
  const BodyFrame* frames = d_frames_.empty() ? nullptr : raw(d_frames_);
  const real dt = settings_.dt, r_max = r_max_;
  for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
    real s = speed[i];
    if (list)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k) s = dem_max(s, speed[nbr[k]]);
    if (cands) s = speed_near_candidates(s, cand, coff[i], coff[i + 1], elem_body, bodies, frames, x[i], radius[i]);
    adaptive_pair_skin(s, radius[i], dt, r_max, reach[i], s2[i]);
  });
}

// Re-sorts every per-particle array by `order` (new index i takes old order[i]); the mesh slots
// stay where they are: each particle takes its count and its block along. The arrays go a few at
// a time through the field scratch (a second copy of each would cost their whole size again):
// packed into groups whose columns fit the scratch's (n + 1) kScratchWords words (largest first,
// each into the first group with room), each group gathered in one launch and copied back in
// another: in double precision 16 launches for the 20 arrays, where one array at a time took 40.
void DeviceEngine::resort(const dvec<std::int32_t>& order) {
  pairs_.deepest_valid = false;  // (per particle, in the order before)
  std::vector<ResortColumn> arrays;
  const auto add = [&](auto& a) {
    using T = typename std::decay_t<decltype(a)>::value_type;
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::uint64_t) &&
                  sizeof(T) <= kScratchWords * sizeof(std::uint64_t));
    resize(sb_, a, n_);  // (at most shrinks, the entries past a removal's: no reallocation)
    arrays.push_back(ResortColumn{reinterpret_cast<char*>(raw(a)), nullptr, static_cast<std::int32_t>(sizeof(T))});
  };
#define DEM_GATHER_FIELD(T, name) add(p_.name);
  DEM_PARTICLE_FIELDS(DEM_GATHER_FIELD)
#undef DEM_GATHER_FIELD
  add(pairs_.reach);
  add(pairs_.half_skin2);
  add(slots_.count);
  add(slots_.block);
  std::stable_sort(arrays.begin(), arrays.end(), [](const ResortColumn& a, const ResortColumn& b) { return a.size > b.size; });
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const std::int64_t room = (n + 1) * static_cast<std::int64_t>(kScratchWords * sizeof(std::uint64_t));
  const auto column_bytes = [n](std::int32_t size) { return (n * size + 7) / 8 * 8; };  // (each column aligned to 8 bytes)
  std::vector<ResortColumns> groups;
  std::vector<std::int64_t> used;  // bytes of the scratch each group's columns take
  for (const ResortColumn& a : arrays) {
    std::size_t g = 0;
    while (g < groups.size() && (groups[g].count == kResortColumns || used[g] + column_bytes(a.size) > room)) ++g;
    if (g == groups.size()) {
      groups.push_back(ResortColumns{thrust::raw_pointer_cast(order.data()), {}, 0});
      used.push_back(0);
    }
    groups[g].c[groups[g].count++] = a;
    used[g] += column_bytes(a.size);
  }
  char* scratch = reinterpret_cast<char*>(field_scratch());
  for (ResortColumns& g : groups) {
    std::int64_t at = 0;
    for (int k = 0; k < g.count; ++k) {
      g.c[k].column = scratch + at;
      at += column_bytes(g.c[k].size);
    }
    for_each_index(sb_, n, g);
    g.order = nullptr;
    for_each_index(sb_, n, g);
  }
  mesh_lists_.have = false;  // candidate lists are per index: renewed at the next step
}

// Rebuild: skins, cell keys, a stable sort by key (every rebuild re-sorts: the same permutation on
// CUDA's radix sort and the OpenMP merge sort), cell ranges, then the full neighbour list by
// count -> scan -> fill, rows sorted by partner id, and the history carried over by a merge of
// each particle's new row with its old one.
void DeviceEngine::rebuild() {
  std::int64_t n = static_cast<std::int64_t>(n_);
  update_half_skins();
  // 1. The grid: cells of twice the largest reach, so every partner lies in the 27 cells around.
  // (The host engine's uniform grid sizes its cells from the 99th-percentile reach and lets the
  // few wider particles search farther: its half list takes a wide particle's pairs from that
  // particle's own search. Here each particle gathers its own row, so a partner must lie in the
  // 27 cells around it; wide size distributions take the HGrid.)
  const Vec3* x = raw(p_.x);
  const real* reach = raw(pairs_.reach);
  const BoxAndReach extent = reduce_index(sb_, n, [x, reach] DEM_HD(std::int64_t i) {
    return BoxAndReach{Box{x[i], x[i]}, reach[i]};
  }, BoxAndReach{empty_box(), real(0)}, BoxAndReachUnion{});
  const real max_reach = extent.reach;
  const PeriodicBox& pb = settings_.periodic;
  GridKeys gk = size_particle_grid(extent.box.lo, extent.box.hi, pb, real(2) * max_reach, n, false);
  Vec3 covered_lo = extent.box.lo, covered_hi = extent.box.hi;
  cover_periods(pb, covered_lo, covered_hi, 0);
  HGridLevels hg = hgrid_;
  if (use_hgrid_) {  // the levels' cells tile the periods; the top level holds the largest reach
    hg.cell[hg.count - 1] = std::max(hg.cell[hg.count - 1], real(2) * max_reach);
    hg.origin = gk.grid.origin;
    for (int h = 0; h < hg.count; ++h)
      hg.wrap[h] = periodic_cells(pb, hg.cell[h]);
    hgrid_set_keys(hg, pb, covered_hi, n);
    gk.grid.hash_size = hg.hash_size;
    for (int h = 0; h < hg.count; ++h) {  // particles per level (empty levels are not searched)
      const HGridLevels lv = hg;
      hg.population[h] = static_cast<std::int32_t>(sum_index<std::int64_t>(sb_, n, [lv, reach, h] DEM_HD(std::int64_t i) {
        return hgrid_level(lv, reach[i]) == h ? std::int64_t(1) : std::int64_t(0);
      }));
    }
    report_.method = "hgrid";
    report_.cell_sizes.assign(hg.cell, hg.cell + hg.count);
  } else {
    report_.method = "grid";
    report_.cell_sizes = {double(gk.grid.cell_size)};
  }
  built_keys_ = gk;
  built_levels_ = hg;
  built_max_reach_ = max_reach;
  // 2. Keys and the stable sort; every per-particle array follows. The bounded grid orders its
  // particles in rows of cells or, where asked (BroadPhaseSpec::device_curve_order), along the
  // Hilbert curve of their cells (core/grid/hilbert.hpp: a partner's state lies near in memory in
  // all three directions, where in rows the layer above lies a layer of the box away); the HGrid
  // and the hashed grid by their keys (a bucket's cells must be consecutive).
  ensure(sb_, cell_keys_, n_);
  std::uint32_t* keys = raw(cell_keys_);
  const std::uint8_t* gone = remove_pending_ ? raw(remove_flag_) : nullptr;
  const bool h_on = use_hgrid_;
  const bool curve = settings_.broad_phase.device_curve_order && !h_on && gk.bounded && curve_fits(gk.grid);
  resize(sb_, order_, n_);
  launch(n, sb_, [&](auto pol) { thrust::sequence(pol, order_.begin(), order_.end()); });
  if (curve && curve_fits_32_bits(gk.grid)) {  // (half the radix sort's passes of 64-bit keys)
    for_each_index(sb_, n, [keys, x, gk, gone] DEM_HD(std::int64_t i) {
      keys[i] = gone && gone[i] ? 0xFFFFFFFFu : static_cast<std::uint32_t>(cell_curve_key(home_cell(x[i], gk.grid), gk.grid));
    });
    launch(n, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, cell_keys_.begin(), cell_keys_.begin() + n, order_.begin()); });
  } else if (curve) {  // (the curve's keys in the scratch, which the re-sort then takes for its own)
    std::uint64_t* ck = field_scratch();
    for_each_index(sb_, n, [ck, x, gk, gone] DEM_HD(std::int64_t i) {
      ck[i] = gone && gone[i] ? ~std::uint64_t(0) : cell_curve_key(home_cell(x[i], gk.grid), gk.grid);  // removed: last
    });
    launch(n, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, field_scratch_.begin(), field_scratch_.begin() + n, order_.begin()); });
  } else {
    for_each_index(sb_, n, [keys, x, gk, gone, h_on, hg, pb, reach] DEM_HD(std::int64_t i) {
      if (gone && gone[i]) keys[i] = 0xFFFFFFFFu;  // removed: sorted last
      else if (h_on) {
        const int h = hgrid_level(hg, reach[i]);
        keys[i] = hgrid_key(hg, hgrid_cell(hg, pb, h, x[i]), h);
      } else keys[i] = gk.key(home_cell(x[i], gk.grid));
    });
    launch(n, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, cell_keys_.begin(), cell_keys_.begin() + n, order_.begin()); });
  }
  resort(order_);
  if (pairs_.have) {  // the ids by the index order before the re-sort, for the carry (step 5b)
    std::int64_t* old_id = reinterpret_cast<std::int64_t*>(field_scratch());
    const std::int64_t* pid = raw(p_.id);
    const std::int32_t* ord = raw(order_);
    for_each_index(sb_, n, [old_id, pid, ord] DEM_HD(std::int64_t i) { old_id[ord[i]] = pid[i]; });
  }
  if (remove_pending_) {  // the removed particles are the last ones now: cut them off
    n_ -= remove_pending_;
    n = static_cast<std::int64_t>(n_);
    remove_pending_ = 0;
  }
  x = raw(p_.x);
  // Under MPI the ghosts in the new order: their pairs with each other are left out.
  const std::uint8_t* ghost = nullptr;
  if (ghost_ids_.empty()) {
    ghost_flag_.clear();
  } else {
    ensure(sb_, ghost_flag_, n_);
    std::uint8_t* flag = raw(ghost_flag_);
    const std::int64_t* pid = raw(p_.id);
    const std::int64_t* g = raw(ghost_ids_);
    const std::int64_t* g_end = g + ghost_ids_.size();
    for_each_index(sb_, n, [flag, pid, g, g_end] DEM_HD(std::int64_t i) { flag[i] = sorted_contains(g, g_end, pid[i]) ? 1 : 0; });
    ghost = flag;
  }
  // 3. Cell ranges: cell c holds sorted particles [begin[c], end[c]). In key order (the HGrid and
  // hashed grid) the ends are the next cell's beginnings (lower bounds of the keys); along the
  // curve each cell's first and last particle mark its range, the other cells' stay empty.
  ensure(sb_, cell_start_, static_cast<std::size_t>(gk.grid.hash_size) + 1);  // (grown, never shrunk)
  const std::int32_t* cell_end = raw(cell_start_) + 1;
  if (curve) {
    ensure(sb_, cell_end_, static_cast<std::size_t>(gk.grid.hash_size));
    const std::int64_t cells = gk.grid.hash_size;
    launch(cells, sb_, [&](auto pol) { thrust::fill_n(pol, cell_start_.begin(), cells, 0); });
    launch(cells, sb_, [&](auto pol) { thrust::fill_n(pol, cell_end_.begin(), cells, 0); });
    std::int32_t* begin = raw(cell_start_);
    std::int32_t* end = raw(cell_end_);
    for_each_index(sb_, n, [keys, x, gk] DEM_HD(std::int64_t i) { keys[i] = gk.key(home_cell(x[i], gk.grid)); });
    for_each_index(sb_, n, [keys, begin, end, n] DEM_HD(std::int64_t i) {
      const std::uint32_t k = keys[i];
      if (i == 0 || keys[i - 1] != k) begin[k] = static_cast<std::int32_t>(i);
      if (i + 1 == n || keys[i + 1] != k) end[k] = static_cast<std::int32_t>(i + 1);
    });
  } else {
    launch(n, sb_, [&](auto pol) { thrust::lower_bound(pol, cell_keys_.begin(), cell_keys_.begin() + n,
                        thrust::counting_iterator<std::uint32_t>(0),
                        thrust::counting_iterator<std::uint32_t>(gk.grid.hash_size + 1), cell_start_.begin()); });
  }
  built_on_curve_ = curve;
  report_.order = curve ? "curve" : (h_on || !gk.bounded ? "keys" : "rows");
  if (curve) cell_end = raw(cell_end_);
  // 4a. Neighbour rows: count (then scan, fill, sort each row by partner id).
  reach = raw(pairs_.reach);
  const std::int64_t* id = raw(p_.id);
  const std::int32_t* start = raw(cell_start_);
  const CellNeighbours visit{gk, x, reach, start, cell_end, settings_.periodic};
  HGridView hv{hg, pb, start, nullptr, x, reach, nullptr, nullptr};  // in entry order: no indirection
  if (h_on) {  // levels and home cells in the sorted order
    ensure(sb_, hlevel_, n_);
    ensure(sb_, hcell_, n_);
    std::uint8_t* lev = raw(hlevel_);
    Int3* cel = raw(hcell_);
    for_each_index(sb_, n, [lev, cel, x, reach, hg, pb] DEM_HD(std::int64_t i) {
      const int h = hgrid_level(hg, reach[i]);
      lev[i] = static_cast<std::uint8_t>(h);
      cel[i] = hgrid_cell(hg, pb, h, x[i]);
    });
    hv.el = lev;
    hv.ec = cel;
  }
  std::int64_t* counts = raw(counts_);
  for_each_index(sb_, n, [visit, hv, h_on, counts, ghost] DEM_HD(std::int64_t i) {
    std::int64_t c = 0;
    const bool gi = ghost != nullptr && ghost[i];
    auto one = [&c, gi, ghost](std::int32_t j) {
      if (!(gi && ghost[j])) ++c;
    };
    if (h_on) hv.visit(i, hv.g.count - 1, one);
    else visit(i, one);
    counts[i] = c;
  });
  launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, counts_.begin() + n, 1, 0); });
  // 5a. The carry's rows: of each pair, the entry in the row of its smaller id (both rows hold the
  // same history and flag: the pair pass evaluates a pair alike from either side), where it is
  // not blank (history_is_blank); counted and scanned now, copied once the count is back (with
  // the new list's, in one copy). old_id: the ids by the index order before the re-sort,
  // scattered into the scratch by step 2 and kept there until the merge (5c).
  const std::int64_t* old_id = reinterpret_cast<const std::int64_t*>(raw(field_scratch_));
  const bool carry = pairs_.have;
  const std::int64_t rows_old = carry ? static_cast<std::int64_t>(pairs_.offsets.size()) - 1 : 0;
  if (carry) {
    ensure(sb_, pairs_.carry_offsets, static_cast<std::size_t>(rows_old) + 1);
    std::int64_t* ccount = raw(pairs_.carry_offsets);
    const std::int64_t* ooff = raw(pairs_.offsets);
    const std::int32_t* onbr = raw(pairs_.index);
    const SplitHistory ohist = history_view(pairs_.xi, pairs_.roll);
    const std::uint8_t* otouch = raw(pairs_.touching);
    for_each_index(sb_, rows_old, [=] DEM_HD(std::int64_t k) {
      std::int64_t c = 0;
      for (std::int64_t e = ooff[k]; e < ooff[k + 1]; ++e)
        c += old_id[onbr[e]] > old_id[k] && !history_is_blank(ohist, otouch, e) ? 1 : 0;
      ccount[k] = c;
    });
    launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, pairs_.carry_offsets.begin() + rows_old, 1, std::int64_t(0)); });
    launch(rows_old, sb_, [&](auto pol) {
      thrust::exclusive_scan(pol, pairs_.carry_offsets.begin(), pairs_.carry_offsets.begin() + rows_old + 1,
                             pairs_.carry_offsets.begin());
    });
  }
  // 4b. The new list's rows. (The old offsets stay for the carry's copy.)
  pairs_.offsets.swap(pairs_.old_offsets);
  resize(sb_, pairs_.offsets, n_ + 1);
  launch(n, sb_, [&](auto pol) { thrust::exclusive_scan(pol, counts_.begin(), counts_.begin() + n + 1, pairs_.offsets.begin()); });
  ensure(sb_, pairs_.totals, 2);
  {
    std::int64_t* totals = raw(pairs_.totals);
    const std::int64_t* off = raw(pairs_.offsets);
    const std::int64_t* coff = carry ? raw(pairs_.carry_offsets) : nullptr;
    for_each_index(sb_, 1, [=] DEM_HD(std::int64_t) {
      totals[0] = off[n];
      totals[1] = coff != nullptr ? coff[rows_old] : 0;
    });
  }
  std::vector<std::int64_t> totals;
  download(sb_, pairs_.totals, 2, totals);
  const std::int64_t total = totals[0], kept = totals[1];
  pairs_.total = total;
  // 5b. The carry's copy, before the new list takes the old one's arrays: each kept entry with its
  // partner's index before the re-sort (whose id old_id holds).
  if (carry) {
    ensure(sb_, pairs_.carry_index, static_cast<std::size_t>(kept));
    ensure(sb_, pairs_.carry_xi, static_cast<std::size_t>(kept));
    if (with_roll_) ensure(sb_, pairs_.carry_roll, static_cast<std::size_t>(kept));
    ensure(sb_, pairs_.carry_touching, static_cast<std::size_t>(kept));
    const std::int64_t* ooff = raw(pairs_.old_offsets);
    const std::int64_t* coff = raw(pairs_.carry_offsets);
    const std::int32_t* onbr = raw(pairs_.index);
    const SplitHistory ohist = history_view(pairs_.xi, pairs_.roll);
    const std::uint8_t* otouch = raw(pairs_.touching);
    std::int32_t* cidx = raw(pairs_.carry_index);
    const SplitHistory chist = history_view(pairs_.carry_xi, pairs_.carry_roll);
    std::uint8_t* ctouch = raw(pairs_.carry_touching);
    for_each_index(sb_, rows_old, [=] DEM_HD(std::int64_t k) {
      std::int64_t w = coff[k];
      for (std::int64_t e = ooff[k]; e < ooff[k + 1]; ++e) {
        if (!(old_id[onbr[e]] > old_id[k]) || history_is_blank(ohist, otouch, e)) continue;
        cidx[w] = onbr[e];
        chist.set(w, ohist.get(e));
        ctouch[w] = otouch[e];
        ++w;
      }
    });
  }
  // 4c. The new rows, each sorted by partner id. (grown, never shrunk: a buffer that grows is a
  // wait; the first `total` entries are the list)
  ensure(sb_, pairs_.index, static_cast<std::size_t>(total));
  ensure(sb_, pairs_.xi, static_cast<std::size_t>(total));
  if (with_roll_) ensure(sb_, pairs_.roll, static_cast<std::size_t>(total));
  ensure(sb_, pairs_.touching, static_cast<std::size_t>(total));
  std::int64_t* off = raw(pairs_.offsets);
  std::int32_t* nbr = raw(pairs_.index);
  for_each_index(sb_, n, [visit, hv, h_on, off, nbr, id, ghost] DEM_HD(std::int64_t i) {
    const std::int64_t b = off[i];
    std::int64_t w = b;
    const bool gi = ghost != nullptr && ghost[i];
    auto put = [&w, nbr, gi, ghost](std::int32_t j) {
      if (gi && ghost[j]) return;
      nbr[w] = j;
      ++w;
    };
    if (h_on) hv.visit(i, hv.g.count - 1, put);
    else visit(i, put);
    for (std::int64_t s = b + 1; s < w; ++s) {  // insertion sort by partner id: rows are short
      const std::int32_t js = nbr[s];
      const std::int64_t ks = id[js];
      std::int64_t m = s;
      for (; m > b && id[nbr[m - 1]] > ks; --m) nbr[m] = nbr[m - 1];
      nbr[m] = js;
    }
  });
  // 5c. History carry, by partner id: the new row of i, where its partners' ids are above i's,
  // merged with the carry's row of the particle it was (order_[i]); each entry below, found in the
  // partner's carry row (a binary search: the rows are sorted by partner id).
  const SplitHistory hist = history_view(pairs_.xi, pairs_.roll);
  std::uint8_t* touch = raw(pairs_.touching);
  if (carry) {
    const std::int32_t* ord = raw(order_);
    const std::int64_t* coff = raw(pairs_.carry_offsets);
    const std::int32_t* cidx = raw(pairs_.carry_index);
    const SplitHistory chist = history_view(pairs_.carry_xi, pairs_.carry_roll);
    const std::uint8_t* ctouch = raw(pairs_.carry_touching);
    for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
      const std::int64_t me = id[i], b = off[i], e = off[i + 1];
      std::int64_t above = b;  // the first entry whose partner's id is above i's
      for (; above < e && id[nbr[above]] < me; ++above) {
        const std::int32_t row = ord[nbr[above]];
        const std::int64_t lo = first_not_below(GatheredKeys<std::int64_t>{cidx, old_id}, coff[row], coff[row + 1], me);
        const bool found = lo < coff[row + 1] && old_id[cidx[lo]] == me;
        hist.set(above, found ? chist.get(lo) : ContactHistory{{0, 0, 0}, {0, 0, 0}});
        touch[above] = found ? ctouch[lo] : std::uint8_t(0);
      }
      const std::int64_t o = coff[ord[i]], o_end = coff[ord[i] + 1];
      carry_history_row(GatheredKeys<std::int64_t>{nbr + above, id}, e - above, GatheredKeys<std::int64_t>{cidx + o, old_id},
                        chist.from(o), ctouch + o, o_end - o, hist.from(above), touch + above);
    });
  } else {
    launch(total, sb_, [&](auto pol) { thrust::fill_n(pol, pairs_.xi.begin(), total, Vec3{0, 0, 0}); });
    if (with_roll_) launch(total, sb_, [&](auto pol) { thrust::fill_n(pol, pairs_.roll.begin(), total, Vec3{0, 0, 0}); });
    launch(total, sb_, [&](auto pol) { thrust::fill_n(pol, pairs_.touching.begin(), total, std::uint8_t(0)); });
  }
  pairs_.have = true;
  resize(sb_, pairs_.x_at_build, n_);
  launch(n, sb_, [&](auto pol) { thrust::copy(pol, p_.x.begin(), p_.x.begin() + n, pairs_.x_at_build.begin()); });
  last_build_step_ = steps_;
  needs_build_ = false;
  ++stats_.broad_phase_builds;
}

}  // namespace dem::device::DEM_DEVICE_NS
