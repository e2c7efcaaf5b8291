// The device engine against the host engine (the reference), on the validation scenes, the demo, a
// bin with a moving paddle and the ribbon mixer: positions, velocities, spins, forces, contact
// counts and body loads, compared particle by particle (by id: the engines order particles
// differently). Then the device engine's own properties: bitwise equal for any thread count and
// run to run, independent of skins and rebuild frequency (history carried across every rebuild),
// the mesh-contact capacity stopping the run with a message, and `dem run --device`.
//
// One source, two executables: dem_device_tests runs the device engine on Thrust's OpenMP system
// (label `device`, every CI run); dem_device_gpu_tests on CUDA (label `gpu`, skipped without a
// device, failing instead under DEM_REQUIRE_GPU=1).
//
// Bitwise or not. Both engines call the same core/ bodies in the same sum orders, so with no fused
// multiply-add anywhere (DEM_STRICT_FP=ON, the default: -ffp-contract=off, nvcc --fmad=false) and
// only + - * / sqrt in what feeds back into the forces, they give the same bits, and the tests
// demand it, on the GPU as well. CUDA's sin/cos (in the rotation update) are not glibc's, so the
// orientations q are not compared between the host and CUDA: they feed back into nothing for
// spheres. With DEM_STRICT_FP=OFF each compiler fuses multiply-adds where it likes, differently in
// each translation unit, and chaotic collisions amplify the last bit (the 30k mixer diverges at the
// 1e-4 level within 1,000 steps); then the comparisons use a tolerance (kLooseRel) and the long
// mixer comparison is skipped.
#include <gtest/gtest.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>

#include "cuda/device_engine.hpp"
#include "host/app/driver.hpp"
#include "host/sim/errors.hpp"
#include "host/omp/engine.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/sim/state_edit.hpp"
#include "host/app/scene/scene_loader.hpp"
#include "support/test_scenes.hpp"

#ifndef DEM_TEST_SYSTEM_CUDA
#define DEM_TEST_SYSTEM dem::device::System::Omp
#else
#define DEM_TEST_SYSTEM dem::device::System::Cuda
#endif

namespace dem::host {
namespace {

constexpr device::System kSystem = DEM_TEST_SYSTEM;
#if defined(DEM_STRICT_FP)
constexpr bool kStrictFp = true;
#else
constexpr bool kStrictFp = false;
#endif
// Relative tolerance without DEM_STRICT_FP: runs that differ by fused multiply-adds drift apart
// from the last bit; over the few hundred to few thousand steps compared here the drift measured
// at most ~1e-9 relative (demo, 5000 steps), so 1e-6 leaves room and still fails on any real
// difference in the physics (a missed contact changes velocities at the percent level).
constexpr double kLooseRel = 1e-6;

std::string scenes_dir() { return std::string(DEM_SOURCE_DIR) + "/scenes"; }

class DeviceEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (device::available(kSystem, &why)) return;
    const char* require = std::getenv("DEM_REQUIRE_GPU");
    if (kSystem == device::System::Cuda && require && std::string(require) == "1")
      FAIL() << "DEM_REQUIRE_GPU=1 but the device engine cannot run: " << why;
    GTEST_SKIP() << why;
  }
};

std::unique_ptr<Simulation> make(const SceneInputs& in, bool on_device) {
  if (!on_device)
    return std::make_unique<Engine>(in.particles, in.meshes, in.params, in.num_materials, in.settings);
  return device::make_engine(kSystem, in.particles, in.meshes, in.params, in.num_materials, in.settings);
}

// Everything compared, by particle id.
struct State {
  std::map<std::int64_t, std::array<double, 16>> particles;  // x, v, w, force, q
  std::size_t touching = 0, mesh = 0;
  std::vector<Vec3> body_force, body_torque;
};

State capture(const Simulation& s) {
  State out;
  const ParticleArrays& p = s.particles();
  for (std::size_t i = 0; i < p.size(); ++i)
    out.particles[p.id[i]] = {p.x[i].x, p.x[i].y, p.x[i].z, p.v[i].x, p.v[i].y, p.v[i].z, p.w[i].x, p.w[i].y,
                              p.w[i].z, p.force[i].x, p.force[i].y, p.force[i].z, p.q[i].w, p.q[i].x, p.q[i].y, p.q[i].z};
  out.touching = s.touching_pairs();
  out.mesh = s.mesh_contacts();
  out.body_force = s.body_force();
  out.body_torque = s.body_torque();
  return out;
}

// Same bits (exact = true), or within kLooseRel of the field's scale (largest magnitude of that
// field over all particles, so that values near zero are not judged relative to themselves).
// compare_q: also the orientations (not between the host and CUDA: their sin/cos differ).
void expect_same(const State& a, const State& b, bool exact, const std::string& where, bool compare_q = true) {
  ASSERT_EQ(a.particles.size(), b.particles.size()) << where;
  const int fields = compare_q ? 16 : 12;
  std::array<double, 16> scale{};
  for (const auto& [id, s] : a.particles)
    for (int k = 0; k < 16; ++k) scale[k / 3 * 3] = std::max(scale[k / 3 * 3], std::abs(s[k]));
  int reported = 0;
  for (const auto& [id, s] : a.particles) {
    auto it = b.particles.find(id);
    ASSERT_NE(it, b.particles.end()) << where << ": particle " << id << " missing";
    for (int k = 0; k < fields; ++k) {
      const double x = s[k], y = it->second[k];
      const bool ok = exact ? std::memcmp(&x, &y, sizeof x) == 0
                            : std::abs(x - y) <= kLooseRel * std::max(scale[k / 3 * 3], 1e-300);
      if (!ok && reported++ < 5)
        ADD_FAILURE() << where << ": particle " << id << " field " << k << ": host " << x << ", device " << y
                      << " (difference " << x - y << ")";
    }
  }
  EXPECT_EQ(a.touching, b.touching) << where << ": touching sphere pairs";
  EXPECT_EQ(a.mesh, b.mesh) << where << ": sphere-mesh contacts";
  ASSERT_EQ(a.body_force.size(), b.body_force.size()) << where;
  for (std::size_t k = 0; k < a.body_force.size(); ++k) {
    const Vec3 fa = a.body_force[k], fb = b.body_force[k], ta = a.body_torque[k], tb = b.body_torque[k];
    const double cf = exact ? 0 : kLooseRel * std::max(1e-12, norm(fa)) * 10, ct = exact ? 0 : kLooseRel * std::max(1e-12, norm(ta)) * 10;
    EXPECT_LE(norm(fa - fb), cf) << where << ": force on body " << k;
    EXPECT_LE(norm(ta - tb), ct) << where << ": torque on body " << k;
  }
}

// Host against device: the same bits under DEM_STRICT_FP (on CUDA too: --fmad=false, IEEE division
// and square root; only the orientation goes through CUDA's own sin/cos, and it feeds back into
// nothing for spheres).
constexpr bool kExactAgainstHost = kStrictFp;
constexpr bool kCompareOrientation = kSystem == device::System::Omp;

// Steps both engines together, comparing every `every` steps.
void compare_run(const SceneInputs& in, int steps, int every, const std::string& name) {
  std::unique_ptr<Simulation> host = make(in, false), dev = make(in, true);
  for (int s = 1; s <= steps; ++s) {
    host->step();
    dev->step();
    ASSERT_TRUE(host->status().ok) << name << ": " << host->status().message;
    ASSERT_TRUE(dev->status().ok) << name << ": " << dev->status().message;
    if (s % every == 0 || s == steps) {
      expect_same(capture(*host), capture(*dev), kExactAgainstHost, name + " at step " + std::to_string(s),
                  kCompareOrientation);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_EQ(host->stats().fe_contact, dev->stats().fe_contact) << name << ": elements passing the Fast Intersection Test";
  EXPECT_EQ(host->stats().valid_entities, dev->stats().valid_entities) << name << ": H2 contacts";
  EXPECT_EQ(host->stats().pair_contacts, dev->stats().pair_contacts) << name << ": touching pairs summed over steps";
}

SceneInputs scene_file(const std::string& rel, std::vector<std::string> overrides = {}) {
  return build_scene_inputs(load_scene(scenes_dir() + "/" + rel, overrides));
}

using test::kBinScene;
SceneInputs bin_scene(double skin = -1, int neighbour_interval = 0) {
  SceneConfig c = load_scene_from_string(kBinScene, "bin.yaml");
  c.simulation.skin = skin;
  c.simulation.neighbour_interval = neighbour_interval;
  return build_scene_inputs(c);
}

// ---- Against the host engine

TEST_F(DeviceEngineTest, MatchesHostOnTheValidationScenes) {
  // The first impacts and the sliding of santasusana2016 Sect. 6.1 (each scene's opening 0.25 s:
  // the drops hit the plate at ~0.2 s; the sliding cases cross element edges from the start).
  for (const char* scene : {"drop_facet.yaml", "drop_edge.yaml", "drop_vertex.yaml", "continuity.yaml",
                            "multiple_contact.yaml", "sliding_quad.yaml", "sliding_triangles.yaml"}) {
    SceneInputs in = scene_file(std::string("validation/") + scene);
    const int steps = static_cast<int>(std::lround(0.25 / in.settings.dt));
    compare_run(in, steps, steps / 5, scene);
    if (HasFailure()) return;
  }
}

TEST_F(DeviceEngineTest, MatchesHostOnABinWithAPaddle) { compare_run(bin_scene(), 1500, 250, "bin"); }

TEST_F(DeviceEngineTest, MatchesHostOnTheDemo) {
  compare_run(scene_file("demo/demo.yaml"), 1000, 250, "demo");
}

TEST_F(DeviceEngineTest, MatchesHostOnTheRibbonMixer) {
  // The paper's mixer, 29,559 spheres, 2,000 steps from the fill (0.1 s: the beads fall onto the
  // blades and the trough).
  if (!kStrictFp) GTEST_SKIP() << "needs DEM_STRICT_FP=ON (without it the runs drift apart from the last bit)";
  compare_run(scene_file("mixer/mixer.yaml"), 2000, 1000, "mixer");
}

// ---- The device engine's own properties

TEST_F(DeviceEngineTest, BitwiseAcrossThreadCountsAndRuns) {
  const SceneInputs in = bin_scene();
  std::vector<State> runs;
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2, 4, 2}) {
    omp_set_num_threads(threads);
    std::unique_ptr<Simulation> dev = make(in, true);
    for (int s = 0; s < 600; ++s) dev->step();
    runs.push_back(capture(*dev));
  }
  omp_set_num_threads(saved);
  for (std::size_t r = 1; r < runs.size(); ++r) expect_same(runs[0], runs[r], true, "run " + std::to_string(r));
}

