// A polyhedron against a mesh (core/contact/polyhedron_mesh.hpp): pressed into a plane made of one
// quad, of two triangles or of two hundred, it feels the same force and the same moment, a face,
// an edge or a corner down, a corner on a shared edge or a shared vertex of the fine mesh, and at
// random orientations; a thin plate's free edge cutting into its side pushes it off the edge, no
// deeper than they overlap.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/contact/polyhedron_mesh.hpp"
#include "host/sim/polyhedron_shape.hpp"

namespace dem {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A mesh of the square [-2, 2]^2 in z = 0 (normals up): vertices and elements as index loops.
struct Mesh {
  std::vector<Vec3> vertices;
  std::vector<std::vector<std::int32_t>> elements;
};
// With a roof slope, the two halves y < 0 and y > 0 rise at that slope towards the ridge y = 0
// (each half cut into its own elements, the ridge a bend of the surface).
Mesh plane_mesh(int kind, double roof = 0) {  // 0: one quad, 1: two triangles, 2: 10 x 10 squares of two triangles
  Mesh m;
  const int cells = kind == 2 ? 10 : 1;
  if (roof != 0) {  // each half alone, then joined along the ridge by its vertex indices
    Mesh half[2] = {plane_mesh(kind), plane_mesh(kind)};
    for (int h = 0; h < 2; ++h) {
      const std::int32_t base = static_cast<std::int32_t>(m.vertices.size());
      for (Vec3 v : half[h].vertices) {
        const double y = h == 0 ? (v.y - 2) / 2 : (v.y + 2) / 2;  // [-2, 0] and [0, 2]
        m.vertices.push_back(Vec3{v.x, y, -roof * std::abs(y)});
      }
      for (auto e : half[h].elements) {
        for (auto& i : e) i += base;
        m.elements.push_back(e);
      }
    }
    // the ridge's vertices of the second half replaced by the first half's (one mesh)
    const std::int32_t second = static_cast<std::int32_t>(m.vertices.size() / 2);
    for (auto& e : m.elements)
      for (auto& i : e)
        if (i >= second && m.vertices[i].y == 0)
          for (std::int32_t j = 0; j < second; ++j)
            if (m.vertices[j].y == 0 && m.vertices[j].x == m.vertices[i].x) i = j;
    return m;
  }
  for (int j = 0; j <= cells; ++j)
    for (int i = 0; i <= cells; ++i) m.vertices.push_back(Vec3{-2 + 4.0 * i / cells, -2 + 4.0 * j / cells, 0});
  for (int j = 0; j < cells; ++j)
    for (int i = 0; i < cells; ++i) {
      const std::int32_t a = j * (cells + 1) + i, b = a + 1, c = a + cells + 2, d = a + cells + 1;
      if (kind == 0) m.elements.push_back({a, b, c, d});
      else {
        m.elements.push_back({a, b, c});
        m.elements.push_back({a, c, d});
      }
    }
  return m;
}

struct Loads {
  Vec3 force, moment;  // on the particle; the moment about its centroid
  int contacts;        // element contacts with a share
  int edge_or_vertex;  // of them, through a mesh edge or vertex
};

// The particle's loads from the mesh under a linear law of stiffness k (no damping, no friction).
Loads press(const PolyShape& s, Quat q, Vec3 x, const Mesh& mesh, double k) {
  PlacedVertices A;
  place_vertices(s, q, 1, x, A);
  std::vector<ElementContact> found;
  std::vector<const std::int32_t*> ids;
  std::vector<int> sizes;
  std::vector<Vec3> normals;
  const auto polygon = [&](std::size_t e) {
    Polygon p;
    p.n = static_cast<int>(mesh.elements[e].size());
    for (int v = 0; v < p.n; ++v) p.v[v] = mesh.vertices[mesh.elements[e][v]];
    return p;
  };
  for (std::size_t e = 0; e < mesh.elements.size(); ++e) {
    ids.push_back(mesh.elements[e].data());
    sizes.push_back(static_cast<int>(mesh.elements[e].size()));
    normals.push_back(polygon_normal(polygon(e)));
  }
  const ElementCandidates candidates{ids.data(), sizes.data(), normals.data(), static_cast<int>(ids.size()),
                                     mesh.vertices.data()};
  for (std::size_t e = 0; e < mesh.elements.size(); ++e) {
    const Polygon p = polygon(e);
    PolyShape flat;
    PlacedVertices E;
    flat_element_body(p, flat, E);
    const CommonPlane cp = separating_axis_plane(s, q, A, flat, quat_identity(), E);
    if (!(cp.gap < 0)) continue;
    const ElementContact c =
        element_contact(A, s, x, p, E, mesh.elements[e].data(), static_cast<std::int32_t>(e), cp, candidates);
    if (c.weight > 0) found.push_back(c);
  }
  rank_element_contacts(found.data(), static_cast<int>(found.size()), candidates, 1e-9);
  Loads out{{0, 0, 0}, {0, 0, 0}, 0, 0};
  for (const ElementContact& c : found) {
    if (!(c.weight > 0)) continue;
    ++out.contacts;
    out.edge_or_vertex += c.face ? 0 : 1;
    const Vec3 f = -(c.weight * k * c.contact.depth) * c.contact.normal;  // the normal points from the particle
    out.force += f;
    out.moment += cross(c.contact.point - x, f);
  }
  return out;
}

// The lowest vertex's height of a particle at x with orientation q (size 1).
double lowest(const PolyShape& s, Quat q, Vec3 x) {
  PlacedVertices A;
  place_vertices(s, q, 1, x, A);
  double z = 1e9;
  for (int k = 0; k < A.n; ++k) z = std::min(z, double(A.v[k].z));
  return z;
}

int ridge_contacts = 0;  // the roof test's poses met through the ridge

void expect_same_loads(const PolyShape& s, Quat q, Vec3 xy, double depth, const std::string& what, double roof = 0) {
  const double k = 1e5;
  Vec3 x{xy.x, xy.y, 0};
  x.z = -lowest(s, q, x) - depth;  // the lowest vertex `depth` below the plane z = 0
  if (roof != 0) {  // lowered onto the roof until the coarse mesh's deepest contact is `depth`
    x.z += 0.5;
    for (double step = 0.5; step > 1e-12; step *= 0.5) {
      const Loads probe = press(s, q, x, plane_mesh(0, roof), 1);
      x.z += norm(probe.force) > depth ? step : -step;
    }
  }
  const Loads one = press(s, q, x, plane_mesh(0, roof), k);
  ASSERT_GT(one.contacts, 0) << what;
  ridge_contacts += one.edge_or_vertex > 0 ? 1 : 0;
  if (roof == 0) {
    EXPECT_NEAR(norm(one.force), k * depth, 1e-9 * k * depth) << what << ": one quad";
  }
  for (int kind : {1, 2}) {
    const Loads other = press(s, q, x, plane_mesh(kind, roof), k);
    const double scale = norm(one.force);
    EXPECT_LT(norm(other.force - one.force), 1e-9 * scale) << what << ", mesh " << kind << ": force " << other.force.x << " "
                                                            << other.force.y << " " << other.force.z << " against "
                                                            << one.force.z << " (" << other.contacts << " contacts)";
    EXPECT_LT(norm(other.moment - one.moment), 1e-9 * scale) << what << ", mesh " << kind << ": moment";
  }
}

TEST(PolyhedronMesh, OneQuadTwoTrianglesOrTwoHundredGiveTheSameLoads) {
  const PolyShape cube = host::make_poly_shape(host::builtin_polyhedron("cube", {}, "t"), "cube");
  const PolyShape tet = host::make_poly_shape(host::builtin_polyhedron("tetrahedron", {}, "t"), "tetrahedron");
  const double d = 1e-3;
  // face down, straddling the fine mesh's lines (none within 0.1 of its sides)
  expect_same_loads(cube, quat_identity(), Vec3{0.13, -0.27, 0}, d, "face down");
  // an edge down (turned 45 degrees about x), across several fine elements
  expect_same_loads(cube, quat_from_rotation_vector(Vec3{kPi / 4, 0, 0}), Vec3{0.11, 0.23, 0}, d, "edge down");
  // a corner down: inside an element, on a shared edge, on a shared vertex of the fine mesh
  const Quat corner = normalized(quat_from_rotation_vector(Vec3{0.6154797087, 0, 0}) * quat_from_rotation_vector(Vec3{0, 0, kPi / 4}));
  PlacedVertices probe;
  place_vertices(cube, corner, 1, Vec3{0, 0, 0}, probe);
  Vec3 tip{0, 0, 1e9};
  for (int k = 0; k < probe.n; ++k)
    if (probe.v[k].z < tip.z) tip = probe.v[k];
  for (const Vec3 at : {Vec3{0.13, 0.27, 0}, Vec3{0.4, 0.13, 0}, Vec3{0.4, 0.4, 0}}) {
    expect_same_loads(cube, corner, Vec3{at.x - tip.x, at.y - tip.y, 0}, d,
                      "corner down at " + std::to_string(at.x) + ", " + std::to_string(at.y));
  }
  // random orientations of a cube and a tetrahedron, at random places
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 40; ++trial) {
    const Quat q = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    expect_same_loads(trial % 2 ? cube : tet, q, Vec3{u(rng), u(rng), 0}, d * (0.5 + 0.5 * (u(rng) + 1)),
                      "random pose " + std::to_string(trial));
  }
}

