// The rotation of bodies with a full inertia tensor (core/integrate/rigid_rotation.hpp): a free
// asymmetric body keeps its energy and angular momentum and shows the intermediate-axis flip; a
// torque about a principal axis gives the textbook spin-up.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/integrate/rigid_rotation.hpp"

namespace dem {
namespace {

TEST(RigidRotation, AFreeAsymmetricBodyKeepsEnergyAndAngularMomentum) {
  const Vec3 inertia{1, 2, 3};
  Quat q = normalized(Quat{0.9, 0.1, -0.3, 0.2});
  Vec3 w = rotate(q, Vec3{0.6, -0.5, 0.7});  // a generic spin, not near a principal axis
  const real dt = real(0.01) / norm(w);      // |w| dt = 0.01
  const real e0 = rotational_energy(q, w, inertia);
  const Vec3 l0 = angular_momentum(q, w, inertia);
  double worst_e = 0, worst_l = 0;
  for (int k = 0; k < 100000; ++k) {
    rigid_rotation_step(q, w, Vec3{0, 0, 0}, inertia, false, dt);
    worst_e = std::max(worst_e, std::abs(double(rotational_energy(q, w, inertia) - e0)) / e0);
    worst_l = std::max(worst_l, double(norm(angular_momentum(q, w, inertia) - l0)) / norm(l0));
  }
  std::printf("10^5 steps at |w| dt = 0.01: energy within %.2e, angular momentum within %.2e (relative)\n", worst_e, worst_l);
  EXPECT_LT(worst_e, 1e-6);
  EXPECT_LT(worst_l, 1e-10);  // to rounding: each turn keeps the world-frame momentum
  EXPECT_NEAR(norm2(Vec3{q.x, q.y, q.z}) + q.w * q.w, 1, 1e-12);
}

// Spun about the intermediate axis with a small disturbance, the body turns over again and again
// (the Dzhanibekov effect): the spin's body-frame component along that axis changes sign, while a
// spin about the largest or the smallest axis stays.
TEST(RigidRotation, TheIntermediateAxisFlipsAndTheOthersStay) {
  const Vec3 inertia{1, 2, 3};
  for (int axis = 0; axis < 3; ++axis) {
    Quat q = quat_identity();
    Vec3 wb{1e-3, 1e-3, 1e-3};
    (axis == 0 ? wb.x : axis == 1 ? wb.y : wb.z) = 1;
    Vec3 w = wb;
    const real dt = 0.01;
    int flips = 0;
    real last = 1;
    for (int k = 0; k < 20000; ++k) {  // 200 s: several flip periods at these rates
      rigid_rotation_step(q, w, Vec3{0, 0, 0}, inertia, false, dt);
      const Vec3 b = rotate(conjugate(q), w);
      const real along = axis == 0 ? b.x : axis == 1 ? b.y : b.z;
      if (along * last < 0) ++flips;
      last = along;
    }
    if (axis == 1)
      EXPECT_GE(flips, 4) << "the intermediate axis";
    else
      EXPECT_EQ(flips, 0) << "axis " << axis;
  }
}

// A constant torque T about a principal axis that stays along a world axis: w = T t / I exactly,
// and the body turns about that axis only.
TEST(RigidRotation, ATorqueAboutAPrincipalAxisSpinsItUpAsTorqueOverInertia) {
  const Vec3 inertia{2, 3, 5};
  Quat q = quat_identity();
  Vec3 w{0, 0, 0};
  const real dt = 1e-3, torque = 0.7;
  const int steps = 5000;
  for (int k = 0; k < steps; ++k) rigid_rotation_step(q, w, Vec3{0, torque, 0}, inertia, false, dt);
  EXPECT_NEAR(w.y, torque * steps * dt / inertia.y, 1e-12);
  EXPECT_EQ(w.x, 0);
  EXPECT_EQ(w.z, 0);
  EXPECT_EQ(q.x, 0);
  EXPECT_EQ(q.z, 0);
  // turned by about T t^2 / (2 I) (the staggered sum, to the Cayley angle's O(dt^2))
  const double angle = 2 * std::atan2(double(q.y), double(q.w));
  const double t = steps * dt;
  EXPECT_NEAR(angle, torque * t * t / (2 * inertia.y), 1e-3 * torque * t * t / (2 * inertia.y));
}

// A prescribed spin is kept, and the body turns with it.
TEST(RigidRotation, APrescribedSpinIsKept) {
  const Vec3 inertia{1, 2, 3};
  Quat q = quat_identity();
  Vec3 w{0.3, 0.2, -0.1};
  const Vec3 w0 = w;
  for (int k = 0; k < 100; ++k) rigid_rotation_step(q, w, Vec3{5, 5, 5}, inertia, true, 0.01);
  EXPECT_EQ(w.x, w0.x);
  EXPECT_EQ(w.y, w0.y);
  EXPECT_EQ(w.z, w0.z);
  EXPECT_LT(q.w, 1);
}

}  // namespace
}  // namespace dem