// The host's waits for the device, step by step (Simulation::host_waits, counted alike on CUDA and
// on the OpenMP system, where nothing waits). A step that neither rebuilds the pair list nor
// renews the mesh candidate lists waits once, for its skin tests, whose copy also brings back the
// last mesh pass's sums; a moving body adds none (its frames go to the device through kernel
// parameters). A driver's health check waits once, and its copy brings back the mesh pass's sums
// and the next step's skin tests (with the kept mesh lists' check, on the meshes posed apart at
// the next step's time), so that a driver's step waits once in all. A kept mesh list's first
// step past a skin checks the lists on its own: one more. The bits cannot show a wait added to the step, so the counts are held here, on three engines stepped together (the same trajectory):
// one read after every step for the step's kind, one only stepped (as the benchmarks do), one
// checked after every step as `dem run` checks it.
struct StepWaits {
  int quiet = 0;       // steps with neither a rebuild nor a renewal
  int first_kept = 0;  // quiet steps that began keeping the mesh lists past a skin
  int busy = 0;        // steps with a rebuild or a renewal
  std::map<std::uint64_t, int> bench_quiet, driver_quiet;  // quiet steps by their waits
  std::uint64_t bench_quiet_waits = 0, driver_quiet_waits = 0, bench_busy_waits = 0, driver_busy_waits = 0;
};
StepWaits count_waits(const SceneInputs& in, int warmup, int steps) {
  std::unique_ptr<Simulation> read = make(in, true), bench = make(in, true), driver = make(in, true);
  const HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
  StepWaits out;
  ContactStats before = read->stats();
  bool kept_before = false;
  for (int s = -warmup; s < steps; ++s) {
    read->step();
    const std::uint64_t b0 = bench->host_waits(), d0 = driver->host_waits();
    bench->step();
    driver->step();
    EXPECT_TRUE(driver->check_health(limits));
    EXPECT_TRUE(driver->status().ok) << driver->status().message;
    const std::uint64_t bench_waits = bench->host_waits() - b0, driver_waits = driver->host_waits() - d0;
    const ContactStats after = read->stats();
    (void)read->body_force();  // (its loads summed after every pass; the others' only at the end)
    const bool busy = after.broad_phase_builds != before.broad_phase_builds ||
                      after.mesh_list_renewals != before.mesh_list_renewals;
    const bool kept = after.mesh_lists_kept != before.mesh_lists_kept;
    // Every step (busy ones too): the driver's check adds one wait and takes the next step's skin
    // tests with it, which saves one. (From the third step: the first has no check before it, and
    // the first copy back allocates its record, in the first check on one engine and the second
    // step on the other.)
    if (s > 1 - warmup) {
      EXPECT_EQ(driver_waits, bench_waits) << "step " << s << (kept_before ? ", after a step that kept the mesh lists" : "");
    }
    if (s >= 0) {
      if (busy) {
        ++out.busy, out.bench_busy_waits += bench_waits, out.driver_busy_waits += driver_waits;
      } else {
        ++out.quiet, ++out.bench_quiet[bench_waits], ++out.driver_quiet[driver_waits];
        out.bench_quiet_waits += bench_waits, out.driver_quiet_waits += driver_waits;
        out.first_kept += kept && !kept_before;
      }
    }
    kept_before = kept;
    before = after;
  }
  // The same run, whenever its results came back: the bits, the contacts, the body loads and the
  // mesh pass's counts (compare_run reads them after every step: here they come back with the
  // next step's skin tests, or with the driver's health check).
  EXPECT_TRUE(bench->status().ok) << bench->status().message;
  for (const Simulation* other : {bench.get(), driver.get()}) {
    expect_same(capture(*read), capture(*other), true, "read after every step against not");
    EXPECT_EQ(other->stats().fe_potential, read->stats().fe_potential);
    EXPECT_EQ(other->stats().fe_contact, read->stats().fe_contact);
    EXPECT_EQ(other->stats().valid_entities, read->stats().valid_entities);
    EXPECT_EQ(other->stats().h2_compactions, read->stats().h2_compactions);
    EXPECT_EQ(other->stats().pair_contacts, read->stats().pair_contacts);
    // the same decisions, whichever copy brought the skin tests back
    EXPECT_EQ(other->stats().broad_phase_builds, read->stats().broad_phase_builds);
    EXPECT_EQ(other->stats().lists_kept, read->stats().lists_kept);
    EXPECT_EQ(other->stats().mesh_list_renewals, read->stats().mesh_list_renewals);
    EXPECT_EQ(other->stats().mesh_lists_kept, read->stats().mesh_lists_kept);
  }
  return out;
}

void expect_waits(const StepWaits& w, double per_busy_step, int steps, const std::string& name) {
  std::ostringstream seen;
  for (const auto& [waits, count] : w.bench_quiet) seen << " " << count << " steps " << waits << ";";
  seen << " with the driver's checks:";
  for (const auto& [waits, count] : w.driver_quiet) seen << " " << count << " steps " << waits << ";";
  SCOPED_TRACE(name + ": quiet steps by their waits:" + seen.str() + " " + std::to_string(w.first_kept) +
               " first kept; " + std::to_string(w.busy) + " busy steps, " + std::to_string(w.bench_busy_waits) +
               " waits (" + std::to_string(w.driver_busy_waits) + " with the checks)");
  ASSERT_GE(w.quiet, steps / 2);  // (the window is mostly quiet steps, and has busy ones)
  ASSERT_GT(w.busy, 0);
  EXPECT_EQ(w.bench_quiet.begin()->first, 1u);  // none waits less
  EXPECT_EQ(w.driver_quiet.begin()->first, 1u);
  // Beyond the base: the first kept steps' checks, nothing else.
  const auto quiet = static_cast<std::uint64_t>(w.quiet), kept = static_cast<std::uint64_t>(w.first_kept);
  EXPECT_EQ(w.bench_quiet_waits, quiet + kept);
  EXPECT_EQ(w.driver_quiet_waits, quiet + kept);
  // A rebuild or a renewal: its counts and sizes, and the buffers that grow (see the callers; the
  // same on every run and system: the sizes are the engine's, bit for bit).
  const double busy = w.busy;
  EXPECT_LE(static_cast<double>(w.bench_busy_waits), per_busy_step * busy);
  EXPECT_LE(static_cast<double>(w.driver_busy_waits), per_busy_step * busy);
}

TEST_F(DeviceEngineTest, WaitsForTheDeviceOnceAStepWithOrWithoutTheDriversChecks) {
  const int steps = 600;
  SceneConfig free_fall = load_scene_from_string(kBinScene, "bin.yaml");
  free_fall.meshes.clear();
  // busy steps: measured 3.0 waits on average without meshes, 7.6 on the bin, 7.8 on the mixer
  // (where a rebuild renews the mesh lists too; 11.6 and 11.8 while a renewal read its domain's
  // counts, its bins' total, its lists' total and its blocks one at a time)
  expect_waits(count_waits(build_scene_inputs(free_fall), 200, steps), 3.5, steps, "the bin's spheres without the bin");
  expect_waits(count_waits(bin_scene(), 200, steps), 8.5, steps, "bin");  // a static bin and a rotating paddle
  const StepWaits mixer = count_waits(scene_file("mixer/mixer.yaml", {"fills.0.count=3000"}), 400, steps);
  expect_waits(mixer, 8.5, steps, "ribbon mixer, 3,000 beads");
  EXPECT_GT(mixer.first_kept, 0);  // (the kept mesh lists' own checks are seen)
}

// The health check's copy brings back the next step's skin tests (check_health, then
// rebuild_if_needed takes them). A particle edit or a motion change after the check makes them
// stale: the step must run its own. Two engines in lockstep, both checked after every step and
// both given the same change (a particle removed, or the paddle's motion set to what it is: the
// same trajectory); one is checked again after the change, and only its next step spares the
// skin tests' wait. Without the discarding, both would spare it (the stale tests of a motion
// change count the particles past their mesh skins with the old speeds). Then the same bits.
TEST_F(DeviceEngineTest, AnEditOrAMotionChangeAfterTheHealthCheckRunsTheSkinTestsAgain) {
  const SceneInputs in = bin_scene();
  const HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
  std::unique_ptr<Simulation> once = make(in, true), twice = make(in, true);
  for (int s = 0; s < 200; ++s) once->step(), twice->step();
  const std::size_t paddle = once->meshes().bodies.size() - 1;
  int samples = 0;
  for (int s = 0; s < 300; ++s) {
    once->step(), twice->step();
    ASSERT_TRUE(once->check_health(limits));
    ASSERT_TRUE(twice->check_health(limits));
    if (s % 3 != 0) continue;
    const bool edit = s % 2 == 0;
    for (Simulation* e : {once.get(), twice.get()}) {
      if (edit) {
        ASSERT_EQ(e->edit_particles({e->particles().id[static_cast<std::size_t>(s) % e->particles().size()]}, ParticleArrays{}), 1u);
      } else {
        const MeshBodyMotion same = e->meshes().bodies[paddle];
        e->set_body_motion(paddle, same);
      }
    }
    ASSERT_TRUE(twice->check_health(limits));
    const std::uint64_t w1 = once->host_waits(), w2 = twice->host_waits();
    once->step(), twice->step();
    ASSERT_TRUE(once->check_health(limits));
    ASSERT_TRUE(twice->check_health(limits));
    const std::uint64_t waits_once = once->host_waits() - w1, waits_twice = twice->host_waits() - w2;
    EXPECT_EQ(waits_once, waits_twice + 1) << "step " << s << (edit ? ", edit" : ", motion");
    ++samples;
  }
  EXPECT_EQ(samples, 100);
  ASSERT_TRUE(once->status().ok) << once->status().message;
  expect_same(capture(*once), capture(*twice), true, "checked once against twice after each change");
}

