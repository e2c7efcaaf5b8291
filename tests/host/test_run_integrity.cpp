// Runs that never lie (issue 13, first part): blow-ups and escapes stop the run with exit 3 on both
// engines, bad values are refused with exit 2 before anything runs, writes are checked (exit 4),
// the summary is valid JSON with a status, output folders stay under out/ and start clean, and
// SIGINT/SIGTERM end a run with its outputs written and exit 130/143.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda/device_engine.hpp"
#include "host/app/driver.hpp"
#include "host/sim/checkpoint.hpp"
#include "host/sim/errors.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"

extern char** environ;

namespace dem::host {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("dem_integrity_" + std::to_string(::getpid())) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

struct Result {
  int code;
  std::string err;
};

Result run(const std::string& scene, const fs::path& out, std::vector<std::string> overrides = {},
           const std::string& device = "cpu", int threads = 0) {
  RunOptions opt;
  opt.scene = scene;
  opt.out_dir = out.string();
  opt.quiet = true;
  opt.device = device;
  opt.threads = threads;
  opt.overrides = std::move(overrides);
  testing::internal::CaptureStderr();
  const int code = run_scene(opt);
  return Result{code, testing::internal::GetCapturedStderr()};
}

nlohmann::json summary(const fs::path& out) {
  std::ifstream f(out / "summary.json");
  return nlohmann::json::parse(f);  // throws (and fails the test) on invalid JSON
}

// Two spheres on a floor; parameters and placements are set per test with --set.
const char* kTwoSpheres = R"(name: two
simulation: {dt: 1.0e-5, end_time: 0.002, gravity: [0, -9.81, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], restitution: 0.5}
  - {materials: [g, w], restitution: 0.5}
particles:
  - {position: [0, 0.011, 0], radius: 0.01, material: g}
  - {position: [0.03, 0.011, 0], radius: 0.01, material: g}
meshes:
  - name: floor
    material: w
    vertices: [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]]
    faces: [[0, 3, 2, 1]]
output: {probe_interval: 1.0e-4, probe_ids: [0, 1]}
)";

std::vector<std::string> devices() {
  std::vector<std::string> d{"cpu"};
  if (device::available(device::System::Omp)) d.push_back("omp");
  return d;
}

TEST(RunIntegrity, SpheresPlacedInsideEachOtherStopWithExit3OnEveryEngine) {
  // 90 % into each other: not a contact any more. Stopped before the first step (the initial
  // state's forces and overlaps are evaluated before the run starts), on every engine.
  const fs::path dir = temp_dir("overlap");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  for (const std::string& dev : devices()) {
    const Result r = run(scene, dir / dev, {"particles.1.position=[0.002, 0.011, 0]"}, dev);
    EXPECT_EQ(r.code, 3) << dev << ": " << r.err;
    EXPECT_NE(r.err.find("particle 0 overlaps a neighbour or a wall by more than 30 %"), std::string::npos)
        << dev << ": " << r.err;
    const nlohmann::json js = summary(dir / dev);
    EXPECT_EQ(js["status"], "stopped");
    EXPECT_EQ(js["steps"], 0);
  }
}

TEST(RunIntegrity, ABlowUpStopsWithExit3OnEveryEngine) {
  // 25 % of a radius into each other (below the 30 % overlap limit) with a stiff contact: thrown
  // apart at several km/s in one step.
  const fs::path dir = temp_dir("blowup");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  for (const std::string& dev : devices()) {
    const Result r = run(scene, dir / dev,
                         {"particles.1.position=[0.0175, 0.011, 0]", "materials.g.youngs_modulus=1.0e12"}, dev);
    EXPECT_EQ(r.code, 3) << dev << ": " << r.err;
    EXPECT_NE(r.err.find("has blown up"), std::string::npos) << dev << ": " << r.err;
    const nlohmann::json js = summary(dir / dev);
    EXPECT_EQ(js["status"], "stopped");
    EXPECT_NE(js["reason"].get<std::string>().find("blown up"), std::string::npos);
  }
}

