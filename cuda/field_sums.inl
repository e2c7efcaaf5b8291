// The particle part of the coarse-grained fields, summed on the device (Simulation::sample_fields;
// host/sim/field_sums.hpp). The host engine scatters each particle's weighted terms into the
// cells, every cell receiving them in increasing particle id; here each cell gathers them, in the
// same order, so both give the same bits:
//   1. the counted particles (centres in the region) in increasing id;
//   2. per particle, its weights along the three axes (cg_axis_weights) and its terms
//      (cg_particle_terms, with the velocity at the step's time);
//   3. per particle, an entry for each cell of its support (count, scan, fill; in the host's loop
//      order z, y, x), the entries stably sorted by cell, so that a cell's entries stay in
//      increasing id;
//   4. per cell, its entries in order, added to the running sums (cg_add), each tag's volume in
//      a pass of its own.
// The entries of a sample are made for a chunk of particles at a time (at most
// FieldSampling::device_entry_chunk entries): the chunks follow the ids, so the order within each
// cell holds. The sample's mass is summed in blocks of kCgMassBlock ids, the blocks' sums then in
// order on the host, as the host sampler sums it.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// The sampling as the per-index bodies read it (plain data).
struct CgSamplingView {
  double lo[3], h[3], min[3], max[3];
  std::int32_t n[3];
  bool periodic[3];
  CgKernel kernel;
  double width;
  std::int32_t span;
};

// An entry's weight in its cell, the host's product (w_z w_y) w_x, and its particle j (in id order).
struct CgEntryWeight {
  const std::int32_t* entry_order;  // the sorted entries' places in the fill
  const std::uint32_t* at;          // per filled entry: its particle in the chunk; its axes' places
  const double* weight;             // per particle and axis, span weights
  std::int64_t j0;                  // the chunk's first particle
  std::int32_t span;
  DEM_HD double operator()(std::int64_t e, std::int64_t& j) const {
    const std::int64_t k = entry_order[e];
    j = j0 + at[2 * k];
    const std::uint32_t abd = at[2 * k + 1];
    const std::int64_t sp = span;
    const double wzy = weight[(3 * j + 2) * sp + (abd & 63u)] * weight[(3 * j + 1) * sp + ((abd >> 6) & 63u)];
    return wzy * weight[(3 * j) * sp + ((abd >> 12) & 63u)];
  }
};

void DeviceEngine::start_field_sums(const host::FieldSampling& s) {
  fields_.sampling = s;
  fields_.started = true;
  assign(sb_, fields_.cells, s.grid.cells(), CgCellSums{});
  fields_.tag_volume.clear();
  fields_.mass = 0;
  fields_.samples = 0;
}

