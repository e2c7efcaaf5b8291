#include "host/app/output/mixing.hpp"

#include <cmath>
#include <limits>

namespace dem::host {

MixingSampling mixing_sampling(const MixingSpec& spec) {
  MixingSampling s;
  s.cell_size = spec.cell_size;
  s.sample_particles = spec.sample_particles;
  for (int k = 0; k < 3; ++k) s.origin[k] = spec.origin[k];
  s.mass_weighted = spec.mass_weighted;
  return s;
}

MixingIndices mixing_indices(const ParticleArrays& p, const ContactState& contacts, const MixingSpec& spec) {
  return mixing_indices(mixing_contents(p, contacts, mixing_sampling(spec)), spec);
}

MixingIndices mixing_indices(const MixingContents& c, const MixingSpec& spec) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  MixingIndices out;
  const std::size_t nt = c.tags.size();
  const std::size_t cells = c.sample_n.size();
  const auto used = [&](std::size_t k) { return c.sample_n[k] >= static_cast<std::uint64_t>(spec.min_particles); };
  std::uint64_t used_n = 0, used_cells = 0;
  double used_weight = 0, sr2 = 0;
  for (std::size_t k = 0; k < cells; ++k)
    if (used(k)) {
      ++used_cells;
      used_n += c.sample_n[k];
      used_weight += c.sample_w[k];
    }
  const double big_n = double(used_n);
  // a sample's concentration under shuffled tags: variance p (1 - p) sum w^2 / W^2, drawn without
  // replacement from the N particles sampled: times (N - n) / (N - 1)
  for (std::size_t k = 0; k < cells; ++k)
    if (used(k) && used_n > 1) sr2 += c.sample_w2[k] / c.sample_w[k] * (big_n - double(c.sample_n[k])) / (big_n - 1);
  for (std::size_t t = 0; t < nt; ++t) {
    TagMixing m;
    m.tag = c.tags[t];
    m.cells = used_cells;
    m.particles = used_n;
    if (used_cells == 0) {
      m.fraction = m.variance = m.variance_segregated = m.variance_random = m.lacey = m.rsd = nan;
      out.tags.push_back(m);
      continue;
    }
    double tag_weight = 0;
    for (std::size_t k = 0; k < cells; ++k)
      if (used(k)) tag_weight += c.sample_tag_w[k * nt + t];
    const double pk = tag_weight / used_weight;
    double s2 = 0;
    for (std::size_t k = 0; k < cells; ++k) {
      if (!used(k)) continue;
      const double ck = c.sample_tag_w[k * nt + t] / c.sample_w[k];
      s2 += c.sample_w[k] * (ck - pk) * (ck - pk);
    }
    m.fraction = pk;
    m.variance = s2 / used_weight;
    m.variance_segregated = pk * (1 - pk);
    m.variance_random = pk * (1 - pk) * sr2 / used_weight;
    const double span = m.variance_segregated - m.variance_random;
    m.lacey = span > 0 ? (m.variance_segregated - m.variance) / span : nan;
    m.rsd = pk > 0 ? std::sqrt(m.variance) / pk : nan;
    out.tags.push_back(m);
  }

  // The contact index: contacts between tags against the share a random shuffle gives.
  out.contacts = c.contacts;
  out.unlike_contacts = c.unlike_contacts;
  std::uint64_t n = 0;
  for (const std::uint64_t k : c.tag_count) n += k;
  double same = 0;
  if (n > 1)
    for (std::size_t t = 0; t < nt; ++t)
      same += double(c.tag_count[t]) * double(c.tag_count[t] - 1) / (double(n) * double(n - 1));
  const double expected = 1 - same;
  out.contact_index = out.contacts > 0 && expected > 0
                          ? (double(out.unlike_contacts) / double(out.contacts)) / expected
                          : nan;
  return out;
}

}  // namespace dem::host
