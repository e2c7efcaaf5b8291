// Explicit central-difference integration of one sphere, santasusana2016 Eqs. 7-12:
//   a^n = F^n/m + g,  v^(n+1/2) = v^(n-1/2) + a^n dt,  x^(n+1) = x^n + v^(n+1/2) dt
//   dw^n = T^n/I,     w^(n+1/2) = w^(n-1/2) + dw^n dt, dtheta = w^(n+1/2) dt
// Velocities are staggered half a step behind positions; forces at step n use v^(n-1/2).
#pragma once
#include "core/math/quat.hpp"

namespace dem {

struct ParticleMotion {
  Vec3 x;  // m
  Vec3 v;  // m/s
  Vec3 w;  // rad/s
  Quat q;  // orientation
};

// prescribed: velocity and angular velocity are imposed (not integrated); the particle still moves.
// One step of the particle (Eqs. 7-12). Without branches but one: kSmallRotationOnly leaves that
// one out too (the host's vectorised integration), and then returns false where the turn of this
// step is too large for the series (s is then not advanced correctly, and the caller takes the
// general step instead); otherwise it returns true.
template <bool kSmallRotationOnly = false>
DEM_HD inline bool central_difference_step(ParticleMotion& s, Vec3 force, Vec3 torque, real inv_mass,
                                           real inv_inertia, Vec3 gravity, bool prescribed, real dt) {
  s.v = select(prescribed, s.v, s.v + (inv_mass * force + gravity) * dt);  // Eqs. 7-8
  s.w = select(prescribed, s.w, s.w + (inv_inertia * torque) * dt);        // Eqs. 10-11 (I = 2/5 m R^2)
  s.x += s.v * dt;                                                         // Eq. 9
  // Eq. 12, exact rotation. The product of two unit quaternions is unit to round-off; it is
  // renormalised only when its norm has drifted measurably (the drift stays below the threshold).
  const Vec3 theta = s.w * dt;
  const real h2 = real(0.25) * norm2(theta);
  const Quat q = (kSmallRotationOnly ? quat_from_small_rotation(theta, h2) : quat_from_rotation_vector(theta)) * s.q;
  const real n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
  const real drift = sizeof(real) == 4 ? real(1e-5) : real(1e-13);
  const Quat unit = normalized(q);
  s.q = select(dem_abs(n2 - 1) > drift, unit, q);
  return !kSmallRotationOnly || h2 < kSmallHalfAngle2;
}

DEM_HD inline void velocities_at_step_time(Vec3& v, Vec3& w, Vec3 force, Vec3 torque, real inv_mass,
                                           real inv_inertia, Vec3 gravity, bool prescribed, real dt) {
  if (prescribed) return;
  const real half = real(0.5) * dt;
  v += (inv_mass * force + gravity) * half;
  w += (inv_inertia * torque) * half;
}

// Inverse mass and inverse moment of inertia of a solid sphere.
DEM_HD inline real sphere_mass(real density, real radius) {
  return density * real(4) / 3 * real(3.14159265358979323846) * radius * radius * radius;
}
DEM_HD inline real sphere_inertia(real mass, real radius) { return real(0.4) * mass * radius * radius; }

}  // namespace dem
