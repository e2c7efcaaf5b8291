// Polyhedra in scene files: the `polyhedron:` syntax of particles and fills (built-ins, sides,
// files), what it refuses and how it says so, fills at random orientations without overlaps,
// one shape record per distinct shape, and the run's output (the polyhedra as polygon cells,
// orientations and shapes beside the points, a checkpoint that restarts with the same bits).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "host/app/driver.hpp"
#include "host/app/scene/flow.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"
#include "host/sim/checkpoint.hpp"
#include "host/sim/errors.hpp"

namespace dem::host {
namespace {

namespace fs = std::filesystem;

const std::string kHead = R"(
simulation: {dt: 1.0e-5, end_time: 0.03, gravity: [0, 0, -9.81]}
materials:
  - {name: rock, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
  - {name: steel, youngs_modulus: inf, poisson_ratio: 0.3}
interactions:
  - {materials: [rock, rock], friction: 0.5, restitution: 0.5, normal: linear, stiffness: 1.0e4}
  - {materials: [rock, steel], friction: 0.5, restitution: 0.5, normal: linear, stiffness: 1.0e4}
meshes:
  - name: floor
    material: steel
    vertices: [[-0.1,-0.1,0],[0.1,-0.1,0],[0.1,0.1,0],[-0.1,0.1,0]]
    faces: [[0,1,2,3]]
)";

std::string error_of(const std::string& yaml) {
  try {
    build_scene_inputs(load_scene_from_string(yaml, "scene.yaml"));
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

TEST(PolyhedraScenes, ParticlesNameBuiltInsWithTheirSidesAndFiles) {
  const fs::path dir = fs::temp_directory_path() / "dem_polyhedra_scenes";
  fs::create_directories(dir);
  std::ofstream(dir / "tetra.obj") << "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 2 3 4\nf 1 4 3\n";
  const std::string yaml = kHead + R"(
particles:
  - {polyhedron: cube, size: 0.01, position: [0, 0, 0.02], material: rock}
  - {polyhedron: {builtin: box, sides: [1, 2, 3]}, size: 0.012, position: [0.03, 0, 0.02], orientation: [0, 0, 0, 2], material: rock}
  - {polyhedron: tetra.obj, size: 0.008, position: [-0.03, 0, 0.02], material: rock}
  - {polyhedron: cube, size: 0.02, position: [0, 0.04, 0.02], material: rock}
  - {radius: 0.004, position: [0, -0.04, 0.02], material: rock}
)";
  std::ofstream(dir / "scene.yaml") << yaml;
  const SceneInputs in = build_scene_inputs(load_scene((dir / "scene.yaml").string()));
  ASSERT_EQ(in.particles.size(), 5u);
  ASSERT_EQ(in.settings.shapes.size(), 3u) << "the two cubes share one record";
  const ParticleArrays& p = in.particles;
  EXPECT_EQ(p.shape[0], 0);
  EXPECT_EQ(p.shape[1], 1);
  EXPECT_EQ(p.shape[2], 2);
  EXPECT_EQ(p.shape[3], 0);
  EXPECT_EQ(p.shape[4], -1);
  EXPECT_EQ(in.settings.shapes[2].num_vertices, 4);
  // size: the volume-equivalent diameter: mass rho pi s^3 / 6, the bounding sphere as the radius
  EXPECT_NEAR(1 / p.inv_mass[0], 2500 * M_PI / 6 * 1e-6, 1e-15);
  EXPECT_NEAR(p.radius[0], 0.01 * std::cbrt(M_PI / 6) * std::sqrt(3.0) / 2, 1e-15);
  EXPECT_NEAR(1 / p.inv_mass[3], 8 / p.inv_mass[0], 1e-15);
  // the orientation normalised (a half turn about z)
  EXPECT_EQ(p.q[1].w, 0);
  EXPECT_EQ(p.q[1].z, 1);
  EXPECT_EQ(p.radius[4], real(0.004));
}

TEST(PolyhedraScenes, FillsPlacePolyhedraAtRandomOrientationsWithoutOverlaps) {
  const std::string yaml = kHead + R"(
fills:
  - {shape: box, min: [-0.05, -0.05, 0], max: [0.05, 0.05, 0.05], count: 200, polyhedron: octahedron,
     size: {distribution: uniform, min: 0.006, max: 0.01}, material: rock, seed: 7}
  - {shape: box, min: [-0.05, -0.05, 0], max: [0.05, 0.05, 0.05], count: 100, radius: 0.003, material: rock, seed: 8}
)";
  const SceneInputs in = build_scene_inputs(load_scene_from_string(yaml, "scene.yaml"));
  const ParticleArrays& p = in.particles;
  ASSERT_EQ(p.size(), 300u);
  ASSERT_EQ(in.settings.shapes.size(), 1u);
  const double br = in.settings.shapes[0].bounding_radius;
  double mean_qz = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)  // bounding spheres apart: no two polyhedra can overlap
      EXPECT_GE(norm(p.x[i] - p.x[j]), p.radius[i] + p.radius[j]) << i << " " << j;
    if (p.shape[i] < 0) continue;
    const double size = p.radius[i] / br;
    EXPECT_GE(size, 0.006 * (1 - 1e-12));
    EXPECT_LE(size, 0.01 * (1 + 1e-12));
    const Quat q = p.q[i];
    EXPECT_NEAR(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z, 1, 1e-14);
    mean_qz += q.z * q.z;
  }
  // uniform orientations: E[q_z^2] = 1/4, within 5 standard errors (sd of q_z^2 about 0.19) over 200
  EXPECT_NEAR(mean_qz / 200, 0.25, 5 * 0.19 / std::sqrt(200.0));
}

