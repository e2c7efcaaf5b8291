// Central-difference integration, broad-phase cell keys, and the body loads' integer sums.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "core/geometry/periodic.hpp"
#include "core/engine/phases.hpp"
#include "core/grid/cell_grid.hpp"
#include "core/integrate/central_difference.hpp"

namespace dem {
namespace {

TEST(CentralDifference, FreeFallFollowsTheStaggeredScheme) {
  // With v staggered half a step, x_n = x0 + n dt v_(1/2) + g dt^2 n(n-1)/2 exactly (Eqs. 7-9),
  // where v_(1/2) = v0 + g dt: the discrete solution, compared to round-off.
  const double dt = 1e-3, g = -9.81;
  ParticleMotion s{{0, 0, 1}, {0, 0, 0}, {0, 0, 0}, quat_identity()};
  const int n = 1000;
  for (int i = 0; i < n; ++i) central_difference_step(s, {0, 0, 0}, {0, 0, 0}, 1, 1, {0, 0, g}, false, dt);
  const double expected = 1 + g * dt * dt * n * (n + 1) / 2.0;
  EXPECT_NEAR(s.x.z, expected, 1e-12);
  EXPECT_NEAR(s.v.z, g * n * dt, 1e-12);
  // And it converges to the continuous parabola at first order in dt: |error| = |g| dt t / 2.
  EXPECT_NEAR(s.x.z - (1 + 0.5 * g * 1.0), 0.5 * g * dt * 1.0, 1e-12);
}

TEST(CentralDifference, SpinAndPrescribedMotion) {
  ParticleMotion s{{0, 0, 0}, {1, 0, 0}, {0, 0, 2}, quat_identity()};
  for (int i = 0; i < 500; ++i) central_difference_step(s, {5, 0, 0}, {0, 0, 0}, 1, 1, {0, 0, -9.81}, true, 1e-3);
  EXPECT_DOUBLE_EQ(s.v.x, 1.0);  // prescribed: forces and gravity do not change the velocity
  EXPECT_NEAR(s.x.x, 0.5, 1e-12);
  const Vec3 ex = rotate(s.q, Vec3{1, 0, 0});  // rotated by 2 rad/s * 0.5 s = 1 rad about z
  EXPECT_NEAR(ex.x, std::cos(1.0), 1e-12);
  EXPECT_NEAR(ex.y, std::sin(1.0), 1e-12);
  // Torque on a free sphere: dw = T/I dt.
  ParticleMotion t{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, quat_identity()};
  central_difference_step(t, {0, 0, 0}, {0, 3, 0}, 1, 2, {0, 0, 0}, false, 0.01);
  EXPECT_DOUBLE_EQ(t.w.y, 0.06);
  EXPECT_DOUBLE_EQ(sphere_inertia(sphere_mass(1000, 0.1), 0.1), 0.4 * 1000 * 4.0 / 3.0 * M_PI * 1e-3 * 0.01);
}

TEST(CentralDifference, LongSpinKeepsAUnitQuaternionAndTheExactAngle) {
  // The orientation is renormalised only when |q|^2 drifts by more than 1e-13: after 200,000
  // steps of a steady spin (the length of the paper's mixer run is 400,000) the quaternion must
  // still be unit to that level and the rotation must be the exact one about the fixed axis.
  const Vec3 w{30, -50, 80};
  const double dt = 5e-5;
  ParticleMotion s{{0, 0, 0}, {0, 0, 0}, w, quat_identity()};
  const int n = 200000;
  for (int i = 0; i < n; ++i) central_difference_step(s, {0, 0, 0}, {0, 0, 0}, 1, 1, {0, 0, 0}, false, dt);
  EXPECT_NEAR(s.q.w * s.q.w + s.q.x * s.q.x + s.q.y * s.q.y + s.q.z * s.q.z, 1.0, 2e-13);
  const Vec3 axis = normalized(w);
  const double angle = norm(w) * dt * n;  // 1000 rad
  const Vec3 v{1, 0, 0};
  const Vec3 expected = v * std::cos(angle) + cross(axis, v) * std::sin(angle) + axis * dot(axis, v) * (1 - std::cos(angle));
  // Round-off of the angle accumulates over the steps (about n * 1e-16 rad per rad turned).
  EXPECT_LT(norm(rotate(s.q, v) - expected), 1e-9);
}

TEST(Quaternion, RotationVectorMatchesSinCosOnBothSidesOfTheSeriesBranch) {
  // quat_from_rotation_vector uses series below a half angle of 0.05 rad; they must agree with
  // cos(h), sin(h) to rounding (a few ulp) there, and the branch must not show at the threshold.
  for (double angle : {0.0, 1e-14, 1e-8, 1e-4, 5e-3, 0.05, 0.0999999, 0.1, 0.1000001, 0.5, 3.0}) {
    const Vec3 axis = normalized(Vec3{0.3, -0.5, 0.8});
    const Quat q = quat_from_rotation_vector(angle * axis);
    const double h = angle / 2;
    EXPECT_NEAR(q.w, std::cos(h), 4e-16) << angle;
    EXPECT_NEAR(q.x, std::sin(h) * axis.x, 4e-16 * std::max(1.0, h)) << angle;
    EXPECT_NEAR(q.z, std::sin(h) * axis.z, 4e-16 * std::max(1.0, h)) << angle;
    // |q|^2 sums four rounded squares of rounded inputs: a few ulp of 1 (2.2e-16 each).
    EXPECT_NEAR(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z, 1.0, 1e-15) << angle;
  }
}

TEST(CellGrid, CoordinatesKeysAndBits) {
  const CellGrid g{{-1, -2, -3}, 0.5, {4, 8, 12}, 97};
  const Int3 c = cell_coords(Vec3{-0.99, -2.0, 2.99}, g);
  EXPECT_EQ(c.x, 0);
  EXPECT_EQ(c.y, 0);
  EXPECT_EQ(c.z, 11);
  EXPECT_EQ(cell_key(c, g), 11u * 8 * 4);
  const Int3 below = cell_coords(Vec3{-1.2, -2.6, -3.01}, g);  // outside the box: negative cells
  EXPECT_EQ(below.x, -1);
  EXPECT_EQ(below.y, -2);
  EXPECT_EQ(cell_key(below, g), 0u);  // clamped into the boundary cell
  // Far away, infinite or NaN: clamped to +-2^28 (0 for NaN), never an int32 overflow.
  const Int3 far = cell_coords(Vec3{1e7, -1e30, real(std::numeric_limits<double>::infinity())}, g);
  EXPECT_EQ(far.x, 20000002);  // (1e7 + 1) / 0.5, still exact
  EXPECT_EQ(far.y, -(1 << 28));
  EXPECT_EQ(far.z, 1 << 28);
  EXPECT_EQ(cell_coords(Vec3{real(std::nan("")), 0, 0}, g).x, 0);
  // Every key of the bounded grid is distinct and below the cell count.
  std::set<std::uint32_t> keys;
  for (int z = 0; z < 12; ++z)
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 4; ++x) keys.insert(cell_key(Int3{x, y, z}, g));
  EXPECT_EQ(keys.size(), 4u * 8 * 12);
  EXPECT_EQ(*keys.rbegin(), 4u * 8 * 12 - 1);
  // Hashed keys are in range for any coordinates, also negative ones.
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> u(-100000, 100000);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(hashed_cell_key(Int3{u(rng), u(rng), u(rng)}, 97), 97u);
  EXPECT_EQ(key_bits(1), 0);
  EXPECT_EQ(key_bits(2), 1);
  EXPECT_EQ(key_bits(384), 9);
  EXPECT_EQ(key_bits(1u << 20), 20);
}

TEST(Periodic, WrapsAlwaysLandInsideAndImagesAreAntisymmetric) {
  // The box [0.1, 0.4) (lo not 0: lo + L and hi - L round), coordinates on and one ulp around the
  // faces and random ones within a step of them: a wrap lands in [lo, hi) every time, and a
  // position inside is left as it is by both wraps.
  const PeriodicBox b = make_periodic_box(Vec3{0.1, 0.1, 0.1}, Vec3{0.4, 0.4, 0.4}, true, false, true);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1e-6, 1e-6);
  std::vector<double> xs = {b.lo.x, b.hi.x, std::nextafter(b.lo.x, 0.0), std::nextafter(b.hi.x, 1.0),
                            std::nextafter(b.hi.x, 0.0), std::nextafter(b.lo.x, 1.0)};
  for (int k = 0; k < 100000; ++k) xs.push_back((k % 2 ? b.lo.x : b.hi.x) + u(rng));
  for (double c : xs) {
    Vec3 x{real(c), real(c), real(c)};
    const Vec3 before = x;
    wrap_position(b, x);
    ASSERT_TRUE(x.x >= b.lo.x && x.x < b.hi.x) << c;
    ASSERT_TRUE(x.z >= b.lo.z && x.z < b.hi.z) << c;
    EXPECT_EQ(x.y, before.y);  // not periodic: untouched
    const Vec3 far = wrap_far(b, before);
    ASSERT_TRUE(far.x >= b.lo.x && far.x < b.hi.x) << c;
    if (c >= b.lo.x && c < b.hi.x) {
      EXPECT_EQ(x.x, real(c));
    }
    Vec3 again = x;
    wrap_position(b, again);
    EXPECT_EQ(again.x, x.x);
    EXPECT_EQ(wrap_far(b, x).x, x.x);
    // nearest images: exactly antisymmetric, and shorter than half a period
    const Vec3 d = nearest_image(b, x - Vec3{real(0.12), real(0.3), real(0.39)});
    const Vec3 e = nearest_image(b, Vec3{real(0.12), real(0.3), real(0.39)} - x);
    EXPECT_EQ(d.x, -e.x);
    EXPECT_EQ(d.z, -e.z);
    EXPECT_LE(std::abs(d.x), b.half.x);
  }
  EXPECT_NEAR(wrap_far(b, Vec3{real(1.05), 0, real(-0.5)}).x, 0.15, 1e-15);  // three periods away (rounded)
}