TEST(RunIntegrity, TimeStepFarTooLargeIsCaught) {
  // dt = 1e-3 s against a Hertz contact time of about 1e-4 s: the drop onto the floor explodes.
  const fs::path dir = temp_dir("dt");
  const Result r = run(write_file(dir / "s.yaml", kTwoSpheres), dir / "out",
                       {"simulation.dt=1.0e-3", "simulation.end_time=2.0", "materials.g.youngs_modulus=1.0e9"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_TRUE(r.err.find("has blown up") != std::string::npos || r.err.find("non-finite") != std::string::npos ||
              r.err.find("left the domain") != std::string::npos)
      << r.err;
}

TEST(RunIntegrity, EscapeFromTheDomainStopsTheRunOnEveryEngine) {
  const fs::path dir = temp_dir("escape");
  std::string text = kTwoSpheres;
  text += "domain: {min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5]}\n";
  const std::string scene = write_file(dir / "s.yaml", text);
  for (const std::string& dev : devices()) {
    // particle 1 flies off sideways at 100 m/s (within the speed limit it sets itself)
    const Result r = run(scene, dir / dev, {"particles.1.velocity=[100, 0, 0]", "simulation.end_time=0.02"}, dev);
    EXPECT_EQ(r.code, 3) << dev << ": " << r.err;
    EXPECT_NE(r.err.find("particle 1 left the domain"), std::string::npos) << dev << ": " << r.err;
  }
  // placed 1e7 m away: refused before the first step, no huge grid
  const Result far = run(scene, dir / "far", {"particles.1.position=[1.0e7, 0, 0]"});
  EXPECT_EQ(far.code, 3) << far.err;
  EXPECT_NE(far.err.find("particle 1 left the domain"), std::string::npos) << far.err;
  EXPECT_EQ(summary(dir / "far")["steps"], 0);
}

// on_escape: remove. The escaped particle leaves the run, which completes; the others go on with
// the same bits as in a run where nothing was removed.
TEST(RunIntegrity, EscapedParticlesCanBeRemovedInstead) {
  const fs::path dir = temp_dir("remove");
  const auto last_row_of = [](const fs::path& csv, const std::string& id) {
    std::ifstream f(csv);
    std::string line, last;
    while (std::getline(f, line))  // t,id,...
      if (line.compare(line.find(',') + 1, id.size() + 1, id + ",") == 0) last = line;
    return last;
  };
  for (const std::string& dev : devices()) {
    std::string text = kTwoSpheres;
    text += "domain: {min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5], on_escape: remove}\n";
    const std::string scene = write_file(dir / ("s_" + dev + ".yaml"), text);
    const std::vector<std::string> o{"particles.1.velocity=[100, 0, 0]", "simulation.end_time=0.02"};
    const Result r = run(scene, dir / ("removed_" + dev), o, dev);
    ASSERT_EQ(r.code, 0) << dev << ": " << r.err;
    const nlohmann::json js = summary(dir / ("removed_" + dev));
    EXPECT_EQ(js["removed_particles"], 1) << dev;
    EXPECT_EQ(js["particles"], 1) << dev;
    EXPECT_EQ(js["status"], "completed") << dev;
    // the same run in a domain the particle never leaves
    std::vector<std::string> wide = o;
    wide.push_back("domain.max=[5, 5, 5]");
    ASSERT_EQ(run(scene, dir / ("kept_" + dev), wide, dev).code, 0);
    const std::string a = last_row_of(dir / ("removed_" + dev) / "probes.csv", "0");
    EXPECT_EQ(a.rfind("0.02,0,", 0), 0u) << a;  // particle 0 is still probed at the end
    EXPECT_EQ(a, last_row_of(dir / ("kept_" + dev) / "probes.csv", "0")) << dev;
    EXPECT_EQ(last_row_of(dir / ("removed_" + dev) / "probes.csv", "1").rfind("0.02,", 0), std::string::npos);
  }
}

// What the two-sphere scene prints to stderr when run on the host engine with these overrides
// (progress on, so that warnings are printed), in a fresh folder under dir.
std::string stderr_of_run(const fs::path& dir, const std::string& name, std::vector<std::string> overrides) {
  fs::create_directories(dir);
  RunOptions opt;
  opt.scene = write_file(dir / "s.yaml", kTwoSpheres);
  opt.out_dir = (dir / name).string();
  opt.quiet = false;
  opt.device = "cpu";
  opt.overrides = std::move(overrides);
  testing::internal::CaptureStderr();
  run_scene(opt);
  return testing::internal::GetCapturedStderr();
}

TEST(RunIntegrity, TheTimeStepWarningKnowsTheLinearLaw) {
  // Two spheres on a floor under the linear law: k_n = 1e8 N/m against m* = 10.5 g resolves the
  // contact (w0 t_c ~ 2.7, t_c ~ 2.8e-5 s) in about 3 steps of 1e-5 s: warned, naming the linear
  // contact time; k_n = 10 N/m (t_c ~ 0.09 s): no warning.
  const fs::path dir = fs::temp_directory_path() / "dem_dt_warning";
  fs::remove_all(dir);
  for (const std::string k : {"1e8", "10"}) {
    const std::string err = stderr_of_run(dir, "k" + k,
                                          {"interactions.1.normal=linear", "interactions.1.stiffness=" + k,
                                           "interactions.0.normal=linear", "interactions.0.stiffness=" + k, "simulation.end_time=1e-4"});
    if (k == "1e8") {
      EXPECT_NE(err.find("(linear contact time"), std::string::npos) << err;
    } else {
      EXPECT_EQ(err.find("warning: simulation.dt"), std::string::npos) << err;
    }
  }
  fs::remove_all(dir);
}

TEST(RunIntegrity, TheTimeStepWarningKnowsTheParticlesAnInletWillPour) {
  // No particle at the start, an inlet pouring spheres of 5 to 10 mm under the linear law with
  // k_n = 1e8 N/m: its smallest sphere (1.3 g, against the wall) has a contact time of about one
  // step of 1e-5 s, so the run warns before it starts; at k_n = 10 N/m it does not.
  const fs::path dir = fs::temp_directory_path() / "dem_dt_inlet_warning";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string yaml = kTwoSpheres;
  yaml.replace(yaml.find("particles:"), yaml.find("meshes:") - yaml.find("particles:"),
               "inlets:\n  - {shape: box, min: [-0.1, 0.1, -0.1], max: [0.1, 0.2, 0.1], material: g, rate: 100,\n"
               "     radius: {distribution: uniform, min: 0.005, max: 0.01}}\n");
  yaml.replace(yaml.find("output: {probe_interval: 1.0e-4, probe_ids: [0, 1]}"), 51, "output: {probe_interval: 1.0e-4}");
  for (const std::string k : {"1e8", "10"}) {
    RunOptions opt;
    opt.scene = write_file(dir / "s.yaml", yaml);
    opt.out_dir = (dir / ("k" + k)).string();
    opt.quiet = false;
    opt.device = "cpu";
    opt.overrides = {"interactions.1.normal=linear", "interactions.1.stiffness=" + k, "interactions.0.normal=linear",
                     "interactions.0.stiffness=" + k, "simulation.end_time=1e-4"};
    testing::internal::CaptureStderr();
    run_scene(opt);
    const std::string err = testing::internal::GetCapturedStderr();
    if (k == "1e8")
      EXPECT_NE(err.find("resolves a g-w (wall) contact"), std::string::npos) << err;
    else
      EXPECT_EQ(err.find("warning: simulation.dt"), std::string::npos) << err;
  }
  fs::remove_all(dir);
}

TEST(RunIntegrity, TheTimeStepWarningKnowsTheDashpot) {
  // A small restitution needs a strong dashpot (zeta = 14 for e = 0.001), integrated explicitly:
  // a 4e-5 s step resolves these Hertz contacts in about 40 steps but is too long for it (the
  // restitution would come out wrong: 0.14 at 50 steps per contact), so the run warns, naming the
  // contact and the step it needs; at e = 0.5 (zeta = 0.23) it does not.
  const fs::path dir = fs::temp_directory_path() / "dem_dashpot_warning";
  fs::remove_all(dir);
  for (const std::string e : {"0.001", "0.5"}) {
    const std::string err = stderr_of_run(dir, "e" + e,
                                          {"interactions.0.restitution=" + e, "interactions.1.restitution=" + e,
                                           "simulation.dt=4e-5", "simulation.end_time=4e-4"});
    EXPECT_EQ(err.find("resolves a"), std::string::npos) << err;  // the contact time itself is resolved
    if (e == "0.001") {
      EXPECT_NE(err.find("is too long for the dashpot of a g-w (wall) contact (damping ratio 14.3"), std::string::npos) << err;
    } else {
      EXPECT_EQ(err.find("too long for the dashpot"), std::string::npos) << err;
    }
  }
  fs::remove_all(dir);
}

TEST(RunIntegrity, ContactModelsThatShareAHistoryAreRefusedInCodeToo) {
  // A scene built in code skips the loader's refusals; the builder repeats them, naming the
  // interaction, rather than let two models write the same place of the contact history.
  auto error = [](auto edit) {
    SceneConfig c = load_scene_from_string(kTwoSpheres, "s.yaml");
    edit(c.interactions[0]);
    try {
      build_scene_inputs(c);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error([](InteractionSpec& it) { it.restitution = 0, it.rolling = RollingModel::Epsd; })
                .find("interaction g-g: rolling epsd cannot be combined with restitution 0"),
            std::string::npos);
  EXPECT_NE(error([](InteractionSpec& it) { it.restitution = 0, it.tangential = TangentialModel::MindlinDeresiewicz; })
                .find("cannot be combined with restitution 0"),
            std::string::npos);
  EXPECT_NE(error([](InteractionSpec& it) { it.tangential = TangentialModel::MindlinDeresiewicz, it.rolling = RollingModel::Epsd; })
                .find("rolling epsd cannot be combined with tangential: mindlin_deresiewicz"),
            std::string::npos);
  EXPECT_NE(error([](InteractionSpec& it) { it.tangential = TangentialModel::MindlinDeresiewicz, it.normal = NormalModel::Linear, it.stiffness = 1e4; })
                .find("needs normal: hertz"),
            std::string::npos);
  EXPECT_EQ(error([](InteractionSpec& it) { it.restitution = 0; }), "");
}

TEST(RunIntegrity, ImplausibleValuesAreRefusedWithExit2) {
  const fs::path dir = temp_dir("refuse");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  Result r = run(scene, dir / "a", {"output.probe_ids=[0, 7]"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("output.probe_ids[1] = 7: no particle has this id"), std::string::npos) << r.err;
  r = run(scene, dir / "b", {"simulation.dt=1e-300", "simulation.end_time=1e300"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("more than any run can take"), std::string::npos) << r.err;
  r = run(scene, dir / "c", {"particles.99999999999999999999.radius=1"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("has no entry 99999999999999999999"), std::string::npos) << r.err;
#ifdef DEM_HAVE_DEVICE_OMP
  r = run(scene, dir / "e", {"broad_phase.method=bsp"}, "omp");  // bad input for that engine, not a failure
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("broad_phase.method: bsp runs on the host engine only"), std::string::npos) << r.err;
#endif
  r = run(scene, dir / "d", {}, "cpu", 100000);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--threads 100000"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "a" / "summary.json"));  // refused before anything was written
}

const char* kFill = R"(simulation: {dt: 1.0e-5, end_time: 1.0e-4}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g]}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [0.1, 0.1, 0.1], count: 100, radius: 0.005, material: g}
)";

TEST(RunIntegrity, FillsThatCannotWorkAreRefusedAtOnce) {
  const fs::path dir = temp_dir("fills");
  const std::string scene = write_file(dir / "s.yaml", kFill);
  const auto refused = [&](std::vector<std::string> o, const std::string& expect) {
    const auto t0 = std::chrono::steady_clock::now();
    const Result r = run(scene, dir / "out", std::move(o));
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);  // not after a long search
  };
  refused({"fills.0.count=1000000000000"}, "is more than the");
  refused({"fills.0.count=1000000"}, "random placement without overlaps jams near 38 %");
  refused({"fills.0.pattern=regular", "fills.0.spacing=1e-20"}, "lattice sites");
  refused({"fills.0.pattern=regular", "fills.0.count=0", "fills.0.radius=1e-7"}, "lattice sites");
  EXPECT_EQ(run(scene, dir / "ok").code, 0);  // the scene itself is fine
}

TEST(RunIntegrity, ScenesThatWouldBeMisreadAreRefused) {
  const fs::path dir = temp_dir("misread");
  Result r = run(write_file(dir / "two_docs.yaml", std::string(kFill) + "---\nsimulation: {dt: 1.0}\n"), dir / "a");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("two_docs.yaml:8: a second YAML document"), std::string::npos) << r.err;
  r = run(write_file(dir / "rigid.yaml", kFill), dir / "b", {"materials.g.youngs_modulus=.inf"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("only walls can be rigid"), std::string::npos) << r.err;
  // An unterminated quote names its line (yaml-cpp alone would report a missing section).
  r = run(write_file(dir / "quote.yaml", std::string("name: \"abc\n") + kFill), dir / "c");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("quote.yaml:1: a quoted value does not end on its line"), std::string::npos) << r.err;
  // A scale that sends a mesh beyond any physical size says so (not "zero area").
  r = run(write_file(dir / "scale.yaml", kTwoSpheres), dir / "d", {"meshes.floor.scale=1e300"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("beyond 1e9 m from the origin; check the scale"), std::string::npos) << r.err;
}

TEST(RunIntegrity, AHugeValueIsNotEchoedInFull) {
  const fs::path dir = temp_dir("huge");
  const std::string huge(5'000'000, '7');  // 5 MB of digits where a number belongs: not a number
  const Result r = run(write_file(dir / "s.yaml", kFill), dir / "out", {"simulation.dt=x" + huge});
  EXPECT_EQ(r.code, 2);
  EXPECT_LT(r.err.size(), 1000u) << r.err.substr(0, 300);
  EXPECT_NE(r.err.find("5000001 characters"), std::string::npos) << r.err.substr(0, 300);
}

TEST(RunIntegrity, NamesNeverBreakTheOutput) {
  // A name that would climb out of out/, with a tab; a mesh name with a comma and a quote.
  const fs::path dir = temp_dir("names");
  std::string text = kTwoSpheres;
  text.replace(text.find("name: two"), 9, "name: \"../..\\tx\"");
  text.replace(text.find("name: floor"), 11, "name: 'floor, \"left\"'");
  const std::string scene = write_file(dir / "s.yaml", text);
  const fs::path cwd = fs::current_path();
  fs::create_directories(dir / "work");
  fs::current_path(dir / "work");
  RunOptions opt;
  opt.scene = scene;
  opt.quiet = true;
  opt.device = "cpu";
  testing::internal::CaptureStderr();
  const int code = run_scene(opt);
  const std::string err = testing::internal::GetCapturedStderr();
  fs::current_path(cwd);
  ASSERT_EQ(code, 0) << err;
  const fs::path out = dir / "work" / "out" / ".._.._x";  // '/' and the tab became '_'
  ASSERT_TRUE(fs::exists(out / "summary.json")) << "output not in " << out;
  EXPECT_EQ(summary(out)["scene"], "../..\tx");  // escaped in the JSON, read back intact
  std::ifstream bodies(out / "bodies.csv");
  std::string header, row;
  std::getline(bodies, header);
  std::getline(bodies, row);
  EXPECT_NE(row.find(",\"floor, \"\"left\"\"\","), std::string::npos) << row;  // RFC 4180 quoting
}

TEST(RunIntegrity, ANewRunIntoAnOldFolderStartsClean) {
  const fs::path dir = temp_dir("rerun");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  ASSERT_EQ(run(scene, dir / "out", {"output.snapshot_interval=1e-4"}).code, 0);
  ASSERT_TRUE(fs::exists(dir / "out" / "particles_000020.vtu"));
  write_file(dir / "out" / "notes.txt", "mine");
  ASSERT_EQ(run(scene, dir / "out", {"output.snapshot_interval=1e-3"}).code, 0);
  EXPECT_FALSE(fs::exists(dir / "out" / "particles_000020.vtu"));  // the old run's snapshot is gone
  EXPECT_TRUE(fs::exists(dir / "out" / "particles_000002.vtu"));
  EXPECT_TRUE(fs::exists(dir / "out" / "notes.txt"));  // files that are not ours stay
}

TEST(RunIntegrity, AFailedWriteStopsWithExit4NamingTheFile) {
  const fs::path dir = temp_dir("full");
  fs::create_directories(dir / "out");
  fs::create_symlink("/dev/full", dir / "out" / "probes.csv");  // every write fails: a full disk
  const Result r = run(write_file(dir / "s.yaml", kTwoSpheres), dir / "out");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("probes.csv"), std::string::npos) << r.err;
}

// The `dem` binary in a child process (fork, then exec), its stderr into `err_file`, with resource
// limits set in the child between the two: RLIMIT_FSIZE, the largest file it may write, with
// SIGXFSZ ignored, so that a write past it fails with EFBIG after writing what fits, as a disk that
// fills mid-write does; RLIMIT_AS, its memory. Its exit code (-1 if it did not exit) and stderr.
Result run_limited(std::vector<std::string> args, const fs::path& err_file, rlim_t file_size = RLIM_INFINITY,
                   rlim_t address_space = RLIM_INFINITY) {
  args.insert(args.begin(), DEM_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string err_path = err_file.string();
  const pid_t pid = fork();
  if (pid < 0) return Result{-1, "fork failed"};
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    const rlimit fsize{file_size, file_size}, as{address_space, address_space};
    if (setrlimit(RLIMIT_FSIZE, &fsize) != 0 || setrlimit(RLIMIT_AS, &as) != 0) _exit(126);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, nullptr);  // an ignored signal stays ignored across exec
    const int fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, 2) < 0) _exit(126);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::ifstream err(err_file);
  std::stringstream text;
  text << err.rdbuf();
  return Result{WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

// Sanitizers reserve terabytes of address space for their shadow memory: no RLIMIT_AS under them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

TEST(RunIntegrity, AScenePathThatIsNotAFileIsRefusedWithExit2) {
  // /dev/zero was read until memory ran out (std::bad_alloc, exit 4). The child gets 2 GiB of
  // address space, so that a regression ends there and not in the machine's swap.
  const fs::path dir = temp_dir("not_a_file");
  const rlim_t memory = kSanitized ? RLIM_INFINITY : rlim_t(2) << 30;
  Result r = run_limited({"run", "/dev/zero", "--out", (dir / "a").string(), "--quiet"}, dir / "err_zero", RLIM_INFINITY, memory);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "dem: error: /dev/zero: cannot read the scene: it is a character device, not a regular file\n");
  r = run_limited({"run", dir.string(), "--out", (dir / "b").string(), "--quiet"}, dir / "err_dir", RLIM_INFINITY, memory);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "dem: error: " + dir.string() + ": cannot read the scene: it is a directory, not a regular file\n");
  EXPECT_FALSE(fs::exists(dir / "a") || fs::exists(dir / "b"));  // refused before any output
}

