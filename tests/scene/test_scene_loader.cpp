// Scene loader: a full scene, --set overrides, every validation failure (file, line and key in the
// message) and mesh path resolution.
#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "host/sim/errors.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace dem::host {
namespace {

namespace fs = std::filesystem;

// Every key of the schema at least once. Line numbers matter only for kBase below.
const char* const kFull = R"(name: full
simulation: {dt: 2.0e-5, end_time: 1.5, gravity: [0, -9.8, 0], skin: 0.001, neighbour_interval: 20}
materials:
  - {name: glass, density: 2500, youngs_modulus: 5e7, poisson_ratio: 0.25}
  - {name: sand, density: 1600, youngs_modulus: 1e7, poisson_ratio: -0.2}
  - {name: steel_wall, youngs_modulus: .inf, poisson_ratio: 0.3}
interactions:
  - {materials: [glass, glass], friction: 0.5, restitution: 0.4, rolling_friction: 0.001}
  - {materials: [glass, sand], friction: 0.4, restitution: 0.5}
  - {materials: [sand, sand], friction: 0.6, restitution: 1, rolling_friction: 0.01}
  - {materials: [steel_wall, glass], friction: 0.3, restitution: 0.6}
  - {materials: [sand, steel_wall]}
particles:
  - {position: [0, 0, 1], velocity: [1, 2, 3], angular_velocity: [4, 5, 6], radius: 0.3,
     material: glass, prescribed: true}
  - {position: [1, 0, 1], radius: 0.2, material: sand}
fills:
  - shape: box
    pattern: random
    min: [0, 0, 0]
    max: [1, 2, 3]
    count: 1000
    radius: 0.003
    material: glass
    velocity: [0, 0, -1]
    seed: 7
  - shape: cylinder
    pattern: regular
    base: [0, 0, 0.5]
    axis: [0, 0, 2]
    cylinder_radius: 0.5
    length: 2
    spacing: 0.01
    radius: {distribution: uniform, min: 0.002, max: 0.004}
    material: sand
  - min: [0, 0, 0]
    max: [1, 1, 1]
    count: 1e4
    radius: {distribution: discrete, values: [0.002, 0.004], weights: [1, 3]}
    material: glass
meshes:
  - name: blade
    file: meshes/blade.obj
    scale: 0.001
    rotation: [90, 0, 45]
    translation: [0, 0, 0.5]
    motion: {velocity: [0, 0, 0.1], angular_velocity: [0, 0, 18.85], center: [0, 0, 0.2]}
    material: steel_wall
  - vertices: [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0]]
    faces: [[0, 1, 2, 3], [1, 4, 2]]
    material: steel_wall
output: {snapshot_interval: 0.01, probe_interval: 0.001, probe_ids: [0, 3], vtk: false}
)";

// A small valid scene; the validation cases edit it, and expect the line numbers shown.
const char* const kBase = R"(name: demo
simulation:
  dt: 1.0e-5
  end_time: 0.5
  gravity: [0, 0, -9.81]
materials:
  - {name: glass, density: 2500, youngs_modulus: 5.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [glass, glass], friction: 0.5, restitution: 0.4, rolling_friction: 0.001}
  - {materials: [glass, steel], friction: 0.3, restitution: 0.6}
particles:
  - {position: [0, 0, 1], radius: 0.3, material: glass}
fills:
  - shape: box
    min: [0, 0, 0]
    max: [1, 1, 1]
    count: 100
    radius: 0.01
    material: glass
meshes:
  - name: floor
    vertices: [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]
    faces: [[0, 1, 2, 3]]
    material: steel
)";

// The message of the InputError that loading throws, or "" (a test failure) if none.
std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    load_scene_from_string(yaml, "scene.yaml", overrides);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

