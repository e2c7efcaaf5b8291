// What mixer users measure, against what it must give. The coarse-grained fields
// (host/app/output/coarse_graining.hpp): mass, momentum and each contact's moment on the grid
// exactly, a bed moving as a body has its velocity everywhere, the kernels as defined, the same
// bits on every engine and across a restart (the momentum balance: tests/python/test_stress.py). The mixing indices
// (host/app/output/mixing.hpp): 0 for a bed split along the sample cells' faces, 1 within the
// sampling error for tags shuffled at random, the contacts across a split counted directly. The
// run's tags: retag: at its time on every engine and across a restart, mixing.csv and
// summary.json. bodies.csv's power. Residence times of a plug flow: the length over the speed.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/engine/polyhedron_phases.hpp"
#include "host/app/driver.hpp"
#include "host/app/output/coarse_graining.hpp"
#include "host/app/output/mixing.hpp"
#include "host/app/scene/scene_loader.hpp"
#include "host/sim/errors.hpp"
#include "support/test_scenes.hpp"

namespace dem::host {
namespace {

// A cubic lattice of k^3 unit spheres (spacing 1, centres at i + 0.5), each touching its six
// neighbours: the pairs along x, y and z.
struct Lattice {
  ParticleArrays p;
  ContactState c;
};
Lattice lattice(int k) {
  Lattice l;
  const auto id = [k](int x, int y, int z) { return std::int64_t((x * k + y) * k + z); };
  for (int x = 0; x < k; ++x)
    for (int y = 0; y < k; ++y)
      for (int z = 0; z < k; ++z) {
        // (density varied, so that mass weighting differs from counting)
        l.p.push_back(id(x, y, z), Vec3{x + 0.5, y + 0.5, z + 0.5}, Vec3{0, 0, 0}, Vec3{0, 0, 0}, 0.5,
                      (x + y + z) % 3 == 0 ? 3000 : 1000, 0, false);
        const int next[3][3] = {{x + 1, y, z}, {x, y + 1, z}, {x, y, z + 1}};
        for (const auto& n : next)
          if (n[0] < k && n[1] < k && n[2] < k) {
            l.c.pair_a.push_back(id(x, y, z));
            l.c.pair_b.push_back(id(n[0], n[1], n[2]));
            l.c.pair_history.push_back(ContactHistory{});
          }
      }
  return l;
}

MixingSpec cells(double size, std::int64_t min_particles = 1, bool mass = false) {
  MixingSpec s;
  s.given = true;
  s.cell_size = size;
  s.min_particles = min_particles;
  s.mass_weighted = mass;
  return s;
}

// Split at x = 8 (a face of the 4-wide cells): every cell holds one tag. The contacts across the
// split are the k^2 pairs that cross x = 8.
TEST(MixingIndices, ABedSplitAlongTheCellFacesIsSegregated) {
  const int k = 16;
  Lattice l = lattice(k);
  for (std::size_t i = 0; i < l.p.size(); ++i) l.p.tag[i] = l.p.x[i].x < 8 ? 0 : 1;
  for (const bool mass : {false, true}) {
    const MixingIndices m = mixing_indices(l.p, l.c, cells(4, 1, mass));
    ASSERT_EQ(m.tags.size(), 2u);
    for (const TagMixing& t : m.tags) {
      EXPECT_EQ(t.cells, 64u);
      EXPECT_EQ(t.particles, std::uint64_t(k * k * k));
      EXPECT_NEAR(t.lacey, 0, 1e-12) << "mass " << mass;
      EXPECT_NEAR(t.variance, t.variance_segregated, 1e-15);
    }
    EXPECT_NEAR(m.tags[0].fraction, 0.5, 1e-12);
    EXPECT_NEAR(m.tags[0].rsd, 1.0, 1e-12);  // S = 1/2, p = 1/2
    // the contact index from the contacts counted directly
    const double n = k * k * k, half = n / 2;
    const double contacts = 3.0 * (k - 1) * k * k, across = k * k;
    EXPECT_EQ(m.contacts, std::uint64_t(contacts));
    EXPECT_EQ(m.unlike_contacts, std::uint64_t(across));
    const double expected = 1 - 2 * half * (half - 1) / (n * (n - 1));
    EXPECT_DOUBLE_EQ(m.contact_index, (across / contacts) / expected);
  }
}

// Tags drawn at random (one fair coin per particle): the Lacey index is 1 within three standard
// errors of S^2 (cells as independent binomial samples: Var (c - p)^2 from the binomial's fourth
// central moment), the contact index 1 within three of the unlike share (at p = 1/2 two pairs
// that share a particle are uncorrelated, so the share is binomial over the contacts).
TEST(MixingIndices, TagsShuffledAtRandomGiveOneWithinTheSamplingError) {
  const int k = 20;
  Lattice l = lattice(k);
  std::mt19937_64 rng(12345);
  for (std::size_t i = 0; i < l.p.size(); ++i) l.p.tag[i] = static_cast<std::int32_t>(rng() >> 63);
  const MixingIndices m = mixing_indices(l.p, l.c, cells(4));
  ASSERT_EQ(m.tags.size(), 2u);
  const TagMixing& t = m.tags[1];
  const double n = 64, p = t.fraction, q = 1 - p, cells_used = double(t.cells);
  ASSERT_EQ(t.cells, 125u);
  const double mu4 = n * p * q * (1 + 3 * (n - 2) * p * q) / std::pow(n, 4), mu2 = p * q / n;
  const double se_s2 = std::sqrt(cells_used * (mu4 - mu2 * mu2)) / cells_used;
  const double se_lacey = se_s2 / (t.variance_segregated - t.variance_random);
  EXPECT_NEAR(t.lacey, 1, 3 * se_lacey) << "S^2 " << t.variance << ", S_R^2 " << t.variance_random;
  EXPECT_GT(se_lacey, 0.001);  // (a standard error that could not tell 1 from 0.99 would test nothing)
  EXPECT_LT(se_lacey, 0.01);
  EXPECT_NEAR(m.tags[0].lacey, t.lacey, 1e-12);  // two tags: one index
  const double share = 1 - (std::pow(double(l.p.size()) * p, 2) + std::pow(double(l.p.size()) * q, 2)) /
                               std::pow(double(l.p.size()), 2);
  const double se_contact = std::sqrt(share * (1 - share) / double(m.contacts)) / share;
  EXPECT_NEAR(m.contact_index, 1, 3 * se_contact);
}

// Samples of a particle count (runs of 64 along a Z-order curve): 125 whole samples of the 8000
// particles, and for shuffled tags Lacey's index 1 within three standard errors, as with cells.
TEST(MixingIndices, SamplesOfAParticleCountGiveOneForShuffledTags) {
  Lattice l = lattice(20);
  std::mt19937_64 rng(777);
  for (std::size_t i = 0; i < l.p.size(); ++i) l.p.tag[i] = static_cast<std::int32_t>(rng() >> 63);
  MixingSpec s;
  s.given = true;
  s.sample_particles = 64;
  s.min_particles = 64;
  const MixingIndices m = mixing_indices(l.p, l.c, s);
  const TagMixing& t = m.tags[1];
  EXPECT_EQ(t.cells, 125u);
  EXPECT_EQ(t.particles, 8000u);
  const double n = 64, p = t.fraction, q = 1 - p;
  const double mu4 = n * p * q * (1 + 3 * (n - 2) * p * q) / std::pow(n, 4), mu2 = p * q / n;
  const double se_lacey = std::sqrt(125 * (mu4 - mu2 * mu2)) / 125 / (t.variance_segregated - t.variance_random);
  EXPECT_NEAR(t.lacey, 1, 3 * se_lacey);
  // a bed split in two: the samples are compact, so nearly every one holds one tag
  for (std::size_t i = 0; i < l.p.size(); ++i) l.p.tag[i] = l.p.x[i].x < 10 ? 0 : 1;
  EXPECT_LT(mixing_indices(l.p, l.c, s).tags[0].lacey, 0.1);
}

// Cells with fewer than min_particles are left out: a 4 x 4 x 4 lattice in cells of 3 fills one
// cell with 27, three with 9, three with 3 and one with 1.
TEST(MixingIndices, CellsWithTooFewParticlesAreLeftOut) {
  Lattice l = lattice(4);
  for (std::size_t i = 0; i < l.p.size(); ++i) l.p.tag[i] = i % 2;
  EXPECT_EQ(mixing_indices(l.p, l.c, cells(3, 27)).tags[0].cells, 1u);
  EXPECT_EQ(mixing_indices(l.p, l.c, cells(3, 27)).tags[0].particles, 27u);
  EXPECT_EQ(mixing_indices(l.p, l.c, cells(3, 9)).tags[0].cells, 4u);
  EXPECT_EQ(mixing_indices(l.p, l.c, cells(3, 1)).tags[0].cells, 8u);
  EXPECT_TRUE(std::isnan(mixing_indices(l.p, l.c, cells(3, 28)).tags[0].lacey));  // no cell left
}

// A pair with a polyhedron is a contact only while its kept plane says so (its bounding spheres
// overlap for longer); a sphere pair always is (export_state gives the touching ones).
TEST(MixingIndices, PolyhedralPairsCountWhileInContact) {
  Lattice l = lattice(2);
  for (std::size_t i = 0; i < l.p.size(); ++i) l.p.tag[i] = i % 2;
  l.p.shape[0] = 0;  // particle 0 a polyhedron: its three pairs
  const std::uint64_t all = mixing_indices(l.p, l.c, cells(2)).contacts;
  EXPECT_EQ(all, 9u);  // its pairs hold no plane: left out
  CommonPlane cp{};
  cp.n = Vec3{1, 0, 0};
  for (std::size_t q = 0; q < l.c.pair_a.size(); ++q)
    if (l.c.pair_a[q] == 0) l.c.pair_history[q].rolling = pack_plane(cp, q == 0);
  EXPECT_EQ(mixing_indices(l.p, l.c, cells(2)).contacts, 10u);
}

// ---- runs

RunOptions options(const std::string& scene, const std::string& out, const std::string& device,
                   std::vector<std::string> overrides) {
  RunOptions o;
  o.scene = scene;
  o.out_dir = (std::filesystem::temp_directory_path() / out).string();
  o.device = device;
  o.quiet = true;
  o.overrides = std::move(overrides);
  return o;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The bin scene's 300 spheres, tag 0, the left half (x < 0) retagged 1 at 10 ms.
std::string retag_scene() {
  const std::string path = (std::filesystem::temp_directory_path() / "dem_retag_scene.yaml").string();
  std::ofstream(path) << test::kBinScene << R"(
retag:
  - {time: 0.01, tag: 1, shape: box, min: [-1, -1, -1], max: [0, 1, 1]}
mixing: {cell_size: 0.03, min_particles: 3}
output: {probe_interval: 0.002, snapshot_interval: 0}
)";
  return path;
}

// mixing.csv's rows from time t on.
std::string rows_from(const std::string& csv, double t) {
  std::istringstream in(csv);
  std::string line, out;
  std::getline(in, line);
  while (std::getline(in, line))
    if (std::stod(line.substr(0, line.find(','))) >= t - 1e-12) out += line + "\n";
  return out;
}

TEST(Retag, RecolorsItsRegionAtItsTimeOnEveryEngineAndAcrossARestart) {
  const std::string scene = retag_scene();
  ASSERT_EQ(run_scene(options(scene, "dem_retag_cpu", "cpu", {})), 0);
  ASSERT_EQ(run_scene(options(scene, "dem_retag_omp", "omp", {})), 0);
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string host = read_text(tmp / "dem_retag_cpu" / "mixing.csv");
  EXPECT_EQ(host, read_text(tmp / "dem_retag_omp" / "mixing.csv"));
  // one tag before 10 ms, two from then on, about half of them each
  std::istringstream in(host);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "t,tag,fraction,cells,particles,variance,variance_segregated,variance_random,lacey,rsd,contacts,"
                  "unlike_contacts,contact_index");
  int before = 0, after = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) f.push_back(x);
    ASSERT_EQ(f.size(), 13u) << line;
    const double t = std::stod(f[0]);
    if (t < 0.01 - 1e-12) {
      ++before;
      EXPECT_EQ(f[1], "0");
      EXPECT_EQ(f[2], "1");
    } else {
      ++after;
      EXPECT_NEAR(std::stod(f[2]), 0.5, 0.15) << line;
      EXPECT_LT(std::stod(f[8]), 0.2) << line;  // just split: nearly segregated
      EXPECT_GT(std::stoull(f[10]), 0u) << line;  // (the falling pour's first contacts)
    }
  }
  EXPECT_EQ(before, 5);      // 0, 2, 4, 6, 8 ms
  EXPECT_EQ(after, 2 * 6);   // 10 ... 20 ms, two tags
  // a run that stops at 8 ms with a checkpoint, continued: the same rows after it
  ASSERT_EQ(run_scene(options(scene, "dem_retag_first", "cpu",
                              {"simulation.end_time=0.008", "output.checkpoint_interval=0.008"})),
            0);
  RunOptions rest = options(scene, "dem_retag_rest", "cpu", {});
  rest.restart = (tmp / "dem_retag_first" / "checkpoint.bin").string();
  ASSERT_EQ(run_scene(rest), 0);
  EXPECT_EQ(rows_from(read_text(tmp / "dem_retag_rest" / "mixing.csv"), 0.0081), rows_from(host, 0.0081));
  // summary.json repeats the last rows
  const std::string summary = read_text(tmp / "dem_retag_cpu" / "summary.json");
  EXPECT_NE(summary.find("\"mixing\": {"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"contact_index\""), std::string::npos);
}

