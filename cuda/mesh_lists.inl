// The mesh lists: slot blocks, the kept lists' check and the per-particle mesh candidates
// (santasusana2016 Sect. 3.1): bins over the elements in the intersection domain of particles and
// meshes, renewed together when some particle's displacement plus the mesh travel since the last
// renewal exceeds the mesh skin (as on the host engine).
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// Slot blocks for the particles with candidate elements, numbered in particle order (count, scan,
// fill), each particle's used slots copied from its old block; a particle without candidates can
// touch no element before the next lists, so its contacts end here (the next mesh pass would end
// them anyway, with the same result). The host engine's assign_mesh_blocks, on the device. The
// used slots that stay (`kept`, counted by the caller) go through the spare arrays, packed: a few
// slots a particle near a wall, where spare blocks were as large as the slots themselves.
void DeviceEngine::assign_mesh_blocks(std::int64_t blocks, std::int64_t kept) {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const std::int64_t* coff = raw(mesh_lists_.offsets);
  std::int64_t* first = raw(counts_);  // n + 1: 1 for a particle with candidates, then its block
  for_each_index(sb_, n, [coff, first] DEM_HD(std::int64_t i) { first[i] = coff[i + 1] > coff[i] ? 1 : 0; });
  launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, counts_.begin() + n, 1, 0); });
  launch(n, sb_, [&](auto pol) { thrust::exclusive_scan(pol, counts_.begin(), counts_.begin() + n + 1, counts_.begin()); });
  // where each particle's kept slots lie in the spare arrays (the scratch, as int64: n + 1)
  std::uint8_t* count = raw(slots_.count);
  std::int64_t* packed = reinterpret_cast<std::int64_t*>(field_scratch());
  for_each_index(sb_, n, [coff, count, packed] DEM_HD(std::int64_t i) { packed[i] = coff[i + 1] > coff[i] ? count[i] : 0; });
  launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, thrust::device_pointer_cast(packed + n), 1, std::int64_t(0)); });
  launch(n, sb_, [&](auto pol) {
    thrust::exclusive_scan(pol, thrust::device_pointer_cast(packed), thrust::device_pointer_cast(packed + n + 1),
                           thrust::device_pointer_cast(packed));
  });
  const std::size_t slots = static_cast<std::size_t>(blocks) * kMaxMeshContacts;
  ensure(sb_, slots_.spare_entity, static_cast<std::size_t>(kept));
  ensure(sb_, slots_.spare_normal, static_cast<std::size_t>(kept));
  ensure(sb_, slots_.spare_xi, static_cast<std::size_t>(kept));
  if (with_roll_) ensure(sb_, slots_.spare_roll, static_cast<std::size_t>(kept));
  std::int32_t* block = raw(slots_.block);
  {  // 1. the kept slots out of their old blocks
    const EntityContact* e0 = raw(slots_.entity);
    const Vec3* n0 = raw(slots_.normal);
    const SplitHistory h0 = history_view(slots_.xi, slots_.roll);
    EntityContact* e1 = raw(slots_.spare_entity);
    Vec3* n1 = raw(slots_.spare_normal);
    const SplitHistory h1 = history_view(slots_.spare_xi, slots_.spare_roll);
    for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
      const int used = static_cast<int>(packed[i + 1] - packed[i]);  // (a particle with used slots has a block)
      if (used > 0) move_mesh_slots(used, static_cast<std::int64_t>(block[i]) * kMaxMeshContacts, packed[i], e0, n0, h0, e1, n1, h1);
    });
  }
  ensure(sb_, slots_.entity, slots);
  ensure(sb_, slots_.normal, slots);
  ensure(sb_, slots_.xi, slots);
  if (with_roll_) ensure(sb_, slots_.roll, slots);
  ensure(sb_, slots_.force, slots);  // written by the mesh pass before they are read
  ensure(sb_, slots_.torque, slots);
  ensure(sb_, slots_.block_particle, static_cast<std::size_t>(blocks));
  ensure(sb_, slots_.particle_force, static_cast<std::size_t>(blocks));
  ensure(sb_, slots_.particle_torque, static_cast<std::size_t>(blocks));
  ensure(sb_, slots_.stats, static_cast<std::size_t>(blocks));
  {  // 2. the new blocks, and the kept slots into them
    std::int32_t* bp = raw(slots_.block_particle);
    const EntityContact* e1 = raw(slots_.spare_entity);
    const Vec3* n1 = raw(slots_.spare_normal);
    const SplitHistory h1 = history_view(slots_.spare_xi, slots_.spare_roll);
    EntityContact* e0 = raw(slots_.entity);
    Vec3* n0 = raw(slots_.normal);
    const SplitHistory h0 = history_view(slots_.xi, slots_.roll);
    for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
      if (coff[i + 1] == coff[i]) {
        count[i] = 0;
        block[i] = -1;
        return;
      }
      block[i] = static_cast<std::int32_t>(first[i]);
      bp[first[i]] = static_cast<std::int32_t>(i);
      move_mesh_slots(count[i], packed[i], first[i] * kMaxMeshContacts, e1, n1, h1, e0, n0, h0);
    });
  }
  slots_.blocks = blocks;
}

