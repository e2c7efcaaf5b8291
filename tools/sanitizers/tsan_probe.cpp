// tools/tsan's check of itself: that ThreadSanitizer, with Archer, reports a race between OpenMP
// threads, and reports none where OpenMP orders the accesses. Without the first, a clean run of
// the suite would prove nothing; without the second, every report would be suspect.
//
//   tsan_probe race     two threads add to one plain integer, unordered: must be reported
//   tsan_probe ordered  the same adds in a reduction, then read after the region's barrier, and a
//                       shared array written by one thread before a barrier and read by the other
//                       after it (the pattern of the engine's passes): must not be reported
#include <cstdio>
#include <cstring>
#include <vector>

#include <omp.h>

int main(int argc, char** argv) {
  const bool race = argc > 1 && std::strcmp(argv[1], "race") == 0;
  const int n = 1 << 12;
  long sum = 0;
  if (race) {
#pragma omp parallel for num_threads(2) schedule(static)
    for (int i = 0; i < n; ++i) sum += i;  // the race
  } else {
#pragma omp parallel for num_threads(2) schedule(static) reduction(+ : sum)
    for (int i = 0; i < n; ++i) sum += i;
    std::vector<long> cells(n, 0);
#pragma omp parallel num_threads(2)
    {
      const int t = omp_get_thread_num();
#pragma omp for schedule(static)
      for (int i = 0; i < n; ++i) cells[i] = i;
      // (the implicit barrier at the loop's end orders these writes before the reads below)
      long own = 0;
      for (int i = t; i < n; i += 2) own += cells[n - 1 - i];
#pragma omp atomic
      sum += own;
    }
  }
  std::printf("%ld\n", sum);
  return 0;
}
