// Scenes of the engine tests (tests/engine/: every engine, and the engines against each other), as
// YAML text for load_scene_from_string; each says what it is for.
#pragma once
#include <cmath>
#include <sstream>
#include <string>

namespace dem::test {

// kBinScene's bin (steel, 12 cm square, 10 cm high) and its paddle turning at 10 rad/s, the meshes
// of the scenes poured into it.
inline const char* kBinMeshes = R"(
meshes:
  - name: bin
    material: steel
    vertices: [[-0.06,-0.06,0],[0.06,-0.06,0],[0.06,0.06,0],[-0.06,0.06,0],
               [-0.06,-0.06,0.1],[0.06,-0.06,0.1],[0.06,0.06,0.1],[-0.06,0.06,0.1]]
    faces: [[0,1,2,3],[0,4,5,1],[1,5,6,2],[2,6,7,3],[3,7,4,0]]
  - name: paddle
    material: steel
    vertices: [[-0.05,0,0.002],[0.05,0,0.002],[0.05,0,0.02],[-0.05,0,0.02]]
    faces: [[0,1,2,3]]
    motion: {angular_velocity: [0, 0, 10], center: [0, 0, 0]}
)";

// A small bin (floor and four walls as quads) with a rotating paddle and 300 polydisperse spheres.
inline const std::string kBinScene = std::string(R"(
name: bin
simulation: {dt: 2.0e-5, end_time: 0.02, gravity: [0, 0, -9.81]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
  - {materials: [grain, steel], friction: 0.4, restitution: 0.6, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.06], count: 300,
     radius: {distribution: uniform, min: 0.003, max: 0.005}, material: grain, velocity: [0, 0, -0.5], seed: 4}
)") + kBinMeshes;


// Polyhedra and spheres poured into kBinScene's bin with its turning paddle: cubes and
// tetrahedra at random orientations (material rock: the linear law with everything), spheres of
// grain (Hertz among themselves and on the steel). Every pair kind: polyhedron-polyhedron,
// sphere-polyhedron, sphere-sphere, and both against a still and a moving mesh.
inline const std::string kPolyhedraBinScene = std::string(R"(
name: polyhedra_bin
simulation: {dt: 2.0e-5, end_time: 0.04, gravity: [0, 0, -9.81]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [rock, rock], friction: 0.5, restitution: 0.5, normal: linear, stiffness: 2.0e4}
  - {materials: [rock, grain], friction: 0.5, restitution: 0.5, normal: linear, stiffness: 2.0e4}
  - {materials: [rock, steel], friction: 0.4, restitution: 0.6, normal: linear, stiffness: 4.0e4}
  - {materials: [grain, grain], friction: 0.5, restitution: 0.5}
  - {materials: [grain, steel], friction: 0.4, restitution: 0.6}
fills:
  - {shape: box, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.03], count: 40, polyhedron: cube,
     size: {distribution: uniform, min: 0.007, max: 0.009}, material: rock, velocity: [0, 0, -0.5], seed: 4}
  - {shape: box, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.05], count: 30, polyhedron: tetrahedron,
     size: 0.008, material: rock, velocity: [0, 0, -0.5], seed: 5}
  - {shape: box, min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.06], count: 40, radius: 0.003, material: grain,
     velocity: [0, 0, -0.5], seed: 6}
)") + kBinMeshes;

// A sphere of radius 1 inside a 12-sided prism of inradius 0.9: 12 valid facet contacts, more than
// the capacity kMaxMeshContacts = 8.
inline const char* kCageScene = R"(
simulation: {dt: 1.0e-6, end_time: 1.0e-5, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 1000, youngs_modulus: 1.0e6, poisson_ratio: 0.3}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g]}
  - {materials: [g, w]}
particles:
  - {position: [0, 0, 0], radius: 1.0, material: g}
