// What is not an engine's: the pair loads' units (LoadSizing), a contact state's mesh slots packed
// and unpacked, bad input reaching the command line as clear errors, every output written, the
// scene builder's fills, and scene checks that refuse what no engine could run.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "host/app/driver.hpp"
#include "host/sim/errors.hpp"
#include "host/sim/load_sizing.hpp"
#include "host/sim/mesh_slots.hpp"
#include "support/test_scenes.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace dem::host {
namespace {

using test::kBinScene;

// The pair loads' units are sized for the materials particles can have: a wall material's pairs
// (with a particle, or with another wall's material) never reach the pair sums and must not coarsen
// them (a stiff steel-steel entry beside soft beads would make them 2^15 times coarser); a
// material that only an inlet brings in later counts from the start, so that a restart before
// its first particle sizes them alike; a rigid particle material is refused by name.
TEST(LoadSizing, PairLoadUnitsAreSizedForTheParticlesMaterials) {
  const Material bead{1000, 1e7, 0.2}, steel{7800, 2e11, 0.3}, rigid{0, real(INFINITY), 0.3};
  const int nm = 3;  // 0 bead, 1 steel (a wall's, and an inlet's later), 2 rigid (a wall's)
  std::vector<ContactParams> table(nm * nm, ContactParams{0, 0, 0, 0, 0, RollingModel::ConstantTorque});
  const auto set = [&](int a, int b, const Material& ma, const Material& mb) {
    table[a * nm + b] = table[b * nm + a] = mix_contact_params(ma, mb, InteractionParams{0.5, 0.5, 0.01});
  };
  set(0, 0, bead, bead);
  set(0, 1, bead, steel);
  set(1, 1, steel, steel);
  set(0, 2, bead, rigid);
  set(2, 2, rigid, rigid);
  EngineSettings settings;
  const std::vector<std::int32_t> beads(10, 0);
  const std::vector<real> radii(10, 0.002);
  LoadSizing only_beads;
  only_beads.start(settings, nm, beads, radii);
  const LoadQuantum q = only_beads.quantum(table, nm);
  EXPECT_EQ(q.force_scale, quanta_for(pair_force_bound(table[0], 0.002), 0.002).force_scale);
  // steel particles poured in later: sized for them from the start when the settings say so
  settings.load_materials = {0, 1};
  LoadSizing with_inlet;
  with_inlet.start(settings, nm, beads, radii);
  const LoadQuantum q_inlet = with_inlet.quantum(table, nm);
  EXPECT_EQ(q_inlet.force_scale, quanta_for(pair_force_bound(table[1 * nm + 1], 0.002), 0.002).force_scale);
  EXPECT_LT(q_inlet.force_scale, q.force_scale / 1000);
  only_beads.add({1}, {real(0.003)});  // or as they come
  EXPECT_EQ(only_beads.quantum(table, nm).force_scale,
            quanta_for(pair_force_bound(table[1 * nm + 1], 0.003), 0.003).force_scale);
  // a rigid particle material
  LoadSizing rigid_particles;
  rigid_particles.start(EngineSettings{}, nm, {0, 2}, radii);
  try {
    rigid_particles.quantum(table, nm);
    ADD_FAILURE() << "a rigid particle material was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("materials 2 and 2"), std::string::npos) << e.what();
  }
}

// A contact state's mesh slots are packed (the used ones, in particle order); the device engine and
// checkpoints of versions 1 and 2 have one block of kMaxMeshContacts per particle. Packing and
// unpacking keep every used slot in place and leave the others zero.
TEST(ContactState, MeshSlotsPackAndUnpack) {
  const std::vector<std::uint8_t> count{0, 2, 0, 1};
  std::vector<EntityContact> entity(4 * kMaxMeshContacts);
  std::vector<Vec3> normal(4 * kMaxMeshContacts);
  std::vector<ContactHistory> history(4 * kMaxMeshContacts);
  for (std::size_t q = 0; q < entity.size(); ++q) {
    entity[q].element = static_cast<index_t>(q);
    normal[q] = Vec3{double(q), 0, 0};
    history[q].tangential = Vec3{0, double(q), 0};
  }
  ContactState c;
  pack_mesh_slots(count, nullptr, entity, normal, history, c);
  ASSERT_EQ(c.mesh_entity.size(), 3u);
  EXPECT_EQ(c.mesh_entity[0].element, kMaxMeshContacts);      // particle 1, slot 0
  EXPECT_EQ(c.mesh_entity[1].element, kMaxMeshContacts + 1);  // particle 1, slot 1
  EXPECT_EQ(c.mesh_entity[2].element, 3 * kMaxMeshContacts);  // particle 3, slot 0
  EXPECT_EQ(c.mesh_history[2].tangential.y, 3.0 * kMaxMeshContacts);
  EXPECT_EQ(checked_mesh_slots(c, 4, "test"), 3u);
  EXPECT_THROW(checked_mesh_slots(c, 5, "test"), std::runtime_error);
  std::vector<EntityContact> e2;
  std::vector<Vec3> n2;
  std::vector<ContactHistory> h2;
  unpack_mesh_slots(c, nullptr, 4, e2, n2, h2);
  ASSERT_EQ(e2.size(), entity.size());
  for (std::size_t i = 0; i < 4; ++i)
    for (int s = 0; s < kMaxMeshContacts; ++s) {
      const std::size_t q = i * kMaxMeshContacts + s;
      const bool used = s < count[i];
      EXPECT_EQ(e2[q].element, used ? entity[q].element : 0) << q;
      EXPECT_EQ(n2[q].x, used ? normal[q].x : 0.0) << q;
      EXPECT_EQ(h2[q].tangential.y, used ? history[q].tangential.y : 0.0) << q;
    }
}

// ---- Bad input through the command-line driver: exit code 2 and one clear message.

struct CapturedRun {
  int code;
  std::string err;
};

CapturedRun run_cli(const std::string& scene_path, std::vector<std::string> overrides = {}) {
  RunOptions opt;
  opt.scene = scene_path;
  opt.quiet = true;
  opt.overrides = std::move(overrides);
  opt.out_dir = (std::filesystem::temp_directory_path() / "dem_test_out").string();
  testing::internal::CaptureStderr();
  const int code = run_scene(opt);
  return CapturedRun{code, testing::internal::GetCapturedStderr()};
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "dem_engine_tests";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kOneSphere = R"(simulation: {dt: 1.0e-5, end_time: 1.0e-4}
materials:
  - {name: g, density: 100, youngs_modulus: 1.0e5, poisson_ratio: 0.2}
  - {name: w, youngs_modulus: inf, poisson_ratio: 0.2}
interactions:
  - {materials: [g, g]}
  - {materials: [g, w]}
particles:
  - {position: [0, 0.5, 0], radius: 0.3, material: g}
meshes:
  - {file: MESH, material: w}
)";

std::string scene_with_mesh(const std::string& mesh_name, const std::string& mesh_text) {
  const std::string mesh = write_temp(mesh_name, mesh_text);
  std::string s = kOneSphere;
  s.replace(s.find("MESH"), 4, mesh);
  return write_temp(mesh_name + ".yaml", s);
}

TEST(BadInput, MissingSceneFile) {
  const CapturedRun r = run_cli("/nonexistent/scene.yaml");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("/nonexistent/scene.yaml"), std::string::npos) << r.err;
}