// A roof of two slopes (0.2) meeting at a ridge: a cube pressed onto it at random orientations
// near the ridge (on one slope, across the ridge) feels the same loads from two quads, four
// triangles or four hundred.
TEST(PolyhedronMesh, ARoofMeetsAParticleTheSameWayHoweverItIsCut) {
  const PolyShape cube = host::make_poly_shape(host::builtin_polyhedron("cube", {}, "t"), "cube");
  std::mt19937_64 rng(8);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int trial = 0; trial < 30; ++trial) {
    const Quat q = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    expect_same_loads(cube, q, Vec3{u(rng), 0.3 * u(rng), 0}, 1e-3, "roof, pose " + std::to_string(trial), 0.2);
  }
  std::printf("%d of 30 poses met through the ridge\n", ridge_contacts);
  EXPECT_GE(ridge_contacts, 5);
}

// How far a particle of size 1 at the origin reaches along the unit direction d.
double reach(const PolyShape& s, Quat q, Vec3 d) {
  PlacedVertices at_origin;
  place_vertices(s, q, 1, Vec3{0, 0, 0}, at_origin);
  double most = -1e9;
  for (int k = 0; k < at_origin.n; ++k) most = std::max(most, double(dot(d, at_origin.v[k])));
  return most;
}

// A strip [-2, 6] x [-2, 2] in z = 0 (normal up): one quad, or two that share the edge x = 2.
Mesh strip_mesh(bool split) {
  Mesh m;
  if (!split) {
    m.vertices = {{-2, -2, 0}, {6, -2, 0}, {6, 2, 0}, {-2, 2, 0}};
    m.elements = {{0, 1, 2, 3}};
    return m;
  }
  m.vertices = {{-2, -2, 0}, {2, -2, 0}, {6, -2, 0}, {6, 2, 0}, {2, 2, 0}, {-2, 2, 0}};
  m.elements = {{0, 1, 4, 5}, {1, 2, 3, 4}};
  return m;
}