// The kept mesh lists' check (KeptMeshListsCheck) over the last renewal's bins, the mesh skins
// grown by `travel`, meeting the meshes as `at` poses them (nullptr: as they are now). With rb, it
// reads the step's count past the mesh skins there on the device.
KeptMeshListsCheck DeviceEngine::kept_mesh_lists_check(const StepReadback* rb, real travel, const MeshView* at) {
  const real* skin = raw(mesh_lists_.skin);
  const PeriodicBox pb = settings_.periodic;
  const MeshView mv = at != nullptr ? *at : mesh_view();
  const bool bins = mesh_lists_.bins_used;
  return KeptMeshListsCheck{rb,
                            static_cast<std::int64_t>(n_),
                            MeshSkinUsed{raw(p_.x), raw(mesh_lists_.x_at_build), skin, pb, travel},
                            mv,
                            mesh_lists_.held,
                            bins,
                            MeshCandidateQuery{mv, mesh_lists_.domain, mesh_lists_.bins, bins ? raw(mesh_lists_.bin_start) : nullptr,
                                               bins ? raw(mesh_lists_.bin_elems) : nullptr, raw(mesh_lists_.elem_lo),
                                               raw(mesh_lists_.elem_hi), raw(p_.x), raw(p_.radius), skin, pb},
                            raw(mesh_lists_.offsets),
                            raw(mesh_lists_.elements),
                            travel};
}

// The kept mesh lists' check where no skin tests ran it (update_mesh_candidates, with the count
// past the mesh skins known): its own copy back.
bool DeviceEngine::mesh_lists_hold(std::int64_t past) {
  if (settings_.skin == 0 || !few_past_skins(past, static_cast<std::int64_t>(n_))) return false;
  ensure(sb_, readback_, 1);
  ensure(sb_, counts_, n_ + 1);  // (scratch: its other uses write it before they read it)
  StepReadback* rb = raw(readback_);
  any_index_into(sb_, static_cast<std::int64_t>(n_), kept_mesh_lists_check(nullptr, mesh_lists_.travel, nullptr), raw(counts_),
                 &rb->found.mesh_broken);
  return read_one(sb_, readback_, 0).found.mesh_broken == 0;
}

// Whether the lists must be renewed for this step's mesh pass (once a step: the lists' travel
// grows by the step's mesh motion).
bool DeviceEngine::mesh_lists_due() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  mesh_lists_.travel += mesh_step_;
  const Vec3* x = raw(p_.x);
  bool renew = !mesh_lists_.have;
  if (!renew) {
    const MeshSkinUsed used{x, raw(mesh_lists_.x_at_build), raw(mesh_lists_.skin), settings_.periodic, mesh_lists_.travel};
    const std::int64_t past = mesh_lists_.past >= 0 ? mesh_lists_.past : sum_index<std::int64_t>(sb_, n, [used] DEM_HD(std::int64_t i) {
      return used(i) ? std::int64_t(1) : std::int64_t(0);
    });
    const int broken = mesh_lists_.broken;
    mesh_lists_.past = -1;
    mesh_lists_.broken = -1;
    mesh_lists_.check_ahead = past != 0;
    const bool holds = past == 0 || (broken >= 0 ? few_past_skins(past, n) && broken == 0 : mesh_lists_hold(past));
    renew = !holds;
    if (past != 0 && holds) ++stats_.mesh_lists_kept;
  }
  return renew;
}