meshes:
  - material: w
    vertices: [[0.9, -0.241154273, -1.0], [0.9, -0.241154273, 1.0], [0.9, 0.241154273, -1.0], [0.9, 0.241154273, 1.0], [0.658845727, 0.658845727, -1.0], [0.658845727, 0.658845727, 1.0], [0.241154273, 0.9, -1.0], [0.241154273, 0.9, 1.0], [-0.241154273, 0.9, -1.0], [-0.241154273, 0.9, 1.0], [-0.658845727, 0.658845727, -1.0], [-0.658845727, 0.658845727, 1.0], [-0.9, 0.241154273, -1.0], [-0.9, 0.241154273, 1.0], [-0.9, -0.241154273, -1.0], [-0.9, -0.241154273, 1.0], [-0.658845727, -0.658845727, -1.0], [-0.658845727, -0.658845727, 1.0], [-0.241154273, -0.9, -1.0], [-0.241154273, -0.9, 1.0], [0.241154273, -0.9, -1.0], [0.241154273, -0.9, 1.0], [0.658845727, -0.658845727, -1.0], [0.658845727, -0.658845727, 1.0]]
    faces: [[0, 2, 3, 1], [2, 4, 5, 3], [4, 6, 7, 5], [6, 8, 9, 7], [8, 10, 11, 9], [10, 12, 13, 11], [12, 14, 15, 13], [14, 16, 17, 15], [16, 18, 19, 17], [18, 20, 21, 19], [20, 22, 23, 21], [22, 0, 1, 23]]
)";

// A chain: a sphere at 1 m/s hits one at rest, which then runs 0.15 mm to a third at rest (ids 0,
// 1, 2 in that order), with 30 more at rest 1 cm away (so that the grids have more particles than
// the 27 cells around one). No gravity, dt 1 us: the third is hit within 400 steps. For the lists
// kept past a particle's skin (Engine::list_holds, DeviceEngine::list_holds).
inline std::string chain_scene() {
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 1.0e-6, end_time: 0.001, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.9}
particles:
  - {position: [0, 0, 0], velocity: [1, 0, 0], radius: 0.001, material: g}
  - {position: [0.00201, 0, 0], velocity: [0, 0, 0], radius: 0.001, material: g}
  - {position: [0.00416, 0, 0], velocity: [0, 0, 0], radius: 0.001, material: g}
)";
  for (int k = 0; k < 30; ++k)
    yaml << "  - {position: [" << 0.003 * (k % 10) << ", " << 0.003 * (k / 10) << ", 0.01], radius: 0.001, material: g}\n";
  return yaml.str();
}

// A wall at x = 0 (a 4 cm square) and its materials, no gravity, dt 1 us; `motion` (YAML flow
// map, or empty) moves it. The particles follow under `particles:`.
inline std::string wall_scene_head(const std::string& motion) {
  std::string yaml = R"(
simulation: {dt: 1.0e-6, end_time: 0.002, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.6}
meshes:
  - name: wall
    material: w
    vertices: [[0, -0.02, -0.02], [0, 0.02, -0.02], [0, 0.02, 0.02], [0, -0.02, 0.02]]
    faces: [[0, 1, 2, 3]]
)";
  if (!motion.empty()) yaml += "    motion: " + motion + "\n";
  return yaml + "particles:\n";
}

// A sphere (id 0) flying at 10 m/s at a wall 8.5 mm away, 30 more at rest behind the wall: the
// sphere bounces within 1500 steps. For the mesh candidate lists kept past a particle's mesh skin
// (Engine::mesh_lists_hold, DeviceEngine::mesh_lists_hold).
inline std::string wall_flight_scene() {
  std::ostringstream yaml;
  yaml << wall_scene_head("") << "  - {position: [0.0095, 0, 0], velocity: [-10, 0, 0], radius: 0.001, material: g}\n";
  for (int k = 0; k < 30; ++k)
    yaml << "  - {position: [-0.005, " << 0.003 * (k % 6) - 0.0075 << ", " << 0.003 * (k / 6) - 0.006
         << "], radius: 0.001, material: g}\n";
  return yaml.str();
}

// The wall moving at 10 m/s onto a small sphere (id 0) at rest 1.5 mm away, 30 large ones (4 mm)
// at rest far behind it: the wall's travel puts the small sphere past its mesh skin (half its
// radius) after 50 steps, the large ones after 200 (half theirs), and the wall reaches the small
// one at about the 150th. For the kept mesh lists' check against a moving body.
inline std::string moving_wall_scene() {
  std::ostringstream yaml;
  yaml << wall_scene_head("{velocity: [10, 0, 0]}") << "  - {position: [0.0025, 0, 0], radius: 0.001, material: g}\n";
  for (int k = 0; k < 30; ++k)
    yaml << "  - {position: [-0.05, " << 0.01 * (k % 6) - 0.025 << ", " << 0.01 * (k / 6) - 0.02
         << "], radius: 0.004, material: g}\n";
  return yaml.str();
}

