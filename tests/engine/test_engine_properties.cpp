// What every engine must do, each property written once and run on every engine of the build
// (tests/engine/engines.hpp): the same bits for any skin, rebuild frequency, broad phase, thread
// count and run, lists kept past a skin that end on the very step a left-out pair or element
// meets, restarts and output times that change nothing, particles edited in place, mesh-contact
// capacity and escapes reported, body loads, rolling and plastic contact laws, periodic boundaries.
// Each engine is compared with itself here, bit for bit; the engines against each other are in
// test_engines_agree.cpp.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <set>

#include "engines.hpp"

namespace dem::test {
namespace {

using host::BroadPhaseMethod;
using host::SceneConfig;

template <class E>
class EngineTest : public OnEngine<E> {};
TYPED_TEST_SUITE(EngineTest, AllEngines);

// The scene with the given skin (0: every list made anew at every step), every loop threaded.
SceneInputs with_skin(const SceneConfig& scene, double skin) {
  SceneConfig c = scene;
  c.simulation.skin = skin;
  return threaded(host::build_scene_inputs(c));
}

// ---- Neighbour lists: skins, rebuilds and kept lists never change a result

TYPED_TEST(EngineTest, SkinsAndRebuildsNeverChangeTheResult) {
  // With skin 0 every neighbour list (sphere pairs and mesh candidates) is rebuilt every step from
  // exact distances: the reference. A skin only adds candidates the narrow phase rejects and
  // rebuilds less often, and the history is carried across every rebuild and re-sort; if a list
  // ever missed a contact the trajectories would differ. Variants: a rebuild forced every step with
  // a wide skin, a fixed skin of 3 mm (most of a radius: lists live for many steps), and the
  // default per-particle skins sized by the local speeds, which also keep a list after some
  // particles have moved past their skins while none of them touches a particle it has no pair
  // with (list_holds, through each broad phase's near()). The paddle turns at 10 rad/s, so the
  // mesh-motion bound of the candidate lists is exercised.
  struct Variant {
    const char* name;
    double skin;
    int interval;
    const char* method;  // nullptr: the scene's
  };
  std::vector<Variant> variants = {{"skin 0", 0, 0, nullptr},        {"rebuild every step", 0.004, 1, nullptr},
                                   {"fixed 3 mm", 0.003, 0, nullptr},  {"adaptive", -1, 0, nullptr},
                                   {"adaptive, hgrid", -1, 0, "hgrid"}};
  if (TypeParam::has_bsp) variants.push_back({"adaptive, bsp", -1, 0, "bsp"});
  const int steps = 1500;
  std::vector<host::ContactStats> stats;
  State reference;
  for (const Variant& v : variants) {
    std::vector<std::string> set;
    if (v.method) set.push_back(std::string("broad_phase={method: ") + v.method + "}");
    SceneConfig c = host::load_scene_from_string(kBinScene, "bin.yaml", set);
    c.simulation.skin = v.skin;
    c.simulation.neighbour_interval = v.interval;
    std::unique_ptr<Simulation> sim = TypeParam::make(threaded(host::build_scene_inputs(c)));
    run(*sim, steps);
    ASSERT_TRUE(sim->status().ok) << v.name << ": " << sim->status().message;
    stats.push_back(sim->stats());
    if (stats.size() == 1) {
      reference = capture(*sim);
      EXPECT_GT(reference.mesh, 10u);  // there were mesh contacts to miss
    } else {
      expect_same(reference, capture(*sim), true, v.name);
    }
  }
  EXPECT_EQ(stats[0].broad_phase_builds, std::uint64_t(steps));  // skin 0: a new list every step
  EXPECT_EQ(stats[0].lists_kept, 0u);
  EXPECT_EQ(stats[1].broad_phase_builds, std::uint64_t(steps));  // interval 1: a rebuild every step
  EXPECT_GT(stats[0].broad_phase_builds, 10 * stats[2].broad_phase_builds);
  EXPECT_GT(stats[0].broad_phase_builds, 5 * stats[3].broad_phase_builds);
  for (std::size_t k = 3; k < variants.size(); ++k) EXPECT_GE(stats[k].lists_kept, 10u) << variants[k].name;
  std::printf("[ info ] %s builds: skin 0 %llu, 3 mm %llu, adaptive %llu (steps kept past a skin: %llu, hgrid %llu)\n",
              TypeParam::name, static_cast<unsigned long long>(stats[0].broad_phase_builds),
              static_cast<unsigned long long>(stats[2].broad_phase_builds),
              static_cast<unsigned long long>(stats[3].broad_phase_builds),
              static_cast<unsigned long long>(stats[3].lists_kept), static_cast<unsigned long long>(stats[4].lists_kept));
}

TYPED_TEST(EngineTest, AListKeptPastASkinEndsWhenThatParticleMeetsANewPartner) {
  // test::chain_scene: a sphere at 1 m/s hits one at rest (a listed pair), which then runs 0.15 mm
  // to a third at rest. At the last build before it gets there, their half skins (a twentieth of a
  // radius: 16 steps at 1 m/s are less) leave a gap, so that pair is not listed; the runner soon
  // moves past its skin and the list lives on (list_holds) until the step it touches the third,
  // which must end it: a list kept one step longer would miss that contact. The skin-0 run (a new
  // list every step) is the reference, bit for bit, on every broad phase of the engine.
  SceneConfig exact = host::load_scene_from_string(chain_scene(), "chain.yaml");
  exact.simulation.skin = 0;
  std::unique_ptr<Simulation> ref = TypeParam::make(host::build_scene_inputs(exact));
  run(*ref, 400);
  const State want = capture(*ref);
  EXPECT_GT(want.particles.at(2)[3], 0.5) << "the third sphere was hit";  // (ids from 0, in file order)
  std::vector<BroadPhaseMethod> methods = {BroadPhaseMethod::Grid, BroadPhaseMethod::HGrid};
  if (TypeParam::has_bsp) methods.push_back(BroadPhaseMethod::Bsp);
  for (BroadPhaseMethod method : methods) {
    SceneConfig adaptive = exact;
    adaptive.simulation.skin = -1;
    adaptive.broad_phase.method = method;
    std::unique_ptr<Simulation> sim = TypeParam::make(host::build_scene_inputs(adaptive));
    run(*sim, 400);
    const std::string name = sim->broad_phase_report().method;
    EXPECT_GE(sim->stats().lists_kept, 100u) << name;
    EXPECT_LT(sim->stats().broad_phase_builds, 20u) << name;
    expect_same(want, capture(*sim), true, name);
  }
}

TYPED_TEST(EngineTest, AKeptMeshListEndsWhenItsParticleMeetsAnElementLeftOut) {
  // test::wall_flight_scene: a sphere flies at 10 m/s at a wall 8.5 mm away (30 more rest behind
  // the wall, so the flight stays inside the particles' box, where the bins hold every element, and
  // the uniform grid answers the pair lists' checks). Its mesh skin (half its radius) leaves the
  // wall out of its list; it is past that skin after 50 steps, and the lists live on
  // (mesh_lists_hold) until the step it touches the wall, which must end them: kept one step
  // longer, the sphere would fly through. The skin-0 run is the reference, bit for bit.
  SceneConfig c = host::load_scene_from_string(wall_flight_scene(), "wall.yaml");
  c.simulation.skin = 0;
  std::unique_ptr<Simulation> ref = TypeParam::make(host::build_scene_inputs(c));
  c.simulation.skin = -1;
  std::unique_ptr<Simulation> sim = TypeParam::make(host::build_scene_inputs(c));
  for (int s = 0; s < 1500; ++s) ref->step(), sim->step();
  const State want = capture(*ref);
  EXPECT_GT(want.particles.at(0)[3], 1.0) << "the sphere bounced off the wall";
  EXPECT_GE(sim->stats().mesh_lists_kept, 500u);
  EXPECT_LT(sim->stats().mesh_list_renewals, 31u * 10);  // (each renewal makes all 31 lists)
  expect_same(want, capture(*sim), true, "adaptive skins");
}

// A wall moving onto a small sphere at rest (test::moving_wall_scene), under the driver's checks,
// whose copy (on a device engine) brings back the next step's kept mesh lists' check on the meshes
// posed apart at the next step's time (pose_ahead). Under a travel bound the small sphere's list is
// kept past its skin from the 50th step, checked every step, until the step the wall reaches it
// (about the 150th), which must end it there, not a step later (a check against the wall where it
// was a step before would let the wall pass into the sphere unseen for a step); under rooms
// (mesh_lists_by_rooms) the lists are renewed as the wall closes in instead. The skin-0 run is the
// reference, bit for bit.
TYPED_TEST(EngineTest, AKeptMeshListEndsWhenAMovingWallReachesItsParticleUnderTheDriversChecks) {
  SceneConfig c = host::load_scene_from_string(moving_wall_scene(), "moving_wall.yaml");
  c.simulation.skin = 0;
  std::unique_ptr<Simulation> ref = TypeParam::make(host::build_scene_inputs(c));
  c.simulation.skin = -1;
  std::unique_ptr<Simulation> sim = TypeParam::make(host::build_scene_inputs(c));
  const HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
  std::uint64_t kept_at_touch = 0;
  for (int s = 0; s < 400; ++s) {
    ref->step();
    sim->step();
    ASSERT_TRUE(sim->check_health(limits)) << sim->status().message;
    if (kept_at_touch == 0 && ref->mesh_contacts() > 0) kept_at_touch = sim->stats().mesh_lists_kept;
  }
  const State want = capture(*ref);
  EXPECT_GT(want.particles.at(0)[3], 1.0) << "the wall pushed the sphere";
  if (!TypeParam::mesh_lists_by_rooms) {
    EXPECT_GE(kept_at_touch, 50u) << "steps that kept the lists past a skin before the wall touched";
  }
  expect_same(want, capture(*sim), true, "adaptive skins under the driver's checks");
}

// The health check passes over the touching pairs and the mesh slots only where the last passes'
// deepest overlaps, with every particle's move since (pair_overlap_bound), reach its limit. At
// several points of the bin's run (spheres on the floor, on each other and on the turning paddle)
// under the driver's checks, a limit just above the deepest overlap (max_overlap, which passes over
// them all) passes, and one just below it stops the run on that overlap: the bound never skipped
// an overlap beyond the limit.
TYPED_TEST(EngineTest, TheHealthCheckFindsTheDeepestOverlapJustBeyondItsLimit) {
  for (const int steps : {150, 300, 450, 600}) {
    std::unique_ptr<Simulation> sim = TypeParam::make(bin_scene());
    HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
    for (int s = 0; s < steps; ++s) {
      sim->step();
      ASSERT_TRUE(sim->check_health(limits)) << sim->status().message;
    }
    const double deepest = sim->max_overlap();
    ASSERT_GT(deepest, 1e-4) << "after " << steps << " steps";
    limits.max_overlap = real(deepest * (1 + 1e-6));
    EXPECT_TRUE(sim->check_health(limits)) << "after " << steps << " steps: " << sim->status().message;
    limits.max_overlap = real(deepest * (1 - 1e-6));
    EXPECT_FALSE(sim->check_health(limits)) << "after " << steps << " steps, deepest " << deepest;
    EXPECT_EQ(sim->status().problem, kOverlap) << sim->status().message;
  }
}

TYPED_TEST(EngineTest, LongMeshCandidateListsWithASkin) {
  // test::fan_floor_scene: the sphere over the centre of a fan of 24 triangles has all 24 in its
  // list, three more slide across the triangles' edges, all four on the floor throughout. With a
  // skin of 4 mm the lists live for many steps and must give the skin-0 trajectories bit for bit.
  const SceneConfig scene = host::load_scene_from_string(fan_floor_scene(), "fan.yaml");
  std::unique_ptr<Simulation> a = TypeParam::make(with_skin(scene, 0)), b = TypeParam::make(with_skin(scene, 0.004));
  std::size_t contact_steps = 0;  // steps with all four spheres on the floor
  for (int s = 0; s < 1000; ++s) {
    a->step();
    b->step();
    contact_steps += a->mesh_contacts() >= 4 ? 1 : 0;
    ASSERT_TRUE(a->status().ok) << a->status().message;
    ASSERT_TRUE(b->status().ok) << b->status().message;
  }
  EXPECT_EQ(contact_steps, 1000u);
  // With the skin, a list lives for tens of steps (the spheres move 4 um per step).
  EXPECT_LT(5 * b->stats().mesh_list_renewals, a->stats().mesh_list_renewals);
  expect_same(capture(*a), capture(*b), true, "skin 4 mm");
}

TYPED_TEST(EngineTest, MeshListsOfSpheresCarriedByATurningBodyOutliveItsTravel) {
  // test::turning_plate_scene: spheres fly with a turning plate, 1.5 skins above it. In the plate's
  // frame they drift less than 1.8 mm in the run (on their tangents), so under rooms
  // (mesh_lists_by_rooms: mesh_near_body_used) their lists hold, while the plate's travel, 28 mm at
  // its corners, ends them every 90 steps or more under a travel bound (mesh_skin_used): at most
  // 22 times in the run. No still body: their displacement alone ends nothing. (They never touch
  // the plate: the skin-0 run confirms that the lists miss nothing; the soundness of the kept lists
  // is what the wall and bin tests check.)
  const SceneConfig scene = host::load_scene_from_string(turning_plate_scene(), "plate.yaml");
  std::unique_ptr<Simulation> a = TypeParam::make(with_skin(scene, 0)),
                              b = TypeParam::make(with_skin(scene, kTurningPlateSkin));
  for (int s = 0; s < 2000; ++s) a->step(), b->step();
  ASSERT_TRUE(b->status().ok) << b->status().message;
  const std::uint64_t n = b->num_particles();
  EXPECT_EQ(a->stats().mesh_list_renewals, 2000 * n);  // skin 0: new lists every step
  // Under rooms the lists made at the start hold; the one re-sort of the particle arrays in the run
  // (every 16th neighbour-list rebuild, at step 1808) makes them anew.
  EXPECT_LE(b->stats().mesh_list_renewals, (TypeParam::mesh_lists_by_rooms ? 2 : 22) * n);
  expect_same(capture(*a), capture(*b), true, "skin 2 mm");
}

TYPED_TEST(EngineTest, FastWallIsNeverMissedByTheCandidateLists) {
  // test::kFastWallScene: a wall translating at 1 m/s into spheres that fly at it at 0.5 m/s. The
  // candidate lists must account for the wall's own travel, not only the spheres' (the slow paddle
  // of the bin scene does not show it): a list that missed the wall would let a sphere pass through
  // it. The skin-0 run (lists made anew every step) is the reference, and every sphere must bounce
  // off the wall (vx > 0 at the end); with a fixed skin of 3 mm and with the adaptive skins (pair
  // and mesh, sized by the spheres' and the wall's speeds).
  const SceneConfig scene = host::load_scene_from_string(kFastWallScene, "wall.yaml");
  std::unique_ptr<Simulation> a = TypeParam::make(with_skin(scene, 0)), b = TypeParam::make(with_skin(scene, 0.003)),
                              c = TypeParam::make(with_skin(scene, -1));
  for (int s = 0; s < 3000; ++s) a->step(), b->step(), c->step();
  ASSERT_TRUE(b->status().ok) << b->status().message;
  ASSERT_TRUE(c->status().ok) << c->status().message;
  const host::ParticleArrays& p = b->particles();
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_GT(p.v[i].x, 0.0) << "particle " << p.id[i] << " missed the wall";
  EXPECT_LT(5 * b->stats().mesh_list_renewals, a->stats().mesh_list_renewals);
  const State want = capture(*a);
  expect_same(want, capture(*b), true, "skin 3 mm");
  EXPECT_LT(5 * c->stats().mesh_list_renewals, a->stats().mesh_list_renewals);
  if (TypeParam::mesh_lists_by_rooms) {  // (under a travel bound the wall's 1 m/s puts every sphere past its skin)
    EXPECT_GE(c->stats().mesh_lists_kept, 10u);  // lists kept past a mesh skin (mesh_lists_hold)
  }
  expect_same(want, capture(*c), true, "adaptive skins");
}

// Per-particle mesh skins on a wide distribution (test::wide_distribution_floor_scene): 0.5 mm
// spheres settling on a floor of 1 mm quads, and one 10 mm sphere landing on them. With one skin
// for all (half the largest radius, 5 mm) each fine sphere keeps every quad within 5.5 mm, about
// 95; with its own adaptive skin (half its radius when slow) the sphere grown to at most 0.75 mm
// meets at most 9 quads (2 by 2 on average). The lists must still never miss a contact: skin 0 is
// the reference, bit for bit.
TYPED_TEST(EngineTest, MeshSkinsPerParticleOnAWideDistribution) {
  const SceneConfig scene = host::load_scene_from_string(wide_distribution_floor_scene(), "wide.yaml");
  SceneConfig exact = scene, fixed = scene, adaptive = scene;
  exact.simulation.skin = 0;
  fixed.simulation.skin = 0.005;  // the largest sphere's adaptive mesh skin, for every sphere
  adaptive.simulation.skin = -1;
  std::unique_ptr<Simulation> a = TypeParam::make(host::build_scene_inputs(exact)),
                              b = TypeParam::make(host::build_scene_inputs(fixed)),
                              c = TypeParam::make(host::build_scene_inputs(adaptive));
  const int steps = 2500;
  std::uint64_t fe_before = 0;
  for (int s = 0; s < steps; ++s) {
    if (s == steps / 2) fe_before = c->stats().fe_potential;
    a->step();
    b->step();
    c->step();
    ASSERT_TRUE(c->status().ok) << c->status().message;
  }
  const double n = double(c->num_particles());
  ASSERT_EQ(n, 151.0);
  // Fast Intersection Tests per particle-step over the second half (the fines are on the floor,
  // the boulder among them): the boulder's own list holds about 300 quads, 2 per particle.
  const double adaptive_tests = double(c->stats().fe_potential - fe_before) / (n * (steps - steps / 2));
  const double fixed_tests = double(b->stats().fe_potential) / (n * steps);
  EXPECT_LT(adaptive_tests, 9.0 + 2.5) << "fixed skin: " << fixed_tests;
  std::printf("[ info ] %s: Fast Intersection Tests per particle-step: %.2f with per-particle skins, %.2f with one 5 mm skin\n",
              TypeParam::name, adaptive_tests, fixed_tests);
  EXPECT_GT(fixed_tests, 5 * adaptive_tests);
  EXPECT_GT(c->mesh_contacts(), 100u);  // the fines rest on the floor
  EXPECT_GE(c->touching_pairs(), 3u);   // and the boulder on them
  EXPECT_LT(5 * c->stats().mesh_list_renewals, a->stats().mesh_list_renewals);
  const State want = capture(*a);
  expect_same(want, capture(*b), true, "fixed 5 mm");
  expect_same(want, capture(*c), true, "adaptive");
}

// ---- Determinism

TYPED_TEST(EngineTest, BitwiseAcrossThreadCountsAndRuns) {
  // The bin for 1, 2 and 4 threads, and 4 again (run to run), every loop threaded: every field of
  // every particle, the contact counts and the body loads, the same bits.
  const SceneInputs in = threaded(bin_scene());
  State reference;
  Vec3 ref_torque{0, 0, 0};
  const int saved = omp_get_max_threads();
  bool first = true;
  for (int threads : {1, 2, 4, 4}) {
    omp_set_num_threads(threads);
    std::unique_ptr<Simulation> sim = TypeParam::make(in);
    run(*sim, 1300);  // the bed is on the paddle by then
    const State state = capture(*sim);
    const Vec3 torque = sim->body_torque()[1];
    if (first) {
      reference = state;
      ref_torque = torque;
      first = false;
      EXPECT_NE(torque.z, 0.0);  // the paddle is loaded
    } else {
      expect_same(reference, state, true, std::to_string(threads) + " threads");
      EXPECT_EQ(std::memcmp(&torque, &ref_torque, sizeof(Vec3)), 0) << threads << " threads";
    }
  }
  omp_set_num_threads(saved);
}

// ---- Forces, outputs and restarts

// A step advances most particles without writing their force and torque fields (on the host
// engine); particles() and export_state give them again, which must be the forces the step
// advanced them with: those compute_forces gives at the same state on a twin engine (every field
// bitwise, by id), whether read after every step or after several, and (on an engine that can
// re-sort its arrays on request) after a re-sort, which keeps the trajectory's bits.
TYPED_TEST(EngineTest, ForcesReadAfterAStepAreThoseItAdvancedWith) {
  const SceneInputs in = threaded(bin_scene());
  std::unique_ptr<Simulation> twin = TypeParam::make(in), stepped = TypeParam::make(in);
  using Loads = std::map<std::int64_t, std::array<double, 6>>;
  const auto loads = [](const host::ParticleArrays& p) {
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
    twin->compute_forces();
    const Loads expected = loads(twin->particles());
    twin->step();
    stepped->step();
    if (s % 7 != 6 && s < 3990) continue;  // (read after several steps, and after each of the last ones)
    ++compared;
    if (s % 3 == 0) {  // re-sorted before the read (the loads stay in the old order)
      std::vector<std::int64_t> order(stepped->num_particles());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(order.size() - 1 - i);
      TypeParam::resort(*stepped, order);
    }
    if (s % 2 == 0) {
      ASSERT_TRUE(same(loads(stepped->particles()), expected)) << "step " << s;
    } else {
      host::ParticleArrays exported;
      host::ContactState contacts;
      stepped->export_state(exported, contacts);
      ASSERT_TRUE(same(loads(exported), expected)) << "step " << s << " (export_state)";
    }
    for (const auto& [id, f] : expected) loaded += f[2] != 0 ? 1 : 0;
  }
  EXPECT_GT(compared, 500);
  EXPECT_GT(loaded, 50 * compared);  // on average, in contact with a wall or another bead (74 here)
}

// Output times: compute_forces brings the forces, body loads and mesh pose to the current time
// (what a snapshot writes) and the next step integrates with them, so a run that stops for output
// every few steps (twice in a row at times) gives the same bits as one that never does; and the
// forces it gives are those the next step of the plain run uses.
TYPED_TEST(EngineTest, ForcesAtOutputTimesNeverChangeTheResult) {
  const SceneInputs in = bin_scene();
  std::unique_ptr<Simulation> plain = TypeParam::make(in), probed = TypeParam::make(in);
  for (int s = 1; s <= 900; ++s) {
    if (s % 7 == 0) {
      probed->compute_forces();
      if (s % 2 == 0) probed->compute_forces();  // a second call before the step does nothing
      EXPECT_EQ(probed->meshes().time, probed->time()) << "the mesh pose is of the current time";
      const State at_t = capture(*probed);
      plain->step();
      probed->step();
      // plain's force fields and body loads are now those its step evaluated at the time where
      // probed computed them
      const State used = capture(*plain);
      for (const auto& [id, f] : at_t.particles)
        for (int k = 9; k < 12; ++k) ASSERT_EQ(f[k], used.particles.at(id)[k]) << "step " << s << " id " << id;
      for (std::size_t b = 0; b < at_t.body_force.size(); ++b) {
        ASSERT_EQ(norm(at_t.body_force[b] - used.body_force[b]), 0) << "body " << b;
        ASSERT_EQ(norm(at_t.body_torque[b] - used.body_torque[b]), 0) << "body " << b;
      }
    } else {
      plain->step();
      probed->step();
    }
  }
  expect_same(capture(*plain), capture(*probed), true, "with outputs against without");
}

// 2N steps, against N steps, an exported state, a new engine of the same kind restored from it,
// and N more: the same bits (across engines: test_engines_agree.cpp).
TYPED_TEST(EngineTest, RestartFromAnExportedStateGivesTheSameBits) {
  expect_restart_gives_the_same_bits<TypeParam, TypeParam>();
}

TYPED_TEST(EngineTest, ChangedMotionAndRestartAfterAnOutputGiveTheSameBits) {
  expect_changed_motion_and_restart_give_the_same_bits<TypeParam, TypeParam>();
}

// Particles removed and added between steps, in place (Simulation::edit_particles): the same bits
// as the export / edit / new engine / restore path. Then every particle removed: an empty run
// steps on.
TYPED_TEST(EngineTest, ParticlesRemovedAndAddedInPlace) {
  const SceneInputs in = bin_scene();
  const int n = 600;
  std::unique_ptr<Simulation> edited = TypeParam::make(in), rebuilt = TypeParam::make(in);
  for (int s = 0; s < n; ++s) edited->step(), rebuilt->step();
  const ParticleEdit edit = bin_particle_edit(*edited);
  const std::size_t before = edited->particles().size();
  EXPECT_EQ(edited->edit_particles(edit.remove, edit.more), edit.remove.size() - 1);
  EXPECT_EQ(edited->particles().size(), before - (edit.remove.size() - 1) + 20);
  {  // the reference path: exported state edited, a new engine restored from it
    host::ParticleArrays p;
    host::ContactState c;
    rebuilt->export_state(p, c);
    std::vector<std::uint8_t> keep(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) keep[i] = p.id[i] % 7 != 3;
    host::keep_particles(p, c, keep);
    host::append_particles(p, c, edit.more);
    SceneInputs again = in;
    again.particles = p;
    const std::uint64_t step = rebuilt->step_count();
    rebuilt = TypeParam::make(again);
    rebuilt->restore_state(c, step);
  }
  for (int s = 0; s < n; ++s) edited->step(), rebuilt->step();
  ASSERT_TRUE(edited->status().ok) << edited->status().message;
  expect_same(capture(*rebuilt), capture(*edited), true, "in place vs rebuilt");
  // The statistics are sums over the steps an engine ran, and their step count says how many: the
  // restored engine's n, not its step number (summary.json's per-particle means divide by it).
  EXPECT_EQ(edited->stats().steps, std::uint64_t(2 * n));
  EXPECT_EQ(rebuilt->stats().steps, std::uint64_t(n));
  EXPECT_EQ(rebuilt->step_count(), std::uint64_t(2 * n));
  // everything goes: the run steps on empty
  const std::vector<std::int64_t> all(edited->particles().id);
  EXPECT_EQ(edited->edit_particles(all, host::ParticleArrays{}), all.size());
  run(*edited, 10);
  EXPECT_EQ(edited->particles().size(), 0u);
  EXPECT_TRUE(edited->status().ok) << edited->status().message;
}

TYPED_TEST(EngineTest, BodyLoadIsTheSumOfParticleContactForces) {
  // Newton's third law across the particle-mesh interface: with only mesh contacts (one sphere
  // resting on the bin's floor), the floor's load equals minus the sphere's contact force.
  SceneConfig scene = host::load_scene_from_string(kBinScene, "bin.yaml");
  scene.fills.clear();
  scene.meshes.pop_back();  // no paddle
  host::ParticleSpec sphere;
  sphere.position = {0.03, 0.03, 0.005 - 5.5e-6 /* static Hertz overlap */};
  sphere.velocity = {0.1, 0, 0};
  sphere.radius = 0.005;
  sphere.material = "grain";
  scene.particles.push_back(sphere);
  const SceneInputs in = host::build_scene_inputs(scene);
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  // the body loads' unit (host::LoadSizing, as the engines size it)
  host::LoadSizing sizing;
  sizing.start(in.settings, in.num_materials, in.particles.material, in.particles.radius);
  sizing.set_bodies(in.meshes);
  const double unit = sizing.quantum(in.params, in.num_materials).body_force_unit;
  EXPECT_LT(unit, 2e-12 * 9.81 / double(in.particles.inv_mass[0]));  // (1.4e-14 N)
  int in_contact = 0;
  for (int s = 0; s < 2000; ++s) {
    sim->step();
    const Vec3 f = sim->particles().force[0];
    const Vec3 fb = sim->body_force()[0];
    if (f.z > 0) ++in_contact;
    // Opposite: the same numbers with the sign flipped, the body's rounded to its unit (one term).
    ASSERT_NEAR(fb.x, -f.x, 0.5 * unit);
    ASSERT_NEAR(fb.z, -f.z, 0.5 * unit);
  }
  EXPECT_GT(in_contact, 1000);
}

// ---- Stops and health checks

TYPED_TEST(EngineTest, FullMeshContactListStopsTheRunWithAMessage) {
  // test::kCageScene: a sphere with 12 valid facet contacts, more than the capacity
  // kMaxMeshContacts = 8. The run must stop with a message naming the particle and the step.
  std::unique_ptr<Simulation> sim = TypeParam::make(scene_text(kCageScene, "cage.yaml"));
  sim->step();
  ASSERT_FALSE(sim->status().ok);
  const std::string& msg = sim->status().message;
  EXPECT_NE(msg.find("particle 0 has 12 valid mesh contacts at step 0 "), std::string::npos) << msg;
  EXPECT_NE(msg.find("kMaxMeshContacts = 8"), std::string::npos) << msg;
  // A second step taken without asking (on a device engine the pass's counts wait on the device
  // until something asks: status here, or the next step's skin tests) learns of it, and names the
  // step it happened in.
  std::unique_ptr<Simulation> again = TypeParam::make(scene_text(kCageScene, "cage.yaml"));
  again->step();
  again->step();
  ASSERT_FALSE(again->status().ok);
  EXPECT_EQ(again->status().message, msg);
}

TYPED_TEST(EngineTest, AFullMeshContactListIsNotLostToAnEscapeInTheSameStep) {
  // The cage's sphere has more mesh contacts than its block holds; a second sphere lies outside
  // the health checks' domain (test::cage_and_escaped_sphere_scene). The first error stands: the
  // escape, which the driver's on_escape: remove would clear by removing the sphere, does not
  // replace it. Without the overflow (the outside sphere alone) the escape is found.
  const HealthLimits limits{1e3, Vec3{-2, -2, -2}, Vec3{2, 2, 2}, 0.5};
  std::unique_ptr<Simulation> sim = TypeParam::make(scene_text(cage_and_escaped_sphere_scene(true), "cage.yaml"));
  sim->compute_forces();
  EXPECT_FALSE(sim->check_health(limits));
  EXPECT_NE(sim->status().message.find("particle 0 has 12 valid mesh contacts"), std::string::npos) << sim->status().message;
  EXPECT_NE(sim->status().problem, kEscaped);
  std::unique_ptr<Simulation> alone = TypeParam::make(scene_text(cage_and_escaped_sphere_scene(false), "cage.yaml"));
  alone->compute_forces();
  EXPECT_FALSE(alone->check_health(limits));
  EXPECT_EQ(alone->status().problem, kEscaped) << alone->status().message;
}

// The phase times (on CUDA from events around each phase's kernels, read when asked for): every
// phase that runs has a time, and together they fit within the wall time of the steps (a time
// added twice, or to another phase's sum, would exceed it; one never read would stay zero).
TYPED_TEST(EngineTest, PhaseTimesAreEachPhasesOwnAndFitTheWallTime) {
  std::unique_ptr<Simulation> sim = TypeParam::make(bin_scene());
  const auto start = std::chrono::steady_clock::now();
  run(*sim, 400);
  const host::PhaseTimes t = sim->phase_times();  // (waits for a device's last phases)
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(sim->status().ok) << sim->status().message;
  ASSERT_GT(sim->stats().pair_contacts, 0u);
  ASSERT_GT(sim->stats().valid_entities, 0u);  // spheres touch each other and the walls
  for (const auto& [name, v] : {std::pair<const char*, double>{"broad phase", t.broad_phase}, {"pairs", t.pair_contacts},
                                {"mesh bins", t.mesh_bins}, {"mesh contacts", t.mesh_contacts},
                                {"gather", t.gather}, {"mesh motion", t.mesh_motion}})
    EXPECT_GT(v, 0) << name;
  EXPECT_LE(t.total(), wall) << "the phases' times add up to more than the steps took";
  const host::PhaseTimes again = sim->phase_times();  // nothing pending is added twice
  EXPECT_EQ(again.total(), t.total());
}

// ---- Contact laws on the engines

TYPED_TEST(EngineTest, EpsdHoldsASphereOnASlopeTheConstantTorqueLetsCreep) {
  // tan alpha = 0.1 below mu_r = 0.2: the rolling resistance can hold the sphere. With EPSD the
  // spring takes the steady load and the dashpot the rocking: after 0.4 s the sphere is at rest to
  // 1e-9 m/s, at two time steps. The constant torque resists only while the sphere turns, so it
  // creeps on at a steady speed of order g sin(alpha) dt.
  const double alpha = std::atan(0.1);
  for (double dt : {1e-5, 4e-5}) {
    std::unique_ptr<Simulation> epsd = TypeParam::make(scene_text(sphere_on_slope_scene(alpha, "epsd", 0.2, dt), "slope.yaml"));
    std::unique_ptr<Simulation> constant =
        TypeParam::make(scene_text(sphere_on_slope_scene(alpha, "constant_torque", 0.2, dt), "slope.yaml"));
    const int steps = static_cast<int>(0.4 / dt);
    for (int s = 0; s < steps; ++s) epsd->step(), constant->step();
    const std::string what = "dt " + std::to_string(dt);
    EXPECT_LT(norm(epsd->particles().v[0]), 1e-9) << what;
    EXPECT_LT(std::abs(epsd->particles().x[0].x), 1e-4) << what;  // settled where it was put
    EXPECT_GT(constant->particles().v[0].x, 0.1 * 9.81 * std::sin(alpha) * dt) << what;
  }
}

TYPED_TEST(EngineTest, PerfectlyPlasticColumnComesToRestAndStays) {
  // Restitution 0 (test::plastic_column_scene): five spheres dropped in a column onto a floor end
  // without a bounce and come to rest: after 0.3 s every sphere is still to 1e-9 m/s, the floor
  // carries the column's weight to 1e-9, and over the next 0.1 s no sphere moves by more than
  // 1e-14 m (locked contacts hold by position: no creep, no chatter).
  const SceneInputs in = scene_text(plastic_column_scene(), "column.yaml");
  const double weight = 5 * 9.81 / in.particles.inv_mass[0];
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  run(*sim, 15000);
  const std::vector<Vec3> x = sim->particles().x;
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LT(norm(sim->particles().v[i]), 1e-9) << "sphere " << i;
  EXPECT_NEAR(std::abs(sim->body_force()[0].z), weight, 1e-9 * weight);
  run(*sim, 5000);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LT(norm(sim->particles().x[i] - x[i]), 1e-14) << "sphere " << i;
}

TYPED_TEST(EngineTest, RollingDecelerationMatchesTheAnalyticRate) {
  // A sphere rolling without slip on a flat floor at 1 m/s against the rolling torque
  // M = mu_r R F_n = mu_r R m g: about the contact point (I + m R^2) dw/dt = -M, so it slows at
  // a = (5/7) mu_r g (I = 2/5 m R^2), with either model (EPSD's spring is at its cap while it
  // rolls). After 0.3 s: v = 1 - 0.3 (5/7) mu_r g. Within 1 %: the static overlap moves the contact
  // point by delta/R ~ 5e-4, and the first milliseconds of the contact settle.
  const double mu_r = 0.1, t = 0.3, dt = 2e-5;
  const double expected = 1.0 - t * 5.0 / 7.0 * mu_r * 9.81;
  for (const char* model : {"constant_torque", "epsd"}) {
    std::unique_ptr<Simulation> sim = TypeParam::make(scene_text(sphere_on_slope_scene(0, model, mu_r, dt, 1.0), "slope.yaml"));
    run(*sim, static_cast<int>(t / dt + 0.5));
    const host::ParticleArrays& p = sim->particles();
    EXPECT_NEAR(p.v[0].x, expected, 0.01 * (1.0 - expected)) << model;
    EXPECT_NEAR(p.w[0].y * 0.005, p.v[0].x, 1e-3) << model << ": rolling, not sliding";
  }
}

// ---- Periodic boundaries

TYPED_TEST(EngineTest, PeriodicSkinsAndRestartsNeverChangeTheResult) {
  // Positions are wrapped as they cross (not at rebuilds), so skin 0, the adaptive skins and a
  // fixed skin give the same bits on the periodic chute (test::kPeriodicChuteScene); a restart from
  // an exported state too.
  const int steps = 2500;
  State reference;
  bool first = true;
  for (double skin : {0.0, -1.0, 0.003}) {
    std::unique_ptr<Simulation> sim = TypeParam::make(chute_scene(skin));
    run(*sim, steps);
    if (first) {
      reference = capture(*sim);
      first = false;
    } else {
      expect_same(reference, capture(*sim), true, "skin " + std::to_string(skin));
    }
  }
  const SceneInputs in = chute_scene();
  std::unique_ptr<Simulation> start = TypeParam::make(in);
  run(*start, steps / 2);
  std::unique_ptr<Simulation> second = restarted_from<TypeParam>(*start, in);
  run(*second, steps - steps / 2);
  expect_same(reference, capture(*second), true, "restarted");
}

TYPED_TEST(EngineTest, PeriodicAxesWhereNothingCrossesGiveTheSameBits) {
  // The bin's walls keep every sphere well inside a periodic box larger than the bin: nothing
  // crosses, nothing touches across a face, so the run has the bits of the same run without
  // periodic axes (the grid differs; results never depend on the particle order).
  State runs[2];
  for (int periodic = 0; periodic < 2; ++periodic) {
    SceneConfig c = host::load_scene_from_string(kBinScene, "bin.yaml");
    c.domain.given = true;
    c.domain.min = {-0.1, -0.1, -0.05};
    c.domain.max = {0.1, 0.1, 0.3};
    c.domain.periodic[0] = c.domain.periodic[1] = c.domain.periodic[2] = periodic != 0;
    std::unique_ptr<Simulation> sim = TypeParam::make(host::build_scene_inputs(c));
    run(*sim, 1500);
    runs[periodic] = capture(*sim);
  }
  expect_same(runs[0], runs[1], true, "periodic against not");
}

TYPED_TEST(EngineTest, MomentumIsConservedAcrossPeriodicFaces) {
  // test::kPeriodicBoxScene: a box periodic on all three axes, no walls, no gravity, 400 spheres
  // with random velocities collide, many across the faces. Every pair force acts on both spheres
  // with opposite signs, so the total momentum stays what it was up to round-off: about 1e-16 of
  // sum |m v| per step, so < 1e-12 over 2000 steps; a contact seen from one side only would change
  // it at the 1e-3 level.
  const SceneInputs in = periodic_box_scene();
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  auto momentum = [&](double& scale) {
    const host::ParticleArrays& p = sim->particles();
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
      const host::ParticleArrays& p = sim->particles();
      for (std::size_t i = 0; i < p.size(); ++i)
        for (std::size_t j = i + 1; j < p.size(); ++j)
          across += norm(p.x[i] - p.x[j]) > 0.025 &&
                    norm(nearest_image(in.settings.periodic, p.x[i] - p.x[j])) < p.radius[i] + p.radius[j];
    }
    ASSERT_TRUE(sim->status().ok) << sim->status().message;
  }
  const Vec3 p1 = momentum(scale);
  EXPECT_LT(norm(p1 - p0), 1e-12 * scale);
  EXPECT_GT(wraps, 100u);
  EXPECT_GT(across, 5u);
  EXPECT_GT(sim->stats().pair_contacts, 1000u);
}

TYPED_TEST(EngineTest, SphereRollsAcrossPeriodicFacesAsOnALongPlate) {
  // test::rolling_sphere_scene: one sphere thrown along a plate that is periodic in x (a crossing
  // lands on the other element, found only by the search across the face) against the same sphere
  // on a plate 0.6 m long: it slides, then rolls, crossing the faces. Its height, velocity and spin
  // are the same (the facet contact does not depend on x), its x the same modulo the period (it
  // crosses three times); and a crossing does not renew the mesh candidate lists (the search
  // already looked across the face).
  std::unique_ptr<Simulation> flat = TypeParam::make(scene_text(rolling_sphere_scene(false), "roll.yaml")),
                              wrapped = TypeParam::make(scene_text(rolling_sphere_scene(true), "roll.yaml"));
  const double period = 0.05;
  int crossings = 0;
  for (int s = 0; s < 5000; ++s) {
    const double x_before = wrapped->particles().x[0].x;
    flat->step();
    wrapped->step();
    crossings += std::abs(wrapped->particles().x[0].x - x_before) > 0.5 * period;
    ASSERT_TRUE(wrapped->status().ok) << wrapped->status().message;
  }
  const host::ParticleArrays &a = flat->particles(), &b = wrapped->particles();
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

// ---- Broad phases

// The polydisperse bin (test::kPolydisperseBinScene) and the periodic chute: the uniform grid, the
// HGrid with its chosen levels and with given cell sizes, auto and (on the host engine) the BSP
// tree find the same candidate pairs, so every run gives the same bits. A device engine refuses
// the BSP tree by name. auto keeps the uniform grid for these (omega 10 and 1.5: measured faster
// there).
TYPED_TEST(EngineTest, EveryBroadPhaseGivesTheSameBits) {
  struct Case {
    const char* scene;
    const char* name;
    int steps;
  };
  for (const Case& c : {Case{kPolydisperseBinScene, "polydisperse bin", 600}, Case{kPeriodicChuteScene, "periodic chute", 1500}}) {
    State reference;
    bool first = true;
    for (const char* set : {"broad_phase={method: grid}", "broad_phase={method: hgrid}",
                            "broad_phase={method: hgrid, cell_sizes: [0.0025, 0.006, 0.03]}", "broad_phase={method: auto}",
                            "broad_phase={method: bsp}"}) {
      const SceneInputs in = scene_text(c.scene, "s.yaml", {set});
      const std::string what = std::string(c.name) + ", " + set;
      if (!TypeParam::has_bsp && std::string(set).find("bsp") != std::string::npos) {
        try {
          TypeParam::make(in);
          ADD_FAILURE() << what << ": accepted";
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("host engine only"), std::string::npos) << e.what();
        }
        continue;
      }
      std::unique_ptr<Simulation> sim = TypeParam::make(in);
      run(*sim, c.steps);
      ASSERT_TRUE(sim->status().ok) << what << ": " << sim->status().message;
      if (std::string(set).find("hgrid") != std::string::npos) {
        EXPECT_EQ(sim->broad_phase_report().method, "hgrid") << what;
      }
      if (std::string(set).find("auto") != std::string::npos) {
        EXPECT_EQ(sim->broad_phase_report().method, "grid") << what;
      }
      if (first) {
        reference = capture(*sim);
        first = false;
      } else {
        expect_same(reference, capture(*sim), true, what);
      }
    }
  }
}

// ---- Under MPI: ghosts (host/mpi/decomposition.hpp)

// The particles' positions, velocities, spins, forces and orientations, by id, bit for bit: of
// every particle, or of those `b` owns (ghosts: the ids b holds as ghosts, ascending).
bool same_particle_bits(const Simulation& a, const Simulation& b, const std::vector<std::int64_t>& ghosts = {}) {
  std::map<std::int64_t, std::array<double, 16>> pa = capture(a).particles, pb = capture(b).particles;
  for (const std::int64_t id : ghosts) {
    pa.erase(id);
    pb.erase(id);
  }
  return pa == pb;
}

bool same_words(const BodyLoadSum& a, const BodyLoadSum& b) {
  for (int c = 0; c < 3; ++c)
    if (a.f[c].hi != b.f[c].hi || a.f[c].lo != b.f[c].lo || a.t[c].hi != b.t[c].hi || a.t[c].lo != b.t[c].lo)
      return false;
  return true;
}

// Each ghost of `sim` takes the state `from` holds for it, as the decomposition gives the ghosts
// their owners' states after each step: with orientation and PAD where the run has polyhedra,
// without them otherwise.
void take_ghost_states(Simulation& sim, const Simulation& from, const std::vector<std::int64_t>& ghosts) {
  const bool shaped = !sim.shapes().empty();
  const host::ParticleArrays& f = from.particles();
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (at.size() <= std::size_t(f.id[i])) at.resize(std::size_t(f.id[i]) + 1);
    at[std::size_t(f.id[i])] = i;
  }
  const host::ParticleArrays& p = sim.particles();
  std::vector<std::int32_t> index;
  host::StepStates s;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (std::binary_search(ghosts.begin(), ghosts.end(), p.id[i])) {
      const std::size_t k = at[std::size_t(p.id[i])];
      index.push_back(static_cast<std::int32_t>(i));
      s.x.push_back(f.x[k]);
      s.v.push_back(f.v[k]);
      s.w.push_back(f.w[k]);
      if (shaped) {
        s.q.push_back(f.q[k]);
        s.pad.push_back(f.pad[k]);
      }
    }
  sim.set_states(index, s);
}

