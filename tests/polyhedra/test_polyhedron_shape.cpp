// The polyhedral shape records (host/sim/polyhedron_shape.hpp): exact mass properties against the
// textbook values, the principal frame, coplanar faces merged, and every malformed input refused
// with the face or vertex named.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "host/sim/errors.hpp"
#include "host/sim/polyhedron_shape.hpp"

namespace dem::host {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The shape's inertia over mass at a size s: unit_inertia s^2.
double dv_of_volume(double volume) { return std::cbrt(6 * volume / kPi); }

TEST(PolyhedronShape, BuiltInsHaveTheirTextbookMassProperties) {
  // name, volume of the mesh as built, and the three principal moments over mass (ascending)
  struct Case {
    const char* name;
    std::vector<double> sides;
    double volume;
    double moments[3];
  };
  const double a_tet = 2 * std::sqrt(2.0);  // edge of the tetrahedron (+-1, +-1, +-1)
  const double a_oct = std::sqrt(2.0);      // edge of the octahedron (+-1 on the axes)
  const std::vector<Case> cases = {
      {"cube", {}, 1.0, {1.0 / 6, 1.0 / 6, 1.0 / 6}},
      {"box", {1, 2, 3}, 6.0, {(4 + 9) / 12.0, (1 + 9) / 12.0, (1 + 4) / 12.0}},
      {"tetrahedron", {}, a_tet * a_tet * a_tet / (6 * std::sqrt(2.0)), {a_tet * a_tet / 20, a_tet * a_tet / 20, a_tet * a_tet / 20}},
      {"octahedron", {}, std::sqrt(2.0) / 3 * a_oct * a_oct * a_oct, {a_oct * a_oct / 10, a_oct * a_oct / 10, a_oct * a_oct / 10}},
      {"rhombic_dodecahedron", {}, 16.0, {0, 0, 0}},
  };
  for (const Case& c : cases) {
    const PolyhedronMesh mesh = builtin_polyhedron(c.name, c.sides, "test");
    const PolyhedronMass mass = polyhedron_mass(mesh);
    EXPECT_NEAR(mass.volume, c.volume, 1e-12 * c.volume) << c.name;
    const PolyShape s = make_poly_shape(mesh, "test");
    EXPECT_EQ(s.num_vertices - s.num_edges + s.num_faces, 2) << c.name << ": Euler";
    if (c.moments[0] == 0) continue;
    const double dv = dv_of_volume(c.volume);
    std::vector<double> want(c.moments, c.moments + 3);
    std::sort(want.begin(), want.end());
    const double got[3] = {s.unit_inertia.x, s.unit_inertia.y, s.unit_inertia.z};
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k] * dv * dv, want[k], 1e-12 * want[2]) << c.name << " moment " << k;
  }
  // The square pyramid (base side a = 1, height h = 1): about its axis m a^2 / 10; about a base
  // direction through the centroid m (a^2 / 20 + 3 h^2 / 80).
  const PolyhedronMesh pyr = builtin_polyhedron("square_pyramid", {}, "test");
  EXPECT_NEAR(polyhedron_mass(pyr).volume, 1.0 / 3, 1e-15);
  const PolyShape ps = make_poly_shape(pyr, "test");
  const double dv = dv_of_volume(1.0 / 3);
  std::vector<double> want{1.0 / 10, 1.0 / 20 + 3.0 / 80, 1.0 / 20 + 3.0 / 80};
  std::sort(want.begin(), want.end());
  EXPECT_NEAR(ps.unit_inertia.x * dv * dv, want[0], 1e-13);
  EXPECT_NEAR(ps.unit_inertia.y * dv * dv, want[1], 1e-13);
  EXPECT_NEAR(ps.unit_inertia.z * dv * dv, want[2], 1e-13);
  // The prism on a 3-4-5 triangle, length 2: volume 12.
  EXPECT_NEAR(polyhedron_mass(builtin_polyhedron("prism", {3, 4, 5, 2}, "test")).volume, 12.0, 1e-12);
}

TEST(PolyhedronShape, TheRecordIsInThePrincipalFrameAtTheCentroidWithUnitVolumeDiameter) {
  for (const std::string& name : builtin_polyhedron_names()) {
    const std::vector<double> sides = name == "box" ? std::vector<double>{1, 2, 3}
                                                    : name == "prism" ? std::vector<double>{3, 4, 5, 2} : std::vector<double>{};
    const PolyShape s = make_poly_shape(builtin_polyhedron(name, sides, "test"), "test");
    PolyhedronMesh body;
    for (int k = 0; k < s.num_vertices; ++k) body.vertices.push_back(s.vertex[k]);
    for (int f = 0; f < s.num_faces; ++f) {
      std::vector<int> loop;
      for (int k = s.face_start[f]; k < s.face_start[f + 1]; ++k) loop.push_back(s.face_vertex[k]);
      body.faces.push_back(loop);
    }
    const PolyhedronMass m = polyhedron_mass(body);
    EXPECT_NEAR(m.volume, kPi / 6, 1e-13) << name;
    EXPECT_LT(norm(m.centroid), 1e-14) << name;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        if (i != j) {
          EXPECT_LT(std::abs(m.inertia[i][j]), 1e-14) << name << " product of inertia " << i << j;
        }
    EXPECT_NEAR(m.inertia[0][0] / m.volume, s.unit_inertia.x, 1e-13) << name;
    EXPECT_NEAR(m.inertia[2][2] / m.volume, s.unit_inertia.z, 1e-13) << name;
    // outward unit face normals; every corner's faces and edges name it
    for (int f = 0; f < s.num_faces; ++f) {
      EXPECT_NEAR(norm(s.face_normal[f]), 1, 1e-14);
      EXPECT_GT(dot(s.face_normal[f], s.vertex[s.face_vertex[s.face_start[f]]]), 0) << name << " face " << f;
    }
    for (int k = 0; k < s.num_vertices; ++k) {
      EXPECT_GE(s.vertex_face_start[k + 1] - s.vertex_face_start[k], 3) << name << " corner " << k;
      for (int e = s.vertex_edge_start[k]; e < s.vertex_edge_start[k + 1]; ++e)
        EXPECT_TRUE(s.edge[s.vertex_edge[e]][0] == k || s.edge[s.vertex_edge[e]][1] == k);
    }
    double r = 0;
    for (int k = 0; k < s.num_vertices; ++k) r = std::max(r, double(norm(s.vertex[k])));
    EXPECT_EQ(r, s.bounding_radius);
  }
  const PolyShape rd = make_poly_shape(builtin_polyhedron("rhombic_dodecahedron", {}, "test"), "test");
  EXPECT_EQ(rd.num_vertices, 14);
  EXPECT_EQ(rd.num_edges, 24);
  EXPECT_EQ(rd.num_faces, 12);
}