// A floor of 24 triangles meeting at the origin (a fan of radius 3 cm): the sphere over the centre
// has all 24 within reach (a long candidate list), and three more slide across the triangles' edges
// (contacts move from facet to edge to facet). Each sphere starts at its static Hertz overlap
// (3.8 um) and stays on the floor. For long mesh candidate lists kept with a skin.
inline std::string fan_floor_scene() {
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 1.0e-5, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.6}
particles:
  - {position: [0.001, 0.0005, 0.0039962], velocity: [-0.1, 0, 0], radius: 0.004, material: g}
  - {position: [0.012, 0, 0.0039962], velocity: [0, 0.4, 0], radius: 0.004, material: g}
  - {position: [-0.012, 0, 0.0039962], velocity: [0, -0.4, 0], radius: 0.004, material: g}
  - {position: [0, -0.012, 0.0039962], velocity: [0.4, 0, 0], radius: 0.004, material: g}
meshes:
  - name: fan
    material: w
    vertices: [[0, 0, 0])";
  const int sides = 24;
  for (int k = 0; k < sides; ++k) {
    const double a = 2 * M_PI * k / sides;
    yaml << ", [" << 0.03 * std::cos(a) << ", " << 0.03 * std::sin(a) << ", 0]";
  }
  yaml << "]\n    faces: [";
  for (int k = 0; k < sides; ++k) yaml << (k ? ", " : "") << "[0, " << 1 + k << ", " << 1 + (k + 1) % sides << "]";
  yaml << "]\n";
  return yaml.str();
}

// A plate of four quads (20 cm square) turning at kTurningPlateOmega about z, no gravity, and 8
// spheres of radius kTurningPlateRadius flying with it (each at the plate's velocity where it is)
// 1.5 skins of kTurningPlateSkin above it: the plate's elements are outside their mesh lists but
// within the search's margin. For mesh lists of particles carried by a turning body.
constexpr double kTurningPlateOmega = 10;     // rad/s
constexpr double kTurningPlateRadius = 0.002;  // m
constexpr double kTurningPlateSkin = 0.002;    // m: the skin the test gives the lists
inline std::string turning_plate_scene() {
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 1.0e-5, end_time: 0.02, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g]}
  - {materials: [g, w]}
meshes:
  - name: plate
    material: w
    vertices: [[-0.1, -0.1, 0], [0, -0.1, 0], [0.1, -0.1, 0], [-0.1, 0, 0], [0, 0, 0], [0.1, 0, 0],
               [-0.1, 0.1, 0], [0, 0.1, 0], [0.1, 0.1, 0]]
    faces: [[0, 1, 4, 3], [1, 2, 5, 4], [3, 4, 7, 6], [4, 5, 8, 7]]
    motion: {angular_velocity: [0, 0, 10], center: [0, 0, 0]}
particles:
)";
  const double omega = kTurningPlateOmega, r = kTurningPlateRadius, z = r + 1.5 * kTurningPlateSkin;
  for (int k = 0; k < 8; ++k) {
    const double x = -0.07 + 0.02 * k, y = 0.05 - 0.015 * k;
    yaml << "  - {position: [" << x << ", " << y << ", " << z << "], radius: " << r << ", material: g, velocity: ["
         << -omega * y << ", " << omega * x << ", 0]}\n";
  }
  return yaml.str();
}

// A wall (10 cm square at x = -0.01) translating at 1 m/s into 60 spheres of 3 mm flying at it at
// 0.5 m/s, no gravity: every sphere bounces off it within 3000 steps. For candidate lists that
// must account for a body's own travel, not only the particles'.
inline const char* kFastWallScene = R"(
simulation: {dt: 1.0e-5, end_time: 0.02, gravity: [0, 0, 0]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.6}
fills:
  - {shape: box, pattern: random, min: [0.0, -0.04, -0.04], max: [0.03, 0.04, 0.04], count: 60, radius: 0.003,
     material: g, velocity: [-0.5, 0, 0], seed: 7}
meshes:
  - name: wall
    material: w
    vertices: [[-0.01, -0.05, -0.05], [-0.01, 0.05, -0.05], [-0.01, 0.05, 0.05], [-0.01, -0.05, 0.05]]
    faces: [[0, 1, 2, 3]]
    motion: {velocity: [1.0, 0, 0]}
)";