// Two ranks holding the same particles, each owning half and holding the other half as ghosts
// that take their states from the owner after each step, together count every mesh contact and
// touching pair once and add every load on the bodies once: their integer sums add up, word for
// word, to those of an engine that owns them all, and the owned particles keep its bits. (The
// engines leave out the pairs of two ghosts and the ghosts' mesh contacts, which are their
// owners' to evaluate.)
template <class E>
void expect_ghosts_leave_their_loads_to_their_owners(const SceneInputs& in, int steps, std::size_t min_pairs = 10) {
  std::unique_ptr<Simulation> all = E::make(in), odd_own = E::make(in), even_own = E::make(in);
  std::vector<std::int64_t> odd, even;
  for (const std::int64_t id : in.particles.id) (id % 2 ? odd : even).push_back(id);
  std::sort(odd.begin(), odd.end());
  std::sort(even.begin(), even.end());
  odd_own->set_ghosts(even);
  even_own->set_ghosts(odd);
  for (int s = 0; s < steps; ++s) {
    all->step();
    odd_own->step();
    even_own->step();
    take_ghost_states(*odd_own, *all, even);
    take_ghost_states(*even_own, *all, odd);
  }
  ASSERT_TRUE(all->status().ok) << all->status().message;
  ASSERT_GT(all->mesh_contacts(), 10u);
  ASSERT_GT(all->touching_pairs(), min_pairs);
  EXPECT_EQ(odd_own->own_mesh_contacts() + even_own->own_mesh_contacts(), all->mesh_contacts());
  EXPECT_EQ(odd_own->own_touching_pairs() + even_own->own_touching_pairs(), all->touching_pairs());
  EXPECT_EQ(all->own_mesh_contacts(), all->mesh_contacts());
  // (a ghost's mesh contacts are its owner's: neither engine evaluates them where it is a ghost)
  EXPECT_EQ(odd_own->mesh_contacts(), odd_own->own_mesh_contacts());
  EXPECT_EQ(even_own->mesh_contacts(), even_own->own_mesh_contacts());
  const std::vector<BodyLoadSum> a = all->body_load_sums(), o = odd_own->body_load_sums(), e = even_own->body_load_sums();
  ASSERT_EQ(a.size(), in.meshes.bodies.size());
  bool some_load = false;
  for (std::size_t b = 0; b < a.size(); ++b) {
    EXPECT_TRUE(same_words(BodyLoadSumOp{}(o[b], e[b]), a[b])) << "body " << b;
    some_load = some_load || !same_words(a[b], BodyLoadSum{});
  }
  EXPECT_TRUE(some_load);
  // (a ghost's force is not its owner's: the pairs of two ghosts may be left out)
  EXPECT_TRUE(same_particle_bits(*all, *odd_own, even));
  EXPECT_TRUE(same_particle_bits(*all, *even_own, odd));
}

