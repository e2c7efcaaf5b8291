#include "host/sim/mixing_contents.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "core/engine/polyhedron_phases.hpp"
#include "host/sim/id_order.hpp"

namespace dem::host {

MixingSamples MixingSampling::view(const double lo[3], const double hi[3]) const {
  if (!(cell_size > 0) && sample_particles <= 0)
    throw std::invalid_argument("mixing: samples need a cell_size > 0 or a sample_particles > 0");
  MixingSamples m{};
  m.cell_size = sample_particles > 0 ? 0.0 : cell_size;
  for (int k = 0; k < 3; ++k) {
    m.origin[k] = origin[k];
    m.lo[k] = lo[k];
    m.hi[k] = hi[k];
  }
  m.mass_weighted = mass_weighted;
  return m;
}

MixingContents mixing_contents(const ParticleArrays& p, const ContactState& contacts, const MixingSampling& s) {
  MixingContents out;
  const std::size_t n = p.size();
  // the tags present and their counts
  out.tags.assign(p.tag.begin(), p.tag.end());
  std::sort(out.tags.begin(), out.tags.end());
  out.tags.erase(std::unique(out.tags.begin(), out.tags.end()), out.tags.end());
  const std::size_t nt = out.tags.size();
  std::vector<std::int32_t> tag_of(n);
  out.tag_count.assign(nt, 0);
  for (std::size_t i = 0; i < n; ++i) {
    tag_of[i] = mixing_tag_place(out.tags.data(), static_cast<std::int32_t>(nt), p.tag[i]);
    ++out.tag_count[static_cast<std::size_t>(tag_of[i])];
  }

  // each particle's sample key (the curve's box: the particles' bounds), then the particles in
  // the order (key, id)
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n; ++i) {
    const double x[3] = {p.x[i].x, p.x[i].y, p.x[i].z};
    for (int k = 0; k < 3; ++k) {
      lo[k] = i == 0 ? x[k] : std::min(lo[k], x[k]);
      hi[k] = i == 0 ? x[k] : std::max(hi[k], x[k]);
    }
  }
  const MixingSamples samples = s.view(lo, hi);
  std::vector<MixingKey> key(n);
  for (std::size_t i = 0; i < n; ++i) key[i] = samples.key(p.x[i]);
  std::vector<std::size_t> order;
  order_by_id(p.id, [](std::size_t) { return true; }, order);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  const bool by_count = samples.cell_size == 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = order[k];
    if (k == 0 || (by_count ? k % std::size_t(s.sample_particles) == 0 : key[i] != key[order[k - 1]])) {
      out.sample_n.push_back(0);
      out.sample_w.push_back(0);
      out.sample_w2.push_back(0);
      out.sample_tag_w.resize(out.sample_tag_w.size() + nt, 0.0);
    }
    mixing_sample_add(samples.weight(p.inv_mass[i]), tag_of[i], out.sample_n.back(), out.sample_w.back(),
                      out.sample_w2.back(), out.sample_tag_w.data() + (out.sample_tag_w.size() - nt));
  }

  // the contacts, each pair's particles found by id: a table when the ids are dense, else a map
  const std::int64_t top = dense_id_top(p.id);
  std::vector<std::uint32_t> slot;
  std::unordered_map<std::int64_t, std::size_t> sparse;
  const bool dense = top >= 0;
  if (dense) {
    slot.assign(std::size_t(top) + 1, 0);
    for (std::size_t i = 0; i < n; ++i) slot[std::size_t(p.id[i])] = static_cast<std::uint32_t>(i);
  } else {
    for (std::size_t i = 0; i < n; ++i) sparse.emplace(p.id[i], i);
  }
  const auto at = [&](std::int64_t id) { return dense ? std::size_t(slot.at(std::size_t(id))) : sparse.at(id); };
  for (std::size_t k = 0; k < contacts.pair_a.size(); ++k) {
    const std::size_t a = at(contacts.pair_a[k]), b = at(contacts.pair_b[k]);
    if (!pair_in_contact(p.shape[a] >= 0 || p.shape[b] >= 0, contacts.pair_history[k].rolling)) continue;
    ++out.contacts;
    out.unlike_contacts += p.tag[a] != p.tag[b];
  }
  return out;
}

}  // namespace dem::host
