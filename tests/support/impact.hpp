// The two-sphere impact driver of the contact-law tests: core functions only, as the engine runs them.
#pragma once
#include <algorithm>

#include "core/contact/contact_law.hpp"
#include "core/integrate/central_difference.hpp"

namespace dem::test {

struct ImpactResult {
  double max_overlap, max_force, duration, restitution;
  double min_force = 0;  // N, the least normal component of the force on A along n (< 0: it pulled)
};

// Two equal spheres approach head-on along x at relative speed v0 under law p, integrated with
// the core functions only (evaluate_contact + central_difference_step), as the engine does. The
// duration counts the steps with overlap (force_time: with a positive normal force, as a clamped
// law releases before the overlap closes). A contact that never opens again (a perfectly plastic
// one) runs max_steps.
inline ImpactResult run_impact(const ContactParams& p, double density, double v0, double radius, double dt, int max_steps,
                               bool force_time) {
  const double m = sphere_mass(density, radius), inertia = sphere_inertia(m, radius);
  ParticleMotion a{{-radius, 0, 0}, {v0 / 2, 0, 0}, {0, 0, 0}, quat_identity()};
  ParticleMotion b{{radius + 1e-12, 0, 0}, {-v0 / 2, 0, 0}, {0, 0, 0}, quat_identity()};
  ContactHistory h{{0, 0, 0}, {0, 0, 0}};
  ImpactResult out{0, 0, 0, 0};
  bool touched = false;
  for (int step = 0; step < max_steps; ++step) {
    const ContactGeometry g = sphere_sphere(a.x, radius, b.x, radius);
    ContactResult f{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0, false};
    if (g.overlap > 0) {
      const BodyKinematics ka{a.x, a.v, a.w, 1 / radius, 1 / m, 1 / inertia};
      const BodyKinematics kb{b.x, b.v, b.w, 1 / radius, 1 / m, 1 / inertia};
      f = evaluate_contact(p, g, ka, kb, h, dt);
      out.max_overlap = std::max(out.max_overlap, double(g.overlap));
      out.max_force = std::max(out.max_force, double(f.normal_force));
      out.min_force = std::min(out.min_force, double(dot(f.force_on_a, g.normal)));
      if (!force_time || f.normal_force > 0) {
        touched = true;
        out.duration += dt;
      }
    }
    if (touched && (force_time ? !(f.normal_force > 0) && b.x.x - a.x.x > 2 * radius : !(g.overlap > 0))) break;
    central_difference_step(a, f.force_on_a, f.torque_on_a, 1 / m, 1 / inertia, {0, 0, 0}, false, dt);
    central_difference_step(b, -f.force_on_a, f.torque_on_b, 1 / m, 1 / inertia, {0, 0, 0}, false, dt);
  }
  out.restitution = (b.v.x - a.v.x) / v0;
  return out;
}

}  // namespace dem::test
