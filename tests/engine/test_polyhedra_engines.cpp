// Polyhedral particles on every engine (core/engine/polyhedron_phases.hpp): a cube at rest on a
// floor carries its weight without creeping, a pair first seen overlapping is pushed apart along
// its plane of least penetration with the momentum kept, thread counts and restarts change no bit,
// and the device engine gives the host engine's bits on polyhedra, spheres and moving meshes
// together, orientations included (the polyhedra's rotation has no sin or cos: CUDA's bits too).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "engines.hpp"

namespace dem::test {
namespace {

template <class E>
class PolyhedraOnEngine : public OnEngine<E> {};
TYPED_TEST_SUITE(PolyhedraOnEngine, AllEngines);

// A cube of size 10 mm (side 8.06 mm) face-down 0.47 mm above a floor quad.
const char* kCubeOnFloor = R"(
name: cube
simulation: {dt: 1.0e-5, end_time: 1, gravity: [0, 0, -9.81]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [rock, rock], friction: 0.5, restitution: 0.3, normal: linear, stiffness: 1.0e5}
  - {materials: [rock, steel], friction: 0.5, restitution: 0.3, normal: linear, stiffness: 1.0e5}
particles:
  - {polyhedron: cube, size: 0.01, position: [0.001, 0.002, 0.0045], material: rock}
meshes:
  - name: floor
    material: steel
    vertices: [[-0.02,-0.02,0],[0.02,-0.02,0],[0.02,0.02,0],[-0.02,0.02,0]]
    faces: [[0,1,2,3]]
)";

TYPED_TEST(PolyhedraOnEngine, ACubeRestsOnTheFloorWithItsWeightAndDoesNotCreep) {
  const SceneInputs in = scene_text(kCubeOnFloor);
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  const double mass = 1 / double(in.particles.inv_mass[0]);
  const double weight = mass * 9.81;
  // Landed after 10 ms; the contact's damping (zeta 0.36 at omega 8,700 rad/s) leaves nothing of
  // the bounce after 0.1 s but rounding.
  run(*sim, 12000);
  ASSERT_TRUE(sim->status().ok) << sim->status().message;
  const Vec3 x0 = sim->particles().x[0];
  run(*sim, 1000);
  const host::ParticleArrays& p = sim->particles();
  // The floor carries the weight (the body's load is the particles' push on it) ...
  EXPECT_NEAR(sim->body_force()[0].z, -weight, 1e-9 * weight);
  EXPECT_NEAR(sim->body_force()[0].x, 0, 1e-9 * weight);
  EXPECT_NEAR(sim->body_force()[0].y, 0, 1e-9 * weight);
  // ... at the static depth W / k under the whole face (the half side 4.03 mm above the floor) ...
  const double half_side = 0.5 * 0.01 * std::cbrt(M_PI / 6);
  EXPECT_NEAR(p.x[0].z, half_side - weight / 1.0e5, 1e-12);
  // ... without creeping or turning.
  EXPECT_LT(norm(p.x[0] - x0), 1e-13);
  EXPECT_LT(norm(p.w[0]), 1e-9);
  EXPECT_EQ(sim->mesh_contacts(), 1u) << "one face contact";
}

// Two cubes overlapping face to face by 0.5 mm at rest, offset sideways by 1 mm, no gravity, no
// friction: the plane of least penetration (over the separating axes: the x faces' normal, against
// 7 mm across y) pushes them apart along x, with equal and opposite momenta. (The offset turns
// them a little about z while they touch, and the plane with them.)
const char* kOverlappingCubes = R"(
name: overlap
simulation: {dt: 1.0e-5, end_time: 1, gravity: [0, 0, 0]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [rock, rock], friction: 0, restitution: 0.9, normal: linear, stiffness: 1.0e5}
particles:
  - {polyhedron: cube, size: 0.01, position: [0, 0, 0], material: rock}
  - {polyhedron: cube, size: 0.01, position: [0.00756, 0.001, 0], material: rock}
)";

