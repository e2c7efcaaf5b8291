// What the mixing indices need of the state, gathered on the device
// (Simulation::mixing_contents; host/sim/mixing_contents.hpp), with the host's bits:
//   1. the tags present and their counts (the tags sorted, each run counted);
//   2. each particle's sample key (core/analysis/mixing_samples.hpp; by count, the curve's box
//      from min and max reductions, exact in any order), the particles ordered by (key, id):
//      sorted by id, then stably by key;
//   3. the samples' starts (where the key changes, or every sample_particles places) and, per
//      sample, its particles summed in that order (MixingSamplePass), as the host sums them;
//   4. the contacts: each touching pair once, from the side of its smaller id (pair_in_contact).
// Only the samples' sums and the counts come back to the host, not the particles. The buffers
// live for the call alone (a probe's, every hundred steps or so): kept, they would hold some 44
// bytes a particle of device memory between probes.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// One sample's sums, its particles in (key, id) order.
struct MixingSamplePass {
  const std::int32_t* start;  // per sample, its first place in the order; then n
  const std::int32_t* order;  // the particles in (key, id) order
  const real* inv_mass;
  const std::int32_t* tag;
  const std::int32_t* tags;  // the tags present, increasing
  std::int32_t num_tags;
  MixingSamples samples;
  std::uint64_t* n;
  double *w, *w2, *tag_w;  // tag_w: samples x tags
  DEM_HD void operator()(std::int64_t s) const {
    std::uint64_t count = 0;
    double sum = 0, sum2 = 0;
    double* row = tag_w + s * num_tags;
    for (std::int32_t t = 0; t < num_tags; ++t) row[t] = 0;
    for (std::int64_t k = start[s]; k < start[s + 1]; ++k) {
      const index_t i = order[k];
      mixing_sample_add(samples.weight(inv_mass[i]), mixing_tag_place(tags, num_tags, tag[i]), count, sum, sum2, row);
    }
    n[s] = count;
    w[s] = sum;
    w2[s] = sum2;
  }
};

struct MixingBox {
  double lo[3], hi[3];
};
struct MixingBoxMerge {
  DEM_HD MixingBox operator()(const MixingBox& a, const MixingBox& b) const {
    MixingBox m;
    for (int k = 0; k < 3; ++k) {
      m.lo[k] = a.lo[k] < b.lo[k] ? a.lo[k] : b.lo[k];
      m.hi[k] = a.hi[k] > b.hi[k] ? a.hi[k] : b.hi[k];
    }
    return m;
  }
};
struct MixingContactCount {
  std::uint64_t contacts, unlike;
};
struct MixingContactSum {
  DEM_HD MixingContactCount operator()(const MixingContactCount& a, const MixingContactCount& b) const {
    return MixingContactCount{a.contacts + b.contacts, a.unlike + b.unlike};
  }
};

