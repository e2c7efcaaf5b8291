// The whole per-contact body shared by the host and CUDA paths: relative kinematics at the contact
// point, the normal and tangential law (normal_tangential.hpp), rolling resistance, and the torques
// on both sides. Geometry (sphere-sphere or an H2 mesh entity) is computed before and passed in;
// history is updated in place.
#pragma once
#include "core/contact/normal_tangential.hpp"
#include "core/contact/rolling_resistance.hpp"
#include "core/geometry/contact_geometry.hpp"
#include "core/geometry/sphere_sphere.hpp"

namespace dem {

// One side of a contact. Walls and other prescribed-motion bodies have curvature 0 (flat on the
// scale of the contact), inv_mass 0 and inv_inertia 0; then R* = R_A, m* = m_A, I* = I_A.
struct BodyKinematics {
  Vec3 x;            // m, centre of mass (sphere) or rotation centre (mesh body)
  Vec3 v;            // m/s
  Vec3 w;            // rad/s
  real curvature;    // 1/m, 1/radius
  real inv_mass;     // 1/kg
  real inv_inertia;  // 1/(kg m^2)
};

// Per-contact history: everything a contact must remember from one step to the next.
// The second vector serves the one part that needs it, which the scene loader keeps to one per
// interaction: EPSD's rolling spring torque; or, with the constant rolling torque (which keeps no
// history), the Mindlin-Deresiewicz reversal force T*, or the perfectly plastic law's lock
// overlap in its x. So every combination fits the same six numbers, and the pair loop of the
// default laws moves no more than these (a seventh cost 2 % on the mixer).
struct ContactHistory {
  Vec3 tangential;  // m, Mindlin or linear spring displacement xi; N, T (Mindlin-Deresiewicz)
  Vec3 rolling;     // N m, rolling spring torque (RollingModel::Epsd); N, T* (Mindlin-Deresiewicz);
                    // x: m, the overlap at which a perfectly plastic contact locked (0 while it loads)
};

struct ContactResult {
  Vec3 force_on_a;   // N; B receives -force_on_a
  Vec3 torque_on_a;  // N m, about A's x
  Vec3 torque_on_b;  // N m, about B's x
  real normal_force; // N
  bool sliding;
};

// The loads of a contact whose overlap is positive (evaluate_contact checks it; the batched pair
// pass computes these for every lane and keeps them where the overlap is positive). kAllModels,
// kDefaultLaw: the law set it is built for (normal_tangential_force).
template <bool kAllModels = true, bool kDefaultLaw = false>
DEM_HD_INLINE ContactResult contact_loads(const ContactParams& p, const ContactGeometry& g, const BodyKinematics& a,
                                          const BodyKinematics& b, ContactHistory& h, real dt) {
  ContactResult out;
  const real r_star = effective_from_inverses(a.curvature, b.curvature);
  const real m_star = effective_from_inverses(a.inv_mass, b.inv_mass);
  const Vec3 v_rel = rigid_point_velocity(a.v, a.w, a.x, g.point) - rigid_point_velocity(b.v, b.w, b.x, g.point);
  const NormalTangentialResult hm = normal_tangential_force<kAllModels, kDefaultLaw>(
      p, g.normal, g.overlap, v_rel, r_star, m_star, h.tangential, dt, h.rolling, h.rolling.x);
  const bool epsd = !kDefaultLaw && p.rolling_model == RollingModel::Epsd;
  const real inv_i_roll = epsd ? inv_rolling_inertia(a.inv_inertia, a.inv_mass, a.curvature) +
                                     inv_rolling_inertia(b.inv_inertia, b.inv_mass, b.curvature)
                               : real(0);
  const Vec3 m_roll = rolling_resistance_torque(p, g.normal, a.w - b.w, r_star, hm.normal_force, hm.normal_stiffness,
                                                a.inv_inertia + b.inv_inertia, h.rolling, dt, inv_i_roll, kDefaultLaw);
  out.force_on_a = hm.force;
  out.torque_on_a = cross(g.point - a.x, hm.force) + m_roll;
  out.torque_on_b = cross(g.point - b.x, -hm.force) - m_roll;
  out.normal_force = hm.normal_force;
  out.sliding = hm.sliding;
  return out;
}

template <bool kAllModels = true>  // (normal_tangential_force)
DEM_HD_INLINE ContactResult evaluate_contact(const ContactParams& p, const ContactGeometry& g,
                                             const BodyKinematics& a, const BodyKinematics& b,
                                             ContactHistory& h, real dt) {
  if (!(g.overlap > real(0))) {
    h = ContactHistory{{0, 0, 0}, {0, 0, 0}};
    return ContactResult{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, false};
  }
  return contact_loads<kAllModels>(p, g, a, b, h, dt);
}

}  // namespace dem