// The lines of a text file; `complete` tells whether it ends with a line break.
std::vector<std::string> lines_of(const fs::path& path, bool& complete) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  const std::string text = s.str();
  complete = !text.empty() && text.back() == '\n';
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t fields_of(const std::string& line) { return 1 + std::count(line.begin(), line.end(), ','); }

// The output files that are temporaries (*.tmp).
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tmp") out.push_back(e.path().filename().string());
  return out;
}

TEST(RunIntegrity, ADiskThatFillsMidRunLeavesCompleteRowsAndNoTemporaries) {
  // A file size limit of half what probes.csv reaches in the full run: the disk "fills" in the
  // middle of a probe row (write(2) takes what fits, then fails with EFBIG). The run stops with
  // exit 4, and every CSV ends as after its last complete write: whole rows, each with the
  // header's column count, ending with a line break, all at the same last probe time (the rows
  // of one time go into every CSV or into none); no .tmp; summary.json absent (the run stopped
  // before it) or valid.
  if (kSanitized) GTEST_SKIP() << "under a sanitizer the file size limit stops its runtime in the child (it writes and maps files "
                                  "of its own), not the run: checked in the plain build";
  const fs::path dir = temp_dir("disk_fills");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  const std::vector<std::string> args{"run", scene, "--quiet", "--device", "cpu", "--threads", "1", "--out"};
  auto with_out = [&](const fs::path& out) {
    std::vector<std::string> a = args;
    a.push_back(out.string());
    return a;
  };
  ASSERT_EQ(run_limited(with_out(dir / "full"), dir / "err_full").code, 0);
  const std::uintmax_t probes_size = fs::file_size(dir / "full" / "probes.csv");
  const rlim_t limit = probes_size / 2;
  const Result r = run_limited(with_out(dir / "out"), dir / "err_out", limit);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find(".csv': File too large (the files written before are complete)"), std::string::npos) << r.err;
  std::set<std::string> last_times;
  for (const char* name : {"probes.csv", "diagnostics.csv", "bodies.csv"}) {
    bool complete = false;
    const std::vector<std::string> lines = lines_of(dir / "out" / name, complete);
    EXPECT_TRUE(complete) << name << " ends in a torn row: '" << (lines.empty() ? "" : lines.back()) << "'";
    ASSERT_GE(lines.size(), 2u) << name << ": the disk filled after some rows";
    for (const std::string& line : lines) EXPECT_EQ(fields_of(line), fields_of(lines[0])) << name << ": " << line;
    EXPECT_LE(fs::file_size(dir / "out" / name), limit);
    last_times.insert(lines.back().substr(0, lines.back().find(',')));
  }
  EXPECT_EQ(last_times.size(), 1u) << "the CSVs end at different probe times";
  bool complete = false;
  EXPECT_LT(lines_of(dir / "out" / "probes.csv", complete).size(), lines_of(dir / "full" / "probes.csv", complete).size());
  EXPECT_EQ(temporaries(dir / "out"), std::vector<std::string>{});
  if (fs::exists(dir / "out" / "summary.json")) {
    EXPECT_NO_THROW(summary(dir / "out"));
  }
}

