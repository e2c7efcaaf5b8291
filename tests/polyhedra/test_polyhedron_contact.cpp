// The contact of two polyhedra (core/contact/polyhedron_contact.hpp): where the force acts for
// each pair of closest features, and the law's conservation in impacts, stepped here with the
// core bodies alone (the common plane carried from step to step, central differences for the
// centroids, the rigid rotation for the orientations).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "core/contact/polyhedron_contact.hpp"
#include "core/contact/restitution.hpp"
#include "core/integrate/rigid_rotation.hpp"
#include "host/sim/polyhedron_shape.hpp"

namespace dem {
namespace {

using host::builtin_polyhedron;
using host::make_poly_shape;

constexpr double kPi = 3.14159265358979323846;

PolyShape shape(const char* name, std::vector<double> sides = {}) { return make_poly_shape(builtin_polyhedron(name, sides, "t"), name); }

// A small cube (side 1 before scaling: size = its d_v) resting on a large slab, at depth d.
TEST(PolyhedronContact, TheContactPointIsTheCentroidOfTheFeaturesOverlap) {
  // (the shapes given along the axes keep them: the slab's moments increase from x to z)
  const PolyShape cube = shape("cube"), slab = shape("box", {12, 10, 1});
  const double side = std::cbrt(kPi / 6);                           // a cube of d_v = 1
  const double slab_dv = std::cbrt(6 * 120.0 / kPi), slab_h = 1.0;  // the slab at its own size
  PlacedVertices A, B;
  place_vertices(slab, quat_identity(), slab_dv, Vec3{0, 0, -0.5 * slab_h}, A);
  const double d = 1e-4;
  // face on face, the cube wholly over the slab: the centre of the cube's bottom face
  place_vertices(cube, quat_identity(), 1, Vec3{0.3, -0.2, 0.5 * side - d}, B);
  CommonPlane cp = separating_axis_plane(slab, quat_identity(), A, cube, quat_identity(), B);
  PolyContact c = polyhedron_contact(A, B, cp);
  EXPECT_NEAR(c.depth, d, 1e-12);
  EXPECT_NEAR(c.normal.z, 1, 1e-12);
  EXPECT_NEAR(c.point.x, 0.3, 1e-12);
  EXPECT_NEAR(c.point.y, -0.2, 1e-12);
  EXPECT_NEAR(c.point.z, -0.5 * d, 1e-12);  // on the plane midway
  // overhanging the slab's edge at x = 6 by a quarter of its side: the overlap's centre
  const double cx = 6 - 0.25 * side;
  place_vertices(cube, quat_identity(), 1, Vec3{cx, 0, 0.5 * side - d}, B);
  cp = separating_axis_plane(slab, quat_identity(), A, cube, quat_identity(), B);
  c = polyhedron_contact(A, B, cp);
  EXPECT_NEAR(c.point.x, 6 - 0.375 * side, 1e-12);  // the middle of [cx - side/2, 6]
  EXPECT_NEAR(c.point.y, 0, 1e-12);
  // on a corner: the cube turned so that one vertex points down, that vertex
  const Quat corner = normalized(quat_from_rotation_vector(Vec3{0.6154797087, 0, 0}) * quat_from_rotation_vector(Vec3{0, 0, kPi / 4}));
  PlacedVertices probe;
  place_vertices(cube, corner, 1, Vec3{0, 0, 0}, probe);
  double low = 1e9, lx = 0, ly = 0;
  for (int k = 0; k < probe.n; ++k)
    if (probe.v[k].z < low) low = probe.v[k].z, lx = probe.v[k].x, ly = probe.v[k].y;
  place_vertices(cube, corner, 1, Vec3{1 - lx, 2 - ly, -low - d}, B);
  cp = separating_axis_plane(slab, quat_identity(), A, cube, corner, B);
  c = polyhedron_contact(A, B, cp);
  EXPECT_NEAR(c.depth, d, 1e-12);
  EXPECT_NEAR(c.point.x, 1, 1e-9);
  EXPECT_NEAR(c.point.y, 2, 1e-9);
}

// An edge on an edge whose projections on the plane do not cross (a plane that §6.3 carried from
// the features of an earlier pose, where other edges have come closest): nearly parallel, half a
// unit apart. Their lines cross 100 units away; the contact point stays between the edges, at the
// middle of their closest points, on the plane.
TEST(PolyhedronContact, EdgesThatDoNotCrossOnThePlaneMeetBetweenThem) {
  PlacedVertices A, B;
  A.n = B.n = 4;
  const double d = 1e-3;
  // A's top edge along x at y = 0 (z = 0), B's bottom edge from (-1, 0.5) to (1, 0.51) (z = -d)
  A.v[0] = Vec3{-1, 0, 0}, A.v[1] = Vec3{1, 0, 0}, A.v[2] = Vec3{0, -1, -1}, A.v[3] = Vec3{0, 1, -1};
  B.v[0] = Vec3{-1, 0.5, -d}, B.v[1] = Vec3{1, 0.51, -d}, B.v[2] = Vec3{0, -0.5, 1}, B.v[3] = Vec3{0, 1.5, 1};
  CommonPlane cp;
  cp.n = Vec3{0, 0, 1};
  cp.gap = -d;
  cp.level = -0.5 * d;
  const PolyContact c = polyhedron_contact(A, B, cp);
  EXPECT_NEAR(c.depth, d, 1e-15);
  EXPECT_NEAR(c.point.x, -1, 1e-12);  // A's end (-1, 0) and its nearest point (-1, 0.5) on B's edge
  EXPECT_NEAR(c.point.y, 0.25, 1e-12);
  EXPECT_NEAR(c.point.z, -0.5 * d, 1e-15);
  // crossing edges keep their crossing
  B.v[0] = Vec3{0.2, -1, -d}, B.v[1] = Vec3{0.2, 1, -d};
  const PolyContact crossing = polyhedron_contact(A, B, cp);
  EXPECT_NEAR(crossing.point.x, 0.2, 1e-12);
  EXPECT_NEAR(crossing.point.y, 0, 1e-12);
}

// Two bodies: centroids, velocities (half a step behind), orientations, spins.
struct Body {
  const PolyShape* shape;
  double size, mass;  // mass 0: fixed
  Vec3 inertia;       // principal moments
  Vec3 x, v, w;
  Quat q;
};

double kinetic(const Body& b) {
  if (b.mass == 0) return 0;
  return 0.5 * b.mass * norm2(b.v) + rotational_energy(b.q, b.w, b.inertia);
}
Vec3 momentum_moment(const Body& b) {  // angular momentum about the origin
  if (b.mass == 0) return Vec3{0, 0, 0};
  return cross(b.x, b.mass * b.v) + angular_momentum(b.q, b.w, b.inertia);
}

// Steps a and b through an impact (frictionless, elastic unless damping > 0) until they part:
// the energy before and after, the largest depth, and the steps in contact.
struct Impact {
  double e0, e1, max_depth;
  Vec3 l0, l1;
  int contact_steps;
  int face_steps = 0, edge_edge_steps = 0;  // in contact, by the plane's type
};
Impact collide(Body a, Body b, double stiffness, double damping, double dt, int max_steps) {
  Impact r{kinetic(a) + kinetic(b), 0, 0, momentum_moment(a) + momentum_moment(b), {0, 0, 0}, 0};
  CommonPlane cp;
  bool have = false, touched = false;
  double first_gap = 0;
  PlacedVertices A, B, moved;
  for (int k = 0; k < max_steps; ++k) {
    place_vertices(*a.shape, a.q, a.size, a.x, A);
    place_vertices(*b.shape, b.q, b.size, b.x, B);
    if (!have) cp = fast_common_plane(*a.shape, a.q, A, *b.shape, b.q, B, b.x - a.x, 1e300);
    else if (cp.gap < 0) cp = contact_common_plane(*a.shape, a.q, A, *b.shape, b.q, B, cp, moved);
    else cp = fast_common_plane(*a.shape, a.q, A, *b.shape, b.q, B, cp.n, 1e300);
    if (!have) first_gap = cp.gap;
    have = true;
    Vec3 fb{0, 0, 0}, ta{0, 0, 0}, tb{0, 0, 0};
    if (cp.gap < 0) {
      const PolyContact c = polyhedron_contact(A, B, cp);
      Vec3 xi{0, 0, 0};  // (frictionless)
      const PolyContactLoads loads = polyhedron_contact_loads(c, PolyContactLaw{stiffness, damping, 0, 0, 0}, a.x, a.v, a.w,
                                                              b.x, b.v, b.w, xi, dt);
      fb = loads.force_on_b;
      ta = loads.torque_on_a;
      tb = loads.torque_on_b;
      r.max_depth = std::max(r.max_depth, double(c.depth));
      ++r.contact_steps;
      r.face_steps += cp.type == PlaneType::kFace ? 1 : 0;
      r.edge_edge_steps += cp.type == PlaneType::kEdgeEdge ? 1 : 0;
      touched = true;
    } else if (touched || cp.gap > first_gap + 0.05) {
      break;  // apart again, or passing each other by
    }
    for (Body* body : {&a, &b}) {
      if (body->mass == 0) continue;
      const Vec3 f = body == &b ? fb : -fb;
      body->v += (1 / body->mass) * f * dt;
      body->x += body->v * dt;
      rigid_rotation_step(body->q, body->w, body == &b ? tb : ta, body->inertia, false, dt);
    }
  }
  r.e1 = kinetic(a) + kinetic(b);
  r.l1 = momentum_moment(a) + momentum_moment(b);
  return r;
}

Body make_body(const PolyShape& s, double size, double density, Vec3 x, Vec3 v, Vec3 w, Quat q) {
  const double mass = density * kPi / 6 * size * size * size;
  return Body{&s, size, mass, mass * size * size * s.unit_inertia, x, v, w, q};
}

// Cubes and tetrahedra at random orientations and spins, thrown at each other and at a fixed
// slab, frictionless and elastic: the energy after the impact within 1 % of before (the feature
// pairs met: vertex-face, edge-edge, edge-face, face-face); the angular momentum to rounding.
TEST(PolyhedronContact, ElasticImpactsKeepTheirEnergy) {
  const PolyShape cube = shape("cube"), tet = shape("tetrahedron"), slab = shape("box", {20, 20, 1});
  std::mt19937_64 rng(11);
  std::normal_distribution<double> g(0, 1);
  const double stiffness = 1e5, dt = 2e-6;
  double worst = 0, worst_l = 0;
  int impacts = 0, face_impacts = 0, edge_impacts = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const PolyShape& sa = trial % 3 == 0 ? cube : tet;
    const PolyShape& sb = trial % 2 == 0 ? cube : tet;
    const Quat qa = normalized(Quat{g(rng), g(rng), g(rng), g(rng)}), qb = normalized(Quat{g(rng), g(rng), g(rng), g(rng)});
    const Vec3 dir = normalized(Vec3{g(rng), g(rng), g(rng)});
    const double gap = sa.bounding_radius + sb.bounding_radius + 0.01;
    Body a = make_body(sa, 1, 1, Vec3{0, 0, 0}, 0.5 * dir + 0.1 * Vec3{g(rng), g(rng), g(rng)}, Vec3{g(rng), g(rng), g(rng)}, qa);
    Body b = make_body(sb, 1, 1, gap * dir + 0.1 * Vec3{g(rng), g(rng), g(rng)}, -0.5 * dir, Vec3{g(rng), g(rng), g(rng)}, qb);
    if (trial >= 40) {  // against the fixed slab (its top face at z = 0)
      const double slab_dv = std::cbrt(6 * 400.0 / kPi);
      a = Body{&slab, slab_dv, 0, {0, 0, 0}, {0, 0, -0.5}, {0, 0, 0}, {0, 0, 0}, quat_identity()};
      b = make_body(sb, 1, 1, Vec3{0, 0, sb.bounding_radius + 0.01}, Vec3{0.2 * g(rng), 0.2 * g(rng), -1}, Vec3{g(rng), g(rng), g(rng)}, qb);
    }
    {  // brought within 5 mm of each other along the line of approach (the gap falls by at most the shift)
      PlacedVertices A, B;
      place_vertices(*a.shape, a.q, a.size, a.x, A);
      place_vertices(*b.shape, b.q, b.size, b.x, B);
      const double g0 = fast_common_plane(*a.shape, a.q, A, *b.shape, b.q, B, b.x - a.x, 1e300).gap;
      const Vec3 line = normalized(b.x - a.x);
      if (g0 > 0.005) b.x -= (g0 - 0.005) * line;
    }
    const Impact r = collide(a, b, stiffness, 0, dt, 100000);
    if (r.contact_steps == 0) continue;  // they missed each other
    ++impacts;
    face_impacts += r.face_steps > 0 ? 1 : 0;
    edge_impacts += r.edge_edge_steps > 0 ? 1 : 0;
    const double err = std::abs(r.e1 - r.e0) / r.e0;
    worst = std::max(worst, err);
    EXPECT_LT(err, 0.01) << "trial " << trial << ": energy " << r.e0 << " -> " << r.e1 << " over " << r.contact_steps
                         << " steps in contact, depth " << r.max_depth;
    if (trial < 40) {
      const double dl = norm(r.l1 - r.l0) / std::max(1e-12, double(norm(r.l0)));
      worst_l = std::max(worst_l, dl);
      EXPECT_LT(dl, 1e-9) << "trial " << trial;
    }
  }
  std::printf("%d impacts (%d with a vertex or an edge on a face, %d edge on edge): energy kept to %.2e (largest "
              "relative change), angular momentum to %.2e\n",
              impacts, face_impacts, edge_impacts, worst, worst_l);
  EXPECT_GE(impacts, 45);
  EXPECT_GT(face_impacts, 10);
  EXPECT_GT(edge_impacts, 10);
}

// A cube dropped face-first on the slab with the damping of restitution e for the linear spring
// whose force is clamped at zero (c = 2 zeta sqrt(k m), zeta from Schwager & Poeschel's closed
// form, core/contact/restitution.hpp): it rebounds with e.
TEST(PolyhedronContact, AFaceFirstDropReboundsWithTheRestitutionAskedFor) {
  const PolyShape cube = shape("cube"), slab = shape("box", {20, 20, 1});
  const double slab_dv = std::cbrt(6 * 400.0 / kPi), side = std::cbrt(kPi / 6);
  for (double e : {0.3, 0.6, 0.9}) {
    Body a{&slab, slab_dv, 0, {0, 0, 0}, {0, 0, -0.5}, {0, 0, 0}, {0, 0, 0}, quat_identity()};
    Body b = make_body(cube, 1, 1, Vec3{0, 0, 0.5 * side + 0.001}, Vec3{0, 0, -1}, Vec3{0, 0, 0}, quat_identity());
    const double k = 1e5, zeta = linear_damping_for_restitution(e);
    const Impact r = collide(a, b, k, 2 * zeta * std::sqrt(k * b.mass), 1e-6, 400000);
    const double rebound = std::sqrt(2 * r.e1 / b.mass);
    EXPECT_NEAR(rebound, e, 0.02 * e) << "restitution " << e;
  }
}


// Spheres thrown at a free cube turning at random (frictionless, elastic): the energy after each
// impact within 1 % of before (the sphere on a face, an edge or a corner), the angular momentum
// to rounding.
TEST(PolyhedronContact, ElasticSphereImpactsOnACubeKeepTheirEnergy) {
  const PolyShape cube = shape("cube");
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0, 1);
  const double k = 1e5, dt = 2e-6, r = 0.2, sphere_mass = 1000 * 4.0 / 3 * kPi * r * r * r;
  const double sphere_inertia = 0.4 * sphere_mass * r * r;
  double worst = 0, worst_l = 0;
  int impacts = 0;
  for (int trial = 0; trial < 30; ++trial) {
    Body a = make_body(cube, 1, 1000, Vec3{0, 0, 0}, Vec3{0, 0, 0}, Vec3{g(rng), g(rng), g(rng)},
                       normalized(Quat{g(rng), g(rng), g(rng), g(rng)}));
    const Vec3 dir = normalized(Vec3{g(rng), g(rng), g(rng)});
    Vec3 x = (cube.bounding_radius + r + 0.002) * dir, v = -1.0 * dir + 0.2 * Vec3{g(rng), g(rng), g(rng)};
    Vec3 w{g(rng), g(rng), g(rng)};
    auto energy = [&] {
      return kinetic(a) + 0.5 * sphere_mass * norm2(v) + 0.5 * sphere_inertia * norm2(w);
    };
    auto momentum = [&] {
      return momentum_moment(a) + cross(x, sphere_mass * v) + sphere_inertia * w;
    };
    PlacedVertices A;
    {  // within 5 mm of the cube along the line of approach
      place_vertices(cube, a.q, 1, a.x, A);
      const double gap = sphere_polyhedron_plane(cube, a.q, A, x).gap - r;
      if (gap > 0.005) x -= (gap - 0.005) * dir;
    }
    const double e0 = energy();
    const Vec3 l0 = momentum();
    bool touched = false;
    for (int step = 0; step < 200000; ++step) {
      place_vertices(cube, a.q, 1, a.x, A);
      const CommonPlane cp = sphere_polyhedron_plane(cube, a.q, A, x);
      const PolyContact c = sphere_polyhedron_contact(cp, x, r);
      Vec3 xi{0, 0, 0};
      const PolyContactLoads loads =
          polyhedron_contact_loads(c, PolyContactLaw{k, 0, 0, 0, 0}, a.x, a.v, a.w, x, v, w, xi, dt);
      if (c.depth > 0) touched = true;
      else if (touched || cp.gap - r > 0.05) break;
      a.v += (-1 / a.mass) * loads.force_on_b * dt;
      a.x += a.v * dt;
      rigid_rotation_step(a.q, a.w, loads.torque_on_a, a.inertia, false, dt);
      v += (1 / sphere_mass) * loads.force_on_b * dt;
      x += v * dt;
      w += (1 / sphere_inertia) * loads.torque_on_b * dt;
    }
    if (!touched) continue;
    ++impacts;
    const double err = std::abs(energy() - e0) / e0;
    worst = std::max(worst, err);
    worst_l = std::max(worst_l, double(norm(momentum() - l0)) / norm(l0));
    EXPECT_LT(err, 0.01) << "trial " << trial;
  }
  std::printf("%d sphere impacts on a turning cube: energy kept to %.2e, angular momentum to %.2e\n", impacts, worst, worst_l);
  EXPECT_GE(impacts, 15);
  EXPECT_LT(worst_l, 1e-9);
}

