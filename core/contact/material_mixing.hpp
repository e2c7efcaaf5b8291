// Per-material inputs and their mixing into per-pair contact parameters (MercuryDPM's
// "MixedSpecies"). Walls carry a material too; a rigid wall has youngs_modulus = +infinity, which
// the formulas below handle through 1/inf = 0 (IEEE), giving E* = E/(1 - nu^2) of the sphere.
#pragma once
#include "core/contact/restitution.hpp"

namespace dem {

struct Material {
  real density;         // kg/m^3
  real youngs_modulus;  // Pa (+inf: rigid)
  real poisson_ratio;   // -
};

// Inputs given per unordered pair of materials.
struct InteractionParams {
  real friction;          // Coulomb coefficient mu (-)
  real restitution;       // normal coefficient of restitution e, 0 < e <= 1
  real rolling_friction;  // rolling resistance coefficient mu_r (-)
};

enum class RollingModel : std::uint8_t {
  ConstantTorque = 0,  // Model A with a no-overshoot limit (rolling_resistance.hpp)
  Epsd = 1,            // elastic-plastic spring (Ai et al. 2011, model C without dashpot)
};

// Mixed parameters of one material pair, as the contact law consumes them.
struct ContactParams {
  real e_star;      // Pa, 1/E* = (1 - nu1^2)/E1 + (1 - nu2^2)/E2
  real g_star;      // Pa, 1/G* = 2(2 - nu1)(1 + nu1)/E1 + 2(2 - nu2)(1 + nu2)/E2
  real friction;    // mu
  real rolling_friction;  // mu_r
  real zeta;        // dimensionless damping from the restitution (restitution.hpp)
  RollingModel rolling_model;
};

DEM_HD inline real effective_youngs_modulus(const Material& a, const Material& b) {
  return real(1) / ((1 - a.poisson_ratio * a.poisson_ratio) / a.youngs_modulus +
                    (1 - b.poisson_ratio * b.poisson_ratio) / b.youngs_modulus);
}
DEM_HD inline real effective_shear_modulus(const Material& a, const Material& b) {
  return real(1) / (2 * (2 - a.poisson_ratio) * (1 + a.poisson_ratio) / a.youngs_modulus +
                    2 * (2 - b.poisson_ratio) * (1 + b.poisson_ratio) / b.youngs_modulus);
}
// R* and m* from inverse quantities, so a wall (curvature 0, inverse mass 0) needs no special case:
// R* = 1/(1/R1 + 1/R2), m* = 1/(1/m1 + 1/m2).
DEM_HD inline real effective_from_inverses(real inv_a, real inv_b) { return real(1) / (inv_a + inv_b); }

DEM_HD inline ContactParams mix_contact_params(const Material& a, const Material& b,
                                               const InteractionParams& ip,
                                               RollingModel rolling_model = RollingModel::ConstantTorque) {
  ContactParams p;
  p.e_star = effective_youngs_modulus(a, b);
  p.g_star = effective_shear_modulus(a, b);
  p.friction = ip.friction;
  p.rolling_friction = ip.rolling_friction;
  p.zeta = hertz_damping_for_restitution(ip.restitution);
  p.rolling_model = rolling_model;
  return p;
}

}  // namespace dem