TEST(PolyhedraScenes, InletsPourPolyhedraByMassWithoutOverlaps) {
  const std::string yaml = kHead + R"(
inlets:
  - {name: hopper, shape: box, min: [-0.04, -0.04, 0.02], max: [0.04, 0.04, 0.06], polyhedron: tetrahedron,
     size: {distribution: uniform, min: 0.006, max: 0.009}, material: rock, mass_rate: 0.5, interval: 1.0e-3, seed: 3}
  - {name: balls, shape: box, min: [-0.04, -0.04, 0.07], max: [0.04, 0.04, 0.09], radius: 0.003, material: rock,
     rate: 2000, interval: 1.0e-3}
)";
  const SceneConfig scene = load_scene_from_string(yaml, "scene.yaml");
  SceneInputs in = build_scene_inputs(scene);
  ASSERT_EQ(in.inlet_shapes, (std::vector<std::int32_t>{0, -1}));
  Engine engine(in.particles, in.meshes, in.params, in.num_materials, in.settings);
  FlowController flow(scene, 0, in.inlet_shapes);
  for (int s = 0; s < 1000; ++s) {  // 0.01 s
    engine.step();
    flow.apply(engine);
  }
  const ParticleArrays& p = engine.particles();
  double poly_mass = 0;
  std::size_t polyhedra = 0, spheres = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.shape[i] == 0) {
      ++polyhedra;
      poly_mass += 1 / double(p.inv_mass[i]);
      const double size = p.radius[i] / in.settings.shapes[0].bounding_radius;
      EXPECT_NEAR(1 / double(p.inv_mass[i]), 2500 * M_PI / 6 * size * size * size, 1e-12 / double(p.inv_mass[i]));
    } else {
      ++spheres;
    }
  }
  EXPECT_EQ(spheres, 20u);  // 2,000 a second for 0.01 s
  EXPECT_GT(polyhedra, 0u);
  // 0.5 kg/s for 0.01 s, within one particle's mass (the next is poured once it is owed whole)
  const double most = 2500 * M_PI / 6 * 0.009 * 0.009 * 0.009;
  EXPECT_LE(poly_mass, 5e-3 + 1e-12);
  EXPECT_GT(poly_mass, 5e-3 - most);
  EXPECT_TRUE(engine.status().ok) << engine.status().message;
  EXPECT_LT(engine.max_overlap(), 0.05) << "poured clear of each other";
}

TEST(PolyhedraScenes, BadPolyhedraAreRefusedNamingTheKey) {
  const std::string particle = "\nparticles:\n  - {position: [0, 0, 0.02], material: rock, ";
  EXPECT_NE(error_of(kHead + particle + "polyhedron: cube, radius: 0.01}\n").find("particles[0].radius"), std::string::npos);
  EXPECT_NE(error_of(kHead + particle + "polyhedron: cube}\n").find("particles[0].size"), std::string::npos);
  EXPECT_NE(error_of(kHead + particle + "radius: 0.01, size: 0.01}\n").find("particles[0].size"), std::string::npos);
  EXPECT_NE(error_of(kHead + particle + "polyhedron: {builtin: dodecahedron}, size: 0.01}\n").find("no built-in shape"),
            std::string::npos);
  EXPECT_NE(error_of(kHead + particle + "polyhedron: {builtin: cube, file: a.obj}, size: 0.01}\n").find("exactly one of"),
            std::string::npos);
  EXPECT_NE(error_of(kHead + particle + "polyhedron: cube, size: 0.01, orientation: [0, 0, 0, 0]}\n").find("orientation"),
            std::string::npos);
  EXPECT_NE(error_of(kHead + particle + "polyhedron: missing_rock.obj, size: 0.01}\n").find("missing_rock.obj"),
            std::string::npos);
  const std::string fill = "\nfills:\n  - {shape: box, min: [0, 0, 0], max: [0.1, 0.1, 0.1], count: 3, material: rock, ";
  EXPECT_NE(error_of(kHead + fill + "polyhedron: cube, radius: 0.01}\n").find("fills[0].radius"), std::string::npos);
  EXPECT_NE(error_of(kHead + fill + "polyhedron: {builtin: box, sides: [1, 2]}, size: 0.01}\n").find("fills[0].polyhedron"),
            std::string::npos);
  // polyhedra meet by the linear law
  std::string hertz = kHead;
  hertz.replace(hertz.find("normal: linear, stiffness: 1.0e4}"), 33, "rolling_friction: 0}");
  const std::string e = error_of(hertz + particle + "polyhedron: cube, size: 0.01}\n");
  EXPECT_NE(e.find("normal: linear"), std::string::npos) << e;
  // the parts of the spheres' laws the polyhedral law has not: refused, not ignored
  for (const auto& [part, said] : std::vector<std::pair<std::string, std::string>>{
           {"tangential: mindlin", "tangential"},
           {"rolling_friction: 0.1, rolling: epsd", "rolling: epsd"},
           {"cohesion: sjkr, cohesion_energy_density: 10", "cohesion"}}) {
    std::string with = kHead;
    with.replace(with.find("normal: linear, stiffness: 1.0e4}"), 33, "normal: linear, stiffness: 1.0e4, " + part + "}");
    const std::string m = error_of(with + particle + "polyhedron: cube, size: 0.01}\n");
    EXPECT_NE(m.find(said), std::string::npos) << part << ": " << m;
  }
  // the constant rolling torque is taken
  std::string rolling = kHead;
  rolling.replace(rolling.find("normal: linear, stiffness: 1.0e4}"), 33, "normal: linear, stiffness: 1.0e4, rolling_friction: 0.1}");
  EXPECT_NO_THROW(build_scene_inputs(load_scene_from_string(rolling + particle + "polyhedron: cube, size: 0.01}\n", "scene.yaml")));
}

