// Normal and tangential contact forces, with the model of each part chosen per interaction
// (ContactParams): one function for every combination, called by both engines.
//
//   normal, Hertz:   F_n = max(0, 4/3 E* sqrt(R*) delta^(3/2) + 2 zeta sqrt(S_n m*) delta_dot),
//                    S_n = 2 E* sqrt(R* delta)        (zeta from the restitution, restitution.hpp)
//   normal, linear:  F_n = max(0, k_n delta + 2 zeta sqrt(k_n m*) delta_dot),  S_n = k_n
//                    (zeta from the restitution by the clamped closed form, linear_impact)
//   cohesion, SJKR:  F_n -= k_c A, A = 2 pi R* delta (the area of the circle where the undeformed
//                    spheres intersect, to first order in delta/R; a wall has R* = R). Only this
//                    part can pull; the Coulomb limit uses the repulsive part.
//   tangential:      k_t = 8 G* sqrt(R* delta) (Mindlin) or the constant k_t (linear);
//                    gamma_t = 2 zeta sqrt(k_t m*)
//                    xi  <- xi rotated into the current tangent plane (magnitude kept), xi += v_t dt
//                    F_t = -k_t xi - gamma_t v_t,  |F_t| <= mu F_n (Coulomb)
// xi (m) is the tangential spring history of the contact. While sliding, xi is rescaled so that
// the spring alone carries mu F_n and the dashpot is off (the kinetic force is exactly mu F_n).
//
//   normal, perfectly plastic (restitution 0, either law above without its dashpot): the contact
//   loads along F(delta) = 4/3 E* sqrt(R*) delta^1.5 or k_n delta. Restitution 0 needs the force
//   to vanish exactly where the bodies stop (any push left after that separates them), so the
//   step in which the law would turn the approach around applies only the force that stops it,
//   m* delta_dot / dt, and the contact locks there (delta_lock, kept in the x of the history's
//   second vector). Locked, it answers further compression from zero at delta_lock with twice the
//   law's stiffness, critically damped (k = 2 S_n):
//       F = clamp(k (delta - delta_lock) + 2 sqrt(k m*) delta_dot, 0, F(delta)),
//   so it holds static loads by position, never pulls, and yields where a load exceeds F(delta):
//   the force stays F(delta) and the lock follows (delta_lock = delta - F/k), so a growing load
//   is carried along the law without a drop. An isolated impact ends with no relative normal
//   speed, to the rounding (the stop assumes the pair alone: a sphere held by two contacts at
//   once gets both stops and can leave at a few percent of its speed).
//
//   tangential, Mindlin-Deresiewicz (partial slip; Mindlin & Deresiewicz 1953 in the incremental
//   form of Thornton & Yin 1991 and Thornton, Cummins & Cleary 2011): the no-slip spring above
//   stores every displacement at the full stiffness 8 G* a, a = sqrt(R* delta), until the whole
//   contact slides. In a Hertzian contact the rim slips first: an annulus of slip grows inwards as
//   the load rises, and the stiffness falls to zero at mu F_n. With T the tangential force and
//   D = -8 G* a v_t dt the no-slip increment,
//       T += theta D,  theta^3 = 1 - |T| / (mu F_n)             on the first loading,
//                      theta^3 = 1 - |T - T*| / (2 mu F_n)      after a reversal at T = T*,
//   which integrates exactly to Mindlin's curve delta_t = 3 mu F_n/(16 G* a) (1 - (1 - T/(mu F_n))^(2/3))
//   and to the Mindlin-Deresiewicz (Masing) unloading branch with twice that scale. A reversal is
//   an increment against T - T* (then T* <- T); gross sliding clamps |T| to mu F_n and forgets
//   T* (the next reversal starts from the limit). When the contact shrinks (delta falling) the
//   stuck traction near the rim leaves with it: T and T* scale with a/a_old, a_old from the
//   overlap one step back along the current normal speed. In three dimensions theta applies to the
//   increment's part along the branch (T - T*), the part across it takes the full stiffness (so a
//   sliding contact turns with its motion). The memory is one reversal deep: reloading past an
//   earlier reversal stays on the doubled branch (the exact solution returns to the first loading
//   curve there; up to 0.09 mu F_n apart). The history holds T (N) and T* (N);
//   T* = 0 marks a first loading. The dashpot and the Coulomb cap are those of the Mindlin spring.
//   Checked against an exact partial-slip solution of the oblique impact (tests/core: the Hertz
//   contact as a bed of independent springs, the method of dimensionality reduction).
#pragma once
#include "core/contact/material_mixing.hpp"
#include "core/math/vec3.hpp"

