// Sphere against planar convex polygons: Fast Intersection Test, Contact Type Hierarchy and nodal
// weights against a brute-force oracle (tests/support/random_geometry.hpp).
#include <gtest/gtest.h>

#include <random>

#include "core/dhm/fast_intersection.hpp"
#include "core/dhm/h2_filter.hpp"
#include "core/geometry/sphere_sphere.hpp"
#include "support/random_geometry.hpp"

namespace dem {
namespace {

// Coordinates are O(1) and each result takes O(10) double operations: 1e-9 leaves six orders of
// magnitude above round-off (1e-15) while catching any wrong formula.
constexpr double kGeomTol = 1e-9;
// Samples whose closest point lies within this distance of a region change (facet/edge/vertex)
// are skipped for the type check: there both answers are right up to round-off.
constexpr double kAmbiguous = 1e-7;

Vec3 sample_near(std::mt19937_64& rng, const Polygon& p) {
  // Centres near the polygon: around a random vertex, edge point or interior point, so that all
  // three contact types and misses occur often.
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> pick(0, p.n - 1);
  const Vec3 base = p.v[pick(rng)];
  return base + Vec3{u(rng), u(rng), u(rng)} * 0.8;
}

class PolygonOracle : public ::testing::TestWithParam<int> {};

TEST_P(PolygonOracle, FitAndTypeHierarchyMatchBruteForce) {
  const int n_vertices = GetParam();
  std::mt19937_64 rng(1234 + n_vertices);
  std::uniform_real_distribution<double> radius(0.05, 0.9);
  int counted[3] = {0, 0, 0}, hits = 0, misses = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const Polygon poly = test::random_convex_polygon(rng, n_vertices);
    const Vec3 c = sample_near(rng, poly);
    const double r = radius(rng);
    const test::OracleResult o = test::polygon_oracle(poly, c);
    if (std::abs(o.distance - r) < kAmbiguous) continue;  // grazing: both answers are right
    const bool touching = o.distance <= r;
    ASSERT_EQ(fast_intersection_test(poly, c, r), touching) << "trial " << trial;

    H2Accumulator acc;
    h2_begin(acc, c);
    contact_type_hierarchy(acc, poly, 7, r);
    const int valid = h2_finish(acc);
    if (!touching) {
      ASSERT_EQ(valid, 0);
      ++misses;
      continue;
    }
    ++hits;
    // A single convex element always reduces to exactly its closest point (the supporting plane
    // at the closest point separates the rest of the element, so Table 4 removes every other
    // candidate).
    ASSERT_EQ(valid, 1) << "trial " << trial;
    EXPECT_NEAR(acc.c[0].point.x, o.point.x, kGeomTol);
    EXPECT_NEAR(acc.c[0].point.y, o.point.y, kGeomTol);
    EXPECT_NEAR(acc.c[0].point.z, o.point.z, kGeomTol);
    EXPECT_NEAR(acc.c[0].distance, o.distance, kGeomTol);
    EXPECT_EQ(acc.c[0].element, 7);
    if (o.boundary_margin > kAmbiguous) {
      ASSERT_EQ(acc.c[0].type, o.type) << "trial " << trial;
      ++counted[static_cast<int>(o.type)];
    }
    // Weights: non-negative, sum to one, interpolate the contact point.
    real w[kMaxPolygonVertices];
    entity_weights(poly, acc.c[0], w);
    double sum = 0;
    Vec3 x{0, 0, 0};
    for (int i = 0; i < poly.n; ++i) {
      EXPECT_GE(w[i], -kGeomTol);
      sum += w[i];
      x += w[i] * poly.v[i];
    }
    EXPECT_NEAR(sum, 1.0, kGeomTol);
    EXPECT_NEAR(norm(x - acc.c[0].point), 0.0, kGeomTol);
  }
  // The sampling must exercise every branch, or the test proves little.
  EXPECT_GT(counted[0], 500);
  EXPECT_GT(counted[1], 500);
  EXPECT_GT(counted[2], 200);
  EXPECT_GT(misses, 500);
  EXPECT_GT(hits, 2000);
}

INSTANTIATE_TEST_SUITE_P(TrianglesQuadsPentagonsHexagons, PolygonOracle, ::testing::Values(3, 4, 5, 6),
                         [](const ::testing::TestParamInfo<int>& param_info) { return std::to_string(param_info.param) + "_gon"; });

// The mesh pass skips gathering an element whose plane the sphere does not reach: that pre-test
// must be the Fast Intersection Test's own first step, to the bit (radii at the exact plane
// distance included), so no element it drops could have passed.
TEST(Polygon, PlaneReachIsTheFirstStepOfTheFastIntersectionTest) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> radius(0.05, 0.9);
  int dropped = 0, kept = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const Polygon poly = test::random_convex_polygon(rng, 3 + trial % 4);
    const Vec3 n0 = polygon_normal(poly);
    const Vec3 c = sample_near(rng, poly);
    const double distance = project_on_polygon(poly, n0, c).distance;
    for (const double r : {radius(rng), distance}) {
      const bool reach = reaches_plane(poly.v[0], n0, c, r);
      ASSERT_EQ(reach, !(distance > r)) << "trial " << trial;
      if (!reach) {
        ASSERT_FALSE(fast_intersection_test(poly, n0, c, r)) << "trial " << trial;
        ++dropped;
      } else {
        ++kept;
      }
    }
  }
  EXPECT_GT(dropped, 2000);  // both outcomes are exercised
  EXPECT_GT(kept, 20000);
}