std::string edited(std::string text, const std::vector<std::pair<std::string, std::string>>& edits) {
  for (const auto& [from, to] : edits) {
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "'" << from << "' is not in the base scene";
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  return text;
}

TEST(SceneLoader, FullSceneParsesEveryField) {
  const SceneConfig c = load_scene_from_string(kFull, "dir/full.yaml");
  EXPECT_EQ(c.source, "dir/full.yaml");
  EXPECT_EQ(c.name, "full");
  EXPECT_DOUBLE_EQ(c.simulation.dt, 2.0e-5);
  EXPECT_DOUBLE_EQ(c.simulation.end_time, 1.5);
  EXPECT_EQ(c.simulation.gravity, (Vec3d{0, -9.8, 0}));
  EXPECT_DOUBLE_EQ(c.simulation.skin, 0.001);
  EXPECT_EQ(c.simulation.neighbour_interval, 20);

  ASSERT_EQ(c.materials.size(), 3u);
  EXPECT_EQ(c.materials[0].name, "glass");
  EXPECT_DOUBLE_EQ(c.materials[0].density, 2500);
  EXPECT_DOUBLE_EQ(c.materials[0].youngs_modulus, 5e7);
  EXPECT_DOUBLE_EQ(c.materials[0].poisson_ratio, 0.25);
  EXPECT_DOUBLE_EQ(c.materials[1].poisson_ratio, -0.2);
  EXPECT_EQ(c.materials[2].name, "steel_wall");
  EXPECT_EQ(c.materials[2].density, 0);
  EXPECT_TRUE(std::isinf(c.materials[2].youngs_modulus));

  ASSERT_EQ(c.interactions.size(), 5u);
  EXPECT_EQ(c.interactions[0].material_a, "glass");
  EXPECT_EQ(c.interactions[0].material_b, "glass");
  EXPECT_DOUBLE_EQ(c.interactions[0].friction, 0.5);
  EXPECT_DOUBLE_EQ(c.interactions[0].restitution, 0.4);
  EXPECT_DOUBLE_EQ(c.interactions[0].rolling_friction, 0.001);
  EXPECT_EQ(c.interactions[3].material_a, "steel_wall");
  EXPECT_EQ(c.interactions[3].material_b, "glass");
  EXPECT_DOUBLE_EQ(c.interactions[4].friction, 0);  // defaults
  EXPECT_DOUBLE_EQ(c.interactions[4].restitution, 1);
  EXPECT_DOUBLE_EQ(c.interactions[4].rolling_friction, 0);

  ASSERT_EQ(c.particles.size(), 2u);
  const ParticleSpec& p = c.particles[0];
  EXPECT_EQ(p.position, (Vec3d{0, 0, 1}));
  EXPECT_EQ(p.velocity, (Vec3d{1, 2, 3}));
  EXPECT_EQ(p.angular_velocity, (Vec3d{4, 5, 6}));
  EXPECT_DOUBLE_EQ(p.radius, 0.3);
  EXPECT_EQ(p.material, "glass");
  EXPECT_TRUE(p.prescribed);
  EXPECT_FALSE(c.particles[1].prescribed);
  EXPECT_EQ(c.particles[1].velocity, (Vec3d{0, 0, 0}));

  ASSERT_EQ(c.fills.size(), 3u);
  const FillSpec& box = c.fills[0];
  EXPECT_EQ(box.shape, FillSpec::Shape::Box);
  EXPECT_EQ(box.pattern, FillSpec::Pattern::Random);
  EXPECT_EQ(box.box_min, (Vec3d{0, 0, 0}));
  EXPECT_EQ(box.box_max, (Vec3d{1, 2, 3}));
  EXPECT_EQ(box.count, 1000);
  EXPECT_EQ(box.spacing, 0);
  EXPECT_EQ(box.radius.kind, RadiusDistribution::Kind::Constant);
  EXPECT_DOUBLE_EQ(box.radius.radius, 0.003);
  EXPECT_EQ(box.material, "glass");
  EXPECT_EQ(box.velocity, (Vec3d{0, 0, -1}));
  EXPECT_EQ(box.seed, 7u);
  const FillSpec& cyl = c.fills[1];
  EXPECT_EQ(cyl.shape, FillSpec::Shape::Cylinder);
  EXPECT_EQ(cyl.pattern, FillSpec::Pattern::Regular);
  EXPECT_EQ(cyl.cylinder_base, (Vec3d{0, 0, 0.5}));
  EXPECT_EQ(cyl.cylinder_axis, (Vec3d{0, 0, 1}));  // normalised
  EXPECT_DOUBLE_EQ(cyl.cylinder_radius, 0.5);
  EXPECT_DOUBLE_EQ(cyl.cylinder_length, 2);
  EXPECT_EQ(cyl.count, 0);
  EXPECT_DOUBLE_EQ(cyl.spacing, 0.01);
  EXPECT_EQ(cyl.radius.kind, RadiusDistribution::Kind::Uniform);
  EXPECT_DOUBLE_EQ(cyl.radius.min, 0.002);
  EXPECT_DOUBLE_EQ(cyl.radius.max, 0.004);
  EXPECT_EQ(cyl.seed, 1u);
  const FillSpec& discrete = c.fills[2];
  EXPECT_EQ(discrete.shape, FillSpec::Shape::Box);
  EXPECT_EQ(discrete.count, 10000);
  EXPECT_EQ(discrete.radius.kind, RadiusDistribution::Kind::Discrete);
  EXPECT_EQ(discrete.radius.values, (std::vector<double>{0.002, 0.004}));
  EXPECT_EQ(discrete.radius.weights, (std::vector<double>{1, 3}));

  ASSERT_EQ(c.meshes.size(), 2u);
  const MeshSpec& blade = c.meshes[0];
  EXPECT_EQ(blade.name, "blade");
  EXPECT_EQ(blade.file, "meshes/blade.obj");  // from a string: relative to the current directory
  EXPECT_DOUBLE_EQ(blade.scale[0], 0.001);
  EXPECT_DOUBLE_EQ(blade.scale[2], 0.001);
  EXPECT_EQ(blade.rotation_deg, (Vec3d{90, 0, 45}));
  EXPECT_EQ(blade.translation, (Vec3d{0, 0, 0.5}));
  EXPECT_EQ(blade.motion.velocity, (Vec3d{0, 0, 0.1}));
  EXPECT_EQ(blade.motion.angular_velocity, (Vec3d{0, 0, 18.85}));
  EXPECT_EQ(blade.motion.center, (Vec3d{0, 0, 0.2}));
  EXPECT_EQ(blade.material, "steel_wall");
  const MeshSpec& inline_mesh = c.meshes[1];
  EXPECT_EQ(inline_mesh.name, "mesh1");
  EXPECT_TRUE(inline_mesh.file.empty());
  EXPECT_EQ(inline_mesh.inline_mesh.source, "<inline>");
  EXPECT_EQ(inline_mesh.inline_mesh.vertices.size(), 5u);
  EXPECT_EQ(inline_mesh.inline_mesh.vertices[4], (Vec3d{2, 0, 0}));
  ASSERT_EQ(inline_mesh.inline_mesh.num_faces(), 2u);
  EXPECT_EQ(inline_mesh.inline_mesh.face_offsets, (std::vector<std::int32_t>{0, 4, 7}));
  EXPECT_EQ(inline_mesh.inline_mesh.face_vertices, (std::vector<std::int32_t>{0, 1, 2, 3, 1, 4, 2}));
  EXPECT_DOUBLE_EQ(inline_mesh.scale[1], 1);

  EXPECT_DOUBLE_EQ(c.output.snapshot_interval, 0.01);
  EXPECT_DOUBLE_EQ(c.output.probe_interval, 0.001);
  EXPECT_EQ(c.output.probe_ids, (std::vector<std::int64_t>{0, 3}));
  EXPECT_FALSE(c.output.vtk);
}

TEST(SceneLoader, DefaultsAndNameFromStem) {
  const SceneConfig c = load_scene_from_string("simulation: {dt: 1e-5, end_time: 1}\n", "dir/drum.yaml");
  EXPECT_EQ(c.name, "drum");
  EXPECT_EQ(c.simulation.gravity, (Vec3d{0, 0, -9.81}));
  EXPECT_EQ(c.simulation.skin, -1);
  EXPECT_EQ(c.simulation.neighbour_interval, 0);
  EXPECT_TRUE(c.materials.empty() && c.particles.empty() && c.fills.empty() && c.meshes.empty());
  EXPECT_TRUE(c.output.vtk);
}

TEST(SceneLoader, OverrideScalar) {
  const SceneConfig c = load_scene_from_string(kBase, "scene.yaml", {"simulation.dt=2e-5"});
  EXPECT_DOUBLE_EQ(c.simulation.dt, 2e-5);
  EXPECT_DOUBLE_EQ(c.simulation.end_time, 0.5);
}

TEST(SceneLoader, OverrideList) {
  const SceneConfig c = load_scene_from_string(kBase, "scene.yaml",
                                               {"output.probe_ids=[0,5,7]", "simulation.gravity=[0, 0, -1]"});
  EXPECT_EQ(c.output.probe_ids, (std::vector<std::int64_t>{0, 5, 7}));
  EXPECT_EQ(c.simulation.gravity, (Vec3d{0, 0, -1}));
}

TEST(SceneLoader, OverrideNamedEntry) {
  const SceneConfig c = load_scene_from_string(
      kBase, "scene.yaml",
      {"materials.steel.poisson_ratio=0.2", "materials.glass.youngs_modulus=6e7", "meshes.floor.scale=2"});
  EXPECT_DOUBLE_EQ(c.materials[1].poisson_ratio, 0.2);
  EXPECT_DOUBLE_EQ(c.materials[0].youngs_modulus, 6e7);
  EXPECT_DOUBLE_EQ(c.meshes[0].scale[1], 2);
}

// Interactions answer to their name, or without one to their materials joined by '-' in either order.
TEST(SceneLoader, OverrideInteractionByNameOrMaterials) {
  const SceneConfig c = load_scene_from_string(
      kBase, "scene.yaml", {"interactions.glass-steel.friction=0.11", "interactions.glass-glass.restitution=0.7"});
  EXPECT_DOUBLE_EQ(c.interactions[1].friction, 0.11);
  EXPECT_DOUBLE_EQ(c.interactions[0].restitution, 0.7);
  EXPECT_EQ(c.interactions[1].name, "glass-steel");
  const SceneConfig d = load_scene_from_string(kBase, "scene.yaml", {"interactions.steel-glass.friction=0.12"});
  EXPECT_DOUBLE_EQ(d.interactions[1].friction, 0.12);
  const SceneConfig e = load_scene_from_string(
      kBase, "scene.yaml", {"interactions.1.name=wall_contact", "interactions.wall_contact.rolling_friction=0.02"});
  EXPECT_EQ(e.interactions[1].name, "wall_contact");
  EXPECT_DOUBLE_EQ(e.interactions[1].rolling_friction, 0.02);
  EXPECT_NE(error_of(kBase, {"interactions.1.name=glass-glass"}).find(
                "interactions[1].name 'glass-glass' is already used by interactions[0]"),
            std::string::npos)
      << error_of(kBase, {"interactions.1.name=glass-glass"});
}

TEST(SceneLoader, OverrideIndexedEntry) {
  const SceneConfig c =
      load_scene_from_string(kBase, "scene.yaml", {"fills.0.count=20000", "particles.0.radius=0.25"});
  EXPECT_EQ(c.fills[0].count, 20000);
  EXPECT_DOUBLE_EQ(c.particles[0].radius, 0.25);
}

TEST(SceneLoader, OverrideSetsKeysLeftAtDefault) {
  const SceneConfig c =
      load_scene_from_string(kBase, "scene.yaml",
                             {"simulation.skin=0.002", "fills.0.seed=42", "output.vtk=false",
                              "fills.0.radius={distribution: uniform, min: 0.001, max: 0.002}"});
  EXPECT_DOUBLE_EQ(c.simulation.skin, 0.002);
  EXPECT_EQ(c.fills[0].seed, 42u);
  EXPECT_FALSE(c.output.vtk);
  EXPECT_EQ(c.fills[0].radius.kind, RadiusDistribution::Kind::Uniform);
}

TEST(SceneLoader, OverrideErrorsNameTheOverride) {
  EXPECT_EQ(error_of(kBase, {"simulation.td=1"}),
            "--set simulation.td=1: unknown key 'td' in 'simulation'; did you mean 'dt'?");
  EXPECT_EQ(error_of(kBase, {"simulaton.dt=1"}),
            "--set simulaton.dt=1: unknown key 'simulaton' at the top level; did you mean 'simulation'?");
  EXPECT_EQ(error_of(kBase, {"materials.glas.density=1"}),
            "--set materials.glas.density=1: no entry named 'glas' in 'materials'; did you mean 'glass'?");
  EXPECT_EQ(
      error_of(kBase, {"materials.glass.densty=1"}),
      "--set materials.glass.densty=1: unknown key 'densty' in 'materials[0]'; did you mean 'density'?");
  EXPECT_EQ(error_of(kBase, {"fills.3.count=1"}), "--set fills.3.count=1: 'fills' has no entry 3 (it has 1)");
  EXPECT_EQ(error_of(kBase, {"interactions.glass.friction=1"}),
            "--set interactions.glass.friction=1: no entry named 'glass' in 'interactions'; did you mean "
            "'glass-glass'?");
  EXPECT_EQ(error_of(kBase, {"particles.first.radius=1"}),
            "--set particles.first.radius=1: entries of 'particles' have no name; address them by index");
  EXPECT_EQ(error_of(kBase, {"simulation.dt.x=1"}),
            "--set simulation.dt.x=1: 'simulation.dt' is a value, not a section");
  EXPECT_EQ(error_of(kBase, {"simulation.dt"}), "--set simulation.dt: expected key=value");
  EXPECT_EQ(error_of(kBase, {"simulation..dt=1"}), "--set simulation..dt=1: empty key in 'simulation..dt'");
  // The value goes through the same validation, and the message names the override.
  EXPECT_EQ(error_of(kBase, {"simulation.dt=-1"}),
            "--set simulation.dt=-1: simulation.dt must be > 0 (got -1)");
  EXPECT_EQ(
      error_of(kBase, {"materials.glass.youngs_modulus=abc"}),
      "--set materials.glass.youngs_modulus=abc: materials[0].youngs_modulus must be a number (got abc)");
  EXPECT_EQ(error_of(kBase, {"fills.0.radius.min=0.001"}),
            "--set fills.0.radius.min=0.001: fills[0].radius.distribution is required");
  EXPECT_EQ(
      error_of(kBase, {"simulation={dt: 1, end_time: 2, td: 3}"}),
      "--set simulation={dt: 1, end_time: 2, td: 3}: unknown key 'td' in 'simulation'; did you mean 'dt'?");
  // An error elsewhere still points into the file.
  EXPECT_EQ(error_of(kBase, {"particles.0.material=steel"}),
            "scene.yaml:8: materials[1].density is required: particles use material 'steel'");
}

struct BadScene {
  const char* name;
  std::vector<std::pair<std::string, std::string>> edits;  // applied to kBase
  int line;                                                // expected in "scene.yaml:<line>:"
  std::string message;                                     // expected substring (key and problem)
};

void PrintTo(const BadScene& c, std::ostream* os) { *os << c.name; }

class SceneValidation : public testing::TestWithParam<BadScene> {};

TEST_P(SceneValidation, NamesFileLineAndKey) {
  const BadScene& c = GetParam();
  const std::string message = error_of(edited(kBase, c.edits));
  EXPECT_NE(message.find("scene.yaml:" + std::to_string(c.line) + ": "), std::string::npos) << message;
  EXPECT_NE(message.find(c.message), std::string::npos) << message;
}

// clang-format off
const std::string kSimulation = "simulation:\n  dt: 1.0e-5\n  end_time: 0.5\n  gravity: [0, 0, -9.81]\n";
const std::string kSand = "  - {name: sand, density: 1600, youngs_modulus: 1e7, poisson_ratio: 0.3}\n";
const std::string kGlassSteel = "  - {materials: [glass, steel], friction: 0.3, restitution: 0.6}\n";
const std::string kFloorGeometry =
    "    vertices: [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]\n    faces: [[0, 1, 2, 3]]\n";

INSTANTIATE_TEST_SUITE_P(SceneLoader, SceneValidation, testing::Values(
  // required keys
  BadScene{"missing_simulation", {{kSimulation, ""}}, 1, "simulation is required"},
  BadScene{"missing_dt", {{"  dt: 1.0e-5\n", ""}}, 3, "simulation.dt is required"},
  BadScene{"missing_end_time", {{"  end_time: 0.5\n", ""}}, 3, "simulation.end_time is required"},
  BadScene{"missing_youngs_modulus", {{", youngs_modulus: 5.0e7", ""}}, 7,
           "materials[0].youngs_modulus is required"},
  BadScene{"missing_poisson_ratio", {{", poisson_ratio: 0.3}", "}"}}, 8,
           "materials[1].poisson_ratio is required"},
  BadScene{"missing_particle_radius", {{" radius: 0.3,", ""}}, 13, "particles[0].radius is required"},
  BadScene{"missing_particle_material", {{", material: glass}", "}"}}, 13,
           "particles[0].material is required"},
  BadScene{"missing_particle_position", {{"position: [0, 0, 1], ", ""}}, 13,
           "particles[0].position is required"},
  BadScene{"missing_fill_radius", {{"    radius: 0.01\n", ""}}, 15, "fills[0].radius is required"},
  BadScene{"missing_density_of_particle_material", {{" density: 2500,", ""}}, 7,
           "materials[0].density is required: particles use material 'glass'"},
  // ranges
  BadScene{"negative_radius", {{"radius: 0.3", "radius: -0.3"}}, 13,
           "particles[0].radius must be > 0 (got -0.3)"},
  BadScene{"zero_density", {{"density: 2500", "density: 0"}}, 7, "materials[0].density must be > 0 (got 0)"},
  BadScene{"negative_youngs_modulus", {{"youngs_modulus: 5.0e7", "youngs_modulus: -3"}}, 7,
           "materials[0].youngs_modulus must be > 0 (got -3)"},
  BadScene{"negative_infinite_youngs_modulus", {{"youngs_modulus: inf", "youngs_modulus: -.inf"}}, 8,
           "materials[1].youngs_modulus must be > 0 (got -.inf)"},
  BadScene{"zero_dt", {{"dt: 1.0e-5", "dt: 0"}}, 3, "simulation.dt must be > 0 (got 0)"},
  BadScene{"negative_end_time", {{"end_time: 0.5", "end_time: -1"}}, 4,
           "simulation.end_time must be > 0 (got -1)"},
  BadScene{"poisson_ratio_too_high", {{"poisson_ratio: 0.25", "poisson_ratio: 0.5"}}, 7,
           "materials[0].poisson_ratio must be in (-1, 0.5) (got 0.5)"},
  BadScene{"poisson_ratio_too_low", {{"poisson_ratio: 0.3", "poisson_ratio: -1"}}, 8,
           "materials[1].poisson_ratio must be in (-1, 0.5) (got -1)"},
  BadScene{"negative_restitution", {{"restitution: 0.4", "restitution: -0.1"}}, 10,
           "interactions[0].restitution must be in [0, 1] (got -0.1)"},
  BadScene{"restitution_above_one", {{"restitution: 0.6", "restitution: 1.2"}}, 11,
           "interactions[1].restitution must be in [0, 1] (got 1.2)"},
  BadScene{"negative_friction", {{" friction: 0.5", " friction: -0.1"}}, 10,
           "interactions[0].friction must be >= 0 (got -0.1)"},
  BadScene{"negative_rolling_friction", {{"rolling_friction: 0.001", "rolling_friction: -0.001"}}, 10,
           "interactions[0].rolling_friction must be >= 0 (got -0.001)"},
  BadScene{"empty_box", {{"max: [1, 1, 1]", "max: [1, 0, 1]"}}, 17,
           "fills[0].max must be > min in every component"},
  // NaN and infinity where a finite number is required
  BadScene{"nan_dt", {{"dt: 1.0e-5", "dt: .nan"}}, 3, "simulation.dt must be a finite number (got .nan)"},
  BadScene{"infinite_end_time", {{"end_time: 0.5", "end_time: .inf"}}, 4,
           "simulation.end_time must be a finite number (got .inf)"},
  BadScene{"nan_in_vector", {{"[0, 0, -9.81]", "[0, 0, .NaN]"}}, 5,
           "simulation.gravity[2] must be a finite number"},
  BadScene{"nan_youngs_modulus", {{"youngs_modulus: 5.0e7", "youngs_modulus: .nan"}}, 7,
           "materials[0].youngs_modulus must be a finite number or inf (got .nan)"},
  BadScene{"infinite_radius", {{"radius: 0.3", "radius: inf"}}, 13,
           "particles[0].radius must be a finite number"},
  // types and shapes
  BadScene{"short_vector", {{"[0, 0, -9.81]", "[0, -9.81]"}}, 5,
           "simulation.gravity must be a list of 3 numbers (got 2 items)"},
  BadScene{"long_vector", {{"position: [0, 0, 1]", "position: [0, 0, 1, 2]"}}, 13,
           "particles[0].position must be a list of 3 numbers (got 4 items)"},
  BadScene{"scalar_vector", {{"[0, 0, -9.81]", "down"}}, 5,
           "simulation.gravity must be a list of 3 numbers (got down)"},
  BadScene{"not_a_number", {{"radius: 0.3", "radius: abc"}}, 13,
           "particles[0].radius must be a number (got abc)"},
  BadScene{"not_an_integer", {{"count: 100", "count: 1.5"}}, 18, "fills[0].count must be an integer (got 1.5)"},
  BadScene{"not_a_bool", {{"material: glass}", "material: glass, prescribed: maybe}"}}, 13,
           "particles[0].prescribed must be true or false (got maybe)"},
  BadScene{"section_not_a_map", {{kSimulation, "simulation: [1, 2]\n"}}, 2,
           "simulation must be a map (got a list)"},
  BadScene{"bad_shape", {{"shape: box", "shape: boxx"}}, 15,
           "fills[0].shape must be one of box, cylinder (got 'boxx'); did you mean 'box'?"},
  BadScene{"cylinder_key_in_box", {{"    count: 100\n", "    count: 100\n    length: 2\n"}}, 19,
           "fills[0].length is only used with shape: cylinder"},
  BadScene{"spacing_in_random_fill", {{"    count: 100\n", "    count: 100\n    spacing: 0.01\n"}}, 19,
           "fills[0].spacing is only used with pattern: regular or pattern: plate"},
  // materials and interactions
  BadScene{"undefined_material", {{"material: glass}", "material: glas}"}}, 13,
           "particles[0].material refers to undefined material 'glas'; did you mean 'glass'?"},
  BadScene{"undefined_mesh_material", {{"    material: steel", "    material: stel"}}, 25,
           "meshes[0].material refers to undefined material 'stel'; did you mean 'steel'?"},
  BadScene{"undefined_interaction_material", {{"[glass, steel]", "[glass, steal]"}}, 11,
           "interactions[1].materials[1] refers to undefined material 'steal'; did you mean 'steel'?"},
  BadScene{"duplicate_material", {{"{name: steel,", "{name: glass,"}}, 8,
           "materials[1].name 'glass' is already used by materials[0]"},
  BadScene{"duplicate_pair", {{"[glass, steel], friction: 0.3", "[glass, glass], friction: 0.3"}}, 11,
           "interactions[1].materials repeats the pair [glass, glass] of interactions[0]"},
  BadScene{"duplicate_pair_reversed", {{kGlassSteel, kGlassSteel + "  - {materials: [steel, glass]}\n"}}, 12,
           "interactions[2].materials repeats the pair [glass, steel] of interactions[1]"},
  BadScene{"missing_particle_mesh_pair", {{kGlassSteel, ""}}, 10,
           "interactions has no entry for the material pair [glass, steel] "
           "(particles of 'glass' can touch mesh 'floor')"},
  BadScene{"missing_particle_particle_pair",
           {{"    material: glass\n", "    material: sand\n"}, {"  - {name: steel", kSand + "  - {name: steel"}},
           11,
           "interactions has no entry for the material pair [glass, sand] "
           "(particles of 'glass' can touch particles of 'sand')"},
  // meshes
  BadScene{"mesh_without_geometry", {{kFloorGeometry, ""}}, 22,
           "meshes[0] needs either a file or inline vertices and faces"},
  BadScene{"mesh_with_file_and_faces",
           {{"    material: steel", "    file: floor.obj\n    material: steel"}}, 22,
           "meshes[0] gives both a file and inline vertices/faces"},
  BadScene{"face_index_out_of_range", {{"[[0, 1, 2, 3]]", "[[0, 1, 2, 4]]"}}, 24,
           "meshes[0].faces[0][3] must be a vertex index < 4 (got 4)"},
  BadScene{"face_too_small", {{"[[0, 1, 2, 3]]", "[[0, 1]]"}}, 24,
           "meshes[0].faces[0] must list at least 3 vertex indices"},
  // radius distributions
  BadScene{"uniform_min_above_max",
           {{"radius: 0.01", "radius: {distribution: uniform, min: 0.02, max: 0.01}"}}, 19,
           "fills[0].radius.min must be <= max (got 0.02 > 0.01)"},
  BadScene{"uniform_min_zero", {{"radius: 0.01", "radius: {distribution: uniform, min: 0, max: 0.01}"}}, 19,
           "fills[0].radius.min must be > 0 (got 0)"},
  BadScene{"discrete_weights_mismatch",
           {{"radius: 0.01", "radius: {distribution: discrete, values: [0.01, 0.02], weights: [1]}"}}, 19,
           "fills[0].radius.weights must have one entry per value (got 1, expected 2)"},
  BadScene{"unknown_distribution", {{"radius: 0.01", "radius: {distribution: normal, min: 0.01}"}}, 19,
           "fills[0].radius.distribution must be one of uniform, discrete (got 'normal')"},
  // unknown and duplicate keys, with the closest valid key
  BadScene{"unknown_top_level_key", {{"name: demo", "nmae: demo"}}, 1,
           "unknown key 'nmae' at the top level; did you mean 'name'?"},
  BadScene{"unknown_simulation_key", {{"  dt: 1.0e-5", "  td: 1.0e-5"}}, 3,
           "unknown key 'td' in 'simulation'; did you mean 'dt'?"},
  BadScene{"unknown_material_key", {{"poisson_ratio: 0.25", "poison_ratio: 0.25"}}, 7,
           "unknown key 'poison_ratio' in 'materials[0]'; did you mean 'poisson_ratio'?"},
  BadScene{"unknown_fill_key", {{"    count: 100", "    cout: 100"}}, 18,
           "unknown key 'cout' in 'fills[0]'; did you mean 'count'?"},
  BadScene{"unknown_radius_key", {{"radius: 0.01", "radius: {distribution: uniform, mn: 0.01, max: 0.02}"}}, 19,
           "unknown key 'mn' in 'fills[0].radius'; did you mean 'min'?"},
  BadScene{"unknown_motion_key",
           {{"    material: steel", "    motion: {velocty: [0, 0, 1]}\n    material: steel"}}, 25,
           "unknown key 'velocty' in 'meshes[0].motion'; did you mean 'velocity'?"},
  BadScene{"duplicate_key", {{"  end_time: 0.5\n", "  end_time: 0.5\n  dt: 2.0e-5\n"}}, 5,
           "duplicate key 'dt' in 'simulation'"}),
  [](const testing::TestParamInfo<BadScene>& param) { return std::string(param.param.name); });
// clang-format on

TEST(SceneLoader, MalformedYamlGivesLineAndColumn) {
  const std::string message =
      error_of(edited(kBase, {{"  gravity: [0, 0, -9.81]", "  gravity: [0, 0, -9.81"}}));
  EXPECT_EQ(message, "scene.yaml:6:10: end of sequence flow not found");  // where yaml-cpp notices
}

class SceneFiles : public testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "dem_scene_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const fs::path& relative, const std::string& text) {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
};