// The separating axes' penetration depth of a particle and one element (the least translation
// that parts them).
double least_penetration(const PolyShape& s, Quat q, Vec3 x, const Mesh& mesh) {
  PlacedVertices A, E;
  place_vertices(s, q, 1, x, A);
  Polygon p;
  p.n = static_cast<int>(mesh.elements[0].size());
  for (int v = 0; v < p.n; ++v) p.v[v] = mesh.vertices[mesh.elements[0][v]];
  PolyShape flat;
  flat_element_body(p, flat, E);
  return -separating_axis_plane(s, q, A, flat, quat_identity(), E).gap;
}

// A thin plate's free edge cutting w into the side of a cube whose centroid lies 0.1 above the
// plate's plane: the edge pushes the cube off it with k w, not across the plate with the cube's
// reach below the plane (0.3). Where another element continues the plate past that edge, the
// cube is across a plane and the two faces give one quad's loads.
TEST(PolyhedronMesh, AFreeEdgeCuttingIntoAParticlesSidePushesItOffTheEdge) {
  const PolyShape cube = host::make_poly_shape(host::builtin_polyhedron("cube", {}, "t"), "cube");
  const double half = reach(cube, quat_identity(), Vec3{1, 0, 0}), k = 1e5, w = 0.01;
  const Mesh plate = plane_mesh(0);
  const Vec3 x{2 + half - w, 0.05, 0.1};
  const Loads edge = press(cube, quat_identity(), x, plate, k);
  ASSERT_EQ(edge.contacts, 1);
  EXPECT_EQ(edge.edge_or_vertex, 1);
  EXPECT_NEAR(edge.force.x, k * w, 1e-9 * k * w);
  EXPECT_NEAR(edge.force.y, 0, 1e-9 * k * w);
  EXPECT_NEAR(edge.force.z, 0, 1e-9 * k * w);
  const Loads one = press(cube, quat_identity(), x, strip_mesh(false), k);
  const Loads two = press(cube, quat_identity(), x, strip_mesh(true), k);
  EXPECT_NEAR(one.force.z, k * (half - 0.1), 1e-9 * k);
  EXPECT_EQ(two.edge_or_vertex, 0);
  EXPECT_LT(norm(two.force - one.force), 1e-9 * norm(one.force));
  EXPECT_LT(norm(two.moment - one.moment), 1e-9 * norm(one.force));
}

