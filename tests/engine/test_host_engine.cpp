// What only the host engine has: re-sorting its particle arrays on request (contact history
// follows the particles), the pair loads' integer sums split among threads in stripes, the
// mesh-contact slots only for particles near a mesh (its memory per particle), and particle fields
// edited in place. What every engine does is in test_engine_properties.cpp.
#include <gtest/gtest.h>
#include <omp.h>

#include <numeric>
#include <random>

#include "engines.hpp"

namespace dem::test {
namespace {

using host::BuiltScene;
using host::Engine;
using host::SceneConfig;

TEST(HostEngineOnly, ContactHistorySurvivesResorting) {
  // Run A straight; run B re-sorts the particle arrays randomly every 50 steps. The pair list is
  // remapped with the particles (roles and sum orders follow ids) and the mesh history travels
  // with the particle, so the trajectories must be bitwise identical (summation orders depend on
  // ids, not on array positions).
  const SceneInputs in = threaded(bin_scene());
  std::unique_ptr<Simulation> a = HostEngine::make(in), b = HostEngine::make(in);
  std::mt19937_64 rng(11);
  for (int s = 0; s < 3000; ++s) {
    a->step();
    if (s % 50 == 25) {
      std::vector<std::int64_t> order(b->num_particles());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      HostEngine::resort(*b, order);
    }
    b->step();
  }
  EXPECT_GT(a->touching_pairs(), 50u);  // there was contact history to lose
  EXPECT_GT(a->mesh_contacts(), 20u);
  expect_same(capture(*a), capture(*b), true, "re-sorted against straight");
}

// Each touching pair adds its force to one particle and its negation to the other, as integers
// (core/engine/fixed_loads.hpp): in a box periodic on every axis, without walls or gravity
// (test::kPeriodicCubeScene), the particles' forces sum to exactly zero. The same bits for any
// thread count: the pass splits the pairs among threads in stripes of rows and hands a partner
// beyond the next stripe to its owner (more of those the more threads), and the sums are the same
// for any split.
TEST(HostEngineOnly, PairForcesCancelExactlyForAnyThreadCount) {
  const SceneConfig scene = host::load_scene_from_string(kPeriodicCubeScene, "cube.yaml");
  State reference;
  bool first = true;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 3, 8}) {
    omp_set_num_threads(threads);
    BuiltScene built = host::build_scene(scene);
    built.engine->set_parallel_min(0);
    // shaken: every particle given a velocity of its own (a function of its id), so that they collide
    host::ParticleArrays& p = built.engine->particles_mutable();
    for (std::size_t i = 0; i < p.size(); ++i) {
      const double s = double(p.id[i]);
      p.v[i] = Vec3{std::sin(1.3 * s), std::sin(2.1 * s + 1), std::sin(3.7 * s + 2)} * 0.5;
    }
    run(*built.engine, 300);
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
    if (first) {
      reference = capture(e);
      first = false;
    } else {
      expect_same(reference, capture(e), true, std::to_string(threads) + " threads");
    }
  }
  omp_set_num_threads(saved);
}

// Mesh-contact slots (kMaxMeshContacts of them, 160 bytes each) belong only to the particles that
// have candidate elements: in a column of 14 layers on a floor (test::kColumnOnAFloorScene), the
// bottom layer. The engine state is then the particle fields (189 bytes), the per-particle lists
// (about 150) and the pair list (145 bytes per candidate pair, 3 per particle on a touching cubic
// lattice): 741 bytes per particle; with slots for every particle it would be about 2,070.
TEST(HostEngineOnly, MeshSlotsOnlyForTheParticlesNearAMesh) {
  std::unique_ptr<Simulation> sim = HostEngine::make(scene_text(kColumnOnAFloorScene, "column.yaml"));
  run(*sim, 20);
  ASSERT_EQ(sim->particles().size(), 1134u);  // 9 x 9 x 14 lattice sites
  double lowest = 1;
  for (const Vec3& x : sim->particles().x) lowest = std::min(lowest, double(x.z));
  EXPECT_GT(sim->mesh_contacts(), 0u) << "lowest centre at " << lowest;  // the bottom layer rests on the floor
  EXPECT_LT(sim->bytes_per_particle(), 1000.0) << sim->particles().size() << " particles";
}

// A velocity set to NaN in place (Engine::particles_mutable, by index_of): the check names the
// particle and says what to do.
TEST(HostEngineOnly, NonFiniteStateIsReportedWithTheParticle) {
  BuiltScene built = host::build_scene(host::load_scene_from_string(kBinScene, "bin.yaml"));
  built.engine->step();
  ASSERT_TRUE(built.engine->check_finite());
  const std::int64_t i = built.engine->index_of(17);
  built.engine->particles_mutable().v[i].y = std::nan("");
  EXPECT_FALSE(built.engine->check_finite());
  EXPECT_NE(built.engine->status().message.find("particle 17 has a non-finite"), std::string::npos);
  EXPECT_NE(built.engine->status().message.find("reduce simulation.dt"), std::string::npos);
}

}  // namespace
}  // namespace dem::test