// A wide size distribution on a fine floor: 150 spheres of 0.5 mm settling on a floor of 30 x 30
// quads of 1 mm, and one 10 mm sphere (id 150) landing on them. For per-particle mesh skins (the
// fines' lists stay short while the boulder's is long).
inline std::string wide_distribution_floor_scene() {
  std::ostringstream yaml;
  yaml << R"(
simulation: {dt: 2.0e-6, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 5.0e7, poisson_ratio: 0.25}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
  - {materials: [g, w], friction: 0.3, restitution: 0.05}
fills:
  - {shape: box, pattern: random, min: [0.001, 0.001, 0.0], max: [0.029, 0.029, 0.0011], count: 150, radius: 0.0005,
     material: g, velocity: [0, 0, -0.05], seed: 3}
particles:
  - {position: [0.015, 0.015, 0.0113], velocity: [0, 0, -0.1], radius: 0.01, material: g}
meshes:
  - name: floor
    material: w
    vertices: [)";
  const int side = 30;  // quads of 1 mm
  for (int j = 0; j <= side; ++j)
    for (int i = 0; i <= side; ++i) yaml << (i || j ? ", " : "") << "[" << 0.001 * i << ", " << 0.001 * j << ", 0]";
  yaml << "]\n    faces: [";
  for (int j = 0; j < side; ++j)
    for (int i = 0; i < side; ++i) {
      const int v = j * (side + 1) + i;
      yaml << (i || j ? ", " : "") << "[" << v << ", " << v + 1 << ", " << v + side + 2 << ", " << v + side + 1 << "]";
    }
  yaml << "]\n";
  return yaml.str();
}

// A 4 cm cube periodic on every axis, no walls, no gravity, 2,000 spheres of 1.1 to 1.5 mm at rest
// (the test gives them velocities). For the pair loads' exact cancellation for any thread count.
inline const char* kPeriodicCubeScene = R"(
name: periodic cube
simulation: {dt: 1e-5, end_time: 1, gravity: [0, 0, 0]}
domain: {min: [0, 0, 0], max: [0.04, 0.04, 0.04], periodic: [x, y, z]}
materials:
  - {name: glass, density: 2500, youngs_modulus: 5e6, poisson_ratio: 0.25}
interactions:
  - {materials: [glass, glass], friction: 0.5, restitution: 0.5, rolling_friction: 0.01}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [0.04, 0.04, 0.04], count: 2000,
     radius: {distribution: uniform, min: 0.0011, max: 0.0015}, material: glass, seed: 5}
)";

// A column of 14 layers of 2 mm spheres on a cubic lattice (9 x 9 x 14 = 1,134) standing on a 4 cm
// square floor, the bottom layer touching it. For mesh-contact slots only where a mesh is near.
inline const char* kColumnOnAFloorScene = R"(
name: column
simulation: {dt: 1e-5, end_time: 1, gravity: [0, 0, -9.81]}
materials:
  - {name: glass, density: 2500, youngs_modulus: 5e6, poisson_ratio: 0.25}
  - {name: wall, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [glass, glass], friction: 0.5, restitution: 0.5}
  - {materials: [glass, wall], friction: 0.5, restitution: 0.5}
fills:
  - {shape: box, pattern: regular, min: [0, 0, -0.004], max: [0.04, 0.04, 0.06], radius: 0.002, material: glass}
meshes:
  - {name: floor, material: wall, vertices: [[0, 0, 0], [0.04, 0, 0], [0.04, 0.04, 0], [0, 0.04, 0]], faces: [[0, 1, 2, 3]]}
)";

// kCageScene's sphere dropped at 20 m/s into the cage's rim from 1 m above it, at dt 10 us: at its
// step 2,821 the sphere has 12 valid mesh contacts, more than its block holds.
inline std::string cage_drop_scene() {
  std::string scene = kCageScene;
  const auto swap = [&scene](const std::string& from, const std::string& to) { scene.replace(scene.find(from), from.size(), to); };
  swap("simulation: {dt: 1.0e-6, end_time: 1.0e-5, gravity: [0, 0, 0]}", "simulation: {dt: 1.0e-5, end_time: 0.05, gravity: [0, 0, 0]}");
  swap("  - {position: [0, 0, 0], radius: 1.0, material: g}", "  - {position: [0, 0, 2.0], velocity: [0, 0, -20], radius: 1.0, material: g}");
  return scene;
}