TYPED_TEST(PolyhedraOnEngine, APairFirstSeenOverlappingIsPushedApartAlongItsLeastPenetration) {
  std::unique_ptr<Simulation> sim = TypeParam::make(scene_text(kOverlappingCubes));
  run(*sim, 2000);  // the contact lasts about 0.4 ms
  ASSERT_TRUE(sim->status().ok) << sim->status().message;
  const host::ParticleArrays& p = sim->particles();
  const std::size_t a = p.id[0] == 0 ? 0 : 1, b = 1 - a;
  // Equal and opposite: the pair loads are integers in one quantum, so to the bit.
  EXPECT_EQ(p.v[a].x, -p.v[b].x);
  EXPECT_EQ(p.v[a].y, -p.v[b].y);
  EXPECT_EQ(p.v[a].z, -p.v[b].z);
  // Along x (the face normal), apart, and stored elastic energy given back: 0.5 k d^2 = 0.0125 J
  // at d = 0.5 mm, less what the damping takes (restitution 0.9).
  EXPECT_LT(p.v[a].x, 0);
  EXPECT_LT(std::abs(p.v[a].y) + std::abs(p.v[a].z), 1e-2 * std::abs(p.v[a].x));
  const double m = 1 / double(p.inv_mass[a]);
  const double energy = m * norm2(p.v[a]);  // both particles
  EXPECT_GT(energy, 0.5 * 0.5 * 1.0e5 * 0.0005 * 0.0005);
  EXPECT_LT(energy, 0.5 * 1.0e5 * 0.0005 * 0.0005);
  EXPECT_EQ(sim->touching_pairs(), 0u);
}

// Two cubes and a tetrahedron meeting across the periodic face x = 0.1 of a box periodic in x, and
// the same three shifted by half the period (meeting in the middle): the same collision, so the
// same velocities and spins after it. Not to the bit: the shifted positions round differently, and
// the collision of three turning bodies amplifies that to 1e-8 of the velocities and 1e-5 of the
// spins; a wrong image across the face would change them entirely.
std::string periodic_polyhedra(double shift) {
  const auto x = [shift](double v) { return std::to_string(std::fmod(v + shift + 0.1, 0.1)); };
  return std::string(R"(
name: periodic
simulation: {dt: 1.0e-5, end_time: 1, gravity: [0, 0, 0]}
domain: {min: [0, -0.1, -0.1], max: [0.1, 0.1, 0.1], periodic: [x]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [rock, rock], friction: 0.4, restitution: 0.7, normal: linear, stiffness: 1.0e5}
particles:
  - {polyhedron: cube, size: 0.01, position: [)") + x(0.092) + R"(, 0, 0], velocity: [0.5, 0, 0],
     orientation: [0.9, 0.1, 0.3, 0.2], material: rock}
  - {polyhedron: cube, size: 0.01, position: [)" + x(0.008) + R"(, 0.002, 0.001], velocity: [-0.5, 0, 0],
     orientation: [0.8, -0.2, 0.1, 0.4], material: rock}
  - {polyhedron: tetrahedron, size: 0.01, position: [)" + x(0.0) + R"(, 0.015, 0], velocity: [0, -0.4, 0],
     material: rock}
)";
}

TYPED_TEST(PolyhedraOnEngine, PolyhedraMeetAcrossAPeriodicFaceAsInTheMiddle) {
  std::unique_ptr<Simulation> across = TypeParam::make(scene_text(periodic_polyhedra(0))),
                              middle = TypeParam::make(scene_text(periodic_polyhedra(0.05)));
  run(*across, 4000);  // they meet after about 6 ms and part again
  run(*middle, 4000);
  ASSERT_TRUE(across->status().ok) << across->status().message;
  const State a = capture(*across), m = capture(*middle);
  double speed = 0;
  for (const auto& [id, f] : a.particles) {
    const auto& g = m.particles.at(id);
    for (int k = 3; k < 9; ++k)
      EXPECT_NEAR(f[k], g[k], 1e-4 * std::max(1.0, std::abs(g[k]))) << "particle " << id << " field " << k;
    speed += std::abs(f[3] - 0.5 * (id == 0) + 0.5 * (id == 1));
  }
  EXPECT_GT(speed, 0.1) << "the collision happened";
}