TEST(BadInput, MeshWithInconsistentFaceIndex) {
  const CapturedRun r = run_cli(scene_with_mesh("bad_index.obj", "v 0 0 0\nv 1 0 0\nv 0 0 1\nf 1 2 7\n"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad_index.obj:4"), std::string::npos) << r.err;
}

TEST(BadInput, MeshWithNanCoordinate) {
  const CapturedRun r = run_cli(scene_with_mesh("nan.obj", "v 0 0 0\nv nan 0 0\nv 0 0 1\nf 1 2 3\n"));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("nan.obj:2"), std::string::npos) << r.err;
}

TEST(BadInput, MissingMeshFileAndBadOverride) {
  std::string s = kOneSphere;
  s.replace(s.find("MESH"), 4, "no_such_mesh.obj");
  const std::string path = write_temp("missing_mesh.yaml", s);
  const CapturedRun r = run_cli(path);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no_such_mesh.obj"), std::string::npos) << r.err;
  const CapturedRun o = run_cli(scene_with_mesh("ok.obj", "v -1 0 -1\nv 1 0 -1\nv 0 0 1\nf 1 3 2\n"),
                                {"simulation.dt=-1"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("simulation.dt"), std::string::npos) << o.err;
}

std::string first_line(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  return line;
}

TEST(Output, ValidSceneRunsAndWritesEveryOutput) {
  const auto out = std::filesystem::temp_directory_path() / "dem_test_out";
  std::filesystem::remove_all(out);
  const CapturedRun r = run_cli(scene_with_mesh("ok2.obj", "v -1 0 -1\nv 1 0 -1\nv 0 0 1\nf 1 3 2\n"),
                                {"output.snapshot_interval=5e-5", "output.probe_interval=2e-5", "output.probe_ids=[0]"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(first_line(out / "probes.csv"), "t,id,x,y,z,vx,vy,vz,wx,wy,wz,fx,fy,fz");
  EXPECT_EQ(first_line(out / "bodies.csv"), "t,body,fx,fy,fz,tx,ty,tz,power");
  EXPECT_TRUE(std::filesystem::exists(out / "particles.pvd"));
  EXPECT_TRUE(std::filesystem::exists(out / "meshes.pvd"));
  EXPECT_TRUE(std::filesystem::exists(out / "particles_000002.vtu"));  // t = 0, 5e-5, 1e-4
  EXPECT_TRUE(std::filesystem::exists(out / "meshes_000002_0.vtu"));  // snapshot 2, body 0
  std::ifstream probes(out / "probes.csv");
  int rows = -1;
  for (std::string line; std::getline(probes, line);) ++rows;
  EXPECT_EQ(rows, 6);  // t = 0, 2e-5, ..., 1e-4
  std::ifstream summary(out / "summary.json");
  const std::string js((std::istreambuf_iterator<char>(summary)), std::istreambuf_iterator<char>());
  EXPECT_NE(js.find("\"steps\": 10"), std::string::npos) << js;
  EXPECT_NE(js.find("\"backend\": \"host-openmp\""), std::string::npos);
  EXPECT_NE(js.find("\"status\": \"completed\""), std::string::npos);
}

TEST(SceneBuilder, OneRandomFillPlacesAWideSizeDistribution) {
  // 20,000 spheres of 1, 2.5, 5 and 10 mm with equal volume per size class (number weights
  // proportional to r^-3) at 18 % solid fraction in one fill: drawn in turn, the 10 mm spheres came
  // late and found no room (fewer than a quarter placed); placed largest first, all fit. The box:
  // 20,000 spheres of mean volume 4/3 pi 4 / sum r^-3 = 1.561e-8 m^3 take 3.12e-4 m^3, 18 % of a
  // 0.1202 m cube.
  const char* scene = R"(
simulation: {dt: 1.0e-6, end_time: 1.0e-5, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g]}
fills:
  - {shape: box, pattern: random, min: [0, 0, 0], max: [0.1202, 0.1202, 0.1202], count: 20000, material: g, seed: 5,
     radius: {distribution: discrete, values: [0.001, 0.0025, 0.005, 0.01], weights: [1000, 64, 8, 1]}}
)";
  const SceneInputs in = build_scene_inputs(load_scene_from_string(scene, "poly.yaml"));
  const ParticleArrays& p = in.particles;
  ASSERT_EQ(p.size(), 20000u);
  std::map<double, int> per_size;
  double volume = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    ++per_size[p.radius[i]];
    volume += 4.0 / 3.0 * M_PI * std::pow(double(p.radius[i]), 3);
  }
  EXPECT_EQ(per_size.size(), 4u);
  EXPECT_GT(per_size[0.01], 10);  // ~17 expected (1/1073 of 20,000)
  EXPECT_NEAR(volume / std::pow(0.1202, 3), 0.18, 0.02);
  // no two overlap (a grid of 20 mm cells: every touching pair lies in neighbouring cells)
  std::map<std::array<int, 3>, std::vector<std::size_t>> cells;
  for (std::size_t i = 0; i < p.size(); ++i)
    cells[{int(p.x[i].x / 0.02), int(p.x[i].y / 0.02), int(p.x[i].z / 0.02)}].push_back(i);
  for (const auto& [c, list] : cells)
    for (std::size_t i : list)
      for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dz = -1; dz <= 1; ++dz) {
            auto it = cells.find({c[0] + dx, c[1] + dy, c[2] + dz});
            if (it == cells.end()) continue;
            for (std::size_t j : it->second)
              if (j > i) {
                ASSERT_GE(norm(p.x[i] - p.x[j]), p.radius[i] + p.radius[j]) << i << " and " << j;
              }
          }
}