void DeviceEngine::sample_fields(Vec3 gravity, real dt) {
  if (!fields_.started) throw std::logic_error("sample_fields before start_field_sums");
  const host::FieldSampling& s = fields_.sampling;
  CgSamplingView g;
  for (int k = 0; k < 3; ++k) {
    g.lo[k] = s.grid.lo[k], g.h[k] = s.grid.h[k], g.n[k] = s.grid.n[k], g.periodic[k] = s.grid.periodic[k];
    g.min[k] = s.min[k], g.max[k] = s.max[k];
  }
  g.kernel = s.kernel;
  g.width = s.width;
  g.span = s.span;
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const ParticleView pv = pview();
  // 1. the counted particles, in increasing id
  DeviceFieldSums& f = fields_;
  ensure(sb_, f.order, static_cast<std::size_t>(n));
  ensure(sb_, f.count, 1);
  select_index_into(
      sb_, static_cast<std::int32_t>(n),
      [=] DEM_HD(std::int32_t i) {
        const Vec3 x = pv.x[i];
        const double c[3] = {x.x, x.y, x.z};
        for (int k = 0; k < 3; ++k)
          if (!g.periodic[k] && (c[k] < g.min[k] || c[k] > g.max[k])) return false;
        return true;
      },
      raw(f.order), raw(f.count));
  const std::int64_t m = read_one(sb_, f.count, 0);
  ++f.samples;
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
  {
    std::int32_t* first = raw(f.first);
    std::int32_t* count = raw(f.cells_of);
    double* weight = raw(f.weight);
    CgParticleTerms* terms = raw(f.terms);
    std::int64_t* fail = raw(f.fail);
    const std::int32_t* order = raw(f.order);
    const PolyShape* shapes = shapes_.empty() ? nullptr : raw(shapes_);
    for_each_index(sb_, m, [=] DEM_HD(std::int64_t j) {
      const index_t i = order[j];
      const Vec3 x = pv.x[i];
      const double c[3] = {x.x, x.y, x.z};
      fail[j] = -1;
      CgAxisWeights w;
      for (int k = 0; k < 3; ++k) {
        if (!cg_axis_weights(c[k], g.lo[k], g.h[k], g.n[k], g.periodic[k], g.kernel, g.width, w) || w.count > g.span) {
          fail[j] = pv.id[i];
          count[3 * j] = count[3 * j + 1] = count[3 * j + 2] = 0;
          return;
        }
        first[3 * j + k] = w.first;
        count[3 * j + k] = w.count;
        for (std::int32_t a = 0; a < w.count; ++a) weight[(3 * j + k) * std::int64_t(g.span) + a] = w.w[a];
      }
      Vec3 v = pv.v[i], spin{0, 0, 0};
      velocities_at_step_time(v, spin, pv.force[i], Vec3{0, 0, 0}, pv.inv_mass[i], 0, gravity, pv.prescribed[i] != 0, dt);
      const double size = pv.shape[i] >= 0 ? double(pv.radius[i]) / double(shapes[pv.shape[i]].bounding_radius)
                                           : 2 * double(pv.radius[i]);
      terms[j] = cg_particle_terms(double(pv.inv_mass[i]), size, v.x, v.y, v.z);
    });
  }
  {
    const std::int64_t* fail = raw(f.fail);
    const std::int64_t outside = reduce_index(sb_, m, [=] DEM_HD(std::int64_t j) { return fail[j]; }, std::int64_t(-1),
                                              thrust::maximum<std::int64_t>());
    if (outside >= 0)
      throw std::runtime_error("coarse_graining: the kernel of particle " + std::to_string(outside) + " leaves the grid");
  }
  // the chunks: as many particles as the largest support allows within device_entry_chunk entries
  const std::int32_t* count = raw(f.cells_of);
  const std::int64_t most =
      reduce_index(sb_, m, [=] DEM_HD(std::int64_t j) { return std::int64_t(count[3 * j]) * count[3 * j + 1] * count[3 * j + 2]; },
                   std::int64_t(1), thrust::maximum<std::int64_t>());
  const std::int64_t chunk = std::max<std::int64_t>(1, s.device_entry_chunk / std::max<std::int64_t>(1, most));
  // the tags present (per_tag), each with its running sums
  std::vector<std::int32_t> tags;
  if (s.per_tag) {
    ensure(sb_, f.tag_list, static_cast<std::size_t>(m));
    std::int32_t* list = raw(f.tag_list);
    const std::int32_t* order = raw(f.order);
    for_each_index(sb_, m, [=] DEM_HD(std::int64_t j) { list[j] = pv.tag[order[j]]; });
    launch(m, sb_, [&](auto pol) { thrust::sort(pol, f.tag_list.begin(), f.tag_list.begin() + m); });
    const auto end = launch(m, sb_, [&](auto pol) { return thrust::unique(pol, f.tag_list.begin(), f.tag_list.begin() + m); });  // (counted below)
    sb_.waited();
    download(sb_, f.tag_list, static_cast<std::size_t>(end - f.tag_list.begin()), tags);
    for (const std::int32_t t : tags)
      if (!f.tag_volume.count(t)) assign(sb_, f.tag_volume[t], s.grid.cells(), 0.0);
  }
  const std::int64_t cells = static_cast<std::int64_t>(s.grid.cells());
  ensure(sb_, f.cell_start, static_cast<std::size_t>(cells) + 1);
  for (std::int64_t j0 = 0; j0 < m; j0 += chunk) {
    const std::int64_t mj = std::min(chunk, m - j0);
    // 3. the chunk's entries: count, scan, fill, sort by cell (stable: each cell's in id order)
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
          for (std::int32_t a = 0; a < count[3 * j + k]; ++a)
            wrapped[k][a] = ((first[3 * j + k] + a) % g.n[k] + g.n[k]) % g.n[k];
        // (the entry's particle in the chunk, and its cell's place along each axis: 6 bits each)
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
    // 4. per cell, its entries in order
    const std::int32_t* start = raw(f.cell_start);
    const std::int32_t* entry_order = raw(f.entry_order);
    const std::uint32_t* at = raw(f.entry_at);
    const double* weight = raw(f.weight);
    const CgParticleTerms* terms = raw(f.terms);
    const CgEntryWeight weight_of{entry_order, at, weight, j0, g.span};
    CgCellSums* sums = raw(f.cells);
    for_each_index(sb_, cells, [=] DEM_HD(std::int64_t c) {
      CgCellSums sum = sums[c];
      for (std::int64_t e = start[c]; e < start[c + 1]; ++e) {
        std::int64_t j = 0;
        const double wc = weight_of(e, j);
        cg_add(sum, terms[j], wc);
      }
      sums[c] = sum;
    });
    const std::int32_t* order = raw(f.order);
    for (const std::int32_t t : tags) {
      double* volume = raw(f.tag_volume[t]);
      for_each_index(sb_, cells, [=] DEM_HD(std::int64_t c) {
        double sum = volume[c];
        for (std::int64_t e = start[c]; e < start[c + 1]; ++e) {
          std::int64_t j = 0;
          const double wc = weight_of(e, j);
          if (pv.tag[order[j]] == t) sum += terms[j].vol * wc;
        }
        volume[c] = sum;
      });
    }
  }
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
}

host::ParticleFieldSums DeviceEngine::take_field_sums() {
  if (!fields_.started) throw std::logic_error("take_field_sums before start_field_sums");
  host::ParticleFieldSums out;
  download(sb_, fields_.cells, fields_.sampling.grid.cells(), out.cells);
  for (auto& [tag, volume] : fields_.tag_volume) download(sb_, volume, fields_.sampling.grid.cells(), out.tag_volume[tag]);
  out.mass = fields_.mass;
  out.samples = fields_.samples;
  start_field_sums(fields_.sampling);
  return out;
}

}  // namespace dem::device::DEM_DEVICE_NS