// Cubes poured into a box settle and carry their weight, with the common planes of slow pairs
// approximated (§6.3, tolerance 2e-4 of the size) or every plane searched in full (tolerance 0):
// the same statics, though not the same bits (the approximation is in use). A pile of cubes keeps
// rocking slightly on its face-to-face contacts (speeds near 1e-3 m/s, the load on the box a few
// percent either side of the weight), so the load is averaged over the last 0.1 s.
TYPED_TEST(PolyhedraOnEngine, PouredCubesCarryTheirWeightWithOrWithoutTheApproximation) {
  State settled[2];
  for (const double tolerance : {2e-4, 0.0}) {
    host::SceneConfig c = host::load_scene_from_string(R"(
name: cubes
simulation: {dt: 2.0e-5, end_time: 1, gravity: [0, 0, -9.81]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.3}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [rock, rock], friction: 0.5, restitution: 0.3, normal: linear, stiffness: 2.0e4}
  - {materials: [rock, steel], friction: 0.5, restitution: 0.3, normal: linear, stiffness: 2.0e4}
fills:
  - {shape: box, pattern: regular, min: [-0.022, -0.022, 0.004], max: [0.022, 0.022, 0.06], count: 24,
     polyhedron: cube, size: 0.01, material: rock, seed: 5}
meshes:
  - name: box
    material: steel
    vertices: [[-0.025,-0.025,0], [0.025,-0.025,0], [0.025,0.025,0], [-0.025,0.025,0],
               [-0.025,-0.025,0.08], [0.025,-0.025,0.08], [0.025,0.025,0.08], [-0.025,0.025,0.08]]
    faces: [[0,1,2,3], [0,4,5,1], [1,5,6,2], [2,6,7,3], [3,7,4,0]]
)", "cubes.yaml");
    c.simulation.common_plane_tolerance = tolerance;
    const SceneInputs in = host::build_scene_inputs(c);
    std::unique_ptr<Simulation> sim = TypeParam::make(in);
    run(*sim, 15000);  // 0.3 s: poured and landed
    double load = 0, fastest = 0;
    for (int k = 0; k < 5000; ++k) {
      sim->step();
      load += sim->body_force()[0].z / 5000;
    }
    ASSERT_TRUE(sim->status().ok) << sim->status().message;
    double weight = 0;
    const host::ParticleArrays& p = sim->particles();
    for (std::size_t i = 0; i < p.size(); ++i) {
      weight += 9.81 / double(p.inv_mass[i]);
      fastest = std::max(fastest, double(norm(p.v[i])));
    }
    EXPECT_LT(fastest, 5e-3) << "tolerance " << tolerance;
    EXPECT_NEAR(load, -weight, 0.02 * weight) << "tolerance " << tolerance;
    EXPECT_GT(sim->touching_pairs(), 10u);
    settled[tolerance > 0 ? 0 : 1] = capture(*sim);
  }
  double apart = 0;  // the approximation changes the trajectories
  for (const auto& [id, f] : settled[0].particles) apart = std::max(apart, std::abs(f[2] - settled[1].particles.at(id)[2]));
  EXPECT_GT(apart, 1e-9);
}

TYPED_TEST(PolyhedraOnEngine, ThreadsAndRestartsChangeNoBit) {
  // (with §6.3's approximation: the restart carries each particle's PAD and each pair's plane kind)
  const SceneInputs in = scene_text(kPolyhedraBinScene, "scene.yaml", {"simulation.common_plane_tolerance=2e-4"});
  const int n = 1000;
  std::unique_ptr<Simulation> straight = TypeParam::make(in), threaded_run = TypeParam::make(threaded(in)),
                              first = TypeParam::make(in);
  run(*straight, 2 * n);
  run(*threaded_run, 2 * n);
  ASSERT_TRUE(straight->status().ok) << straight->status().message;
  expect_same(capture(*straight), capture(*threaded_run), true, "every loop threaded");
  run(*first, n);
  SceneInputs again = in;
  host::ContactState contacts;
  first->export_state(again.particles, contacts);
  // polyhedral pairs with their planes among the carried contacts
  std::size_t polyhedral = 0;
  std::map<std::int64_t, std::int32_t> shape_of;
  for (std::size_t i = 0; i < again.particles.size(); ++i) shape_of[again.particles.id[i]] = again.particles.shape[i];
  for (std::size_t k = 0; k < contacts.pair_a.size(); ++k)
    if (shape_of[contacts.pair_a[k]] >= 0 && shape_of[contacts.pair_b[k]] >= 0 && norm2(contacts.pair_history[k].rolling) > 0)
      ++polyhedral;
  EXPECT_GT(polyhedral, 10u);
  std::unique_ptr<Simulation> second = TypeParam::make(again);
  second->restore_state(contacts, first->step_count());
  run(*second, n);
  expect_same(capture(*straight), capture(*second), true, "restarted at step 1000");
}

