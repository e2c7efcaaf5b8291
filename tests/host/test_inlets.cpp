// Inlets (host/app/scene/flow.cpp): a pour of a set number (`count`) places every particle, the
// ones that waited for room included, and no more; a pour cut by its `stop` loses those still
// waiting; and the scene refuses a count that is not a positive integer, naming it.
#include <gtest/gtest.h>

#include <string>

#include "host/app/driver.hpp"
#include "host/app/scene/flow.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"
#include "host/sim/errors.hpp"

namespace dem::host {
namespace {

// Spheres of 1 cm falling out of a 3 x 3 x 1.2 cm region at 1 m/s: it holds about nine at a time
// and clears in about 12 ms, so a rate of 20,000 a second owes far more than it can place.
std::string crowded(const std::string& until) {
  return R"(
simulation: {dt: 1.0e-5, end_time: 1, gravity: [0, 0, -9.81]}
domain: {min: [-0.1, -0.1, -0.5], max: [0.1, 0.1, 0.1], on_escape: remove}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5, normal: linear, stiffness: 1.0e4}
inlets:
  - {name: feed, min: [-0.015, -0.015, 0], max: [0.015, 0.015, 0.012], radius: 0.005, material: g,
     velocity: [0, 0, -1], rate: 20000, interval: 1.0e-3, )" +
         until + "}\n";
}

struct Pour {
  std::uint64_t at_rate_time = 0;  // placed when the rate had owed 60 (3 ms)
  std::uint64_t in_all = 0;        // placed by 0.3 s
};
Pour pour(const std::string& until) {
  const SceneConfig scene = load_scene_from_string(crowded(until), "crowded.yaml");
  SceneInputs in = build_scene_inputs(scene);
  Engine engine(in.particles, in.meshes, in.params, in.num_materials, in.settings);
  FlowController flow(scene, 0, in.inlet_shapes);
  Pour out;
  for (int s = 1; s <= 30000; ++s) {
    engine.step();
    flow.apply(engine);
    if (s == 300) out.at_rate_time = flow.state().inserted.at(0);
  }
  EXPECT_TRUE(engine.status().ok) << engine.status().message;
  out.in_all = flow.state().inserted.at(0);
  return out;
}

TEST(Inlets, ACountPlacesEveryParticleThatWaitedForRoomAndNoMore) {
  const Pour counted = pour("count: 60");
  EXPECT_LT(counted.at_rate_time, 60u) << "the region should be full when the rate owes 60";
  EXPECT_EQ(counted.in_all, 60u);
  // Cut at the time the rate takes for 60 instead: those still waiting are not placed.
  const Pour stopped = pour("stop: 0.003");
  EXPECT_EQ(stopped.at_rate_time, counted.at_rate_time);  // (the same pour until then)
  EXPECT_EQ(stopped.in_all, stopped.at_rate_time);
  EXPECT_LT(stopped.in_all, 60u);
}

TEST(Inlets, ACountBelowWhatTheRateOwesEndsThePourEarly) {
  const Pour counted = pour("count: 5");  // the rate owes 60 by 3 ms, and the first batch has room for 5
  EXPECT_EQ(counted.at_rate_time, 5u);
  EXPECT_EQ(counted.in_all, 5u);
}

TEST(Inlets, ACountThatIsNoPositiveIntegerIsRefusedNamingIt) {
  for (const std::string bad : {"count: 0", "count: -3", "count: 2.5", "count: many"}) {
    try {
      (void)load_scene_from_string(crowded(bad), "crowded.yaml");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("inlets[0].count"), std::string::npos) << bad << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace dem::host
