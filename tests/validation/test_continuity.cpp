// santasusana2016 Sect. 6.1.2 (Fig. 20-21): a frictionless, rotation-free sphere is led along a
// facet, around a convex 90-degree edge and down the next facet at constant indentation 0.01 m.
// The force magnitude must stay 4/3 E/(1-nu^2) sqrt(R) delta^(3/2) = 76.07 N (paper: 76.063 N)
// and its direction must turn continuously from one facet normal to the other.
#include <gtest/gtest.h>

#include <cmath>

#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace dem::host {
namespace {

const char* kScene = R"(
simulation: {dt: 1.0e-5, end_time: 1.0, gravity: [0, 0, 0]}
materials:
  - {name: sphere, density: 100, youngs_modulus: 1.0e5, poisson_ratio: 0.2}
  - {name: wall, youngs_modulus: inf, poisson_ratio: 0.2}
interactions:
  - {materials: [sphere, sphere], friction: 0, restitution: 1}
  - {materials: [sphere, wall], friction: 0, restitution: 1}
particles:
  - {position: [-0.5, 0.29, 0], radius: 0.3, material: sphere, prescribed: true}
meshes:
  - name: corner          # f1: top facet y = 0, x <= 0; f2: side facet x = 0, y <= 0
    material: wall
    vertices: [[-1, 0, -0.5], [0, 0, -0.5], [0, 0, 0.5], [-1, 0, 0.5], [0, -1, -0.5], [0, -1, 0.5]]
    faces: [[0, 3, 2, 1], [1, 2, 5, 4]]
)";

TEST(Validation_Continuity, ConstantForceAroundAConvexEdge) {
  BuiltScene built = build_scene(load_scene_from_string(kScene, "continuity"));
  Engine& engine = *built.engine;
  const double r = 0.3, delta = 0.01, arm = r - delta;
  const double expected = 4.0 / 3.0 * 1e5 / (1 - 0.2 * 0.2) * std::sqrt(r) * std::pow(delta, 1.5);
  EXPECT_NEAR(expected, 76.07, 0.005);  // the issue's figure; the paper reports 76.063 N
  // The path: 0.5 m along f1, a quarter circle of radius R - delta about the edge, 0.5 m down f2.
  const int n_line = 500, n_arc = 1000;
  Vec3 previous_dir{0, 1, 0};
  double max_turn = 0, max_rel_error = 0;
  int samples = 0;
  for (int k = 0; k <= 2 * n_line + n_arc; ++k) {
    Vec3 c;
    if (k <= n_line) {
      c = Vec3{-0.5 + 0.5 * k / n_line, arm, 0};
    } else if (k <= n_line + n_arc) {
      const double phi = 0.5 * M_PI * (k - n_line) / n_arc;  // angle from the vertical
      c = Vec3{arm * std::sin(phi), arm * std::cos(phi), 0};
    } else {
      c = Vec3{arm, -0.5 * (k - n_line - n_arc) / n_line, 0};
    }
    engine.particles_mutable().x[0] = c;
    engine.particles_mutable().v[0] = Vec3{0, 0, 0};
    engine.compute_forces();
    const Vec3 f = engine.particles().force[0];
    max_rel_error = std::max(max_rel_error, std::abs(norm(f) - expected) / expected);
    const Vec3 dir = normalized(f);
    max_turn = std::max(max_turn, std::acos(std::min(1.0, double(dot(dir, previous_dir)))));
    previous_dir = dir;
    EXPECT_NEAR(dir.z, 0.0, 1e-14);
    ++samples;
  }
  // 0.01 % is the issue's requirement; the only error source is round-off in the geometry.
  EXPECT_LT(max_rel_error, 1e-4);
  // Continuity: no sample-to-sample jump larger than two arc steps (pi/2 / 1000 each).
  EXPECT_LT(max_turn, 2 * 0.5 * M_PI / n_arc);
  EXPECT_NEAR(previous_dir.x, 1.0, 1e-12);  // ends along f2's normal
  EXPECT_EQ(samples, 2001);
}

}  // namespace
}  // namespace dem::host
