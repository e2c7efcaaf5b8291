// The host engine's one loop seam: a core/ phase body run for every index on the OpenMP threads.
// The device engine runs the same bodies through thrust::for_each (cuda/device_engine.inl).
// Beside it, the small parallel pieces the host's rebuilds share (row offsets, copies, the team
// scan of scatter cursors, arrays left uninitialised until a parallel pass writes them).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include <omp.h>

namespace dem::host {

// f(i) for i in [0, n). chunk > 0: dynamic schedule in chunks of that many indices (for uneven
// work), 0: static. Loops over at most parallel_min indices run on the calling thread. Every body
// writes only what belongs to its index, so the result does not depend on the schedule.
template <class F>
void parallel_for(std::int64_t n, std::size_t parallel_min, std::int64_t chunk, const F& f) {
  const bool par = static_cast<std::size_t>(n > 0 ? n : 0) > parallel_min;
  if (chunk > 0) {
#pragma omp parallel for schedule(dynamic, chunk) if (par)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  } else {
#pragma omp parallel for schedule(static) if (par)
    for (std::int64_t i = 0; i < n; ++i) f(i);
  }
}

// The indices i in [0, n) with pred(i), counted and collected in one pass: `count` says how many
// there are, `indices` holds them in increasing order, but only when there are at most `keep`
// (callers that act on a few finds and on their number otherwise). The predicate runs over
// blocks of kFindBlock indices, a mask per block and then its few hits (GCC vectorises the block
// loop on its own; under `omp simd` it gathered the strided positions, 4 times slower on AMD).
struct Finds {
  std::int64_t count = 0;
  std::vector<std::int32_t> indices;  // (empty when count > keep)
};
constexpr int kFindBlock = 64;
template <class Pred>
Finds find_where(std::int64_t n, bool par, std::int64_t keep, const Pred& pred) {
  Finds out;
  const std::int64_t blocks = (n + kFindBlock - 1) / kFindBlock;
  std::vector<std::vector<std::int32_t>> found;  // per thread, its static range's finds in order
  std::int64_t count = 0;
#pragma omp parallel reduction(+ : count) if (par)
  {
#pragma omp single
    found.resize(static_cast<std::size_t>(omp_get_num_threads()));  // (its barrier: sized for all)
    std::vector<std::int32_t>& mine = found[static_cast<std::size_t>(omp_get_thread_num())];
    // (a chunk size given: the chunks go to the threads in their order, so each thread's finds
    // follow those of the threads before it)
    const std::int64_t chunk = std::max<std::int64_t>(1, (blocks + omp_get_num_threads() - 1) / omp_get_num_threads());
#pragma omp for schedule(static, chunk) nowait
    for (std::int64_t b = 0; b < blocks; ++b) {
      const std::int64_t i0 = b * kFindBlock;
      const int lanes = static_cast<int>(std::min<std::int64_t>(kFindBlock, n - i0));
      alignas(64) std::int32_t hit[kFindBlock];
      std::int32_t hits = 0;
      for (int l = 0; l < lanes; ++l) {
        hit[l] = pred(i0 + l) ? 1 : 0;
        hits += hit[l];
      }
      if (hits == 0) continue;
      count += hits;
      if (static_cast<std::int64_t>(mine.size()) <= keep)
        for (int l = 0; l < lanes; ++l)
          if (hit[l]) mine.push_back(static_cast<std::int32_t>(i0 + l));
    }
  }
  out.count = count;
  if (count <= keep)
    for (const std::vector<std::int32_t>& v : found) out.indices.insert(out.indices.end(), v.begin(), v.end());
  return out;
}

// Whether test(item, scratch) holds for every item (all are tested: the answer never depends on
// the schedule), the items dealt one at a time to the threads; scratch: a vector per thread.
template <class T, class Test>
bool holds_for_all(const std::vector<T>& items, bool par, const Test& test) {
  const std::int64_t m = static_cast<std::int64_t>(items.size());
  int fails = 0;
#pragma omp parallel reduction(max : fails) if (par && m > 1)
  {
    std::vector<std::int32_t> scratch;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < m; ++k)
      if (!test(items[k], scratch)) fails = 1;
  }
  return fails == 0;
}