TEST_F(DeviceEngineTest, SkinsAndRebuildsNeverChangeTheResult) {
  // Skin 0 (a new list every step), a rebuild forced every step with a wide skin, the adaptive
  // default and a fixed skin: the history is carried across every rebuild and re-sort, so all
  // give the same bits.
  struct Variant {
    const char* name;
    double skin;
    int interval;
  };
  const int steps = 800;
  State reference;
  std::uint64_t builds[4] = {};
  int k = 0;
  for (const Variant& v : {Variant{"skin 0", 0, 0}, Variant{"rebuild every step", 0.004, 1},
                           Variant{"adaptive", -1, 0}, Variant{"fixed 4 mm", 0.004, 0}}) {
    std::unique_ptr<Simulation> dev = make(bin_scene(v.skin, v.interval), true);
    for (int s = 0; s < steps; ++s) dev->step();
    builds[k] = dev->stats().broad_phase_builds;
    if (k++ == 0) reference = capture(*dev);
    else expect_same(reference, capture(*dev), true, v.name);
  }
  EXPECT_EQ(builds[0], std::uint64_t(steps));  // skin 0 and interval 1: a rebuild every step
  EXPECT_EQ(builds[1], std::uint64_t(steps));
  EXPECT_LT(builds[3], std::uint64_t(steps / 4));  // the fixed skin keeps its lists for many steps
}

TEST_F(DeviceEngineTest, AListKeptPastASkinEndsWhenThatParticleMeetsANewPartner) {
  // test::chain_scene (as in the host engine's test): the runner of the chain moves past its skin
  // and the list lives on (DeviceEngine::list_holds) until the step it touches the third sphere,
  // which must end it. The device's skin-0 run is the reference, bit for bit, on the uniform grid
  // and the HGrid.
  SceneConfig c = load_scene_from_string(test::chain_scene(), "chain.yaml");
  c.simulation.skin = 0;
  std::unique_ptr<Simulation> ref = make(build_scene_inputs(c), true);
  for (int s = 0; s < 400; ++s) ref->step();
  const State want = capture(*ref);
  EXPECT_GT(want.particles.at(2)[3], 0.5) << "the third sphere was hit";
  for (BroadPhaseMethod method : {BroadPhaseMethod::Grid, BroadPhaseMethod::HGrid}) {
    SceneConfig a = c;
    a.simulation.skin = -1;
    a.broad_phase.method = method;
    std::unique_ptr<Simulation> dev = make(build_scene_inputs(a), true);
    for (int s = 0; s < 400; ++s) dev->step();
    EXPECT_GE(dev->stats().lists_kept, 100u) << dev->broad_phase_report().method;
    EXPECT_LT(dev->stats().broad_phase_builds, 20u);
    expect_same(want, capture(*dev), true, dev->broad_phase_report().method);
  }
}

TEST_F(DeviceEngineTest, AKeptMeshListEndsWhenItsParticleMeetsAnElementLeftOut) {
  // test::wall_flight_scene (as in the host engine's test): the sphere moves past its mesh skin
  // and the lists live on (DeviceEngine::mesh_lists_hold) until the step it touches the wall,
  // which must end them. The device's skin-0 run is the reference, bit for bit.
  SceneConfig c = load_scene_from_string(test::wall_flight_scene(), "wall.yaml");
  c.simulation.skin = 0;
  std::unique_ptr<Simulation> ref = make(build_scene_inputs(c), true);
  c.simulation.skin = -1;
  std::unique_ptr<Simulation> dev = make(build_scene_inputs(c), true);
  for (int s = 0; s < 1500; ++s) {
    ref->step();
    dev->step();
  }
  const State want = capture(*ref);
  EXPECT_GT(want.particles.at(0)[3], 1.0) << "the sphere bounced off the wall";
  EXPECT_GE(dev->stats().mesh_lists_kept, 500u);
  EXPECT_LT(dev->stats().mesh_list_renewals, 31u * 10);  // (each renewal makes all 31 lists)
  expect_same(want, capture(*dev), true, "adaptive skins");
}

// A wall moving onto a small sphere at rest (test::moving_wall_scene), under the driver's checks,
// whose copy brings back the next step's kept mesh lists' check on the meshes posed apart at the
// next step's time (pose_ahead). The small sphere's list is kept past its skin from the 50th
// step, checked every step, until the step the wall reaches it (about the 150th), which must end
// it there, not a step later (a check against the wall where it was a
// step before let the wall pass into the sphere unseen for a step). The device's skin-0 run is
// the reference, bit for bit.
TEST_F(DeviceEngineTest, AKeptMeshListEndsWhenAMovingWallReachesItsParticleUnderTheDriversChecks) {
  SceneConfig c = load_scene_from_string(test::moving_wall_scene(), "moving_wall.yaml");
  c.simulation.skin = 0;
  std::unique_ptr<Simulation> ref = make(build_scene_inputs(c), true);
  c.simulation.skin = -1;
  std::unique_ptr<Simulation> dev = make(build_scene_inputs(c), true), host = make(build_scene_inputs(c), false);
  const HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
  std::uint64_t kept_at_touch = 0;
  for (int s = 0; s < 400; ++s) {
    ref->step();
    dev->step();
    host->step();
    ASSERT_TRUE(dev->check_health(limits)) << dev->status().message;
    ASSERT_TRUE(host->check_health(limits)) << host->status().message;
    if (kept_at_touch == 0 && ref->mesh_contacts() > 0) kept_at_touch = dev->stats().mesh_lists_kept;
  }
  const State want = capture(*ref);
  EXPECT_GT(want.particles.at(0)[3], 1.0) << "the wall pushed the sphere";
  EXPECT_GE(kept_at_touch, 50u) << "steps that kept the lists past a skin before the wall touched";
  expect_same(want, capture(*dev), true, "adaptive skins under the driver's checks");
  expect_same(capture(*host), capture(*dev), kExactAgainstHost, "host against device", kCompareOrientation);
}

// A sphere (R = 0.3 m) pressed 5 cm into a plate of 3,200 triangles of 2.5 cm: some 300 elements
// pass the Fast Intersection Test at once, more than H2's candidate buffer (kMaxH2Candidates = 64),
// which is compacted on the way; the coplanar facets leave one valid contact.
SceneInputs fine_plate_scene() {
  const int n = 40;
  const double h = 1.0 / n;
  std::ostringstream y;
  y << "simulation: {dt: 1.0e-5, end_time: 1.0, gravity: [0, -9.81, 0]}\n"
       "materials:\n"
       "  - {name: g, density: 1000, youngs_modulus: 1.0e6, poisson_ratio: 0.3}\n"
       "  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}\n"
       "interactions:\n"
       "  - {materials: [g, g]}\n"
       "  - {materials: [g, w], friction: 0.5, restitution: 0.5}\n"
       "particles:\n"
       "  - {position: [0.013, 0.25, -0.007], velocity: [0.2, -0.1, 0.1], radius: 0.3, material: g}\n"
       "meshes:\n"
       "  - material: w\n"
       "    vertices: [";
  for (int k = 0; k <= n; ++k)
    for (int i = 0; i <= n; ++i) y << (k || i ? ", " : "") << "[" << -0.5 + i * h << ", 0, " << -0.5 + k * h << "]";
  y << "]\n    faces: [";
  for (int k = 0; k < n; ++k)
    for (int i = 0; i < n; ++i) {
      const int v0 = k * (n + 1) + i, v1 = v0 + 1, v2 = v0 + n + 2, v3 = v0 + n + 1;
      y << (k || i ? ", " : "") << "[" << v0 << ", " << v3 << ", " << v2 << "], [" << v0 << ", " << v2 << ", " << v1 << "]";
    }
  y << "]\n";
  return build_scene_inputs(load_scene_from_string(y.str(), "fine_plate.yaml"));
}

TEST_F(DeviceEngineTest, MatchesHostWhenH2CompactsItsCandidates) {
  const SceneInputs in = fine_plate_scene();
  std::unique_ptr<Simulation> host = make(in, false), dev = make(in, true);
  for (int s = 0; s < 300; ++s) {
    host->step();
    dev->step();
  }
  ASSERT_TRUE(host->status().ok) << host->status().message;
  ASSERT_TRUE(dev->status().ok) << dev->status().message;
  EXPECT_GT(host->stats().h2_compactions, 0u);  // the capacity path ran
  EXPECT_EQ(host->stats().h2_compactions, dev->stats().h2_compactions);
  EXPECT_EQ(host->stats().valid_entities, std::uint64_t(300));  // one contact per step: coplanar facets
  EXPECT_EQ(host->stats().valid_entities, dev->stats().valid_entities);
  expect_same(capture(*host), capture(*dev), kExactAgainstHost, "fine plate", kCompareOrientation);
}