TEST_F(SceneFiles, RelativeMeshPathsResolveAgainstTheSceneFolder) {
  const fs::path scene = write("scenes/mixer.yaml", R"(simulation: {dt: 1e-5, end_time: 1}
materials: [{name: steel, youngs_modulus: .inf, poisson_ratio: 0.3}]
meshes:
  - {name: blade, file: meshes/blade.obj, material: steel}
  - {name: wall, file: ../shared/wall.obj, material: steel}
  - {name: drum, file: /abs/drum.obj, material: steel}
)");
  const SceneConfig c = load_scene(scene.string());
  EXPECT_EQ(c.source, scene.string());
  EXPECT_EQ(c.name, "mixer");
  ASSERT_EQ(c.meshes.size(), 3u);
  EXPECT_EQ(c.meshes[0].file, (dir_ / "scenes/meshes/blade.obj").string());
  EXPECT_EQ(c.meshes[1].file, (dir_ / "shared/wall.obj").string());
  EXPECT_EQ(c.meshes[2].file, "/abs/drum.obj");
}

TEST_F(SceneFiles, ErrorsFromAFileNameIt) {
  const fs::path scene = write("bad.yaml", "simulation: {dt: -1, end_time: 1}\n");
  try {
    load_scene(scene.string(), {"simulation.end_time=2"});
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), scene.string() + ":1: simulation.dt must be > 0 (got -1)");
  }
}