TEST(BodyLoads, EachParticlesSlotsGoToTheirBodiesInTheBodyUnits) {
  // Two particles in blocks 1 and 0; elements 0 and 2 belong to body 0, element 1 to body 1.
  const index_t nb = 2;
  const index_t elem_body[3] = {0, 1, 0};
  std::uint8_t count[2] = {3, 1};
  const std::int32_t block[2] = {1, 0};
  std::vector<EntityContact> entity(2 * kMaxMeshContacts);
  std::vector<Vec3> normal(entity.size()), bf(entity.size()), bt(entity.size());
  std::vector<Vec3> history(entity.size());  // (the tangential histories; no second)
  const std::int64_t b0 = kMaxMeshContacts;  // particle 0's block
  entity[b0 + 0].element = 0;
  entity[b0 + 1].element = 1;
  entity[b0 + 2].element = 2;
  bf[b0 + 0] = Vec3{1, 2, 3};
  bf[b0 + 1] = Vec3{10, 20, 30};
  bf[b0 + 2] = Vec3{100, 200, 300};
  bt[b0 + 2] = Vec3{0, 0, 7};
  entity[0].element = 1;  // particle 1's one slot
  bf[0] = Vec3{-5, 0, 0};
  bf[1] = Vec3{1e9, 1e9, 1e9};  // an unused slot, never read
  entity[1].element = 0;
  const MeshSlotsView sv{count, entity.data(), normal.data(), SplitHistory{history.data(), nullptr}, bf.data(), bt.data(), block};
  const LoadQuantum q = quanta_for_bodies(LoadQuantum{}, 1000, 2);  // units 2^-47 N, 2^-46 N m
  EXPECT_EQ(q.body_force_scale, std::ldexp(1.0, 47));
  EXPECT_EQ(q.body_torque_scale, std::ldexp(1.0, 46));
  std::vector<BodyLoadSum> all(nb);
  for (index_t i = 1; i >= 0; --i) add_particle_body_loads(i, sv, elem_body, q, -1, all.data());
  Vec3 f[nb], t[nb];
  for (index_t b = 0; b < nb; ++b) body_load_value(all[b], q, f[b], t[b]);
  EXPECT_EQ(f[0].y, 202);  // particle 0's slots 0 and 2
  EXPECT_EQ(f[1].x, 5);    // particle 0's slot 1 and particle 1's
  EXPECT_EQ(f[1].z, 30);
  EXPECT_EQ(t[0].z, 7);
  EXPECT_EQ(t[1].z, 0);
  // one body at a time: the same integers
  for (index_t b = 0; b < nb; ++b) {
    BodyLoadSum one;
    for (index_t i = 0; i < 2; ++i) add_particle_body_loads(i, sv, elem_body, q, b, &one);
    for (int c = 0; c < 3; ++c) {
      EXPECT_EQ(one.f[c].hi, all[b].f[c].hi);
      EXPECT_EQ(one.f[c].lo, all[b].f[c].lo);
      EXPECT_EQ(one.t[c].lo, all[b].t[c].lo);
    }
  }
}