// The contact forces an engine keeps at compute_forces (what the coarse-grained contact stress
// spreads) are those its particles feel: for every particle, the sum over its kept contacts of
// (c - x) x F is the torque on it (polyhedra, spheres, a moving paddle: none of these laws has a
// rolling torque), and the forces of the steps between are not kept.
TYPED_TEST(PolyhedraOnEngine, KeptContactForcesGiveEachParticlesTorque) {
  std::unique_ptr<Simulation> sim = TypeParam::make(scene_text(kPolyhedraBinScene));
  run(*sim, 4000);  // (poured onto the floor and the paddle)
  host::ContactForces kept;
  sim->keep_contact_forces(true);
  EXPECT_FALSE(sim->export_contact_forces(kept));  // (none evaluated with it yet)
  sim->compute_forces();
  ASSERT_TRUE(sim->export_contact_forces(kept));
  ASSERT_TRUE(sim->status().ok) << sim->status().message;
  std::map<std::int64_t, Vec3> torque;
  std::set<std::int64_t> polyhedral;
  const host::ParticleArrays& p = sim->particles();
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p.shape[i] >= 0) polyhedral.insert(p.id[i]);
  std::size_t with_polyhedron = 0;
  for (std::size_t k = 0; k < kept.pairs(); ++k) {
    const Vec3 f = kept.pair_force[k], c = kept.pair_point[k];
    torque[kept.pair_a[k]] += cross(c - kept.pair_x_a[k], f);
    torque[kept.pair_b[k]] += cross(c - kept.pair_x_b[k], -f);
    with_polyhedron += polyhedral.count(kept.pair_a[k]) + polyhedral.count(kept.pair_b[k]) > 0;
  }
  for (std::size_t k = 0; k < kept.walls(); ++k)
    torque[kept.wall_particle[k]] += cross(kept.wall_point[k] - kept.wall_x[k], kept.wall_force[k]);
  EXPECT_GT(with_polyhedron, 20u);
  EXPECT_GT(kept.walls(), 20u);
  double scale = 0;
  for (std::size_t i = 0; i < p.size(); ++i) scale = std::max(scale, double(norm(p.torque[i])));
  ASSERT_GT(scale, 0);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3 t = torque.count(p.id[i]) ? torque[p.id[i]] : Vec3{0, 0, 0};
    EXPECT_LT(norm(t - p.torque[i]), 1e-9 * scale) << "particle " << p.id[i] << (p.shape[i] >= 0 ? " (polyhedron)" : " (sphere)");
  }
  sim->step();  // (its own evaluation keeps nothing)
  sim->step();
  EXPECT_FALSE(sim->export_contact_forces(kept));
  EXPECT_EQ(kept.pairs() + kept.walls(), 0u);
}

// The engine counts how each pair of polyhedra found its common plane (summary.json's
// common_planes): in a pour most pairs keep last step's plane, a search takes a few FCP rounds;
// with §6.3's tolerance the slow pairs in contact follow their kept features instead; the counts
// are those of the host engine on every engine (checked in PolyhedraAgree).
struct PlaneStats {
  std::uint64_t kept, approximated, searches, iterations, most;
  bool operator==(const PlaneStats& o) const {
    return kept == o.kept && approximated == o.approximated && searches == o.searches && iterations == o.iterations &&
           most == o.most;
  }
};
inline PlaneStats plane_stats(const Simulation& s) {
  const host::ContactStats& c = s.stats();
  return {c.planes_kept, c.planes_approximated, c.plane_searches, c.plane_iterations, c.plane_iterations_max};
}
TYPED_TEST(PolyhedraOnEngine, CountsHowEachCommonPlaneWasFound) {
  std::unique_ptr<Simulation> exact = TypeParam::make(scene_text(kPolyhedraBinScene));
  run(*exact, 2500);
  const PlaneStats e = plane_stats(*exact);
  EXPECT_EQ(e.approximated, 0u);
  EXPECT_GT(e.searches, 100u);
  EXPECT_GT(e.kept, e.searches);  // (a plane outlives most steps)
  const double per_search = double(e.iterations) / double(e.searches);
  EXPECT_GE(per_search, 1.0);
  EXPECT_LT(per_search, 8.0);
  EXPECT_GE(e.most, 2u);
  std::unique_ptr<Simulation> approximate =
      TypeParam::make(scene_text(kPolyhedraBinScene, "scene.yaml", {"simulation.common_plane_tolerance=0.05"}));
  run(*approximate, 2500);
  const PlaneStats a = plane_stats(*approximate);
  EXPECT_GT(a.approximated, 100u);
  EXPECT_LT(a.searches, e.searches);
}

