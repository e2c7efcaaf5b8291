#include "host/app/output/mixing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "core/engine/polyhedron_phases.hpp"

namespace dem::host {
namespace {

struct CellKey {
  std::int64_t x, y, z;
  bool operator<(const CellKey& o) const { return x != o.x ? x < o.x : y != o.y ? y < o.y : z < o.z; }
  bool operator!=(const CellKey& o) const { return x != o.x || y != o.y || z != o.z; }
};

// One sample cell's sums: its particles, their weight W (count or mass), the weights' squares, and
// per tag the weight of that tag.
struct CellSums {
  std::uint64_t n = 0;
  double weight = 0, weight2 = 0;
  std::map<std::int32_t, double> tag_weight;
};

}  // namespace

MixingIndices mixing_indices(const ParticleArrays& p, const ContactState& c, const MixingSpec& spec) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  MixingIndices out;
  const std::size_t n = p.size();
  std::map<std::int32_t, std::uint64_t> tag_count;
  for (std::size_t i = 0; i < n; ++i) ++tag_count[p.tag[i]];

  // The sample cells, each particle's in the order (cell, id).
  std::vector<CellKey> key(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double d[3] = {p.x[i].x - spec.origin[0], p.x[i].y - spec.origin[1], p.x[i].z - spec.origin[2]};
    key[i] = CellKey{static_cast<std::int64_t>(std::floor(d[0] / spec.cell_size)),
                     static_cast<std::int64_t>(std::floor(d[1] / spec.cell_size)),
                     static_cast<std::int64_t>(std::floor(d[2] / spec.cell_size))};
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return key[a] != key[b] ? key[a] < key[b] : p.id[a] < p.id[b];
  });
  std::vector<CellSums> cells;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = order[k];
    if (k == 0 || key[i] != key[order[k - 1]]) cells.emplace_back();
    CellSums& s = cells.back();
    const double w = spec.mass_weighted ? 1.0 / double(p.inv_mass[i]) : 1.0;
    ++s.n;
    s.weight += w;
    s.weight2 += w * w;
    s.tag_weight[p.tag[i]] += w;
  }
  std::uint64_t used_n = 0;
  double used_weight = 0;
  for (const CellSums& s : cells)
    if (s.n >= static_cast<std::uint64_t>(spec.min_particles)) {
      used_n += s.n;
      used_weight += s.weight;
    }
  for (const auto& [tag, count] : tag_count) {
    (void)count;
    TagMixing m;
    m.tag = tag;
    double tag_weight = 0;
    for (const CellSums& s : cells) {
      if (s.n < static_cast<std::uint64_t>(spec.min_particles)) continue;
      ++m.cells;
      m.particles += s.n;
      const auto it = s.tag_weight.find(tag);
      tag_weight += it == s.tag_weight.end() ? 0.0 : it->second;
    }
    if (m.cells == 0) {
      m.fraction = m.variance = m.variance_segregated = m.variance_random = m.lacey = m.rsd = nan;
      out.tags.push_back(m);
      continue;
    }
    const double pk = tag_weight / used_weight;
    const double big_n = double(used_n);
    double s2 = 0, sr2 = 0;
    for (const CellSums& s : cells) {
      if (s.n < static_cast<std::uint64_t>(spec.min_particles)) continue;
      const auto it = s.tag_weight.find(tag);
      const double ck = (it == s.tag_weight.end() ? 0.0 : it->second) / s.weight;
      s2 += s.weight * (ck - pk) * (ck - pk);
      // a cell's concentration under shuffled tags: variance p (1 - p) sum w^2 / W^2, drawn
      // without replacement from the N particles sampled: times (N - n) / (N - 1)
      if (used_n > 1) sr2 += s.weight2 / s.weight * (big_n - double(s.n)) / (big_n - 1);
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
  std::unordered_map<std::int64_t, std::size_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index.emplace(p.id[i], i);
  for (std::size_t k = 0; k < c.pair_a.size(); ++k) {
    const std::size_t a = index.at(c.pair_a[k]), b = index.at(c.pair_b[k]);
    if (p.shape[a] >= 0 || p.shape[b] >= 0) {  // a polyhedral pair: touching while its bounding spheres overlap
      const Vec3 kept = c.pair_history[k].rolling;
      if (!has_plane(kept) || !unpack_plane(kept).in_contact) continue;
    }
    ++out.contacts;
    out.unlike_contacts += p.tag[a] != p.tag[b];
  }
  double same = 0;
  if (n > 1)
    for (const auto& [tag, count] : tag_count) same += double(count) * double(count - 1) / (double(n) * double(n - 1));
  const double expected = 1 - same;
  out.contact_index = out.contacts > 0 && expected > 0
                          ? (double(out.unlike_contacts) / double(out.contacts)) / expected
                          : nan;
  return out;
}

}  // namespace dem::host