// bodies.csv's power: minus the power of the particles' loads on a body at its motion, here the
// paddle's torque about z at 10 rad/s (the bin stands still: 0).
TEST(BodiesCsv, PowerIsTheWorkRateOfTheBodyOnTheParticles) {
  const std::string scene = retag_scene();
  ASSERT_EQ(run_scene(options(scene, "dem_power", "cpu", {})), 0);
  std::ifstream f(std::filesystem::temp_directory_path() / "dem_power" / "bodies.csv");
  std::string line;
  std::getline(f, line);
  ASSERT_EQ(line, "t,body,fx,fy,fz,tx,ty,tz,power");
  int paddle_rows = 0, working = 0;
  while (std::getline(f, line)) {
    std::vector<std::string> c;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) c.push_back(x);
    ASSERT_EQ(c.size(), 9u);
    const double tz = std::stod(c[7]), power = std::stod(c[8]);
    if (c[1] == "paddle") {
      ++paddle_rows;
      EXPECT_NEAR(power, -10 * tz, 1e-12 * std::max(1.0, std::abs(power))) << line;
      working += power != 0;
    } else {
      EXPECT_EQ(power, 0) << line;
    }
  }
  EXPECT_EQ(paddle_rows, 11);
  EXPECT_GT(working, 0);  // (the paddle meets the pour: a test of a zero column would pass anyway)
}

