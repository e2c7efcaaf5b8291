// The coarse-grained fields' sums, made on the device (Simulation::sample_fields;
// host/sim/field_sums.hpp). The host engine scatters each particle's and each contact piece's
// weighted terms into the cells, every cell receiving them in increasing particle id (the pieces
// in order of particle id and partner); here each cell gathers them, in the same order, so both
// give the same bits:
//   1. the counted particles (centres in the region) in increasing id;
//   2. the points, each with its weights along the three axes (cg_axis_weights) and its term:
//      a particle and its cg_particle_terms (with the velocity at the step's time); or a point
//      of a contact's branch piece (cg_piece_point) and its share of the piece's F (x) (x - c);
//   3. per point, an entry for each cell of its support (count, scan, fill; in the host's loop
//      order z, y, x), the entries stably sorted by cell, so that a cell's entries stay in the
//      points' order;
//   4. per cell, its entries in order, added to the running sums (cg_add, cg_add_stress), each
//      tag's volume in a pass of its own.
// The entries are made for a chunk of points at a time (at most
// FieldSampling::device_entry_chunk entries): the chunks follow the points' order, so the order
// within each cell holds. The sample's mass is summed in blocks of kCgMassBlock ids, the blocks'
// sums then in order on the host, as the host sampler sums it.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// The per-cell passes over a chunk's entries (start: each cell's first entry).
struct CgParticlePass {
  CgEntryWeight weight_of;
  const std::int32_t* start;
  const CgParticleTerms* terms;
  CgCellSums* sums;
  DEM_HD void operator()(std::int64_t c) const {
    CgCellSums sum = sums[c];
    for (std::int64_t e = start[c]; e < start[c + 1]; ++e) {
      std::int64_t j = 0;
      const double wc = weight_of(e, j);
      cg_add(sum, terms[j], wc);
    }
    sums[c] = sum;
  }
};
struct CgTagPass {
  CgEntryWeight weight_of;
  const std::int32_t* start;
  const CgParticleTerms* terms;
  const std::int32_t* tag_of;  // per point
  std::int32_t tag;
  double* volume;
  DEM_HD void operator()(std::int64_t c) const {
    double sum = volume[c];
    for (std::int64_t e = start[c]; e < start[c + 1]; ++e) {
      std::int64_t j = 0;
      const double wc = weight_of(e, j);
      if (tag_of[j] == tag) sum += terms[j].vol * wc;
    }
    volume[c] = sum;
  }
};
struct CgStressPass {
  CgEntryWeight weight_of;
  const std::int32_t* start;
  const std::int64_t* piece_of;  // per point
  const CgStress* terms;         // per piece
  CgStress* sums;
  DEM_HD void operator()(std::int64_t c) const {
    CgStress sum = sums[c];
    for (std::int64_t e = start[c]; e < start[c + 1]; ++e) {
      std::int64_t j = 0;
      const double wc = weight_of(e, j);
      cg_add_stress(sum, terms[piece_of[j]], wc);
    }
    sums[c] = sum;
  }
};

void DeviceEngine::start_field_sums(const host::FieldSampling& s) {
  fields_.sampling = s;
  fields_.started = true;
  assign(sb_, fields_.cells, s.grid.cells(), CgCellSums{});
  if (s.contact_stress) assign(sb_, fields_.contact, s.grid.cells(), CgStress{});
  fields_.tag_volume.clear();
  fields_.mass = 0;
  fields_.samples = 0;
  fields_.contact_samples = 0;
}

// Throws naming the particle (fail[j]: its id, or -1) whose kernel left the grid, if any.
void DeviceEngine::cg_check_weights(std::int64_t points, const char* what) {
  const std::int64_t* fail = raw(fields_.fail);
  const std::int64_t outside =
      reduce_index(sb_, points, [=] DEM_HD(std::int64_t j) { return fail[j]; }, std::int64_t(-1), thrust::maximum<std::int64_t>());
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel " + std::string(what) + " particle " + std::to_string(outside) +
                             " leaves the grid");
}