TEST(Polygon, ZeroThicknessWallIsContactedFromBothSides) {
  const Polygon tri{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, 3};
  for (double side : {1.0, -1.0}) {
    const Vec3 c{0.25, 0.25, 0.1 * side};
    EXPECT_TRUE(fast_intersection_test(tri, c, 0.2));
    const PlaneProjection pp = project_on_polygon(tri, c);
    EXPECT_NEAR(pp.normal.z, side, 1e-15);  // normal points towards the centre
    EXPECT_NEAR(pp.distance, 0.1, 1e-15);
    EXPECT_EQ(pp.first_out, -1);
  }
}

TEST(Polygon, QuadWeightsMatchEq28OnParallelograms) {
  // Zhong's Eq. 28-29 for a parallelogram; our Wachspress form must coincide with it there.
  const Polygon q{{{0, 0, 0}, {2, 0, 0}, {2.7, 1, 0}, {0.7, 1, 0}}, 4};
  const Vec3 x{1.1, 0.35, 0};
  const Vec3 n{0, 0, 1};
  double d[4];
  for (int a = 0; a < 4; ++a) d[a] = 0.5 * signed_area2(x, q.v[a], q.v[(a + 1) % 4], n);
  const double dq = (d[0] + d[2]) * (d[1] + d[3]);
  const double eq28[4] = {d[1] * d[2] / dq, d[2] * d[3] / dq, d[3] * d[0] / dq, d[0] * d[1] / dq};
  real w[4];
  polygon_weights(q, n, x, w);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(w[i], eq28[i], 1e-14);  // same rational function
}

TEST(Polygon, WeightsOnTheBoundaryStayFinite) {
  // The cotangent form of Eq. 32 divides by zero on an edge; the product form must not.
  const Polygon p{{{0, 0, 0}, {2, 0, 0}, {3, 1, 0}, {1, 2, 0}, {-1, 1, 0}}, 5};
  const Vec3 on_edge = 0.3 * p.v[1] + 0.7 * p.v[2];
  real w[5];
  polygon_weights(p, Vec3{0, 0, 1}, on_edge, w);
  EXPECT_NEAR(w[1], 0.3, 1e-14);
  EXPECT_NEAR(w[2], 0.7, 1e-14);
  EXPECT_NEAR(w[0] + w[3] + w[4], 0.0, 1e-14);
}

TEST(SphereSphere, OverlapNormalAndContactPoint) {
  const ContactGeometry g = sphere_sphere(Vec3{0, 0, 1.9}, 1.0, Vec3{0, 0, 0}, 1.0);
  EXPECT_NEAR(g.overlap, 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(g.normal.z, 1.0);
  EXPECT_NEAR(g.point.z, 0.95, 1e-15);  // middle of the overlap zone
  const ContactGeometry apart = sphere_sphere(Vec3{3, 0, 0}, 1.0, Vec3{0, 0, 0}, 0.5);
  EXPECT_DOUBLE_EQ(apart.overlap, -1.5);
  const Vec3 vp = rigid_point_velocity(Vec3{1, 0, 0}, Vec3{0, 0, 2}, Vec3{0, 0, 0}, Vec3{0, 1, 0});
  EXPECT_DOUBLE_EQ(vp.x, 1.0 - 2.0);  // w x r = (0,0,2) x (0,1,0) = (-2,0,0)
}

TEST(SphereSphere, CheapOverlapTestAgreesWithTheGeometry) {
  // spheres_overlap (no square root) is the engine's test before sphere_sphere: it must say
  // "touching" exactly where the overlap is positive, away from rounding at exact touching.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  int touching = 0;
  for (int k = 0; k < 20000; ++k) {
    const Vec3 a{u(rng), u(rng), u(rng)}, b{u(rng), u(rng), u(rng)};
    const double ra = 0.1 + 0.5 * (u(rng) + 1), rb = 0.1 + 0.5 * (u(rng) + 1);
    const double overlap = sphere_sphere(a, ra, b, rb).overlap;
    if (std::abs(overlap) < 1e-12) continue;
    EXPECT_EQ(spheres_overlap(a, ra, b, rb), overlap > 0) << k;
    touching += overlap > 0 ? 1 : 0;
  }
  EXPECT_GT(touching, 1000);
  EXPECT_LT(touching, 19000);
}

}  // namespace
}  // namespace dem
