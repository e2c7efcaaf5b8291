// Unit quaternion for orientations (spheres do not need one for contact, but the state carries it
// so that polyhedral particles and restart files need no new field later).
#pragma once
#include "core/math/vec3.hpp"

namespace dem {

struct Quat {
  real w, x, y, z;  // w + xi + yj + zk
};

DEM_HD inline Quat quat_identity() { return Quat{1, 0, 0, 0}; }
// (a.w b.w - a.v . b.v, a.w b.v + b.w a.v + a.v x b.v), grouped so that the three parts of the
// vector are the same operations: GCC's basic-block vectoriser turns the textbook order, whose
// signs alternate from part to part, into fused vfmaddsub even under -ffp-contract=off, which
// would break the bitwise agreement with the GPU (tests/lint/strict_fp_lint.sh checks the objects).
DEM_HD inline Quat operator*(Quat a, Quat b) {
  const real w = a.w * b.w - (a.x * b.x + a.y * b.y + a.z * b.z);
  return {w, (a.w * b.x + b.w * a.x) + (a.y * b.z - a.z * b.y), (a.w * b.y + b.w * a.y) + (a.z * b.x - a.x * b.z),
          (a.w * b.z + b.w * a.z) + (a.x * b.y - a.y * b.x)};
}
DEM_HD inline Quat normalized(Quat q) {
  const real inv = real(1) / std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  return {q.w * inv, q.x * inv, q.y * inv, q.z * inv};
}
// Rotation by angle |theta| about theta/|theta| (rotation vector), exact for any angle. Below a
// half angle h of 0.05 rad (every time step of a DEM run: h = |w| dt / 2) the series of cos h and
// sin h / h are used; their first omitted terms, h^12/12! and h^10/11!, are below 1e-20, so the
// result is the same to rounding, without the cost of sincos.
constexpr real kSmallHalfAngle2 = real(0.0025);  // (half angle)^2 below which the series serve

// The series alone, for h2 = (angle / 2)^2 = |theta|^2 / 4 below kSmallHalfAngle2 (no branch: the
// host's vectorised integration calls it directly and takes the rare larger turns one by one).
DEM_HD inline Quat quat_from_small_rotation(Vec3 theta, real h2) {
  // Horner in h^2 with the coefficients folded at compile time (no division at run time).
  constexpr real c1 = real(-1) / 2, c2 = real(1) / 24, c3 = real(-1) / 720, c4 = real(1) / 40320,
                 c5 = real(-1) / 3628800;
  constexpr real s1 = real(-1) / 12, s2 = real(1) / 240, s3 = real(-1) / 10080, s4 = real(1) / 725760;
  const real c = 1 + h2 * (c1 + h2 * (c2 + h2 * (c3 + h2 * (c4 + h2 * c5))));
  const real s = real(0.5) + h2 * (s1 + h2 * (s2 + h2 * (s3 + h2 * s4)));  // sin(h) / (2h)
  return {c, theta.x * s, theta.y * s, theta.z * s};
}
DEM_HD inline Quat quat_from_rotation_vector(Vec3 theta) {
  const real h2 = real(0.25) * norm2(theta);  // (angle / 2)^2
  if (h2 < kSmallHalfAngle2) return quat_from_small_rotation(theta, h2);
  const real angle = std::sqrt(4 * h2);
  const real s = std::sin(angle / 2) / angle;
  return {std::cos(angle / 2), theta.x * s, theta.y * s, theta.z * s};
}
// q or r, without a branch
DEM_HD inline Quat select(bool c, Quat q, Quat r) {
  return {c ? q.w : r.w, c ? q.x : r.x, c ? q.y : r.y, c ? q.z : r.z};
}
DEM_HD inline Quat conjugate(Quat q) { return {q.w, -q.x, -q.y, -q.z}; }  // the inverse rotation of a unit q
DEM_HD inline Vec3 rotate(Quat q, Vec3 v) {
  const Vec3 u{q.x, q.y, q.z};
  const Vec3 t = real(2) * cross(u, v);
  return v + q.w * t + cross(u, t);
}

}  // namespace dem