// The points' entries, chunk by chunk (steps 3 and 4): pass(weight_of, start) runs the per-cell
// passes of a chunk.
void DeviceEngine::cg_gather(std::int64_t points, const std::function<void(const CgEntryWeight&, const std::int32_t*)>& pass) {
  DeviceFieldSums& f = fields_;
  const CgSampling g = f.sampling.view();
  const std::int32_t* count = raw(f.cells_of);
  const std::int64_t most = reduce_index(
      sb_, points, [=] DEM_HD(std::int64_t j) { return std::int64_t(count[3 * j]) * count[3 * j + 1] * count[3 * j + 2]; },
      std::int64_t(1), thrust::maximum<std::int64_t>());
  const std::int64_t chunk = std::max<std::int64_t>(1, f.sampling.device_entry_chunk / std::max<std::int64_t>(1, most));
  const std::int64_t cells = static_cast<std::int64_t>(f.sampling.grid.cells());
  ensure(sb_, f.cell_start, static_cast<std::size_t>(cells) + 1);
  for (std::int64_t j0 = 0; j0 < points; j0 += chunk) {
    const std::int64_t mj = std::min(chunk, points - j0);
    ensure(sb_, f.offsets, static_cast<std::size_t>(mj) + 1);
    {
      std::int64_t* off = raw(f.offsets);
      for_each_index(sb_, mj + 1, [=] DEM_HD(std::int64_t j) {
        off[j] = j < mj ? std::int64_t(count[3 * (j0 + j)]) * count[3 * (j0 + j) + 1] * count[3 * (j0 + j) + 2] : 0;
      });
      launch(mj, sb_, [&](auto pol) { thrust::exclusive_scan(pol, f.offsets.begin(), f.offsets.begin() + mj + 1, f.offsets.begin()); });
    }
    const std::int64_t entries = read_one(sb_, f.offsets, static_cast<std::size_t>(mj));
    ensure(sb_, f.entry_cell, static_cast<std::size_t>(entries));
    ensure(sb_, f.entry_at, 2 * static_cast<std::size_t>(entries));
    {
      const std::int64_t* off = raw(f.offsets);
      const std::int32_t* first = raw(f.first);
      std::int32_t* cell = raw(f.entry_cell);
      std::uint32_t* at = raw(f.entry_at);
      for_each_index(sb_, mj, [=] DEM_HD(std::int64_t jj) {
        const std::int64_t j = j0 + jj;
        std::int64_t e = off[jj];
        std::int32_t wrapped[3][kMaxCgSpan];
        for (int k = 0; k < 3; ++k)
          for (std::int32_t a = 0; a < count[3 * j + k]; ++a) wrapped[k][a] = ((first[3 * j + k] + a) % g.n[k] + g.n[k]) % g.n[k];
        // (the entry's point in the chunk, and its cell's place along each axis: 6 bits each)
        for (std::int32_t a = 0; a < count[3 * j + 2]; ++a)
          for (std::int32_t b = 0; b < count[3 * j + 1]; ++b)
            for (std::int32_t d = 0; d < count[3 * j]; ++d) {
              cell[e] = (wrapped[2][a] * g.n[1] + wrapped[1][b]) * g.n[0] + wrapped[0][d];
              at[2 * e] = static_cast<std::uint32_t>(jj);
              at[2 * e + 1] = static_cast<std::uint32_t>(a) | static_cast<std::uint32_t>(b) << 6 | static_cast<std::uint32_t>(d) << 12;
              ++e;
            }
      });
    }
    ensure(sb_, f.entry_order, static_cast<std::size_t>(entries));
    launch(entries, sb_, [&](auto pol) { thrust::sequence(pol, f.entry_order.begin(), f.entry_order.begin() + entries); });
    launch(entries, sb_, [&](auto pol) {
      thrust::stable_sort_by_key(pol, f.entry_cell.begin(), f.entry_cell.begin() + entries, f.entry_order.begin());
    });
    launch(entries, sb_, [&](auto pol) {
      thrust::lower_bound(pol, f.entry_cell.begin(), f.entry_cell.begin() + entries, thrust::counting_iterator<std::int32_t>(0),
                          thrust::counting_iterator<std::int32_t>(static_cast<std::int32_t>(cells) + 1), f.cell_start.begin());
    });
    pass(CgEntryWeight{raw(f.entry_order), raw(f.entry_at), raw(f.weight), j0, g.span}, raw(f.cell_start));
  }
}