namespace dem {

// (1 - r)^(1/3) for r in [0, 1] from + - * / and sqrt only, so that the host and the device give the
// same bits (cbrt and pow are not correctly rounded, and differ between libm and CUDA): a seed
// c^(5/16) by four square roots (within a factor 1.8 of the root for c > 1e-12), then Newton steps
// y <- (2y + c/y^2)/3, converged to the last bits after six.
DEM_HD inline real mindlin_theta(real r) {
  const real c = real(1) - r;
  if (!(c > real(0))) return real(0);
  const real q = std::sqrt(std::sqrt(std::sqrt(std::sqrt(c))));
  real y = q * q * q * q * q;
  for (int k = 0; k < 6; ++k) y = (2 * y + c / (y * y)) / 3;
  return y;
}

struct NormalTangentialResult {
  Vec3 force;             // N, on A (normal + tangential + cohesion)
  real normal_force;      // N, the repulsive part F_n >= 0 (cohesion not included)
  real normal_stiffness;  // N/m, S_n = 2 E* sqrt(R* delta) (Hertz) or k_n (linear)
  bool sliding;           // Coulomb limit reached this step
};

// Keeps a history vector in the current tangent plane without changing its length (the contact
// frame turns with the particles and with the mesh entity). Without branches (both outcomes
// computed, one kept), so that the host's batched pair pass vectorises it; the kept values are
// those of the plain formula, bit for bit.
DEM_HD inline void rotate_into_plane(Vec3& h, Vec3 n) {
  const real len2 = norm2(h);
  const Vec3 plane = h - dot(h, n) * n;
  const real plane_len2 = norm2(plane);
  const Vec3 turned = select(plane_len2 > real(0), plane * std::sqrt(len2 / plane_len2), Vec3{0, 0, 0});
  h = select(len2 > real(0), turned, h);
}

// The Mindlin-Deresiewicz partial-slip force (opening comment): t (N) is the tangential force and
// t_turn (N) the force at the last reversal, both in/out; f_max = mu F_n. Returns whether the
// contact slides as a whole.
DEM_HD inline bool mindlin_deresiewicz_spring(Vec3 n, real overlap, real v_n, Vec3 v_t, real r_star, real g_star,
                                              real f_max, Vec3& t, Vec3& t_turn, real dt) {
  rotate_into_plane(t, n);
  rotate_into_plane(t_turn, n);
  if (!(f_max > real(0))) {  // no normal load: nothing can be held
    t = Vec3{0, 0, 0};
    t_turn = Vec3{0, 0, 0};
    return true;
  }
  if (v_n > real(0)) {  // separating: a/a_old = sqrt(delta / (delta + v_n dt))
    const real shrink = std::sqrt(overlap / (overlap + v_n * dt));
    t *= shrink;
    t_turn *= shrink;
  }
  const Vec3 d = -(8 * g_star * std::sqrt(r_star * overlap) * dt) * v_t;  // the no-slip increment
  if (dot(d, t - t_turn) < real(0)) t_turn = t;                          // a reversal
  // theta softens the part of the increment along the current branch, T - T* (T on the first
  // loading); the part across it turns the force at the full stiffness, so that a sliding contact
  // whose direction of motion turns follows it (theta alone is 0 at the Coulomb limit)
  const Vec3 branch = t - t_turn;
  const real branch_len2 = norm2(branch);
  const bool first = norm2(t_turn) == real(0);
  const real theta = mindlin_theta(std::sqrt(branch_len2) / (first ? f_max : 2 * f_max));
  const Vec3 along = branch_len2 > real(0) ? (dot(d, branch) / branch_len2) * branch : d;
  t += theta * along + (d - along);
  const real len2 = norm2(t);
  if (len2 < f_max * f_max) return false;
  t *= f_max / std::sqrt(len2);
  t_turn = Vec3{0, 0, 0};
  return true;
}

// The perfectly plastic normal force (opening comment): f_load = F(delta), s_n = S_n(delta),
// approach = delta_dot; lock (m) in/out.
DEM_HD_NOINLINE real plastic_normal_force(real f_load, real s_n, real overlap, real approach, real m_star, real dt,
                                          real& lock) {
  if (lock == real(0)) {  // loading
    const real stop = m_star * dem_max(approach, real(0)) / dt;  // stops the approach within this step
    if (f_load < stop) return f_load;
    lock = overlap;
    return stop;
  }
  const real k = 2 * s_n;  // the dent: twice the law's stiffness, so that it meets the law again
  const real f = k * (overlap - lock) + 2 * std::sqrt(k * m_star) * approach;
  if (f >= f_load) {  // the load exceeds what the dent holds: it yields, the force stays the law's
    lock = overlap - f_load / k;  // > 0: F/S_n is 2/3 delta (Hertz) or delta (linear)
    return f_load;
  }
  return dem_max(real(0), f);
}

// The tangential force under Mindlin-Deresiewicz: the spring above, the dashpot of the Mindlin
// spring while it sticks, the Coulomb cap. Out of line: the default models' loop stays lean.
DEM_HD_NOINLINE bool mindlin_deresiewicz_force(const ContactParams& p, Vec3 n, real overlap, real v_n, Vec3 v_t,
                                               real r_star, real m_star, real f_max, Vec3& t, Vec3& t_turn, real dt,
                                               Vec3& f_t) {
  const bool sliding = mindlin_deresiewicz_spring(n, overlap, v_n, v_t, r_star, p.g_star, f_max, t, t_turn, dt);
  f_t = t;
  if (!sliding) {
    f_t -= 2 * p.zeta * std::sqrt(8 * p.g_star * std::sqrt(r_star * overlap) * m_star) * v_t;
    const real len2 = norm2(f_t);
    if (len2 > f_max * f_max) f_t *= f_max / std::sqrt(len2);  // the dashpot never exceeds the Coulomb limit
  }
  return sliding;
}

// The normal dashpot's rate 2 zeta omega (1/s) in an impact at speed v (m/s): omega = sqrt(S_n/m*)
// at the deepest overlap, delta = (15 m* v^2 / (16 E* sqrt(R*)))^(2/5) for Hertz, sqrt(k_n/m*) for
// the linear law. The dashpot is integrated explicitly, so the step must stay below 1/rate for the
// restitution to come out as asked (the run warns otherwise); beyond 2/rate it overshoots every
// step and can give energy back.
DEM_HD inline real normal_damping_rate(const ContactParams& p, real r_star, real m_star, real v) {
  real stiffness = p.k_n;
  if (p.normal_model == NormalModel::Hertz) {
    const real depth = std::pow(15 * m_star * v * v / (16 * p.e_star * std::sqrt(r_star)), real(0.4));
    stiffness = 2 * p.e_star * std::sqrt(r_star * depth);
  }
  if (p.plastic) stiffness *= 2;  // the locked dent, critically damped (zeta = 1)
  return 2 * p.zeta * std::sqrt(stiffness / m_star);
}

// kDefaultLaw = true builds it for the default models alone (Hertz, Mindlin, no cohesion, not
// plastic: is_default_law), for the host's batched pair pass, whose lanes must not branch.
// kAllModels = false builds the law without the Mindlin-Deresiewicz and perfectly plastic parts,
// for kernels whose interactions all use the others (needs_all_models): on a GPU those parts,
// though never taken, raised the pair kernel from 128 to 150 registers and the mesh kernel's
// spills by a quarter (nvcc -Xptxas -v, sm_90). The host keeps them out of line instead.
// n: unit normal from B to A; overlap > 0; v_rel: velocity of A's material point at the contact
// relative to B's; xi: tangential history (in/out): the spring displacement (m), or the force T (N)
// under Mindlin-Deresiewicz, whose reversal force T* (N) is t_turn (untouched by the other models);
// plastic_lock (m): the perfectly plastic law's lock overlap (untouched unless p.plastic).
template <bool kAllModels = true, bool kDefaultLaw = false>
DEM_HD inline NormalTangentialResult normal_tangential_force(const ContactParams& p, Vec3 n, real overlap, Vec3 v_rel,
                                               real r_star, real m_star, Vec3& xi, real dt, Vec3& t_turn,
                                               real& plastic_lock) {
  NormalTangentialResult out;
  static_assert(!(kAllModels && kDefaultLaw), "the default law is a lean one");
  const bool hertz = kDefaultLaw || p.normal_model == NormalModel::Hertz;
  const real sqrt_rd = std::sqrt(r_star * overlap);
  const real f_elastic = hertz ? real(4) / 3 * p.e_star * sqrt_rd * overlap  // 4/3 E* sqrt(R*) delta^1.5
                               : p.k_n * overlap;
  const real s_n = hertz ? 2 * p.e_star * sqrt_rd : p.k_n;
  out.normal_stiffness = s_n;
  const real v_n = dot(v_rel, n);  // < 0 when approaching: delta_dot = -v_n
  out.normal_force = dem_max(real(0), f_elastic - 2 * p.zeta * std::sqrt(s_n * m_star) * v_n);
  if (kAllModels && p.plastic) out.normal_force = plastic_normal_force(f_elastic, s_n, overlap, -v_n, m_star, dt, plastic_lock);

  const Vec3 v_t = v_rel - v_n * n;
  const real f_max = p.friction * out.normal_force;
  Vec3 f_t;
  if (kAllModels && p.tangential_model == TangentialModel::MindlinDeresiewicz) {
    out.sliding = mindlin_deresiewicz_force(p, n, overlap, v_n, v_t, r_star, m_star, f_max, xi, t_turn, dt, f_t);
  } else {
    const real k_t = kDefaultLaw || p.tangential_model == TangentialModel::Mindlin ? 8 * p.g_star * sqrt_rd : p.k_t;
    // Carry the history into the current tangent plane without changing its length. A new
    // contact has none.
    rotate_into_plane(xi, n);
    xi += v_t * dt;

    // Coulomb limit, compared in squares. Sliding, the spring alone is cut back to mu F_n (and
    // the history with it); sticking, the dashpot is added and the sum capped at mu F_n. One cut
    // serves both, without a branch (the batched pass vectorises this): it is 1 (exact) unless the
    // force exceeds mu F_n, and while sliding the force is the spring's, whose square is the one
    // compared.
    const Vec3 f_spring = -k_t * xi;
    const real f_max2 = f_max * f_max;
    out.sliding = norm2(f_spring) > f_max2;
    const Vec3 f_try = select(out.sliding, f_spring, f_spring - 2 * p.zeta * std::sqrt(k_t * m_star) * v_t);
    const real try_len2 = norm2(f_try);
    const real cut_down = f_max / std::sqrt(try_len2);  // (inf or NaN at 0: not kept then)
    const real cut = try_len2 > f_max2 ? cut_down : real(1);
    xi *= out.sliding ? cut : real(1);
    f_t = f_try * cut;  // the dashpot never exceeds the Coulomb limit
  }
  real f_n = out.normal_force;
  if (!kDefaultLaw && p.cohesion_model == CohesionModel::Sjkr)
    f_n -= p.cohesion_energy_density * real(2 * 3.14159265358979323846) * r_star * overlap;  // k_c A
  out.force = f_n * n + f_t;
  return out;
}

}  // namespace dem
