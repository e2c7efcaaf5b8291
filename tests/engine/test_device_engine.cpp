// The device engine's own properties, for each device system of the build: how often the host
// waits for the device (per step, with and without the driver's checks, and after an edit or a
// motion change that makes the checks' copy stale), `dem run --device` reporting the engine and
// its waits, and the pair histories' second array kept only where a law uses it; and, in a build
// without CUDA, `--device gpu` refused with a clear message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engines.hpp"
#include "core/grid/grid_sizing.hpp"
#include "host/app/driver.hpp"

namespace dem::test {
namespace {

using host::ContactStats;
using host::ParticleArrays;
using host::RunOptions;
using host::SceneConfig;

#if defined(DEM_TEST_HAS_DEVICE)
template <class E>
class DeviceEngineTest : public OnEngine<E> {};
TYPED_TEST_SUITE(DeviceEngineTest, DeviceEngines);

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
template <class E>
StepWaits count_waits(const SceneInputs& in, int warmup, int steps) {
  std::unique_ptr<Simulation> read = E::make(in), bench = E::make(in), driver = E::make(in);
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


TYPED_TEST(DeviceEngineTest, WaitsForTheDeviceOnceAStepWithOrWithoutTheDriversChecks) {
  const int steps = 600;
  SceneConfig free_fall = host::load_scene_from_string(kBinScene, "bin.yaml");
  free_fall.meshes.clear();
  // busy steps: measured 3.0 waits on average without meshes, 7.6 on the bin, 7.8 on the mixer
  // (where a rebuild renews the mesh lists too; 11.6 and 11.8 while a renewal read its domain's
  // counts, its bins' total, its lists' total and its blocks one at a time)
  expect_waits(count_waits<TypeParam>(host::build_scene_inputs(free_fall), 200, steps), 3.5, steps, "the bin's spheres without the bin");
  expect_waits(count_waits<TypeParam>(bin_scene(), 200, steps), 8.5, steps, "bin");  // a static bin and a rotating paddle
  const StepWaits mixer = count_waits<TypeParam>(scene_file("mixer/mixer.yaml", {"fills.0.count=3000"}), 400, steps);
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
TYPED_TEST(DeviceEngineTest, AnEditOrAMotionChangeAfterTheHealthCheckRunsTheSkinTestsAgain) {
  const SceneInputs in = bin_scene();
  const HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
  std::unique_ptr<Simulation> once = TypeParam::make(in), twice = TypeParam::make(in);
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


TYPED_TEST(DeviceEngineTest, ReportsEngineAndDeviceThroughTheCli) {
  const std::filesystem::path out = std::filesystem::temp_directory_path() / ("dem_device_cli_" + std::to_string(::getpid()));
  std::filesystem::remove_all(out);
  RunOptions opt;
  opt.scene = scenes_dir() + "/validation/drop_facet.yaml";
  opt.out_dir = out.string();
  opt.device = TypeParam::is_gpu ? "gpu" : "omp";
  opt.quiet = true;
  opt.overrides = {"simulation.end_time=0.01"};
  ASSERT_EQ(run_scene(opt), 0);
  std::ifstream f(out / "summary.json");
  std::stringstream text;
  text << f.rdbuf();
  const std::string expected = std::string("\"backend\": \"device-") + device::system_name(TypeParam::system) + "\"";
  EXPECT_NE(text.str().find(expected), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"state_bytes_per_particle\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"state_bytes_by_buffer\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"particle fields\""), std::string::npos) << text.str();
  // Under dem run the steps between two outputs run ahead (Simulation::advance): they wait once in
  // all, at the end (a sphere dropped on a facet: one rebuild in 1,000 steps), and each output
  // waits for what it reads: 10 probes here, each reading the particles, forces and diagnostics
  // (measured 0.281 a step; 1.232 while each step's health check waited, 2.232 while the skin
  // tests waited on their own too).
  const std::string key = "\"host_waits_per_step\": ";
  const std::size_t at = text.str().find(key);
  ASSERT_NE(at, std::string::npos) << text.str();
  const double waits = std::stod(text.str().substr(at + key.size()));
  EXPECT_GE(waits, 0.15) << text.str();
  EXPECT_LE(waits, 0.4) << text.str();
  std::filesystem::remove_all(out);
}


// Where asked (BroadPhaseSpec::device_curve_order) the uniform grid orders the particles along the
// Hilbert curve of its cells (core/grid/hilbert.hpp), by default in rows of cells: after the first
// build (compute_forces, which moves nothing) the particles, read in the engine's order, have
// non-decreasing curve keys (or row keys) in the grid that build made (cells of the reported size
// over the particles' box), each cell's particles consecutive; in the mixer the other order goes
// back often. A rod 14 m long (more than 2,048 cells along it, periodic across) takes the curve's
// 64-bit keys, whose low 32 bits alone would misorder it.
template <class E>
void expect_order(SceneInputs in, bool curve, const std::string& what, bool other_goes_back) {
  in.settings.broad_phase.device_curve_order = curve;
  std::unique_ptr<Simulation> sim = E::make(in);
  sim->compute_forces();
  const ParticleArrays& p = sim->particles();
  const host::BroadPhaseReport report = sim->broad_phase_report();
  ASSERT_EQ(report.method, "grid") << what;
  ASSERT_EQ(report.order, curve ? "curve" : "rows") << what;
  ASSERT_EQ(report.cell_sizes.size(), 1u) << what;
  Vec3 lo = p.x[0], hi = p.x[0];
  for (const Vec3& x : p.x) {
    lo = Vec3{std::min(lo.x, x.x), std::min(lo.y, x.y), std::min(lo.z, x.z)};
    hi = Vec3{std::max(hi.x, x.x), std::max(hi.y, x.y), std::max(hi.z, x.z)};
  }
  const GridKeys gk = size_particle_grid(lo, hi, in.settings.periodic, static_cast<real>(report.cell_sizes[0]),
                                         static_cast<std::int64_t>(p.size()), false);
  ASSERT_TRUE(gk.bounded && curve_fits(gk.grid)) << what;
  std::size_t back = 0, cells = 1;  // steps back in the order not asked for
  std::set<std::uint32_t> seen;
  for (std::size_t i = 1; i < p.size(); ++i) {
    const Int3 a = home_cell(p.x[i - 1], gk.grid), b = home_cell(p.x[i], gk.grid);
    const std::uint64_t ca = cell_curve_key(a, gk.grid), cb = cell_curve_key(b, gk.grid);
    ASSERT_LE(curve ? ca : gk.key(a), curve ? cb : gk.key(b)) << what << ", particle " << i;
    if (gk.key(b) != gk.key(a)) {
      ++cells;
      EXPECT_TRUE(seen.insert(gk.key(a)).second) << what << ": cell " << gk.key(a) << " twice";
      back += curve ? gk.key(b) < gk.key(a) : cb < ca;
    }
  }
  ASSERT_GT(cells, 1000u) << what;
  if (other_goes_back) {
    EXPECT_GT(back, cells / 10) << what << ": " << cells << " cells";
  }
}

TYPED_TEST(DeviceEngineTest, OrdersTheParticlesInRowsOrAlongTheHilbertCurveOfTheGridsCells) {
  // (12,000 beads: the mixer's 86,000 cells take the bounded grid from 10,800 on)
  const SceneInputs mixer = scene_file("mixer/mixer.yaml", {"fills.0.count=12000"});
  expect_order<TypeParam>(mixer, false, "mixer, rows", true);
  expect_order<TypeParam>(mixer, true, "mixer, curve", true);
  const SceneInputs rod = scene_text(R"(
simulation: {dt: 2.0e-5, end_time: 0.1, gravity: [0, 0, 0]}
domain: {min: [-1, 0, 0], max: [15, 0.01, 0.01], periodic: [y, z]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [14, 0.01, 0.01], count: 4000, radius: 0.002,
     material: grain, seed: 5}
)",
                                     "rod.yaml");
  expect_order<TypeParam>(rod, true, "rod, curve", false);
}


// The pair histories' second array (SplitHistory) only where a law uses it: the bin under the
// default law against the same bin with EPSD's rolling spring (which uses it). The list holds each
// pair from both sides, 24 bytes of second history per entry, and the previous build's list as
// much again for its touching entries: the default law's device state is at least 24 bytes per
// entry of the present list smaller (0.8 of it: the trajectories, so the lists' lengths, differ).
TYPED_TEST(DeviceEngineTest, PairHistoriesKeepTheSecondArrayOnlyWhereALawUsesIt) {
  const int steps = 1500, last = 100;
  std::unique_ptr<Simulation> plain = TypeParam::make(bin_scene());
  std::unique_ptr<Simulation> epsd = TypeParam::make(
      scene_text(kBinScene, "bin.yaml", {"interactions.grain-grain.rolling=epsd", "interactions.grain-steel.rolling=epsd"}));
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
#endif

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
}  // namespace dem::test