// 2N steps, against N steps, an exported state, a new engine restored from it, and N more: the
// same bits, for every pair of engines (host to host, device to device, and across).
TEST_F(DeviceEngineTest, RestartFromAnExportedStateGivesTheSameBits) {
  const SceneInputs in = bin_scene();
  const int n = 1500;  // the spheres (thrown down at 0.5 m/s) have landed in the bin by then
  for (bool first_on_device : {false, true})
    for (bool second_on_device : {false, true}) {
      std::unique_ptr<Simulation> straight = make(in, second_on_device), first = make(in, first_on_device);
      for (int s = 0; s < 2 * n; ++s) straight->step();
      for (int s = 0; s < n; ++s) first->step();
      SceneInputs again = in;
      ContactState contacts;
      first->export_state(again.particles, contacts);
      // contacts with history are carried, not just positions
      ASSERT_GT(contacts.pair_a.size(), 20u);
      ASSERT_GT(std::count_if(contacts.mesh_count.begin(), contacts.mesh_count.end(), [](std::uint8_t c) { return c > 0; }), 10);
      std::unique_ptr<Simulation> second = make(again, second_on_device);
      second->restore_state(contacts, first->step_count());
      for (int s = 0; s < n; ++s) second->step();
      ASSERT_EQ(second->step_count(), straight->step_count());
      const std::string what = std::string(first_on_device ? "device" : "host") + " to " +
                               (second_on_device ? "device" : "host");
      // Across engines on CUDA, orientations differ in the last bits (sin/cos): compared elsewhere.
      const bool cross_cuda = kSystem == device::System::Cuda && first_on_device != second_on_device;
      expect_same(capture(*straight), capture(*second), kExactAgainstHost || first_on_device == second_on_device, what,
                  !cross_cuda);
    }
}

// Output times: compute_forces brings the forces, body loads and mesh pose to the current time
// (what a snapshot writes) and the next step integrates with them, so a run that stops for output
// every few steps (twice in a row at times) gives the same bits as one that never does, on every
// engine; and the forces it gives are those the next step of the plain run uses.
TEST_F(DeviceEngineTest, ForcesAtOutputTimesNeverChangeTheResult) {
  const SceneInputs in = bin_scene();
  for (bool on_device : {false, true}) {
    const std::string where = on_device ? "device" : "host";
    std::unique_ptr<Simulation> plain = make(in, on_device), probed = make(in, on_device);
    for (int s = 1; s <= 900; ++s) {
      if (s % 7 == 0) {
        probed->compute_forces();
        if (s % 2 == 0) probed->compute_forces();  // a second call before the step does nothing
        EXPECT_EQ(probed->meshes().time, probed->time()) << where << ": the mesh pose is of the current time";
        const State at_t = capture(*probed);
        plain->step();
        probed->step();
        // plain's force fields and body loads are now those its step evaluated at the time where
        // probed computed them
        const State used = capture(*plain);
        for (const auto& [id, f] : at_t.particles)
          for (int k = 9; k < 12; ++k) ASSERT_EQ(f[k], used.particles.at(id)[k]) << where << " step " << s << " id " << id;
        for (std::size_t b = 0; b < at_t.body_force.size(); ++b) {
          ASSERT_EQ(norm(at_t.body_force[b] - used.body_force[b]), 0) << where << " body " << b;
          ASSERT_EQ(norm(at_t.body_torque[b] - used.body_torque[b]), 0) << where << " body " << b;
        }
      } else {
        plain->step();
        probed->step();
      }
    }
    expect_same(capture(*plain), capture(*probed), true, where);
  }
}

// A body's motion changed during the run (as a script does between steps): no jump in its pose,
// the new speeds from then on, and a restart from a state exported right after an output (forces
// current) with the changed motions gives the same bits as the run that went on, on every pair of
// engines.
TEST_F(DeviceEngineTest, ChangedMotionAndRestartAfterAnOutputGiveTheSameBits) {
  const SceneInputs in = bin_scene();
  const int n = 800;
  const std::size_t paddle = 1;
  ASSERT_EQ(in.meshes.bodies[paddle].name, "paddle");
  const Vec3 v_new{0.02, 0, 0}, w_new{0, 0, -25};
  for (bool first_on_device : {false, true})
    for (bool second_on_device : {false, true}) {
      const std::string what = std::string(first_on_device ? "device" : "host") + " to " +
                               (second_on_device ? "device" : "host");
      std::unique_ptr<Simulation> straight = make(in, second_on_device), first = make(in, first_on_device);
      for (int s = 0; s < n; ++s) straight->step(), first->step();
      straight->compute_forces();
      first->compute_forces();
      const std::vector<Vec3> before = first->meshes().vertices;
      straight->change_body_motion(paddle, v_new, w_new);
      first->change_body_motion(paddle, v_new, w_new);
      first->compute_forces();  // no effect: the forces of this time are already evaluated
      // ParticleArrays and contacts right after the output, with the forces current
      SceneInputs again = in;
      ContactState contacts;
      first->export_state(again.particles, contacts);
      ASSERT_TRUE(contacts.forces_current) << what;
      std::unique_ptr<Simulation> second = make(again, second_on_device);
      for (std::size_t b = 0; b < first->meshes().bodies.size(); ++b)
        second->set_body_motion(b, first->meshes().bodies[b]);
      second->restore_state(contacts, first->step_count());
      // the pose at the change is the pose before it (the new motion starts from it)
      const std::vector<Vec3>& after = second->meshes().vertices;
      ASSERT_EQ(after.size(), before.size());
      for (std::size_t k = 0; k < before.size(); ++k) ASSERT_LT(norm(after[k] - before[k]), 1e-15) << what << " vertex " << k;
      const double t_change = straight->time();
      const Vec3 c_change = straight->meshes().center(static_cast<index_t>(paddle));
      for (int s = 0; s < n; ++s) straight->step(), second->step();
      straight->compute_forces();
      second->compute_forces();
      // the centre moved at the new velocity since the change
      const Vec3 moved = straight->meshes().center(static_cast<index_t>(paddle)) - c_change;
      EXPECT_LT(norm(moved - v_new * real(straight->time() - t_change)), 1e-12) << what;
      const bool cross_cuda = kSystem == device::System::Cuda && first_on_device != second_on_device;
      expect_same(capture(*straight), capture(*second), kExactAgainstHost || first_on_device == second_on_device, what,
                  !cross_cuda);
    }
}

// Motion laws that change with time: the paddle's spin ramps up by a table and it oscillates
// vertically, the bin starts moving at 5 ms and stops at 15 ms. The poses and velocities against
// their closed forms, then the run on both engines, bit for bit, through every phase.
TEST_F(DeviceEngineTest, MotionTablesOscillationsAndStartStopOnEveryEngine) {
  const SceneConfig c = load_scene_from_string(
      kBinScene, "bin.yaml",
      {"meshes.paddle.motion={center: [0, 0, 0], table: [[0, 0, 0, 0, 0, 0, 0], [0.01, 0, 0, 0, 0, 0, 20], "
       "[0.02, 0, 0, 0, 0, 0, 20]], oscillation: {amplitude: [0, 0, 0.001], frequency: 100, phase: 30}}",
       "meshes.bin.motion={velocity: [0.05, 0, 0], start: 0.005, stop: 0.015}"});
  const SceneInputs in = build_scene_inputs(c);
  MeshSet m = in.meshes;
  const index_t paddle = 1, bin = 0;
  const Vec3 tip0 = in.meshes.ref_vertices[static_cast<std::size_t>(m.bodies[paddle].first_vertex) + 1];  // (0.05, 0, 0.002)
  for (double t : {0.0, 0.003, 0.01, 0.017, 0.03}) {
    m.update(t);
    // spin 2000 t rad/s up to 10 ms, then 20: the angle 1000 t^2, then 0.1 + 20 (t - 0.01)
    const double angle = t <= 0.01 ? 1000 * t * t : 0.1 + 20 * (t - 0.01);
    const double phase = 2 * M_PI * 100 * t + M_PI / 6, lift = 0.001 * (std::sin(phase) - 0.5);
    const Vec3 tip = m.vertices[static_cast<std::size_t>(m.bodies[paddle].first_vertex) + 1];
    EXPECT_NEAR(tip.x, 0.05 * std::cos(angle), 1e-12) << t;
    EXPECT_NEAR(tip.y, 0.05 * std::sin(angle), 1e-12) << t;
    EXPECT_NEAR(tip.z, tip0.z + lift, 1e-12) << t;
    const BodyKinematics k = m.kinematics(paddle);
    EXPECT_NEAR(k.w.z, t <= 0.01 ? 2000 * t : 20, 1e-9) << t;
    EXPECT_NEAR(k.v.z, 0.001 * 2 * M_PI * 100 * std::cos(phase), 1e-9) << t;
    // the bin: at rest in its reference pose before 5 ms, 0.05 m/s until 15 ms, at rest after
    const double moved = 0.05 * (std::min(std::max(t, 0.005), 0.015) - 0.005);
    EXPECT_NEAR(m.center(bin).x, moved, 1e-15) << t;
    EXPECT_EQ(m.kinematics(bin).v.x, t >= 0.005 && t < 0.015 ? real(0.05) : real(0)) << t;
  }
  compare_run(in, 1000, 200, "motion laws");
}