// Rolling resistance with a polyhedron (the constant torque, polyhedral_rolling_torque): a sphere
// of radius 5 mm resting on a glued cube of size 20 mm (half side h = 8.06 mm), without friction,
// spinning at 10 rad/s about x. The couple mu_r R* F_n, R* = r h / (r + h) from the lever arms to
// the contact point, F_n its weight, slows it at a constant rate to a stop at t* = w0 I / M (33 ms)
// and holds it there: the limit that stops w_r within a step takes the glued cube's inertia as
// infinite, so the last step leaves no spin.
std::string spinning_sphere_on_a_cube(double rolling_friction) {
  return R"(
name: rolling
simulation: {dt: 1.0e-5, end_time: 1, gravity: [0, 0, -9.81]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [rock, rock], friction: 0, restitution: 0.5, normal: linear, stiffness: 1.0e5, rolling_friction: )" +
         std::to_string(rolling_friction) + R"(}
particles:
  - {polyhedron: cube, size: 0.02, position: [0, 0, 0], material: rock, prescribed: true}
  - {radius: 0.005, position: [0, 0, 0.0130597], angular_velocity: [10, 0, 0], material: rock}
)";
}

TYPED_TEST(PolyhedraOnEngine, RollingResistanceStopsASpinningSphereOnACubeAtTheConstantTorque) {
  const double mu_r = 0.1, w0 = 10, r = 0.005, h = 0.5 * 0.02 * std::cbrt(M_PI / 6);
  SceneInputs in = scene_text(spinning_sphere_on_a_cube(mu_r));
  // the sphere at its static depth W / k, so that F_n stays its weight
  const std::size_t s = in.particles.shape[0] < 0 ? 0 : 1;
  const double m = 1 / double(in.particles.inv_mass[s]), weight = m * 9.81;
  in.particles.x[s].z = h + r - weight / 1.0e5;
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  const double r_star = r * h / (r + h), torque = mu_r * r_star * weight, inertia = 0.4 * m * r * r;
  const double rate = torque / inertia, t_stop = w0 / rate;
  ASSERT_NEAR(t_stop, 0.0330, 0.0005);
  const int half = int(0.5 * t_stop / 1.0e-5);
  run(*sim, half);
  ASSERT_TRUE(sim->status().ok) << sim->status().message;
  const auto sphere_spin = [&] {
    const host::ParticleArrays& p = sim->particles();
    return p.w[p.shape[0] < 0 ? 0 : 1];
  };
  // w - rate t, to the lever arms' share of the depth (1e-5 of R*)
  EXPECT_NEAR(sphere_spin().x, w0 - rate * half * 1.0e-5, 1e-4 * w0);
  EXPECT_EQ(sphere_spin().y, 0.0);
  EXPECT_EQ(sphere_spin().z, 0.0);
  run(*sim, int(0.6 * t_stop / 1.0e-5));
  EXPECT_LT(std::abs(sphere_spin().x), 1e-12 * w0) << "stopped, and held there";
  // without rolling friction it spins on
  std::unique_ptr<Simulation> free_spin = TypeParam::make(scene_text(spinning_sphere_on_a_cube(0)));
  run(*free_spin, 100);
  const host::ParticleArrays& q = free_spin->particles();
  EXPECT_EQ(q.w[q.shape[0] < 0 ? 0 : 1].x, w0);
}