TYPED_TEST(EngineTest, GhostsLeaveTheirBodyLoadsAndContactsToTheirOwners) {
  expect_ghosts_leave_their_loads_to_their_owners<TypeParam>(
      threaded(host::build_scene_inputs(host::load_scene_from_string(kBinScene, "bin.yaml"))), 2000);
}

TYPED_TEST(EngineTest, PolyhedralGhostsLeaveTheirLoadsToTheirOwners) {
  // The same with polyhedra, spheres and the paddle, §6.3's approximation on: a ghost's PAD, which
  // decides whether its pairs' planes are approximated, comes from its owner with its state (with
  // the ghosts' own, never advanced, the owned particles' bits differ within these steps). Six
  // pairs are in contact at the end (of more whose bounding spheres overlap).
  expect_ghosts_leave_their_loads_to_their_owners<TypeParam>(
      threaded(scene_text(kPolyhedraBinScene, "scene.yaml", {"simulation.common_plane_tolerance=0.05"})), 4000, 4);
}

// The engine's state buffer by buffer (state_buffers, summary.json's state_bytes_by_buffer): each
// named once, the particle fields holding every field of every particle, the pair list's buffers
// more than an entry a particle (the heap's partners, each at least an index and a spring), and
// bytes_per_particle their sum over the particles.
TYPED_TEST(EngineTest, StateBuffersNameEachBufferOnceAndAddUpToTheBytesPerParticle) {
  std::unique_ptr<Simulation> sim = TypeParam::make(bin_scene());
  run(*sim, 1500);
  const std::vector<host::StateBuffer> buffers = sim->state_buffers();
  const double n = static_cast<double>(sim->num_particles());
  std::set<std::string> names;
  double sum = 0, fields = -1, lists = 0;
  for (const host::StateBuffer& b : buffers) {
    EXPECT_TRUE(names.insert(b.name).second) << b.name << " twice";
    sum += b.bytes;
    if (b.name == "particle fields") fields = b.bytes;
    if (b.name.rfind("pairs.", 0) == 0) lists += b.bytes;
  }
  double field_bytes = 0;
#define DEM_FIELD_SIZE(T, name) field_bytes += sizeof(T);
  DEM_PARTICLE_FIELDS(DEM_FIELD_SIZE)
#undef DEM_FIELD_SIZE
  EXPECT_GE(fields, n * field_bytes);
  EXPECT_GT(lists, n * (sizeof(std::int32_t) + sizeof(Vec3)));
  EXPECT_DOUBLE_EQ(sum / n, sim->bytes_per_particle());
}

