// Engine-level properties: history survives re-sorting, bitwise determinism across thread counts
// and runs, body loads, and bad input reaching the command line as clear errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "host/app/driver.hpp"
#include "host/sim/load_sizing.hpp"
#include "host/sim/mesh_slots.hpp"
#include "support/test_scenes.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace dem::host {
namespace {

using test::kBinScene;
std::map<std::int64_t, std::array<double, 9>> state_by_id(const Engine& e) {
  std::map<std::int64_t, std::array<double, 9>> out;
  const ParticleArrays& p = e.particles();
  for (std::size_t i = 0; i < p.size(); ++i)
    out[p.id[i]] = {p.x[i].x, p.x[i].y, p.x[i].z, p.v[i].x, p.v[i].y, p.v[i].z, p.w[i].x, p.w[i].y, p.w[i].z};
  return out;
}

bool bitwise_equal(const std::map<std::int64_t, std::array<double, 9>>& a,
                   const std::map<std::int64_t, std::array<double, 9>>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [id, s] : a) {
    auto it = b.find(id);
    if (it == b.end() || std::memcmp(s.data(), it->second.data(), sizeof(double) * 9) != 0) return false;
  }
  return true;
}

// The same scene twice: with skin 0 (every list made anew at every step: the reference) and with
// `skin` (lists that live for many steps), both with every loop threaded.
struct SkinPair {
  BuiltScene exact, skinned;
};
SkinPair with_and_without_skin(const SceneConfig& scene, double skin) {
  SceneConfig exact = scene, skinned = scene;
  exact.simulation.skin = 0;
  skinned.simulation.skin = skin;
  SkinPair out{build_scene(exact), build_scene(skinned)};
  out.exact.engine->set_parallel_min(0);
  out.skinned.engine->set_parallel_min(0);
  return out;
}

TEST(Engine, ContactHistorySurvivesResorting) {
  // Run A straight; run B re-sorts the particle arrays randomly every 50 steps. The pair list is
  // remapped with the particles (roles and sum orders follow ids) and the mesh history travels
  // with the particle, so the trajectories
  // must be bitwise identical (summation orders depend on ids, not on array positions).
  const SceneConfig scene = load_scene_from_string(kBinScene, "bin.yaml");
  BuiltScene a = build_scene(scene), b = build_scene(scene);
  a.engine->set_parallel_min(0);
  b.engine->set_parallel_min(0);
  std::mt19937_64 rng(11);
  for (int s = 0; s < 3000; ++s) {
    a.engine->step();
    if (s % 50 == 25) {
      std::vector<std::int64_t> order(b.engine->particles().size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      b.engine->permute_particles(order);
    }
    b.engine->step();
  }
  EXPECT_GT(a.engine->touching_pairs(), 50u);  // there was contact history to lose
  EXPECT_GT(a.engine->mesh_contacts(), 20u);
  EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*b.engine)));
}

TEST(Engine, SkinNeverChangesTheResult) {
  // With skin 0 every neighbour list (sphere pairs and mesh candidates) is rebuilt every step from
  // exact distances: the reference. A skin only adds candidates the narrow phase rejects and
  // rebuilds less often; if a list ever missed a contact the trajectories would differ. The
  // paddle turns at 10 rad/s, so the mesh-motion bound of the candidate lists is exercised.
  const SceneConfig scene = load_scene_from_string(kBinScene, "bin.yaml");
  // The default, per-particle skins sized by the local speeds, must give the same result too.
  SceneConfig exact = scene, wide = scene, adaptive = scene;
  exact.simulation.skin = 0;
  wide.simulation.skin = 0.003;  // most of a radius: lists live for many steps
  adaptive.simulation.skin = -1;
  // A list also lives on after some particles have moved past their skins, while none of them
  // touches a particle it has no pair with (Engine::list_holds, through each broad phase's near()).
  SceneConfig adaptive_hgrid = adaptive, adaptive_bsp = adaptive;
  adaptive_hgrid.broad_phase.method = BroadPhaseMethod::HGrid;
  adaptive_bsp.broad_phase.method = BroadPhaseMethod::Bsp;
  BuiltScene a = build_scene(exact), b = build_scene(wide), c = build_scene(adaptive), d = build_scene(adaptive_hgrid),
             e = build_scene(adaptive_bsp);
  for (BuiltScene* v : {&a, &b, &c, &d, &e}) v->engine->set_parallel_min(0);
  for (int s = 0; s < 1500; ++s)
    for (BuiltScene* v : {&a, &b, &c, &d, &e}) v->engine->step();
  EXPECT_GT(a.engine->stats().broad_phase_builds, 10 * b.engine->stats().broad_phase_builds);
  EXPECT_GT(a.engine->stats().broad_phase_builds, 5 * c.engine->stats().broad_phase_builds);
  EXPECT_EQ(a.engine->stats().lists_kept, 0u);  // skin 0: a new list every step
  EXPECT_GT(a.engine->mesh_contacts(), 10u);
  EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*b.engine)));
  for (BuiltScene* v : {&c, &d, &e}) {
    EXPECT_GE(v->engine->stats().lists_kept, 10u);
    EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*v->engine)));
  }
  std::printf("[ info ] builds: skin 0 %llu, 3 mm %llu, adaptive %llu (steps kept past a skin: %llu, hgrid %llu, bsp %llu)\n",
              static_cast<unsigned long long>(a.engine->stats().broad_phase_builds),
              static_cast<unsigned long long>(b.engine->stats().broad_phase_builds),
              static_cast<unsigned long long>(c.engine->stats().broad_phase_builds),
              static_cast<unsigned long long>(c.engine->stats().lists_kept),
              static_cast<unsigned long long>(d.engine->stats().lists_kept),
              static_cast<unsigned long long>(e.engine->stats().lists_kept));
}

