// santasusana2016 Sect. 6.1 validation scenes (scenes/validation/*.yaml), run through the same
// scene loader and engine as `dem run`, with the expected numbers of the paper and of theory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace dem::host {
namespace {

std::string scene_path(const std::string& name) { return std::string(DEM_SCENES_DIR) + "/validation/" + name; }

struct Trace {
  std::vector<double> y, lateral_v, lateral_f, vertical_f;
};

// Runs a drop scene to its end time, recording particle 0 every step.
Trace run_drop(const std::string& file) {
  const SceneConfig scene = load_scene(scene_path(file));
  BuiltScene built = build_scene(scene);
  Engine& e = *built.engine;
  Trace t;
  const auto steps = static_cast<std::uint64_t>(std::llround(scene.simulation.end_time / scene.simulation.dt));
  while (e.step_count() < steps) {
    e.step();
    const ParticleArrays& p = e.particles();
    t.y.push_back(p.x[0].y);
    t.lateral_v.push_back(std::hypot(p.v[0].x, p.v[0].z));
    t.lateral_f.push_back(std::hypot(p.force[0].x, p.force[0].z));
    t.vertical_f.push_back(p.force[0].y);
  }
  EXPECT_TRUE(e.status().ok) << e.status().message;
  return t;
}

TEST(Validation_Drop, FacetEdgeAndVertexImpactsAreIdenticalAndElastic) {
  // Table 6: R = 0.3, E = 1e5, no damping; the same plane meshed so that the sphere lands on a
  // facet, on an edge and on a vertex (the indentation exceeds 30 % of R, so every impact touches
  // many elements and all entity types: H2 must leave one vertical force).
  const Trace facet = run_drop("drop_facet.yaml");
  const Trace edge = run_drop("drop_edge.yaml");
  const Trace vertex = run_drop("drop_vertex.yaml");
  ASSERT_EQ(facet.y.size(), edge.y.size());
  ASSERT_EQ(facet.y.size(), vertex.y.size());
  double max_force = 0;
  for (double f : facet.vertical_f) max_force = std::max(max_force, f);
  ASSERT_GT(max_force, 100.0);  // the impact happened
  double max_dev = 0, max_lat_v = 0, max_lat_f = 0;
  for (std::size_t k = 0; k < facet.y.size(); ++k) {
    max_dev = std::max({max_dev, std::abs(edge.y[k] - facet.y[k]), std::abs(vertex.y[k] - facet.y[k])});
    max_lat_v = std::max({max_lat_v, facet.lateral_v[k], edge.lateral_v[k], vertex.lateral_v[k]});
    max_lat_f = std::max({max_lat_f, facet.lateral_f[k], edge.lateral_f[k], vertex.lateral_f[k]});
  }
  // Trajectories coincide to 1e-9 relative (the figure): the three meshes differ only in
  // which entity reports the same contact point; the rest is round-off in mesh coordinates.
  EXPECT_LT(max_dev, 1e-9 * 1.0);
  // Lateral motion stays zero: round-off of O(1e-16) relative in the contact vector, integrated.
  EXPECT_LT(max_lat_f, 1e-9 * max_force);
  EXPECT_LT(max_lat_v, 1e-9);
  // Rebound apex: the highest point after leaving contact returns to the start (1 m) within 0.1 %.
  std::size_t left_contact = 0;
  for (std::size_t k = 1; k < facet.y.size(); ++k)
    if (facet.vertical_f[k - 1] > 0 && facet.vertical_f[k] == 0) left_contact = k;
  ASSERT_GT(left_contact, 0u);
  double apex = 0;
  for (std::size_t k = left_contact; k < facet.y.size(); ++k) apex = std::max(apex, facet.y[k]);
  EXPECT_NEAR(apex, 1.0, 1e-3);
  std::printf("[ measured ] max |dy| between meshes %.3g m, lateral force %.3g N, lateral speed %.3g m/s, apex %.6f m\n",
              max_dev, max_lat_f, max_lat_v, apex);
  EXPECT_LT(facet.y.back(), apex);  // the run covers the apex (it falls again afterwards)
}

TEST(Validation_MultipleContact, SpheresComeToRestOnTheHoles) {
  // Fig. 22 / Table 7: three spheres (R = 0.3) on a plate with a triangular, a square and a
  // pentagonal hole, all of inradius a = 0.2 (particles 0, 1, 2 above x = -1, 0, 1).
  const SceneConfig scene = load_scene(scene_path("multiple_contact.yaml"));
  BuiltScene built = build_scene(scene);
  Engine& e = *built.engine;
  const auto steps = static_cast<std::uint64_t>(std::llround(scene.simulation.end_time / scene.simulation.dt));
  while (e.step_count() < steps) e.step();
  ASSERT_TRUE(e.status().ok) << e.status().message;
  const double r = 0.3, a = 0.2, g = 9.81;
  const double m = scene.materials[0].density * 4.0 / 3.0 * M_PI * r * r * r;
  const double e_star = scene.materials[0].youngs_modulus / (1 - 0.2 * 0.2);
  const int sides[3] = {3, 4, 5};
  for (int k = 0; k < 3; ++k) {
    const std::int64_t i = e.index_of(k);
    const ParticleArrays& p = e.particles();
    EXPECT_LT(norm(p.v[i]), 1e-3) << "sphere " << k;  // at rest by t = 2.5 s
    // Equilibrium height h of the centre above the plate: n edge contacts at horizontal distance a,
    // each with |V| = sqrt(a^2 + h^2) = R - delta and vertical share h/|V|:
    //   n * 4/3 E* sqrt(R) delta^1.5 * h / (R - delta) = m g, solved by bisection on h.
    double lo = 0.05, hi = std::sqrt(r * r - a * a);
    for (int it = 0; it < 200; ++it) {
      const double h = 0.5 * (lo + hi), d = std::sqrt(a * a + h * h), delta = r - d;
      const double up = sides[k] * 4.0 / 3.0 * e_star * std::sqrt(r) * std::pow(delta, 1.5) * h / d;
      (up > m * g ? lo : hi) = h;
    }
    const double expected = 0.5 * (lo + hi);
    // 1 % is the criterion; the rigid-geometry height without indentation is
    // sqrt(R^2 - a^2) = 0.2236 m, about 1 % above, so the test also checks the indentation.
    EXPECT_NEAR(p.x[i].y / expected, 1.0, 0.01) << "sphere " << k << " over a " << sides[k] << "-gon";
    EXPECT_NEAR(p.x[i].x, -1.0 + k, 1e-6);  // centred over its hole
    std::printf("[ measured ] %d-gon hole: height %.6f m, expected %.6f m (rigid %.6f m), speed %.3g m/s\n", sides[k],
                double(p.x[i].y), expected, std::sqrt(r * r - a * a), double(norm(p.v[i])));
  }
}

struct SlideState {
  double x, v, w;
};

SlideState run_slide(const std::string& file, double* delta_static) {
  const SceneConfig scene = load_scene(scene_path(file));
  BuiltScene built = build_scene(scene);
  Engine& e = *built.engine;
  const auto steps = static_cast<std::uint64_t>(std::llround(scene.simulation.end_time / scene.simulation.dt));
  while (e.step_count() < steps) e.step();
  EXPECT_TRUE(e.status().ok) << e.status().message;
  *delta_static = scene.particles[0].radius - scene.particles[0].position[1];
  const ParticleArrays& p = e.particles();
  return SlideState{p.x[0].x - scene.particles[0].position[0], p.v[0].x, p.w[0].z};
}

TEST(Validation_Sliding, MeshIndependentAndMatchesTheAnalyticSolution) {
  // Fig. 24 / Table 8: a sphere launched at 5 m/s slides, then rolls; one quad vs 80 triangles.
  double delta_q = 0, delta_t = 0;
  const SlideState quad = run_slide("sliding_quad.yaml", &delta_q);
  const SlideState tri = run_slide("sliding_triangles.yaml", &delta_t);
  // Mesh independence: 1e-6 relative (the figure).
  EXPECT_NEAR(tri.x / quad.x, 1.0, 1e-6);
  EXPECT_NEAR(tri.v / quad.v, 1.0, 1e-6);
  EXPECT_NEAR(tri.w / quad.w, 1.0, 1e-6);
  // Analytic solution with the lever arm L = R - delta_s that the contact point implies (the
  // facet contact point is the projection of the centre, at distance R - delta from it):
  //   sliding:  v = v0 - mu g t,  |w| = mu m g L t / I,  I = 2/5 m R^2
  //   rolling starts when v = |w| L:  t_c = v0 / (mu g (1 + m L^2 / I)),  then v = v_c, w = -v_c/L.
  // With L = R (Eqs. 33-39) this is the paper's 5/7 v0; the lever arm explains its 0.85 % gap.
  const double r = 0.3, mu = 0.3, g = 9.81, v0 = 5.0, t = 1.0, L = r - delta_q;
  const double ratio = L * L / (0.4 * r * r);  // m L^2 / I
  const double tc = v0 / (mu * g * (1 + ratio));
  const double vc = v0 - mu * g * tc;
  const double x = v0 * tc - 0.5 * mu * g * tc * tc + vc * (t - tc);
  ASSERT_LT(tc, t);
  // 0.1 % (the figure): the normal force oscillates slightly about m g and the stick
  // transition takes a few steps of the tangential spring.
  EXPECT_NEAR(quad.x / x, 1.0, 1e-3);
  EXPECT_NEAR(quad.v / vc, 1.0, 1e-3);
  EXPECT_NEAR(quad.w / (-vc / L), 1.0, 1e-3);
  EXPECT_DOUBLE_EQ(delta_q, delta_t);
  std::printf("[ measured ] quad x %.6f v %.6f w %.6f; triangles x %.6f v %.6f w %.6f; analytic x %.6f v %.6f w %.6f\n",
              quad.x, quad.v, quad.w, tri.x, tri.v, tri.w, x, vc, -vc / L);
}

}  // namespace
}  // namespace dem::host
