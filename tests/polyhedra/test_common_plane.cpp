// The common plane of two convex polyhedra (core/geometry/common_plane.hpp) against exact
// answers: for separated pairs the largest gap is the bodies' distance (brute force over the
// vertex-face and edge-edge feature pairs); for pairs in contact it is minus the penetration depth,
// which the separating-axis test gives exactly. The shapes are the paper's (§7.2: 4, 5, 8 and 14
// vertices) at random poses and sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/contact/polyhedron_contact.hpp"
#include "core/geometry/common_plane.hpp"
#include "host/sim/polyhedron_shape.hpp"

namespace dem {
namespace {

using host::builtin_polyhedron;
using host::make_poly_shape;

const std::vector<PolyShape>& paper_shapes() {
  static const std::vector<PolyShape> shapes = [] {
    std::vector<PolyShape> s;
    for (const char* name : {"tetrahedron", "square_pyramid", "cube", "rhombic_dodecahedron"})
      s.push_back(make_poly_shape(builtin_polyhedron(name, {}, "test"), name));
    return s;
  }();
  return shapes;
}

Quat random_orientation(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  return normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
}

// ---- Brute-force distance between separated convex polyhedra

Vec3 closest_on_segment(Vec3 p, Vec3 a, Vec3 b) {
  const Vec3 d = b - a;
  const double t = std::clamp(double(dot(p - a, d) / dot(d, d)), 0.0, 1.0);
  return a + t * d;
}

// Ericson, Real-Time Collision Detection §5.1.9.
double segment_distance(Vec3 p1, Vec3 q1, Vec3 p2, Vec3 q2) {
  const Vec3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = dot(d1, d1), e = dot(d2, d2), f = dot(d2, r), c = dot(d1, r), b = dot(d1, d2);
  const double denom = a * e - b * b;
  double s = denom > 1e-300 ? std::clamp((b * f - c * e) / denom, 0.0, 1.0) : 0.0;
  double t = (b * s + f) / e;
  if (t < 0) {
    t = 0;
    s = std::clamp(-c / a, 0.0, 1.0);
  } else if (t > 1) {
    t = 1;
    s = std::clamp((b - c) / a, 0.0, 1.0);
  }
  return norm((p1 + s * d1) - (p2 + t * d2));
}

// Distance from p to face f of a placed polyhedron (its outward normal n).
double face_distance(Vec3 p, const PolyShape& s, const PlacedVertices& pv, int f, Vec3 n) {
  const int begin = s.face_start[f], end = s.face_start[f + 1];
  bool inside = true;
  for (int k = begin; k < end; ++k) {
    const Vec3 a = pv.v[s.face_vertex[k]], b = pv.v[s.face_vertex[k + 1 < end ? k + 1 : begin]];
    if (dot(cross(b - a, p - a), n) < 0) inside = false;
  }
  if (inside) return std::abs(double(dot(p - pv.v[s.face_vertex[begin]], n)));
  double best = 1e300;
  for (int k = begin; k < end; ++k) {
    const Vec3 a = pv.v[s.face_vertex[k]], b = pv.v[s.face_vertex[k + 1 < end ? k + 1 : begin]];
    best = std::min(best, double(norm(p - closest_on_segment(p, a, b))));
  }
  return best;
}

double exact_distance(const PolyShape& sa, Quat qa, const PlacedVertices& A, const PolyShape& sb, Quat qb,
                      const PlacedVertices& B) {
  double d = 1e300;
  for (int f = 0; f < sb.num_faces; ++f)
    for (int k = 0; k < A.n; ++k) d = std::min(d, face_distance(A.v[k], sb, B, f, rotate(qb, sb.face_normal[f])));
  for (int f = 0; f < sa.num_faces; ++f)
    for (int k = 0; k < B.n; ++k) d = std::min(d, face_distance(B.v[k], sa, A, f, rotate(qa, sa.face_normal[f])));
  for (int ea = 0; ea < sa.num_edges; ++ea)
    for (int eb = 0; eb < sb.num_edges; ++eb)
      d = std::min(d, segment_distance(A.v[sa.edge[ea][0]], A.v[sa.edge[ea][1]], B.v[sb.edge[eb][0]], B.v[sb.edge[eb][1]]));
  return d;
}

struct Pair {
  int shape_a, shape_b;
  Quat qa, qb;
  double size_a, size_b;
  Vec3 offset;  // B's centroid, A's at the origin
  PlacedVertices A, B;
  void place() {
    const std::vector<PolyShape>& s = paper_shapes();
    place_vertices(s[shape_a], qa, size_a, Vec3{0, 0, 0}, A);
    place_vertices(s[shape_b], qb, size_b, offset, B);
  }
};

// A random pair whose bounding spheres overlap or nearly touch: B's centroid along a random
// direction, at a distance drawn between 0.6 and 1.05 of the sum of the bounding radii.
Pair random_pair(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> shape(0, 3);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> g(0, 1);
  const std::vector<PolyShape>& s = paper_shapes();
  Pair p;
  p.shape_a = shape(rng);
  p.shape_b = shape(rng);
  p.qa = random_orientation(rng);
  p.qb = random_orientation(rng);
  p.size_a = 0.5 + u(rng);
  p.size_b = 0.5 + u(rng);
  const Vec3 dir = normalized(Vec3{g(rng), g(rng), g(rng)});
  const double reach = s[p.shape_a].bounding_radius * p.size_a + s[p.shape_b].bounding_radius * p.size_b;
  p.offset = (0.6 + 0.45 * u(rng)) * reach * dir;
  p.place();
  return p;
}

double pair_size(const Pair& p) { return std::max(p.size_a, p.size_b); }

TEST(CommonPlane, FcpGapIsTheExactDistanceOfSeparatedPairs) {
  std::mt19937_64 rng(2004);
  const std::vector<PolyShape>& s = paper_shapes();
  int separated = 0, tried = 0;
  std::array<int, 6> types{};
  double worst = 0, worst_iterative = 0;
  long rounds = 0;
  int max_rounds = 0;
  const int kPairs = 100000, kIterative = 10000;
  while (separated < kPairs) {
    ++tried;
    Pair p = random_pair(rng);
    const PolyShape &sa = s[p.shape_a], &sb = s[p.shape_b];
    if (separating_axis_plane(sa, p.qa, p.A, sb, p.qb, p.B).gap <= 0) continue;  // overlapping
    ++separated;
    const double exact = exact_distance(sa, p.qa, p.A, sb, p.qb, p.B);
    const CommonPlane cp = fast_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, p.offset, 1e300);
    const double err = std::abs(cp.gap - exact) / pair_size(p);
    worst = std::max(worst, err);
    if (err > 1e-9) {
      ADD_FAILURE() << "pair " << separated << ": FCP gap " << cp.gap << ", exact distance " << exact << " (type "
                    << int(cp.type) << ", " << cp.iterations << " rounds)";
      if (::testing::Test::HasFailure() && separated > 10) return;
    }
    // the plane passes midway and separates: each body on its side, at half the gap
    EXPECT_NEAR(plane_gap(p.A, p.B, cp.n), cp.gap, 1e-12 * pair_size(p));
    ++types[static_cast<int>(cp.type)];
    rounds += cp.iterations;
    max_rounds = std::max(max_rounds, int(cp.iterations));
    if (separated <= kIterative) {
      const CommonPlane it = iterative_common_plane(p.A, p.B, p.offset, 1e300);
      worst_iterative = std::max(worst_iterative, (exact - it.gap) / pair_size(p));
      EXPECT_LE(it.gap, exact + 1e-12 * pair_size(p));
    }
  }
  std::printf("%d separated pairs of %d drawn; final plane types: bisector %d, face %d, edge-edge %d, edge %d; "
              "FCP rounds %.2f on average from the centroids' bisector, at most %d; worst |gap - distance| %.2e of "
              "the size; the iterative search's worst shortfall %.2e (first %d pairs)\n",
              separated, tried, types[1], types[2], types[3], types[4], double(rounds) / separated, max_rounds, worst,
              worst_iterative, kIterative);
  // every candidate type of §5 is the answer somewhere
  for (int t = 1; t <= 4; ++t) EXPECT_GT(types[t], 0) << "plane type " << t;
  // The iterative search stops at a step of 1e-7: at a ridge of the gap (edge-edge, vertex-face)
  // the shortfall is first order in the step, times the pair's size.
  EXPECT_LT(worst_iterative, 1e-6);
}

// Pairs driven into contact over many small steps (B moves towards A and both turn a little), the
// plane carried from step to step as in a run (§6.2): the verdict is the separating-axis test's,
// the gap never above minus the penetration depth, and within 1e-6 of it while the overlap is
// below 1 % of the size.
TEST(CommonPlane, PairsDrivenIntoContactKeepTheSeparatingAxisDepth) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0, 1);
  const std::vector<PolyShape>& s = paper_shapes();
  double worst_small = 0;
  int contacts = 0, small = 0;
  long rounds = 0, searches = 0;
  int max_rounds = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    Pair p = random_pair(rng);
    const PolyShape &sa = s[p.shape_a], &sb = s[p.shape_b];
    if (separating_axis_plane(sa, p.qa, p.A, sb, p.qb, p.B).gap <= 0) continue;
    CommonPlane cp = fast_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, p.offset, 1e300);
    const Vec3 towards = -normalized(p.offset);
    const double size = pair_size(p);
    const double step = (cp.gap + 0.03 * size) / 200;  // 200 steps to 3 % of the size in overlap
    const Vec3 spin_a = 1e-3 * Vec3{g(rng), g(rng), g(rng)}, spin_b = 1e-3 * Vec3{g(rng), g(rng), g(rng)};
    PlacedVertices moved;
    for (int k = 0; k < 200; ++k) {
      p.offset += step * towards;
      p.qa = normalized(quat_from_rotation_vector(spin_a) * p.qa);
      p.qb = normalized(quat_from_rotation_vector(spin_b) * p.qb);
      p.place();
      cp = cp.gap < 0 ? contact_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, cp, moved)
                      : fast_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, cp.n, 1e300);
      rounds += cp.iterations;
      ++searches;
      max_rounds = std::max(max_rounds, int(cp.iterations));
      const double sat = separating_axis_plane(sa, p.qa, p.A, sb, p.qb, p.B).gap;
      ASSERT_EQ(cp.gap < 0, sat < 0) << "trial " << trial << " step " << k << ": FCP " << cp.gap << ", SAT " << sat;
      if (sat >= 0) continue;
      ++contacts;
      ASSERT_LE(cp.gap, sat + 1e-12 * size) << "trial " << trial << " step " << k;
      if (-sat < 0.01 * size) {
        ++small;
        worst_small = std::max(worst_small, (sat - cp.gap) / size);
        EXPECT_LE(sat - cp.gap, 1e-6 * size) << "trial " << trial << " step " << k << ": overlap " << -sat;
      }
    }
  }
  std::printf("%d contact states (%d below 1 %% overlap): worst shortfall of the gap from minus the depth %.2e of "
              "the size; %.2f rounds per search from the previous plane, at most %d\n",
              contacts, small, worst_small, double(rounds) / searches, max_rounds);
  EXPECT_GT(small, 5000);
  // warm-started from the last plane, as in a run: the paper measured 1.54 rounds, at most 4
  EXPECT_LT(double(rounds) / searches, 2.5);
}