TEST(Engine, AListKeptPastASkinEndsWhenThatParticleMeetsANewPartner) {
  // test::chain_scene: a sphere at 1 m/s hits one at rest (a listed pair), which then runs 0.15 mm
  // to a third at rest. At the last build before it gets there, their half skins (a twentieth of a radius: 16
  // steps at 1 m/s are less) leave a gap, so that pair is not listed;
  // the runner soon moves past its skin and the list lives on (Engine::list_holds) until the step
  // it touches the third, which must end it: a list kept one step longer would miss that contact.
  // The skin-0 run (a new list every step) is the reference, bit for bit.
  SceneConfig exact = load_scene_from_string(test::chain_scene(), "chain.yaml");
  exact.simulation.skin = 0;
  BuiltScene a = build_scene(exact);
  for (int s = 0; s < 400; ++s) a.engine->step();
  EXPECT_GT(state_by_id(*a.engine).at(2)[3], 0.5) << "the third sphere was hit";  // (ids from 0, in file order)
  for (BroadPhaseMethod method : {BroadPhaseMethod::Grid, BroadPhaseMethod::HGrid, BroadPhaseMethod::Bsp}) {
    SceneConfig adaptive = exact;
    adaptive.simulation.skin = -1;
    adaptive.broad_phase.method = method;
    BuiltScene b = build_scene(adaptive);
    for (int s = 0; s < 400; ++s) b.engine->step();
    EXPECT_GE(b.engine->stats().lists_kept, 100u) << b.engine->broad_phase_report().method;
    EXPECT_LT(b.engine->stats().broad_phase_builds, 20u);
    EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*b.engine))) << b.engine->broad_phase_report().method;
  }
}

TEST(Engine, AKeptMeshListEndsWhenItsParticleMeetsAnElementLeftOut) {
  // test::wall_flight_scene: a sphere flies at 10 m/s at a wall 8.5 mm away (30 more rest behind the
  // wall, so the flight stays inside the particles' box, where the bins hold every element, and the
  // uniform grid answers the pair lists' checks). Its mesh skin (half its radius) leaves the wall out of its list; it is
  // past that skin after 50 steps, and the lists live on (Engine::mesh_lists_hold) until the step
  // it touches the wall, which must end them: kept one step longer, the sphere would fly through.
  // The skin-0 run is the reference, bit for bit.
  SceneConfig exact = load_scene_from_string(test::wall_flight_scene(), "wall.yaml"), adaptive = exact;
  exact.simulation.skin = 0;
  adaptive.simulation.skin = -1;
  BuiltScene a = build_scene(exact), b = build_scene(adaptive);
  for (int s = 0; s < 1500; ++s) {
    a.engine->step();
    b.engine->step();
  }
  EXPECT_GT(state_by_id(*a.engine).at(0)[3], 1.0) << "the sphere bounced off the wall";
  EXPECT_GE(b.engine->stats().mesh_lists_kept, 500u);
  EXPECT_LT(b.engine->stats().mesh_list_renewals, 31u * 10);  // (each renewal makes all 31 lists)
  EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*b.engine)));
}

TEST(Engine, LongMeshCandidateListsWithASkin) {
  // A floor of 24 triangles meeting at the origin: the sphere over the centre has all 24 within
  // reach (a long candidate list), and three more spheres slide across the triangles' edges
  // (contacts move from facet to edge to facet). Each sphere starts at its static Hertz overlap
  // (3.8 um) and stays on the floor. With a skin of 4 mm the lists live for many steps and must
  // give the skin-0 trajectories bit for bit.
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 1.0e-5, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.6}
particles:
  - {position: [0.001, 0.0005, 0.0039962], velocity: [-0.1, 0, 0], radius: 0.004, material: g}
  - {position: [0.012, 0, 0.0039962], velocity: [0, 0.4, 0], radius: 0.004, material: g}
  - {position: [-0.012, 0, 0.0039962], velocity: [0, -0.4, 0], radius: 0.004, material: g}
  - {position: [0, -0.012, 0.0039962], velocity: [0.4, 0, 0], radius: 0.004, material: g}
meshes:
  - name: fan
    material: w
    vertices: [[0, 0, 0])";
  const int sides = 24;
  for (int k = 0; k < sides; ++k) {
    const double a = 2 * M_PI * k / sides;
    yaml << ", [" << 0.03 * std::cos(a) << ", " << 0.03 * std::sin(a) << ", 0]";
  }
  yaml << "]\n    faces: [";
  for (int k = 0; k < sides; ++k) yaml << (k ? ", " : "") << "[0, " << 1 + k << ", " << 1 + (k + 1) % sides << "]";
  yaml << "]\n";
  const SkinPair run = with_and_without_skin(load_scene_from_string(yaml.str(), "fan.yaml"), 0.004);
  Engine& a = *run.exact.engine;
  Engine& b = *run.skinned.engine;
  std::size_t contact_steps = 0;  // steps with all four spheres on the floor
  for (int s = 0; s < 1000; ++s) {
    a.step();
    b.step();
    contact_steps += a.mesh_contacts() >= 4 ? 1 : 0;
    ASSERT_TRUE(a.status().ok) << a.status().message;
    ASSERT_TRUE(b.status().ok) << b.status().message;
  }
  EXPECT_EQ(contact_steps, 1000u);
  // With the skin, a list lives for tens of steps (the spheres move 4 um per step).
  EXPECT_LT(5 * b.stats().mesh_list_renewals, a.stats().mesh_list_renewals);
  EXPECT_TRUE(bitwise_equal(state_by_id(a), state_by_id(b)));
}

