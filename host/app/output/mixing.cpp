#include "host/app/output/mixing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "core/engine/polyhedron_phases.hpp"
#include "host/sim/id_order.hpp"

namespace dem::host {
namespace {

struct CellKey {
  std::int64_t x, y, z;
  bool operator<(const CellKey& o) const { return x != o.x ? x < o.x : y != o.y ? y < o.y : z < o.z; }
  bool operator!=(const CellKey& o) const { return x != o.x || y != o.y || z != o.z; }
};

}  // namespace

MixingIndices mixing_indices(const ParticleArrays& p, const ContactState& contacts, const MixingSpec& spec) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  MixingIndices out;
  const std::size_t n = p.size();
  // the tags present, each with its dense index and count
  std::vector<std::int32_t> tags(p.tag.begin(), p.tag.end());
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  const std::size_t nt = tags.size();
  const auto tag_index = [&](std::int32_t t) {
    return std::size_t(std::lower_bound(tags.begin(), tags.end(), t) - tags.begin());
  };
  std::vector<std::size_t> tag_of(n);
  std::vector<std::uint64_t> tag_count(nt, 0);
  for (std::size_t i = 0; i < n; ++i) ++tag_count[tag_of[i] = tag_index(p.tag[i])];

  // The samples; the particles in the order (sample, id): in id order, then stably by cell, or by
  // their place on a Z-order curve (samples of sample_particles: each run of that many along it).
  std::vector<CellKey> key(n);
  const bool by_count = spec.sample_particles > 0;
  if (by_count) {
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
      const double x[3] = {p.x[i].x, p.x[i].y, p.x[i].z};
      for (int k = 0; k < 3; ++k) {
        lo[k] = i == 0 ? x[k] : std::min(lo[k], x[k]);
        hi[k] = i == 0 ? x[k] : std::max(hi[k], x[k]);
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      const double x[3] = {p.x[i].x, p.x[i].y, p.x[i].z};
      std::uint64_t q[3], z = 0;
      for (int k = 0; k < 3; ++k)
        q[k] = hi[k] > lo[k] ? std::min<std::uint64_t>((1u << 21) - 1, std::uint64_t((x[k] - lo[k]) / (hi[k] - lo[k]) * (1u << 21)))
                             : 0;
      for (int b = 20; b >= 0; --b)
        for (int k = 0; k < 3; ++k) z = (z << 1) | ((q[k] >> b) & 1u);
      key[i] = CellKey{static_cast<std::int64_t>(z), 0, 0};
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const double d[3] = {p.x[i].x - spec.origin[0], p.x[i].y - spec.origin[1], p.x[i].z - spec.origin[2]};
      key[i] = CellKey{static_cast<std::int64_t>(std::floor(d[0] / spec.cell_size)),
                       static_cast<std::int64_t>(std::floor(d[1] / spec.cell_size)),
                       static_cast<std::int64_t>(std::floor(d[2] / spec.cell_size))};
    }
  }
  std::vector<std::size_t> order;
  order_by_id(p.id, [](std::size_t) { return true; }, order);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  const auto starts_sample = [&](std::size_t k) {
    return k == 0 || (by_count ? k % std::size_t(spec.sample_particles) == 0 : key[order[k]] != key[order[k - 1]]);
  };
  // per cell: its particles, their weight W (count or mass) and the weights' squares, and per tag
  // the weight of that tag (cells x tags)
  std::vector<std::uint64_t> cell_n;
  std::vector<double> cell_w, cell_w2, cell_tag_w;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = order[k];
    if (starts_sample(k)) {
      cell_n.push_back(0);
      cell_w.push_back(0);
      cell_w2.push_back(0);
      cell_tag_w.resize(cell_tag_w.size() + nt, 0.0);
    }
    const double w = spec.mass_weighted ? 1.0 / double(p.inv_mass[i]) : 1.0;
    ++cell_n.back();
    cell_w.back() += w;
    cell_w2.back() += w * w;
    cell_tag_w[cell_tag_w.size() - nt + tag_of[i]] += w;
  }
  const std::size_t cells = cell_n.size();
  const auto used = [&](std::size_t c) { return cell_n[c] >= static_cast<std::uint64_t>(spec.min_particles); };
  std::uint64_t used_n = 0, used_cells = 0;
  double used_weight = 0, sr2 = 0;
  for (std::size_t c = 0; c < cells; ++c)
    if (used(c)) {
      ++used_cells;
      used_n += cell_n[c];
      used_weight += cell_w[c];
    }
  const double big_n = double(used_n);
  // a cell's concentration under shuffled tags: variance p (1 - p) sum w^2 / W^2, drawn without
  // replacement from the N particles sampled: times (N - n) / (N - 1)
  for (std::size_t c = 0; c < cells; ++c)
    if (used(c) && used_n > 1) sr2 += cell_w2[c] / cell_w[c] * (big_n - double(cell_n[c])) / (big_n - 1);
  for (std::size_t t = 0; t < nt; ++t) {
    TagMixing m;
    m.tag = tags[t];
    m.cells = used_cells;
    m.particles = used_n;
    if (used_cells == 0) {
      m.fraction = m.variance = m.variance_segregated = m.variance_random = m.lacey = m.rsd = nan;
      out.tags.push_back(m);
      continue;
    }
    double tag_weight = 0;
    for (std::size_t c = 0; c < cells; ++c)
      if (used(c)) tag_weight += cell_tag_w[c * nt + t];
    const double pk = tag_weight / used_weight;
    double s2 = 0;
    for (std::size_t c = 0; c < cells; ++c) {
      if (!used(c)) continue;
      const double ck = cell_tag_w[c * nt + t] / cell_w[c];
      s2 += cell_w[c] * (ck - pk) * (ck - pk);
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

  // The contact index: contacts between tags against the share a random shuffle gives. (Each
  // pair's particles found by id: a table when the ids are dense, else a hash map.)
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
    if (p.shape[a] >= 0 || p.shape[b] >= 0) {  // a polyhedral pair: touching while its bounding spheres overlap
      const Vec3 kept = contacts.pair_history[k].rolling;
      if (!has_plane(kept) || !unpack_plane(kept).in_contact) continue;
    }
    ++out.contacts;
    out.unlike_contacts += p.tag[a] != p.tag[b];
  }
  double same = 0;
  if (n > 1)
    for (std::size_t t = 0; t < nt; ++t)
      same += double(tag_count[t]) * double(tag_count[t] - 1) / (double(n) * double(n - 1));
  const double expected = 1 - same;
  out.contact_index = out.contacts > 0 && expected > 0
                          ? (double(out.unlike_contacts) / double(out.contacts)) / expected
                          : nan;
  return out;
}

}  // namespace dem::host