// Particles removed and added between steps, in place (Simulation::edit_particles): the same bits
// as the export / edit / new engine / restore path, on every engine, and the device engine the same
// bits as the host. Then every particle removed: an empty run steps on.
TEST_F(DeviceEngineTest, ParticlesRemovedAndAddedInPlaceOnEveryEngine) {
  const SceneInputs in = bin_scene();
  const int n = 600;
  std::unique_ptr<Simulation> host_edited;
  for (bool on_device : {false, true}) {
    const std::string where = on_device ? "device" : "host";
    std::unique_ptr<Simulation> edited = make(in, on_device), rebuilt = make(in, false);
    for (int s = 0; s < n; ++s) edited->step(), rebuilt->step();
    std::vector<std::int64_t> remove;
    for (std::int64_t id : edited->particles().id)
      if (id % 7 == 3) remove.push_back(id);
    remove.push_back(123456);  // unknown: ignored
    ParticleArrays more;
    for (int k = 0; k < 20; ++k)
      more.push_back(1000 + k, Vec3{real(-0.04 + 0.02 * (k % 5)), real(-0.03 + 0.02 * (k / 5)), real(0.085)},
                     Vec3{0, 0, real(-0.3)}, Vec3{0, 0, 0}, real(0.004), real(2500), 0, false);
    const std::size_t before = edited->particles().size();
    EXPECT_EQ(edited->edit_particles(remove, more), remove.size() - 1) << where;
    EXPECT_EQ(edited->particles().size(), before - (remove.size() - 1) + 20) << where;
    {  // the reference path: exported state edited, a new engine restored from it
      ParticleArrays p;
      ContactState c;
      rebuilt->export_state(p, c);
      std::vector<std::uint8_t> keep(p.size());
      for (std::size_t i = 0; i < p.size(); ++i) keep[i] = p.id[i] % 7 != 3;
      keep_particles(p, c, keep);
      append_particles(p, c, more);
      SceneInputs again = in;
      again.particles = p;
      const std::uint64_t step = rebuilt->step_count();
      rebuilt = make(again, false);
      rebuilt->restore_state(c, step);
    }
    for (int s = 0; s < n; ++s) edited->step(), rebuilt->step();
    ASSERT_TRUE(edited->status().ok) << edited->status().message;
    expect_same(capture(*rebuilt), capture(*edited), kExactAgainstHost || !on_device, where + " in place vs rebuilt",
                kCompareOrientation || !on_device);
    if (!on_device) {
      host_edited = std::move(edited);
      continue;
    }
    expect_same(capture(*host_edited), capture(*edited), kExactAgainstHost, "host vs device, edited", kCompareOrientation);
    // everything goes: the runs step on empty
    for (Simulation* e : {host_edited.get(), edited.get()}) {
      const std::vector<std::int64_t> all(e->particles().id);
      EXPECT_EQ(e->edit_particles(all, ParticleArrays{}), all.size()) << e->engine_name();
      for (int s = 0; s < 10; ++s) e->step();
      EXPECT_EQ(e->particles().size(), 0u) << e->engine_name();
      EXPECT_TRUE(e->status().ok) << e->engine_name();
    }
  }
}

TEST_F(DeviceEngineTest, FullMeshContactListStopsTheRunWithAMessage) {
  // A sphere of radius 1 inside a 12-sided prism of inradius 0.9: 12 valid facet contacts, more
  // than the capacity kMaxMeshContacts = 8 (as in the host engine's test).
  const std::string scene = test::kCageScene;
  std::unique_ptr<Simulation> dev = make(build_scene_inputs(load_scene_from_string(scene, "cage.yaml")), true);
  dev->step();
  ASSERT_FALSE(dev->status().ok);
  const std::string& msg = dev->status().message;
  EXPECT_NE(msg.find("particle 0 has 12 valid mesh contacts at step 0 "), std::string::npos) << msg;
  EXPECT_NE(msg.find("kMaxMeshContacts = 8"), std::string::npos) << msg;
  // The pass's counts wait on the device until something asks (status here, or the next step's
  // skin tests): a second step taken without asking learns of it, and names the step it happened
  // in, as the host engine does.
  std::unique_ptr<Simulation> again = make(build_scene_inputs(load_scene_from_string(scene, "cage.yaml")), true);
  again->step();
  again->step();
  ASSERT_FALSE(again->status().ok);
  EXPECT_EQ(again->status().message, msg);
}

TEST_F(DeviceEngineTest, AFullMeshContactListIsNotLostToAnEscapeInTheSameStep) {
  // The cage's sphere has more mesh contacts than its block holds; a second sphere lies outside
  // the health checks' domain. On every engine the first error stands: the escape, which the
  // driver's on_escape: remove would clear by removing the sphere, does not replace it.
  std::string scene = test::kCageScene;
  const std::string first = "  - {position: [0, 0, 0], radius: 1.0, material: g}\n";
  ASSERT_NE(scene.find(first), std::string::npos);
  scene.insert(scene.find(first) + first.size(), "  - {position: [5, 0, 0], radius: 0.5, material: g}\n");
  const SceneInputs in = build_scene_inputs(load_scene_from_string(scene, "cage.yaml"));
  const HealthLimits limits{1e3, Vec3{-2, -2, -2}, Vec3{2, 2, 2}, 0.5};
  for (const bool on_device : {false, true}) {
    std::unique_ptr<Simulation> sim = make(in, on_device);
    sim->compute_forces();
    EXPECT_FALSE(sim->check_health(limits)) << sim->engine_name();
    EXPECT_NE(sim->status().message.find("particle 0 has 12 valid mesh contacts"), std::string::npos)
        << sim->engine_name() << ": " << sim->status().message;
    EXPECT_NE(sim->status().problem, kEscaped) << sim->engine_name();
  }
  // Without the overflow (the sphere alone) the escape is found.
  std::string alone = scene;
  alone.erase(alone.find(first), first.size());
  std::unique_ptr<Simulation> sim = make(build_scene_inputs(load_scene_from_string(alone, "cage.yaml")), true);
  sim->compute_forces();
  EXPECT_FALSE(sim->check_health(limits));
  EXPECT_EQ(sim->status().problem, kEscaped) << sim->status().message;
}

// The phase times (on CUDA from events around each phase's kernels, read when asked for): every
// phase that runs has a time, and together they fit within the wall time of the steps (a time
// added twice, or to another phase's sum, would exceed it; one never read would stay zero).
TEST_F(DeviceEngineTest, PhaseTimesAreEachPhasesOwnAndFitTheWallTime) {
  std::unique_ptr<Simulation> dev = make(bin_scene(), true);
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < 400; ++s) dev->step();
  const PhaseTimes t = dev->phase_times();  // (waits for the device's last phases)
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(dev->status().ok) << dev->status().message;
  ASSERT_GT(dev->stats().pair_contacts, 0u);
  ASSERT_GT(dev->stats().valid_entities, 0u);  // spheres touch each other and the walls
  for (const auto& [name, v] : {std::pair<const char*, double>{"broad phase", t.broad_phase}, {"pairs", t.pair_contacts},
                                {"mesh bins", t.mesh_bins}, {"mesh contacts", t.mesh_contacts},
                                {"gather", t.gather}, {"mesh motion", t.mesh_motion}})
    EXPECT_GT(v, 0) << name;
  EXPECT_LE(t.total(), wall) << "the phases' times add up to more than the steps took";
  const PhaseTimes again = dev->phase_times();  // nothing pending is added twice
  EXPECT_EQ(again.total(), t.total());
}

TEST_F(DeviceEngineTest, ReportsEngineAndDeviceThroughTheCli) {
  const std::filesystem::path out = std::filesystem::temp_directory_path() / ("dem_device_cli_" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  RunOptions opt;
  opt.scene = scenes_dir() + "/validation/drop_facet.yaml";
  opt.out_dir = out.string();
  opt.device = kSystem == device::System::Cuda ? "gpu" : "omp";
  opt.quiet = true;
  opt.overrides = {"simulation.end_time=0.01"};
  ASSERT_EQ(run_scene(opt), 0);
  std::ifstream f(out / "summary.json");
  std::stringstream text;
  text << f.rdbuf();
  const std::string expected = std::string("\"backend\": \"device-") + device::system_name(kSystem) + "\"";
  EXPECT_NE(text.str().find(expected), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"state_bytes_per_particle\""), std::string::npos) << text.str();
  // Under dem run a step waits once, for its health check, whose copy also brings back the next
  // step's skin tests (a sphere dropped on a facet: one rebuild in 1,000 steps), and for each
  // output: 10 probes here, each reading the particles, forces and diagnostics (measured 1.232 a
  // step; 2.232 while the skin tests waited on their own).
  const std::string key = "\"host_waits_per_step\": ";
  const std::size_t at = text.str().find(key);
  ASSERT_NE(at, std::string::npos) << text.str();
  const double waits = std::stod(text.str().substr(at + key.size()));
  EXPECT_GE(waits, 1.0) << text.str();
  EXPECT_LE(waits, 1.5) << text.str();
  std::filesystem::remove_all(out);
}


// ---- Contact models as choices

// The bin with every interaction given another law: each combination runs the same bits on both
// engines (the laws live once, in core/).
TEST_F(DeviceEngineTest, EveryContactModelMatchesHost) {
  const std::vector<std::vector<std::string>> variants = {
      {"interactions.grain-grain.normal=linear", "interactions.grain-grain.stiffness=2e4",
       "interactions.grain-steel.normal=linear", "interactions.grain-steel.stiffness=4e4",
       "interactions.grain-steel.tangential_stiffness=1e4"},
      {"interactions.grain-grain.rolling=epsd", "interactions.grain-steel.rolling=epsd",
       "interactions.grain-steel.rolling_damping=0.5"},
      {"interactions.grain-grain.cohesion=sjkr", "interactions.grain-grain.cohesion_energy_density=2e4",
       "interactions.grain-steel.tangential=linear", "interactions.grain-steel.tangential_stiffness=5e3"},
      {"interactions.grain-grain.tangential=mindlin_deresiewicz", "interactions.grain-steel.tangential=mindlin_deresiewicz"},
      {"interactions.grain-grain.restitution=0", "interactions.grain-steel.restitution=0",
       "interactions.grain-steel.normal=linear", "interactions.grain-steel.stiffness=4e4"},
  };
  for (const std::vector<std::string>& set : variants) {
    const SceneConfig c = load_scene_from_string(kBinScene, "bin.yaml", set);
    compare_run(build_scene_inputs(c), 800, 400, set.front());
  }
}