TEST(BodyLoads, IntegerSumsGiveTheSameBitsInAnyOrderAndSplit) {
  // 200,000 contact loads of mixed signs and sizes up to the units' bound, each a whole number of
  // units (m units, |m| < 2^53 shifted right by 0 to 30 bits: exact doubles, rounded by nothing):
  // summed in order, backwards, shuffled and in 7 interleaved parts added afterwards, the same
  // integers, and their value the exact total (a 128-bit integer) rounded once.
  __extension__ typedef __int128 Int128;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::int64_t> mant(-(std::int64_t(1) << 53) + 1, (std::int64_t(1) << 53) - 1);
  std::uniform_int_distribution<int> shift(0, 30);
  const LoadQuantum q = quanta_for_bodies(LoadQuantum{}, 500, 1);  // 2^-48 N, 2^-48 N m
  std::vector<Vec3> f(200000), t(f.size());
  Int128 exact = 0;
  for (std::size_t k = 0; k < f.size(); ++k) {
    const std::int64_t m = mant(rng) >> shift(rng);
    exact += m;
    f[k] = Vec3{double(m) * q.body_force_unit, double(mant(rng)) * q.body_force_unit, 0};
    t[k] = Vec3{0, 0, double(mant(rng)) * q.body_torque_unit};
  }
  const auto sum = [&](const std::vector<std::size_t>& order) {
    BodyLoadSum s;
    for (std::size_t k : order) add_body_load(s, f[k], t[k], q);
    return s;
  };
  std::vector<std::size_t> order(f.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  const BodyLoadSum forward = sum(order);
  std::reverse(order.begin(), order.end());
  const BodyLoadSum backward = sum(order);
  std::shuffle(order.begin(), order.end(), rng);
  const BodyLoadSum shuffled = sum(order);
  BodyLoadSum parts;
  for (int part = 0; part < 7; ++part) {
    std::vector<std::size_t> mine;
    for (std::size_t k = std::size_t(part); k < f.size(); k += 7) mine.push_back(k);
    parts = BodyLoadSumOp{}(parts, sum(mine));
  }
  Vec3 want_f, want_t;
  body_load_value(forward, q, want_f, want_t);
  for (const BodyLoadSum* s : std::initializer_list<const BodyLoadSum*>{&backward, &shuffled, &parts}) {
    Vec3 got_f, got_t;
    body_load_value(*s, q, got_f, got_t);
    EXPECT_EQ(got_f.x, want_f.x);
    EXPECT_EQ(got_f.y, want_f.y);
    EXPECT_EQ(got_t.z, want_t.z);
  }
  const double exact_value = double(exact) * q.body_force_unit;  // (one rounding; the unit a power of two)
  EXPECT_EQ(double(want_f.x), exact_value);
  EXPECT_NE(exact_value, 0);
}

}  // namespace
}  // namespace dem