// A plug flow: spheres poured one a millisecond at x = 0.5 to 0.6 mm moving at 1 m/s along x
// without gravity or contacts, removed by an outlet from x = 0.1 m (checked every 0.5 ms). Each
// residence time is the distance over the speed, 99.45 ms, within one probe interval (1 ms):
// later by at most the outlet's check interval, the inlet's depth 0.1 ms either way.
std::string plug_flow_scene() {
  const std::string path = (std::filesystem::temp_directory_path() / "dem_plug_flow.yaml").string();
  std::ofstream(path) << R"(name: plug
simulation: {dt: 1.0e-5, end_time: 0.2, gravity: [0, 0, 0]}
domain: {min: [-0.01, -0.02, -0.02], max: [0.25, 0.02, 0.02]}
materials:
  - {name: g, density: 2500, youngs_modulus: 1.0e7, poisson_ratio: 0.25}
interactions:
  - {materials: [g, g], restitution: 0.5}
inlets:
  - {name: feed, min: [0, -0.01, -0.01], max: [0.0011, 0.01, 0.01], radius: 0.0005, material: g,
     velocity: [1, 0, 0], rate: 1000, interval: 0.001}
outlets:
  - {name: exit, min: [0.1, -0.02, -0.02], max: [0.25, 0.02, 0.02], interval: 0.0005}
output: {probe_interval: 0.001}
)";
  return path;
}

