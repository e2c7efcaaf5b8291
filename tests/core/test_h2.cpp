// The Double Hierarchy Method over several elements: the paper's Table 5 situations and Fig. 16,
// order independence, the coplanar tolerance (Sect. 7.1) and the capacity limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/contact/normal_tangential.hpp"
#include "core/dhm/h2_filter.hpp"

namespace dem {
namespace {

// The Mindlin-Deresiewicz and perfectly plastic histories of normal_tangential_force, which the
// laws tested here leave alone.
Vec3 unused_turn{0, 0, 0};
real unused_lock = 0;

struct Element {
  Polygon poly;
  index_t id;
};

std::vector<EntityContact> run_h2(const std::vector<Element>& elements, Vec3 c, real r,
                                  real tol = kH2DefaultCoplanarTol, int* compactions = nullptr) {
  H2Accumulator acc;
  h2_begin(acc, c, tol);
  for (const Element& e : elements)
    if (fast_intersection_test(e.poly, c, r)) contact_type_hierarchy(acc, e.poly, e.id, r);
  const int n = h2_finish(acc);
  if (compactions) *compactions = acc.compactions;
  return std::vector<EntityContact>(acc.c, acc.c + std::min(n, kMaxH2Candidates));
}

bool same_contacts(const std::vector<EntityContact>& a, const std::vector<EntityContact>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].element != b[i].element || a[i].type != b[i].type || a[i].entity != b[i].entity ||
        a[i].point.x != b[i].point.x || a[i].point.y != b[i].point.y || a[i].point.z != b[i].point.z)
      return false;
  return true;
}

Polygon quad(Vec3 a, Vec3 b, Vec3 c, Vec3 d) { return Polygon{{a, b, c, d}, 4}; }

// Fig. 16 / Table 5 situation 1: a plane meshed much finer than the indentation.
std::vector<Element> fine_plane(double h, double half_width) {
  std::vector<Element> out;
  const int n = static_cast<int>(std::round(2 * half_width / h));
  index_t id = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const Vec3 p00{-half_width + i * h, -half_width + j * h, 0};
      const Vec3 p10 = p00 + Vec3{h, 0, 0}, p01 = p00 + Vec3{0, h, 0}, p11 = p00 + Vec3{h, h, 0};
      out.push_back({Polygon{{p00, p10, p11}, 3}, id++});
      out.push_back({Polygon{{p00, p11, p01}, 3}, id++});
    }
  return out;
}

TEST(DistanceHierarchy, FineMeshGivesOneNormalForceOfTheRightMagnitude) {
  // R = 0.3 with 33 % indentation as in Sect. 6.1.1; elements of 0.02 m, so ~300 elements and
  // several hundred entity candidates lie inside the contact circle (buffer compactions occur).
  const real r = 0.3, delta = 0.1;
  const std::vector<Element> mesh = fine_plane(0.02, 0.5);
  const ContactParams p = mix_contact_params(Material{100, 1e5, 0.2}, Material{0, INFINITY, 0.2},
                                             InteractionParams{0.3, 1.0, 0});
  for (Vec3 foot : {Vec3{0.0123, 0.0371, 0}, Vec3{0, 0, 0} /* a vertex shared by 6 triangles */,
                    Vec3{0.01, 0.03, 0} /* on a diagonal edge */, Vec3{0.02, 0.013, 0} /* on a grid edge */}) {
    const Vec3 c = foot + Vec3{0, 0, r - delta};
    int compactions = 0;
    const std::vector<EntityContact> valid = run_h2(mesh, c, r, kH2DefaultCoplanarTol, &compactions);
    ASSERT_EQ(valid.size(), 1u) << "foot " << foot.x << "," << foot.y;
    // Over an element's interior the contact is its facet; over a shared edge or vertex it may be
    // reported as that edge or vertex (the same point and vector, up to round-off in the mesh
    // coordinates): what matters is one contact with the plane's normal and indentation.
    if (foot.x == real(0.0123)) {
      EXPECT_EQ(valid[0].type, EntityType::Facet);
    }
    EXPECT_GT(compactions, 0);  // the capacity path is exercised
    const ContactGeometry g = entity_contact_geometry(valid[0], c, r, Vec3{0, 0, 1});
    EXPECT_NEAR(g.overlap, delta, 1e-15);
    EXPECT_NEAR(g.normal.z, 1.0, 1e-15);
    // The force the sphere feels is that of one plane: F = 4/3 E* sqrt(R) delta^1.5 (no damping,
    // no tangential motion), to round-off.
    Vec3 xi{0, 0, 0};
    const NormalTangentialResult f = normal_tangential_force(p, g.normal, g.overlap, Vec3{0, 0, 0}, r, 1.0, xi, 1e-5, unused_turn, unused_lock);
    const double expected = 4.0 / 3.0 * p.e_star * std::sqrt(r) * std::pow(delta, 1.5);
    EXPECT_NEAR(norm(f.force), expected, 1e-12 * expected);
  }
}