TYPED_TEST(EngineTest, ListBuildsAgreedWithOtherRanksKeepTheBits) {
  // Under MPI the ranks agree on the steps their engines build lists (Simulation::
  // set_list_agreement; the device engine decides the mesh lists' renewal ahead of its mesh pass
  // for it). Run A alone; run B as if another rank asked for a pair-list build every 7th step and
  // a mesh-list renewal every 5th besides its own; run C with an agreement that adds nothing. B builds more lists than A
  // with the same bits; C builds them at A's steps, its counts A's; each is asked once a step.
  const SceneInputs in = threaded(bin_scene());
  std::unique_ptr<Simulation> a = TypeParam::make(in), b = TypeParam::make(in), c = TypeParam::make(in);
  int b_asked = 0, c_asked = 0, a_pair_builds = 0;
  b->set_list_agreement([&](unsigned mine) {
    const int k = b_asked++;
    return mine | (k % 7 == 3 ? Simulation::kPairListBit : 0u) | (k % 5 == 1 ? Simulation::kMeshListsBit : 0u);
  });
  c->set_list_agreement([&](unsigned mine) {
    ++c_asked;
    a_pair_builds += (mine & Simulation::kPairListBit) != 0;
    return mine;
  });
  const int steps = 3000;
  for (int s = 0; s < steps; ++s) {
    a->step();
    b->step();
    c->step();
  }
  EXPECT_EQ(b_asked, steps);
  EXPECT_EQ(c_asked, steps);
  const host::ContactStats sa = a->stats(), sb = b->stats(), sc = c->stats();
  EXPECT_GT(a->touching_pairs(), 50u);
  EXPECT_GT(a->mesh_contacts(), 20u);
  EXPECT_GE(sb.broad_phase_builds, sa.broad_phase_builds + steps / 7 / 2);
  EXPECT_GE(sb.mesh_list_renewals, sa.mesh_list_renewals + (steps / 5 / 2) * in.particles.size());
  expect_same(capture(*a), capture(*b), true, "lists built at more steps against alone");
  EXPECT_EQ(std::uint64_t(a_pair_builds), sa.broad_phase_builds);
  EXPECT_EQ(sc.broad_phase_builds, sa.broad_phase_builds);
  EXPECT_EQ(sc.lists_kept, sa.lists_kept);
  EXPECT_EQ(sc.mesh_list_renewals, sa.mesh_list_renewals);
  EXPECT_EQ(sc.mesh_lists_kept, sa.mesh_lists_kept);
  expect_same(capture(*a), capture(*c), true, "an agreement adding nothing against alone");
}

