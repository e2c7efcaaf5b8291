// Rolling resistance torques. Both act against the relative rolling velocity
// w_r = (w_A - w_B) with its twisting part along n removed, and are bounded by
// M_max = mu_r R* F_n.
//
// ConstantTorque (Wensrich & Katterfeld model A): M = -M_max w_r/|w_r|. Applied as is it chatters:
// when w_r is small the constant torque reverses w_r every step. The torque is therefore limited
// to what stops the relative rolling within this step, |M| <= I* |w_r| / dt, with
// 1/I* = 1/I_A + 1/I_B: w_r goes to zero and stays there instead of oscillating.
//
// Epsd (Ai et al. 2011, model C): an incremental rolling spring M_s <- M_s - k_r w_r dt with
// k_r = 2.25 S_n mu_r^2 R*^2, capped at M_max, plus a dashpot -C_r w_r while the spring is below the
// cap (off at full mobilisation, their f = 0), C_r = eta_r 2 sqrt(I_r k_r) with the rolling inertia
// 1/I_r = 1/(I_A + m_A r_A^2) + 1/(I_B + m_B r_B^2). It needs the spring torque M_s (carried per
// contact like the tangential spring). The spring holds a steady load below M_max without any
// rotation and the dashpot takes out the rocking, so a sphere on a slope it can hold comes to rest;
// the constant torque cannot (it resists only while the sphere turns, so it creeps at ~g sin a dt).
#pragma once
#include "core/contact/material_mixing.hpp"
#include "core/math/vec3.hpp"

namespace dem {

// 1/(I + m r^2) of one side of a contact (the inertia about a contact point on its surface); 0 for
// a wall or any body of infinite mass or inertia.
DEM_HD inline real inv_rolling_inertia(real inv_inertia, real inv_mass, real curvature) {
  if (!(inv_inertia > real(0)) || !(inv_mass > real(0)) || !(curvature > real(0))) return real(0);
  return real(1) / (real(1) / inv_inertia + real(1) / (inv_mass * curvature * curvature));
}

// Rolling resistance torque on A. w_rel = w_A - w_B; inv_inertia_sum = 1/I_A + 1/I_B (1/(kg m^2));
// normal_stiffness = S_n (N/m, used by Epsd); history: Epsd spring torque (N m, in/out);
// inv_rolling_inertia_sum: 1/I_r (Epsd's dashpot; 0: no dashpot); constant_only: the caller knows
// the model is ConstantTorque (the batched pair pass, whose lanes must not branch).
DEM_HD inline Vec3 rolling_resistance_torque(const ContactParams& p, Vec3 n, Vec3 w_rel, real r_star,
                                             real normal_force, real normal_stiffness,
                                             real inv_inertia_sum, Vec3& history, real dt,
                                             real inv_rolling_inertia_sum = 0, bool constant_only = false) {
  const real m_max = p.rolling_friction * r_star * normal_force;
  const Vec3 w_r = w_rel - dot(w_rel, n) * n;
  if (!constant_only && p.rolling_model == RollingModel::Epsd) {
    const real k_r = real(2.25) * normal_stiffness * p.rolling_friction * p.rolling_friction * r_star * r_star;
    history -= dot(history, n) * n;  // keep the spring torque in the tangent plane
    history -= k_r * dt * w_r;
    const real len = norm(history);
    if (len >= m_max) {  // full mobilisation: the plastic torque alone
      if (len > m_max) history *= m_max / len;
      return history;
    }
    if (!(inv_rolling_inertia_sum > real(0))) return history;
    const real c_r = p.rolling_damping * 2 * std::sqrt(k_r / inv_rolling_inertia_sum);
    return history - c_r * w_r;
  }
  // the constant torque, without a branch (both outcomes computed, one kept; an unkept quotient
  // may be inf or NaN): the batched pair pass vectorises this
  const real w_len = norm(w_r);
  const real stop_rate = w_len / (inv_inertia_sum * dt);
  const real stop = inv_inertia_sum > real(0) ? stop_rate : m_max;
  const bool turning = (w_len > real(0)) & (m_max > real(0));  // (both compared: no branch)
  return select(turning, -(dem_min(m_max, stop) / w_len) * w_r, Vec3{0, 0, 0});
}

}  // namespace dem