// The corner of a box, {x < 2, z < 0}: its top z = 0 (x < 2) and its side x = 2 (z < 0), sharing
// the edge x = 2, z = 0. A cube beside the side, its centroid 0.05 below the top's plane and its
// face cut 0.01 into the box: the side pushes it out with k 0.01, and the top, whose plane the
// cube reaches 0.35 above over open space, adds nothing.
TEST(PolyhedronMesh, BesideABoxsCornerTheTopsPlaneIsNoOverlap) {
  const PolyShape cube = host::make_poly_shape(host::builtin_polyhedron("cube", {}, "t"), "cube");
  const double half = reach(cube, quat_identity(), Vec3{1, 0, 0}), k = 1e5;
  Mesh corner;
  corner.vertices = {{-2, -2, 0}, {2, -2, 0}, {2, 2, 0}, {-2, 2, 0}, {2, -2, -2}, {2, 2, -2}};
  corner.elements = {{0, 1, 2, 3}, {1, 4, 5, 2}};
  const Loads l = press(cube, quat_identity(), Vec3{2 + half - 0.01, 0.05, -0.05}, corner, k);
  EXPECT_EQ(l.contacts, 1);
  EXPECT_NEAR(l.force.x, k * 0.01, 1e-9 * k);
  EXPECT_NEAR(l.force.z, 0, 1e-9 * k);
}

// Cubes and tetrahedra at random orientations in the concave corner of a floor (z = 0, x < 2) and
// a wall (x = 2, z > 0), pressed up to 0.05 into the floor and clear of the wall: the floor holds
// each up with its face, k times the depth below it, in some poses where the floor's own plane
// through the corner's edge is shallower (a drum's end cap by its mantle).
TEST(PolyhedronMesh, InAConcaveCornerTheFloorHoldsAParticleWithItsFace) {
  const PolyShape cube = host::make_poly_shape(host::builtin_polyhedron("cube", {}, "t"), "cube");
  const PolyShape tet = host::make_poly_shape(host::builtin_polyhedron("tetrahedron", {}, "t"), "tetrahedron");
  Mesh corner;
  corner.vertices = {{-2, -2, 0}, {2, -2, 0}, {2, 2, 0}, {-2, 2, 0}, {2, -2, 2}, {2, 2, 2}};
  corner.elements = {{0, 1, 2, 3}, {1, 4, 5, 2}};
  const Mesh floor = plane_mesh(0);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  const double k = 1e5;
  int shallower = 0, poses = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const PolyShape& s = trial % 2 ? cube : tet;
    const Quat q = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    const double high_x = reach(s, q, Vec3{1, 0, 0}), low_z = -reach(s, q, Vec3{0, 0, -1});
    const double depth = 0.05 * u(rng);
    const Vec3 x{2 - high_x - 1e-4 - 0.002 * u(rng), 0.3 * (2 * u(rng) - 1), -low_z - depth};
    if (depth < 1e-6) continue;
    ++poses;
    shallower += least_penetration(s, q, x, floor) < depth * (1 - 1e-6) ? 1 : 0;
    const Loads l = press(s, q, x, corner, k);
    EXPECT_EQ(l.edge_or_vertex, 0) << "pose " << trial;
    EXPECT_NEAR(l.force.z, k * depth, 1e-9 * k) << "pose " << trial;
    EXPECT_NEAR(norm(l.force), k * depth, 1e-9 * k) << "pose " << trial;
  }
  std::printf("%d of %d poses with the floor's own plane shallower than its face\n", shallower, poses);
  EXPECT_GE(shallower, 10);
}