TEST(CommonPlane, TheSeparatingAxisPlaneOfTwoOverlappingCubesIsTheirOverlap) {
  const PolyShape cube = make_poly_shape(builtin_polyhedron("cube", {}, "t"), "t");
  const double side = std::cbrt(3.14159265358979323846 / 6);  // the unit cube's side at d_v = 1
  PlacedVertices A, B;
  place_vertices(cube, quat_identity(), 1, Vec3{0, 0, 0}, A);
  place_vertices(cube, quat_identity(), 1, Vec3{side - 0.01, 0.2, -0.1}, B);
  const CommonPlane cp = separating_axis_plane(cube, quat_identity(), A, cube, quat_identity(), B);
  EXPECT_NEAR(cp.gap, -0.01, 1e-14);
  EXPECT_NEAR(std::abs(cp.n.x), 1, 1e-15);
  EXPECT_GT(cp.n.x, 0);  // from A towards B
  EXPECT_EQ(cp.type, PlaneType::kFace);
}

// §6.3: the approximation keeps the features; unmoved it gives the plane back, and after a small
// motion its gap is the exact one's to first order of the motion.
TEST(CommonPlane, TheSlowPairApproximationFollowsItsFeatures) {
  std::mt19937_64 rng(63);
  std::normal_distribution<double> g(0, 1);
  const std::vector<PolyShape>& s = paper_shapes();
  int tested = 0;
  while (tested < 2000) {
    Pair p = random_pair(rng);
    const PolyShape &sa = s[p.shape_a], &sb = s[p.shape_b];
    if (separating_axis_plane(sa, p.qa, p.A, sb, p.qb, p.B).gap <= 0) continue;
    ++tested;
    const CommonPlane cp = fast_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, p.offset, 1e300);
    const CommonPlane same = approximate_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, cp);
    EXPECT_NEAR(same.gap, cp.gap, 1e-12 * pair_size(p));
    EXPECT_NEAR(norm(same.n - cp.n), 0, 1e-9);
    const double move = 1e-5 * pair_size(p);
    p.offset += move * normalized(Vec3{g(rng), g(rng), g(rng)});
    p.qb = normalized(quat_from_rotation_vector(1e-5 * normalized(Vec3{g(rng), g(rng), g(rng)})) * p.qb);
    p.place();
    const CommonPlane exact = fast_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, cp.n, 1e300);
    const CommonPlane approx = approximate_common_plane(sa, p.qa, p.A, sb, p.qb, p.B, cp);
    EXPECT_LT(std::abs(exact.gap - approx.gap), 4 * move);
  }
}