// kCageScene with a second sphere (radius 0.5 m at x = 5 m) outside a health domain of +-2 m, and
// with (caged = true) or without the caged sphere: an escape in the same step as a full mesh
// contact list, or alone.
inline std::string cage_and_escaped_sphere_scene(bool caged) {
  std::string scene = kCageScene;
  const std::string first = "  - {position: [0, 0, 0], radius: 1.0, material: g}\n";
  const std::string outside = "  - {position: [5, 0, 0], radius: 0.5, material: g}\n";
  const std::size_t at = scene.find(first);
  return scene.replace(at, first.size(), caged ? first + outside : outside);
}

// A sphere (R = 0.3 m) pressed 5 cm into a plate of 3,200 triangles of 2.5 cm: some 300 elements
// pass the Fast Intersection Test at once, more than H2's candidate buffer (kMaxH2Candidates = 64),
// which is compacted on the way; the coplanar facets leave one valid contact.
inline std::string fine_plate_scene() {
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
  return y.str();
}

// Two grains whose pairs share the host engine's vector lanes, each lane with its own law's
// parameters (grain-grain, grain-glass, glass-steel...), beside glass-glass pairs of a law the
// lanes do not take (cohesion), 200 of each, poured into kBinScene's bin and paddle. For mixed
// laws in the host's lanes against the device engine's one pair at a time.
inline std::string mixed_laws_scene() {
  const std::string bin = kBinScene;
  return R"(
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
)" + bin.substr(bin.find("meshes:"));
}

// One sphere (r = 5 mm) resting on a 2 m floor at its static overlap, gravity tilted by alpha about
// y, friction 0.5 (tan alpha < 0.5 holds sliding), the given rolling model and rolling friction
// mu_r, and an initial rolling speed v0 (m/s, with the matching spin). For the rolling laws.
inline std::string sphere_on_slope_scene(double alpha, const std::string& rolling, double mu_r, double dt,
                                         double v0 = 0) {
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
  return s.str();
}

// Five spheres of 5 mm in a column over a floor, 1 mm gaps (they arrive one on another), every
// restitution 0. For the perfectly plastic law coming to rest.
inline std::string plastic_column_scene() {
  const double r = 0.005;
  std::ostringstream s;
  s.precision(17);
  s << "simulation: {dt: 2.0e-5, end_time: 1, gravity: [0, 0, -9.81]}\n"
    << "materials:\n  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}\n"
    << "  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}\n"
    << "interactions:\n  - {materials: [grain, grain], friction: 0.5, restitution: 0}\n"
    << "  - {materials: [grain, steel], friction: 0.5, restitution: 0}\n"
    << "particles:\n";
  for (int k = 0; k < 5; ++k) s << "  - {position: [0, 0, " << r + 1e-3 + k * (2 * r + 1e-3) << "], radius: " << r << ", material: grain}\n";
  s << "meshes:\n  - {material: steel, vertices: [[-0.1,-0.1,0],[0.1,-0.1,0],[0.1,0.1,0],[-0.1,0.1,0]], faces: [[0,1,2,3]]}\n";
  return s.str();
}

// A small periodic chute: x and y repeat, a base of two quads spans the period, gravity tilted
// down the slope, 200 spheres poured with a lateral velocity so that many cross the faces (and
// touch across them) while they slide and roll over the base.
inline const char* kPeriodicChuteScene = R"(
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

// A 5 cm box periodic on all three axes, no walls, no gravity, 400 spheres of 2 to 3 mm at rest
// (the test gives them random velocities). For momentum across periodic faces.
inline const char* kPeriodicBoxScene = R"(
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

// One sphere (r = 5 mm) thrown at 2 m/s along a plate: periodic in x with a period of 5 cm spanned
// by two quads (a crossing lands on the other element), or (periodic = false) 0.6 m long. It
// slides, then rolls. For a sphere rolling across periodic faces as on a long plate.
inline std::string rolling_sphere_scene(bool periodic) {
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
  return s;
}

// A bin of 2,500 spheres of 1 to 10 mm (equal volume per size class: mostly fines, a few boulders)
// poured onto its floor. For the broad phases (uniform grid, HGrid, BSP) finding the same pairs.
inline const char* kPolydisperseBinScene = R"(
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

}  // namespace dem::test