// Against the mesh: kCubeOnFloor's cube at its static depth, glued, turning at 1 rad/s about x
// (its face's centre, the contact point, moves along the floor: no normal velocity). In the first
// step the floor takes the couple mu_r R F_n about x on top of the same loads as without rolling
// friction, R the lever arm from the centroid to the contact point (h less half the depth).
TYPED_TEST(PolyhedraOnEngine, RollingResistanceActsOnTheMeshBodyWithTheLeverToTheContact) {
  const double half_side = 0.5 * 0.01 * std::cbrt(M_PI / 6);
  std::array<Vec3, 2> torque, force;
  double weight = 0;
  for (int with = 0; with < 2; ++with) {
    std::string yaml = kCubeOnFloor;
    yaml.replace(yaml.find("stiffness: 1.0e5}\nparticles"), 17, with ? "stiffness: 1.0e5, rolling_friction: 0.2}" : "stiffness: 1.0e5}");
    yaml.replace(yaml.find("material: rock}\nmeshes"), 15, "material: rock, prescribed: true, angular_velocity: [1, 0, 0]}");
    SceneInputs in = scene_text(yaml);
    weight = 9.81 / double(in.particles.inv_mass[0]);
    in.particles.x[0].z = half_side - weight / 1.0e5;
    std::unique_ptr<Simulation> sim = TypeParam::make(in);
    run(*sim, 1);
    ASSERT_TRUE(sim->status().ok) << sim->status().message;
    torque[with] = sim->body_torque()[0];
    force[with] = sim->body_force()[0];
  }
  EXPECT_EQ(force[1].x, force[0].x);
  EXPECT_EQ(force[1].y, force[0].y);
  EXPECT_EQ(force[1].z, force[0].z);
  EXPECT_NEAR(force[0].z, -weight, 1e-6 * weight);
  const double lever = half_side - 0.5 * weight / 1.0e5;
  EXPECT_NEAR(torque[1].x - torque[0].x, 0.2 * lever * weight, 1e-6 * 0.2 * lever * weight);
  EXPECT_NEAR(torque[1].y - torque[0].y, 0, 1e-12 * lever * weight);
  EXPECT_NEAR(torque[1].z - torque[0].z, 0, 1e-12 * lever * weight);
}

// A sphere and a polyhedron whose bounding spheres overlap touch only where the sphere reaches the
// polyhedron's faces: the pair pass keeps the sphere's plane to say which (pair_in_contact, what
// the mixing indices count), in agreement with the exact distance, for every such pair of the
// polyhedra bin 0.16 s into the pour.
TYPED_TEST(PolyhedraOnEngine, ASphereAndAPolyhedronKeepWhetherTheyTouch) {
  const SceneInputs in = scene_text(kPolyhedraBinScene);
  std::unique_ptr<Simulation> sim = TypeParam::make(in);
  run(*sim, 8000);
  sim->compute_forces();  // (the planes of the positions exported)
  ASSERT_TRUE(sim->status().ok) << sim->status().message;
  host::ParticleArrays p;
  host::ContactState c;
  sim->export_state(p, c);
  ParticleView v = p.view();
  v.shapes = in.settings.shapes.data();
  std::map<std::int64_t, index_t> at;
  for (std::size_t i = 0; i < p.size(); ++i) at[p.id[i]] = static_cast<index_t>(i);
  int touching = 0, apart = 0;
  for (std::size_t k = 0; k < c.pair_a.size(); ++k) {
    const index_t a = at.at(c.pair_a[k]), b = at.at(c.pair_b[k]);
    if ((p.shape[a] >= 0) == (p.shape[b] >= 0)) continue;  // one sphere, one polyhedron
    const Vec3 kept = c.pair_history[k].rolling;
    const bool contact = polyhedral_overlap_fraction(v, a, b, p.x[b], kept) > 0;
    EXPECT_EQ(pair_in_contact(true, kept), contact) << "pair " << c.pair_a[k] << "-" << c.pair_b[k];
    (contact ? touching : apart) += 1;
  }
  EXPECT_GE(touching, 3);
  EXPECT_GT(apart, 10) << "bounding spheres that overlap without contact";
  // The engine's count of pairs in contact (diagnostics.csv's touching_pairs) is of the pairs whose
  // kept plane says so, not of every pair whose bounding spheres overlap; an engine restored from
  // the state with its evaluated forces gives the same count before its first step.
  std::size_t in_contact = 0;
  for (std::size_t k = 0; k < c.pair_a.size(); ++k) {
    const index_t a = at.at(c.pair_a[k]), b = at.at(c.pair_b[k]);
    in_contact += pair_in_contact(p.shape[a] >= 0 || p.shape[b] >= 0, c.pair_history[k].rolling) ? 1 : 0;
  }
  EXPECT_EQ(sim->touching_pairs(), in_contact);
  EXPECT_LT(in_contact + 10, c.pair_a.size());
  ASSERT_TRUE(c.forces_current);
  SceneInputs again = in;
  again.particles = p;
  std::unique_ptr<Simulation> restored = TypeParam::make(again);
  restored->restore_state(c, sim->step_count());
  EXPECT_EQ(restored->touching_pairs(), in_contact);
}