TEST_F(SceneFiles, MissingFile) {
  const std::string path = (dir_ / "x.yaml").string();
  try {
    load_scene(path);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot read scene file '" + path + "': No such file or directory");
  }
}

}  // namespace
}  // namespace dem::host

namespace dem::host {
namespace {

TEST(SceneLoader, PerAxisScaleAndEnvironmentInMeshPaths) {
  const SceneConfig c = load_scene_from_string(kBase, "scene.yaml", {"meshes.floor.scale=[0.5, 0.5, 0.25]"});
  EXPECT_EQ(c.meshes[0].scale, (Vec3d{0.5, 0.5, 0.25}));
  EXPECT_NE(error_of(kBase, {"meshes.floor.scale=[1, 2]"}).find("list of 3 numbers"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"meshes.floor.scale=[1, -2, 1]"}).find("must be > 0"), std::string::npos);
  // ${VAR} in a mesh file path comes from the environment; an unset variable is named.
  const std::string with_file = edited(kBase, {{"vertices: [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]]\n    faces: [[0, 1, 2, 3]]",
                                                "file: ${DEM_TEST_MESH_DIR}/plate.obj"}});
  setenv("DEM_TEST_MESH_DIR", "/data/meshes", 1);
  EXPECT_EQ(load_scene_from_string(with_file, "scene.yaml").meshes[0].file, "/data/meshes/plate.obj");
  unsetenv("DEM_TEST_MESH_DIR");
  const std::string err = error_of(with_file);
  EXPECT_NE(err.find("DEM_TEST_MESH_DIR"), std::string::npos) << err;
  EXPECT_NE(err.find("scene.yaml:"), std::string::npos) << err;
}

}  // namespace
}  // namespace dem::host