TEST(Engine, MeshListsOfSpheresCarriedByATurningBodyOutliveItsTravel) {
  // Spheres fly with a turning plate (each at the plate's velocity where it is, no gravity), 1.5
  // skins above it: the plate's elements are outside their lists but within the search's margin.
  // In the plate's frame they drift less than 1.8 mm in the run (on their tangents), so their lists
  // hold (Engine::update_mesh_candidates, mesh_near_body_used), while the plate's travel, 28 mm at
  // its corners, would have ended them every 90 steps under a travel bound (mesh_skin_used). No
  // still body: their displacement alone ends nothing. (They never touch the plate: the skin-0
  // run only confirms it; the soundness of the rooms is what the wall and bin tests check.)
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 1.0e-5, end_time: 0.02, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g]}
  - {materials: [g, w]}
meshes:
  - name: plate
    material: w
    vertices: [[-0.1, -0.1, 0], [0, -0.1, 0], [0.1, -0.1, 0], [-0.1, 0, 0], [0, 0, 0], [0.1, 0, 0],
               [-0.1, 0.1, 0], [0, 0.1, 0], [0.1, 0.1, 0]]
    faces: [[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]
    motion: {angular_velocity: [0, 0, 10], center: [0, 0, 0]}
particles:
)";
  const double omega = 10, r = 0.002, skin = 0.002, z = r + 1.5 * skin;
  for (int k = 0; k < 8; ++k) {
    const double x = -0.07 + 0.02 * k, y = 0.05 - 0.015 * k;
    yaml << "  - {position: [" << x << ", " << y << ", " << z << "], radius: " << r << ", material: g, velocity: ["
         << -omega * y << ", " << omega * x << ", 0]}\n";
  }
  const SkinPair run = with_and_without_skin(load_scene_from_string(yaml.str(), "plate.yaml"), skin);
  Engine& a = *run.exact.engine;
  Engine& b = *run.skinned.engine;
  for (int s = 0; s < 2000; ++s) {
    a.step();
    b.step();
  }
  ASSERT_TRUE(b.status().ok) << b.status().message;
  const std::uint64_t n = b.particles().size();
  EXPECT_EQ(a.stats().mesh_list_renewals, 2000 * n);  // skin 0: new lists every step
  // The lists made at the start hold; the one re-sort of the particle arrays in the run (every
  // 16th neighbour-list rebuild, at step 1808) makes them anew (the travel bound: 22 times).
  EXPECT_LE(b.stats().mesh_list_renewals, 2 * n);
  EXPECT_TRUE(bitwise_equal(state_by_id(a), state_by_id(b)));
}

TEST(Engine, FastWallIsNeverMissedByTheCandidateLists) {
  // A wall translating at 1 m/s into spheres that fly at it at 0.5 m/s. The candidate lists must
  // account for the wall's own travel, not only the spheres' (the slow paddle of the bin scene
  // does not show it): a list that missed the wall would let a sphere pass through it. The skin-0
  // run (lists made anew every step) is the reference, and every sphere must bounce off the wall
  // (vx > 0 at the end).
  const char* yaml = R"(
simulation: {dt: 1.0e-5, end_time: 0.02, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.6}
fills:
  - {shape: box, pattern: random, min: [0.0, -0.04, -0.04], max: [0.03, 0.04, 0.04], count: 60, radius: 0.003,
     material: g, velocity: [-0.5, 0, 0], seed: 7}
meshes:
  - name: wall
    material: w
    vertices: [[-0.01, -0.05, -0.05], [-0.01, 0.05, -0.05], [-0.01, 0.05, 0.05], [-0.01, -0.05, 0.05]]
    faces: [[0, 1, 2, 3]]
    motion: {velocity: [1.0, 0, 0]}
)";
  const SkinPair run = with_and_without_skin(load_scene_from_string(yaml, "wall.yaml"), 0.003);
  Engine& a = *run.exact.engine;
  Engine& b = *run.skinned.engine;
  for (int s = 0; s < 3000; ++s) {
    a.step();
    b.step();
  }
  ASSERT_TRUE(b.status().ok) << b.status().message;
  for (std::size_t i = 0; i < b.particles().size(); ++i)
    EXPECT_GT(b.particles().v[i].x, 0.0) << "particle " << b.particles().id[i] << " missed the wall";
  EXPECT_LT(5 * b.stats().mesh_list_renewals, a.stats().mesh_list_renewals);
  EXPECT_TRUE(bitwise_equal(state_by_id(a), state_by_id(b)));
  // The adaptive skins (pair and mesh, sized by the spheres' and the wall's speeds) too.
  SceneConfig adaptive = load_scene_from_string(yaml, "wall.yaml");
  adaptive.simulation.skin = -1;
  BuiltScene c = build_scene(adaptive);
  c.engine->set_parallel_min(0);
  for (int s = 0; s < 3000; ++s) c.engine->step();
  EXPECT_LT(5 * c.engine->stats().mesh_list_renewals, a.stats().mesh_list_renewals);
  EXPECT_GE(c.engine->stats().mesh_lists_kept, 10u);  // lists kept past a mesh skin (Engine::mesh_lists_hold)
  EXPECT_TRUE(bitwise_equal(state_by_id(a), state_by_id(*c.engine)));
}

// Per-particle mesh skins on a wide distribution: a layer of 0.5 mm spheres settling on a floor of
// 1 mm quads, and one 10 mm sphere landing on them. With one skin for all (half the largest radius,
// 5 mm) each fine sphere keeps every quad within 5.5 mm, about 95; with its own adaptive skin (half
// its radius when slow) the sphere grown to at most 0.75 mm meets at most 9 quads (2 by 2 on
// average). The lists must still never miss a contact: skin 0 is the reference, bit for bit.
TEST(Engine, MeshSkinsPerParticleOnAWideDistribution) {
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 2.0e-6, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 5.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.05}
fills:
  - {shape: box, pattern: random, min: [0.001, 0.001, 0.0], max: [0.029, 0.029, 0.0011], count: 150, radius: 0.0005,
     material: g, velocity: [0, 0, -0.05], seed: 3}