TYPED_TEST(EngineTest, GetStatesAndFartherThanReadTheParticles) {
  // What the decomposition reads of an engine each step: the states of its ghosts' owners
  // (get_states, gathered where the particles live) are the particles' own, bit for bit, and the
  // travel test (farther_than, on the device for the device engine) says whether some particle
  // has moved farther than its limit from where it was, with one limit for all or one each; the
  // ids (particle_ids, found again after a re-sort) are the particles' own.
  const SceneInputs in = threaded(host::build_scene_inputs(host::load_scene_from_string(kBinScene, "bin.yaml")));
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  for (int s = 0; s < 200; ++s) sim->step();
  std::vector<std::int32_t> index;
  std::vector<Vec3> origin;
  const host::ParticleArrays before = sim->particles();
  for (std::size_t i = 0; i < before.size(); i += 3) {
    index.push_back(static_cast<std::int32_t>(i));
    origin.push_back(before.x[i]);
  }
  for (int s = 0; s < 50; ++s) sim->step();
  const host::ParticleArrays& p = sim->particles();  // (the origins are by index, as the engine reads them)
  host::StepStates s, spheres;
  sim->get_states(index, true, 1, s);
  sim->get_states(index, false, 1, spheres);  // (no orientation, no PAD: a sphere's contacts need neither)
  ASSERT_EQ(spheres.x.size(), index.size());
  EXPECT_TRUE(spheres.q.empty() && spheres.pad.empty());
  double most = 0;
  std::vector<double> moved(index.size());
  for (std::size_t k = 0; k < index.size(); ++k) {
    const std::size_t i = static_cast<std::size_t>(index[k]);
    const auto same = [](Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; };
    EXPECT_TRUE(same(s.x[k], p.x[i]) && same(s.v[k], p.v[i]) && same(s.w[k], p.w[i]) && s.pad[k] == p.pad[i]) << i;
    EXPECT_TRUE(s.q[k].w == p.q[i].w && s.q[k].x == p.q[i].x && s.q[k].y == p.q[i].y && s.q[k].z == p.q[i].z) << i;
    EXPECT_TRUE(same(spheres.x[k], p.x[i]) && same(spheres.v[k], p.v[i]) && same(spheres.w[k], p.w[i])) << i;
    moved[k] = double(norm(p.x[i] - origin[k]));
    most = std::max(most, moved[k]);
  }
  ASSERT_GT(most, 1e-4);
  // one limit for all, on either side of the largest travel; then a limit each, just over each
  // particle's own travel, and the same with one of them (not the farthest) just under its own
  // (a new version each time: the limits changed)
  const std::size_t n = index.size();
  EXPECT_TRUE(sim->farther_than(index, origin, std::vector<double>(n, 0.99 * most), in.settings.periodic, 1));
  EXPECT_FALSE(sim->farther_than(index, origin, std::vector<double>(n, 1.01 * most), in.settings.periodic, 2));
  std::vector<double> each(n);
  std::size_t slower = n;
  for (std::size_t k = 0; k < n; ++k) {
    each[k] = 1.01 * moved[k];
    if (moved[k] > 1e-6 && moved[k] < 0.5 * most) slower = k;
  }
  EXPECT_FALSE(sim->farther_than(index, origin, each, in.settings.periodic, 3));
  ASSERT_LT(slower, n);
  each[slower] = 0.99 * moved[slower];
  EXPECT_TRUE(sim->farther_than(index, origin, each, in.settings.periodic, 4));
  // and the ids alone, before and after the particles were read at this step
  for (int s2 = 0; s2 < 300; ++s2) sim->step();
  const std::vector<std::int64_t> ids = sim->particle_ids();
  EXPECT_EQ(ids, sim->particles().id);
  EXPECT_EQ(sim->particle_ids(), ids);
}