// Tetrahedra with a vertex pushed into the concave corner of a floor (z = 0, x < 2) and a wall
// (x = 2, z > 0), past both planes (a drum's rim, where its mantle meets its end cap): the vertex
// points along (1, 0, -1) at random spins and tilts, a into the wall and b below the floor, the
// rest of the particle inside. Neither face meets the deepest vertex; each meets what lies across
// it over itself: the floor pushes up with k times the depth below z = 0 of the particle's part
// x <= 2 (the deepest crossing of the vertex's edges with the wall's plane), the wall back with k
// times the reach past x = 2 of its part z >= 0. Cut into four elements across the corner near
// the vertex, it gives the same loads. Moving the vertex across the wall's plane changes the
// floor's push by no more than the move.
TEST(PolyhedronMesh, PastBothWallsOfAConcaveCornerEachFacePushesWithWhatLiesAcrossIt) {
  const PolyShape tet = host::make_poly_shape(host::builtin_polyhedron("tetrahedron", {}, "t"), "tetrahedron");
  Mesh corner;
  corner.vertices = {{-2, -2, 0}, {2, -2, 0}, {2, 2, 0}, {-2, 2, 0}, {2, -2, 2}, {2, 2, 2}};
  corner.elements = {{0, 1, 2, 3}, {1, 4, 5, 2}};
  std::mt19937_64 rng(17);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  const double k = 1e5;
  const Vec3 tip = normalized(tet.vertex[0]);
  int poses = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // vertex 0 turned onto the corner's diagonal, tilted up to 10 degrees, spun about it
    const Vec3 d = normalized(Vec3{1, 0, -1} + 0.18 * Vec3{g(rng), g(rng), g(rng)});
    const Quat onto = normalized(Quat{1 + dot(tip, d), cross(tip, d).x, cross(tip, d).y, cross(tip, d).z});
    const double spin = 2 * kPi * u(rng);
    const Quat about{std::cos(spin / 2), std::sin(spin / 2) * d.x, std::sin(spin / 2) * d.y, std::sin(spin / 2) * d.z};
    const Quat q = normalized(about * onto);
    PlacedVertices at_origin;
    place_vertices(tet, q, 1, Vec3{0, 0, 0}, at_origin);
    const double a = 0.03 * u(rng) + 1e-4, b = 0.03 * u(rng) + 1e-4;
    const Vec3 x = Vec3{2 + a, 0.3 * (2 * u(rng) - 1), -b} - at_origin.v[0];
    PlacedVertices A;
    place_vertices(tet, q, 1, x, A);
    bool apart = true;  // the other vertices inside the corner, clear of both walls
    for (int v = 1; v < A.n; ++v) apart = apart && A.v[v].x < 2 - 1e-3 && A.v[v].z > 1e-3;
    if (!apart) continue;
    ++poses;
    double floor_depth = 0, wall_depth = 0;  // along vertex 0's edges, where they cross each plane
    for (int v = 1; v < A.n; ++v) {
      const Vec3 e = A.v[v] - A.v[0];
      floor_depth = std::max(floor_depth, -double((A.v[0] + ((2 - A.v[0].x) / e.x) * e).z));
      wall_depth = std::max(wall_depth, double((A.v[0] + ((0 - A.v[0].z) / e.z) * e).x) - 2);
    }
    const Loads l = press(tet, q, x, corner, k);
    EXPECT_EQ(l.edge_or_vertex, 0) << "pose " << trial;
    EXPECT_EQ(l.contacts, (floor_depth > 0) + (wall_depth > 0)) << "pose " << trial;
    EXPECT_NEAR(l.force.z, k * floor_depth, 1e-9 * k) << "pose " << trial;
    EXPECT_NEAR(l.force.x, -k * wall_depth, 1e-9 * k) << "pose " << trial;
    EXPECT_NEAR(l.force.y, 0, 1e-9 * k) << "pose " << trial;
    // cut across the corner near the vertex (floor and wall into two quads each, sharing the
    // vertex at y_cut on the corner's edge): the same loads
    const double y_cut = A.v[0].y + 0.05 * (2 * u(rng) - 1);
    Mesh cut;
    cut.vertices = corner.vertices;
    cut.vertices.insert(cut.vertices.end(), {{2, y_cut, 0}, {-2, y_cut, 0}, {2, y_cut, 2}});
    cut.elements = {{0, 1, 6, 7}, {7, 6, 2, 3}, {1, 4, 8, 6}, {6, 8, 5, 2}};
    const Loads c = press(tet, q, x, cut, k);
    EXPECT_EQ(c.edge_or_vertex, 0) << "pose " << trial;
    EXPECT_LT(norm(c.force - l.force), 1e-9 * k) << "pose " << trial;
    EXPECT_LT(norm(c.moment - l.moment), 1e-9 * k) << "pose " << trial;
    // the vertex moved by 2a along x, from a past the wall's plane to a short of it
    const Loads back = press(tet, q, x - Vec3{2 * a, 0, 0}, corner, k);
    EXPECT_NEAR(back.force.z, l.force.z, k * 2 * a * (1 + 1e-9)) << "pose " << trial;
  }
  std::printf("%d poses\n", poses);
  EXPECT_GE(poses, 100);
}

