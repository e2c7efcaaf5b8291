// The common plane's searches against each other (core/geometry/common_plane.hpp), on the paper's
// shapes (nezami2004 §7.2: 4, 5, 8 and 14 vertices) at random poses and sizes: time per search and
// rounds (FCP) or gap evaluations (the iterative search), from a cold start (the centroids'
// bisector) and warm, as in a run (each pair moved by a small step and turned a little, the plane
// carried from the last step; pairs in contact through §6.2), and §6.3's approximation.
//   dem_common_plane_bench [--pairs N] [--steps S] [--seed K]
// Speed is reported, not asserted (bench/README.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/geometry/common_plane.hpp"
#include "host/sim/polyhedron_shape.hpp"

using namespace dem;

namespace {

struct Pair {
  int sa, sb;
  Quat qa, qb;
  real size_a, size_b;
  Vec3 offset, drift, spin_a, spin_b;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int pairs = 20000, steps = 100;
  unsigned seed = 2004;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pairs")) pairs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = static_cast<unsigned>(std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: %s [--pairs N] [--steps S] [--seed K]\n", argv[0]);
      return 2;
    }
  }
  std::vector<PolyShape> shapes;
  for (const char* name : {"tetrahedron", "square_pyramid", "cube", "rhombic_dodecahedron"})
    shapes.push_back(host::make_poly_shape(host::builtin_polyhedron(name, {}, "bench"), name));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  std::uniform_int_distribution<int> pick(0, 3);
  // Pairs within 1 % of the size of touching, closing at 1e-4 of the size a step (a fast grain
  // at a DEM time step), turning by up to 1e-4 rad a step.
  std::vector<Pair> set;
  while (static_cast<int>(set.size()) < pairs) {
    Pair p;
    p.sa = pick(rng);
    p.sb = pick(rng);
    p.qa = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    p.qb = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    p.size_a = 0.5 + u(rng);
    p.size_b = 0.5 + u(rng);
    const Vec3 dir = normalized(Vec3{g(rng), g(rng), g(rng)});
    p.offset = (shapes[p.sa].bounding_radius * p.size_a + shapes[p.sb].bounding_radius * p.size_b) * dir;
    PlacedVertices A, B;
    place_vertices(shapes[p.sa], p.qa, p.size_a, Vec3{0, 0, 0}, A);
    place_vertices(shapes[p.sb], p.qb, p.size_b, p.offset, B);
    const real gap = fast_common_plane(shapes[p.sa], p.qa, A, shapes[p.sb], p.qb, B, p.offset, real(1e300)).gap;
    if (!(gap > 0)) continue;
    p.offset -= (gap - 0.01 * std::max(p.size_a, p.size_b)) * dir;  // the gap falls by at most this
    p.drift = -1e-4 * std::max(p.size_a, p.size_b) * dir;
    p.spin_a = 1e-4 * normalized(Vec3{g(rng), g(rng), g(rng)});
    p.spin_b = 1e-4 * normalized(Vec3{g(rng), g(rng), g(rng)});
    set.push_back(p);
  }
  std::printf("%d pairs of the paper's shapes (4, 5, 8, 14 vertices) within 1 %% of the size of touching\n", pairs);

  // Cold: from the centroids' bisector.
  long rounds = 0, evaluations = 0;
  int max_rounds = 0;
  double sink = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (const Pair& p : set) {
    PlacedVertices A, B;
    place_vertices(shapes[p.sa], p.qa, p.size_a, Vec3{0, 0, 0}, A);
    place_vertices(shapes[p.sb], p.qb, p.size_b, p.offset, B);
    const CommonPlane cp = fast_common_plane(shapes[p.sa], p.qa, A, shapes[p.sb], p.qb, B, p.offset, real(1e300));
    rounds += cp.iterations;
    max_rounds = std::max(max_rounds, int(cp.iterations));
    sink += cp.gap;
  }
  const double fcp_cold = seconds_since(t0) / pairs;
  t0 = std::chrono::steady_clock::now();
  for (const Pair& p : set) {
    PlacedVertices A, B;
    place_vertices(shapes[p.sa], p.qa, p.size_a, Vec3{0, 0, 0}, A);
    place_vertices(shapes[p.sb], p.qb, p.size_b, p.offset, B);
    const CommonPlane cp = iterative_common_plane(A, B, p.offset, real(1e300));
    evaluations += cp.iterations;
    sink += cp.gap;
  }
  const double it_cold = seconds_since(t0) / pairs;
  std::printf("cold (from the centroids' bisector): FCP %.2f us a search (%.2f rounds, at most %d); iterative %.2f us "
              "(%.0f gap evaluations); iterative / FCP %.1f\n",
              fcp_cold * 1e6, double(rounds) / pairs, max_rounds, it_cold * 1e6, double(evaluations) / pairs,
              it_cold / fcp_cold);

  // Warm, as in a run: `steps` steps of each pair, the plane carried from step to step.
  auto run = [&](int method, long& count, int& most, long& in_contact) {
    count = 0;
    most = 0;
    in_contact = 0;
    double spent = 0;
    for (Pair p : set) {
      PlacedVertices A, B, moved;
      place_vertices(shapes[p.sa], p.qa, p.size_a, Vec3{0, 0, 0}, A);
      place_vertices(shapes[p.sb], p.qb, p.size_b, p.offset, B);
      CommonPlane cp = fast_common_plane(shapes[p.sa], p.qa, A, shapes[p.sb], p.qb, B, p.offset, real(1e300));
      for (int s = 0; s < steps; ++s) {
        p.offset += p.drift;
        p.qa = normalized(quat_from_rotation_vector(p.spin_a) * p.qa);
        p.qb = normalized(quat_from_rotation_vector(p.spin_b) * p.qb);
        place_vertices(shapes[p.sa], p.qa, p.size_a, Vec3{0, 0, 0}, A);
        place_vertices(shapes[p.sb], p.qb, p.size_b, p.offset, B);
        const auto t = std::chrono::steady_clock::now();
        if (method == 0)
          cp = cp.gap < 0 ? contact_common_plane(shapes[p.sa], p.qa, A, shapes[p.sb], p.qb, B, cp, moved)
                          : fast_common_plane(shapes[p.sa], p.qa, A, shapes[p.sb], p.qb, B, cp.n, real(1e300));
        else if (method == 1)
          cp = iterative_common_plane(A, B, cp.n, real(1e300));
        else
          cp = approximate_common_plane(shapes[p.sa], p.qa, A, shapes[p.sb], p.qb, B, cp);
        spent += seconds_since(t);
        count += cp.iterations;
        most = std::max(most, int(cp.iterations));
        in_contact += cp.gap < 0 ? 1 : 0;
        sink += cp.gap;
      }
    }
    return spent / (double(pairs) * steps);
  };
  long fcp_count, it_count, ap_count, fcp_contact, it_contact, ap_contact;
  int fcp_most, it_most, ap_most;
  const double fcp_warm = run(0, fcp_count, fcp_most, fcp_contact);
  const double it_warm = run(1, it_count, it_most, it_contact);
  const double ap_warm = run(2, ap_count, ap_most, ap_contact);
  const double searches = double(pairs) * steps;
  std::printf("warm (%d steps a pair, the last plane carried; %.0f %% of the searches in contact):\n", steps,
              100.0 * fcp_contact / searches);
  std::printf("  FCP (6.1, and 6.2 in contact)   %.3f us a search, %.2f rounds (at most %d)\n", fcp_warm * 1e6,
              fcp_count / searches, fcp_most);
  std::printf("  iterative (4), from the last   %.3f us a search, %.1f gap evaluations; iterative / FCP %.1f\n",
              it_warm * 1e6, it_count / searches, it_warm / fcp_warm);
  std::printf("  approximation (6.3)            %.3f us a search; FCP / approximation %.1f\n", ap_warm * 1e6,
              fcp_warm / ap_warm);
  std::printf("(checksum %.6g)\n", sink);
  return 0;
}