// A rough plate: one hexagonal layer of touching spheres across the box's thinnest side, glued
// (prescribed) and jittered across the plate by at most jitter * r; spheres poured on it come to
// rest on it while it does not move.
TEST(SceneBuilder, PlateFillIsAGluedHexagonalLayer) {
  const std::string yaml = R"(name: plate
simulation: {dt: 1.0e-5, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g], friction: 0.5, restitution: 0.5}
fills:
  - {shape: box, pattern: plate, min: [0, 0, 0], max: [0.04, 0.03, 0.004], radius: 0.001, material: g, prescribed: true, jitter: 0.3, seed: 3}
  - {shape: box, pattern: random, min: [0, 0, 0.005], max: [0.04, 0.03, 0.02], count: 40, radius: 0.0015, material: g}
)";
  SceneInputs in = build_scene_inputs(load_scene_from_string(yaml, "plate.yaml"));
  std::size_t plate = 0;
  for (std::size_t i = 0; i < in.particles.size(); ++i) {
    if (!in.particles.prescribed[i]) continue;
    ++plate;
    EXPECT_LE(std::abs(in.particles.x[i].z - 0.002), 0.3 * 0.001 + 1e-15);  // mid-plane, jittered
  }
  // rows 2 r sqrt(3)/2 apart in y over [r, 0.03 - r], 20 or 19 spheres 2 r apart in x per row
  const int rows = int(std::floor((0.03 - 0.002) / (0.002 * std::sqrt(3.0) / 2))) + 1;
  EXPECT_EQ(plate, std::size_t(rows / 2 + rows % 2) * 20 + std::size_t(rows / 2) * 19);
  // hexagonal: every inner sphere has 6 neighbours at one diameter in the plane
  std::size_t six = 0;
  for (std::size_t i = 0; i < plate; ++i) {
    int near = 0;
    for (std::size_t j = 0; j < plate; ++j) {
      const Vec3 d = in.particles.x[i] - in.particles.x[j];
      if (i != j && std::abs(std::hypot(double(d.x), double(d.y)) - 0.002) < 1e-9) ++near;
    }
    EXPECT_LE(near, 6);
    six += near == 6;
  }
  EXPECT_GT(six, plate / 2);
  Engine engine(in.particles, in.meshes, in.params, in.num_materials, in.settings);
  const std::vector<Vec3> start(engine.particles().x);
  for (int s = 0; s < 1000; ++s) engine.step();
  const ParticleArrays& p = engine.particles();
  std::size_t resting = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.prescribed[i]) {
      EXPECT_EQ(norm(p.v[i]), 0);
      EXPECT_EQ(norm(p.x[i] - start[static_cast<std::size_t>(p.id[i])]), 0);  // glued: not moved at all
    } else {
      resting += p.x[i].z > 0.002 && p.x[i].z < 0.02;
    }
  }
  EXPECT_EQ(resting, 40u);  // none fell through the plate
}


