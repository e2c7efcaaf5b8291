// The engines the engine tests run on, as tags for a typed suite, and what the tests share: the
// state compared (by particle id), the comparison, the scene helpers.
//
// Each tag has make(const SceneInputs&) (a new engine over the scene), name (for messages and test
// names), available(&why) (whether it can run here, and why not) and its engine-specific traits:
//   HostEngine  the OpenMP host engine (host/omp/engine.hpp);
//   DeviceOmp   the device engine on Thrust's OpenMP system (in builds that have it);
//   DeviceCuda  the device engine on CUDA: skipped without a device, failing instead under
//               DEM_REQUIRE_GPU=1.
// One source set, two executables: dem_engine_tests (built with g++: HostEngine and DeviceOmp)
// and dem_engine_gpu_tests (DEM_TEST_SYSTEM_CUDA=1: DeviceCuda alone).
//
// Bitwise or not. Both engines call the same core/ bodies in the same sum orders, so with no fused
// multiply-add anywhere (DEM_STRICT_FP=ON, the default: -ffp-contract=off, nvcc --fmad=false) and
// only + - * / sqrt in what feeds back into the forces, they give the same bits, and the tests
// demand it, on the GPU as well. CUDA's sin/cos (in the rotation update) are not glibc's, so the
// orientations q are not compared between the host and CUDA: they feed back into nothing for
// spheres. With DEM_STRICT_FP=OFF each compiler fuses multiply-adds where it likes, differently in
// each translation unit, and chaotic collisions amplify the last bit (the 30k mixer diverges at the
// 1e-4 level within 1,000 steps); then the comparisons between engines use a tolerance (kLooseRel)
// and the long mixer comparison is skipped. Runs of one engine against itself are always bitwise.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <type_traits>
#include <string>
#include <vector>

#include "cuda/device_engine.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"
#include "host/omp/engine.hpp"
#include "host/sim/state_edit.hpp"
#include "support/test_scenes.hpp"

namespace dem::test {

using host::SceneInputs;
using host::Simulation;

struct HostEngine {
  static constexpr const char* name = "HostEngine";
  static constexpr bool is_device = false;
  static constexpr bool is_gpu = false;
  static constexpr bool has_bsp = true;  // the BSP tree broad phase is the host engine's alone
  // Mesh candidate lists kept while the rooms the left-out elements leave each particle last, in a
  // moving body's frame for the particles near it (mesh_rooms_used, mesh_near_body_used); else
  // while each particle's displacement plus the meshes' travel stays within its skin.
  static constexpr bool mesh_lists_by_rooms = true;
  static bool available(std::string*) { return true; }
  static std::unique_ptr<Simulation> make(const SceneInputs& in) {
    return std::make_unique<host::Engine>(in.particles, in.meshes, in.params, in.num_materials, in.settings);
  }
  // Re-sorts the particle arrays by `order` (Engine::permute_particles); false where an engine
  // keeps its own order only.
  static bool resort(Simulation& s, const std::vector<std::int64_t>& order) {
    static_cast<host::Engine&>(s).permute_particles(order);
    return true;
  }
};

template <device::System S>
struct DeviceEngine {
  static constexpr device::System system = S;
  static constexpr const char* name = S == device::System::Cuda ? "DeviceCuda" : "DeviceOmp";
  static constexpr bool is_device = true;
  static constexpr bool is_gpu = S == device::System::Cuda;
  static constexpr bool has_bsp = false;  // refused by name ("host engine only")
  static constexpr bool mesh_lists_by_rooms = false;  // (a travel bound: MeshSkinUsed)
  static bool available(std::string* why) { return device::available(S, why); }
  static std::unique_ptr<Simulation> make(const SceneInputs& in) {
    return device::make_engine(S, in.particles, in.meshes, in.params, in.num_materials, in.settings);
  }
  static bool resort(Simulation&, const std::vector<std::int64_t>&) { return false; }
};
// (Types of their own, not aliases: ctest names a typed test by its type, EngineTest.X<dem::test::DeviceOmp>.)
struct DeviceOmp : DeviceEngine<device::System::Omp> {};
struct DeviceCuda : DeviceEngine<device::System::Cuda> {};

// Every engine of this executable, and its device engines (DEM_HAVE_DEVICE_OMP: the build has the
// OpenMP-system engine).
#if defined(DEM_TEST_SYSTEM_CUDA)
using AllEngines = ::testing::Types<DeviceCuda>;
using DeviceEngines = ::testing::Types<DeviceCuda>;
#define DEM_TEST_HAS_DEVICE 1
#elif defined(DEM_HAVE_DEVICE_OMP)
using AllEngines = ::testing::Types<HostEngine, DeviceOmp>;
using DeviceEngines = ::testing::Types<DeviceOmp>;
#define DEM_TEST_HAS_DEVICE 1
#else
using AllEngines = ::testing::Types<HostEngine>;
#endif

// A fixture for tests on engine E: skipped with the reason where E cannot run; for CUDA, a failure
// instead under DEM_REQUIRE_GPU=1 (on a GPU machine, where a skip would hide a broken setup).
template <class E>
class OnEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (E::available(&why)) return;
    const char* require = std::getenv("DEM_REQUIRE_GPU");
    if (E::is_gpu && require && std::string(require) == "1")
      FAIL() << "DEM_REQUIRE_GPU=1 but the device engine cannot run: " << why;
    GTEST_SKIP() << why;
  }
};