particles:
  - {position: [0.015, 0.015, 0.0113], velocity: [0, 0, -0.1], radius: 0.01, material: g}
meshes:
  - name: floor
    material: w
    vertices: [)";
  const int side = 30;  // quads of 1 mm
  for (int j = 0; j <= side; ++j)
    for (int i = 0; i <= side; ++i) yaml << (i || j ? ", " : "") << "[" << 0.001 * i << ", " << 0.001 * j << ", 0]";
  yaml << "]\n    faces: [";
  for (int j = 0; j < side; ++j)
    for (int i = 0; i < side; ++i) {
      const int v = j * (side + 1) + i;
      yaml << (i || j ? ", " : "") << "[" << v << ", " << v + 1 << ", " << v + side + 2 << ", " << v + side + 1 << "]";
    }
  yaml << "]\n";
  const SceneConfig scene = load_scene_from_string(yaml.str(), "wide.yaml");
  SceneConfig exact = scene, fixed = scene, adaptive = scene;
  exact.simulation.skin = 0;
  fixed.simulation.skin = 0.005;  // what the adaptive mesh skin was for every sphere before
  adaptive.simulation.skin = -1;
  BuiltScene a = build_scene(exact), b = build_scene(fixed), c = build_scene(adaptive);
  const int steps = 2500;
  std::uint64_t fe_before = 0;
  for (int s = 0; s < steps; ++s) {
    if (s == steps / 2) fe_before = c.engine->stats().fe_potential;
    a.engine->step();
    b.engine->step();
    c.engine->step();
    ASSERT_TRUE(c.engine->status().ok) << c.engine->status().message;
  }
  const double n = double(c.engine->particles().size());
  ASSERT_EQ(n, 151.0);
  // Fast Intersection Tests per particle-step over the second half (the fines are on the floor,
  // the boulder among them): the boulder's own list holds about 300 quads, 2 per particle.
  const double adaptive_tests = double(c.engine->stats().fe_potential - fe_before) / (n * (steps - steps / 2));
  const double fixed_tests = double(b.engine->stats().fe_potential) / (n * steps);
  EXPECT_LT(adaptive_tests, 9.0 + 2.5) << "fixed skin: " << fixed_tests;
  std::printf("Fast Intersection Tests per particle-step: %.2f with per-particle skins, %.2f with one 5 mm skin\n",
              adaptive_tests, fixed_tests);
  EXPECT_GT(fixed_tests, 5 * adaptive_tests);
  EXPECT_GT(c.engine->mesh_contacts(), 100u);  // the fines rest on the floor
  EXPECT_GE(c.engine->touching_pairs(), 3u);   // and the boulder on them
  EXPECT_LT(5 * c.engine->stats().mesh_list_renewals, a.engine->stats().mesh_list_renewals);
  EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*b.engine)));
  EXPECT_TRUE(bitwise_equal(state_by_id(*a.engine), state_by_id(*c.engine)));
}

TEST(Engine, BitwiseIdenticalAcrossThreadCountsAndRuns) {
  const SceneConfig scene = load_scene_from_string(kBinScene, "bin.yaml");
  std::map<std::int64_t, std::array<double, 9>> reference;
  Vec3 ref_torque{0, 0, 0};
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 4, 4}) {
    omp_set_num_threads(threads);
    BuiltScene built = build_scene(scene);
    built.engine->set_parallel_min(0);  // 300 particles: thread every loop anyway
    for (int s = 0; s < 1300; ++s) built.engine->step();  // the bed is on the paddle by then
    const auto state = state_by_id(*built.engine);
    const Vec3 torque = built.engine->body_torque()[1];
    if (reference.empty()) {
      reference = state;
      ref_torque = torque;
      EXPECT_NE(torque.z, 0.0);  // the paddle is loaded
    } else {
      EXPECT_TRUE(bitwise_equal(state, reference)) << threads << " threads";
      EXPECT_EQ(std::memcmp(&torque, &ref_torque, sizeof(Vec3)), 0) << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

// Each touching pair adds its force to one particle and its negation to the other, as integers
// (core/engine/fixed_loads.hpp): in a box periodic on every axis, without walls or gravity, the
// particles' forces sum to exactly zero. The same bits for any thread count: the pass splits the
// pairs among threads in stripes of rows and hands a partner beyond the next stripe to its owner
// (more of those the more threads), and the sums are the same for any split.
TEST(Engine, PairForcesCancelExactlyForAnyThreadCount) {
  const SceneConfig scene = load_scene_from_string(R"(
name: periodic cube
simulation: {dt: 1e-5, end_time: 1, gravity: [0, 0, 0]}
domain: {min: [0, 0, 0], max: [0.04, 0.04, 0.04], periodic: [x, y, z]}
materials:
  - {name: glass, density: 2500, youngs_modulus: 5e6, poisson_ratio: 0.25}
interactions:
  - {materials: [glass, glass], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [0.04, 0.04, 0.04], count: 2000,
     radius: {distribution: uniform, min: 0.0011, max: 0.0015}, material: glass, seed: 5}
)",
                                                   "cube.yaml");
  std::map<std::int64_t, std::array<double, 9>> reference;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3, 8}) {
    omp_set_num_threads(threads);
    BuiltScene built = build_scene(scene);
    built.engine->set_parallel_min(0);
    // shaken: every particle given a velocity of its own (a function of its id), so that they collide
    ParticleArrays& p = built.engine->particles_mutable();
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double s = double(p.id[i]);
      p.v[i] = Vec3{std::sin(1.3 * s), std::sin(2.1 * s + 1), std::sin(3.7 * s + 2)} * 0.5;
    }
    for (int s = 0; s < 300; ++s) built.engine->step();
    ASSERT_TRUE(built.engine->status().ok) << built.engine->status().message;
    const Engine& e = *built.engine;
    EXPECT_GT(e.touching_pairs(), 100u) << threads << " threads";  // colliding
    // the partners across the periodic faces lie far in the particle order: handed to their owners
    if (threads > 1) {
      EXPECT_GT(e.stats().pair_spills, 0u) << threads << " threads";
    }
    const LoadQuantum q = e.quantum();
    std::int64_t total[3] = {0, 0, 0};
    for (const Vec3& f : e.particles().force) {
      const double units[3] = {f.x * q.force_scale, f.y * q.force_scale, f.z * q.force_scale};
      for (int c = 0; c < 3; ++c) {
        ASSERT_EQ(units[c], std::nearbyint(units[c]));  // a whole number of units, exactly
        total[c] += static_cast<std::int64_t>(units[c]);
      }
    }
    EXPECT_EQ(total[0], 0) << threads << " threads";
    EXPECT_EQ(total[1], 0) << threads << " threads";
    EXPECT_EQ(total[2], 0) << threads << " threads";
    const auto state = state_by_id(e);
    if (reference.empty())
      reference = state;
    else
      EXPECT_TRUE(bitwise_equal(state, reference)) << threads << " threads";
  }
  omp_set_num_threads(saved);
}

