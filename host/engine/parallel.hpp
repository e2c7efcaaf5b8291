// The host engine's one loop seam: a core/ phase body run for every index on the OpenMP threads.
// The device engine runs the same bodies through thrust::for_each (cuda/device_engine.inl).
#pragma once
#include <cstddef>
#include <cstdint>

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

}  // namespace dem::host