// A sphere's centre against a polyhedron: the gap is the centre's exact distance outside
// (brute force over the faces) and minus its distance to the nearest face plane inside, for
// 100,000 random centres around the paper's shapes at random poses; and the three kinds of
// closest feature of a cube (face, edge, corner) in closed form.
TEST(CommonPlane, ASphereCentreAgainstAPolyhedronHasItsExactDistance) {
  std::mt19937_64 rng(77);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<PolyShape>& s = paper_shapes();
  double worst = 0;
  int inside = 0;
  for (int k = 0; k < 100000; ++k) {
    const PolyShape& sa = s[k % 4];
    const Quat q = random_orientation(rng);
    const double size = 0.5 + u(rng);
    PlacedVertices A;
    place_vertices(sa, q, size, Vec3{0, 0, 0}, A);
    const Vec3 c = (1.3 * sa.bounding_radius * size * u(rng)) * normalized(Vec3{g(rng), g(rng), g(rng)});
    const CommonPlane cp = sphere_polyhedron_plane(sa, q, A, c);
    double want = 1e300, plane = -1e300;
    for (int f = 0; f < sa.num_faces; ++f) {
      const Vec3 n = rotate(q, sa.face_normal[f]);
      want = std::min(want, face_distance(c, sa, A, f, n));
      plane = std::max(plane, double(dot(n, c - A.v[sa.face_vertex[sa.face_start[f]]])));
    }
    if (plane <= 0) {
      want = plane;  // inside: minus the distance to the nearest face's plane
      ++inside;
    }
    worst = std::max(worst, std::abs(cp.gap - want) / size);
    ASSERT_NEAR(cp.gap, want, 1e-12 * size) << "centre " << k << (plane <= 0 ? " (inside)" : "");
    ASSERT_NEAR(norm(cp.n), 1, 1e-12);
  }
  std::printf("100000 centres (%d inside): the gap within %.1e of the size of the exact distance\n", inside, worst);
  EXPECT_GT(inside, 10000);
  // A cube of side a at the origin, along the axes: over a face, beside an edge, past a corner.
  const PolyShape& cube = s[2];
  const double a = std::cbrt(3.14159265358979323846 / 6), h = 0.5 * a;
  PlacedVertices A;
  place_vertices(cube, quat_identity(), 1, Vec3{0, 0, 0}, A);
  EXPECT_NEAR(sphere_polyhedron_plane(cube, quat_identity(), A, Vec3{0.1, -0.2, h + 0.3}).gap, 0.3, 1e-14);
  EXPECT_NEAR(sphere_polyhedron_plane(cube, quat_identity(), A, Vec3{h + 0.3, 0.1, h + 0.4}).gap, 0.5, 1e-14);
  EXPECT_NEAR(sphere_polyhedron_plane(cube, quat_identity(), A, Vec3{h + 0.2, h + 0.3, h + 0.6}).gap, 0.7, 1e-14);
  const CommonPlane in = sphere_polyhedron_plane(cube, quat_identity(), A, Vec3{0.1, 0.05, h - 0.02});
  EXPECT_NEAR(in.gap, -0.02, 1e-14);
  EXPECT_NEAR(in.n.z, 1, 1e-15);
  const PolyContact c = sphere_polyhedron_contact(in, Vec3{0.1, 0.05, h - 0.02}, 0.1);
  EXPECT_NEAR(c.depth, 0.12, 1e-14);
  EXPECT_NEAR(c.point.z, h - 0.02 - (0.1 - 0.06), 1e-14);  // midway through the overlap
}

}  // namespace
}  // namespace dem