// The pair loads' units are sized for the materials particles can have: a wall material's pairs
// (with a particle, or with another wall's material) never reach the pair sums and must not coarsen
// them (a stiff steel-steel entry beside soft beads would make them 2^15 times coarser); a
// material that only an inlet brings in later counts from the start, so that a restart before
// its first particle sizes them alike; a rigid particle material is refused by name.
TEST(Engine, PairLoadUnitsAreSizedForTheParticlesMaterials) {
  const Material bead{1000, 1e7, 0.2}, steel{7800, 2e11, 0.3}, rigid{0, real(INFINITY), 0.3};
  const int nm = 3;  // 0 bead, 1 steel (a wall's, and an inlet's later), 2 rigid (a wall's)
  std::vector<ContactParams> table(nm * nm, ContactParams{0, 0, 0, 0, 0, RollingModel::ConstantTorque});
  const auto set = [&](int a, int b, const Material& ma, const Material& mb) {
    table[a * nm + b] = table[b * nm + a] = mix_contact_params(ma, mb, InteractionParams{0.5, 0.5, 0.01});
  };
  set(0, 0, bead, bead);
  set(0, 1, bead, steel);
  set(1, 1, steel, steel);
  set(0, 2, bead, rigid);
  set(2, 2, rigid, rigid);
  EngineSettings settings;
  const std::vector<std::int32_t> beads(10, 0);
  const std::vector<real> radii(10, 0.002);
  LoadSizing only_beads;
  only_beads.start(settings, nm, beads, radii);
  const LoadQuantum q = only_beads.quantum(table, nm);
  EXPECT_EQ(q.force_scale, quanta_for(pair_force_bound(table[0], 0.002), 0.002).force_scale);
  // steel particles poured in later: sized for them from the start when the settings say so
  settings.load_materials = {0, 1};
  LoadSizing with_inlet;
  with_inlet.start(settings, nm, beads, radii);
  const LoadQuantum q_inlet = with_inlet.quantum(table, nm);
  EXPECT_EQ(q_inlet.force_scale, quanta_for(pair_force_bound(table[1 * nm + 1], 0.002), 0.002).force_scale);
  EXPECT_LT(q_inlet.force_scale, q.force_scale / 1000);
  only_beads.add({1}, {real(0.003)});  // or as they come
  EXPECT_EQ(only_beads.quantum(table, nm).force_scale,
            quanta_for(pair_force_bound(table[1 * nm + 1], 0.003), 0.003).force_scale);
  // a rigid particle material
  LoadSizing rigid_particles;
  rigid_particles.start(EngineSettings{}, nm, {0, 2}, radii);
  try {
    rigid_particles.quantum(table, nm);
    ADD_FAILURE() << "a rigid particle material was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("materials 2 and 2"), std::string::npos) << e.what();
  }
}

// Mesh-contact slots (kMaxMeshContacts of them, 160 bytes each) belong only to the particles that
// have candidate elements: in a column of 14 layers on a floor, the bottom layer. The engine state
// is then the particle fields (189 bytes), the per-particle lists (about 150) and the pair list
// (145 bytes per candidate pair, 3 per particle on a touching cubic lattice): 741 bytes per
// particle; with slots for every particle it would be about 2,070.
TEST(Engine, MeshSlotsOnlyForTheParticlesNearAMesh) {
  const SceneConfig scene = load_scene_from_string(R"(
name: column
simulation: {dt: 1e-5, end_time: 1, gravity: [0, 0, -9.81]}
materials:
  - {name: glass, density: 2500, youngs_modulus: 5e6, poisson_ratio: 0.25}
  - {name: wall, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [glass, glass], friction: 0.5, restitution: 0.5}
  - {materials: [glass, wall], friction: 0.5, restitution: 0.5}
fills:
  - {shape: box, pattern: regular, min: [0, 0, -0.004], max: [0.04, 0.04, 0.06], radius: 0.002, material: glass}
meshes:
  - {name: floor, material: wall, vertices: [[0, 0, 0], [0.04, 0, 0], [0.04, 0.04, 0], [0, 0.04, 0]], faces: [[0, 1, 2, 3]]}
)",
                                                   "column.yaml");
  BuiltScene built = build_scene(scene);
  for (int s = 0; s < 20; ++s) built.engine->step();
  ASSERT_EQ(built.engine->particles().size(), 1134u);  // 9 x 9 x 14 lattice sites
  double lowest = 1;
  for (const Vec3& x : built.engine->particles().x) lowest = std::min(lowest, x.z);
  EXPECT_GT(built.engine->mesh_contacts(), 0u) << "lowest centre at " << lowest;  // the bottom layer rests on the floor
  EXPECT_LT(built.engine->bytes_per_particle(), 1000.0) << built.engine->particles().size() << " particles";
}