// A cube on a fixed slab under gravity g (the slab's frame: an incline is g turned), stepped with
// the full law; the cube's centroid and velocity at each step.
struct Track {
  std::vector<double> t, x, vx, fz;  // time, centroid x, its velocity, the contact's normal force
};
Track slide(double theta, double mu, double seconds, double dt) {
  static const PolyShape cube = shape("cube"), slab = shape("box", {20, 20, 1});
  const double slab_dv = std::cbrt(6 * 400.0 / kPi), side = std::cbrt(kPi / 6), gravity = 9.81;
  Body a{&slab, slab_dv, 0, {0, 0, 0}, {0, 0, -0.5}, {0, 0, 0}, {0, 0, 0}, quat_identity()};
  Body b = make_body(cube, 1, 1000, Vec3{0, 0, 0.5 * side}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, quat_identity());
  const Vec3 g{gravity * std::sin(theta), 0, -gravity * std::cos(theta)};
  // stiff enough for a static overlap of 1e-5 of the size under the weight; e = 0.5
  const double k = b.mass * gravity / (1e-5 * side), c = 2 * linear_damping_for_restitution(0.5) * std::sqrt(k * b.mass);
  const PolyContactLaw law{k, c, k, c, mu};
  CommonPlane cp;
  bool have = false;
  Vec3 xi{0, 0, 0};
  PlacedVertices A, B, moved;
  place_vertices(*a.shape, a.q, a.size, a.x, A);
  Track tr;
  const int steps = static_cast<int>(seconds / dt);
  for (int k_step = 0; k_step < steps; ++k_step) {
    place_vertices(*b.shape, b.q, b.size, b.x, B);
    if (!have) cp = separating_axis_plane(*a.shape, a.q, A, *b.shape, b.q, B);
    else if (cp.gap < 0) cp = contact_common_plane(*a.shape, a.q, A, *b.shape, b.q, B, cp, moved);
    else cp = fast_common_plane(*a.shape, a.q, A, *b.shape, b.q, B, cp.n, 1e300);
    have = true;
    const PolyContact contact = polyhedron_contact(A, B, cp);
    const PolyContactLoads loads = polyhedron_contact_loads(contact, law, a.x, a.v, a.w, b.x, b.v, b.w, xi, dt);
    b.v += ((1 / b.mass) * loads.force_on_b + g) * dt;
    b.x += b.v * dt;
    rigid_rotation_step(b.q, b.w, loads.torque_on_b, b.inertia, false, dt);
    tr.t.push_back((k_step + 1) * dt);
    tr.x.push_back(b.x.x);
    tr.vx.push_back(b.v.x);
    tr.fz.push_back(loads.force_on_b.z);
  }
  return tr;
}