TEST(Residence, APlugFlowStaysTheLengthOverTheSpeed) {
  const std::string scene = plug_flow_scene();
  const auto tmp = std::filesystem::temp_directory_path();
  ASSERT_EQ(run_scene(options(scene, "dem_plug", "cpu", {})), 0);
  std::ifstream f(tmp / "dem_plug" / "residence.csv");
  std::string line;
  std::getline(f, line);
  ASSERT_EQ(line, "t,outlet,id,inserted,residence");
  int rows = 0;
  double sum = 0;
  while (std::getline(f, line)) {
    std::vector<std::string> c;
    std::stringstream ls(line);
    for (std::string x; std::getline(ls, x, ',');) c.push_back(x);
    ASSERT_EQ(c.size(), 5u);
    EXPECT_EQ(c[1], "exit");
    const double residence = std::stod(c[4]);
    EXPECT_NEAR(std::stod(c[0]) - std::stod(c[3]), residence, 1e-12);
    EXPECT_NEAR(residence, 0.09945, 0.001) << line;
    sum += residence;
    ++rows;
  }
  EXPECT_GE(rows, 95);  // (poured from 0 to 0.2 s, those in by 0.1 s are out)
  EXPECT_LE(rows, 101);
  const std::string summary = read_text(tmp / "dem_plug" / "summary.json");
  EXPECT_NE(summary.find("\"removed\": " + std::to_string(rows)), std::string::npos) << summary;
  // summary.json's mean: that of the rows (printed to 17 digits; the sums' orders differ)
  const std::size_t at = summary.find("\"residence_mean\": ");
  ASSERT_NE(at, std::string::npos) << summary;
  EXPECT_NEAR(std::stod(summary.substr(at + 18)), sum / rows, 1e-12);
  // continued from a checkpoint at 0.15 s: the same run totals, to the bit
  ASSERT_EQ(run_scene(options(scene, "dem_plug_first", "cpu",
                              {"simulation.end_time=0.15", "output.checkpoint_interval=0.15"})),
            0);
  RunOptions rest = options(scene, "dem_plug_rest", "omp", {});
  rest.restart = (tmp / "dem_plug_first" / "checkpoint.bin").string();
  ASSERT_EQ(run_scene(rest), 0);
  const auto outlet_of = [](const std::string& js) { return js.substr(js.find("\"outlets\"")); };
  EXPECT_EQ(outlet_of(read_text(tmp / "dem_plug_rest" / "summary.json")).substr(0, 200), outlet_of(summary).substr(0, 200));
}