// Cubes and tetrahedra at random orientations at a plate's free edge, overlapping it by up to 5 %
// of their size: half with their centroids within 0.05 of its plane and the edge cut into their
// side (where the cut meets the particle: about a quarter), half pressed onto it from above. The
// plate meets each with a contact exactly as deep as the least penetration of the two (within
// 1e-9); both its face and its edge carry some.
TEST(PolyhedronMesh, APlateMeetsAParticleAtItsEdgeAsDeepAsTheyOverlap) {
  const PolyShape cube = host::make_poly_shape(host::builtin_polyhedron("cube", {}, "t"), "cube");
  const PolyShape tet = host::make_poly_shape(host::builtin_polyhedron("tetrahedron", {}, "t"), "tetrahedron");
  const Mesh plate = plane_mesh(0);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  const double k = 1e5;
  int faces = 0, edges = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const PolyShape& s = trial % 4 < 2 ? cube : tet;
    const Quat q = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    const double low_x = -reach(s, q, Vec3{-1, 0, 0}), low_z = -reach(s, q, Vec3{0, 0, -1});
    const double overlap = 0.05 * u(rng);
    const Vec3 x = trial % 2 ? Vec3{2 - low_x - overlap, 0.3 * (2 * u(rng) - 1), 0.05 * (2 * u(rng) - 1)}  // straddling
                             : Vec3{2 + 0.5 * (2 * u(rng) - 1), 0.3 * (2 * u(rng) - 1), -low_z - overlap};  // from above
    const double least = least_penetration(s, q, x, plate);
    if (!(least > 1e-6)) continue;
    const Loads l = press(s, q, x, plate, k);
    EXPECT_EQ(l.contacts, 1) << "pose " << trial;
    EXPECT_NEAR(norm(l.force), k * least, 1e-9 * k) << "pose " << trial << (trial % 2 ? ", straddling" : ", from above");
    faces += l.contacts - l.edge_or_vertex;
    edges += l.edge_or_vertex;
  }
  std::printf("%d face and %d edge or vertex contacts\n", faces, edges);
  EXPECT_GT(faces, 50);
  EXPECT_GT(edges, 30);
}

}  // namespace
}  // namespace dem