#if defined(DEM_STRICT_FP)
constexpr bool kStrictFp = true;
#else
constexpr bool kStrictFp = false;
#endif
// Relative tolerance between engines without DEM_STRICT_FP: runs that differ by fused
// multiply-adds drift apart from the last bit; over the few hundred to few thousand steps compared
// here the drift measured at most ~1e-9 relative (demo, 5000 steps), so 1e-6 leaves room and still
// fails on any real difference in the physics (a missed contact changes velocities at the percent
// level).
constexpr double kLooseRel = 1e-6;
// Host against device: the same bits under DEM_STRICT_FP (on CUDA too: --fmad=false, IEEE division
// and square root; only the orientation goes through CUDA's own sin/cos, and it feeds back into
// nothing for spheres).
constexpr bool kExactAgainstHost = kStrictFp;
// Whether the orientations of engine E are compared with the host engine's.
template <class E>
constexpr bool compare_orientation_with_host() {
  return !E::is_gpu;
}

inline std::string scenes_dir() { return std::string(DEM_SOURCE_DIR) + "/scenes"; }

inline SceneInputs scene_file(const std::string& rel, std::vector<std::string> overrides = {}) {
  return host::build_scene_inputs(host::load_scene(scenes_dir() + "/" + rel, overrides));
}
inline SceneInputs scene_text(const std::string& yaml, const std::string& name = "scene.yaml",
                              const std::vector<std::string>& overrides = {}) {
  return host::build_scene_inputs(host::load_scene_from_string(yaml, name, overrides));
}
// kBinScene with the given skin (-1: adaptive, per particle) and neighbour-list interval (0: as
// the skins decide, n: a rebuild at least every n steps).
inline SceneInputs bin_scene(double skin = -1, int neighbour_interval = 0) {
  host::SceneConfig c = host::load_scene_from_string(kBinScene, "bin.yaml");
  c.simulation.skin = skin;
  c.simulation.neighbour_interval = neighbour_interval;
  return host::build_scene_inputs(c);
}
// Every loop threaded on the host engine, however few particles (the device engine ignores it: its
// loops always run in parallel).
inline SceneInputs threaded(SceneInputs in) {
  in.settings.parallel_min = 0;
  return in;
}

inline void run(Simulation& s, int steps) {
  for (int k = 0; k < steps; ++k) s.step();
}

// Everything compared, by particle id.
struct State {
  std::map<std::int64_t, std::array<double, 16>> particles;  // x, v, w, force, q
  std::size_t touching = 0, mesh = 0;
  std::vector<Vec3> body_force, body_torque;
};

