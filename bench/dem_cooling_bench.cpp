// The whole step on polydisperse granular gases (krijgsman2014 Sect. 6 and issue 14): spheres with
// radii from the truncated power law f(r) ~ r^alpha between r_min and omega r_min, placed at random
// without overlaps (largest first) at solid fraction nu in a box periodic on every axis, moving at
// random at speed v0 without gravity, and cooling by inelastic collisions. Two geometries:
//   --dim 3: a 3D gas (cost per particle-step against the width of the distribution);
//   --dim 2: the paper's 2D free-cooling example as our 3D engine allows: every centre in the plane
//            z = 0 with no velocity across it, which keeps the motion exactly planar (normals,
//            forces and spins stay in or across the plane), periodic in x and y; nu is then the
//            area fraction (the paper: 1e4 particles, omega = 20, alpha = -3, nu = 0.4, solid walls).
// For each broad phase (uniform grid; BSP tree; HGrid with one level, the paper's linked-cell
// reference, two and three levels, and its chosen levels; auto; in 2D also the paper's five levels
// at 4.0, 7.9, 15.1, 27.2 and 40 r_min) and each detection scheme (every step with skin 0, as the paper's code; our adaptive
// skins): wall time per step after a warm-up, the broad phase's share, and the speed-ups over one
// level. All runs of one geometry start from the same state.
//   build/bench/dem_cooling_bench [--dim 2|3] [--n N] [--omega W] [--alpha A] [--nu NU] [--steps S]
//                                 [--warmup S] [--only every|adaptive] [--csv F]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/scene_loader.hpp"
#include "support/power_law.hpp"

using namespace dem;
using namespace dem::host;

namespace {

struct Options {
  int dim = 3;
  int n = 20000;
  double omega = 100, alpha = -3, nu = 0.3;
  int steps = 200, warmup = 50;
  std::string only, csv;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&]() -> std::string {
      if (k + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++k];
    };
    if (a == "--dim") o.dim = std::stoi(value());
    else if (a == "--n") o.n = std::stoi(value());
    else if (a == "--omega") o.omega = std::stod(value());
    else if (a == "--alpha") o.alpha = std::stod(value());
    else if (a == "--nu") o.nu = std::stod(value());
    else if (a == "--steps") o.steps = std::stoi(value());
    else if (a == "--warmup") o.warmup = std::stoi(value());
    else if (a == "--only") o.only = value();
    else if (a == "--csv") o.csv = value();
    else throw std::invalid_argument("unknown option " + a);
  }
  if (o.dim != 2 && o.dim != 3) throw std::invalid_argument("--dim must be 2 or 3");
  if (o.n < 2 || o.omega < 1 || !(o.nu > 0 && o.nu < 0.5) || o.steps < 1 || o.warmup < 0)
    throw std::invalid_argument("need --n >= 2, --omega >= 1, 0 < --nu < 0.5, --steps >= 1, --warmup >= 0");
  return o;
}

// Random sequential placement, largest first (r sorted decreasing), in a periodic box of side
// `side` (z = 0 in 2D). Spheres up to `split` (10 r_min, or the largest 1 % where more are larger)
// are kept in cells of 2 split (a 3^dim stencil finds every overlap among them); the few larger
// ones are tested against every candidate directly. The cells change only the speed: every
// attempt is accepted or refused by the exact overlap test.
std::vector<Vec3> place(std::mt19937_64& rng, const std::vector<double>& r, double side, int dim) {
  const std::size_t n = r.size();
  const double r_min = r.back(), split = std::min(r.front(), std::max(10 * r_min, r[n / 100]));
  const double cell = 2 * split;
  const int cells = std::max(1, int(side / cell));
  const double cs = side / cells;
  const int cz = dim == 3 ? cells : 1;
  std::vector<std::vector<std::int32_t>> grid(std::size_t(cells) * cells * cz);
  std::vector<std::int32_t> big;
  std::vector<Vec3> x(n);
  std::uniform_real_distribution<double> u(0, side);
  auto wrap = [side](double d) { return d - side * std::round(d / side); };
  auto clash = [&](std::size_t i, std::int32_t j) {
    const double dx = wrap(x[i].x - x[j].x), dy = wrap(x[i].y - x[j].y), dz = dim == 3 ? wrap(x[i].z - x[j].z) : 0;
    const double s = r[i] + r[j];
    return dx * dx + dy * dy + dz * dz < s * s;
  };
  auto cell_of = [&](double v) { return std::min(cells - 1, int(v / cs)); };
  for (std::size_t i = 0; i < n; ++i) {
    bool ok = false;
    for (int attempt = 0; attempt < 100000 && !ok; ++attempt) {
      x[i] = Vec3{real(u(rng)), real(u(rng)), dim == 3 ? real(u(rng)) : real(0)};
      ok = true;
      for (std::int32_t j : big)
        if (clash(i, j)) { ok = false; break; }
      if (!ok) continue;
      const int reach = int(std::ceil((r[i] + split) / cs));
      const int sx = std::min(2 * reach + 1, cells), sz = dim == 3 ? std::min(2 * reach + 1, cells) : 1;
      const int ix = cell_of(x[i].x), iy = cell_of(x[i].y), iz = dim == 3 ? cell_of(x[i].z) : 0;
      for (int a = 0; a < sx && ok; ++a)
        for (int b = 0; b < sx && ok; ++b)
          for (int c = 0; c < sz && ok; ++c) {
            const int gx = ((ix - reach + a) % cells + cells) % cells, gy = ((iy - reach + b) % cells + cells) % cells;
            const int gz = dim == 3 ? ((iz - reach + c) % cells + cells) % cells : 0;
            for (std::int32_t j : grid[(std::size_t(gz) * cells + gy) * cells + gx])
              if (clash(i, j)) { ok = false; break; }
          }
    }
    if (!ok) throw std::runtime_error("could not place sphere " + std::to_string(i) + " (radius " + std::to_string(r[i]) + ")");
    if (r[i] > split) big.push_back(std::int32_t(i));
    else grid[(std::size_t(dim == 3 ? cell_of(x[i].z) : 0) * cells + cell_of(x[i].y)) * cells + cell_of(x[i].x)].push_back(std::int32_t(i));
  }
  return x;
}