TEST(ContactModelScene, CohesionStrongerThanTheLinearSpringIsRefused) {
  // The bin's spheres are up to 5 mm: 2 pi k_c R* = 2 pi 1e5 0.005 = 3142 N/m against k_n = 2e3.
  try {
    build_scene_inputs(load_scene_from_string(kBinScene, "bin.yaml",
                                              {"interactions.grain-grain.normal=linear", "interactions.grain-grain.stiffness=2e3",
                                               "interactions.grain-grain.cohesion=sjkr",
                                               "interactions.grain-grain.cohesion_energy_density=1e5"}));
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("touching spheres would pull into each other"), std::string::npos) << e.what();
  }
  // a stiffness of 1e4 N/m holds it
  EXPECT_NO_THROW(build_scene_inputs(load_scene_from_string(
      kBinScene, "bin.yaml",
      {"interactions.grain-grain.normal=linear", "interactions.grain-grain.stiffness=1e4", "interactions.grain-grain.cohesion=sjkr",
       "interactions.grain-grain.cohesion_energy_density=1e5"})));
}

TEST(PeriodicScene, FillsDoNotOverlapAcrossFacesAndNarrowPeriodsAreRefused) {
  const std::string base = R"(
simulation: {dt: 1.0e-5, end_time: 0.01, gravity: [0, 0, -9.81]}
materials:
  - {name: grain, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [grain, grain]}
fills:
  - {shape: box, pattern: random, min: [-0.01, -0.01, 0], max: [0.06, 0.06, 0.04], count: 300,
     radius: {distribution: uniform, min: 0.002, max: 0.003}, material: grain, seed: 2}
)";
  // The fill box reaches past the periodic faces: every sphere is placed in the box, none overlaps
  // another through a face.
  const SceneInputs in = build_scene_inputs(
      load_scene_from_string(base + "domain: {min: [0, 0, -0.01], max: [0.05, 0.05, 0.1], periodic: [x, y]}\n", "fill.yaml"));
  const ParticleArrays& p = in.particles;
  ASSERT_EQ(p.size(), 300u);
  const PeriodicBox& b = in.settings.periodic;
  std::size_t near_faces = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const Vec3 x = wrap_far(b, p.x[i]);
    near_faces += x.x < 0.003 || x.x > 0.047;
    for (std::size_t j = i + 1; j < p.size(); ++j)
      ASSERT_GE(norm(nearest_image(b, x - wrap_far(b, p.x[j]))), p.radius[i] + p.radius[j]) << i << " and " << j;
  }
  EXPECT_GT(near_faces, 10u);
  // A period of less than four largest radii: refused, naming the key and the numbers.
  try {
    build_scene_inputs(load_scene_from_string(
        base + "domain: {min: [0, 0, -0.01], max: [0.011, 0.05, 0.1], periodic: [x]}\n", "narrow.yaml"));
    ADD_FAILURE() << "a period of 11 mm for spheres of 3 mm was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("domain.periodic: the period along x (0.011 m) must exceed 0.012 m"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dem::host