TEST(RunIntegrity, ASummaryThatCannotBeWrittenLeavesNoTemporary) {
  // A file size limit between the largest CSV and summary.json of a short run: the rows all go
  // in, the summary does not. The run stops with exit 4 naming summary.json; no summary.json
  // (the write to its .tmp failed, so there is nothing to rename) and no summary.json.tmp.
  if (kSanitized) GTEST_SKIP() << "under a sanitizer the file size limit stops its runtime in the child (it writes and maps files "
                                  "of its own), not the run: checked in the plain build";
  const fs::path dir = temp_dir("summary_full");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  auto args = [&](const fs::path& out) {
    return std::vector<std::string>{"run", scene, "--quiet", "--device", "cpu", "--threads", "1", "--out", out.string(),
                                    "--set", "simulation.end_time=2e-4", "--set", "output.probe_ids=[0]"};
  };
  ASSERT_EQ(run_limited(args(dir / "full"), dir / "err_full").code, 0);
  std::uintmax_t largest_csv = 0;
  for (const char* name : {"probes.csv", "diagnostics.csv", "bodies.csv"})
    largest_csv = std::max(largest_csv, fs::file_size(dir / "full" / name));
  const std::uintmax_t summary_size = fs::file_size(dir / "full" / "summary.json");
  ASSERT_LT(largest_csv + 100, summary_size);  // room for the limit, and for the error message
  const rlim_t limit = (largest_csv + summary_size) / 2;
  const Result r = run_limited(args(dir / "out"), dir / "err_out", limit);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("summary.json': File too large"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
  EXPECT_EQ(temporaries(dir / "out"), std::vector<std::string>{});
  // the CSVs are complete: the same as the unlimited run's
  for (const char* name : {"probes.csv", "diagnostics.csv", "bodies.csv"})
    EXPECT_EQ(fs::file_size(dir / "out" / name), fs::file_size(dir / "full" / name)) << name;
}

// SIGINT and SIGTERM: the `dem` binary in a child process, interrupted once it has written output.
int run_and_signal(const fs::path& scene, const fs::path& out, int sig) {
  const std::string bin = DEM_BINARY, scene_s = scene.string(), out_s = out.string();
  std::vector<std::string> args{bin, "run", scene_s, "--out", out_s, "--quiet", "--device", "cpu", "--threads", "1",
                                "--set", "simulation.end_time=1000"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, bin.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {  // until a few probe rows are out
    std::ifstream probes(out / "probes.csv");
    int rows = 0;
    for (std::string line; std::getline(probes, line);) ++rows;
    if (rows > 10) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_binary(std::vector<std::string> args) {
  args.insert(args.begin(), DEM_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, DEM_BINARY, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RunIntegrity, CommandLineErrorsExitWith2) {
  EXPECT_EQ(run_binary({"run", "x.yaml", "--no-such-option"}), 2);
  EXPECT_EQ(run_binary({"run"}), 2);                                // the scene is required
  EXPECT_EQ(run_binary({"run", "x.yaml", "--threads", "many"}), 2);  // not a number
  EXPECT_EQ(run_binary({"--help"}), 0);
}

// A run to T, against a run to T/2 with a checkpoint and a restart from it to T: the same final
// state (the checkpoints written at the ends compared bitwise), on the host engine and across
// engines, with a floor moved by a time-varying law.
TEST(RunIntegrity, RestartFromACheckpointContinuesTheSameRun) {
  const fs::path dir = temp_dir("restart");
  const std::string scene = write_file(dir / "s.yaml", kTwoSpheres);
  // The floor rises from 5 ms on by a motion table (0 to 0.1 m/s over 30 ms) and oscillates: the
  // restart at 20 ms lands in the middle of the table.
  const std::vector<std::string> common{
      "particles.1.velocity=[-0.5, 0, 0]", "output.checkpoint_interval=1e-3",
      "meshes.floor.motion={table: [[0, 0, 0, 0, 0, 0, 0], [0.03, 0, 0.1, 0, 0, 0, 0]], start: 0.005, "
      "oscillation: {amplitude: [0.0001, 0, 0], frequency: 50}}"};
  // Also perfectly plastic (restitution 0): the locks of its contacts travel in the checkpoint.
  for (const std::string plastic : {"", "_plastic"}) {
    auto with = [&](std::vector<std::string> extra) {
      std::vector<std::string> o = common;
      if (!plastic.empty()) {
        o.push_back("interactions.0.restitution=0");
        o.push_back("interactions.1.restitution=0");
      }
      o.insert(o.end(), extra.begin(), extra.end());
      return o;
    };
    ASSERT_EQ(run(scene, dir / ("straight" + plastic), with({"simulation.end_time=0.04"})).code, 0);
    ASSERT_EQ(run(scene, dir / ("half" + plastic), with({"simulation.end_time=0.02"})).code, 0);
    if (!plastic.empty()) {
      const Checkpoint half = read_checkpoint((dir / ("half" + plastic) / "checkpoint.bin").string());
      std::size_t locked = 0;
      for (const ContactHistory& h : half.contacts.mesh_history) locked += h.rolling.x > 0;
      EXPECT_GT(locked, 0u) << "the spheres rest on the floor in locked contacts";
    }
    for (const std::string& dev : devices()) {
      RunOptions opt;
      opt.scene = scene;
      opt.out_dir = (dir / ("rest_" + dev + plastic)).string();
      opt.quiet = true;
      opt.device = dev;
      opt.restart = (dir / ("half" + plastic) / "checkpoint.bin").string();
      opt.overrides = with({"simulation.end_time=0.04"});
      testing::internal::CaptureStderr();
      ASSERT_EQ(run_scene(opt), 0) << testing::internal::GetCapturedStderr();
      testing::internal::GetCapturedStderr();
      const Checkpoint a = read_checkpoint((dir / ("straight" + plastic) / "checkpoint.bin").string());
      const Checkpoint b = read_checkpoint((dir / ("rest_" + dev + plastic) / "checkpoint.bin").string());
      ASSERT_EQ(a.step, b.step);
      // the mesh slots are stored packed: the used ones only, as many as the counts add up to
      for (const Checkpoint* c : {&a, &b}) {
        std::size_t used = 0;
        for (std::uint8_t k : c->contacts.mesh_count) used += k;
        EXPECT_GT(used, 0u);
        EXPECT_EQ(c->contacts.mesh_entity.size(), used);
        EXPECT_EQ(c->contacts.mesh_history.size(), used);
      }
      ASSERT_EQ(a.particles.size(), b.particles.size());
      std::map<std::int64_t, std::size_t> where;  // each checkpoint is in its engine's particle order
      for (std::size_t i = 0; i < b.particles.size(); ++i) where[b.particles.id[i]] = i;
      for (std::size_t i = 0; i < a.particles.size(); ++i) {
        const std::size_t j = where.at(a.particles.id[i]);
        EXPECT_EQ(std::memcmp(&a.particles.x[i], &b.particles.x[j], sizeof(Vec3)), 0) << dev << plastic << " particle " << i;
        EXPECT_EQ(std::memcmp(&a.particles.v[i], &b.particles.v[j], sizeof(Vec3)), 0) << dev << plastic << " particle " << i;
      }
      EXPECT_GT(summary(dir / ("rest_" + dev + plastic))["steps"].get<long>(), 2000);
      // Every row the restart wrote is the straight run's row of that time: the first too, the
      // checkpoint's state, whose forces, touching pairs and mesh contacts it holds (the spheres
      // meet at that time: one touching pair). The same for the bodies' loads and the probes.
      bool complete = false;
      ASSERT_TRUE(read_checkpoint((dir / ("half" + plastic) / "checkpoint.bin").string()).contacts.forces_current)
          << "the checkpoint holds its state's forces: the restart does not evaluate them again";
      for (const char* file : {"bodies.csv", "probes.csv", "diagnostics.csv"}) {
        const std::vector<std::string> straight = lines_of(dir / ("straight" + plastic) / file, complete);
        const std::vector<std::string> rest = lines_of(dir / ("rest_" + dev + plastic) / file, complete);
        ASSERT_GT(rest.size(), 10u) << file;
        ASSERT_GE(straight.size(), rest.size()) << file;
        EXPECT_EQ(rest[1].rfind("0.02,", 0), 0u) << file << ": " << rest[1];
        EXPECT_EQ(std::vector<std::string>(straight.end() - static_cast<std::ptrdiff_t>(rest.size() - 1), straight.end()),
                  std::vector<std::string>(rest.begin() + 1, rest.end()))
            << dev << plastic << ": the restart's rows of " << file << " differ from the straight run's";
      }
      const std::vector<std::string> rest = lines_of(dir / ("rest_" + dev + plastic) / "diagnostics.csv", complete);
      std::vector<std::string> field;
      std::istringstream row(rest[1]);
      for (std::string f; std::getline(row, f, ',');) field.push_back(f);
      ASSERT_EQ(field.size(), 12u) << rest[1];
      EXPECT_EQ(field[8], "1") << "touching_pairs: " << rest[1];
    }
  }
  // Under other physics the restart is refused, naming what differs.
  RunOptions opt;
  opt.scene = scene;
  opt.out_dir = (dir / "other").string();
  opt.quiet = true;
  opt.device = "cpu";
  opt.restart = (dir / "half" / "checkpoint.bin").string();
  opt.overrides = {"simulation.dt=2e-5"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_scene(opt), 2);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("other physics"), std::string::npos) << err;
  EXPECT_NE(err.find("simulation.dt"), std::string::npos) << err;
  opt.overrides = {"materials.g.youngs_modulus=2e7"};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_scene(opt), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("contact parameters"), std::string::npos);
  opt.overrides = common;
  opt.overrides.push_back("simulation.end_time=0.04");
  opt.overrides.push_back("domain={min: [-1, -1, -1], max: [1, 1, 1], periodic: [z]}");
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_scene(opt), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("periodic axes"), std::string::npos);
  opt.restart = scene;  // not a checkpoint
  opt.overrides = {};
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_scene(opt), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("not a valid checkpoint"), std::string::npos);
}

// A checkpoint of format 2 (one block of kMaxMeshContacts mesh slots per particle, written by the
// build before format 3) reads as its packed form: every used slot a real contact (an element of
// the three walls, a distance within the radius), the state restarts, and written again as
// format 3 it reads back the same.
// A restart goes on counting the particles removed before it: the second sphere leaves the domain
// at 100 m/s in the first half and is removed (on_escape: remove); the restart's diagnostics rows
// (`removed` among them) are the straight run's, and its summary counts the removal.
TEST(RunIntegrity, ARestartGoesOnCountingTheParticlesRemovedBeforeIt) {
  const fs::path dir = temp_dir("restart_removed");
  std::string text = kTwoSpheres;
  text += "domain: {min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5], on_escape: remove}\n";
  const std::string scene = write_file(dir / "s.yaml", text);
  const auto with = [](const std::string& end) {
    return std::vector<std::string>{"particles.1.velocity=[100, 0, 0]", "output.checkpoint_interval=0.01", end};
  };
  ASSERT_EQ(run(scene, dir / "straight", with("simulation.end_time=0.02")).code, 0);
  ASSERT_EQ(run(scene, dir / "half", with("simulation.end_time=0.01")).code, 0);
  const Checkpoint half = read_checkpoint((dir / "half" / "checkpoint.bin").string());
  ASSERT_EQ(half.particles.size(), 1u);  // (removed before the checkpoint)
  EXPECT_EQ(half.removed_besides_outlets, 1u);
  for (const std::string& dev : devices()) {
    RunOptions opt;
    opt.scene = scene;
    opt.out_dir = (dir / ("rest_" + dev)).string();
    opt.quiet = true;
    opt.device = dev;
    opt.restart = (dir / "half" / "checkpoint.bin").string();
    opt.overrides = with("simulation.end_time=0.02");
    ASSERT_EQ(run_scene(opt), 0) << dev;
    EXPECT_EQ(summary(dir / ("rest_" + dev))["removed_particles"], 1) << dev;
    bool complete = false;
    const std::vector<std::string> straight = lines_of(dir / "straight" / "diagnostics.csv", complete);
    const std::vector<std::string> rest = lines_of(dir / ("rest_" + dev) / "diagnostics.csv", complete);
    ASSERT_GT(rest.size(), 2u) << dev;
    ASSERT_GE(straight.size(), rest.size()) << dev;
    EXPECT_EQ(std::vector<std::string>(straight.end() - static_cast<std::ptrdiff_t>(rest.size() - 1), straight.end()),
              std::vector<std::string>(rest.begin() + 1, rest.end()))
        << dev << ": the restart's diagnostics rows differ from the straight run's";
    EXPECT_EQ(read_checkpoint((dir / ("rest_" + dev) / "checkpoint.bin").string()).removed_besides_outlets, 1u) << dev;
  }
}

TEST(RunIntegrity, AVersion2CheckpointReadsAsItsPackedForm) {
  if (sizeof(real) != sizeof(double)) GTEST_SKIP() << "the fixture was written by a double-precision build";
  const std::string data = std::string(DEM_SOURCE_DIR) + "/tests/data/";
  const Checkpoint c = read_checkpoint(data + "checkpoint_v2.bin");
  ASSERT_EQ(c.particles.size(), 27u);
  std::size_t used = 0;
  for (std::uint8_t k : c.contacts.mesh_count) used += k;
  EXPECT_GE(used, 10u);
  ASSERT_EQ(c.contacts.mesh_entity.size(), used);
  ASSERT_EQ(c.contacts.mesh_normal.size(), used);
  ASSERT_EQ(c.contacts.mesh_history.size(), used);
  std::size_t slot = 0;
  for (std::size_t i = 0; i < c.particles.size(); ++i)
    for (int s = 0; s < c.contacts.mesh_count[i]; ++s, ++slot) {
      const EntityContact& e = c.contacts.mesh_entity[slot];
      EXPECT_GE(e.element, 0);
      EXPECT_LT(e.element, 3);
      EXPECT_GT(e.distance, 0.9 * c.particles.radius[i]) << "particle " << i;
      EXPECT_LE(e.distance, c.particles.radius[i]) << "particle " << i;
      EXPECT_NEAR(norm(c.contacts.mesh_normal[slot]), 1.0, 1e-12);
    }
  // restart from it and run on
  const SceneConfig scene = load_scene(data + "checkpoint_v2.yaml", {});
  SceneInputs inputs = build_scene_inputs(scene, false);
  check_checkpoint_fits(data + "checkpoint_v2.bin", c, scene, inputs);
  inputs.particles = c.particles;
  std::unique_ptr<Simulation> sim = make_simulation("cpu", std::move(inputs));
  sim->restore_state(c.contacts, c.step);
  for (int s = 0; s < 200; ++s) sim->step();
  EXPECT_TRUE(sim->status().ok) << sim->status().message;
  // format 3 round trip
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "dem_v2_as_v3.ckpt";
  write_checkpoint(out.string(), c);
  const Checkpoint d = read_checkpoint(out.string());
  std::filesystem::remove(out);
  ASSERT_EQ(d.contacts.mesh_count, c.contacts.mesh_count);
  ASSERT_EQ(d.contacts.mesh_entity.size(), used);
  for (std::size_t q = 0; q < used; ++q) {
    EXPECT_EQ(d.contacts.mesh_entity[q].element, c.contacts.mesh_entity[q].element);
    EXPECT_EQ(d.contacts.mesh_entity[q].distance, c.contacts.mesh_entity[q].distance);
    EXPECT_EQ(std::memcmp(&d.contacts.mesh_history[q], &c.contacts.mesh_history[q], sizeof(ContactHistory)), 0);
  }
}

TEST(RunIntegrity, InterruptsWriteEverythingAndSaySo) {
  const fs::path dir = temp_dir("signals");
  const fs::path scene = write_file(dir / "s.yaml", kTwoSpheres);
  EXPECT_EQ(run_and_signal(scene, dir / "int", SIGINT), 130);
  nlohmann::json js = summary(dir / "int");
  EXPECT_EQ(js["status"], "interrupted");
  EXPECT_EQ(js["reason"], "SIGINT");
  EXPECT_GT(js["steps"].get<long>(), 0);
  // ... and a checkpoint to continue from.
  const Checkpoint c = read_checkpoint((dir / "int" / "checkpoint.bin").string());
  EXPECT_EQ(c.step, js["steps"].get<std::uint64_t>());
  EXPECT_EQ(run_and_signal(scene, dir / "term", SIGTERM), 143);
  js = summary(dir / "term");
  EXPECT_EQ(js["status"], "interrupted");
  EXPECT_EQ(js["reason"], "SIGTERM");
}

}  // namespace
}  // namespace dem::host

