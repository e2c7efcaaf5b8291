// Contact persistence across re-detection: contacts are identified by a key built from particle
// ids (never array indices, which change when particles are re-sorted), and a new contact takes
// the history of the old contact with the same key. Old keys are kept sorted, so the lookup is a
// binary search; the same body serves the host and the device (DEME's buildPersistentMap idea).
#pragma once
#include <cstdint>

#include "core/config.hpp"

namespace dem {

// Key of the unordered pair of particle ids (a, b): smaller id in the high word.
DEM_HD inline std::uint64_t pair_key(std::int64_t id_a, std::int64_t id_b) {
  const std::uint64_t lo = static_cast<std::uint64_t>(id_a < id_b ? id_a : id_b);
  const std::uint64_t hi = static_cast<std::uint64_t>(id_a < id_b ? id_b : id_a);
  return (lo << 32) | (hi & 0xffffffffu);
}

// Index of key in sorted_keys[0, n), or -1.
DEM_HD inline std::int64_t find_key(const std::uint64_t* sorted_keys, std::int64_t n, std::uint64_t key) {
  std::int64_t lo = 0, hi = n;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (sorted_keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && sorted_keys[lo] == key ? lo : -1;
}

}  // namespace dem