void DeviceEngine::sample_fields(Vec3 gravity, real dt) {
  if (!fields_.started) throw std::logic_error("sample_fields before start_field_sums");
  DeviceFieldSums& f = fields_;
  const host::FieldSampling& s = f.sampling;
  const CgSampling g = s.view();
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const std::int64_t cells = static_cast<std::int64_t>(s.grid.cells());
  const ParticleView pv = pview();
  // 1. the counted particles, in increasing id
  ensure(sb_, f.order, static_cast<std::size_t>(n));
  ensure(sb_, f.count, 1);
  select_index_into(sb_, static_cast<std::int32_t>(n), [=] DEM_HD(std::int32_t i) { return g.counted(pv.x[i]); }, raw(f.order),
                    raw(f.count));
  const std::int64_t m = read_one(sb_, f.count, 0);
  ++f.samples;
  // (no kept contact forces: a sample without contacts, as on the host)
  const bool with_contacts = s.contact_stress && contacts_kept_ && forces_current_;
  if (with_contacts) ++f.contact_samples;
  if (m == 0) return;
  ensure(sb_, f.ids, static_cast<std::size_t>(m));
  {
    std::int64_t* ids = raw(f.ids);
    const std::int32_t* order = raw(f.order);
    for_each_index(sb_, m, [=] DEM_HD(std::int64_t j) { ids[j] = pv.id[order[j]]; });
    launch(m, sb_, [&](auto pol) { thrust::sort_by_key(pol, f.ids.begin(), f.ids.begin() + m, f.order.begin()); });
  }
  // 2. weights and terms per particle; a particle whose kernel leaves the grid: its id in fail
  const std::size_t span = static_cast<std::size_t>(g.span);
  ensure(sb_, f.first, static_cast<std::size_t>(3 * m));
  ensure(sb_, f.cells_of, static_cast<std::size_t>(3 * m));
  ensure(sb_, f.weight, static_cast<std::size_t>(3 * m) * span);
  ensure(sb_, f.terms, static_cast<std::size_t>(m));
  ensure(sb_, f.fail, static_cast<std::size_t>(m));
  ensure(sb_, f.tag_of, static_cast<std::size_t>(m));
  {
    std::int32_t* first = raw(f.first);
    std::int32_t* count = raw(f.cells_of);
    double* weight = raw(f.weight);
    CgParticleTerms* terms = raw(f.terms);
    std::int64_t* fail = raw(f.fail);
    std::int32_t* tag_of = raw(f.tag_of);
    const std::int32_t* order = raw(f.order);
    const PolyShape* shapes = shapes_.empty() ? nullptr : raw(shapes_);
    for_each_index(sb_, m, [=] DEM_HD(std::int64_t j) {
      const index_t i = order[j];
      const Vec3 x = pv.x[i];
      const double c[3] = {x.x, x.y, x.z};
      fail[j] = g.weigh(c, j, first, count, weight) ? -1 : pv.id[i];
      tag_of[j] = pv.tag[i];
      Vec3 v = pv.v[i], spin{0, 0, 0};
      velocities_at_step_time(v, spin, pv.force[i], Vec3{0, 0, 0}, pv.inv_mass[i], 0, gravity, pv.prescribed[i] != 0, dt);
      const double size = pv.shape[i] >= 0 ? double(pv.radius[i]) / double(shapes[pv.shape[i]].bounding_radius)
                                           : 2 * double(pv.radius[i]);
      terms[j] = cg_particle_terms(double(pv.inv_mass[i]), size, v.x, v.y, v.z);
    });
  }
  cg_check_weights(m, "of");
  // the tags present (per_tag), each with its running sums
  std::vector<std::int32_t> tags;
  if (s.per_tag) {
    ensure(sb_, f.tag_list, static_cast<std::size_t>(m));
    // (as 64-bit keys: Thrust 3.0's sort on the OpenMP system misorders negative 32-bit integers)
    launch(m, sb_, [&](auto pol) { thrust::copy(pol, f.tag_of.begin(), f.tag_of.begin() + m, f.tag_list.begin()); });
    launch(m, sb_, [&](auto pol) { thrust::sort(pol, f.tag_list.begin(), f.tag_list.begin() + m); });
    const auto end = launch(m, sb_, [&](auto pol) { return thrust::unique(pol, f.tag_list.begin(), f.tag_list.begin() + m); });  // (counted below)
    sb_.waited();
    std::vector<std::int64_t> present;
    download(sb_, f.tag_list, static_cast<std::size_t>(end - f.tag_list.begin()), present);
    tags.assign(present.begin(), present.end());
    for (const std::int32_t t : tags)
      if (!f.tag_volume.count(t)) assign(sb_, f.tag_volume[t], s.grid.cells(), 0.0);
  }
  // 3, 4: the particles' entries and the cells' sums
  cg_gather(m, [&](const CgEntryWeight& w, const std::int32_t* start) {
    for_each_index(sb_, cells, CgParticlePass{w, start, raw(f.terms), raw(f.cells)});
    for (const std::int32_t t : tags) for_each_index(sb_, cells, CgTagPass{w, start, raw(f.terms), raw(f.tag_of), t, raw(f.tag_volume[t])});
  });
  // the sample's mass: blocks of kCgMassBlock in id order, then the blocks in order
  const std::int64_t blocks = (m + std::int64_t(host::kCgMassBlock) - 1) / std::int64_t(host::kCgMassBlock);
  ensure(sb_, f.block_mass, static_cast<std::size_t>(blocks));
  {
    double* block_mass = raw(f.block_mass);
    const CgParticleTerms* terms = raw(f.terms);
    const std::int64_t per = std::int64_t(host::kCgMassBlock);
    for_each_index(sb_, blocks, [=] DEM_HD(std::int64_t b) {
      double sum = 0;
      for (std::int64_t j = b * per; j < m && j < (b + 1) * per; ++j) sum += terms[j].m;
      block_mass[b] = sum;
    });
  }
  std::vector<double> block_mass;
  download(sb_, f.block_mass, static_cast<std::size_t>(blocks), block_mass);
  double mass = 0;
  for (const double b : block_mass) mass += b;
  f.mass += mass;
  if (with_contacts) sample_contact_stress(m);
}