// A contact state's mesh slots are packed (the used ones, in particle order); the device engine and
// checkpoints of versions 1 and 2 have one block of kMaxMeshContacts per particle. Packing and
// unpacking keep every used slot in place and leave the others zero.
TEST(ContactState, MeshSlotsPackAndUnpack) {
  const std::vector<std::uint8_t> count{0, 2, 0, 1};
  std::vector<EntityContact> entity(4 * kMaxMeshContacts);
  std::vector<Vec3> normal(4 * kMaxMeshContacts);
  std::vector<ContactHistory> history(4 * kMaxMeshContacts);
  for (std::size_t q = 0; q < entity.size(); ++q) {
    entity[q].element = static_cast<index_t>(q);
    normal[q] = Vec3{double(q), 0, 0};
    history[q].tangential = Vec3{0, double(q), 0};
  }
  ContactState c;
  pack_mesh_slots(count, nullptr, entity, normal, history, c);
  ASSERT_EQ(c.mesh_entity.size(), 3u);
  EXPECT_EQ(c.mesh_entity[0].element, kMaxMeshContacts);      // particle 1, slot 0
  EXPECT_EQ(c.mesh_entity[1].element, kMaxMeshContacts + 1);  // particle 1, slot 1
  EXPECT_EQ(c.mesh_entity[2].element, 3 * kMaxMeshContacts);  // particle 3, slot 0
  EXPECT_EQ(c.mesh_history[2].tangential.y, 3.0 * kMaxMeshContacts);
  EXPECT_EQ(checked_mesh_slots(c, 4, "test"), 3u);
  EXPECT_THROW(checked_mesh_slots(c, 5, "test"), std::runtime_error);
  std::vector<EntityContact> e2;
  std::vector<Vec3> n2;
  std::vector<ContactHistory> h2;
  unpack_mesh_slots(c, nullptr, 4, e2, n2, h2);
  ASSERT_EQ(e2.size(), entity.size());
  for (std::size_t i = 0; i < 4; ++i)
    for (int s = 0; s < kMaxMeshContacts; ++s) {
      const std::size_t q = i * kMaxMeshContacts + s;
      const bool used = s < count[i];
      EXPECT_EQ(e2[q].element, used ? entity[q].element : 0) << q;
      EXPECT_EQ(n2[q].x, used ? normal[q].x : 0.0) << q;
      EXPECT_EQ(h2[q].tangential.y, used ? history[q].tangential.y : 0.0) << q;
    }
}

// A step advances most particles without writing their force and torque fields; particles()
// and export_state sum them again from the loads, which must give the forces the step advanced
// them with: those compute_forces gives at the same state on a twin engine (every field
// bitwise, by id), whether read after every step or after several, and after a re-sort (which
// keeps the trajectory's bits).
TEST(Engine, ForcesReadAfterAStepAreThoseItAdvancedWith) {
  const SceneConfig scene = load_scene_from_string(kBinScene, "bin.yaml");
  BuiltScene twin = build_scene(scene), stepped = build_scene(scene);
  twin.engine->set_parallel_min(0);
  stepped.engine->set_parallel_min(0);
  using Loads = std::map<std::int64_t, std::array<double, 6>>;
  const auto loads = [](const ParticleArrays& p) {
    Loads out;
    for (std::size_t i = 0; i < p.size(); ++i)
      out[p.id[i]] = {p.force[i].x, p.force[i].y, p.force[i].z, p.torque[i].x, p.torque[i].y, p.torque[i].z};
    return out;
  };
  const auto same = [](const Loads& a, const Loads& b) {
    if (a.size() != b.size()) return false;
    for (const auto& [id, f] : a) {
      const auto it = b.find(id);
      if (it == b.end() || std::memcmp(f.data(), it->second.data(), sizeof(double) * 6) != 0) return false;
    }
    return true;
  };
  int compared = 0, loaded = 0;
  for (int s = 0; s < 4000; ++s) {  // (the beads land from about step 1,000)
    twin.engine->compute_forces();
    const Loads expected = loads(twin.engine->particles());
    twin.engine->step();
    stepped.engine->step();
    if (s % 7 != 6 && s < 3990) continue;  // (read after several steps, and after each of the last ones)
    ++compared;
    if (s % 3 == 0) {  // re-sorted before the read (the loads stay in the old order)
      std::vector<std::int64_t> order(stepped.engine->num_particles());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(order.size() - 1 - i);
      stepped.engine->permute_particles(order);
    }
    if (s % 2 == 0) {
      ASSERT_TRUE(same(loads(stepped.engine->particles()), expected)) << "step " << s;
    } else {
      ParticleArrays exported;
      ContactState contacts;
      stepped.engine->export_state(exported, contacts);
      ASSERT_TRUE(same(loads(exported), expected)) << "step " << s << " (export_state)";
    }
    for (const auto& [id, f] : expected) loaded += f[2] != 0 ? 1 : 0;
  }
  EXPECT_GT(compared, 500);
  EXPECT_GT(loaded, 50 * compared);  // on average, in contact with a wall or another bead (74 here)
}

TEST(Engine, BodyLoadIsTheSumOfParticleContactForces) {
  // Newton's third law across the particle-mesh interface: with only mesh contacts (one sphere
  // resting on the floor), the floor's load equals minus the sphere's contact force.
  SceneConfig scene = load_scene_from_string(kBinScene, "bin.yaml");
  scene.fills.clear();
  scene.meshes.pop_back();  // no paddle
  scene.particles.push_back(ParticleSpec{{0.03, 0.03, 0.005 - 5.5e-6 /* static Hertz overlap */}, {0.1, 0, 0}, {0, 0, 0}, 0.005, "grain", false});
  BuiltScene built = build_scene(scene);
  int in_contact = 0;
  for (int s = 0; s < 2000; ++s) {
    built.engine->step();
    const Vec3 f = built.engine->particles().force[0];
    const Vec3 fb = built.engine->body_force()[0];
    if (f.z > 0) ++in_contact;
    // Exactly opposite: the same numbers with the sign flipped, summed in one term.
    ASSERT_EQ(fb.x, -f.x);
    ASSERT_EQ(fb.z, -f.z);
  }
  EXPECT_GT(in_contact, 1000);
}