TEST(DistanceHierarchy, FineMeshResultIsIndependentOfElementOrder) {
  const real r = 0.3;
  std::vector<Element> mesh = fine_plane(0.05, 0.5);
  const Vec3 c{0.0123, 0.0371, 0.2};
  const std::vector<EntityContact> reference = run_h2(mesh, c, r);
  std::mt19937_64 rng(7);
  for (int k = 0; k < 50; ++k) {
    std::shuffle(mesh.begin(), mesh.end(), rng);
    ASSERT_TRUE(same_contacts(run_h2(mesh, c, r), reference)) << "shuffle " << k;
  }
}

// Table 5 situation 2: a sphere on a floor (element 4) beside a step whose convex top edge is
// shared by the step's top (element 1) and its vertical face (element 2); element 3 is the floor
// element next to 4 whose edge lies inside the sphere.
std::vector<Element> step_scene() {
  const double a = 0.2, h = 0.25;  // step face at x = -a, top at z = h (the centre's height)
  return {
      {quad({-0.7, -0.5, h}, {-a, -0.5, h}, {-a, 0.5, h}, {-0.7, 0.5, h}), 1},  // top of the step
      {quad({-a, -0.5, 0}, {-a, 0.5, 0}, {-a, 0.5, h}, {-a, -0.5, h}), 2},      // vertical face
      {quad({0.1, -0.5, 0}, {0.6, -0.5, 0}, {0.6, 0.5, 0}, {0.1, 0.5, 0}), 3},  // floor beside
      {quad({-a, -0.5, 0}, {0.1, -0.5, 0}, {0.1, 0.5, 0}, {-a, 0.5, 0}), 4},    // floor below
  };
}

TEST(DistanceHierarchy, Table5Situation2AllPermutations) {
  const Vec3 c{0, 0, 0.25};
  const real r = 0.3;
  std::vector<Element> elements = step_scene();
  const std::vector<EntityContact> reference = run_h2(elements, c, r);
  // Expected: the step edge (V1 = V2 horizontal, |V| = 0.2, one of the two kept) and the floor
  // facet below (V4 vertical, |V| = 0.25); element 3's edge is removed by V4 (Pr_3,4 = |V4|);
  // V1 and V4 are orthogonal, so neither removes the other. Output is in canonical order.
  ASSERT_EQ(reference.size(), 2u);
  EXPECT_EQ(reference[0].element, 1);  // the shared edge is kept once, for the smaller index
  EXPECT_EQ(reference[0].type, EntityType::Edge);
  EXPECT_NEAR(reference[0].point.x, -0.2, 1e-15);
  EXPECT_NEAR(reference[0].point.z, 0.25, 1e-15);
  EXPECT_EQ(reference[1].element, 4);
  EXPECT_EQ(reference[1].type, EntityType::Facet);
  EXPECT_NEAR(reference[1].distance, 0.25, 1e-15);
  std::vector<int> order = {0, 1, 2, 3};
  int permutations = 0;
  do {
    std::vector<Element> permuted;
    for (int i : order) permuted.push_back(elements[i]);
    ASSERT_TRUE(same_contacts(run_h2(permuted, c, r), reference));
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(permutations, 24);
}

TEST(DistanceHierarchy, ApexOfAPyramidGivesOneVertexContact) {
  // Six triangles share the apex (0,0,0.2) of a convex pyramid: the sphere above it touches the
  // apex through every element (vertex or edge candidates), and one vertex contact remains.
  std::vector<Element> elements;
  const Vec3 apex{0, 0, 0.2};
  for (int k = 0; k < 6; ++k) {
    const double a0 = k * M_PI / 3, a1 = (k + 1) * M_PI / 3;
    elements.push_back({Polygon{{Vec3{std::cos(a0), std::sin(a0), 0}, Vec3{std::cos(a1), std::sin(a1), 0}, apex}, 3}, k});
  }
  const Vec3 c{0, 0, 0.45};
  std::vector<int> order = {0, 1, 2, 3, 4, 5};
  std::vector<EntityContact> reference;
  do {
    std::vector<Element> permuted;
    for (int i : order) permuted.push_back(elements[i]);
    const std::vector<EntityContact> v = run_h2(permuted, c, 0.3);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].type, EntityType::Vertex);
    EXPECT_NEAR(v[0].distance, 0.25, 1e-15);
    if (reference.empty()) reference = v;
    ASSERT_TRUE(same_contacts(v, reference));
  } while (std::next_permutation(order.begin(), order.end()));  // all 720 orders
}