// ---- coarse-grained fields

// n spheres at random in [0, 0.04]^2 x [0, 0.02] (radii 1.5 to 2.5 mm, densities 1000 to 3000),
// each with its own velocity.
ParticleArrays random_spheres(std::size_t n, std::uint64_t seed, Vec3 common_velocity, double spread) {
  std::mt19937_64 rng(seed);
  const auto u = [&] { return double(rng() >> 11) / 9007199254740992.0; };
  ParticleArrays p;
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 v = common_velocity + real(spread) * Vec3{u() - 0.5, u() - 0.5, u() - 0.5};
    p.push_back(std::int64_t(n - i), Vec3{0.04 * u(), 0.04 * u(), 0.02 * u()}, v, Vec3{0, 0, 0}, 0.0015 + 0.001 * u(),
                1000 + 2000 * u(), 0, false);
  }
  return p;
}

CoarseGrainingSpec cg_spec(std::uint8_t kernel, double width, double cell) {
  CoarseGrainingSpec s;
  s.given = true;
  s.kernel = kernel;
  s.width = width;
  s.cell_size = cell;
  s.region_given = true;
  s.min = {0, 0, 0};
  s.max = {0.04, 0.04, 0.02};
  s.interval = s.sample_interval = 1;
  return s;
}

// The grid holds the particles' mass and momentum (relative 1e-12) for either kernel at widths
// from the smallest allowed to the largest, with and without periodic axes (x and y: the kernels
// wrap across the faces).
TEST(CoarseGraining, MassAndMomentumAreConservedForEveryAllowedWidth) {
  const ParticleArrays p = random_spheres(150, 7, Vec3{0.2, -0.1, 0.05}, 0.4);
  double mass = 0, momentum[3] = {0, 0, 0};
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double m = 1 / double(p.inv_mass[i]);
    mass += m;
    momentum[0] += m * p.v[i].x, momentum[1] += m * p.v[i].y, momentum[2] += m * p.v[i].z;
  }
  const double h = 0.002;
  for (const std::uint8_t kernel : {std::uint8_t(0), std::uint8_t(1)}) {
    const double largest = kernel == 0 ? (kMaxCgSpan - 2) / 2.0 * h : (kMaxCgSpan - 2) / 6.0 * h;
    for (const double width : {h, 1.7 * h, 4 * h, largest}) {
      for (const bool periodic : {false, true}) {
        const PeriodicBox box =
            periodic ? make_periodic_box(Vec3{0, 0, 0}, Vec3{0.04, 0.04, 0.02}, true, true, false) : PeriodicBox{};
        CoarseGrainer cg(cg_spec(kernel, width, h), box, 0.003);
        cg.sample(p, p.v, {});
        const CgFields f = cg.average();
        const double vc = f.grid.cell_volume();
        double grid_mass = 0, grid_momentum[3] = {0, 0, 0};
        for (std::size_t c = 0; c < f.grid.cells(); ++c) {
          grid_mass += f.density[c] * vc;
          for (int k = 0; k < 3; ++k) grid_momentum[k] += f.density[c] * f.velocity[3 * c + k] * vc;
        }
        const std::string what = "kernel " + std::to_string(kernel) + ", width " + std::to_string(width) +
                                 (periodic ? ", periodic x y" : "");
        EXPECT_NEAR(grid_mass, mass, 1e-12 * mass) << what;
        for (int k = 0; k < 3; ++k)
          EXPECT_NEAR(grid_momentum[k], momentum[k], 1e-12 * std::abs(mass)) << what << ", component " << k;
      }
    }
  }
}