// CSR row offsets of sorted row indices: offsets[i] = the first k with rows[k] >= i, for i in
// [0, n] (offsets has n + 1 entries). Each index k writes the offsets of the rows that start at
// it, so the threads write disjoint entries.
inline void row_offsets(const std::vector<std::int32_t>& rows, std::int64_t n, std::vector<std::int32_t>& offsets,
                        std::size_t parallel_min) {
  const std::int64_t np = static_cast<std::int64_t>(rows.size());
  offsets.resize(static_cast<std::size_t>(n) + 1);
  parallel_for(np + 1, parallel_min, 0, [&](std::int64_t k) {
    const std::int64_t from = k == 0 ? 0 : std::int64_t(rows[k - 1]) + 1;  // rows (rows[k-1], rows[k]] start at k
    const std::int64_t to = k == np ? n : std::int64_t(rows[k]);
    for (std::int64_t i = from; i <= to; ++i) offsets[i] = static_cast<std::int32_t>(k);
  });
}

// dst = src, on the OpenMP threads above parallel_min entries.
template <class T>
void parallel_copy(const std::vector<T>& src, std::vector<T>& dst, std::size_t parallel_min) {
  dst.resize(src.size());
  const T* from = src.data();
  T* to = dst.data();
  parallel_for(static_cast<std::int64_t>(src.size()), parallel_min, 0, [&](std::int64_t i) { to[i] = from[i]; });
}

// An allocator that leaves elements made without a value uninitialised (std::allocator's
// value-initialisation zeroes them, on one thread): for arrays every element of which a parallel
// pass writes before any read (the pair history of a rebuild, the pair loads).
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using NoInitVector = std::vector<T, NoInitAllocator<T>>;

// v.resize(n) for arrays that persist from one neighbour rebuild to the next and are rewritten
// in full after it (their values are left unspecified here: nothing is copied), with a capacity
// of at most n + n/8: a plain resize that grows doubles the capacity, and the doubled arrays
// stayed (a fifth more memory per pair on the ribbon mixer). A new allocation leaves room for
// n + n/16, so that lists that wobble from one rebuild to the next keep their memory.
template <class V>
void resize_snug(V& v, std::size_t n) {
  if (v.capacity() < n || v.capacity() > n + n / 8) {
    V fresh;
    fresh.reserve(n + n / 16);
    v.swap(fresh);
  }
  v.resize(n);
}

// The cursors of a scatter without atomics, scanned by the whole team: called by every thread t
// of a parallel region of nt threads once each has counted its entries per row in cursor[t][i].
// Row i takes own(i) entries first, then those of threads 0, 1, ... in order; the counts become
// each (row, thread)'s first position, start[i] the row's first position and start[n] the total.
// The rows are split into nt contiguous blocks; each thread sums the blocks before its own, so the
// positions are the integers of the serial scan for any nt. block_total: nt entries, shared.
template <class Own>
void scan_row_cursors(std::int64_t n, int t, int nt, const Own& own, std::vector<std::vector<std::int32_t>>& cursor,
                      std::int32_t* start, std::vector<std::int64_t>& block_total) {
  const std::int64_t i0 = n * t / nt, i1 = n * (t + 1) / nt;
  std::int64_t sum = 0;
  for (std::int64_t i = i0; i < i1; ++i) {
    sum += own(i);
    for (int u = 0; u < nt; ++u) sum += cursor[u][i];
  }
  block_total[t] = sum;
#pragma omp barrier
  std::int64_t c = 0;
  for (int u = 0; u < t; ++u) c += block_total[u];
  for (std::int64_t i = i0; i < i1; ++i) {
    start[i] = static_cast<std::int32_t>(c);
    c += own(i);
    for (int u = 0; u < nt; ++u) {
      const std::int32_t k = cursor[u][i];
      cursor[u][i] = static_cast<std::int32_t>(c);
      c += k;
    }
  }
  if (t == nt - 1) start[n] = static_cast<std::int32_t>(c);
#pragma omp barrier
}

}  // namespace dem::host
