// Micro-benchmarks of each phase of a step, on the host (Google Benchmark). Inputs are built here,
// so the figures do not depend on scene files: a random dense sphere packing, and a drum mantle of
// 1600 quads with spheres resting against it.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/contact/contact_law.hpp"
#include "core/dhm/h2_filter.hpp"
#include "core/engine/phases.hpp"
#include "core/integrate/central_difference.hpp"
#include "host/omp/broad_phase.hpp"
#include "host/omp/engine.hpp"
#include "cuda/device_engine.hpp"
#include "host/app/driver.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace {

using namespace dem;
using namespace dem::host;

struct Packing {
  std::vector<Vec3> x;
  std::vector<real> r;
};

// N spheres of radius 3.5 mm +- 10 % at ~45 % solid fraction on a jittered cubic lattice, with
// overlaps of ~1 % of the radius (a settled bed's contact density).
Packing packing(std::int64_t n) {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  Packing p;
  const int side = static_cast<int>(std::ceil(std::cbrt(double(n))));
  const double a = 0.00693;  // lattice constant: 2 r minus 1 % overlap
  for (std::int64_t i = 0; i < n; ++i) {
    const int ix = i % side, iy = (i / side) % side, iz = i / (side * side);
    p.x.push_back(Vec3{a * ix + 1e-5 * u(rng), a * iy + 1e-5 * u(rng), a * iz + 1e-5 * u(rng)});
    p.r.push_back(0.0035 * (1 + 0.01 * u(rng)));
  }
  return p;
}

// Search radii: each radius plus a half skin of 0.45 mm.
std::vector<real> reach_of(const Packing& p) {
  std::vector<real> reach(p.r);
  for (real& r : reach) r += 0.00045;
  return reach;
}