struct Result {
  double step_s = 0, broad_s = 0, contacts = 0;
  std::uint64_t builds = 0;
};

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const double r_min = 0.001, v0 = 0.5;
  std::mt19937_64 rng(2014);
  std::vector<double> r = test::power_law_radii(rng, o.n, r_min, o.omega, o.alpha);
  std::sort(r.begin(), r.end(), std::greater<>());
  double solid = 0;
  for (double q : r) solid += o.dim == 3 ? 4.0 / 3.0 * M_PI * q * q * q : M_PI * q * q;
  const double side = o.dim == 3 ? std::cbrt(solid / o.nu) : std::sqrt(solid / o.nu);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Vec3> x = place(rng, r, side, o.dim);
  std::fprintf(stderr, "placed %d spheres (r %.3g to %.3g mm) in a periodic %s of side %.4g m in %.1f s\n", o.n,
               1e3 * r.back(), 1e3 * r.front(), o.dim == 3 ? "cube" : "square", side,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  std::normal_distribution<double> g(0, 1);
  std::vector<Vec3> v(o.n);
  for (Vec3& q : v) {
    Vec3 d{real(g(rng)), real(g(rng)), o.dim == 3 ? real(g(rng)) : real(0)};
    q = real(v0) / norm(d) * d;
  }
  // Glass-like spheres, e = 0.9; dt a fifth of the smallest spheres' Rayleigh time.
  char yaml[1024];
  std::snprintf(yaml, sizeof yaml, R"(
name: cooling
simulation: {dt: 2.0e-6, end_time: 1, gravity: [0, 0, 0]}
domain: {min: [0, 0, %g], max: [%g, %g, %g], periodic: [%s]}
materials:
  - {name: glass, density: 2500, youngs_modulus: 5e8, poisson_ratio: 0.25}
interactions:
  - {materials: [glass, glass], friction: 0.3, restitution: 0.9, rolling_friction: 0.01}
)",
                o.dim == 3 ? 0.0 : -r.front() * 1.5, side, side, o.dim == 3 ? side : r.front() * 1.5, o.dim == 3 ? "x, y, z" : "x, y");
  const SceneConfig base = load_scene_from_string(yaml, "cooling.yaml");
  const double cell_paper[5] = {4.0, 7.9, 15.1, 27.2, 40};
  struct Method {
    std::string name;
    BroadPhaseSpec spec;
  };
  std::vector<Method> methods{{"grid", {BroadPhaseMethod::Grid, 0, {}}},
                              {"bsp", {BroadPhaseMethod::Bsp, 0, {}}},
                              {"hgrid-L1", {BroadPhaseMethod::HGrid, 1, {}}},
                              {"hgrid-L2", {BroadPhaseMethod::HGrid, 2, {}}},
                              {"hgrid-L3", {BroadPhaseMethod::HGrid, 3, {}}},
                              {"hgrid-chosen", {BroadPhaseMethod::HGrid, 0, {}}},
                              {"auto", {BroadPhaseMethod::Auto, 0, {}}}};
  if (o.dim == 2) {
    BroadPhaseSpec paper{BroadPhaseMethod::HGrid, 5, {}};
    for (double c : cell_paper) paper.cell_sizes.push_back(c * r_min * o.omega / 20);  // scaled to the widest
    methods.push_back({"hgrid-paper5", paper});
  }
  std::ofstream csv;
  if (!o.csv.empty()) {  // appended to: one file for a sweep of several runs
    const bool fresh = !std::ifstream(o.csv).good();
    csv.open(o.csv, std::ios::app);
    if (fresh) csv << "dim,n,omega,alpha,nu,detection,method,levels,ms_per_step,broad_ms_per_step,ns_per_particle_step,builds,contacts_per_particle\n";
  }
  std::printf("# %dD gas: %d spheres, omega %g, alpha %g, nu %g, %d threads, %d steps after %d\n", o.dim, o.n, o.omega,
              o.alpha, o.nu, omp_get_max_threads(), o.steps, o.warmup);
  for (const char* detection : {"every", "adaptive"}) {
    if (!o.only.empty() && o.only != detection) continue;
    const bool every = std::string(detection) == "every";
    std::printf("\n## detection: %s\n\n| method | levels (cell sizes, r_min) | ms/step | broad phase ms/step | ns per particle-step | rebuilds | contacts/particle |\n|---|---|---|---|---|---|---|\n",
                every ? "every step (skin 0), as the paper's code" : "adaptive skins (the default)");
    double ref_step = 0, ref_broad = 0;
    for (const Method& m : methods) {
      SceneConfig scene = base;
      scene.broad_phase = m.spec;
      scene.simulation.skin = every ? 0 : -1;
      scene.simulation.neighbour_interval = every ? 1 : 0;
      scene.particles.resize(o.n);
      for (int i = 0; i < o.n; ++i) {
        ParticleSpec& p = scene.particles[i];
        p.position = {x[i].x, x[i].y, x[i].z};
        p.velocity = {v[i].x, v[i].y, v[i].z};
        p.radius = r[i];
        p.material = "glass";
      }
      BuiltScene built = build_scene(scene);
      Engine& e = *built.engine;
      for (int s = 0; s < o.warmup; ++s) e.step();
      const PhaseTimes before = e.phase_times();
      const ContactStats stats0 = e.stats();
      const auto w0 = std::chrono::steady_clock::now();
      for (int s = 0; s < o.steps; ++s) e.step();
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      if (!e.status().ok) throw std::runtime_error(m.name + ": " + e.status().message);
      double max_z = 0;
      for (const Vec3& q : e.particles().v) max_z = std::max(max_z, double(std::abs(q.z)));
      if (o.dim == 2 && max_z != 0) throw std::runtime_error("the 2D gas left its plane: |v_z| = " + std::to_string(max_z));
      Result res;
      res.step_s = wall / o.steps;
      res.broad_s = (e.phase_times().broad_phase - before.broad_phase) / o.steps;
      res.builds = e.stats().broad_phase_builds - stats0.broad_phase_builds;
      res.contacts = 2.0 * double(e.stats().pair_contacts - stats0.pair_contacts) / (double(o.n) * o.steps);
      const BroadPhaseReport rep = e.broad_phase_report();
      std::string sizes;
      for (double c : rep.cell_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(c / r_min).substr(0, 5);
      const int levels = rep.method == "hgrid" ? int(rep.cell_sizes.size()) : 1;
      const std::string label = m.name == "auto" ? "auto (" + rep.method + ")" : m.name;
      if (m.name == "hgrid-L1") ref_step = res.step_s, ref_broad = res.broad_s;
      std::printf("| %s | %d (%s) | %.3f | %.3f | %.0f | %llu | %.2f |\n", label.c_str(), levels,
                  rep.method == "hgrid" ? sizes.c_str() : "uniform", 1e3 * res.step_s, 1e3 * res.broad_s,
                  1e9 * res.step_s / o.n, static_cast<unsigned long long>(res.builds), res.contacts);
      std::fflush(stdout);
      if (csv.is_open())
        csv << o.dim << ',' << o.n << ',' << o.omega << ',' << o.alpha << ',' << o.nu << ',' << detection << ',' << label
            << ',' << levels << ',' << 1e3 * res.step_s << ',' << 1e3 * res.broad_s << ',' << 1e9 * res.step_s / o.n << ','
            << res.builds << ',' << res.contacts << '\n';
      if (m.name.rfind("hgrid-", 0) == 0 && m.name != "hgrid-L1" && ref_step > 0)
        std::printf("|   speed-up over one level | | whole step %.2f | broad phase %.2f | | | |\n", ref_step / res.step_s,
                    ref_broad / res.broad_s);
    }
  }
  return 0;
} catch (const std::exception& ex) {
  std::fprintf(stderr, "dem_cooling_bench: %s\n", ex.what());
  return 1;
}