// The contact stress of the sample (the counted particles 0..m in id order in fields_.order):
// each counted particle's pieces in order of partner (its mesh contacts first, by -1 - their
// entity key; then its touching pairs, the row's order), each as the host's ContactForces gives
// it (host/sim/contact_forces.cpp: a pair's point and force kept on the side of the smaller id,
// the other side's image and the opposite force).
void DeviceEngine::sample_contact_stress(std::int64_t m) {
  DeviceFieldSums& f = fields_;
  const CgSampling g = f.sampling.view();
  const std::int64_t cells = static_cast<std::int64_t>(f.sampling.grid.cells());
  const ParticleView pv = pview();
  const PeriodicBox box = settings_.periodic;
  const bool have_pairs = pairs_.have;
  const std::int64_t* row = have_pairs ? raw(pairs_.offsets) : nullptr;
  const std::int32_t* partner = have_pairs ? raw(pairs_.index) : nullptr;
  const std::uint8_t* touching = have_pairs ? raw(pairs_.touching) : nullptr;
  const Vec3* kept_force = have_pairs ? raw(kept_force_) : nullptr;
  const Vec3* kept_point = have_pairs && !shapes_.empty() ? raw(kept_point_) : nullptr;
  const std::uint8_t* slot_count = raw(slots_.count);
  const std::int32_t* slot_block = raw(slots_.block);
  const EntityContact* slot_entity = raw(slots_.entity);
  const Vec3* slot_force = raw(slots_.force);
  const std::int32_t* order = raw(f.order);
  // pieces per counted particle: count, scan, fill
  ensure(sb_, f.piece_start, static_cast<std::size_t>(m) + 1);
  {
    std::int64_t* start = raw(f.piece_start);
    for_each_index(sb_, m + 1, [=] DEM_HD(std::int64_t j) {
      if (j == m) {
        start[j] = 0;
        return;
      }
      const index_t i = order[j];
      std::int64_t c = slot_block[i] >= 0 ? slot_count[i] : 0;
      if (row)
        for (std::int64_t k = row[i]; k < row[i + 1]; ++k) c += touching[k] != 0;
      start[j] = c;
    });
    launch(m, sb_, [&](auto pol) { thrust::exclusive_scan(pol, f.piece_start.begin(), f.piece_start.begin() + m + 1, f.piece_start.begin()); });
  }
  const std::int64_t pieces = read_one(sb_, f.piece_start, static_cast<std::size_t>(m));
  if (pieces == 0) return;
  ensure(sb_, f.piece_x, static_cast<std::size_t>(pieces));
  ensure(sb_, f.piece_arm, static_cast<std::size_t>(pieces));
  ensure(sb_, f.piece_force, static_cast<std::size_t>(pieces));
  {
    const std::int64_t* start = raw(f.piece_start);
    Vec3* px = raw(f.piece_x);
    Vec3* parm = raw(f.piece_arm);
    Vec3* pforce = raw(f.piece_force);
    for_each_index(sb_, m, [=] DEM_HD(std::int64_t j) {
      const index_t i = order[j];
      const Vec3 x = pv.x[i];
      std::int64_t at = start[j];
      // the mesh contacts, by partner -1 - key: the keys descending
      if (slot_block[i] >= 0) {
        const std::int64_t base = std::int64_t(slot_block[i]) * kMaxMeshContacts;
        int slot[kMaxMeshContacts];
        std::int64_t key[kMaxMeshContacts];
        const int used = slot_count[i];
        for (int s = 0; s < used; ++s) {
          slot[s] = s;
          key[s] = host::mesh_entity_key(slot_entity[base + s]);
        }
        for (int a = 1; a < used; ++a)
          for (int b = a; b > 0 && key[slot[b]] > key[slot[b - 1]]; --b) {
            const int t = slot[b];
            slot[b] = slot[b - 1];
            slot[b - 1] = t;
          }
        for (int s = 0; s < used; ++s) {
          const EntityContact& e = slot_entity[base + slot[s]];
          px[at] = x;
          parm[at] = cg_wall_point(box, x, e.point) - x;
          pforce[at] = -slot_force[base + slot[s]];
          ++at;
        }
      }
      if (!row) return;
      const std::int64_t id = pv.id[i];
      for (std::int64_t k = row[i]; k < row[i + 1]; ++k) {
        if (!touching[k]) continue;
        const index_t o = partner[k];
        const bool with_polyhedron = kept_point != nullptr && (pv.shape[i] >= 0 || pv.shape[o] >= 0);
        // the entry of the side of the smaller id holds the force on it and the point
        std::int64_t kk = k;
        const std::int64_t other_id = pv.id[o];
        if (id > other_id) {  // i in o's row, which is sorted by partner id
          kk = first_not_below(GatheredKeys<std::int64_t>{partner, pv.id}, row[o], row[o + 1], id);
        }
        const index_t a = id < other_id ? i : o, b = a == i ? o : i;
        const Vec3 xa = pv.x[a];
        const CgPairBranch branch =
            cg_pair_branch(box, xa, pv.radius[a], pv.x[b], pv.radius[b], with_polyhedron ? &kept_point[kk] : nullptr);
        const Vec3 start_x = a == i ? xa : branch.xb;
        px[at] = start_x;
        parm[at] = branch.c - start_x;
        pforce[at] = a == i ? kept_force[kk] : -kept_force[kk];
        ++at;
      }
    });
  }
  // the pieces' points: count, scan, fill (weights; each point's piece); the pieces' terms
  const double half_cut = 0.5 * cg_cutoff(g.kernel, g.width);
  ensure(sb_, f.point_start, static_cast<std::size_t>(pieces) + 1);
  ensure(sb_, f.stress_terms, static_cast<std::size_t>(pieces));
  {
    std::int64_t* pstart = raw(f.point_start);
    const Vec3* parm = raw(f.piece_arm);
    const Vec3* pforce = raw(f.piece_force);
    CgStress* terms = raw(f.stress_terms);
    for_each_index(sb_, pieces + 1, [=] DEM_HD(std::int64_t q) {
      if (q == pieces) {
        pstart[q] = 0;
        return;
      }
      const std::int64_t points = cg_piece_points(parm[q], half_cut);
      pstart[q] = points;
      terms[q] = cg_piece_term(pforce[q], parm[q], points);
    });
    launch(pieces, sb_, [&](auto pol) { thrust::exclusive_scan(pol, f.point_start.begin(), f.point_start.begin() + pieces + 1, f.point_start.begin()); });
  }
  const std::int64_t points = read_one(sb_, f.point_start, static_cast<std::size_t>(pieces));
  const std::size_t span = static_cast<std::size_t>(g.span);
  ensure(sb_, f.first, static_cast<std::size_t>(3 * points));
  ensure(sb_, f.cells_of, static_cast<std::size_t>(3 * points));
  ensure(sb_, f.weight, static_cast<std::size_t>(3 * points) * span);
  ensure(sb_, f.fail, static_cast<std::size_t>(points));
  ensure(sb_, f.piece_of, static_cast<std::size_t>(points));
  {
    const std::int64_t* pstart = raw(f.point_start);
    const std::int64_t* start = raw(f.piece_start);
    const Vec3* px = raw(f.piece_x);
    const Vec3* parm = raw(f.piece_arm);
    std::int32_t* first = raw(f.first);
    std::int32_t* count = raw(f.cells_of);
    double* weight = raw(f.weight);
    std::int64_t* fail = raw(f.fail);
    std::int64_t* piece_of = raw(f.piece_of);
    for_each_index(sb_, pieces, [=] DEM_HD(std::int64_t q) {
      // (the particle of piece q, for the message: the last j with start[j] <= q)
      std::int64_t lo = 0, hi = m;
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= q) lo = mid;
        else hi = mid;
      }
      const std::int64_t points_q = pstart[q + 1] - pstart[q];
      for (std::int64_t point = 0; point < points_q; ++point) {
        const std::int64_t j = pstart[q] + point;
        double x[3];
        cg_piece_point(px[q], parm[q], point, points_q, x);
        fail[j] = g.weigh(x, j, first, count, weight) ? -1 : pv.id[order[lo]];
        piece_of[j] = q;
      }
    });
  }
  cg_check_weights(points, "along a contact of");
  cg_gather(points, [&](const CgEntryWeight& w, const std::int32_t* start) {
    for_each_index(sb_, cells, CgStressPass{w, start, raw(f.piece_of), raw(f.stress_terms), raw(f.contact)});
  });
}

host::FieldSums DeviceEngine::take_field_sums() {
  if (!fields_.started) throw std::logic_error("take_field_sums before start_field_sums");
  host::FieldSums out;
  download(sb_, fields_.cells, fields_.sampling.grid.cells(), out.cells);
  for (auto& [tag, volume] : fields_.tag_volume) download(sb_, volume, fields_.sampling.grid.cells(), out.tag_volume[tag]);
  if (fields_.sampling.contact_stress) download(sb_, fields_.contact, fields_.sampling.grid.cells(), out.contact);
  out.mass = fields_.mass;
  out.samples = fields_.samples;
  out.contact_samples = fields_.contact_samples;
  start_field_sums(fields_.sampling);
  return out;
}

}  // namespace dem::device::DEM_DEVICE_NS
