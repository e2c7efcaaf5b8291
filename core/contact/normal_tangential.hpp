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
#pragma once
#include "core/contact/material_mixing.hpp"
#include "core/math/vec3.hpp"

namespace dem {

struct NormalTangentialResult {
  Vec3 force;             // N, on A (normal + tangential + cohesion)
  real normal_force;      // N, the repulsive part F_n >= 0 (cohesion not included)
  real normal_stiffness;  // N/m, S_n = 2 E* sqrt(R* delta) (Hertz) or k_n (linear)
  bool sliding;           // Coulomb limit reached this step
};

// n: unit normal from B to A; overlap > 0; v_rel: velocity of A's material point at the contact
// relative to B's; xi: tangential history (in/out).
DEM_HD inline NormalTangentialResult normal_tangential_force(const ContactParams& p, Vec3 n, real overlap, Vec3 v_rel,
                                               real r_star, real m_star, Vec3& xi, real dt) {
  NormalTangentialResult out;
  const bool hertz = p.normal_model == NormalModel::Hertz;
  const real sqrt_rd = std::sqrt(r_star * overlap);
  const real f_elastic = hertz ? real(4) / 3 * p.e_star * sqrt_rd * overlap  // 4/3 E* sqrt(R*) delta^1.5
                               : p.k_n * overlap;
  const real s_n = hertz ? 2 * p.e_star * sqrt_rd : p.k_n;
  out.normal_stiffness = s_n;
  const real v_n = dot(v_rel, n);  // < 0 when approaching: delta_dot = -v_n
  out.normal_force = dem_max(real(0), f_elastic - 2 * p.zeta * std::sqrt(s_n * m_star) * v_n);

  const Vec3 v_t = v_rel - v_n * n;
  const real k_t = p.tangential_model == TangentialModel::Mindlin ? 8 * p.g_star * sqrt_rd : p.k_t;
  // Carry the history into the current tangent plane without changing its length (the contact
  // frame turns with the particles and with the mesh entity). A new contact has none.
  const real xi_len2 = norm2(xi);
  if (xi_len2 > real(0)) {
    const Vec3 xi_plane = xi - dot(xi, n) * n;
    const real plane_len2 = norm2(xi_plane);
    xi = plane_len2 > real(0) ? xi_plane * std::sqrt(xi_len2 / plane_len2) : Vec3{0, 0, 0};
  }
  xi += v_t * dt;

  // Coulomb limit, compared in squares: the usual (sticking) contact takes no square root here.
  const real f_max = p.friction * out.normal_force;
  const Vec3 f_spring = -k_t * xi;
  const real spring_len2 = norm2(f_spring);
  Vec3 f_t;
  out.sliding = spring_len2 > f_max * f_max;
  if (out.sliding) {
    const real scale = f_max / std::sqrt(spring_len2);
    xi *= scale;
    f_t = f_spring * scale;
  } else {
    f_t = f_spring - 2 * p.zeta * std::sqrt(k_t * m_star) * v_t;
    const real len2 = norm2(f_t);
    if (len2 > f_max * f_max) f_t *= f_max / std::sqrt(len2);  // the dashpot never exceeds the Coulomb limit
  }
  real f_n = out.normal_force;
  if (p.cohesion_model == CohesionModel::Sjkr)
    f_n -= p.cohesion_energy_density * real(2 * 3.14159265358979323846) * r_star * overlap;  // k_c A
  out.force = f_n * n + f_t;
  return out;
}

}  // namespace dem