#if defined(DEM_TEST_HAS_DEVICE)
template <class E>
class PolyhedraAgree : public OnEngine<E> {};
TYPED_TEST_SUITE(PolyhedraAgree, DeviceEngines);

TYPED_TEST(PolyhedraAgree, MatchesHostOnPolyhedraSpheresAndAMovingPaddle) {
  compare_run<TypeParam>(scene_text(kPolyhedraBinScene), 2000, 250, "polyhedra bin",
                                   compare_orientation_with_host<TypeParam>());
}

// The demo's blade drives vertices past both walls of the drum's corners, where each wall meets
// the particle with its deepest point within the wall's element (core/contact/polyhedron_mesh.hpp):
// the run leaves the one without that rule from 0.02 s (step 2000).
TYPED_TEST(PolyhedraAgree, MatchesHostOnPolyhedraStirredIntoTheDrumsCorners) {
  compare_run<TypeParam>(scene_file("polyhedra/stirred.yaml"), 3000, 1000, "stirred polyhedra", compare_orientation_with_host<TypeParam>());
}

TYPED_TEST(PolyhedraAgree, MatchesHostWithRollingResistance) {
  const SceneInputs rolling = scene_text(kPolyhedraBinScene, "scene.yaml",
                                         {"interactions.rock-rock.rolling_friction=0.1", "interactions.rock-grain.rolling_friction=0.1",
                                          "interactions.rock-steel.rolling_friction=0.2"});
  compare_run<TypeParam>(rolling, 2000, 250, "polyhedra bin with rolling resistance", compare_orientation_with_host<TypeParam>());
  // (and the torque acts: the run differs from the one without)
  std::unique_ptr<Simulation> with = HostEngine::make(rolling), without = HostEngine::make(scene_text(kPolyhedraBinScene));
  run(*with, 2000);
  run(*without, 2000);
  const State a = capture(*with), b = capture(*without);
  double spin_change = 0;
  for (const auto& [id, f] : a.particles) spin_change += std::abs(f[6] - b.particles.at(id)[6]);
  EXPECT_GT(spin_change, 1.0);
}

TYPED_TEST(PolyhedraAgree, CountsTheCommonPlanesAsTheHostDoes) {
  for (const char* tolerance : {"simulation.common_plane_tolerance=0", "simulation.common_plane_tolerance=0.05"}) {
    const SceneInputs in = scene_text(kPolyhedraBinScene, "scene.yaml", {tolerance});
    std::unique_ptr<Simulation> host = HostEngine::make(in), device = TypeParam::make(in);
    run(*host, 1500);
    run(*device, 1500);
    EXPECT_TRUE(plane_stats(*host) == plane_stats(*device)) << tolerance;
    EXPECT_GT(plane_stats(*host).searches, 0u);
  }
}

TYPED_TEST(PolyhedraAgree, MatchesHostOnPolyhedraAloneOrientationsIncluded) {
  const std::string yaml = std::string(kPolyhedraBinScene);
  host::SceneConfig c = host::load_scene_from_string(yaml, "scene.yaml");
  c.fills.pop_back();  // polyhedra alone: their orientations compared on every system
  compare_run<TypeParam>(scene_text(periodic_polyhedra(0)), 4000, 1000, "polyhedra across a periodic face", true);
  compare_run<TypeParam>(host::build_scene_inputs(c), 2000, 500, "polyhedra alone, exact planes", true);
  c.simulation.common_plane_tolerance = 2e-4;
  compare_run<TypeParam>(host::build_scene_inputs(c), 2000, 500, "polyhedra alone, slow pairs' planes approximated", true);
}
#endif

}  // namespace
}  // namespace dem::test