host::MixingContents DeviceEngine::mixing_contents(const host::MixingSampling& s) {
  host::MixingContents out;
  const std::int64_t n = static_cast<std::int64_t>(n_);
  if (n == 0) return out;
  const ParticleView pv = pview();
  // 1. the tags present and their counts (as 64-bit keys: Thrust 3.0's sort on the OpenMP system
  // misorders negative 32-bit integers)
  {
    dvec<std::int64_t> sorted, tags, counts;
    resize(sb_, sorted, n_);
    resize(sb_, tags, n_);
    resize(sb_, counts, n_);
    {
      std::int64_t* t = raw(sorted);
      for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) { t[i] = pv.tag[i]; });
    }
    launch(n, sb_, [&](auto pol) { thrust::sort(pol, sorted.begin(), sorted.end()); });
    const auto ends = launch(n, sb_, [&](auto pol) {  // (counted below)
      return thrust::reduce_by_key(pol, sorted.begin(), sorted.end(), thrust::constant_iterator<std::int64_t>(1), tags.begin(),
                                   counts.begin());
    });
    sb_.waited();  // (the run count came back)
    const std::size_t num_tags = static_cast<std::size_t>(ends.first - tags.begin());
    std::vector<std::int64_t> tag, count;
    download(sb_, tags, num_tags, tag);
    download(sb_, counts, num_tags, count);
    out.tags.assign(tag.begin(), tag.end());
    out.tag_count.assign(count.begin(), count.end());
  }
  const std::int32_t num_tags = static_cast<std::int32_t>(out.tags.size());
  // 2. the keys, the particles in (key, id) order
  MixingBox box{};
  if (s.sample_particles > 0) {
    const double inf = std::numeric_limits<double>::infinity();
    box = reduce_index(
        sb_, n,
        [=] DEM_HD(std::int64_t i) {
          const Vec3 x = pv.x[i];
          return MixingBox{{x.x, x.y, x.z}, {x.x, x.y, x.z}};
        },
        MixingBox{{inf, inf, inf}, {-inf, -inf, -inf}}, MixingBoxMerge{});
  }
  const MixingSamples samples = s.view(box.lo, box.hi);
  dvec<std::int32_t> order, start, tags;
  dvec<std::int64_t> ids, count;
  dvec<MixingKey> keys;
  resize(sb_, order, n_);
  resize(sb_, ids, n_);
  resize(sb_, keys, n_);
  {
    std::int32_t* o = raw(order);
    std::int64_t* id = raw(ids);
    for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
      o[i] = static_cast<std::int32_t>(i);
      id[i] = pv.id[i];
    });
    launch(n, sb_, [&](auto pol) { thrust::sort_by_key(pol, ids.begin(), ids.end(), order.begin()); });
    MixingKey* key = raw(keys);
    for_each_index(sb_, n, [=] DEM_HD(std::int64_t k) { key[k] = samples.key(pv.x[o[k]]); });
    launch(n, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, keys.begin(), keys.end(), order.begin(), MixingKeyLess{}); });
  }
  // 3. the samples and their sums
  std::int64_t num_samples = 0;
  resize(sb_, start, n_ + 1);
  if (s.sample_particles > 0) {
    const std::int64_t per = s.sample_particles;
    num_samples = (n + per - 1) / per;
    std::int32_t* st = raw(start);
    for_each_index(sb_, num_samples + 1,
                   [=] DEM_HD(std::int64_t k) { st[k] = static_cast<std::int32_t>(k < num_samples ? k * per : n); });
  } else {
    resize(sb_, count, 1);
    const MixingKey* key = raw(keys);
    select_index_into(sb_, static_cast<std::int32_t>(n), [=] DEM_HD(std::int32_t k) { return k == 0 || key[k] != key[k - 1]; },
                      raw(start), raw(count));
    num_samples = read_one(sb_, count, 0);
    std::int32_t* st = raw(start);
    const std::int64_t end = num_samples;
    for_each_index(sb_, 1, [=] DEM_HD(std::int64_t) { st[end] = static_cast<std::int32_t>(n); });
  }
  {
    dvec<std::uint64_t> sample_n;
    dvec<double> sample_w, sample_w2, sample_tag_w;
    const std::size_t m = static_cast<std::size_t>(num_samples);
    resize(sb_, sample_n, m);
    resize(sb_, sample_w, m);
    resize(sb_, sample_w2, m);
    resize(sb_, sample_tag_w, m * static_cast<std::size_t>(num_tags));
    upload(sb_, tags, out.tags);
    for_each_index(sb_, num_samples,
                   MixingSamplePass{raw(start), raw(order), pv.inv_mass, pv.tag, raw(tags), num_tags, samples, raw(sample_n),
                                    raw(sample_w), raw(sample_w2), raw(sample_tag_w)});
    download(sb_, sample_n, m, out.sample_n);
    download(sb_, sample_w, m, out.sample_w);
    download(sb_, sample_w2, m, out.sample_w2);
    download(sb_, sample_tag_w, m * static_cast<std::size_t>(num_tags), out.sample_tag_w);
  }
  // 4. the contacts
  if (pairs_.have) {
    const std::int64_t* row = raw(pairs_.offsets);
    const std::int32_t* partner = raw(pairs_.index);
    const std::uint8_t* touching = raw(pairs_.touching);
    const Vec3* kept = with_roll_ ? raw(pairs_.roll) : nullptr;
    const MixingContactCount c = reduce_index(
        sb_, n,
        [=] DEM_HD(std::int64_t i) {
          MixingContactCount sum{0, 0};
          for (std::int64_t k = row[i]; k < row[i + 1]; ++k) {
            if (!touching[k]) continue;
            const index_t j = partner[k];
            if (pv.id[j] < pv.id[i]) continue;
            const bool with_polyhedron = pv.shape[i] >= 0 || pv.shape[j] >= 0;
            if (!pair_in_contact(with_polyhedron, kept ? kept[k] : Vec3{0, 0, 0})) continue;
            ++sum.contacts;
            sum.unlike += pv.tag[i] != pv.tag[j];
          }
          return sum;
        },
        MixingContactCount{0, 0}, MixingContactSum{});
    out.contacts = c.contacts;
    out.unlike_contacts = c.unlike;
  }
  return out;
}

}  // namespace dem::device::DEM_DEVICE_NS