namespace dem::host {
namespace {

// Motion laws: a table inline or from a CSV file (header and comments allowed), an oscillation,
// start and stop; every malformed table named by file and line (or key).
TEST_F(SceneFiles, MotionTablesFromTheSceneOrACsvFile) {
  const std::string yaml = std::string(kBase) + "    motion: {table: ramp.csv, start: 0.5, stop: 2}\n";
  write("ramp.csv", "t,vx,vy,vz,wx,wy,wz\n# spin-up\n0, 0, 0, 0, 0, 0, 0\n1.5, 0, 0, 0, 0, 0, 6.0\n\n2.0,0,0,0,0,0,6\n");
  const fs::path scene = write("s.yaml", yaml);
  const SceneConfig c = load_scene(scene.string());
  ASSERT_EQ(c.meshes[0].motion.table.size(), 3u);
  EXPECT_EQ(c.meshes[0].motion.table[1][0], 1.5);
  EXPECT_EQ(c.meshes[0].motion.table[1][6], 6.0);
  EXPECT_EQ(c.meshes[0].motion.start, 0.5);
  EXPECT_EQ(c.meshes[0].motion.stop, 2.0);
  write("ramp.csv", "0,0,0,0,0,0,0\n1,0,0,0,0,0\n");

  try {
    load_scene(scene.string());
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ramp.csv:2: a motion table row must be 7 numbers"), std::string::npos) << e.what();
  }
  write("ramp.csv", "0,0,0,0,0,0,1\n1,0,0,0,0,1,0\n");
  try {
    load_scene(scene.string());
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ramp.csv:2: motion table row 1 spins about another axis"), std::string::npos)
        << e.what();
  }
}

TEST(SceneLoader, MotionLawsInlineAndTheirErrors) {
  const SceneConfig c = load_scene_from_string(
      kBase, "scene.yaml",
      {"meshes.floor.motion={table: [[0, 0, 0, 0.1, 0, 0, 0], [1, 0, 0, 0.2, 0, 0, 0]], "
       "oscillation: {amplitude: [0, 0, 0.002], frequency: 30, phase: 90}}"});
  EXPECT_EQ(c.meshes[0].motion.table.size(), 2u);
  EXPECT_EQ(c.meshes[0].motion.osc_frequency, 30);
  EXPECT_EQ(c.meshes[0].motion.osc_phase_deg, 90);
  EXPECT_EQ(c.meshes[0].motion.osc_amplitude[2], 0.002);
  EXPECT_EQ(error_of(kBase, {"meshes.floor.motion={table: [[0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0]]}"}),
            "--set meshes.floor.motion={table: [[0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0]]}: "
            "meshes[0].motion.table[1] has t not after the row before");
  EXPECT_NE(error_of(kBase, {"meshes.floor.motion={table: [[0, 0, 0, 0, 0, 0, 0]], velocity: [1, 0, 0]}"})
                .find("meshes[0].motion.velocity is only used with a constant motion (no table)"),
            std::string::npos);
  EXPECT_NE(error_of(kBase, {"meshes.floor.motion={velocity: [1, 0, 0], start: 2, stop: 1}"})
                .find("meshes[0].motion.stop must be later than start"),
            std::string::npos);
  EXPECT_NE(error_of(kBase, {"meshes.floor.motion={oscillation: {amplitude: [0, 0, 1], frequency: 0}}"})
                .find("meshes[0].motion.oscillation.frequency must be > 0"),
            std::string::npos);
}

TEST(SceneLoader, PeriodicAxes) {
  const std::string with = std::string(kBase) + "domain: {min: [-1, -1, -1], max: [2, 2, 2], periodic: [x, z]}\n";
  const SceneConfig c = load_scene_from_string(with, "scene.yaml");
  EXPECT_TRUE(c.domain.periodic[0]);
  EXPECT_FALSE(c.domain.periodic[1]);
  EXPECT_TRUE(c.domain.periodic[2]);
  const SceneConfig plain = load_scene_from_string(kBase, "scene.yaml");
  EXPECT_FALSE(plain.domain.periodic[0] || plain.domain.periodic[1] || plain.domain.periodic[2]);
  EXPECT_NE(error_of(std::string(kBase) + "domain: {min: [-1, -1, -1], max: [2, 2, 2], periodic: [x, w]}\n").find(
                "domain.periodic[1] must be x, y or z (got w)"),
            std::string::npos)
      << error_of(std::string(kBase) + "domain: {min: [-1, -1, -1], max: [2, 2, 2], periodic: [x, w]}\n");
  EXPECT_NE(error_of(std::string(kBase) + "domain: {min: [-1, -1, -1], max: [2, 2, 2], periodic: [y, y]}\n").find("listed twice"),
            std::string::npos);
  EXPECT_NE(error_of(std::string(kBase) + "domain: {min: [-1, -1, -1], max: [2, 2, 2], periodic: x}\n").find("must be a list of axes"),
            std::string::npos);
}

// Tags on particles, fills and inlets, the retag: list and the mixing: section, and their refusals.
TEST(SceneLoader, TagsRetagAndMixing) {
  const std::string tail =
      "retag:\n  - {time: 0.1, tag: 2, shape: cylinder, base: [0, 0, 0], axis: [0, 0, 2], cylinder_radius: 0.5, "
      "length: 1}\n  - {time: 0.05, tag: 4, min: [0, 0, 0], max: [1, 1, 1]}\n"
      "mixing: {cell_size: 0.05, weighting: mass, min_particles: 8, origin: [0, 0, 0.01]}\n"
      "output: {probe_interval: 0.01}\n";
  const std::string tagged =
      edited(kBase, {{"radius: 0.3, material: glass}", "radius: 0.3, material: glass, tag: 1}"},
                     {"count: 100", "count: 100\n    tag: 3"}}) + tail;
  const SceneConfig c = load_scene_from_string(tagged, "scene.yaml");
  EXPECT_EQ(c.particles[0].tag, 1);
  EXPECT_EQ(c.fills[0].tag, 3);
  ASSERT_EQ(c.retags.size(), 2u);
  EXPECT_EQ(c.retags[0].tag, 2);
  EXPECT_EQ(c.retags[0].region.shape, FillSpec::Shape::Cylinder);
  EXPECT_DOUBLE_EQ(c.retags[0].region.cylinder_axis[2], 1.0);  // (normalised)
  EXPECT_DOUBLE_EQ(c.retags[1].time, 0.05);
  EXPECT_EQ(c.retags[1].region.shape, FillSpec::Shape::Box);
  EXPECT_TRUE(c.mixing.given);
  EXPECT_DOUBLE_EQ(c.mixing.cell_size, 0.05);
  EXPECT_TRUE(c.mixing.mass_weighted);
  EXPECT_EQ(c.mixing.min_particles, 8);
  EXPECT_DOUBLE_EQ(c.mixing.origin[2], 0.01);
  const SceneConfig plain = load_scene_from_string(kBase, "scene.yaml");
  EXPECT_EQ(plain.fills[0].tag, 0);
  EXPECT_FALSE(plain.mixing.given);
  const auto refused = [&](const std::string& yaml, const std::string& what) {
    const std::string e = error_of(yaml);
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  refused(edited(kBase, {{"count: 100", "count: 100\n    tag: -1"}}), "fills[0].tag must be >= 0");
  refused(edited(kBase, {{"count: 100", "count: 100\n    tag: 3000000000"}}), "must be at most 2147483647");
  refused(std::string(kBase) + "retag:\n  - {time: 0.1, min: [0, 0, 0], max: [1, 1, 1]}\n", "retag[0].tag");
  refused(std::string(kBase) + "retag:\n  - {time: 0.1, tag: 1, min: [0, 0, 0], max: [1, 0, 1]}\n",
          "must be > min in every component");
  refused(std::string(kBase) + "mixing: {cell_size: 0.05}\n", "needs output.probe_interval > 0");
  refused(std::string(kBase) + "mixing: {cell_size: 0.05, weighting: volume}\noutput: {probe_interval: 0.01}\n",
          "must be one of count, mass");
  refused(std::string(kBase) + "mixing: {cell_size: 0}\noutput: {probe_interval: 0.01}\n", "mixing.cell_size");
  refused(std::string(kBase) + "mixing: {weighting: mass}\noutput: {probe_interval: 0.01}\n",
          "needs exactly one of cell_size");
  refused(std::string(kBase) + "mixing: {cell_size: 0.1, sample_particles: 50}\noutput: {probe_interval: 0.01}\n",
          "needs exactly one of cell_size");
  refused(std::string(kBase) + "mixing: {sample_particles: 50, origin: [0, 0, 0]}\noutput: {probe_interval: 0.01}\n",
          "origin");
  const SceneConfig counted = load_scene_from_string(
      std::string(kBase) + "mixing: {sample_particles: 50}\noutput: {probe_interval: 0.01}\n", "scene.yaml");
  EXPECT_EQ(counted.mixing.sample_particles, 50);
  EXPECT_EQ(counted.mixing.min_particles, 50);
}

TEST(SceneLoader, ContactModelsAndTheirParameters) {
  const std::string base = std::string(kBase);
  const SceneConfig c = load_scene_from_string(kBase, "scene.yaml",
                                               {"interactions.0.normal=linear", "interactions.0.stiffness=1e4",
                                                "interactions.0.rolling=epsd", "interactions.0.cohesion=sjkr",
                                                "interactions.0.cohesion_energy_density=1e3"});
  const InteractionSpec& it = c.interactions[0];
  EXPECT_EQ(it.normal, NormalModel::Linear);
  EXPECT_EQ(it.tangential, TangentialModel::Linear);  // follows the normal part
  EXPECT_DOUBLE_EQ(it.tangential_stiffness, 1e4 * 2 / 7);
  EXPECT_EQ(it.rolling, RollingModel::Epsd);
  EXPECT_EQ(it.cohesion, CohesionModel::Sjkr);
  EXPECT_EQ(c.interactions[1].normal, NormalModel::Hertz);  // the default
  EXPECT_EQ(c.interactions[1].tangential, TangentialModel::Mindlin);
  EXPECT_NE(error_of(kBase, {"interactions.0.stiffness=1e4"}).find("stiffness applies only to normal: linear"), std::string::npos)
      << error_of(kBase, {"interactions.0.stiffness=1e4"});
  EXPECT_NE(error_of(kBase, {"interactions.0.normal=linear"}).find("stiffness"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"interactions.0.normal=hooke"}).find("must be one of hertz, linear"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"interactions.0.rolling_damping=0.2"}).find("applies only to rolling: epsd"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"interactions.0.cohesion_energy_density=5"}).find("applies only to cohesion: sjkr"), std::string::npos);
  EXPECT_NE(error_of(kBase, {"interactions.0.tangential=linear"}).find("tangential_stiffness"), std::string::npos);
  // partial slip: Hertz only, and not with EPSD (the two share the history's second vector)
  EXPECT_EQ(load_scene_from_string(kBase, "scene.yaml", {"interactions.0.tangential=mindlin_deresiewicz"}).interactions[0].tangential,
            TangentialModel::MindlinDeresiewicz);
  const std::string md_linear =
      error_of(kBase, {"interactions.0.normal=linear", "interactions.0.stiffness=1e4", "interactions.0.tangential=mindlin_deresiewicz"});
  EXPECT_NE(md_linear.find("tangential mindlin_deresiewicz needs normal: hertz"), std::string::npos) << md_linear;
  const std::string md_epsd = error_of(kBase, {"interactions.0.rolling=epsd", "interactions.0.tangential=mindlin_deresiewicz"});
  EXPECT_NE(md_epsd.find("rolling epsd cannot be combined with tangential: mindlin_deresiewicz"), std::string::npos) << md_epsd;
  EXPECT_EQ(load_scene_from_string(kBase, "scene.yaml", {"interactions.0.restitution=0"}).interactions[0].restitution, 0.0);
  const std::string plastic_epsd = error_of(kBase, {"interactions.0.restitution=0", "interactions.0.rolling=epsd"});
  EXPECT_NE(plastic_epsd.find("rolling epsd cannot be combined with restitution 0"), std::string::npos) << plastic_epsd;
  const std::string plastic_md = error_of(kBase, {"interactions.0.restitution=0", "interactions.0.tangential=mindlin_deresiewicz"});
  EXPECT_NE(plastic_md.find("tangential mindlin_deresiewicz cannot be combined with restitution 0"), std::string::npos) << plastic_md;
  EXPECT_NE(error_of(kBase, {"interactions.0.tangential=cattaneo"}).find("must be one of mindlin, linear, mindlin_deresiewicz"),
            std::string::npos);
}