// Every particle at one velocity: the field's velocity is that velocity wherever there is mass,
// and the kinetic stress and temperature vanish (no fluctuation), over two samples.
TEST(CoarseGraining, ABedMovingAsABodyHasItsVelocityEverywhere) {
  const Vec3 u{0.3, -0.1, 0.2};
  const ParticleArrays p = random_spheres(300, 3, u, 0);
  CoarseGrainer cg(cg_spec(1, 0.003, 0.002), PeriodicBox{}, 0.003);
  cg.sample(p, p.v, {});
  cg.sample(p, p.v, {});
  const CgFields f = cg.average();
  EXPECT_EQ(f.samples, 2u);
  double densest = 0;
  for (double rho : f.density) densest = std::max(densest, rho);
  int filled = 0;
  for (std::size_t c = 0; c < f.grid.cells(); ++c) {
    if (f.density[c] < 1e-9 * densest) continue;
    ++filled;
    EXPECT_NEAR(f.velocity[3 * c], u.x, 1e-12);
    EXPECT_NEAR(f.velocity[3 * c + 1], u.y, 1e-12);
    EXPECT_NEAR(f.velocity[3 * c + 2], u.z, 1e-12);
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(f.kinetic_stress[9 * c + k], 0, 1e-12 * f.density[c]);
    EXPECT_NEAR(f.temperature[c], 0, 1e-12);
  }
  EXPECT_GT(filled, 1000);
}

// The contact stress: the grid holds each contact's moment exactly (relative 1e-12), F (x) (x_a -
// x_b) for a pair and F (x) (x - c) for a mesh contact, whatever the kernel and width, also where a
// branch crosses a periodic face (the pieces wrap with the cells); a contact with one particle
// outside the region counts its own piece alone; a sample without contacts leaves NaN.
TEST(CoarseGraining, ContactStressHoldsEachContactsMomentExactly) {
  const ParticleArrays p = random_spheres(40, 11, Vec3{0, 0, 0}, 0);
  ContactForces c;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1, 1);
  double moment[9] = {};
  const auto add_moment = [&](Vec3 f, Vec3 b) {
    const double fv[3] = {f.x, f.y, f.z}, bv[3] = {b.x, b.y, b.z};
    for (int r = 0; r < 3; ++r)
      for (int q = 0; q < 3; ++q) moment[3 * r + q] += fv[r] * bv[q];
  };
  for (int k = 0; k < 30; ++k) {  // pairs, some across the periodic face x = 0.04
    const Vec3 xa{0.004 + 0.032 * (unit(rng) + 1) / 2, 0.004 + 0.032 * (unit(rng) + 1) / 2, 0.004 + 0.012 * (unit(rng) + 1) / 2};
    const Vec3 d{0.003 * unit(rng), 0.003 * unit(rng), 0.003 * unit(rng)};
    // (every fifth: a just inside the face x = 0, b's image nearest it just outside)
    const Vec3 a = k % 5 == 0 ? Vec3{0.0005, xa.y, xa.z} : xa;
    const Vec3 b = k % 5 == 0 ? Vec3{-0.0005, xa.y, xa.z} : xa + d;
    const Vec3 f{unit(rng), unit(rng), unit(rng)};
    c.pair_a.push_back(2 * k), c.pair_b.push_back(2 * k + 1);
    c.pair_x_a.push_back(a);
    c.pair_x_b.push_back(b);
    c.pair_point.push_back(real(0.5) * (a + b) + Vec3{0.0002 * unit(rng), 0.0002 * unit(rng), 0});
    c.pair_force.push_back(f);
    add_moment(f, a - b);
  }
  for (int k = 0; k < 10; ++k) {  // mesh contacts on the floor z = 0
    const Vec3 x{0.04 * (unit(rng) + 1) / 2, 0.04 * (unit(rng) + 1) / 2, 0.002};
    const Vec3 f{unit(rng), unit(rng), 1 + unit(rng)};
    c.wall_particle.push_back(100 + k), c.wall_entity.push_back(k);
    c.wall_x.push_back(x), c.wall_point.push_back(Vec3{x.x, x.y, 0}), c.wall_force.push_back(f);
    add_moment(f, x - Vec3{x.x, x.y, 0});
  }
  const PeriodicBox box = make_periodic_box(Vec3{0, 0, 0}, Vec3{0.04, 0.04, 0.02}, true, true, false);
  double scale = 0;
  for (double m : moment) scale = std::max(scale, std::abs(m));
  const double h = 0.002;
  for (const std::uint8_t kernel : {std::uint8_t(0), std::uint8_t(1)})
    for (const double width : {h, 2.5 * h, 6 * h}) {
      CoarseGrainingSpec spec = cg_spec(kernel, width, h);
      spec.min = {0, 0, -0.001};
      CoarseGrainer cg(spec, box, 0.003);
      cg.sample(p, p.v, {}, &c);
      const CgFields f = cg.average();
      ASSERT_EQ(f.contact_samples, 1u);
      double grid[9] = {};
      for (std::size_t cell = 0; cell < f.grid.cells(); ++cell)
        for (int q = 0; q < 9; ++q) grid[q] += f.contact_stress[9 * cell + std::size_t(q)] * f.grid.cell_volume();
      for (int q = 0; q < 9; ++q)
        EXPECT_NEAR(grid[q], moment[q], 1e-12 * scale) << "kernel " << int(kernel) << ", width " << width << ", component " << q;
    }
  // the region leaves out particle b of one pair: a's piece alone, F (x) (x_a - c)
  ContactForces one;
  one.pair_a = {0}, one.pair_b = {1};
  one.pair_x_a = {Vec3{0.02, 0.02, 0.01}}, one.pair_x_b = {Vec3{0.02, 0.02, 0.0138}};
  one.pair_point = {Vec3{0.02, 0.02, 0.0119}}, one.pair_force = {Vec3{0.3, 0, -2}};
  CoarseGrainingSpec spec = cg_spec(0, 0.004, h);
  spec.max = {0.04, 0.04, 0.012};
  CoarseGrainer cg(spec, PeriodicBox{}, 0.003);
  cg.sample(p, p.v, {}, &one);
  cg.sample(p, p.v, {});  // (no contacts: not counted in their average)
  const CgFields f = cg.average();
  EXPECT_EQ(f.samples, 2u);
  EXPECT_EQ(f.contact_samples, 1u);
  double zz = 0, xz = 0;
  for (std::size_t cell = 0; cell < f.grid.cells(); ++cell) {
    zz += f.contact_stress[9 * cell + 8] * f.grid.cell_volume();
    xz += f.contact_stress[9 * cell + 2] * f.grid.cell_volume();
  }
  EXPECT_NEAR(zz, -2 * (0.01 - 0.0119), 1e-15);
  EXPECT_NEAR(xz, 0.3 * (0.01 - 0.0119), 1e-15);
  CoarseGrainer none(spec, PeriodicBox{}, 0.003);
  none.sample(p, p.v, {});
  EXPECT_TRUE(std::isnan(none.average().contact_stress[0]));
}