TEST(DistanceHierarchy, CoplanarToleranceRemovesTheDoubleContactOfAShallowValley) {
  // Two facets meeting in a concave valley of 1e-4 rad (Sect. 7.1, alpha -> 0): a sphere above
  // the valley line touches both facets with the same indentation. Without a tolerance both
  // forces act (error measure xi = 1); with it the farther/second one is recognised as coplanar.
  const double alpha = 1e-4;
  const Vec3 b1{std::cos(alpha), -1, std::sin(alpha)};  // element B rises to +x
  std::vector<Element> elements = {
      {quad({-1, -1, 0}, {0, -1, 0}, {0, 1, 0}, {-1, 1, 0}), 0},
      {quad({0, -1, 0}, b1, b1 + Vec3{0, 2, 0}, {0, 1, 0}), 1},
  };
  // Centre over A, 1e-5 m before the valley line: its projection on B already lies inside B.
  // Distances: d_A = 0.25, d_B = 0.25 - 2.5e-10, so Pr_A,B = 0.25 cos(alpha) falls 1e-9 short.
  const Vec3 c{-1e-5, 0, 0.25};
  EXPECT_EQ(run_h2(elements, c, 0.3, real(0)).size(), 2u);
  const std::vector<EntityContact> v = run_h2(elements, c, 0.3);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].element, 1);  // B is the nearer facet
}

TEST(DistanceHierarchy, MoreValidContactsThanCapacityIsReported) {
  // A sphere inside a 12-sided prism whose walls are all within reach: 12 facet contacts in
  // directions 30 degrees apart, none invalidating another (Pr = |V| cos 30 < |V|).
  std::vector<Element> elements;
  for (int k = 0; k < 12; ++k) {
    const double a0 = (k - 0.5) * M_PI / 6, a1 = (k + 0.5) * M_PI / 6, rr = 0.9 / std::cos(M_PI / 12);
    const Vec3 p0{rr * std::cos(a0), rr * std::sin(a0), -1}, p1{rr * std::cos(a1), rr * std::sin(a1), -1};
    elements.push_back({quad(p0, p1, p1 + Vec3{0, 0, 2}, p0 + Vec3{0, 0, 2}), k});
  }
  H2Accumulator acc;
  h2_begin(acc, Vec3{0, 0, 0});
  for (const Element& e : elements) contact_type_hierarchy(acc, e.poly, e.id, 1.0);
  const int n = h2_finish(acc);
  EXPECT_EQ(n, 12);
  EXPECT_GT(n, kMaxMeshContacts);  // the caller sees the overflow; nothing was dropped here
}

}  // namespace
}  // namespace dem