TEST(PolyhedraScenes, TheRunWritesThePolyhedraAsPolygonsAndRestartsWithTheSameBits) {
  const fs::path dir = fs::temp_directory_path() / "dem_polyhedra_run";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string yaml = kHead + R"(
fills:
  - {shape: box, min: [-0.03, -0.03, 0], max: [0.03, 0.03, 0.03], count: 30, polyhedron: cube, size: 0.008,
     material: rock, velocity: [0, 0, -1], seed: 2}
output: {snapshot_interval: 0.015, checkpoint_interval: 0.015}
)";
  std::ofstream(dir / "scene.yaml") << yaml;
  RunOptions opt;
  opt.scene = (dir / "scene.yaml").string();
  opt.quiet = true;
  opt.device = "cpu";
  opt.out_dir = (dir / "straight").string();
  ASSERT_EQ(run_scene(opt), 0);
  // 30 cubes of 6 faces, 8 corners each
  std::ifstream f(dir / "straight" / "polyhedra_000002.vtu", std::ios::binary);
  ASSERT_TRUE(f) << "polyhedra_000002.vtu";
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("NumberOfPoints=\"240\""), std::string::npos);
  EXPECT_NE(text.find("NumberOfCells=\"180\""), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "straight" / "polyhedra.pvd"));
  std::ifstream pts(dir / "straight" / "particles_000002.vtu", std::ios::binary);
  const std::string points((std::istreambuf_iterator<char>(pts)), std::istreambuf_iterator<char>());
  EXPECT_NE(points.find("Name=\"orientation\" NumberOfComponents=\"4\""), std::string::npos);
  EXPECT_NE(points.find("Name=\"shape\""), std::string::npos);
  // A run to 0.015 s, then on from its checkpoint to 0.03 s: the straight run's final state, bit for
  // bit (the checkpoint keeps the shapes and the common planes of the touching pairs)
  opt.out_dir = (dir / "first").string();
  opt.overrides = {"simulation.end_time=0.015"};
  ASSERT_EQ(run_scene(opt), 0);
  opt.out_dir = (dir / "restarted").string();
  opt.overrides.clear();
  opt.restart = (dir / "first" / "checkpoint.bin").string();
  ASSERT_EQ(run_scene(opt), 0);
  const Checkpoint straight = read_checkpoint((dir / "straight" / "checkpoint.bin").string());
  const Checkpoint restarted = read_checkpoint((dir / "restarted" / "checkpoint.bin").string());
  ASSERT_EQ(straight.step, 3000u);
  ASSERT_EQ(restarted.step, 3000u);
  const auto by_id = [](const ParticleArrays& p) {
    std::map<std::int64_t, std::array<double, 14>> out;
    for (std::size_t i = 0; i < p.size(); ++i)
      out[p.id[i]] = {p.x[i].x, p.x[i].y, p.x[i].z, p.v[i].x, p.v[i].y, p.v[i].z, p.w[i].x, p.w[i].y, p.w[i].z,
                      p.q[i].w, p.q[i].x, p.q[i].y, p.q[i].z, double(p.shape[i])};
    return out;
  };
  EXPECT_TRUE(by_id(straight.particles) == by_id(restarted.particles));
  EXPECT_GT(straight.contacts.pair_a.size(), 0u) << "the cubes touch by then";
}

}  // namespace
}  // namespace dem::host