void BM_CellBuildAndPairs(benchmark::State& state) {
  const Packing p = packing(state.range(0));
  const std::vector<real> reach = reach_of(p);
  UniformGridBroadPhase bp;
  std::vector<std::int32_t> a, b;
  for (auto _ : state) {
    bp.build(p.x, reach);
    bp.find_pairs(p.x, reach, a, b);
    benchmark::DoNotOptimize(a.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["pairs_per_particle"] = double(a.size()) / double(state.range(0));
}
BENCHMARK(BM_CellBuildAndPairs)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_SphereSphereContacts(benchmark::State& state) {
  const Packing p = packing(state.range(0));
  const std::vector<real> reach = reach_of(p);
  UniformGridBroadPhase bp;
  std::vector<std::int32_t> a, b;
  bp.build(p.x, reach);
  bp.find_pairs(p.x, reach, a, b);
  const ContactParams params = mix_contact_params(Material{1000, 1e7, 0.2}, Material{1000, 1e7, 0.2},
                                                  InteractionParams{0.5, 0.4, 0.001});
  std::vector<ContactHistory> history(a.size(), ContactHistory{{0, 0, 0}, {0, 0, 0}});
  std::vector<ContactResult> out(a.size());
  const real m = sphere_mass(1000, 0.0035), inv_i = 1 / sphere_inertia(m, 0.0035);
  for (auto _ : state) {
    for (std::size_t k = 0; k < a.size(); ++k) {
      const ContactGeometry g = sphere_sphere(p.x[a[k]], p.r[a[k]], p.x[b[k]], p.r[b[k]]);
      const BodyKinematics ka{p.x[a[k]], {0.01, 0, 0}, {0, 1, 0}, 1 / p.r[a[k]], 1 / m, inv_i};
      const BodyKinematics kb{p.x[b[k]], {0, 0, 0}, {0, 0, 0}, 1 / p.r[b[k]], 1 / m, inv_i};
      out[k] = evaluate_contact(params, g, ka, kb, history[k], 5e-5);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(a.size()));
}
BENCHMARK(BM_SphereSphereContacts)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

// A drum mantle (axis x, R = 0.15 m, 40 x 40 quads) and spheres resting on its lower half.
struct DrumCase {
  MeshSet mesh;
  std::vector<Vec3> x;
  real r = 0.0035;
};
DrumCase drum_case(int particles) {
  DrumCase c;
  const int na = 40, nl = 40;
  const double radius = 0.15, length = 0.4;
  for (int j = 0; j <= nl; ++j)
    for (int i = 0; i < na; ++i) {
      const double phi = 2 * M_PI * i / na;
      c.mesh.ref_vertices.push_back(Vec3{-length / 2 + length * j / nl, radius * std::cos(phi), radius * std::sin(phi)});
    }
  for (int j = 0; j < nl; ++j)
    for (int i = 0; i < na; ++i) {
      const index_t v0 = j * na + i, v1 = j * na + (i + 1) % na;
      for (index_t v : {v0, v1, v1 + na, v0 + na}) c.mesh.elem_vertices.push_back(v);
      c.mesh.elem_offsets.push_back(static_cast<index_t>(c.mesh.elem_vertices.size()));
      c.mesh.elem_body.push_back(0);
    }
  MeshBody body;
  body.vertex_count = static_cast<index_t>(c.mesh.ref_vertices.size());
  body.element_count = na * nl;
  c.mesh.bodies.push_back(body);
  c.mesh.vertices = c.mesh.ref_vertices;
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < particles; ++k) {  // half touching the mantle, half 1-3 diameters inside
    const double phi = M_PI * (1.1 + 0.8 * u(rng)), depth = k % 2 ? 0.0034 : 0.007 + 0.014 * u(rng);
    c.x.push_back(Vec3{-0.19 + 0.38 * u(rng), (radius - depth) * std::cos(phi), (radius - depth) * std::sin(phi)});
  }
  return c;
}

void BM_MeshBinsAndFit(benchmark::State& state) {
  const DrumCase c = drum_case(20000);
  MeshBins bins;
  std::vector<std::int32_t> cand;
  std::int64_t tests = 0, hits = 0;
  for (auto _ : state) {
    bins.build(c.mesh, Vec3{-0.2, -0.15, -0.15}, Vec3{0.2, 0.15, 0}, c.r);
    for (const Vec3& x : c.x) {
      bins.query(x, c.r, cand);
      for (std::int32_t e : cand) {
        ++tests;
        hits += fast_intersection_test(c.mesh.polygon(e), x, c.r);
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(c.x.size()));
  state.counters["fe_potential_per_particle"] = double(tests) / double(state.iterations() * c.x.size());
  state.counters["fe_contact_per_particle"] = double(hits) / double(state.iterations() * c.x.size());
}
BENCHMARK(BM_MeshBinsAndFit)->Unit(benchmark::kMillisecond);

void BM_H2(benchmark::State& state) {
  const DrumCase c = drum_case(20000);
  MeshBins bins;
  bins.build(c.mesh, Vec3{-0.2, -0.15, -0.15}, Vec3{0.2, 0.15, 0}, c.r);
  std::vector<std::vector<std::int32_t>> touching(c.x.size());
  std::vector<std::int32_t> cand;
  for (std::size_t k = 0; k < c.x.size(); ++k) {
    bins.query(c.x[k], c.r, cand);
    for (std::int32_t e : cand)
      if (fast_intersection_test(c.mesh.polygon(e), c.x[k], c.r)) touching[k].push_back(e);
  }
  H2Accumulator acc;
  std::int64_t valid = 0;
  for (auto _ : state) {
    for (std::size_t k = 0; k < c.x.size(); ++k) {
      h2_begin(acc, c.x[k]);
      for (std::int32_t e : touching[k]) contact_type_hierarchy(acc, c.mesh.polygon(e), e, c.r);
      valid += h2_finish(acc);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(c.x.size()));
  state.counters["valid_per_particle"] = double(valid) / double(state.iterations() * c.x.size());
}
BENCHMARK(BM_H2)->Unit(benchmark::kMillisecond);

void BM_ContactLaw(benchmark::State& state) {
  const ContactParams params = mix_contact_params(Material{1000, 1e7, 0.2}, Material{0, INFINITY, 0.2},
                                                  InteractionParams{0.75, 0.4, 0.001});
  const real m = sphere_mass(1000, 0.0035);
  const BodyKinematics ka{{0, 0, 0.0034}, {0.1, 0, -0.01}, {0, 2, 0}, 1 / 0.0035, 1 / m, 1 / sphere_inertia(m, 0.0035)};
  const BodyKinematics kb{{0, 0, 0}, {0, 0, 0}, {18.85, 0, 0}, 0, 0, 0};
  ContactHistory h{{0, 0, 0}, {0, 0, 0}};
  ContactGeometry g{{0, 0, 1}, {0, 0, 0}, 1e-4};
  for (auto _ : state) {
    g.overlap = 1e-4 + 1e-12 * (h.tangential.x > 0);  // keep the call from being hoisted
    benchmark::DoNotOptimize(evaluate_contact(params, g, ka, kb, h, 5e-5));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ContactLaw);

// The host's batched pair law (PairLanes in host/omp/pair_pass.cpp: default_law_pair_loads, 64 lanes in
// one loop that GCC vectorises) on contiguous inputs, against a loop of only as many divisions and
// square roots as that loop holds here (9 and 7 a lane: its vdivpd and vsqrtpd with GCC 12 for
// AVX-512; the engine's loop, on gathered inputs, holds 10 and 8), from the same inputs. Items:
// lanes (contacts). Where the two come out close, the law runs at the divider's throughput; in
// the pair pass the loop also carries the emulated gathers of the partners' fields, and fewer
// divisions there did not pay (bench/results/dev-2core-emr/inprocess_ab.md).
constexpr int kLawLanes = 64;
struct LawLanes {
  alignas(64) real xa[3][kLawLanes], va[3][kLawLanes], wa[3][kLawLanes], xb[3][kLawLanes], vb[3][kLawLanes],
      wb[3][kLawLanes], xi[3][kLawLanes], ra[kLawLanes], rb[kLawLanes], im[kLawLanes], ii[kLawLanes],
      im_b[kLawLanes], ii_b[kLawLanes];
  alignas(64) real e_star[kLawLanes], g_star[kLawLanes], zeta[kLawLanes], friction[kLawLanes],
      rolling_friction[kLawLanes];  // (per lane, as in the engine's lanes)
  alignas(64) real f[3][kLawLanes], ta[3][kLawLanes], tb[3][kLawLanes];
  alignas(64) std::int64_t touching[kLawLanes];
};
LawLanes law_lanes(const ContactParams& prm) {
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<double> u(-1, 1);
  LawLanes in{};
  const real r = 0.0035, m = sphere_mass(2500, r);
  for (int l = 0; l < kLawLanes; ++l) {
    Vec3 d{u(rng), u(rng), u(rng)};
    d = d * (2 * r * (1 - 1e-3 * (1 + u(rng))) / norm(d));  // overlaps of 0 to 0.4 % of the diameter
    const Vec3 xa{0.01 * u(rng), 0.01 * u(rng), 0.01 * u(rng)};
    for (int c = 0; c < 3; ++c) {
      in.xa[c][l] = (&xa.x)[c], in.xb[c][l] = (&xa.x)[c] - (&d.x)[c];
      in.va[c][l] = 0.01 * u(rng), in.vb[c][l] = 0.01 * u(rng), in.wa[c][l] = u(rng), in.wb[c][l] = u(rng);
      in.xi[c][l] = 1e-7 * u(rng);
    }
    in.e_star[l] = prm.e_star, in.g_star[l] = prm.g_star, in.zeta[l] = prm.zeta, in.friction[l] = prm.friction;
    in.rolling_friction[l] = prm.rolling_friction;
    in.ra[l] = in.rb[l] = r, in.im[l] = in.im_b[l] = 1 / m, in.ii[l] = in.ii_b[l] = 1 / sphere_inertia(m, r);
  }
  return in;
}
__attribute__((noipa)) void law_loop(LawLanes& s, real dt) {  // (noipa: dt not propagated)
#pragma omp simd
  for (int l = 0; l < kLawLanes; ++l) {
    const SpherePairResult r = default_law_pair_loads(
        s.e_star[l], s.g_star[l], s.zeta[l], s.friction[l], s.rolling_friction[l],
        Vec3{s.xa[0][l], s.xa[1][l], s.xa[2][l]}, Vec3{s.va[0][l], s.va[1][l], s.va[2][l]},
        Vec3{s.wa[0][l], s.wa[1][l], s.wa[2][l]}, s.ra[l], s.im[l], s.ii[l], Vec3{s.xb[0][l], s.xb[1][l], s.xb[2][l]},
        Vec3{s.vb[0][l], s.vb[1][l], s.vb[2][l]}, Vec3{s.wb[0][l], s.wb[1][l], s.wb[2][l]}, s.rb[l], s.im_b[l], s.ii_b[l],
        Vec3{s.xi[0][l], s.xi[1][l], s.xi[2][l]}, dt);
    s.touching[l] = r.touching;
    s.f[0][l] = r.load.force_on_a.x, s.f[1][l] = r.load.force_on_a.y, s.f[2][l] = r.load.force_on_a.z;
    s.ta[0][l] = r.load.torque_on_a.x, s.ta[1][l] = r.load.torque_on_a.y, s.ta[2][l] = r.load.torque_on_a.z;
    s.tb[0][l] = r.load.torque_on_b.x, s.tb[1][l] = r.load.torque_on_b.y, s.tb[2][l] = r.load.torque_on_b.z;
  }
}
__attribute__((noipa)) void divider_loop(LawLanes& s) {
#pragma omp simd
  for (int l = 0; l < kLawLanes; ++l) {
    const real q = s.xa[0][l] / s.ra[l] + s.xa[1][l] / s.rb[l] + s.xa[2][l] / s.im[l] + s.va[0][l] / s.ii[l] +
                   s.va[1][l] / s.xb[0][l] + s.va[2][l] / s.xb[1][l] + s.wa[0][l] / s.xb[2][l] +
                   s.wa[1][l] / s.vb[0][l] + s.wa[2][l] / s.vb[1][l];
    const real root = std::sqrt(s.ra[l]) + std::sqrt(s.rb[l]) + std::sqrt(s.im[l]) + std::sqrt(s.ii[l]) +
                      std::sqrt(s.wb[0][l] * s.wb[0][l]) + std::sqrt(s.wb[1][l] * s.wb[1][l]) +
                      std::sqrt(s.wb[2][l] * s.wb[2][l]);
    s.f[0][l] = q + root;
  }
}
ContactParams lanes_params() {
  return mix_contact_params(Material{2500, 1e8, 0.25}, Material{2500, 1e8, 0.25}, InteractionParams{0.5, 0.5, 0.05});
}
void BM_PairLanesLaw(benchmark::State& state) {
  LawLanes s = law_lanes(lanes_params());
  for (auto _ : state) {
    law_loop(s, 1e-6);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kLawLanes);
}
BENCHMARK(BM_PairLanesLaw);
void BM_PairLanesDividerFloor(benchmark::State& state) {
  LawLanes s = law_lanes(lanes_params());
  for (auto _ : state) {
    divider_loop(s);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kLawLanes);
}
BENCHMARK(BM_PairLanesDividerFloor);

void BM_Integrate(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  std::vector<ParticleMotion> m(n, ParticleMotion{{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, quat_identity()});
  const Vec3 f{0, 0, 1e-3}, t{1e-7, 0, 0};
  for (auto _ : state) {
    for (auto& s : m) central_difference_step(s, f, t, 1000, 1e6, Vec3{0, 0, -9.81}, false, 5e-5);
    benchmark::DoNotOptimize(m.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_Integrate)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace

// Whole steps of the README demo (2,000 beads in a drum with a turning blade) on each engine: the
// host engine, the device engine on Thrust's OpenMP system (a correctness tool on the CPU, not a
// performance reference), and the device engine on CUDA where a device is present.
void BM_DemoStep(benchmark::State& state, const char* device) {
  std::string why;
  if (std::string(device) == "gpu" && !dem::device::available(dem::device::System::Cuda, &why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  std::unique_ptr<Simulation> sim =
      make_simulation(device, build_scene_inputs(load_scene(std::string(DEM_SOURCE_DIR) + "/scenes/demo/demo.yaml")));
  for (int s = 0; s < 500; ++s) sim->step();  // the beads start falling
  for (auto _ : state) sim->step();
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(sim->particles().size()));
}
BENCHMARK_CAPTURE(BM_DemoStep, host, "cpu")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DemoStep, device_omp, "omp")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DemoStep, device_cuda, "gpu")->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