TEST(Engine, FullMeshContactListStopsTheRunWithAMessage) {
  // A sphere of radius 1 inside a 12-sided prism of inradius 0.9: 12 valid facet contacts, more
  // than the capacity kMaxMeshContacts = 8. The run must stop with a message naming the particle.
  const std::string scene = test::kCageScene;
  BuiltScene built = build_scene(load_scene_from_string(scene, "cage.yaml"));
  built.engine->step();
  ASSERT_FALSE(built.engine->status().ok);
  const std::string& msg = built.engine->status().message;
  EXPECT_NE(msg.find("particle 0 has 12 valid mesh contacts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("kMaxMeshContacts = 8"), std::string::npos) << msg;
}

TEST(Engine, NonFiniteStateIsReportedWithTheParticle) {
  BuiltScene built = build_scene(load_scene_from_string(kBinScene, "bin.yaml"));
  built.engine->step();
  ASSERT_TRUE(built.engine->check_finite());
  const std::int64_t i = built.engine->index_of(17);
  built.engine->particles_mutable().v[i].y = std::nan("");
  EXPECT_FALSE(built.engine->check_finite());
  EXPECT_NE(built.engine->status().message.find("particle 17 has a non-finite"), std::string::npos);
  EXPECT_NE(built.engine->status().message.find("reduce simulation.dt"), std::string::npos);
}

// ---- Bad input through the command-line driver: exit code 2 and one clear message.

struct CapturedRun {
  int code;
  std::string err;
};

CapturedRun run_cli(const std::string& scene_path, std::vector<std::string> overrides = {}) {
  RunOptions opt;
  opt.scene = scene_path;
  opt.quiet = true;
  opt.overrides = std::move(overrides);
  opt.out_dir = (std::filesystem::temp_directory_path() / "dem_test_out").string();
  testing::internal::CaptureStderr();
  const int code = run_scene(opt);
  return CapturedRun{code, testing::internal::GetCapturedStderr()};
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "dem_engine_tests";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kOneSphere = R"(simulation: {dt: 1.0e-5, end_time: 1.0e-4}
materials:
  - {name: g, density: 100, youngs_modulus: 1.0e5, poisson_ratio: 0.2}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.2}
interactions:
  - {materials: [g, g]}
  - {materials: [g, w]}
particles:
  - {position: [0, 0.5, 0], radius: 0.3, material: g}
meshes:
  - {file: MESH, material: w}
)";

std::string scene_with_mesh(const std::string& mesh_name, const std::string& mesh_text) {
  const std::string mesh = write_temp(mesh_name, mesh_text);
  std::string s = kOneSphere;
  s.replace(s.find("MESH"), 4, mesh);
  return write_temp(mesh_name + ".yaml", s);
}

TEST(BadInput, MissingSceneFile) {
  const CapturedRun r = run_cli("/nonexistent/scene.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nonexistent/scene.yaml"), std::string::npos) << r.err;
}

