// Scenes shared by the engine tests (host and device), as YAML text for load_scene_from_string.
#pragma once
#include <sstream>
#include <string>

namespace dem::test {

// A small bin (floor and four walls as quads) with a rotating paddle and 300 polydisperse spheres.
inline const char* kBinScene = R"(
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

}  // namespace dem::test