namespace dem::host {
namespace {

// Inflow and outflow: a silo fed just above its orifice. Ids are unique and never reused; what the
// inlet added is what is in the silo plus what the outlet removed (outlets.csv and summary.json);
// the run gives the same bits on both engines; a restart from a checkpoint taken mid-run (inlet
// random state, batch times and tallies carried) gives the same bits as the run that went on.
TEST(RunIntegrity, InflowAndOutflowKeepCountsIdsAndBits) {
  const fs::path dir = temp_dir("flow");
  const std::string scene = std::string(DEM_SOURCE_DIR) + "/scenes/silo/silo.yaml";
  const std::vector<std::string> common{
      "inlets.feed.min=[-0.02, -0.02, 0.01]", "inlets.feed.max=[0.02, 0.02, 0.05]", "inlets.feed.rate=2000",
      "inlets.feed.velocity=[0, 0, -1]", "output.snapshot_interval=0", "output.probe_interval=0.01",
      "output.checkpoint_interval=0.05"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> o = common;
    o.insert(o.end(), extra.begin(), extra.end());
    return o;
  };
  std::map<std::string, Checkpoint> end;
  // a bead the inlet pours in later (the silo starts empty), probed from when it appears
  const std::string probe = "output.probe_ids=[350]";
  for (const std::string& dev : devices()) {
    const Result r = run(scene, dir / dev, with({"simulation.end_time=0.2", probe}), dev);
    ASSERT_EQ(r.code, 0) << dev << ": " << r.err;
    const nlohmann::json js = summary(dir / dev);
    const std::uint64_t inserted = js["inserted_particles"], present = js["particles"], removed = js["outlets"][0]["removed"];
    EXPECT_EQ(inserted, 400u) << dev;  // 2000 /s for 0.2 s
    EXPECT_GT(removed, 50u) << dev;    // a good part fell through the orifice into the outlet
    EXPECT_EQ(inserted, present + removed) << dev;
    EXPECT_EQ(js["diagnostics"]["inserted"].get<std::uint64_t>(), inserted);
    EXPECT_EQ(js["diagnostics"]["removed"].get<std::uint64_t>(), removed);
    // outlets.csv: the rows per interval add up to the total, with the masses of the beads removed
    std::ifstream csv(dir / dev / "outlets.csv");
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line, "t,outlet,count,mass");
    std::uint64_t rows_total = 0;
    double mass_total = 0;
    while (std::getline(csv, line)) {
      std::istringstream f(line);
      std::string t, name, count, mass;
      std::getline(f, t, ',');
      std::getline(f, name, ',');
      std::getline(f, count, ',');
      std::getline(f, mass, ',');
      EXPECT_EQ(name, "below");
      rows_total += std::stoull(count);
      mass_total += std::stod(mass);
    }
    EXPECT_EQ(rows_total, removed) << dev;
    const double bead_mass_min = 2500 * 4.0 / 3 * M_PI * 0.003 * 0.003 * 0.003, bead_mass_max = bead_mass_min * 64 / 27;
    EXPECT_GE(mass_total, removed * bead_mass_min * (1 - 1e-9));
    EXPECT_LE(mass_total, removed * bead_mass_max * (1 + 1e-9));
    end[dev] = read_checkpoint((dir / dev / "checkpoint.bin").string());
    // ids: unique, all below the next id, the new ones from the scene's count on
    std::set<std::int64_t> ids(end[dev].particles.id.begin(), end[dev].particles.id.end());
    EXPECT_EQ(ids.size(), end[dev].particles.size());
    EXPECT_LT(*ids.rbegin(), end[dev].next_id);
    EXPECT_EQ(end[dev].next_id, 400);
  }
  const auto same = [](const Checkpoint& a, const Checkpoint& b, const std::string& what) {
    ASSERT_EQ(a.particles.size(), b.particles.size()) << what;
    std::map<std::int64_t, std::size_t> where;
    for (std::size_t i = 0; i < b.particles.size(); ++i) where[b.particles.id[i]] = i;
    for (std::size_t i = 0; i < a.particles.size(); ++i) {
      ASSERT_EQ(where.count(a.particles.id[i]), 1u) << what << ": particle " << a.particles.id[i];
      const std::size_t j = where.at(a.particles.id[i]);
      EXPECT_EQ(std::memcmp(&a.particles.x[i], &b.particles.x[j], sizeof(Vec3)), 0) << what << " particle " << i;
      EXPECT_EQ(std::memcmp(&a.particles.v[i], &b.particles.v[j], sizeof(Vec3)), 0) << what << " particle " << i;
    }
    EXPECT_EQ(a.outlet_removed, b.outlet_removed) << what;
    EXPECT_EQ(a.inlet_rng, b.inlet_rng) << what;
  };
  if (end.count("omp")) same(end["cpu"], end["omp"], "host vs device");
  // Half the run, then a restart from its checkpoint to the end: the same bits, and the same probe
  // rows (the probed bead is not among the particles at the checkpoint).
  ASSERT_EQ(run(scene, dir / "half", with({"simulation.end_time=0.1", probe}), "cpu").code, 0);
  ASSERT_LE(read_checkpoint((dir / "half" / "checkpoint.bin").string()).particles.size(), 350u);
  RunOptions opt;
  opt.scene = scene;
  opt.out_dir = (dir / "rest").string();
  opt.quiet = true;
  opt.device = "cpu";
  opt.restart = (dir / "half" / "checkpoint.bin").string();
  opt.overrides = with({"simulation.end_time=0.2", probe});
  testing::internal::CaptureStderr();
  ASSERT_EQ(run_scene(opt), 0) << testing::internal::GetCapturedStderr();
  testing::internal::GetCapturedStderr();
  same(end["cpu"], read_checkpoint((dir / "rest" / "checkpoint.bin").string()), "straight vs restarted");
  const auto rows_of = [](const fs::path& csv) {
    std::ifstream in(csv);
    std::vector<std::string> rows;
    for (std::string line; std::getline(in, line);) rows.push_back(line);
    return rows;
  };
  const std::vector<std::string> straight = rows_of(dir / "cpu" / "probes.csv"), rest = rows_of(dir / "rest" / "probes.csv");
  ASSERT_GE(rest.size(), 3u) << "the probed bead has rows after the restart";
  ASSERT_GE(straight.size(), rest.size());
  EXPECT_EQ(rest.front(), straight.front());  // the header
  // the restart's rows are the straight run's last rows
  EXPECT_TRUE(std::equal(rest.begin() + 1, rest.end(), straight.end() - static_cast<std::ptrdiff_t>(rest.size() - 1)));
  EXPECT_EQ(summary(dir / "rest")["outlets"][0]["removed"], summary(dir / "cpu")["outlets"][0]["removed"]);
}

// A checkpoint that names one particle twice is refused with its path and the id: the engines
// order every particle's sums by its partners' ids and take a contact's roles from them.
TEST(RunIntegrity, ACheckpointWithAParticleIdTwiceIsRefused) {
  Checkpoint c = read_checkpoint(std::string(DEM_SOURCE_DIR) + "/tests/data/checkpoint_v2.bin");
  ASSERT_GE(c.particles.size(), 2u);
  c.particles.id[1] = c.particles.id[0];
  const std::filesystem::path out = std::filesystem::temp_directory_path() / "dem_id_twice.ckpt";
  write_checkpoint(out.string(), c);
  try {
    read_checkpoint(out.string());
    ADD_FAILURE() << "read";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(out.string()), std::string::npos) << what;
    EXPECT_NE(what.find("particle id " + std::to_string(c.particles.id[0]) + " appears twice"), std::string::npos) << what;
  }
  std::filesystem::remove(out);
}

