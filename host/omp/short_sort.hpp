// Sorting the short per-particle lists of a neighbour rebuild (rows of the pair list by partner):
// a few entries each, distinct keys (with a value moved along, or keys alone).
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

namespace dem::host {

namespace detail {

// Lists of at most N entries: each entry goes to its rank, the number of smaller keys, counted
// over N slots padded with the largest key (never smaller), a fixed-length loop GCC turns into a
// few vector compares. Insertion sort mispredicted its exit about once per entry.
template <int N, class K, class Put>
inline void rank_sort(const K* key, std::int32_t len, const Put& put) {
  K k[N];
  for (int t = 0; t < N; ++t) k[t] = t < len ? key[t] : std::numeric_limits<K>::max();
  for (int s = 0; s < len; ++s) {
    int rank = 0;
    for (int t = 0; t < N; ++t) rank += k[t] < k[s] ? 1 : 0;
    put(s, rank);
  }
}

}  // namespace detail

// key[0, len) ascending (keys distinct), val moved along (V = void: keys alone).
template <class K, class V>
inline void sort_short_list(K* key, V* val, std::int32_t len) {
  constexpr bool kValues = !std::is_void_v<V>;
  using Value = std::conditional_t<kValues, V, char>;  // (unused without values)
  if (len < 2) return;
  if (len <= 16) {
    K k[16];
    Value v[16];
    for (int s = 0; s < len; ++s) {
      k[s] = key[s];
      if constexpr (kValues) v[s] = val[s];
    }
    const auto put = [&](int s, int rank) {
      key[rank] = k[s];
      if constexpr (kValues) val[rank] = v[s];
    };
    if (len <= 8)
      detail::rank_sort<8>(k, len, put);
    else
      detail::rank_sort<16>(k, len, put);
    return;
  }
  for (std::int32_t s = 1; s < len; ++s) {  // long lists (wide spheres): insertion
    const K ks = key[s];
    Value vs{};
    if constexpr (kValues) vs = val[s];
    std::int32_t m = s;
    for (; m > 0 && key[m - 1] > ks; --m) {
      key[m] = key[m - 1];
      if constexpr (kValues) val[m] = val[m - 1];
    }
    key[m] = ks;
    if constexpr (kValues) val[m] = vs;
  }
}

// key[0, len) ascending (keys distinct).
template <class K>
inline void sort_short_list(K* key, std::int32_t len) {
  sort_short_list<K, void>(key, nullptr, len);
}

}  // namespace dem::host