inline State capture(const Simulation& s) {
  State out;
  const host::ParticleArrays& p = s.particles();
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
inline void expect_same(const State& a, const State& b, bool exact, const std::string& where, bool compare_q = true) {
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
        ADD_FAILURE() << where << ": particle " << id << " field " << k << ": first " << x << ", second " << y
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

// Steps the host engine and device engine E together, comparing every `every` steps; then the
// mesh pass's and the pair pass's counts. compare_q: the orientations too (by default not against
// CUDA, whose sin and cos turn the spheres; polyhedra turn without them).
template <class E>
void compare_run(const SceneInputs& in, int steps, int every, const std::string& name,
                 bool compare_q = compare_orientation_with_host<E>()) {
  std::unique_ptr<Simulation> host = HostEngine::make(in), dev = E::make(in);
  for (int s = 1; s <= steps; ++s) {
    host->step();
    dev->step();
    ASSERT_TRUE(host->status().ok) << name << ": " << host->status().message;
    ASSERT_TRUE(dev->status().ok) << name << ": " << dev->status().message;
    if (s % every == 0 || s == steps) {
      expect_same(capture(*host), capture(*dev), kExactAgainstHost, name + " at step " + std::to_string(s), compare_q);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_EQ(host->stats().fe_contact, dev->stats().fe_contact) << name << ": elements passing the Fast Intersection Test";
  EXPECT_EQ(host->stats().valid_entities, dev->stats().valid_entities) << name << ": H2 contacts";
  EXPECT_EQ(host->stats().pair_contacts, dev->stats().pair_contacts) << name << ": touching pairs summed over steps";
}

// Exported state, a new engine of kind E over it, and the contacts restored: the run goes on as
// the exporting engine's would.
template <class E>
std::unique_ptr<Simulation> restarted_from(const Simulation& first, const SceneInputs& in) {
  SceneInputs again = in;
  host::ContactState contacts;
  first.export_state(again.particles, contacts);
  std::unique_ptr<Simulation> second = E::make(again);
  second->restore_state(contacts, first.step_count());
  return second;
}

// Whether a comparison of runs on engines A and B is bitwise (one engine against itself always; two
// engines under DEM_STRICT_FP), and whether it includes the orientations (not across CUDA's sin/cos).
template <class A, class B>
constexpr bool exact_between() {
  return std::is_same_v<A, B> || kExactAgainstHost;
}
template <class A, class B>
constexpr bool orientations_between() {
  return std::is_same_v<A, B> || (!A::is_gpu && !B::is_gpu);
}
template <class A, class B>
std::string engines_between() {
  return std::string(A::name) + " to " + B::name;
}

// 2N steps on Second, against N steps on First, an exported state, a new Second restored from it,
// and N more: the same bits.
template <class First, class Second>
void expect_restart_gives_the_same_bits() {
  const SceneInputs in = bin_scene();
  const int n = 1500;  // the spheres (thrown down at 0.5 m/s) have landed in the bin by then
  const std::string what = engines_between<First, Second>();
  std::unique_ptr<Simulation> straight = Second::make(in), first = First::make(in);
  run(*straight, 2 * n);
  run(*first, n);
  SceneInputs again = in;
  host::ContactState contacts;
  first->export_state(again.particles, contacts);
  // contacts with history are carried, not just positions
  ASSERT_GT(contacts.pair_a.size(), 20u) << what;
  ASSERT_GT(std::count_if(contacts.mesh_count.begin(), contacts.mesh_count.end(), [](std::uint8_t c) { return c > 0; }), 10)
      << what;
  std::unique_ptr<Simulation> second = Second::make(again);
  second->restore_state(contacts, first->step_count());
  run(*second, n);
  ASSERT_EQ(second->step_count(), straight->step_count()) << what;
  expect_same(capture(*straight), capture(*second), exact_between<First, Second>(), what,
              orientations_between<First, Second>());
}

// A body's motion changed during the run (as a script does between steps): no jump in its pose,
// the new speeds from then on, and a restart on Second from a state First exported right after an
// output (forces current) with the changed motions gives the same bits as the run that went on.
template <class First, class Second>
void expect_changed_motion_and_restart_give_the_same_bits() {
  const SceneInputs in = bin_scene();
  const int n = 800;
  const std::size_t paddle = 1;
  ASSERT_EQ(in.meshes.bodies[paddle].name, "paddle");
  const Vec3 v_new{0.02, 0, 0}, w_new{0, 0, -25};
  const std::string what = engines_between<First, Second>();
  std::unique_ptr<Simulation> straight = Second::make(in), first = First::make(in);
  for (int s = 0; s < n; ++s) straight->step(), first->step();
  straight->compute_forces();
  first->compute_forces();
  const std::vector<Vec3> before = first->meshes().vertices;
  straight->change_body_motion(paddle, v_new, w_new);
  first->change_body_motion(paddle, v_new, w_new);
  first->compute_forces();  // no effect: the forces of this time are already evaluated
  // ParticleArrays and contacts right after the output, with the forces current
  SceneInputs again = in;
  host::ContactState contacts;
  first->export_state(again.particles, contacts);
  ASSERT_TRUE(contacts.forces_current) << what;
  std::unique_ptr<Simulation> second = Second::make(again);
  for (std::size_t b = 0; b < first->meshes().bodies.size(); ++b) second->set_body_motion(b, first->meshes().bodies[b]);
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
  expect_same(capture(*straight), capture(*second), exact_between<First, Second>(), what,
              orientations_between<First, Second>());
}

// The particles of the bin with id % 7 == 3 removed (and an unknown id, ignored), and 20 new ones
// (ids 1000 to 1019, 4 mm, falling at 0.3 m/s) put in above the heap.
struct ParticleEdit {
  std::vector<std::int64_t> remove;
  host::ParticleArrays more;
};
inline ParticleEdit bin_particle_edit(const Simulation& s) {
  ParticleEdit e;
  for (std::int64_t id : s.particles().id)
    if (id % 7 == 3) e.remove.push_back(id);
  e.remove.push_back(123456);  // unknown: ignored
  for (int k = 0; k < 20; ++k)
    e.more.push_back(1000 + k, Vec3{real(-0.04 + 0.02 * (k % 5)), real(-0.03 + 0.02 * (k / 5)), real(0.085)},
                     Vec3{0, 0, real(-0.3)}, Vec3{0, 0, 0}, real(0.004), real(2500), 0, false);
  return e;
}

inline SceneInputs chute_scene(double skin = -1) {
  host::SceneConfig c = host::load_scene_from_string(kPeriodicChuteScene, "chute.yaml");
  c.simulation.skin = skin;
  return host::build_scene_inputs(c);
}

// kPeriodicBoxScene with random velocities (each component uniform in [-1, 1] m/s).
inline SceneInputs periodic_box_scene() {
  SceneInputs in = scene_text(kPeriodicBoxScene, "box.yaml");
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (Vec3& v : in.particles.v) v = Vec3{u(rng), u(rng), u(rng)};
  return in;
}

// Wraps seen over a step: a coordinate that jumped by more than half a period.
inline std::size_t count_wraps(const std::map<std::int64_t, Vec3>& before, const Simulation& s, const PeriodicBox& b) {
  std::size_t wraps = 0;
  const host::ParticleArrays& p = s.particles();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3 d = p.x[i] - before.at(p.id[i]);
    wraps += (b.length.x > 0 && std::abs(d.x) > b.half.x) + (b.length.y > 0 && std::abs(d.y) > b.half.y) +
             (b.length.z > 0 && std::abs(d.z) > b.half.z);
  }
  return wraps;
}
inline std::map<std::int64_t, Vec3> positions_by_id(const Simulation& s) {
  std::map<std::int64_t, Vec3> out;
  for (std::size_t i = 0; i < s.particles().size(); ++i) out[s.particles().id[i]] = s.particles().x[i];
  return out;
}

}  // namespace dem::test
