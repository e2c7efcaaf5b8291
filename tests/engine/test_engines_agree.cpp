// The device engine against the host engine (the reference), for each device system of the build:
// on the validation scenes, the demo, a bin with a moving paddle, the ribbon mixer, a polydisperse
// bin, the periodic chute and box, every contact law and mixed laws: positions, velocities, spins,
// forces, orientations, contact counts and body loads, compared particle by particle (by id: the
// engines order particles differently), bitwise under DEM_STRICT_FP (see "Bitwise or not" in
// engines.hpp: orientations are not compared against CUDA). Also restarts and particle edits
// across engines. What each engine does on its own is in test_engine_properties.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "engines.hpp"

#if defined(DEM_TEST_HAS_DEVICE)  // (a build without a device engine has nothing to compare)
namespace dem::test {
namespace {

using host::SceneConfig;

template <class E>
class EnginesAgree : public OnEngine<E> {};
TYPED_TEST_SUITE(EnginesAgree, DeviceEngines);

TYPED_TEST(EnginesAgree, MatchesHostOnTheValidationScenes) {
  // The first impacts and the sliding of santasusana2016 Sect. 6.1 (each scene's opening 0.25 s:
  // the drops hit the plate at ~0.2 s; the sliding cases cross element edges from the start).
  for (const char* scene : {"drop_facet.yaml", "drop_edge.yaml", "drop_vertex.yaml", "continuity.yaml",
                            "multiple_contact.yaml", "sliding_quad.yaml", "sliding_triangles.yaml"}) {
    SceneInputs in = scene_file(std::string("validation/") + scene);
    const int steps = static_cast<int>(std::lround(0.25 / in.settings.dt));
    compare_run<TypeParam>(in, steps, steps / 5, scene);
    if (this->HasFailure()) return;
  }
}

// The coarse-grained fields summed where the particles live (Simulation::sample_fields): the
// device engine's gather gives the host's sums to the bit, particles and contacts (their kept
// forces spread along the branches), with three tags, over several samples, with its entries
// made a few hundred at a time or all at once, in the bin with its paddle (wall contacts on a
// moving mesh) and in a box periodic on every axis (contacts across its faces); a sample's cells
// hold the counted particles' mass.
TYPED_TEST(EnginesAgree, SumsTheFieldsAsTheHostDoes) {
  for (const bool periodic : {false, true}) {
    SceneInputs in = periodic ? periodic_box_scene() : bin_scene();
    for (std::size_t i = 0; i < in.particles.size(); ++i) in.particles.tag[i] = std::int32_t(in.particles.id[i] % 3) - 1;
    const PeriodicBox& box = in.settings.periodic;
    const double plo[3] = {box.lo.x, box.lo.y, box.lo.z}, plen[3] = {box.length.x, box.length.y, box.length.z};
    host::CgGrid grid;
    double lo[3] = {-0.06, -0.06, -0.01}, hi[3] = {0.06, 0.06, 0.07};
    for (int k = 0; k < 3; ++k) {
      if (periodic && plen[k] > 0) {
        grid.lo[k] = plo[k], grid.n[k] = 12, grid.h[k] = plen[k] / 12, grid.periodic[k] = true;
        lo[k] = plo[k], hi[k] = plo[k] + plen[k];
      } else {
        grid.lo[k] = -0.08, grid.h[k] = 0.005, grid.n[k] = 34;
      }
    }
    const double width = periodic ? 0.8 * grid.h[0] : 0.004;
    for (const std::int64_t chunk : {std::int64_t(500), std::int64_t(1) << 24}) {
      const std::string where = std::string(periodic ? "periodic box" : "bin") + ", chunk " + std::to_string(chunk);
      host::FieldSampling sampling = host::field_sampling(grid, CgKernel::Gaussian, width, lo, hi, true, true);
      sampling.device_entry_chunk = chunk;
      std::unique_ptr<Simulation> host = HostEngine::make(in), device = TypeParam::make(in);
      for (Simulation* sim : {host.get(), device.get()}) {
        sim->keep_contact_forces(true);
        sim->start_field_sums(sampling);
      }
      for (int sample = 0; sample < 3; ++sample) {
        for (Simulation* sim : {host.get(), device.get()}) {
          run(*sim, 200);
          sim->compute_forces();
          sim->sample_fields(in.settings.gravity, in.settings.dt);
        }
      }
      const host::FieldSums a = host->take_field_sums(), b = device->take_field_sums();
      ASSERT_EQ(a.cells.size(), b.cells.size());
      EXPECT_EQ(std::memcmp(a.cells.data(), b.cells.data(), a.cells.size() * sizeof(CgCellSums)), 0) << where;
      ASSERT_EQ(a.contact.size(), b.contact.size());
      EXPECT_EQ(std::memcmp(a.contact.data(), b.contact.data(), a.contact.size() * sizeof(CgStress)), 0) << where;
      EXPECT_EQ(a.mass, b.mass) << where;
      EXPECT_EQ(a.samples, 3u);
      EXPECT_EQ(b.samples, 3u);
      EXPECT_EQ(a.contact_samples, 3u);
      EXPECT_EQ(b.contact_samples, 3u);
      double stress = 0;
      for (const CgStress& c : a.contact) stress += std::abs(c.s[8]);
      EXPECT_GT(stress, 0) << where;
      ASSERT_EQ(a.tag_volume.size(), 3u);
      ASSERT_EQ(b.tag_volume.size(), 3u);
      for (const auto& [tag, volume] : a.tag_volume) EXPECT_EQ(volume, b.tag_volume.at(tag)) << where << ", tag " << tag;
      // one sample more: its cells hold the counted particles' mass
      device->sample_fields(in.settings.gravity, in.settings.dt);
      const host::FieldSums one = device->take_field_sums();
      double mass = 0, counted = 0;
      for (const CgCellSums& c : one.cells) mass += c.mass;
      const host::ParticleArrays& p = device->particles();
      for (std::size_t i = 0; i < p.size(); ++i)
        if (sampling.counted(p.x[i])) counted += 1 / double(p.inv_mass[i]);
      EXPECT_GT(counted, 0);
      EXPECT_NEAR(one.mass, counted, 1e-12 * counted) << where;
      EXPECT_NEAR(mass, counted, 1e-12 * counted) << where;
    }
  }
}

// What the mixing indices need (Simulation::mixing_contents), gathered on the device: the host's
// function on the device engine's own state gives the same bits (samples by cells and by count,
// by count and by mass), in a polydisperse bin and among polyhedra and spheres (pairs with a
// polyhedron counted while in contact); and the host engine's run gives the same contents.
TYPED_TEST(EnginesAgree, GathersTheMixingContentsAsTheHostDoes) {
  const SceneInputs scenes[] = {scene_text(kPolydisperseBinScene, "s.yaml", {"broad_phase={method: grid}"}),
                                scene_text(kPolyhedraBinScene)};
  for (const SceneInputs& scene : scenes) {
    SceneInputs in = scene;
    for (std::size_t i = 0; i < in.particles.size(); ++i) in.particles.tag[i] = std::int32_t(in.particles.id[i] % 3) - 1;
    std::unique_ptr<Simulation> host = HostEngine::make(in), device = TypeParam::make(in);
    run(*host, 5000);
    run(*device, 5000);
    ASSERT_TRUE(device->status().ok) << device->status().message;
    host::MixingSampling cells, by_mass, by_count;
    cells.cell_size = 0.01;
    by_mass.cell_size = 0.013;
    by_mass.origin[0] = -0.004;
    by_mass.origin[2] = 0.002;
    by_mass.mass_weighted = true;
    by_count.sample_particles = 7;
    by_count.mass_weighted = true;
    for (const host::MixingSampling& s : {cells, by_mass, by_count}) {
      const std::string where = std::string(in.settings.shapes.empty() ? "bin" : "polyhedra bin") + ", samples " +
                                (s.sample_particles ? "of 7" : "of cells") + (s.mass_weighted ? " by mass" : "");
      host::ParticleArrays p;
      host::ContactState c;
      device->export_state(p, c);
      const host::MixingContents want = host::mixing_contents(p, c, s);
      const host::MixingContents got = device->mixing_contents(s), from_host = host->mixing_contents(s);
      for (const host::MixingContents* m : {&got, &from_host}) {
        if (m == &from_host && !kStrictFp) continue;  // (the runs drift apart from the last bit)
        const std::string who = where + (m == &got ? ": device" : ": host engine");
        EXPECT_EQ(m->tags, want.tags) << who;
        EXPECT_EQ(m->tag_count, want.tag_count) << who;
        EXPECT_EQ(m->sample_n, want.sample_n) << who;
        EXPECT_EQ(m->sample_w, want.sample_w) << who;
        EXPECT_EQ(m->sample_w2, want.sample_w2) << who;
        EXPECT_EQ(m->sample_tag_w, want.sample_tag_w) << who;
        EXPECT_EQ(m->contacts, want.contacts) << who;
        EXPECT_EQ(m->unlike_contacts, want.unlike_contacts) << who;
      }
      EXPECT_EQ(want.tags, (std::vector<std::int32_t>{-1, 0, 1})) << where;
      EXPECT_GT(want.sample_n.size(), 10u) << where;
      EXPECT_GT(want.unlike_contacts, 0u) << where;
      EXPECT_LT(want.unlike_contacts, want.contacts) << where;
    }
  }
}

TYPED_TEST(EnginesAgree, MatchesHostOnABinWithAPaddle) { compare_run<TypeParam>(bin_scene(), 1500, 250, "bin"); }

TYPED_TEST(EnginesAgree, MatchesHostOnTheDemo) { compare_run<TypeParam>(scene_file("demo/demo.yaml"), 1000, 250, "demo"); }

TYPED_TEST(EnginesAgree, MatchesHostOnTheRibbonMixer) {
  // The paper's mixer, 29,559 spheres, 2,000 steps from the fill (0.1 s: the beads fall onto the
  // blades and the trough).
  if (!kStrictFp) GTEST_SKIP() << "needs DEM_STRICT_FP=ON (without it the runs drift apart from the last bit)";
  compare_run<TypeParam>(scene_file("mixer/mixer.yaml"), 2000, 1000, "mixer");
}

TYPED_TEST(EnginesAgree, MatchesHostOnAPolydisperseBin) {
  // test::kPolydisperseBinScene on the uniform grid (each engine's other broad phases give its
  // grid's bits: EngineTest.EveryBroadPhaseGivesTheSameBits).
  compare_run<TypeParam>(scene_text(kPolydisperseBinScene, "s.yaml", {"broad_phase={method: grid}"}), 600, 300,
                         "polydisperse bin");
}

// test::fine_plate_scene: some 300 elements pass the Fast Intersection Test at once, more than H2's
// candidate buffer, which is compacted on the way; the coplanar facets leave one valid contact.
TYPED_TEST(EnginesAgree, MatchesHostWhenH2CompactsItsCandidates) {
  const SceneInputs in = scene_text(fine_plate_scene(), "fine_plate.yaml");
  std::unique_ptr<Simulation> host = HostEngine::make(in), dev = TypeParam::make(in);
  for (int s = 0; s < 300; ++s) host->step(), dev->step();
  ASSERT_TRUE(host->status().ok) << host->status().message;
  ASSERT_TRUE(dev->status().ok) << dev->status().message;
  EXPECT_GT(host->stats().h2_compactions, 0u);  // the capacity path ran
  EXPECT_EQ(host->stats().h2_compactions, dev->stats().h2_compactions);
  EXPECT_EQ(host->stats().valid_entities, std::uint64_t(300));  // one contact per step: coplanar facets
  EXPECT_EQ(host->stats().valid_entities, dev->stats().valid_entities);
  expect_same(capture(*host), capture(*dev), kExactAgainstHost, "fine plate", compare_orientation_with_host<TypeParam>());
}

// A wall moving onto a small sphere at rest (test::moving_wall_scene), both engines with adaptive
// skins under the driver's checks after every step (the kept mesh lists ending as the wall
// arrives: EngineTest.AKeptMeshListEndsWhenAMovingWallReachesItsParticleUnderTheDriversChecks).
TYPED_TEST(EnginesAgree, MatchesHostWhenAMovingWallReachesAKeptMeshList) {
  SceneConfig c = host::load_scene_from_string(moving_wall_scene(), "moving_wall.yaml");
  c.simulation.skin = -1;
  const SceneInputs in = host::build_scene_inputs(c);
  std::unique_ptr<Simulation> host = HostEngine::make(in), dev = TypeParam::make(in);
  const HealthLimits limits{1e3, Vec3{-1e3, -1e3, -1e3}, Vec3{1e3, 1e3, 1e3}, 0.5};
  for (int s = 0; s < 400; ++s) {
    dev->step();
    host->step();
    ASSERT_TRUE(dev->check_health(limits)) << dev->status().message;
    ASSERT_TRUE(host->check_health(limits)) << host->status().message;
  }
  expect_same(capture(*host), capture(*dev), kExactAgainstHost, "host against device",
              compare_orientation_with_host<TypeParam>());
}

// Restarts across engines: N steps on one, its exported state restored on the other, N more: the
// bits of 2N steps on the second (each engine to itself: EngineTest.RestartFrom...).
TYPED_TEST(EnginesAgree, RestartAcrossEnginesGivesTheSameBits) {
  expect_restart_gives_the_same_bits<HostEngine, TypeParam>();
  expect_restart_gives_the_same_bits<TypeParam, HostEngine>();
}

TYPED_TEST(EnginesAgree, ChangedMotionAndRestartAcrossEnginesGiveTheSameBits) {
  expect_changed_motion_and_restart_give_the_same_bits<HostEngine, TypeParam>();
  expect_changed_motion_and_restart_give_the_same_bits<TypeParam, HostEngine>();
}

// Motion laws that change with time: the paddle's spin ramps up by a table and it oscillates
// vertically, the bin starts moving at 5 ms and stops at 15 ms. The poses and velocities against
// their closed forms, then the run on both engines, bit for bit, through every phase.
TYPED_TEST(EnginesAgree, MotionTablesOscillationsAndStartStopOnEveryEngine) {
  const SceneConfig c = host::load_scene_from_string(
      kBinScene, "bin.yaml",
      {"meshes.paddle.motion={center: [0, 0, 0], table: [[0, 0, 0, 0, 0, 0, 0], [0.01, 0, 0, 0, 0, 0, 20], "
       "[0.02, 0, 0, 0, 0, 0, 20]], oscillation: {amplitude: [0, 0, 0.001], frequency: 100, phase: 30}}",
       "meshes.bin.motion={velocity: [0.05, 0, 0], start: 0.005, stop: 0.015}"});
  const SceneInputs in = host::build_scene_inputs(c);
  host::MeshSet m = in.meshes;
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
  compare_run<TypeParam>(in, 1000, 200, "motion laws");
}

// The same particles removed and added in place on both engines (test::bin_particle_edit): the
// same bits after the edit (each engine against its own restart path, and the run emptied:
// EngineTest.ParticlesRemovedAndAddedInPlace).
TYPED_TEST(EnginesAgree, MatchesHostWithParticlesRemovedAndAddedInPlace) {
  const SceneInputs in = bin_scene();
  const int n = 600;
  std::unique_ptr<Simulation> host = HostEngine::make(in), dev = TypeParam::make(in);
  for (int s = 0; s < n; ++s) host->step(), dev->step();
  const ParticleEdit edit = bin_particle_edit(*host);
  EXPECT_EQ(host->edit_particles(edit.remove, edit.more), edit.remove.size() - 1);
  EXPECT_EQ(dev->edit_particles(edit.remove, edit.more), edit.remove.size() - 1);
  // the body loads asked for after the edit (as the output does after an outlet's removal): the
  // last step's, from the particles before the edit re-sorted them
  for (std::size_t b = 0; b < host->body_force().size(); ++b) {
    EXPECT_EQ(host->body_force()[b].z, dev->body_force()[b].z) << "body " << b;
    EXPECT_EQ(host->body_torque()[b].x, dev->body_torque()[b].x) << "body " << b;
  }
  EXPECT_NE(host->body_force()[0].z, 0);
  for (int s = 0; s < n; ++s) host->step(), dev->step();
  ASSERT_TRUE(dev->status().ok) << dev->status().message;
  expect_same(capture(*host), capture(*dev), kExactAgainstHost, "host vs device, edited",
              compare_orientation_with_host<TypeParam>());
}

// The device engine's particles along the Hilbert curve of its grid's cells
// (BroadPhaseSpec::device_curve_order): the same bits as the host engine, in the mixer through an
// edit that removes particles (sorted last at the next re-sort and cut off; 11,760 beads left keep
// the bounded grid, which takes the mixer from 10,800), on periodic axes (the cells wrap), and
// along a rod of more than 1,024 cells (64-bit keys).
template <class E>
void expect_same_bits_along_the_curve(SceneInputs in, int steps, double remove_share, const std::string& what,
                                      double longest_axis_cells = 0) {
  in.settings.broad_phase.device_curve_order = true;
  std::unique_ptr<Simulation> host = HostEngine::make(in), dev = E::make(in);
  for (int s = 0; s < steps; ++s) host->step(), dev->step();
  ASSERT_EQ(dev->broad_phase_report().order, "curve") << what;
  if (longest_axis_cells > 0) {  // (the particles' extent along x over the last build's cells)
    double lo = 1e300, hi = -1e300;
    for (const Vec3& x : dev->particles().x) lo = std::min(lo, double(x.x)), hi = std::max(hi, double(x.x));
    EXPECT_GT((hi - lo) / dev->broad_phase_report().cell_sizes.at(0), longest_axis_cells) << what;
  }
  if (remove_share > 0) {
    std::vector<std::int64_t> remove;
    const auto every = static_cast<std::int64_t>(1 / remove_share);
    for (std::int64_t id : host->particles().id)
      if (id % every == 3) remove.push_back(id);
    EXPECT_EQ(host->edit_particles(remove, host::ParticleArrays{}), remove.size());
    EXPECT_EQ(dev->edit_particles(remove, host::ParticleArrays{}), remove.size());
    for (int s = 0; s < steps; ++s) host->step(), dev->step();
  }
  ASSERT_TRUE(dev->status().ok) << what << ": " << dev->status().message;
  EXPECT_EQ(dev->broad_phase_report().order, "curve") << what;
  EXPECT_GT(dev->stats().broad_phase_builds, 10u) << what;
  EXPECT_GT(dev->stats().pair_contacts, 0u) << what;
  expect_same(capture(*host), capture(*dev), kExactAgainstHost, "host vs device along the curve, " + what,
              compare_orientation_with_host<E>());
}

TYPED_TEST(EnginesAgree, MatchesHostWithTheParticlesAlongTheHilbertCurve) {
  expect_same_bits_along_the_curve<TypeParam>(scene_file("mixer/mixer.yaml", {"fills.0.count=12000"}), 400, 0.02,
                                              "mixer, 12,000 beads");
  expect_same_bits_along_the_curve<TypeParam>(chute_scene(), 1500, 0, "the chute, periodic in x and y");
  expect_same_bits_along_the_curve<TypeParam>(periodic_box_scene(), 1500, 0, "a box periodic on every axis");
  // a grid of more than 1,024 cells along x: the curve's 64-bit keys (32 bits below); periodic
  // across, 1 cm: two cells each way, whatever the collisions scatter
  SceneInputs rod = scene_text(R"(
simulation: {dt: 2.0e-5, end_time: 0.1, gravity: [0, 0, 0]}
domain: {min: [-1, 0, 0], max: [7, 0.01, 0.01], periodic: [y, z]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [6, 0.01, 0.01], count: 3000, radius: 0.002,
     material: grain, seed: 5}
)",
                               "rod.yaml");
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (Vec3& v : rod.particles.v) v = Vec3{real(u(rng)), real(0.1 * u(rng)), real(0.1 * u(rng))};
  expect_same_bits_along_the_curve<TypeParam>(rod, 1500, 0, "a rod 6 m long, periodic across", 1024);
}

// The bin with every interaction given another law: each combination runs the same bits on both
// engines (the laws live once, in core/).
TYPED_TEST(EnginesAgree, EveryContactModelMatchesHost) {
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
  for (const std::vector<std::string>& set : variants)
    compare_run<TypeParam>(scene_text(kBinScene, "bin.yaml", set), 800, 400, set.front());
}

// test::mixed_laws_scene: two grains whose pairs share the host's vector lanes, each lane with its
// own law's parameters, beside glass-glass pairs of a law the lanes do not take (cohesion: one
// pair at a time, in the same chunks): the same bits as the device engine, which takes every pair
// one at a time.
TYPED_TEST(EnginesAgree, MixedLawsInTheHostsVectorLanesMatchDevice) {
  const SceneInputs in = scene_text(mixed_laws_scene(), "mixed.yaml");
  compare_run<TypeParam>(in, 5000, 1000, "mixed laws");
  // the run must have had contacts of every kind for the comparison to mean anything
  std::unique_ptr<Simulation> host = HostEngine::make(in);
  run(*host, 5000);
  EXPECT_GT(host->stats().pair_contacts, 200000u) << "too few sphere contacts to test the lanes";
}

// ---- Periodic boundaries

TYPED_TEST(EnginesAgree, PeriodicChuteMatchesHost) {
  const SceneInputs in = chute_scene();
  // Particles cross the faces during the compared window (counted on the host engine).
  std::unique_ptr<Simulation> h = HostEngine::make(in);
  std::size_t wraps = 0;
  for (int s = 0; s < 3000; ++s) {
    const std::map<std::int64_t, Vec3> before = positions_by_id(*h);
    h->step();
    wraps += count_wraps(before, *h, in.settings.periodic);
  }
  EXPECT_GT(wraps, 40u);
  compare_run<TypeParam>(in, 3000, 500, "periodic chute");
}

// test::periodic_box_scene: 400 spheres colliding in a box periodic on every axis, many across the
// faces (momentum on each engine: EngineTest.MomentumIsConservedAcrossPeriodicFaces).
TYPED_TEST(EnginesAgree, MatchesHostInABoxPeriodicOnEveryAxis) {
  compare_run<TypeParam>(periodic_box_scene(), 2000, 1000, "periodic box");
}

}  // namespace
}  // namespace dem::test
#endif