TEST(BadInput, MeshWithInconsistentFaceIndex) {
  const CapturedRun r = run_cli(scene_with_mesh("bad_index.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 7\n"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad_index.obj:4"), std::string::npos) << r.err;
}

TEST(BadInput, MeshWithNanCoordinate) {
  const CapturedRun r = run_cli(scene_with_mesh("nan.obj", "v 0 0 0\nv nan 0 0\nv 0 0 1\nf 1 2 3\n"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nan.obj:2"), std::string::npos) << r.err;
}

TEST(BadInput, MissingMeshFileAndBadOverride) {
  std::string s = kOneSphere;
  s.replace(s.find("MESH"), 4, "no_such_mesh.obj");
  const std::string path = write_temp("missing_mesh.yaml", s);
  const CapturedRun r = run_cli(path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no_such_mesh.obj"), std::string::npos) << r.err;
  const CapturedRun o = run_cli(scene_with_mesh("ok.obj", "v -1 0 -1\nv 1 0 -1\nv 0 0 1\nf 1 3 2\n"),
                                {"simulation.dt=-1"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("simulation.dt"), std::string::npos) << o.err;
}

std::string first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return line;
}

TEST(Output, ValidSceneRunsAndWritesEveryOutput) {
  const auto out = std::filesystem::temp_directory_path() / "dem_test_out";
  std::filesystem::remove_all(out);
  const CapturedRun r = run_cli(scene_with_mesh("ok2.obj", "v -1 0 -1\nv 1 0 -1\nv 0 0 1\nf 1 3 2\n"),
                                {"output.snapshot_interval=5e-5", "output.probe_interval=2e-5", "output.probe_ids=[0]"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(first_line(out / "probes.csv"), "t,id,x,y,z,vx,vy,vz,wx,wy,wz,fx,fy,fz");
  EXPECT_EQ(first_line(out / "bodies.csv"), "t,body,fx,fy,fz,tx,ty,tz");
  EXPECT_TRUE(std::filesystem::exists(out / "particles.pvd"));
  EXPECT_TRUE(std::filesystem::exists(out / "meshes.pvd"));
  EXPECT_TRUE(std::filesystem::exists(out / "particles_000002.vtu"));  // t = 0, 5e-5, 1e-4
  EXPECT_TRUE(std::filesystem::exists(out / "meshes_000002_0.vtu"));  // snapshot 2, body 0
  std::ifstream probes(out / "probes.csv");
  int rows = -1;
  for (std::string line; std::getline(probes, line);) ++rows;
  EXPECT_EQ(rows, 6);  // t = 0, 2e-5, ..., 1e-4
  std::ifstream summary(out / "summary.json");
  const std::string js((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  EXPECT_NE(js.find("\"steps\": 10"), std::string::npos) << js;
  EXPECT_NE(js.find("\"backend\": \"host-openmp\""), std::string::npos);
  EXPECT_NE(js.find("\"status\": \"completed\""), std::string::npos);
}

}  // namespace
}  // namespace dem::host

namespace dem::host {
namespace {

// A rough plate: one hexagonal layer of touching spheres across the box's thinnest side, glued
// (prescribed) and jittered across the plate by at most jitter * r; spheres poured on it come to
// rest on it while it does not move.
TEST(SceneBuilder, OneRandomFillPlacesAWideSizeDistribution) {
  // 20,000 spheres of 1, 2.5, 5 and 10 mm with equal volume per size class (number weights
  // proportional to r^-3) at 18 % solid fraction in one fill: drawn in turn, the 10 mm spheres came
  // late and found no room (fewer than a quarter placed); placed largest first, all fit. The box:
  // 20,000 spheres of mean volume 4/3 pi 4 / sum r^-3 = 1.561e-8 m^3 take 3.12e-4 m^3, 18 % of a
  // 0.1202 m cube.
  const char* scene = R"(
simulation: {dt: 1.0e-6, end_time: 1.0e-5, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g]}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [0.1202, 0.1202, 0.1202], count: 20000, material: g, seed: 5,
     radius: {distribution: discrete, values: [0.001, 0.0025, 0.005, 0.01], weights: [1000, 64, 8, 1]}}
)";
  const SceneInputs in = build_scene_inputs(load_scene_from_string(scene, "poly.yaml"));
  const ParticleArrays& p = in.particles;
  ASSERT_EQ(p.size(), 20000u);
  std::map<double, int> per_size;
  double volume = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    ++per_size[p.radius[i]];
    volume += 4.0 / 3.0 * M_PI * std::pow(double(p.radius[i]), 3);
  }
  EXPECT_EQ(per_size.size(), 4u);
  EXPECT_GT(per_size[0.01], 10);  // ~17 expected (1/1073 of 20,000)
  EXPECT_NEAR(volume / std::pow(0.1202, 3), 0.18, 0.02);
  // no two overlap (a grid of 20 mm cells: every touching pair lies in neighbouring cells)
  std::map<std::array<int, 3>, std::vector<std::size_t>> cells;
  for (std::size_t i = 0; i < p.size(); ++i)
    cells[{int(p.x[i].x / 0.02), int(p.x[i].y / 0.02), int(p.x[i].z / 0.02)}].push_back(i);
  for (const auto& [c, list] : cells)
    for (std::size_t i : list)
      for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            auto it = cells.find({c[0] + dx, c[1] + dy, c[2] + dz});
            if (it == cells.end()) continue;
            for (std::size_t j : it->second)
              if (j > i) {
                ASSERT_GE(norm(p.x[i] - p.x[j]), p.radius[i] + p.radius[j]) << i << " and " << j;
              }
          }
}

TEST(SceneBuilder, PlateFillIsAGluedHexagonalLayer) {
  const std::string yaml = R"(name: plate
simulation: {dt: 1.0e-5, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
fills:
  - {shape: box, pattern: plate, min: [0, 0, 0], max: [0.04, 0.03, 0.004], radius: 0.001, material: g, prescribed: true, jitter: 0.3, seed: 3}
  - {shape: box, pattern: random, min: [0, 0, 0.005], max: [0.04, 0.03, 0.02], count: 40, radius: 0.0015, material: g}
)";
  SceneInputs in = build_scene_inputs(load_scene_from_string(yaml, "plate.yaml"));
  std::size_t plate = 0;
  for (std::size_t i = 0; i < in.particles.size(); ++i) {
    if (!in.particles.prescribed[i]) continue;
    ++plate;
    EXPECT_LE(std::abs(in.particles.x[i].z - 0.002), 0.3 * 0.001 + 1e-15);  // mid-plane, jittered
  }
  // rows 2 r sqrt(3)/2 apart in y over [r, 0.03 - r], 20 or 19 spheres 2 r apart in x per row
  const int rows = int(std::floor((0.03 - 0.002) / (0.002 * std::sqrt(3.0) / 2))) + 1;
  EXPECT_EQ(plate, std::size_t(rows / 2 + rows % 2) * 20 + std::size_t(rows / 2) * 19);
  // hexagonal: every inner sphere has 6 neighbours at one diameter in the plane
  std::size_t six = 0;
  for (std::size_t i = 0; i < plate; ++i) {
    int near = 0;
    for (std::size_t j = 0; j < plate; ++j) {
      const Vec3 d = in.particles.x[i] - in.particles.x[j];
      if (i != j && std::abs(std::hypot(double(d.x), double(d.y)) - 0.002) < 1e-9) ++near;
    }
    EXPECT_LE(near, 6);
    six += near == 6;
  }
  EXPECT_GT(six, plate / 2);
  Engine engine(in.particles, in.meshes, in.params, in.num_materials, in.settings);
  const std::vector<Vec3> start(engine.particles().x);
  for (int s = 0; s < 1000; ++s) engine.step();
  const ParticleArrays& p = engine.particles();
  std::size_t resting = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.prescribed[i]) {
      EXPECT_EQ(norm(p.v[i]), 0);
      EXPECT_EQ(norm(p.x[i] - start[static_cast<std::size_t>(p.id[i])]), 0);  // glued: not moved at all
    } else {
      resting += p.x[i].z > 0.002 && p.x[i].z < 0.02;
    }
  }
  EXPECT_EQ(resting, 40u);  // none fell through the plate
}

}  // namespace
}  // namespace dem::host