// A box given as 12 triangles, turned and moved, inward-facing: the same shape as the built-in.
TEST(PolyhedronShape, ATriangulatedTurnedInwardBoxMergesIntoTheSameShape) {
  const PolyhedronMesh box = builtin_polyhedron("box", {1, 2, 3}, "test");
  PolyhedronMesh tri;
  const Quat q = normalized(Quat{0.3, -0.5, 0.7, 0.2});
  for (const Vec3& v : box.vertices) tri.vertices.push_back(rotate(q, v) + Vec3{5, -2, 1});
  for (const std::vector<int>& f : box.faces) {
    tri.faces.push_back({f[0], f[2], f[1]});  // reversed
    tri.faces.push_back({f[0], f[3], f[2]});
  }
  const PolyShape a = make_poly_shape(box, "a"), b = make_poly_shape(tri, "b");
  ASSERT_EQ(b.num_faces, 6);
  ASSERT_EQ(b.num_edges, 12);
  ASSERT_EQ(b.num_vertices, 8);
  EXPECT_NEAR(a.unit_inertia.x, b.unit_inertia.x, 1e-13);
  EXPECT_NEAR(a.unit_inertia.z, b.unit_inertia.z, 1e-13);
  // the same corners up to the principal axes' senses
  for (int k = 0; k < 8; ++k) {
    double nearest = 1e9;
    for (int l = 0; l < 8; ++l) {
      const Vec3 u = a.vertex[k], w = b.vertex[l];
      nearest = std::min(nearest, double(norm(Vec3{std::abs(u.x) - std::abs(w.x), std::abs(u.y) - std::abs(w.y),
                                                   std::abs(u.z) - std::abs(w.z)})));
    }
    EXPECT_LT(nearest, 1e-13);
  }
}

void expect_refused(const PolyhedronMesh& m, const std::string& what) {
  try {
    make_poly_shape(m, "rock.obj");
    ADD_FAILURE() << "accepted; expected: " << what;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rock.obj: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(PolyhedronShape, MalformedPolyhedraAreRefusedNamingTheFault) {
  const PolyhedronMesh cube = builtin_polyhedron("cube", {}, "test");
  PolyhedronMesh open = cube;
  open.faces.pop_back();
  expect_refused(open, "borders no other face (the polyhedron is not closed)");
  PolyhedronMesh flipped = cube;
  std::reverse(flipped.faces[2].begin(), flipped.faces[2].end());
  expect_refused(flipped, "face ");
  PolyhedronMesh dented = cube;  // a corner pushed inwards, its three faces split into triangles
  dented.vertices[7] = Vec3{0.3, 0.3, 0.3};
  {
    std::vector<std::vector<int>> faces;
    for (const std::vector<int>& f : dented.faces) {
      faces.push_back({f[0], f[1], f[2]});
      faces.push_back({f[0], f[2], f[3]});
    }
    dented.faces = faces;
  }
  expect_refused(dented, "not convex");
  PolyhedronMesh bad_index = cube;
  bad_index.faces[0][1] = 12;
  expect_refused(bad_index, "face 0 names vertex 12 of 8");
  PolyhedronMesh nan = cube;
  nan.vertices[3].y = std::nan("");
  expect_refused(nan, "vertex 3 is not finite");
  // A 17-gon prism: 34 corners, above the cap.
  PolyhedronMesh many;
  const int n = 17;
  for (int z = 0; z < 2; ++z)
    for (int k = 0; k < n; ++k) many.vertices.push_back(Vec3{std::cos(2 * kPi * k / n), std::sin(2 * kPi * k / n), double(z)});
  std::vector<int> bottom, top;
  for (int k = 0; k < n; ++k) {
    bottom.push_back(n - 1 - k);
    top.push_back(n + k);
    many.faces.push_back({k, (k + 1) % n, n + (k + 1) % n, n + k});
  }
  many.faces.push_back(bottom);
  many.faces.push_back(top);
  expect_refused(many, "34 corners; at most 32");
  try {
    builtin_polyhedron("dodecahedron", {}, "scene.yaml:4");
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scene.yaml:4: unknown polyhedron 'dodecahedron'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(builtin_polyhedron("prism", {1, 1, 3, 1}, "x"), InputError);  // no triangle
  EXPECT_THROW(builtin_polyhedron("box", {1, 2}, "x"), InputError);
  EXPECT_THROW(builtin_polyhedron("cube", {1}, "x"), InputError);
}

}  // namespace
}  // namespace dem::host