// A checkpoint that cannot be written (a full disk, a path that is a folder) throws a WriteError
// naming the file and leaves no temporary file; an older checkpoint at the path stays as it was.
TEST(RunIntegrity, ACheckpointThatCannotBeWrittenLeavesNoTemporary) {
  if (sizeof(real) != sizeof(double)) GTEST_SKIP() << "the fixture was written by a double-precision build";
  const Checkpoint c = read_checkpoint(std::string(DEM_SOURCE_DIR) + "/tests/data/checkpoint_v2.bin");
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "dem_ckpt_fails";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "folder" / "inside");
  // every write of the temporary fails (a full disk)
  const std::filesystem::path full = dir / "full.ckpt";
  std::filesystem::create_symlink("/dev/full", dir / "full.ckpt.tmp");
  EXPECT_THROW(write_checkpoint(full.string(), c), WriteError);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(dir / "full.ckpt.tmp")));
  EXPECT_FALSE(std::filesystem::exists(full));
  // the rename fails (the path is a folder that is not empty)
  const std::filesystem::path folder = dir / "folder";
  try {
    write_checkpoint(folder.string(), c);
    ADD_FAILURE() << "wrote over a folder";
  } catch (const WriteError& e) {
    EXPECT_NE(std::string(e.what()).find(folder.string()), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "folder.tmp"));
  EXPECT_TRUE(std::filesystem::is_directory(folder / "inside"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dem::host