void DeviceEngine::update_mesh_candidates() {
  const bool renew = mesh_lists_.decided ? mesh_lists_.renew || !mesh_lists_.have : mesh_lists_due();
  mesh_lists_.decided = false;
  if (!renew) return;
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const Vec3* x = raw(p_.x);
  // Under MPI a ghost's mesh contacts are its owner's: it gets no list (the host engine's
  // update_mesh_candidates). The flags are those of the last pair-list build, which set_ghosts asks for.
  const std::uint8_t* ghost = !ghost_ids_.empty() && ghost_flag_.size() >= n_ ? raw(ghost_flag_) : nullptr;
  Timer timer(clock_, times_.mesh_bins);
  // Each particle's mesh skin: fixed, or adaptive (core particle_mesh_skin, as on the host engine).
  ensure(sb_, mesh_lists_.skin, n_);
  {
    real* skin = raw(mesh_lists_.skin);
    const Vec3* v = raw(p_.v);
    const real* radius = raw(p_.radius);
    const bool adaptive = settings_.skin < 0;
    const real dt = settings_.dt, step = mesh_step_, skin_max = mesh_skin_max(skin_, adaptive);
    for_each_index(sb_, n, [skin, v, radius, adaptive, dt, step, skin_max] DEM_HD(std::int64_t i) {
      skin[i] = particle_mesh_skin(adaptive, v[i], radius[i], dt, step, skin_max);
    });
  }
  const MeshView mv = mesh_view();
  const std::int64_t ne = mv.num_elements;
  const real q = r_max_ + mesh_skin_max(skin_, settings_.skin < 0);  // the largest query radius
  // (a) the intersection domain of particles (grown by the query radius) and meshes.
  ensure(sb_, mesh_lists_.elem_lo, static_cast<std::size_t>(ne));
  ensure(sb_, mesh_lists_.elem_hi, static_cast<std::size_t>(ne));
  Vec3* elo = raw(mesh_lists_.elem_lo);
  Vec3* ehi = raw(mesh_lists_.elem_hi);
  for_each_index(sb_, ne, [mv, elo, ehi] DEM_HD(std::int64_t e) {
    const Polygon p = mv.polygon(static_cast<index_t>(e));
    Vec3 lo = p.v[0], hi = p.v[0];
    for (int k = 1; k < p.n; ++k) {
      lo = Vec3{dem_min(lo.x, p.v[k].x), dem_min(lo.y, p.v[k].y), dem_min(lo.z, p.v[k].z)};
      hi = Vec3{dem_max(hi.x, p.v[k].x), dem_max(hi.y, p.v[k].y), dem_max(hi.z, p.v[k].z)};
    }
    elo[e] = lo;
    ehi[e] = hi;
  });
  // the particles' box and the elements' in one reduction (indices n on: the elements)
  const Box none = empty_box();
  const TwoBoxes boxes = reduce_index(sb_, n + ne, [x, elo, ehi, n, none] DEM_HD(std::int64_t k) {
    return k < n ? TwoBoxes{Box{x[k], x[k]}, none} : TwoBoxes{none, Box{elo[k - n], ehi[k - n]}};
  }, TwoBoxes{none, none}, TwoBoxesUnion{});
  Box pbox = boxes.a;
  const Box mbox = boxes.b;
  const PeriodicBox& pb = settings_.periodic;
  cover_periods(pb, pbox.lo, pbox.hi, q);  // the searches near a face also run from the images across it
  // The bins hold the elements a skin farther around the particles than the lists need, for
  // mesh_lists_hold's searches from particles past their skins.
  const real reach = q + mesh_skin_max(skin_, settings_.skin < 0);
  const Vec3 grow{reach, reach, reach};
  pbox.lo -= grow;
  pbox.hi += grow;
  mesh_lists_.held = pbox;
  const Box dom{Vec3{std::max(pbox.lo.x, mbox.lo.x), std::max(pbox.lo.y, mbox.lo.y), std::max(pbox.lo.z, mbox.lo.z)},
                Vec3{std::min(pbox.hi.x, mbox.hi.x), std::min(pbox.hi.y, mbox.hi.y), std::min(pbox.hi.z, mbox.hi.z)}};
  const bool empty_domain = ne == 0 || n == 0 || dom.lo.x > dom.hi.x || dom.lo.y > dom.hi.y || dom.lo.z > dom.hi.z;
  auto in_domain = [dom, elo, ehi] DEM_HD(std::int64_t e) {
    return elo[e].x <= dom.hi.x && ehi[e].x >= dom.lo.x && elo[e].y <= dom.hi.y && ehi[e].y >= dom.lo.y &&
           elo[e].z <= dom.hi.z && ehi[e].z >= dom.lo.z;
  };
  // An element's bins: those its box clipped to the domain overlaps (c0 to c1), and a bound on
  // their number from its size alone (the bin size's test below).
  auto clipped_bins = [dom, elo, ehi] DEM_HD(std::int64_t e, const CellGrid& grid, Int3& c0, Int3& c1) {
    const Vec3 lo{dem_max(elo[e].x, dom.lo.x), dem_max(elo[e].y, dom.lo.y), dem_max(elo[e].z, dom.lo.z)};
    const Vec3 hi{dem_min(ehi[e].x, dom.hi.x), dem_min(ehi[e].y, dom.hi.y), dem_min(ehi[e].z, dom.hi.z)};
    c0 = cell_coords(lo, grid);
    c1 = cell_coords(hi, grid);
  };
  auto bins_bound = [elo, ehi] DEM_HD(std::int64_t e, real cell_size) { return element_bins_bound(ehi[e] - elo[e], cell_size); };
  // (c) the bins' size (core mesh_bins_fit): the elements in the domain, the bound and the bins at
  // the first size come back in one copy; a larger size (rare) takes its own bound.
  CellGrid g{};
  g.origin = dom.lo;
  g.cell_size = first_mesh_bin_size(q);
  const CellGrid g0 = g;
  const DomainCounts first =
      empty_domain ? DomainCounts{0, 0, 0}
                   : reduce_index(sb_, ne, [in_domain, clipped_bins, bins_bound, g0] DEM_HD(std::int64_t e) {
                       if (!in_domain(e)) return DomainCounts{0, 0, 0};
                       Int3 c0, c1;
                       clipped_bins(e, g0, c0, c1);
                       return DomainCounts{1, bins_bound(e, g0.cell_size),
                                           std::int64_t(c1.x - c0.x + 1) * (c1.y - c0.y + 1) * (c1.z - c0.z + 1)};
                     }, DomainCounts{0, 0, 0}, DomainCountsSum{});
  const std::int64_t in_dom = first.elements;
  std::int64_t blocks = 0, kept = 0;  // the particles with candidates and their used slots (none where no element is in the domain)
  resize(sb_, mesh_lists_.offsets, n_ + 1);
  mesh_lists_.bins_used = in_dom != 0;
  if (in_dom == 0) {
    launch(n, sb_, [&](auto pol) { thrust::fill(pol, mesh_lists_.offsets.begin(), mesh_lists_.offsets.end(), std::int64_t(0)); });
    // (mesh_lists_.elements keeps its size: the offsets say every list is empty)
  } else {
    for (bool first_size = true;; first_size = false) {
      const real size = g.cell_size;
      const std::int64_t entries = first_size ? first.bound : sum_index<std::int64_t>(sb_, ne, [in_domain, bins_bound, size] DEM_HD(std::int64_t e) {
        return in_domain(e) ? bins_bound(e, size) : std::int64_t(0);
      });
      if (mesh_bins_fit(dom.lo, dom.hi, size, entries, in_dom)) break;
      g.cell_size *= 2;
    }
    g = mesh_bin_grid(dom.lo, dom.hi, g.cell_size).grid;
    // (d) every element into each bin its clipped box overlaps: count, scan, fill, stable sort.
    ensure(sb_, mesh_lists_.elem_entries, static_cast<std::size_t>(ne) + 1);
    std::int64_t* ecount = raw(mesh_lists_.elem_entries);
    auto bin_range = [clipped_bins, g] DEM_HD(std::int64_t e, Int3& c0, Int3& c1) { clipped_bins(e, g, c0, c1); };
    for_each_index(sb_, ne, [in_domain, bin_range, ecount] DEM_HD(std::int64_t e) {
      if (!in_domain(e)) {
        ecount[e] = 0;
        return;
      }
      Int3 c0, c1;
      bin_range(e, c0, c1);
      ecount[e] = std::int64_t(c1.x - c0.x + 1) * (c1.y - c0.y + 1) * (c1.z - c0.z + 1);
    });
    launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, mesh_lists_.elem_entries.begin() + ne, 1, 0); });
    launch(ne, sb_, [&](auto pol) { thrust::exclusive_scan(pol, mesh_lists_.elem_entries.begin(), mesh_lists_.elem_entries.begin() + ne + 1, mesh_lists_.elem_entries.begin()); });
    const std::int64_t entries = g.cell_size == g0.cell_size ? first.bins  // (the same bins: known)
                                                             : read_one(sb_, mesh_lists_.elem_entries, static_cast<std::size_t>(ne));
    ensure(sb_, mesh_lists_.bin_keys, static_cast<std::size_t>(entries));  // (the first `entries` used)
    ensure(sb_, mesh_lists_.bin_elems, static_cast<std::size_t>(entries));
    std::uint32_t* bkey = raw(mesh_lists_.bin_keys);
    std::int32_t* belem = raw(mesh_lists_.bin_elems);
    for_each_index(sb_, ne, [in_domain, bin_range, ecount, bkey, belem, g] DEM_HD(std::int64_t e) {
      if (!in_domain(e)) return;
      Int3 c0, c1;
      bin_range(e, c0, c1);
      std::int64_t w = ecount[e];
      for (int z = c0.z; z <= c1.z; ++z)
        for (int y = c0.y; y <= c1.y; ++y)
          for (int xx = c0.x; xx <= c1.x; ++xx) {
            bkey[w] = cell_key(Int3{xx, y, z}, g);
            belem[w] = static_cast<std::int32_t>(e);
            ++w;
          }
    });
    const auto keys_end = mesh_lists_.bin_keys.begin() + entries;
    launch(entries, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, mesh_lists_.bin_keys.begin(), keys_end, mesh_lists_.bin_elems.begin()); });
    ensure(sb_, mesh_lists_.bin_start, static_cast<std::size_t>(g.hash_size) + 1);
    launch(entries, sb_, [&](auto pol) { thrust::lower_bound(pol, mesh_lists_.bin_keys.begin(), keys_end, thrust::counting_iterator<std::uint32_t>(0),
                        thrust::counting_iterator<std::uint32_t>(g.hash_size + 1), mesh_lists_.bin_start.begin()); });
    // (e-f) per particle: the bins its box (radius + skin) overlaps; each element once (from the
    // first bin of the overlap of the two boxes); kept if the sphere grown by the skin passes the
    // Fast Intersection Test.
    const MeshCandidateQuery query{mv, dom, g, raw(mesh_lists_.bin_start), raw(mesh_lists_.bin_elems), elo, ehi, x, raw(p_.radius), raw(mesh_lists_.skin), pb};
    mesh_lists_.domain = dom;
    mesh_lists_.bins = g;
    std::int64_t* counts = raw(counts_);
    for_each_index(sb_, n, [query, counts, ghost] DEM_HD(std::int64_t i) {
      std::int64_t k = 0;
      if (ghost == nullptr || !ghost[i]) query(i, [&k](std::int32_t) { ++k; });
      counts[i] = k;
    });
    launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, counts_.begin() + n, 1, 0); });
    launch(n, sb_, [&](auto pol) { thrust::exclusive_scan(pol, counts_.begin(), counts_.begin() + n + 1, mesh_lists_.offsets.begin()); });
    // the lists' total, the particles with a list and their used slots (assign_mesh_blocks'
    // blocks and kept slots) in one copy
    const std::uint8_t* used = raw(slots_.count);
    const ListSizes sizes = reduce_index(sb_, n, [counts, used] DEM_HD(std::int64_t i) {
      return counts[i] > 0 ? ListSizes{counts[i], 1, used[i]} : ListSizes{0, 0, 0};
    }, ListSizes{0, 0, 0}, ListSizesSum{});
    blocks = sizes.blocks;
    kept = sizes.slots;
    ensure(sb_, mesh_lists_.elements, static_cast<std::size_t>(sizes.candidates));
    const std::int64_t* coff = raw(mesh_lists_.offsets);
    std::int32_t* cand = raw(mesh_lists_.elements);
    for_each_index(sb_, n, [query, coff, cand] DEM_HD(std::int64_t i) {
      std::int64_t w = coff[i];
      if (coff[i + 1] == w) return;  // (no candidates, or a ghost)
      query(i, [&w, cand](std::int32_t e) { cand[w++] = e; });
      for (std::int64_t s = coff[i] + 1; s < w; ++s)  // by element (H2's arrival order, as on the host)
        for (std::int64_t m = s; m > coff[i] && cand[m - 1] > cand[m]; --m) {
          const std::int32_t tmp = cand[m - 1];
          cand[m - 1] = cand[m];
          cand[m] = tmp;
        }
    });
  }
  assign_mesh_blocks(blocks, kept);
  if (ghost != nullptr) {  // a ghost's empty list is never due: no skin to use up
    real* skin = raw(mesh_lists_.skin);
    for_each_index(sb_, n, [skin, ghost] DEM_HD(std::int64_t i) {
      if (ghost[i]) skin[i] = kNoRoomLimit;
    });
  }
  resize(sb_, mesh_lists_.x_at_build, n_);
  launch(n, sb_, [&](auto pol) { thrust::copy(pol, p_.x.begin(), p_.x.begin() + n, mesh_lists_.x_at_build.begin()); });
  mesh_lists_.travel = 0;
  mesh_lists_.check_ahead = false;
  mesh_lists_.have = true;
  stats_.mesh_list_renewals += static_cast<std::uint64_t>(n);
}

}  // namespace dem::device::DEM_DEVICE_NS
