// Damping of the Hertz contact from a coefficient of restitution.
//
// Normal force on A (delta = overlap, delta_dot = -v_n its rate, m* and R* effective mass and
// radius):
//     F_n = max(0, K delta^(3/2) + 2 zeta sqrt(S_n m*) delta_dot),
//     K = 4/3 E* sqrt(R*),   S_n = dF/d(delta) = 2 E* sqrt(R* delta),
// i.e. a dashpot proportional to the critical damping of the current tangent stiffness (the
// Tsuji-type delta^(1/4) dashpot). The total force is clamped at zero: a dry contact never pulls.
//
// Why a table is needed: with delta = L x and t = T tau, T^2 = m*/(K L^(1/2)), the impact becomes
//     x'' = -max(0, x^(3/2) + 2 sqrt(3/2) zeta x^(1/4) x'),   x(0) = 0, x'(0) = 1,
// with no parameter left but zeta: the restitution e = -x'(tau_end) depends on zeta alone, not on
// the impact velocity, the masses or the moduli. But e(zeta) has no closed form (the linear-spring
// relation zeta = -ln e / sqrt(ln^2 e + pi^2) gives e errors of several percent for Hertz), so we
// integrate this one-parameter ODE and invert it by bisection. This happens once per material pair
// when contact parameters are mixed, never per contact.
//
// Accuracy: classical RK4 with h = 5e-4 (about 6,500 steps for an impact) reproduces e to better
// than 1e-5 for zeta in [0, 3] (halving h changes e by < 4e-6); bisection stops at 1e-9 in zeta.
// Reference values: zeta = 0.2 -> e = 0.5454, zeta = 1 -> e = 0.1196, e = 0.05 -> zeta ~ 1.7.
#pragma once
#include "core/config.hpp"

namespace dem {
namespace detail {
// Right-hand side of the dimensionless impact equation above (c = 2 sqrt(3/2) zeta).
DEM_HD inline real hertz_unit_accel(real c, real x, real v) {
  if (x <= real(0)) return real(0);
  const real sx = std::sqrt(x);
  return -dem_max(real(0), x * sx + c * std::sqrt(sx) * v);
}
}  // namespace detail

// Coefficient of restitution of a binary Hertz impact with damping coefficient zeta >= 0.
DEM_HD inline real hertz_restitution(real zeta) {
  const real c = real(2) * std::sqrt(real(1.5)) * zeta;
  const real h = real(5e-4);
  real x = 0, v = 1;
  for (int step = 0; step < 1000000; ++step) {  // a bounded loop: impacts end within ~8 units
    const real k1x = v, k1v = detail::hertz_unit_accel(c, x, v);
    const real k2x = v + h / 2 * k1v, k2v = detail::hertz_unit_accel(c, x + h / 2 * k1x, v + h / 2 * k1v);
    const real k3x = v + h / 2 * k2v, k3v = detail::hertz_unit_accel(c, x + h / 2 * k2x, v + h / 2 * k2v);
    const real k4x = v + h * k3v, k4v = detail::hertz_unit_accel(c, x + h * k3x, v + h * k3v);
    x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x);
    v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
    if (x <= real(0)) return -v;  // separated: the force is zero beyond this point
  }
  return real(0);  // not reached for finite zeta; would mean the spheres stick
}

// Inverse of hertz_restitution: the zeta that gives restitution e, for 0 < e <= 1.
DEM_HD inline real hertz_damping_for_restitution(real e) {
  if (e >= real(1)) return real(0);
  real lo = 0, hi = 1;
  while (hertz_restitution(hi) > e && hi < real(1e3)) hi *= 2;  // bracket: e(zeta) decreases
  while (hi - lo > real(1e-9) * dem_max(real(1), hi)) {
    const real mid = (lo + hi) / 2;
    (hertz_restitution(mid) > e ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The linear spring-dashpot (F_n = max(0, k delta + 2 zeta sqrt(k m*) delta_dot), the force clamped
// at zero like the Hertz law's) has closed forms (Schwager & Poeschel 2007): with w0 = sqrt(k/m*),
// beta = zeta w0 and w = w0 sqrt(1 - zeta^2), the force vanishes (the contact ends) at
//     t_c = (pi - atan2(2 beta w, w^2 - beta^2)) / w,   and   e = exp(-beta t_c)
// (the velocity at F = 0 is v0 exp(-beta t_c) exactly). Over-damped (zeta > 1) the force vanishes
// at t_c = 2 ln(l2/l1) / (l1 - l2), l1,2 = -beta +- w0 sqrt(zeta^2 - 1), with e from the velocity
// then. Without the clamp, e would be exp(-zeta pi / sqrt(1 - zeta^2)), the textbook relation.
struct LinearImpact {
  real restitution;   // -
  real contact_time;  // in units of 1/w0
};
DEM_HD inline LinearImpact linear_impact(real zeta) {
  if (zeta < real(1)) {
    const real w = std::sqrt(1 - zeta * zeta);
    const real t = (real(3.14159265358979323846) - std::atan2(2 * zeta * w, w * w - zeta * zeta)) / w;
    return LinearImpact{std::exp(-zeta * t), t};
  }
  const real s = std::sqrt(zeta * zeta - 1);
  const real l1 = -zeta + s, l2 = -zeta - s;  // l2 < l1 < 0
  if (!(l1 < 0) || l1 == l2) return LinearImpact{std::exp(real(-2)), real(2)};  // critical: the limit of both branches
  const real t = 2 * std::log(l2 / l1) / (l1 - l2);
  const real v = (l1 * std::exp(l1 * t) - l2 * std::exp(l2 * t)) / (l1 - l2);  // delta_dot(t_c) for v0 = 1
  return LinearImpact{-v, t};
}
// The zeta that gives restitution e under the linear model, 0 < e <= 1 (bisection: e decreases with zeta).
DEM_HD inline real linear_damping_for_restitution(real e) {
  if (e >= real(1)) return real(0);
  real lo = 0, hi = 1;
  while (linear_impact(hi).restitution > e && hi < real(1e6)) hi *= 2;
  while (hi - lo > real(1e-12) * dem_max(real(1), hi)) {
    const real mid = (lo + hi) / 2;
    (linear_impact(mid).restitution > e ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace dem
