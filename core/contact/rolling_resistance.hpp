// Rolling resistance torques. Both act against the relative rolling velocity
// w_r = (w_A - w_B) with its twisting part along n removed, and are bounded by
// M_max = mu_r R* F_n.
//
// ConstantTorque (Wensrich & Katterfeld model A): M = -M_max w_r/|w_r|. Applied as is it chatters:
// when w_r is small the constant torque reverses w_r every step. The torque is therefore limited
// to what stops the relative rolling within this step, |M| <= I* |w_r| / dt, with
// 1/I* = 1/I_A + 1/I_B: w_r goes to zero and stays there instead of oscillating.
//
// Epsd (Ai et al. 2011, model C without dashpot): an incremental rolling spring
// M <- M - k_r w_r dt with k_r = 2.25 S_n mu_r^2 R*^2, capped at M_max. It needs the history
// torque M (carried per contact like the tangential spring) and gives a static rolling stiffness.
#pragma once
#include "core/contact/material_mixing.hpp"
#include "core/math/vec3.hpp"

namespace dem {

// Rolling resistance torque on A. w_rel = w_A - w_B; inv_inertia_sum = 1/I_A + 1/I_B (1/(kg m^2));
// normal_stiffness = S_n (N/m, used by Epsd); history: Epsd spring torque (N m, in/out).
DEM_HD inline Vec3 rolling_resistance_torque(const ContactParams& p, Vec3 n, Vec3 w_rel, real r_star,
                                             real normal_force, real normal_stiffness,
                                             real inv_inertia_sum, Vec3& history, real dt) {
  const real m_max = p.rolling_friction * r_star * normal_force;
  const Vec3 w_r = w_rel - dot(w_rel, n) * n;
  if (p.rolling_model == RollingModel::Epsd) {
    const real k_r = real(2.25) * normal_stiffness * p.rolling_friction * p.rolling_friction * r_star * r_star;
    history -= dot(history, n) * n;  // keep the spring torque in the tangent plane
    history -= k_r * dt * w_r;
    const real len = norm(history);
    if (len > m_max) history *= m_max / len;
    return history;
  }
  const real w_len = norm(w_r);
  if (w_len <= real(0) || m_max <= real(0)) return Vec3{0, 0, 0};
  const real stop = inv_inertia_sum > real(0) ? w_len / (inv_inertia_sum * dt) : m_max;
  return -(dem_min(m_max, stop) / w_len) * w_r;
}

}  // namespace dem
