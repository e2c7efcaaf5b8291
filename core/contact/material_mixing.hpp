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

// The parts of a contact law, chosen per interaction (README: "Contact models").
enum class NormalModel : std::uint8_t {
  Hertz = 0,   // 4/3 E* sqrt(R*) delta^1.5, Tsuji-type dashpot (restitution.hpp)
  Linear = 1,  // Cundall-Strack spring-dashpot: k_n delta + gamma_n delta_dot ("hooke")
};
enum class TangentialModel : std::uint8_t {
  Mindlin = 0,  // incremental spring k_t = 8 G* sqrt(R* delta)
  Linear = 1,   // incremental spring of constant stiffness k_t
  MindlinDeresiewicz = 2,  // partial slip (normal_tangential.hpp); needs Hertz and the constant rolling torque
};
enum class RollingModel : std::uint8_t {
  ConstantTorque = 0,  // Model A with a no-overshoot limit (rolling_resistance.hpp)
  Epsd = 1,            // elastic-plastic spring-dashpot (Ai et al. 2011, model C)
};
enum class CohesionModel : std::uint8_t {
  None = 0,
  Sjkr = 1,  // simplified JKR (LIGGGHTS `cohesion sjkr`): an attraction k_c times the contact area
};

// Inputs given per unordered pair of materials.
struct InteractionParams {
  real friction;          // Coulomb coefficient mu (-)
  real restitution;       // normal coefficient of restitution e, 0 <= e <= 1 (0: perfectly plastic)
  real rolling_friction;  // rolling resistance coefficient mu_r (-)
  NormalModel normal = NormalModel::Hertz;
  real stiffness = 0;               // N/m, k_n of the linear normal model
  TangentialModel tangential = TangentialModel::Mindlin;
  real tangential_stiffness = 0;    // N/m, k_t of the linear tangential model
  RollingModel rolling = RollingModel::ConstantTorque;
  real rolling_damping = real(0.3); // eta_r of the EPSD dashpot, a fraction of its critical damping
  CohesionModel cohesion = CohesionModel::None;
  real cohesion_energy_density = 0; // J/m^3, k_c of SJKR
};

// Mixed parameters of one material pair, as the contact law consumes them.
struct ContactParams {
  real e_star;      // Pa, 1/E* = (1 - nu1^2)/E1 + (1 - nu2^2)/E2
  real g_star;      // Pa, 1/G* = 2(2 - nu1)(1 + nu1)/E1 + 2(2 - nu2)(1 + nu2)/E2
  real friction;    // mu
  real rolling_friction;  // mu_r
  real zeta;        // dimensionless damping from the restitution (restitution.hpp, per normal model);
                    // 1 (critical, for the tangential dashpot) when plastic
  RollingModel rolling_model;
  NormalModel normal_model = NormalModel::Hertz;
  TangentialModel tangential_model = TangentialModel::Mindlin;
  CohesionModel cohesion_model = CohesionModel::None;
  bool plastic = false;  // restitution 0: the perfectly plastic normal law (normal_tangential.hpp)
  real k_n = 0;                      // N/m, linear normal stiffness
  real k_t = 0;                      // N/m, linear tangential stiffness
  real rolling_damping = real(0.3);  // EPSD dashpot, fraction of critical
  real cohesion_energy_density = 0;  // J/m^3
};

// Whether a pair's law needs the parts that the default kernels are built without (the Mindlin-
// Deresiewicz tangential model, the perfectly plastic normal law): see kAllModels in
// normal_tangential_force.
DEM_HD inline bool needs_all_models(const ContactParams& p) {
  return p.plastic || p.tangential_model == TangentialModel::MindlinDeresiewicz;
}

// Whether a pair's law is the default one (Hertz, Mindlin, the constant rolling torque, no
// cohesion, not plastic), which the host's batched pair pass evaluates (kDefaultLaw in
// normal_tangential_force).
DEM_HD inline bool is_default_law(const ContactParams& p) {
  return p.normal_model == NormalModel::Hertz && p.tangential_model == TangentialModel::Mindlin &&
         p.rolling_model == RollingModel::ConstantTorque && p.cohesion_model == CohesionModel::None && !p.plastic;
}

// Whether the law keeps anything in the history's second vector (ContactHistory::rolling): the
// elastic-plastic rolling spring, the reversal force of Mindlin-Deresiewicz, the plastic lock.
// Otherwise it stays zero, and an engine need not store it.
DEM_HD inline bool uses_second_history(const ContactParams& p) {
  return p.rolling_model == RollingModel::Epsd || p.tangential_model == TangentialModel::MindlinDeresiewicz ||
         p.plastic;
}

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

// The law of one material pair: moduli mixed, the damping ratio that gives the restitution under
// the chosen normal model, the chosen parts and their parameters.
DEM_HD inline ContactParams mix_contact_params(const Material& a, const Material& b, const InteractionParams& ip) {
  ContactParams p;
  p.e_star = effective_youngs_modulus(a, b);
  p.g_star = effective_shear_modulus(a, b);
  p.friction = ip.friction;
  p.rolling_friction = ip.rolling_friction;
  p.plastic = ip.restitution == real(0);
  p.zeta = p.plastic ? real(1)
           : ip.normal == NormalModel::Linear ? linear_damping_for_restitution(ip.restitution)
                                              : hertz_damping_for_restitution(ip.restitution);
  p.rolling_model = ip.rolling;
  p.normal_model = ip.normal;
  p.tangential_model = ip.tangential;
  p.cohesion_model = ip.cohesion;
  p.k_n = ip.stiffness;
  p.k_t = ip.tangential_stiffness;
  p.rolling_damping = ip.rolling_damping;
  p.cohesion_energy_density = ip.cohesion_energy_density;
  return p;
}
DEM_HD inline ContactParams mix_contact_params(const Material& a, const Material& b, InteractionParams ip,
                                               RollingModel rolling_model) {
  ip.rolling = rolling_model;
  return mix_contact_params(a, b, ip);
}

}  // namespace dem