// The pair histories' second array (SplitHistory) only where a law uses it: the bin under the
// default law against the same bin with EPSD's rolling spring (which uses it). The list holds each
// pair from both sides, 24 bytes of second history per entry, and the previous build's list as
// much again for its touching entries: the default law's device state is at least 24 bytes per
// entry of the present list smaller (0.8 of it: the trajectories, so the lists' lengths, differ).
TEST_F(DeviceEngineTest, PairHistoriesKeepTheSecondArrayOnlyWhereALawUsesIt) {
  const int steps = 1500, last = 100;
  std::unique_ptr<Simulation> plain = make(bin_scene(), true);
  std::unique_ptr<Simulation> epsd = make(
      build_scene_inputs(load_scene_from_string(
          kBinScene, "bin.yaml", {"interactions.grain-grain.rolling=epsd", "interactions.grain-steel.rolling=epsd"})),
      true);
  for (int s = 0; s < steps - last; ++s) plain->step(), epsd->step();
  const std::uint64_t before = plain->stats().pair_candidates;
  for (int s = 0; s < last; ++s) plain->step(), epsd->step();
  ASSERT_TRUE(plain->status().ok && epsd->status().ok);
  const double n = static_cast<double>(plain->num_particles());
  const double entries = 2 * static_cast<double>(plain->stats().pair_candidates - before) / (last * n);  // per particle
  ASSERT_GT(entries, 0.5);  // (the spheres have fallen into a heap)
  EXPECT_LT(plain->bytes_per_particle(), epsd->bytes_per_particle() - 0.8 * 24 * entries)
      << entries << " list entries per particle; " << plain->bytes_per_particle() << " against " << epsd->bytes_per_particle();
}

// Two grains whose pairs share the host's vector lanes, each lane with its own law's parameters
// (is_default_law: grain-grain, grain-glass, glass-steel...), beside glass-glass pairs of a law the
// lanes do not take (cohesion: one pair at a time, in the same chunks): the same bits as the
// device engine, which takes every pair one at a time.
TEST_F(DeviceEngineTest, MixedLawsInTheHostsVectorLanesMatchDevice) {
  const std::string scene = R"(
name: mixed
simulation: {dt: 2.0e-5, end_time: 0.02, gravity: [0, 0, -9.81]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: glass, density: 2200, youngs_modulus: 3.0e7, poisson_ratio: 0.22}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
  - {materials: [grain, glass], friction: 0.3, restitution: 0.7, rolling_friction: 0.02}
  - {materials: [glass, glass], friction: 0.6, restitution: 0.4, cohesion: sjkr, cohesion_energy_density: 2e4}
  - {materials: [grain, steel], friction: 0.4, restitution: 0.6, rolling_friction: 0.01}
  - {materials: [glass, steel], friction: 0.2, restitution: 0.3, rolling_friction: 0.005}
fills:
  - {shape: box, pattern: random, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.06], count: 200,
     radius: {distribution: uniform, min: 0.003, max: 0.005}, material: grain, velocity: [0, 0, -0.5], seed: 4}
  - {shape: box, pattern: random, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.06], count: 200,
     radius: {distribution: uniform, min: 0.002, max: 0.004}, material: glass, velocity: [0, 0, -0.5], seed: 7}
)";
  // the bin and its paddle, as in kBinScene
  const std::string bin = kBinScene;
  const SceneInputs in =
      build_scene_inputs(load_scene_from_string(scene + bin.substr(bin.find("meshes:")), "mixed.yaml"));
  compare_run(in, 5000, 1000, "mixed laws");
  // the run must have had contacts of every kind for the comparison to mean anything
  std::unique_ptr<Simulation> host = make(in, false);
  for (int s = 0; s < 5000; ++s) host->step();
  EXPECT_GT(host->stats().pair_contacts, 200000u) << "too few sphere contacts to test the lanes";
}

// One sphere on a floor, gravity tilted by alpha; mu = 0.5 holds sliding (tan alpha < mu).
SceneInputs sphere_on_slope(double alpha, const std::string& rolling, double mu_r, double dt, double v0 = 0) {
  const double g = 9.81, r = 0.005;
  std::ostringstream s;
  s.precision(17);
  s << "simulation: {dt: " << dt << ", end_time: 1, gravity: [" << g * std::sin(alpha) << ", 0, " << -g * std::cos(alpha)
    << "]}\n"
    << "materials:\n  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}\n"
    << "  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}\n"
    << "interactions:\n  - {materials: [grain, grain]}\n"
    << "  - {materials: [grain, steel], friction: 0.5, restitution: 0.5, rolling_friction: " << mu_r
    << ", rolling: " << rolling << "}\n"
    << "particles:\n  - {position: [0, 0, " << r * (1 - 2e-4) << "], radius: " << r << ", velocity: [" << v0
    << ", 0, 0], angular_velocity: [0, " << v0 / r << ", 0], material: grain}\n"
    << "meshes:\n  - {material: steel, vertices: [[-1,-0.1,0],[1,-0.1,0],[1,0.1,0],[-1,0.1,0]], faces: [[0,1,2,3]]}\n";
  return build_scene_inputs(load_scene_from_string(s.str(), "slope.yaml"));
}

TEST_F(DeviceEngineTest, EpsdHoldsASphereOnASlopeTheConstantTorqueLetsCreep) {
  // tan alpha = 0.1 below mu_r = 0.2: the rolling resistance can hold the sphere. With EPSD the
  // spring takes the steady load and the dashpot the rocking: after 0.4 s the sphere is at rest to
  // 1e-9 m/s, at two time steps, on both engines. The constant torque resists only while the sphere
  // turns, so it creeps on at a steady speed of order g sin(alpha) dt.
  const double alpha = std::atan(0.1);
  for (bool on_device : {false, true})
    for (double dt : {1e-5, 4e-5}) {
      std::unique_ptr<Simulation> epsd = make(sphere_on_slope(alpha, "epsd", 0.2, dt), on_device);
      std::unique_ptr<Simulation> constant = make(sphere_on_slope(alpha, "constant_torque", 0.2, dt), on_device);
      const int steps = static_cast<int>(0.4 / dt);
      for (int s = 0; s < steps; ++s) {
        epsd->step();
        constant->step();
      }
      const std::string what = std::string(on_device ? "device" : "host") + ", dt " + std::to_string(dt);
      EXPECT_LT(norm(epsd->particles().v[0]), 1e-9) << what;
      EXPECT_LT(std::abs(epsd->particles().x[0].x), 1e-4) << what;  // settled where it was put
      EXPECT_GT(constant->particles().v[0].x, 0.1 * 9.81 * std::sin(alpha) * dt) << what;
    }
}

TEST_F(DeviceEngineTest, PerfectlyPlasticColumnComesToRestAndStays) {
  // Restitution 0: five spheres dropped in a column onto a floor (1 mm gaps, so they arrive one on
  // another) end without a bounce and come to rest, on both engines: after 0.3 s every sphere is
  // still to 1e-9 m/s, the floor carries the column's weight to 1e-9, and over the next 0.1 s no
  // sphere moves by more than 1e-14 m (locked contacts hold by position: no creep, no chatter).
  const double r = 0.005, g = 9.81;
  std::ostringstream s;
  s.precision(17);
  s << "simulation: {dt: 2.0e-5, end_time: 1, gravity: [0, 0, " << -g << "]}\n"
    << "materials:\n  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}\n"
    << "  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}\n"
    << "interactions:\n  - {materials: [grain, grain], friction: 0.5, restitution: 0}\n"
    << "  - {materials: [grain, steel], friction: 0.5, restitution: 0}\n"
    << "particles:\n";
  for (int k = 0; k < 5; ++k) s << "  - {position: [0, 0, " << r + 1e-3 + k * (2 * r + 1e-3) << "], radius: " << r << ", material: grain}\n";
  s << "meshes:\n  - {material: steel, vertices: [[-0.1,-0.1,0],[0.1,-0.1,0],[0.1,0.1,0],[-0.1,0.1,0]], faces: [[0,1,2,3]]}\n";
  const SceneInputs in = build_scene_inputs(load_scene_from_string(s.str(), "column.yaml"));
  const double weight = 5 * g / in.particles.inv_mass[0];
  for (bool on_device : {false, true}) {
    std::unique_ptr<Simulation> sim = make(in, on_device);
    const char* what = on_device ? "device" : "host";
    for (int k = 0; k < 15000; ++k) sim->step();
    const std::vector<Vec3> x = sim->particles().x;
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LT(norm(sim->particles().v[i]), 1e-9) << what << " sphere " << i;
    EXPECT_NEAR(std::abs(sim->body_force()[0].z), weight, 1e-9 * weight) << what;
    for (int k = 0; k < 5000; ++k) sim->step();
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LT(norm(sim->particles().x[i] - x[i]), 1e-14) << what << " sphere " << i;
  }
}