// The kernels as defined: cg_exp against the library's exp, the Lucy kernel's integral (1 over its
// support, one half on each side), and one particle's weights symmetric about its centre.
TEST(CoarseGraining, KernelsAreWhatTheyAreDefinedToBe) {
  for (double x = -5; x <= 0; x += 0.0137) EXPECT_NEAR(cg_exp(x), std::exp(x), 4e-16 * std::exp(x)) << x;
  EXPECT_EQ(cg_lucy_cdf(-0.01, 0.01), 0.0);
  EXPECT_EQ(cg_lucy_cdf(0, 0.01), 0.5);
  EXPECT_DOUBLE_EQ(cg_lucy_cdf(0.01, 0.01), 1.0);
  EXPECT_NEAR(cg_lucy_cdf(0.003, 0.01) + cg_lucy_cdf(-0.003, 0.01), 1.0, 1e-15);
  for (const CgKernel k : {CgKernel::Lucy, CgKernel::Gaussian}) {
    CgAxisWeights w;
    ASSERT_TRUE(cg_axis_weights(0.021, 0, 0.002, 40, false, k, 0.004, w));  // at a cell centre
    double total = 0;
    for (int c = 0; c < w.count; ++c) {
      total += w.w[c];
      EXPECT_NEAR(w.w[c], w.w[w.count - 1 - c], 1e-15);
    }
    EXPECT_NEAR(total, 1.0, 1e-15);
    EXPECT_FALSE(cg_axis_weights(0.001, 0, 0.002, 20, false, k, 0.004, w));  // leaves a grid that does not wrap
    EXPECT_TRUE(cg_axis_weights(0.001, 0, 0.002, 20, true, k, 0.004, w));    // wraps
  }
}

