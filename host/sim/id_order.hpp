// Particles in increasing id, the order in which the output's analyses (mixing indices,
// coarse-grained fields) sum, so that their bits do not depend on the engine's particle order.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace dem::host {

// The largest id if the ids are dense enough for a table indexed by id (at most four times as
// many ids as particles), else -1.
inline std::int64_t dense_id_top(const std::vector<std::int64_t>& id) {
  std::int64_t top = -1;
  for (std::int64_t v : id) top = std::max(top, v);
  return top >= 0 && std::uint64_t(top) < 4 * std::uint64_t(id.size()) + 64 ? top : -1;
}

// The indices i with keep(i), ordered by id[i] (ids unique and >= 0): by buckets when the ids
// are dense (O(n)), else by sorting.
template <class Keep>
void order_by_id(const std::vector<std::int64_t>& id, Keep&& keep, std::vector<std::size_t>& out) {
  out.clear();
  if (const std::int64_t top = dense_id_top(id); top >= 0) {
    std::vector<std::uint32_t> slot(std::size_t(top) + 1, 0);  // index + 1 of each id's particle
    for (std::size_t i = 0; i < id.size(); ++i)
      if (keep(i)) slot[std::size_t(id[i])] = static_cast<std::uint32_t>(i + 1);
    for (std::uint32_t s : slot)
      if (s) out.push_back(s - 1);
    return;
  }
  for (std::size_t i = 0; i < id.size(); ++i)
    if (keep(i)) out.push_back(i);
  std::sort(out.begin(), out.end(), [&](std::size_t a, std::size_t b) { return id[a] < id[b]; });
}

// Where each id sits in an array of particles (those with keep(i)): a table indexed by id where
// the ids are dense (dense_id_top), else a hash map. find: the index, or -1 where absent.
class IdIndex {
 public:
  IdIndex() = default;
  explicit IdIndex(const std::vector<std::int64_t>& id) : IdIndex(id, [](std::size_t) { return true; }) {}
  template <class Keep>
  IdIndex(const std::vector<std::int64_t>& id, Keep&& keep) {
    if (const std::int64_t top = dense_id_top(id); top >= 0) {
      dense_ = true;
      table_.assign(std::size_t(top) + 1, -1);
      for (std::size_t i = 0; i < id.size(); ++i)
        if (keep(i)) table_[std::size_t(id[i])] = static_cast<std::int64_t>(i);
      return;
    }
    map_.reserve(id.size());
    for (std::size_t i = 0; i < id.size(); ++i)
      if (keep(i)) map_[id[i]] = static_cast<std::int64_t>(i);
  }
  std::int64_t find(std::int64_t id) const {
    if (dense_) return id >= 0 && std::uint64_t(id) < table_.size() ? table_[std::size_t(id)] : -1;
    const auto it = map_.find(id);
    return it == map_.end() ? -1 : it->second;
  }

 private:
  bool dense_ = false;
  std::vector<std::int64_t> table_;
  std::unordered_map<std::int64_t, std::int64_t> map_;
};

}  // namespace dem::host
