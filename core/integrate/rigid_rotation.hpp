// Rotation of a body with a full inertia tensor (polyhedral particles), staggered as the spheres'
// central differences (core/integrate/central_difference.hpp):
//   L^(n+1/2) = L^(n-1/2) + T^n dt        (world frame: the torque's kick)
//   q^(n+1)   = the free rotation of the body with L^(n+1/2) over dt
// The free rotation is the symplectic splitting of Dullweber, Leimkuhler & McLachlan (J. Chem.
// Phys. 107 (1997) 5840): with the body-frame angular momentum l and the principal moments I,
//   R1(dt/2) R2(dt/2) R3(dt) R2(dt/2) R1(dt/2),
// where Rk(h) turns the body about its principal axis k by the angle h l_k / I_k (and l the
// opposite way about the same axis, which keeps the world-frame L). Each turn is taken in Cayley
// form, cos a = (1 - t^2) / (1 + t^2), sin a = 2t / (1 + t^2) with t = h l_k / (2 I_k): an exact
// rotation by the angle 2 atan(t), rational, so that host and device give the same bits (no sin
// or cos; CUDA's differ from glibc's). Each turn is the exact flow of a modified single-axis
// Hamiltonian, so the step is symplectic and time-reversible, second order in dt: the world-frame
// angular momentum is kept to rounding, and a free body's energy oscillates by O(dt^2) without
// drift. Spheres do not use it (their step is the one above, bit for bit).
//
// The state is the world-frame angular velocity w (the field every particle has): the angular
// momentum is L = R I R^T w, formed at the kick and turned back into w after the rotation.
#pragma once
#include "core/math/quat.hpp"

namespace dem {

// A principal-axis turn in Cayley form: q' = q (c + s e_k), for the body axis k, and the body-frame
// momentum l turned by the inverse about the same axis. t = h l_k / (2 I_k).
DEM_HD inline void cayley_axis_turn(Quat& q, Vec3& l, int axis, real t) {
  // The unit quaternion of a rotation by a = 2 atan(t): cos(a/2), sin(a/2) = (1, t) / sqrt(1 + t^2).
  // Its rotation matrix needs cos a = (1 - t^2) / (1 + t^2) and sin a = 2t / (1 + t^2).
  const real inv = real(1) / (real(1) + t * t);
  const real c = (real(1) - t * t) * inv, s = real(2) * t * inv;
  const real r = real(1) / std::sqrt(real(1) + t * t);
  const real qw = r, qs = t * r;
  if (axis == 0) {
    q = q * Quat{qw, qs, 0, 0};
    const real y = c * l.y + s * l.z, z = -s * l.y + c * l.z;
    l.y = y;
    l.z = z;
  } else if (axis == 1) {
    q = q * Quat{qw, 0, qs, 0};
    const real z = c * l.z + s * l.x, x = -s * l.z + c * l.x;
    l.z = z;
    l.x = x;
  } else {
    q = q * Quat{qw, 0, 0, qs};
    const real x = c * l.x + s * l.y, y = -s * l.x + c * l.y;
    l.x = x;
    l.y = y;
  }
}

// The free rotation over dt of a body with principal moments `inertia` (body frame) and body-frame
// angular momentum l; q maps body to world.
DEM_HD inline void free_rotation_step(Quat& q, Vec3& l, Vec3 inertia, real dt) {
  const real h = real(0.5) * dt;
  cayley_axis_turn(q, l, 0, real(0.5) * h * l.x / inertia.x);
  cayley_axis_turn(q, l, 1, real(0.5) * h * l.y / inertia.y);
  cayley_axis_turn(q, l, 2, real(0.5) * dt * l.z / inertia.z);
  cayley_axis_turn(q, l, 1, real(0.5) * h * l.y / inertia.y);
  cayley_axis_turn(q, l, 0, real(0.5) * h * l.x / inertia.x);
}

// One step of a rigid body's rotation: the torque's kick on L, the free rotation, and w back from L.
// inertia: the principal moments (kg m^2); prescribed: w is imposed (the body still turns with it).
DEM_HD inline void rigid_rotation_step(Quat& q, Vec3& w, Vec3 torque, Vec3 inertia, bool prescribed, real dt) {
  const Quat qc = conjugate(q);
  const Vec3 wb = rotate(qc, w);
  Vec3 l{inertia.x * wb.x, inertia.y * wb.y, inertia.z * wb.z};
  if (!prescribed) l += rotate(qc, torque) * dt;
  free_rotation_step(q, l, inertia, dt);
  // Renormalised every step: w and L pass through rotate(q, .), which scales by |q|^2, so a norm
  // left to drift by 1e-13 (as the spheres' is) would drift the angular momentum by as much a step.
  q = normalized(q);
  if (!prescribed) w = rotate(q, Vec3{l.x / inertia.x, l.y / inertia.y, l.z / inertia.z});
}

// The kinetic energy of rotation and the world-frame angular momentum of a body.
DEM_HD inline real rotational_energy(Quat q, Vec3 w, Vec3 inertia) {
  const Vec3 wb = rotate(conjugate(q), w);
  return real(0.5) * (inertia.x * wb.x * wb.x + inertia.y * wb.y * wb.y + inertia.z * wb.z * wb.z);
}
DEM_HD inline Vec3 angular_momentum(Quat q, Vec3 w, Vec3 inertia) {
  const Vec3 wb = rotate(conjugate(q), w);
  return rotate(q, Vec3{inertia.x * wb.x, inertia.y * wb.y, inertia.z * wb.z});
}

}  // namespace dem