// Face-down on the level slab: at rest, carried by a force equal to its weight.
TEST(PolyhedronContact, ACubeFaceDownRestsOnItsWeight) {
  const double side = std::cbrt(kPi / 6), mass = 1000 * kPi / 6;
  const Track tr = slide(0, 0.5, 0.5, 1e-5);
  double mean = 0;
  const std::size_t from = tr.t.size() / 2;
  for (std::size_t k = from; k < tr.t.size(); ++k) mean += tr.fz[k];
  mean /= double(tr.t.size() - from);
  std::printf("face-down at rest: mean normal force / weight - 1 = %.1e, drift %.1e of the side\n", mean / (mass * 9.81) - 1,
              std::abs(tr.x.back()) / side);
  EXPECT_NEAR(mean, mass * 9.81, 1e-6 * mass * 9.81);
  EXPECT_LT(std::abs(tr.vx.back()), 1e-9);
  EXPECT_LT(std::abs(tr.x.back()), 1e-9 * side);
}

// On an incline of angle theta with friction mu = 0.5 (friction angle 26.6 degrees): below it the
// cube sticks (no creep once settled); above it, it slides with a = g (sin theta - mu cos theta).
TEST(PolyhedronContact, ACubeOnAnInclineSticksBelowTheFrictionAngleAndSlidesAbove) {
  const double side = std::cbrt(kPi / 6), mu = 0.5, pi = kPi;
  {
    const Track tr = slide(20 * pi / 180, mu, 0.6, 1e-5);
    const std::size_t settled = tr.t.size() / 3;  // after 0.2 s
    const double creep = tr.x.back() - tr.x[settled];
    std::printf("20 degrees: creep over 0.4 s %.1e of the side\n", std::abs(creep) / side);
    EXPECT_LT(std::abs(creep), 1e-6 * side) << "creep over 0.4 s at 20 degrees";
  }
  for (double degrees : {30.0, 40.0}) {
    const double theta = degrees * pi / 180;
    const Track tr = slide(theta, mu, 0.4, 1e-5);
    // the acceleration from the velocity between 0.1 s and 0.4 s
    const std::size_t k0 = tr.t.size() / 4, k1 = tr.t.size() - 1;
    const double a = (tr.vx[k1] - tr.vx[k0]) / (tr.t[k1] - tr.t[k0]);
    const double want = 9.81 * (std::sin(theta) - mu * std::cos(theta));
    std::printf("%.0f degrees: a / (g (sin - mu cos)) - 1 = %.1e\n", degrees, a / want - 1);
    EXPECT_NEAR(a, want, 0.01 * want) << degrees << " degrees";
  }
}

}  // namespace
}  // namespace dem
