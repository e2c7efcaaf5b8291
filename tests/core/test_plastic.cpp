// The perfectly plastic normal law (restitution 0), on both normal laws: impacts that end with no
// rebound, static loads held without creep or chatter, yielding under a larger load, and a force
// that never pulls.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/contact/contact_law.hpp"
#include "core/integrate/central_difference.hpp"
#include "support/impact.hpp"

namespace dem {
namespace {

const Material kGlass{2500, 5e7, 0.25};
const Material kRigid{0, INFINITY, 0.3};
constexpr double kRadius = 0.005;

ContactParams plastic_params(bool linear, const Material& other) {
  InteractionParams ip{0.5, 0, 0};
  if (linear) {
    ip.normal = NormalModel::Linear;
    ip.stiffness = 1e4;
    ip.tangential = TangentialModel::Linear;
    ip.tangential_stiffness = 1e4 * 2 / 7;
  }
  return mix_contact_params(kGlass, other, ip);
}

// The law's own contact time at speed v (elastic): Hertz 2.94 delta_max / v, linear pi sqrt(m*/k_n).
double contact_time(const ContactParams& p, double m_star, double r_star, double v) {
  if (p.normal_model == NormalModel::Linear) return 3.14159265358979 * std::sqrt(m_star / p.k_n);
  return 2.94 * std::pow(15 * m_star * v * v / (16 * p.e_star * std::sqrt(r_star)), 0.4) / v;
}

struct PlasticImpact {
  double rebound;    // relative normal speed after the impact / v0 (0: perfectly plastic)
  double max_force;  // N
  double min_force;  // N (never below 0)
};

// Two equal spheres meet head-on at v0; the run goes on for 20 contact times after they touch.
PlasticImpact head_on(bool linear, double v0, int steps_per_contact) {
  const ContactParams p = plastic_params(linear, kGlass);
  const double dt = contact_time(p, sphere_mass(kGlass.density, kRadius) / 2, kRadius / 2, v0) / steps_per_contact;
  const test::ImpactResult r = test::run_impact(p, kGlass.density, v0, kRadius, dt, 21 * steps_per_contact, false);
  return {r.restitution, r.max_force, r.min_force};
}

// A sphere hits a rigid wall (z = 0) at v0 with tangential speed vt, no gravity; the run goes on
// for 20 contact times. The rebound is its normal speed afterwards / v0.
PlasticImpact on_wall(bool linear, double v0, double vt, int steps_per_contact) {
  const ContactParams p = plastic_params(linear, kRigid);
  const double m = sphere_mass(kGlass.density, kRadius), inertia = sphere_inertia(m, kRadius);
  const double dt = contact_time(p, m, kRadius, v0) / steps_per_contact;
  ParticleMotion s{{0, 0, kRadius - 1e-12}, {vt, 0, -v0}, {0, 0, 0}, quat_identity()};
  ContactHistory h{{0, 0, 0}, {0, 0, 0}};
  PlasticImpact out{0, 0, 0};
  for (int step = 0; step < 21 * steps_per_contact; ++step) {
    const double d = kRadius - s.x.z;
    ContactResult f{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, false};
    if (d > 0) {
      const ContactGeometry g{{0, 0, 1}, {s.x.x, s.x.y, 0}, real(d)};
      const BodyKinematics ka{s.x, s.v, s.w, 1 / kRadius, 1 / m, 1 / inertia};
      const BodyKinematics wall{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, 0, 0};
      f = evaluate_contact(p, g, ka, wall, h, dt);
      out.max_force = std::max(out.max_force, double(f.normal_force));
      out.min_force = std::min(out.min_force, double(f.force_on_a.z));
    }
    central_difference_step(s, f.force_on_a, f.torque_on_a, 1 / m, 1 / inertia, {0, 0, 0}, false, dt);
  }
  out.rebound = s.v.z / v0;
  return out;
}

// The elastic impact's peak force: Hertz 4/3 E* sqrt(R*) delta_max^1.5, linear sqrt(k_n m*) v0.
double elastic_peak(const ContactParams& p, double m_star, double r_star, double v0) {
  if (p.normal_model == NormalModel::Linear) return std::sqrt(p.k_n * m_star) * v0;
  return 4.0 / 3 * p.e_star * std::sqrt(r_star) * std::pow(15 * m_star * v0 * v0 / (16 * p.e_star * std::sqrt(r_star)), 0.6);
}

TEST(Plastic, ImpactsEndWithoutRebound) {
  // At any resolution of the contact (10 to 200 steps) and speed, two spheres head-on and a sphere
  // on a wall (also obliquely, friction 0.5 sticking and sliding) end at rest along the normal, to
  // the rounding of the velocities (1e-12 of v0), and the force never pulls. The loading is the
  // elastic law's: the largest force is the elastic impact's peak, less what the last step's stop
  // takes off (at most one step's change of force: within 20 % at 10 and 20 steps per contact,
  // 3 % from 50).
  const double m = sphere_mass(kGlass.density, kRadius);
  for (bool linear : {false, true}) {
    for (double v0 : {0.1, 2.0}) {
      for (int spc : {10, 20, 50, 200}) {
        const double low = spc >= 50 ? 0.97 : 0.8;
        const std::string what = std::string(linear ? "linear" : "Hertz") + " v0 " + std::to_string(v0) +
                                 " steps " + std::to_string(spc);
        const PlasticImpact pair = head_on(linear, v0, spc);
        EXPECT_LT(std::abs(pair.rebound), 1e-12) << what;
        EXPECT_GE(pair.min_force, 0.0) << what;
        const double peak = elastic_peak(plastic_params(linear, kGlass), m / 2, kRadius / 2, v0);
        EXPECT_LE(pair.max_force, peak * 1.001) << what;
        EXPECT_GE(pair.max_force, peak * low) << what;
        for (double vt : {0.0, 0.3 * v0, 3 * v0}) {
          const PlasticImpact wall = on_wall(linear, v0, vt, spc);
          EXPECT_LT(std::abs(wall.rebound), 1e-12) << what << " on a wall, vt " << vt;
          EXPECT_GE(wall.min_force, 0.0) << what << " on a wall, vt " << vt;
          const double wall_peak = elastic_peak(plastic_params(linear, kRigid), m, kRadius, v0);
          EXPECT_LE(wall.max_force, wall_peak * 1.001) << what << " on a wall, vt " << vt;
          EXPECT_GE(wall.max_force, wall_peak * low) << what << " on a wall, vt " << vt;
        }
      }
    }
  }
}

// A sphere dropped onto a rigid floor under gravity g_z (m/s^2, negative), from a gap of `gap`,
// for `seconds` (g_z ramped linearly to g_end over them when given); from a previous state when
// `from` has one. Returns the sphere's state, the history, the last normal force and, over the
// second half of the run, the least ratio of the normal force to the weight.
struct Dropped {
  ParticleMotion s;
  ContactHistory h;
  double force, overlap, least_ratio;
};
Dropped drop(bool linear, double g_z, double gap, double seconds, int steps_per_contact, Dropped from = {},
             double g_end = NAN) {
  const ContactParams p = plastic_params(linear, kRigid);
  const double m = sphere_mass(kGlass.density, kRadius), inertia = sphere_inertia(m, kRadius);
  const double dt = contact_time(p, m, kRadius, 1.0) / steps_per_contact;
  Dropped d = from;
  if (from.s.x.z == 0) {  // a fresh drop
    d.s = ParticleMotion{{0, 0, kRadius + gap}, {0, 0, 0}, {0, 0, 0}, quat_identity()};
    d.h = ContactHistory{{0, 0, 0}, {0, 0, 0}};
  }
  d.least_ratio = INFINITY;
  const int steps = static_cast<int>(seconds / dt);
  for (int step = 0; step < steps; ++step) {
    const double g = std::isnan(g_end) ? g_z : g_z + (g_end - g_z) * step / steps;
    d.overlap = kRadius - d.s.x.z;
    ContactResult f{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, false};
    if (d.overlap > 0) {
      const ContactGeometry geo{{0, 0, 1}, {d.s.x.x, d.s.x.y, 0}, real(d.overlap)};
      const BodyKinematics ka{d.s.x, d.s.v, d.s.w, 1 / kRadius, 1 / m, 1 / inertia};
      const BodyKinematics wall{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, 0, 0};
      f = evaluate_contact(p, geo, ka, wall, d.h, dt);
    } else {
      d.h = ContactHistory{{0, 0, 0}, {0, 0, 0}};
    }
    d.force = f.normal_force;
    if (2 * step >= steps) d.least_ratio = std::min(d.least_ratio, d.force / (m * -g));
    central_difference_step(d.s, f.force_on_a, f.torque_on_a, 1 / m, 1 / inertia, {0, 0, g}, false, dt);
  }
  d.overlap = kRadius - d.s.x.z;
  return d;
}

TEST(Plastic, HoldsStaticLoadsWithoutCreepAndYieldsUnderLarger) {
  // Dropped from 2 cm, the sphere stays on the floor (no bounce) and comes to rest: after 0.2 s
  // its speed is below 1e-9 m/s and the contact carries its weight to 1e-9; in the next 0.2 s the
  // overlap moves by less than 1e-15 m (no creep: the locked contact holds by position, critically
  // damped). Then the weight grows slowly to 1000 times (more than the dent holds, about 460): the
  // contact yields and carries the load along the law without dropping it (over the ramp's second
  // half the force stays within 2 % of the weight), and at rest under the full load the law's
  // force at the final overlap is the load to 2 % (the dent's own compliance on top of the last
  // yield).
  const double g = 9.81, m = sphere_mass(kGlass.density, kRadius);
  for (bool linear : {false, true}) {
    for (int spc : {20, 100}) {
      const std::string what = std::string(linear ? "linear" : "Hertz") + " steps " + std::to_string(spc);
      Dropped d = drop(linear, -g, 0.02, 0.2, spc);
      EXPECT_LT(norm(d.s.v), 1e-9) << what;
      EXPECT_NEAR(d.force, m * g, 1e-9 * m * g) << what;
      EXPECT_GT(d.h.rolling.x, 0.0) << what;
      const double before = d.overlap;
      d = drop(linear, -g, 0, 0.2, spc, d);
      EXPECT_LT(std::abs(d.overlap - before), 1e-15) << what;
      EXPECT_LT(norm(d.s.v), 1e-9) << what;
      const ContactParams p = plastic_params(linear, kRigid);
      auto f_law = [&](double delta) {
        return linear ? p.k_n * delta : 4.0 / 3 * p.e_star * std::sqrt(kRadius) * std::pow(delta, 1.5);
      };
      const double load = 1000 * m * g;
      ASSERT_LT(f_law(before), load) << what;
      d = drop(linear, -g, 0, 0.4, spc, d, -1000 * g);
      EXPECT_GT(d.least_ratio, 0.98) << what;
      d = drop(linear, -1000 * g, 0, 0.1, spc, d);
      EXPECT_NEAR(f_law(d.overlap), load, 0.02 * load) << what;
      EXPECT_NEAR(d.force, load, 1e-9 * load) << what;
      EXPECT_LT(norm(d.s.v), 1e-9) << what;
    }
  }
}

}  // namespace
}  // namespace dem
