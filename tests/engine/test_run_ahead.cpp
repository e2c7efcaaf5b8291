// The device engine's run ahead (cuda/run_ahead.inl): Simulation::advance queues the steps between
// two rebuilds without the host waiting for the device, each step deciding on the device whether
// its lists still hold and whether its checks pass. Held here on every device system of the build:
// the bits, the contacts, the body loads and every count of the steps taken one by one with the
// driver's checks; no wait between rebuilds; and a failed check or a full block of mesh slots
// stopping the run at the step, and with the message, of the steps one by one. Each also with the
// host queueing every step of a call without looking (run_ahead_blind), as for a device far
// behind: the steps queued past the one that closed the gate must change nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines.hpp"

namespace dem::test {
namespace {

#if defined(DEM_TEST_HAS_DEVICE)
template <class E>
class RunAheadTest : public OnEngine<E> {};
TYPED_TEST_SUITE(RunAheadTest, DeviceEngines);

enum class Ahead { None, Seen, Blind };
const char* name(Ahead a) { return a == Ahead::None ? "one by one" : a == Ahead::Seen ? "ahead" : "ahead, blind"; }

template <class E>
std::unique_ptr<Simulation> make(SceneInputs in, Ahead a) {
  in.settings.run_ahead = a == Ahead::None ? 0 : 2;
  in.settings.run_ahead_blind = a == Ahead::Blind;
  return E::make(in);
}

void expect_same_counts(const host::ContactStats& a, const host::ContactStats& b, const std::string& where) {
  EXPECT_EQ(a.steps, b.steps) << where;
  EXPECT_EQ(a.broad_phase_builds, b.broad_phase_builds) << where;
  EXPECT_EQ(a.lists_kept, b.lists_kept) << where;
  EXPECT_EQ(a.pair_candidates, b.pair_candidates) << where;
  EXPECT_EQ(a.pair_contacts, b.pair_contacts) << where;
  EXPECT_EQ(a.fe_potential, b.fe_potential) << where;
  EXPECT_EQ(a.fe_contact, b.fe_contact) << where;
  EXPECT_EQ(a.valid_entities, b.valid_entities) << where;
  EXPECT_EQ(a.h2_compactions, b.h2_compactions) << where;
  EXPECT_EQ(a.mesh_list_renewals, b.mesh_list_renewals) << where;
  EXPECT_EQ(a.mesh_lists_kept, b.mesh_lists_kept) << where;
  EXPECT_EQ(a.planes_kept, b.planes_kept) << where;
  EXPECT_EQ(a.planes_approximated, b.planes_approximated) << where;
  EXPECT_EQ(a.plane_searches, b.plane_searches) << where;
  EXPECT_EQ(a.plane_iterations, b.plane_iterations) << where;
  EXPECT_EQ(a.plane_iterations_max, b.plane_iterations_max) << where;
}

const HealthLimits kWide{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};

// The steps in calls of these lengths, as a driver makes them between outputs (some with the
// forces evaluated for an output before the next call), on the three ways: the same state, the
// same counts, the same step and time after every call. The steps one by one's counts at the end.
template <class E>
host::ContactStats expect_same_run(const SceneInputs& in, const std::vector<std::uint64_t>& calls, const std::string& what) {
  std::unique_ptr<Simulation> one = make<E>(in, Ahead::None), seen = make<E>(in, Ahead::Seen), blind = make<E>(in, Ahead::Blind);
  std::uint64_t steps = 0;
  for (std::size_t c = 0; c < calls.size(); ++c) {
    const std::string where = what + ", after call " + std::to_string(c) + " (step " + std::to_string(steps + calls[c]) + ")";
    for (Simulation* s : {one.get(), seen.get(), blind.get()}) {
      const Simulation::Advanced r = s->advance(calls[c], kWide);
      EXPECT_TRUE(r.healthy) << where << ": " << s->status().message;
      EXPECT_EQ(r.steps, calls[c]) << where;
      if (c % 3 == 2) s->compute_forces();  // (an output's)
    }
    steps += calls[c];
    const State ref = capture(*one);
    for (Simulation* s : {seen.get(), blind.get()}) {
      const std::string w = where + ", " + (s == seen.get() ? name(Ahead::Seen) : name(Ahead::Blind));
      EXPECT_EQ(s->step_count(), steps) << w;
      EXPECT_EQ(s->time(), one->time()) << w;
      expect_same(ref, capture(*s), true, w);
      expect_same_counts(one->stats(), s->stats(), w);
      EXPECT_EQ(s->meshes().time, one->meshes().time) << w;
      EXPECT_EQ(s->meshes().vertices.size(), one->meshes().vertices.size()) << w;
      std::size_t moved = 0;  // (vertices where the poses differ)
      for (std::size_t k = 0; k < s->meshes().vertices.size(); ++k) moved += !(norm2(s->meshes().vertices[k] - one->meshes().vertices[k]) == 0);
      EXPECT_EQ(moved, 0u) << w;
    }
    if (::testing::Test::HasFatalFailure()) break;
  }
  return one->stats();
}

TYPED_TEST(RunAheadTest, GivesTheStepsOneByOneBitForBit) {
  const std::vector<std::uint64_t> calls{1, 37, 100, 2, 64, 100, 9, 100, 100, 87};
  // (each with rebuilds, or renewals, or lists kept past a skin among its steps)
  EXPECT_GT(expect_same_run<TypeParam>(bin_scene(), calls, "bin").mesh_list_renewals, 3u);  // a static bin and a rotating paddle
  EXPECT_GT(expect_same_run<TypeParam>(bin_scene(0.0005, 9), calls, "bin, fixed skin, a rebuild at least every 9 steps")
                .broad_phase_builds,
            60u);
  host::SceneConfig spheres = host::load_scene_from_string(kBinScene, "bin.yaml");
  spheres.meshes.clear();
  EXPECT_GT(expect_same_run<TypeParam>(host::build_scene_inputs(spheres), calls, "the bin's spheres without the bin").broad_phase_builds, 3u);
  const host::ContactStats mixer = expect_same_run<TypeParam>(scene_file("mixer/mixer.yaml", {"fills.0.count=3000"}), calls, "ribbon mixer, 3,000 beads");
  EXPECT_GT(mixer.broad_phase_builds, 3u);
  EXPECT_GT(mixer.mesh_lists_kept, 0u);
  EXPECT_GT(expect_same_run<TypeParam>(scene_text(chain_scene(), "chain.yaml"), calls, "a chain of impacts").lists_kept, 0u);
  EXPECT_GT(expect_same_run<TypeParam>(chute_scene(), calls, "the periodic chute").broad_phase_builds, 3u);
  EXPECT_GT(expect_same_run<TypeParam>(periodic_box_scene(), calls, "a box periodic on every axis").broad_phase_builds, 3u);
  SceneInputs hgrid = bin_scene();
  hgrid.settings.broad_phase.method = host::BroadPhaseMethod::HGrid;
  EXPECT_GT(expect_same_run<TypeParam>(hgrid, calls, "bin, HGrid").broad_phase_builds, 3u);
  // A mesh list kept past its particle's skin until the step it meets an element left out, which
  // must end it there (decided on the device: the kept mesh lists' check), flying at a wall and
  // with a wall moving onto it.
  const std::vector<std::uint64_t> flight_calls{1, 37, 100, 2, 64, 100, 9, 100, 100, 87, 100, 100, 100, 100, 100, 100, 100, 100, 100};  // (the bounce)
  for (const auto& [yaml, what] : {std::pair<std::string, const char*>{wall_flight_scene(), "a sphere flying at a wall"},
                                   std::pair<std::string, const char*>{moving_wall_scene(), "a wall moving onto a sphere"}}) {
    host::SceneConfig c = host::load_scene_from_string(yaml, "wall.yaml");
    c.simulation.skin = -1;
    const std::vector<std::uint64_t>& steps = yaml == wall_flight_scene() ? flight_calls : calls;
    EXPECT_GT(expect_same_run<TypeParam>(host::build_scene_inputs(c), steps, what).mesh_lists_kept, 50u) << what;
  }
  // Polyhedra among spheres, with a turning paddle: their common planes counted by the step
  // (exact, and the slow pairs' approximated), their orientations in the state compared.
  for (const char* tolerance : {"simulation.common_plane_tolerance=0", "simulation.common_plane_tolerance=0.05"}) {
    const host::ContactStats poly = expect_same_run<TypeParam>(scene_text(kPolyhedraBinScene, "scene.yaml", {tolerance}), calls,
                                                               std::string("polyhedra bin, ") + tolerance);
    EXPECT_GT(poly.plane_searches, 0u) << tolerance;
    EXPECT_GT(poly.broad_phase_builds, 3u) << tolerance;
  }
}

// The host's waits: the run ahead's steps wait once, where a step finds a list broken (or the
// call ends), and that copy brings the step its skin tests; the step then runs as on its own (its
// rebuild or renewal), and its check waits for nothing: the next run ahead makes it first on the
// device. So a busy step waits as often as one by one (the copy for its check there), and quiet
// steps, which wait once each one by one (the check's copy), add none.
template <class E>
void expect_no_waits_between_rebuilds(const SceneInputs& in, int warmup, int steps, const std::string& what) {
  std::unique_ptr<Simulation> read = make<E>(in, Ahead::None), one = make<E>(in, Ahead::None), ahead = make<E>(in, Ahead::Seen);
  for (Simulation* s : {read.get(), one.get(), ahead.get()}) ASSERT_TRUE(s->advance(std::uint64_t(warmup), kWide).healthy);
  host::ContactStats before = read->stats();
  std::uint64_t busy = 0, quiet = 0, busy_waits = 0;
  for (int k = 0; k < steps; ++k) {
    ASSERT_TRUE(read->advance(1, kWide).healthy);
    const std::uint64_t w0 = one->host_waits();
    ASSERT_TRUE(one->advance(1, kWide).healthy);
    const host::ContactStats after = read->stats();
    if (after.broad_phase_builds != before.broad_phase_builds || after.mesh_list_renewals != before.mesh_list_renewals) {
      ++busy;
      busy_waits += one->host_waits() - w0;
    } else {
      ++quiet;
    }
    before = after;
  }
  const std::uint64_t w0 = ahead->host_waits();
  ASSERT_TRUE(ahead->advance(std::uint64_t(steps), kWide).healthy);
  const std::uint64_t waits = ahead->host_waits() - w0;
  SCOPED_TRACE(what + ": " + std::to_string(quiet) + " quiet steps, " + std::to_string(busy) + " busy ones waiting " +
               std::to_string(busy_waits) + " times one by one; " + std::to_string(waits) + " waits ahead");
  ASSERT_GE(quiet, 3 * busy);  // (enough quiet steps that one wait each would break the bound)
  ASSERT_GT(busy, 0u);
  // (two more: the run ahead's record allocated, and the copy at the end of the call)
  EXPECT_LE(waits, busy_waits + 2);
  expect_same(capture(*one), capture(*ahead), true, what);
}

TYPED_TEST(RunAheadTest, WaitsForTheDeviceOnlyWhereAListBreaks) {
  host::SceneConfig spheres = host::load_scene_from_string(kBinScene, "bin.yaml");
  spheres.meshes.clear();
  expect_no_waits_between_rebuilds<TypeParam>(host::build_scene_inputs(spheres), 200, 600, "the bin's spheres without the bin");
  expect_no_waits_between_rebuilds<TypeParam>(bin_scene(), 200, 600, "bin");
  expect_no_waits_between_rebuilds<TypeParam>(scene_file("mixer/mixer.yaml", {"fills.0.count=3000"}), 400, 600,
                                              "ribbon mixer, 3,000 beads");
}

// The algorithms a quiet step of a run ahead launches (Exec::launches, alike on every system): its
// passes (the pair pass and the integration; the mesh pass where there are meshes), a moving
// body's frames and pose (two), and the five that end it (launch_step_end: two reductions, the
// health examination, both kept lists' checks in one pass, the decision). A fixed skin wide enough
// that the window has no rebuild and no renewal; a run ahead's start (its record, the first step's
// checks, pose and decision) launches at most 10 more.
TYPED_TEST(RunAheadTest, LaunchesAFewAlgorithmsAQuietStep) {
  struct Case {
    bool meshes;
    std::uint64_t per_step;
    const char* what;
  };
  for (const Case k : {Case{false, 7, "the bin's spheres without the bin"}, Case{true, 10, "the bin with its turning paddle"}}) {
    host::SceneConfig c = host::load_scene_from_string(kBinScene, "bin.yaml");
    c.simulation.skin = 0.01;  // (m: 1.2 mm moved in the window at most)
    if (!k.meshes) c.meshes.clear();
    std::unique_ptr<Simulation> sim = make<TypeParam>(host::build_scene_inputs(c), Ahead::Seen);
    ASSERT_TRUE(sim->advance(20, kWide).healthy);
    const host::ContactStats before = sim->stats();
    const std::uint64_t launches = sim->device_launches();
    constexpr std::uint64_t kSteps = 100;
    ASSERT_TRUE(sim->advance(kSteps, kWide).healthy);
    ASSERT_EQ(sim->stats().broad_phase_builds, before.broad_phase_builds) << k.what << ": a rebuild in the window";
    ASSERT_EQ(sim->stats().mesh_list_renewals, before.mesh_list_renewals) << k.what << ": a renewal in the window";
    const std::uint64_t ran = sim->device_launches() - launches;
    EXPECT_GE(ran, k.per_step * kSteps) << k.what;
    EXPECT_LE(ran, k.per_step * kSteps + 10) << k.what;
  }
}

// A stop inside a run ahead: the step, the message and the state of the steps one by one.
template <class E>
void expect_same_stop(const SceneInputs& in, const HealthLimits& limits, std::uint64_t most, const std::string& expected,
                      const std::string& what) {
  std::unique_ptr<Simulation> one = make<E>(in, Ahead::None);
  const Simulation::Advanced stop = one->advance(most, limits);
  ASSERT_FALSE(stop.healthy) << what << ": no stop within " << most << " steps";
  ASSERT_GT(stop.steps, 20u) << what << ": the stop comes before any run ahead";
  const std::string& message = one->status().message;
  ASSERT_NE(message.find(expected), std::string::npos) << what << ": " << message;
  for (const Ahead a : {Ahead::Seen, Ahead::Blind}) {
    const std::string w = what + ", " + name(a);
    std::unique_ptr<Simulation> s = make<E>(in, a);
    const Simulation::Advanced r = s->advance(most, limits);
    EXPECT_FALSE(r.healthy) << w;
    EXPECT_EQ(r.steps, stop.steps) << w;
    EXPECT_EQ(s->step_count(), one->step_count()) << w;
    EXPECT_EQ(s->status().message, message) << w;
    EXPECT_EQ(s->status().problem, one->status().problem) << w;
    expect_same(capture(*one), capture(*s), true, w);
    expect_same_counts(one->stats(), s->stats(), w);
  }
}

TYPED_TEST(RunAheadTest, AFailedCheckOrAFullMeshBlockStopsAtItsStep) {
  // an overlap past the limit: the chain's first impact (7 % of the radius at its deepest)
  expect_same_stop<TypeParam>(scene_text(chain_scene(), "chain.yaml"), HealthLimits{1e3, Vec3{-1, -1, -1}, Vec3{1, 1, 1}, 0.02},
                              400, "overlaps a neighbour", "an overlap");
  // an escape: the chain's first sphere sent up at 5 m/s out of a domain 7.5 mm high
  std::string up = chain_scene();
  const std::string v = "velocity: [1, 0, 0]";
  up.replace(up.find(v), v.size(), "velocity: [0, 5, 0]");
  expect_same_stop<TypeParam>(scene_text(up, "up.yaml"), HealthLimits{1e3, Vec3{-1, -1, -1}, Vec3{1, 0.0075, 1}, 0.5}, 2000,
                              "left the domain", "an escape");
  // a full block of mesh slots: the cage's sphere dropped into its rim
  expect_same_stop<TypeParam>(scene_text(cage_drop_scene(), "cage_drop.yaml"), kWide, 4000, "valid mesh contacts at step",
                              "a full mesh block");
}
#endif

}  // namespace
}  // namespace dem::test