TEST(SceneLoader, BroadPhaseMethodsAndTheirRefusals) {
  const SceneConfig c = load_scene_from_string(std::string(kBase) + "broad_phase: {method: hgrid, levels: 2, cell_sizes: [0.01, 0.05]}\n", "scene.yaml");
  EXPECT_EQ(c.broad_phase.method, BroadPhaseMethod::HGrid);
  EXPECT_EQ(c.broad_phase.levels, 2);
  EXPECT_EQ(c.broad_phase.cell_sizes, (std::vector<double>{0.01, 0.05}));
  EXPECT_EQ(load_scene_from_string(kBase, "scene.yaml").broad_phase.method, BroadPhaseMethod::Auto);  // the default
  EXPECT_EQ(load_scene_from_string(std::string(kBase) + "broad_phase: {method: bsp}\n", "scene.yaml").broad_phase.method,
            BroadPhaseMethod::Bsp);
  auto err = [](const std::string& bp) { return error_of(std::string(kBase) + "broad_phase: " + bp + "\n"); };
  EXPECT_NE(err("{method: tree}").find("must be one of auto, grid, hgrid, bsp"), std::string::npos);
  EXPECT_NE(err("{method: grid, levels: 3}").find("applies only to method: hgrid"), std::string::npos);
  EXPECT_NE(err("{method: hgrid, levels: 9}").find("at most 8 levels"), std::string::npos);
  EXPECT_NE(err("{method: hgrid, cell_sizes: [0.05, 0.01]}").find("cell sizes must increase"), std::string::npos);
  EXPECT_NE(err("{method: hgrid, levels: 3, cell_sizes: [0.01, 0.05]}").find("gives 2 sizes for 3 levels"), std::string::npos);
  EXPECT_NE(err("{method: hgrid, cell_sizes: [0, 0.05]}").find("> 0"), std::string::npos) << err("{method: hgrid, cell_sizes: [0, 0.05]}");
}

}  // namespace
}  // namespace dem::host