TYPED_TEST(EngineTest, SetStatesReplacesWhatAStepChanges) {
  // Two particles moved by set_states (as ghosts take their owners' states) after the health
  // check, which on the device engine runs the next step's skin tests ahead, continue as when moved
  // without it: nothing made from the old positions outlives set_states. A particle pushed 1.5 cm
  // sideways, into other particles, leaves its lists behind; a stale test would miss its new pairs.
  const SceneInputs in = threaded(host::build_scene_inputs(host::load_scene_from_string(kBinScene, "bin.yaml")));
  std::unique_ptr<Simulation> checked = TypeParam::make(in), unchecked = TypeParam::make(in);
  for (int s = 0; s < 300; ++s) {
    checked->step();
    unchecked->step();
  }
  const real inf = std::numeric_limits<real>::infinity();
  ASSERT_TRUE(checked->check_health(HealthLimits{inf, Vec3{-inf, -inf, -inf}, Vec3{inf, inf, inf}, inf}));
  const host::ParticleArrays p = checked->particles();
  const std::vector<std::int32_t> index{0, 5};
  host::StepStates moved;
  moved.x = {p.x[0] + Vec3{0.015, 0, 0}, p.x[5] + Vec3{0, 0.015, 0}};
  moved.v = {Vec3{1, 0, 0}, Vec3{0, 2, 0}};
  moved.w = {Vec3{0, 0, 30}, Vec3{0, 0, 0}};
  moved.q = {p.q[0], p.q[5]};
  checked->set_states(index, moved);
  unchecked->set_states(index, moved);
  EXPECT_EQ(checked->particles().x[0].x, moved.x[0].x);
  EXPECT_EQ(checked->particles().w[0].z, real(30));
  const std::size_t before = checked->stats().broad_phase_builds;
  for (int s = 0; s < 300; ++s) {
    checked->step();
    unchecked->step();
  }
  EXPECT_GT(checked->stats().broad_phase_builds, before);
  EXPECT_TRUE(same_particle_bits(*checked, *unchecked));
}

}  // namespace
}  // namespace dem::test
