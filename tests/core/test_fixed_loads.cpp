// The pair loads' integer sums (core/engine/fixed_loads.hpp): rounding, clamping, exactness in any
// order, and the quanta's choice against the largest load a scene's laws give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "core/contact/contact_law.hpp"
#include "core/engine/fixed_loads.hpp"
#include "core/engine/phases.hpp"

using namespace dem;

namespace {
constexpr std::int64_t kClamp = std::int64_t(1) << 60;
}

// Nearest integer, ties to even, the same magnitude for either sign (so a pair's side B, which
// rounds -F, holds exactly the negated integer of side A: the sums of a closed system cancel).
TEST(FixedLoads, RoundsToNearestTiesToEvenSymmetrically) {
  EXPECT_EQ(to_fixed(0.5, 1), 0);
  EXPECT_EQ(to_fixed(1.5, 1), 2);
  EXPECT_EQ(to_fixed(2.5, 1), 2);
  EXPECT_EQ(to_fixed(-2.5, 1), -2);
  EXPECT_EQ(to_fixed(-1.5, 1), -2);
  EXPECT_EQ(to_fixed(2.4999999999999996, 1), 2);
  EXPECT_EQ(to_fixed(-0.0, 1), 0);
  EXPECT_EQ(to_fixed(0.75, 4), 3);                     // 3 quarters
  EXPECT_EQ(to_fixed(4503599627370497.0, 1), 4503599627370497);  // 2^52 + 1: an integer already
  EXPECT_EQ(to_fixed(-9007199254740994.0, 1), -9007199254740994);
  // the conversion's split at 2^31 (h 2^31 + l, l within +-2^30): either side of each seam
  for (const double seam : {std::ldexp(1.0, 30), std::ldexp(1.0, 31), std::ldexp(3.0, 30), std::ldexp(1.0, 32),
                            std::ldexp(1.0, 51), std::ldexp(1.0, 52), std::ldexp(1.0, 59), std::ldexp(1.0, 60)})
    for (const double d : {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5})
      for (const double x : {seam + d, -(seam + d), std::nextafter(seam, 0.0), -std::nextafter(seam, 0.0)}) {
        const double y = std::fmin(std::fmax(x, -std::ldexp(1.0, 60)), std::ldexp(1.0, 60));
        ASSERT_EQ(to_fixed(x, 1), static_cast<std::int64_t>(std::nearbyint(y))) << x;
      }
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-60, 60);
  for (int k = 0; k < 1000000; ++k) {
    const double x = std::ldexp(mantissa(rng), exponent(rng));
    const std::int64_t q = to_fixed(x, 1);
    ASSERT_EQ(to_fixed(-x, 1), -q) << x;
    ASSERT_LE(std::fabs(double(q) - x), 0.5) << x;
    ASSERT_EQ(q, static_cast<std::int64_t>(std::nearbyint(x))) << x;  // the library's rounding, to the bit
  }
}

// Beyond eight times the largest load a term is clamped, and NaN has a fixed value, so that the
// engines still agree to the bit on a state that is already unsound (the overlap and speed checks
// stop it), and sums of up to seven such terms do not wrap.
TEST(FixedLoads, ClampsBeyondTheRangeAndTakesNaNAsItsTop) {
  EXPECT_EQ(to_fixed(1e300, 1), kClamp);  // 2^60
  EXPECT_EQ(to_fixed(-1e300, 1), -kClamp);
  EXPECT_EQ(to_fixed(INFINITY, 1), kClamp);
  EXPECT_EQ(to_fixed(-INFINITY, 1), -kClamp);
  EXPECT_EQ(to_fixed(NAN, 1), kClamp);
  EXPECT_EQ(to_fixed(std::copysign(NAN, -1.0), 1), kClamp);  // whatever its sign bit
  EXPECT_EQ(to_fixed(std::ldexp(1.0, 60), 1), kClamp);       // the limits themselves
  EXPECT_EQ(to_fixed(-std::ldexp(1.0, 60), 1), -kClamp);
  EXPECT_EQ(to_fixed(-std::ldexp(1.0, 61), 1), -kClamp);
  EXPECT_EQ(to_fixed(-0.0, 1), 0);
  EXPECT_EQ(to_fixed(std::ldexp(1.0, 61), 1), kClamp);
  EXPECT_EQ(to_fixed(std::ldexp(1.0, 59), 1), std::int64_t(1) << 59);
  // seven clamped terms of either sign still do not wrap
  std::int64_t up = 0, down = 0;
  for (int k = 0; k < 7; ++k) up = fixed_add(up, to_fixed(NAN, 1)), down = fixed_add(down, to_fixed(-1e300, 1));
  EXPECT_EQ(up, 7 * kClamp);
  EXPECT_EQ(down, -7 * kClamp);
}