TEST(CoarseGraining, WidthsOutsideTheAllowedRangeAreRefused) {
  const std::string head = std::string(test::kBinScene) + "output: {probe_interval: 0.002}\n";
  const auto error = [&](const std::string& cg) {
    try {
      load_scene_from_string(head + cg, "scene.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string narrow =
      error("coarse_graining: {width: 0.001, cell_size: 0.002, interval: 0.01, min: [0, 0, 0], max: [1, 1, 1]}\n");
  EXPECT_NE(narrow.find("is below the allowed range: at least cell_size (0.002 m)"), std::string::npos) << narrow;
  const std::string wide =
      error("coarse_graining: {kernel: gaussian, width: 0.05, cell_size: 0.002, interval: 0.01, min: [0, 0, 0], "
            "max: [1, 1, 1]}\n");
  EXPECT_NE(wide.find("is above the allowed range"), std::string::npos) << wide;
  const std::string nowhere = error("coarse_graining: {width: 0.004, cell_size: 0.002, interval: 0.01}\n");
  EXPECT_NE(nowhere.find("needs min and max"), std::string::npos) << nowhere;
  const std::string late =
      error("coarse_graining: {width: 0.004, cell_size: 0.002, interval: 0.01, sample_interval: 0.02, min: [0, 0, 0], "
            "max: [1, 1, 1]}\n");
  EXPECT_NE(late.find("must be at most interval"), std::string::npos) << late;
}

// The bin's pour with fields every 10 ms from samples every 2 ms (the contact stress with its wall
// contacts included): the host engine and the device engine's code write the same bytes, on any
// number of threads and across a restart.
TEST(CoarseGraining, FieldsAreTheSameBitsOnEveryEngineAndThreadCount) {
  const std::string path = (std::filesystem::temp_directory_path() / "dem_cg_scene.yaml").string();
  std::ofstream(path) << test::kBinScene << R"(
coarse_graining: {kernel: gaussian, width: 0.006, cell_size: 0.004, interval: 0.01, sample_interval: 0.002,
                  min: [-0.06, -0.06, 0], max: [0.06, 0.06, 0.1], per_tag: true}
)";
  ASSERT_EQ(run_scene(options(path, "dem_cg_cpu", "cpu", {})), 0);
  ASSERT_EQ(run_scene(options(path, "dem_cg_omp", "omp", {})), 0);
  RunOptions one = options(path, "dem_cg_one_thread", "cpu", {});
  one.threads = 1;  // (the scatter runs in slabs, one a thread)
  const int threads = omp_get_max_threads();
  ASSERT_EQ(run_scene(one), 0);
  omp_set_num_threads(threads);  // (run_scene sets it for the process)
  const auto tmp = std::filesystem::temp_directory_path();
  for (const char* f : {"fields_000000.vti", "fields_000001.vti", "fields_000002.vti", "fields.pvd"}) {
    const std::string host = read_text(tmp / "dem_cg_cpu" / f);
    EXPECT_FALSE(host.empty()) << f;
    EXPECT_EQ(host, read_text(tmp / "dem_cg_omp" / f)) << f;
    EXPECT_EQ(host, read_text(tmp / "dem_cg_one_thread" / f)) << f;
  }
  const std::string last = read_text(tmp / "dem_cg_cpu" / "fields_000002.vti");
  EXPECT_NE(last.find("solid_fraction_tag0"), std::string::npos);
  EXPECT_NE(last.find("\"contact_stress\""), std::string::npos);
  // continued from a checkpoint at 10 ms on the device engine's code: the window after it the same
  // bytes (the restart's first sample, at the checkpoint's time, has no contact forces: its file
  // is the one at 10 ms)
  ASSERT_EQ(run_scene(options(path, "dem_cg_first", "cpu", {"simulation.end_time=0.01", "output.checkpoint_interval=0.01"})), 0);
  RunOptions rest = options(path, "dem_cg_rest", "omp", {});
  rest.restart = (tmp / "dem_cg_first" / "checkpoint.bin").string();
  ASSERT_EQ(run_scene(rest), 0);
  EXPECT_EQ(read_text(tmp / "dem_cg_rest" / "fields_000001.vti"), last);
}

// Polyhedra and spheres in the bin with its paddle: the contact stress from common-plane contacts
// (their contact points kept by the engines) the same bytes on both engines' code.
TEST(CoarseGraining, PolyhedralContactStressIsTheSameBitsOnEveryEngine) {
  const std::string path = (std::filesystem::temp_directory_path() / "dem_cg_polyhedra.yaml").string();
  std::ofstream(path) << test::kPolyhedraBinScene << R"(
coarse_graining: {kernel: lucy, width: 0.008, cell_size: 0.004, interval: 0.02, sample_interval: 0.004,
                  min: [-0.06, -0.06, 0], max: [0.06, 0.06, 0.1]}
)";
  ASSERT_EQ(run_scene(options(path, "dem_cgp_cpu", "cpu", {})), 0);
  ASSERT_EQ(run_scene(options(path, "dem_cgp_omp", "omp", {})), 0);
  const auto tmp = std::filesystem::temp_directory_path();
  const std::string host = read_text(tmp / "dem_cgp_cpu" / "fields_000002.vti");
  EXPECT_NE(host.find("\"contact_stress\""), std::string::npos);
  EXPECT_EQ(host, read_text(tmp / "dem_cgp_omp" / "fields_000002.vti"));
}

}  // namespace
}  // namespace dem::host