// Bad input refused in time and memory for what it takes to find the fault (the first key, the
// file's kind and size, the count of materials), not for the whole input.
namespace dem::host {
namespace {

// `head`, then `line` repeated to about `bytes`, then `tail` (a line that is not YAML, or nothing).
std::string with_bulk(const std::string& head, const std::string& line, std::size_t bytes, const std::string& tail) {
  std::string text = head;
  text.reserve(bytes + 64);
  while (text.size() < bytes) text += line;
  return text + tail;
}

// "bogus_key: 1" repeated to about `bytes`, then a line that is not YAML at all.
std::string repeated_unknown_key(std::size_t bytes) {
  return with_bulk("", "bogus_key: 1\n", bytes, "tail: [never closed\n");
}

// A list of particles whose first entry has an unknown key, then about `bytes` of such entries.
const char* const kBadParticle = "particles:\n  - {position: [0, 0, 1], radius: 0.3, material: glass, bogus: 1}\n";
std::string bulk_of_particles(std::size_t bytes, const std::string& tail) {
  return with_bulk(kBadParticle, "  - {bogus: 1}\n", bytes, tail);
}

// Whether loading `text` in a child process is refused with a peak memory (ru_maxrss, which starts
// at the parent's size at the fork, compared before and after) grown by under `limit_kb`.
::testing::AssertionResult refused_within(const std::string& text, long limit_kb) {
  const pid_t pid = fork();
  if (pid < 0) return ::testing::AssertionFailure() << "fork failed";
  if (pid == 0) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    bool refused = false;
    try {
      load_scene_from_string(text, "scene.yaml");
    } catch (const InputError&) {
      refused = true;
    }
    getrusage(RUSAGE_SELF, &after);
    const long grown_kb = after.ru_maxrss - before.ru_maxrss;
    _exit(!refused ? 2 : grown_kb < limit_kb ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return ::testing::AssertionFailure() << "the child failed";
  if (WEXITSTATUS(status) == 2) return ::testing::AssertionFailure() << "not refused";
  if (WEXITSTATUS(status) != 0)
    return ::testing::AssertionFailure() << "the refusal grew the peak memory by " << limit_kb
                                         << " kB or more: a node tree was built";
  return ::testing::AssertionSuccess();
}

TEST(SceneLoader, AnUnknownTopLevelKeyIsRefusedBeforeTheRestIsParsed) {
  // 2 MB of one unknown key repeated, ending in a syntax error (an unclosed '['). Building the node
  // tree parses to the end and fails there, naming the last line; the streaming check of the
  // keys stops at line 1, so naming line 1 shows that neither the rest of the text was parsed nor
  // a tree of it built.
  const std::string text = repeated_unknown_key(2'000'000);
  const std::string message = error_of(text);
  EXPECT_EQ(message.rfind("scene.yaml:1: unknown key 'bogus_key' at the top level; did you mean", 0), 0u) << message;
  // A repeated key, the same way: at its second occurrence, before the syntax error.
  const std::string repeated = error_of(std::string("name: a\nname: b\n") + text);
  EXPECT_EQ(repeated, "scene.yaml:2: duplicate key 'name' at the top level") << repeated;
  // A key is checked against its own map's keys: `name` is a top-level key, not one of simulation's.
  EXPECT_EQ(error_of(edited(kBase, {{"  dt: 1.0e-5", "  name: x\n  dt: 1.0e-5"}})),
            "scene.yaml:3: unknown key 'name' in 'simulation'; did you mean 'dt'?");
  EXPECT_EQ(load_scene_from_string(std::string(kBase) + "output: {probe_interval: 0.1}\n", "scene.yaml").output.probe_interval,
            0.1);
}

TEST(SceneLoader, AnUnknownNestedKeyIsRefusedBeforeTheRestIsParsed) {
  // The same for the maps the schema describes below the top level: the refusal names the bad
  // key's line, not the last line (where parsing to the end fails), with the message that the
  // check of the tree gives. That check is the one that finds the key in a section that a --set
  // writes into (the streaming check leaves those alone), so each refusal is compared with it.
  const std::string particle = error_of(bulk_of_particles(2'000'000, "  - [never closed\n"));
  EXPECT_EQ(particle, "scene.yaml:2: unknown key 'bogus' in 'particles[0]'; did you mean 'radius'?") << particle;
  EXPECT_EQ(particle, error_of(kBadParticle, {"particles.0.radius=0.2"}));
  const std::string simulation_head = "simulation:\n  dt: 1.0e-5\n  bogus_key: 1\n";
  const std::string simulation =
      error_of(with_bulk(simulation_head, "  bogus_key: 1\n", 2'000'000, "  tail: [never closed\n"));
  EXPECT_EQ(simulation, "scene.yaml:3: unknown key 'bogus_key' in 'simulation'; did you mean 'gravity'?") << simulation;
  EXPECT_EQ(simulation, error_of(simulation_head, {"simulation.end_time=1"}));
  // A key of another variant (length is a cylinder fill's) is not unknown: the check of the tree
  // refuses it, with its own message.
  EXPECT_EQ(error_of(edited(kBase, {{"    count: 100\n", "    count: 100\n    length: 2\n"}})),
            "scene.yaml:19: fills[0].length is only used with shape: cylinder");
  // A --set may replace a section, unknown keys and all, so the file's text alone does not refuse it.
  const std::string replaced = edited(kBase, {{"  dt: 1.0e-5", "  bogus_key: 1\n  dt: 1.0e-5"}});
  EXPECT_DOUBLE_EQ(
      load_scene_from_string(replaced, "scene.yaml", {"simulation={dt: 2.0e-5, end_time: 0.5}"}).simulation.dt, 2.0e-5);
}

TEST(SceneLoader, AnUnknownTopLevelKeyCostsNoNodeTree) {
  // 8 MB of text make a node tree of some 400 MB (yaml-cpp holds about 50 bytes per byte of such
  // a file), while the streaming check keeps a stack of the maps open and the checks before it
  // per-line copies: under 32 MB, a bound that the tree exceeds twelve times over.
  EXPECT_TRUE(refused_within(repeated_unknown_key(8'000'000), 32 * 1024));
}

TEST(SceneLoader, AnUnknownNestedKeyCostsNoNodeTree) {
  // The same with the bulk in a known section: 8 MB of particles, the first with an unknown key,
  // and no syntax error after them (a tree of them, some 900 MB, would be built, then checked).
  EXPECT_TRUE(refused_within(bulk_of_particles(8'000'000, ""), 32 * 1024));
}

// A scene with `n` materials named m0, m1, ... and nothing else.
std::string with_materials(std::size_t n) {
  std::string text = "simulation: {dt: 1.0e-5, end_time: 0.1}\nmaterials:\n";
  for (std::size_t i = 0; i < n; ++i)
    text += "  - {name: m" + std::to_string(i) + ", density: 1000, youngs_modulus: 1e7, poisson_ratio: 0.3}\n";
  return text;
}

TEST(SceneLoader, TooManyMaterialsAreRefusedBeforeTheirTable) {
  // The contact table holds an entry for every pair of materials: 10,000 would be 10^8 entries of
  // 80 bytes (8 GB, std::bad_alloc under a 4 GiB limit). The loader refuses more than
  // kMaxMaterials, naming the key and the limit; kMaxMaterials itself loads.
  ASSERT_EQ(kMaxMaterials, 256u);
  EXPECT_EQ(load_scene_from_string(with_materials(kMaxMaterials), "scene.yaml").materials.size(), kMaxMaterials);
  EXPECT_EQ(error_of(with_materials(kMaxMaterials + 1)),
            "scene.yaml:3: materials defines 257 materials, more than the limit of 256 (the contact table holds an "
            "entry for every pair of materials)");
  EXPECT_NE(error_of(with_materials(10'000)).find("scene.yaml:3: materials defines 10000 materials, more than the limit of 256"),
            std::string::npos);
}

TEST_F(SceneFiles, APathThatIsNotASceneFileIsRefusedUnread) {
  // Refused before a byte is read: a directory (read as nothing), a file over the limit, a motion
  // table that is a directory. (/dev/zero, read until memory runs out, is tried on the `dem`
  // binary in a child process with its memory limited: test_run_integrity.cpp.)
  const auto refusal = [](const std::string& path) {
    try {
      load_scene(path);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    ADD_FAILURE() << "no InputError for " << path;
    return std::string();
  };
  EXPECT_EQ(refusal(dir_.string()), dir_.string() + ": cannot read the scene: it is a directory, not a regular file");
  // One byte over the limit (a sparse file: nothing is written), refused by its size alone.
  const fs::path big = write("big.yaml", "");
  fs::resize_file(big, kMaxSceneFileBytes + 1);
  EXPECT_EQ(refusal(big.string()), big.string() + ": cannot read the scene: it is " +
                                       std::to_string(kMaxSceneFileBytes + 1) + " bytes, more than the limit of 64 MiB");
  // A motion table the same way, named by the scene's line (kBase's floor ends at line 25).
  fs::create_directories(dir_ / "table");
  const fs::path scene = write("s.yaml", std::string(kBase) + "    motion: {table: table}\n");
  EXPECT_EQ(refusal(scene.string()), scene.string() + ":26: meshes[0].motion.table cannot read the motion table '" +
                                         (dir_ / "table").string() + "': it is a directory, not a regular file");
}

}  // namespace
}  // namespace dem::host