// The point of it all: a particle's total is the same bits for any order of its terms, and within
// half a unit per term of the exact sum.
TEST(FixedLoads, SumsAreExactInAnyOrder) {
  const LoadQuantum q{std::ldexp(1.0, 40), std::ldexp(1.0, -40), std::ldexp(1.0, 50), std::ldexp(1.0, -50)};
  std::mt19937_64 rng(11);
  std::normal_distribution<double> load(0, 1e-3);
  std::vector<std::pair<Vec3, Vec3>> terms(40);
  for (auto& t : terms) t = {{load(rng), load(rng), 100 * load(rng)}, {load(rng) * 1e-3, load(rng) * 1e-3, 0}};
  Vec3 first_f, first_t;
  for (int trial = 0; trial < 20; ++trial) {
    std::shuffle(terms.begin(), terms.end(), rng);
    FixedLoad sum;
    long double exact = 0;
    for (const auto& t : terms) {
      add_fixed_load(sum, t.first, t.second, q);
      exact += static_cast<long double>(t.first.z);
    }
    Vec3 f, t;
    finish_load_sum(sum, q, Vec3{0, 0, 0}, Vec3{0, 0, 0}, f, t);
    if (trial == 0) {
      first_f = f, first_t = t;
      EXPECT_LE(std::fabs(static_cast<double>(f.z - exact)), 0.5 * terms.size() * q.force_unit);
    } else {
      ASSERT_EQ(std::memcmp(&f, &first_f, sizeof f), 0) << "trial " << trial;
      ASSERT_EQ(std::memcmp(&t, &first_t, sizeof t), 0) << "trial " << trial;
    }
  }
}

// A pair's two sides cancel exactly (side B adds -F), whatever F is.
TEST(FixedLoads, APairsSidesCancelExactly) {
  const LoadQuantum q{std::ldexp(1.0, 45), std::ldexp(1.0, -45), 1, 1};
  std::mt19937_64 rng(5);
  std::normal_distribution<double> load(0, 1);
  FixedLoad a, b;
  for (int k = 0; k < 1000; ++k) {
    const PairLoad l{{load(rng), load(rng), load(rng)}, {0, 0, 0}, {0, 0, 0}};
    add_pair_load(l, false, q, a);
    add_pair_load(l, true, q, b);
  }
  for (int c = 0; c < 3; ++c) EXPECT_EQ(fixed_add(a.f[c], b.f[c]), 0) << c;
}

// The quanta: powers of two; the bound (two spheres of the largest radius overlapping by a whole
// radius, under the stiffest law, with friction) at 2^56 to 2^57 units; and the loads the laws
// actually give at that overlap (Hertz, damping, Coulomb friction, rolling torque) within it.
TEST(FixedLoads, QuantaCoverTheLargestLoadOfTheLaws) {
  const Material glass{2500, 6e10, 0.22}, soft{1000, 1e7, 0.2};
  const ContactParams stiff = mix_contact_params(glass, glass, InteractionParams{0.5, 0.9, 0.01});
  const ContactParams mixed = mix_contact_params(soft, glass, InteractionParams{0.8, 0.5, 0.01});
  const real r = 0.002;
  const real bound = std::max(pair_force_bound(stiff, r), pair_force_bound(mixed, r));
  EXPECT_EQ(bound, pair_force_bound(stiff, r));  // the stiffer law, though the softer pair has more friction
  const LoadQuantum q = quanta_for(bound, r);
  int e = 0;
  EXPECT_EQ(std::frexp(q.force_scale, &e), 0.5);  // a power of two
  EXPECT_EQ(std::frexp(q.torque_scale, &e), 0.5);
  EXPECT_EQ(q.force_unit * q.force_scale, 1.0);
  EXPECT_EQ(q.torque_unit * q.torque_scale, 1.0);
  EXPECT_GE(bound * q.force_scale, std::ldexp(1.0, 56));
  EXPECT_LT(bound * q.force_scale, std::ldexp(1.0, 57));
  EXPECT_GE(bound * r * q.torque_scale, std::ldexp(1.0, 56));
  EXPECT_LT(bound * r * q.torque_scale, std::ldexp(1.0, 57));
  // The glass pair at an overlap of a whole radius, closing at 1 m/s and sliding at 1 m/s with the
  // spheres spinning: the force and torques stay under the bound, and within a factor of 8 of it.
  const real mass = sphere_mass(2500, r), inertia = sphere_inertia(mass, r);
  const ContactGeometry g = sphere_sphere(Vec3{0, 0, 0}, r, Vec3{r, 0, 0}, r);
  ASSERT_NEAR(g.overlap, r, 1e-15);
  const BodyKinematics a{{0, 0, 0}, {0.5, 1, 0}, {0, 0, 100}, 1 / r, 1 / mass, 1 / inertia};
  const BodyKinematics b{{r, 0, 0}, {-0.5, 0, 0}, {0, 100, 0}, 1 / r, 1 / mass, 1 / inertia};
  ContactHistory h{{0, 0, 0}, {0, 0, 0}};
  for (int s = 0; s < 50; ++s) {  // the tangential spring loaded to its Coulomb limit
    const ContactResult res = evaluate_contact(stiff, g, a, b, h, real(1e-6));
    ASSERT_LT(norm(res.force_on_a), bound);
    ASSERT_LT(norm(res.torque_on_a), bound * r);
    ASSERT_LT(norm(res.torque_on_b), bound * r);
    ASSERT_GT(norm(res.force_on_a), bound / 8);  // (a bound of the right size, not a loose one)
  }
  // The linear law and SJKR cohesion count too; no law at all gives unit quanta (nothing to sum).
  InteractionParams linear{0.5, 0.5, 0.01};
  linear.normal = NormalModel::Linear;
  linear.stiffness = 1e9;
  EXPECT_GE(pair_force_bound(mix_contact_params(soft, soft, linear), r), 1e9 * r);
  EXPECT_EQ(quanta_for(0, r).force_scale, 1.0);
}