TEST_F(DeviceEngineTest, RollingDecelerationMatchesTheAnalyticRate) {
  // A sphere rolling without slip on a flat floor at 1 m/s against the rolling torque
  // M = mu_r R F_n = mu_r R m g: about the contact point (I + m R^2) dw/dt = -M, so it slows at
  // a = (5/7) mu_r g (I = 2/5 m R^2), with either model (EPSD's spring is at its cap while it
  // rolls). After 0.3 s: v = 1 - 0.3 (5/7) mu_r g. Within 1 %: the static overlap moves the contact
  // point by delta/R ~ 5e-4, and the first milliseconds of the contact settle.
  const double mu_r = 0.1, t = 0.3, dt = 2e-5;
  const double expected = 1.0 - t * 5.0 / 7.0 * mu_r * 9.81;
  for (bool on_device : {false, true})
    for (const char* model : {"constant_torque", "epsd"}) {
      std::unique_ptr<Simulation> sim = make(sphere_on_slope(0, model, mu_r, dt, 1.0), on_device);
      for (int s = 0; s < static_cast<int>(t / dt + 0.5); ++s) sim->step();
      const ParticleArrays& p = sim->particles();
      EXPECT_NEAR(p.v[0].x, expected, 0.01 * (1.0 - expected)) << model << (on_device ? " device" : " host");
      EXPECT_NEAR(p.w[0].y * 0.005, p.v[0].x, 1e-3) << model << ": rolling, not sliding";
    }
}

// ---- Periodic boundaries

// A small periodic chute: x and y repeat, a base of two quads spans the period, gravity tilted
// down the slope, 200 spheres poured with a lateral velocity so that many cross the faces (and
// touch across them) while they slide and roll over the base.
const char* kPeriodicChute = R"(
name: chute
simulation: {dt: 2.0e-5, end_time: 0.1, gravity: [3.0, 0.5, -9.3]}
domain: {min: [0, 0, -0.02], max: [0.04, 0.03, 0.2], periodic: [x, y]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
  - {materials: [grain, steel], friction: 0.4, restitution: 0.6, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0.001], max: [0.04, 0.03, 0.05], count: 200,
     radius: {distribution: uniform, min: 0.002, max: 0.003}, material: grain, velocity: [0.5, 0.2, -0.3], seed: 9}
meshes:
  - name: base
    material: steel
    vertices: [[0,0,0],[0.02,0,0],[0.04,0,0],[0.04,0.03,0],[0.02,0.03,0],[0,0.03,0]]
    faces: [[0,1,4,5],[1,2,3,4]]
)";

SceneInputs chute_scene(double skin = -1) {
  SceneConfig c = load_scene_from_string(kPeriodicChute, "chute.yaml");
  c.simulation.skin = skin;
  return build_scene_inputs(c);
}

// Wraps seen over a run: a coordinate that jumped by more than half a period in one step.
std::size_t count_wraps(const std::map<std::int64_t, Vec3>& before, const Simulation& s, const PeriodicBox& b) {
  std::size_t wraps = 0;
  const ParticleArrays& p = s.particles();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3 d = p.x[i] - before.at(p.id[i]);
    wraps += (b.length.x > 0 && std::abs(d.x) > b.half.x) + (b.length.y > 0 && std::abs(d.y) > b.half.y) +
             (b.length.z > 0 && std::abs(d.z) > b.half.z);
  }
  return wraps;
}
std::map<std::int64_t, Vec3> positions_by_id(const Simulation& s) {
  std::map<std::int64_t, Vec3> out;
  for (std::size_t i = 0; i < s.particles().size(); ++i) out[s.particles().id[i]] = s.particles().x[i];
  return out;
}

TEST_F(DeviceEngineTest, PeriodicChuteMatchesHost) {
  const SceneInputs in = chute_scene();
  // Particles cross the faces during the compared window (counted on the host engine).
  std::unique_ptr<Simulation> h = make(in, false);
  std::size_t wraps = 0;
  for (int s = 0; s < 3000; ++s) {
    const std::map<std::int64_t, Vec3> before = positions_by_id(*h);
    h->step();
    wraps += count_wraps(before, *h, in.settings.periodic);
  }
  EXPECT_GT(wraps, 40u);
  compare_run(in, 3000, 500, "periodic chute");
}

TEST_F(DeviceEngineTest, PeriodicSkinsAndRestartsNeverChangeTheResult) {
  // Positions are wrapped as they cross (not at rebuilds), so skin 0, a fixed skin and the
  // adaptive one give the same bits, on each engine; a restart from an exported state too.
  const int steps = 2500;
  for (bool on_device : {false, true}) {
    State reference;
    int k = 0;
    for (double skin : {0.0, -1.0, 0.003}) {
      std::unique_ptr<Simulation> sim = make(chute_scene(skin), on_device);
      for (int s = 0; s < steps; ++s) sim->step();
      if (k++ == 0) reference = capture(*sim);
      else expect_same(reference, capture(*sim), true, std::string(on_device ? "device" : "host") + " skin " + std::to_string(skin));
    }
    const SceneInputs in = chute_scene();
    std::unique_ptr<Simulation> first = make(in, on_device);
    for (int s = 0; s < steps / 2; ++s) first->step();
    SceneInputs again = in;
    ContactState contacts;
    first->export_state(again.particles, contacts);
    std::unique_ptr<Simulation> second = make(again, on_device);
    second->restore_state(contacts, first->step_count());
    for (int s = 0; s < steps - steps / 2; ++s) second->step();
    expect_same(reference, capture(*second), true, std::string(on_device ? "device" : "host") + " restarted");
  }
}

TEST_F(DeviceEngineTest, PeriodicAxesWhereNothingCrossesGiveTheSameBits) {
  // The bin's walls keep every sphere well inside a periodic box larger than the bin: nothing
  // crosses, nothing touches across a face, so the run has the bits of the same run without
  // periodic axes (the grid differs; results never depend on the particle order).
  for (bool on_device : {false, true}) {
    State runs[2];
    for (int periodic = 0; periodic < 2; ++periodic) {
      SceneConfig c = load_scene_from_string(kBinScene, "bin.yaml");
      c.domain.given = true;
      c.domain.min = {-0.1, -0.1, -0.05};
      c.domain.max = {0.1, 0.1, 0.3};
      c.domain.periodic[0] = c.domain.periodic[1] = c.domain.periodic[2] = periodic != 0;
      std::unique_ptr<Simulation> sim = make(build_scene_inputs(c), on_device);
      for (int s = 0; s < 1500; ++s) sim->step();
      runs[periodic] = capture(*sim);
    }
    expect_same(runs[0], runs[1], true, on_device ? "device" : "host");
  }
}

TEST_F(DeviceEngineTest, MomentumIsConservedAcrossPeriodicFaces) {
  // A box periodic on all three axes, no walls, no gravity: 400 spheres with random velocities
  // collide, many across the faces. Every pair force acts on both spheres with opposite signs, so
  // the total momentum stays what it was up to round-off: about 1e-16 of sum |m v| per step, so
  // < 1e-12 over 2000 steps; a contact seen from one side only would change it at the 1e-3 level.
  const char* scene = R"(
simulation: {dt: 2.0e-5, end_time: 0.1, gravity: [0, 0, 0]}
domain: {min: [0, 0, 0], max: [0.05, 0.05, 0.05], periodic: [x, y, z]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.8, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [0.05, 0.05, 0.05], count: 400,
     radius: {distribution: uniform, min: 0.002, max: 0.003}, material: grain, seed: 5}
)";
  SceneInputs in = build_scene_inputs(load_scene_from_string(scene, "box.yaml"));
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (Vec3& v : in.particles.v) v = Vec3{u(rng), u(rng), u(rng)};
  State final_state[2];
  for (bool on_device : {false, true}) {
    std::unique_ptr<Simulation> sim = make(in, on_device);
    auto momentum = [&](double& scale) {
      const ParticleArrays& p = sim->particles();
      Vec3 total{0, 0, 0};
      scale = 0;
      for (std::size_t i = 0; i < p.size(); ++i) {
        total += (1 / p.inv_mass[i]) * p.v[i];
        scale += norm(p.v[i]) / p.inv_mass[i];
      }
      return total;
    };
    double scale = 0;
    const Vec3 p0 = momentum(scale);
    std::size_t wraps = 0, across = 0;
    for (int s = 0; s < 2000; ++s) {
      const std::map<std::int64_t, Vec3> before = positions_by_id(*sim);
      sim->step();
      wraps += count_wraps(before, *sim, in.settings.periodic);
      if (s % 100 == 0) {  // touching pairs whose contact runs through a face
        const ParticleArrays& p = sim->particles();
        for (std::size_t i = 0; i < p.size(); ++i)
          for (std::size_t j = i + 1; j < p.size(); ++j)
            across += norm(p.x[i] - p.x[j]) > 0.025 &&
                      norm(nearest_image(in.settings.periodic, p.x[i] - p.x[j])) < p.radius[i] + p.radius[j];
      }
      ASSERT_TRUE(sim->status().ok) << sim->status().message;
    }
    const Vec3 p1 = momentum(scale);
    EXPECT_LT(norm(p1 - p0), 1e-12 * scale) << (on_device ? "device" : "host");
    EXPECT_GT(wraps, 100u);
    EXPECT_GT(across, 5u);
    EXPECT_GT(sim->stats().pair_contacts, 1000u);
    final_state[on_device] = capture(*sim);
  }
  expect_same(final_state[0], final_state[1], kExactAgainstHost, "host against device", kCompareOrientation);
}

TEST_F(DeviceEngineTest, SphereRollsAcrossPeriodicFacesAsOnALongPlate) {
  // One sphere thrown along a plate that is periodic in x (two quads span the period, so a crossing
  // lands on the other element, found only by the search across the face) against the
  // same sphere on a plate 0.6 m long: it slides, then rolls, crossing the faces. Its
  // height, velocity and spin are the same (the facet contact does not depend on x), its x the
  // same modulo the period (it crosses three times); and a crossing does not renew the mesh candidate lists (the search
  // already looked across the face).
  auto scene = [](bool periodic) {
    std::string s = R"(
simulation: {dt: 2.0e-5, end_time: 0.1, gravity: [0, 0, -9.81]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5}
  - {materials: [grain, steel], friction: 0.3, restitution: 0.5, rolling_friction: 0.002}
particles:
  - {position: [0.01, 0, 0.004999], radius: 0.005, velocity: [2.0, 0, 0], material: grain}
)";
    s += periodic ? R"(domain: {min: [0, -0.05, -0.05], max: [0.05, 0.05, 0.1], periodic: [x]}
meshes:
  - {material: steel, vertices: [[0,-0.02,0],[0.025,-0.02,0],[0.05,-0.02,0],[0.05,0.02,0],[0.025,0.02,0],[0,0.02,0]],
     faces: [[0,1,4,5],[1,2,3,4]]}
)"
                  : R"(meshes:
  - {material: steel, vertices: [[-0.1,-0.02,0],[0.5,-0.02,0],[0.5,0.02,0],[-0.1,0.02,0]], faces: [[0,1,2,3]]}
)";
    return build_scene_inputs(load_scene_from_string(s, "roll.yaml"));
  };
  for (bool on_device : {false, true}) {
    std::unique_ptr<Simulation> flat = make(scene(false), on_device), wrapped = make(scene(true), on_device);
    const double period = 0.05;
    int crossings = 0;
    for (int s = 0; s < 5000; ++s) {
      const double x_before = wrapped->particles().x[0].x;
      flat->step();
      wrapped->step();
      crossings += std::abs(wrapped->particles().x[0].x - x_before) > 0.5 * period;
      ASSERT_TRUE(wrapped->status().ok) << wrapped->status().message;
    }
    const ParticleArrays &a = flat->particles(), &b = wrapped->particles();
    EXPECT_EQ(crossings, static_cast<int>(std::floor(a.x[0].x / period)));  // from x = 0.01 in the first period
    EXPECT_GE(crossings, 3);
    const double x = a.x[0].x - period * std::floor(a.x[0].x / period);
    EXPECT_NEAR(b.x[0].x, x, 1e-12);
    EXPECT_NEAR(b.x[0].z, a.x[0].z, 1e-15);
    EXPECT_NEAR(b.v[0].x, a.v[0].x, 1e-12);
    EXPECT_NEAR(b.w[0].y, a.w[0].y, 1e-9);
    EXPECT_GT(a.w[0].y, 100.0);  // rolling by then (v / r ~ 1.4 / 0.005)
    EXPECT_EQ(wrapped->mesh_contacts(), 1u);
    EXPECT_LE(wrapped->stats().mesh_list_renewals, flat->stats().mesh_list_renewals);
  }
}

// ---- Broad phases

// A bin of 2,500 spheres of 1 to 10 mm (equal volume per size class: mostly fines, a few
// boulders) poured onto its floor: the uniform grid, the HGrid with its chosen levels and with
// given cell sizes find the same candidate pairs, so every run gives the same bits, on both
// engines; and the periodic chute likewise.
const char* kPolyBin = R"(
simulation: {dt: 1.0e-5, end_time: 0.1, gravity: [0, 0, -9.81]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
  - {materials: [grain, steel], friction: 0.4, restitution: 0.6, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.1], count: 2500, seed: 3,
     radius: {distribution: discrete, values: [0.001, 0.0025, 0.005, 0.01], weights: [1000, 64, 8, 1]},
     material: grain, velocity: [0, 0, -0.3]}
meshes:
  - name: bin
    material: steel
    vertices: [[-0.06,-0.06,0],[0.06,-0.06,0],[0.06,0.06,0],[-0.06,0.06,0],
               [-0.06,-0.06,0.12],[0.06,-0.06,0.12],[0.06,0.06,0.12],[-0.06,0.06,0.12]]
    faces: [[0,1,2,3],[0,4,5,1],[1,5,6,2],[2,6,7,3],[3,7,4,0]]
)";

TEST_F(DeviceEngineTest, EveryBroadPhaseGivesTheSameBits) {
  struct Case {
    const char* scene;
    const char* name;
    int steps;
  };
  for (const Case& c : {Case{kPolyBin, "polydisperse bin", 600}, Case{kPeriodicChute, "periodic chute", 1500}}) {
    State reference;
    bool first = true;
    for (const std::vector<std::string>& set :
         {std::vector<std::string>{"broad_phase={method: grid}"}, {"broad_phase={method: hgrid}"},
          {"broad_phase={method: hgrid, cell_sizes: [0.0025, 0.006, 0.03]}"}, {"broad_phase={method: auto}"},
          {"broad_phase={method: bsp}"}}) {
      const SceneInputs in = build_scene_inputs(load_scene_from_string(c.scene, "s.yaml", set));
      for (bool on_device : {false, true}) {
        if (on_device && set[0].find("bsp") != std::string::npos) {  // the host engine's alone: refused by name
          try {
            make(in, true);
            ADD_FAILURE() << "the device engine accepted bsp";
          } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("host engine only"), std::string::npos) << e.what();
          }
          continue;
        }
        std::unique_ptr<Simulation> sim = make(in, on_device);
        for (int s = 0; s < c.steps; ++s) sim->step();
        ASSERT_TRUE(sim->status().ok) << sim->status().message;
        const std::string what = std::string(c.name) + ", " + set[0] + (on_device ? ", device" : ", host");
        if (set[0].find("hgrid") != std::string::npos) {
          EXPECT_EQ(sim->broad_phase_report().method, "hgrid") << what;
        }
        if (first) {
          reference = capture(*sim);
          first = false;
        } else {
          expect_same(reference, capture(*sim), kExactAgainstHost || !on_device, what, kCompareOrientation || !on_device);
        }
      }
    }
  }
  // auto keeps the uniform grid for these (omega 10 and 1.5: measured faster there)
  EXPECT_EQ(make(build_scene_inputs(load_scene_from_string(kPolyBin, "s.yaml")), false)->broad_phase_report().method, "grid");
  EXPECT_EQ(make(chute_scene(), false)->broad_phase_report().method, "grid");
}

TEST(ContactModelScene, CohesionStrongerThanTheLinearSpringIsRefused) {
  // The bin's spheres are up to 5 mm: 2 pi k_c R* = 2 pi 1e5 0.005 = 3142 N/m against k_n = 2e3.
  try {
    build_scene_inputs(load_scene_from_string(kBinScene, "bin.yaml",
                                              {"interactions.grain-grain.normal=linear", "interactions.grain-grain.stiffness=2e3",
                                               "interactions.grain-grain.cohesion=sjkr",
                                               "interactions.grain-grain.cohesion_energy_density=1e5"}));
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("touching spheres would pull into each other"), std::string::npos) << e.what();
  }
  // a stiffness of 1e4 N/m holds it
  EXPECT_NO_THROW(build_scene_inputs(load_scene_from_string(
      kBinScene, "bin.yaml",
      {"interactions.grain-grain.normal=linear", "interactions.grain-grain.stiffness=1e4", "interactions.grain-grain.cohesion=sjkr",
       "interactions.grain-grain.cohesion_energy_density=1e5"})));
}

TEST(PeriodicScene, FillsDoNotOverlapAcrossFacesAndNarrowPeriodsAreRefused) {
  const std::string base = R"(
simulation: {dt: 1.0e-5, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [grain, grain]}
fills:
  - {shape: box, pattern: random, min: [-0.01, -0.01, 0], max: [0.06, 0.06, 0.04], count: 300,
     radius: {distribution: uniform, min: 0.002, max: 0.003}, material: grain, seed: 2}
)";
  // The fill box reaches past the periodic faces: every sphere is placed in the box, none overlaps
  // another through a face.
  const SceneInputs in = build_scene_inputs(
      load_scene_from_string(base + "domain: {min: [0, 0, -0.01], max: [0.05, 0.05, 0.1], periodic: [x, y]}\n", "fill.yaml"));
  const ParticleArrays& p = in.particles;
  ASSERT_EQ(p.size(), 300u);
  const PeriodicBox& b = in.settings.periodic;
  std::size_t near_faces = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3 x = wrap_far(b, p.x[i]);
    near_faces += x.x < 0.003 || x.x > 0.047;
    for (std::size_t j = i + 1; j < p.size(); ++j)
      ASSERT_GE(norm(nearest_image(b, x - wrap_far(b, p.x[j]))), p.radius[i] + p.radius[j]) << i << " and " << j;
  }
  EXPECT_GT(near_faces, 10u);
  // A period of less than four largest radii: refused, naming the key and the numbers.
  try {
    build_scene_inputs(load_scene_from_string(
        base + "domain: {min: [0, 0, -0.01], max: [0.011, 0.05, 0.1], periodic: [x]}\n", "narrow.yaml"));
    ADD_FAILURE() << "a period of 11 mm for spheres of 3 mm was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("domain.periodic: the period along x (0.011 m) must exceed 0.012 m"), std::string::npos) << e.what();
  }
}

#if !defined(DEM_TEST_SYSTEM_CUDA)
TEST(DeviceCli, GpuWithoutADeviceIsAClearError) {
  std::string why;
  if (device::available(device::System::Cuda, &why)) GTEST_SKIP() << "a CUDA device is present";
  RunOptions opt;
  opt.scene = scenes_dir() + "/validation/drop_facet.yaml";
  opt.out_dir = (std::filesystem::temp_directory_path() / "dem_device_cli_gpu").string();
  opt.device = "gpu";
  opt.quiet = true;
  testing::internal::CaptureStderr();
  const int code = run_scene(opt);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("--device gpu: "), std::string::npos) << err;
  EXPECT_NE(err.find("--device cpu"), std::string::npos) << err;  // says what to do instead
}
#endif

}  // namespace
}  // namespace dem::host
