// End-to-end benchmark: one scene, one device, a list of particle counts. For each N it builds the
// scene (with --set overrides and the fill count set to N), optionally settles it, runs warm-up
// steps, then times a window of steps and reports particle-steps per second, time per phase,
// contacts per particle and peak memory, as a table on stdout and rows of a CSV file.
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <limits>
#include <stdexcept>
#include <algorithm>
#include <array>
#include <vector>
#include <unordered_map>
#include <iostream>
#include <omp.h>

#include "cuda/device_engine.hpp"
#include "host/app/driver.hpp"
#include "host/app/mpi_ranks.hpp"
#include "bench/ab_switch.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/sim/errors.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace {

// The particle state as a LIGGGHTS/LAMMPS data file (LIGGGHTS atom_style granular, LAMMPS
// atom_style sphere: id type diameter density x y z, then velocities and angular velocities), so
// that a peer run starts from exactly this state. The box is the meshes' and particles' with a
// margin, except along periodic axes, where it is the period itself.
void write_peer_data(const std::string& path, const dem::host::Simulation& e, const dem::host::SceneConfig& scene) {
  const dem::host::ParticleArrays& p = e.particles();
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (const dem::Vec3& v : e.meshes().vertices) {
    const double c[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], c[k]), hi[k] = std::max(hi[k], c[k]);
  }
  for (const dem::Vec3& v : p.x) {
    const double c[3] = {v.x, v.y, v.z};
    for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], c[k]), hi[k] = std::max(hi[k], c[k]);
  }
  f << std::setprecision(17) << "LIGGGHTS/LAMMPS data file written by dem_run_bench (" << scene.name
    << ", t = " << e.time() << " s)\n\n" << p.size() << " atoms\n2 atom types\n\n";
  const char* axis[3] = {"x", "y", "z"};
  for (int k = 0; k < 3; ++k) {
    if (scene.domain.periodic[k]) f << scene.domain.min[k] << ' ' << scene.domain.max[k];
    else f << lo[k] - 0.01 << ' ' << hi[k] + 0.01;
    f << ' ' << axis[k] << "lo " << axis[k] << "hi\n";
  }
  f << "\nAtoms\n\n";
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double density = 1.0 / (p.inv_mass[i] * 4.0 / 3.0 * M_PI * p.radius[i] * p.radius[i] * p.radius[i]);
    f << p.id[i] + 1 << " 1 " << 2 * p.radius[i] << ' ' << density << ' ' << p.x[i].x << ' ' << p.x[i].y << ' ' << p.x[i].z << '\n';
  }
  f << "\nVelocities\n\n";
  for (std::size_t i = 0; i < p.size(); ++i)
    f << p.id[i] + 1 << ' ' << p.v[i].x << ' ' << p.v[i].y << ' ' << p.v[i].z << ' ' << p.w[i].x << ' ' << p.w[i].y << ' '
      << p.w[i].z << '\n';
}

// The state of a scene of polyhedra as plain text for the polyhedra peers
// (bench/peers/polyhedra/peer_inputs.py reads it): a header line, then per particle one line
//   id mass size x y z vx vy vz wx wy wz num_vertices num_faces
// followed by its vertices (offsets from the centroid, world frame) one a line and its faces
// (outward loops of vertex indices) one a line. Spheres are refused: the peers run polyhedra only.
void write_polyhedra_state(const std::string& path, const dem::host::Simulation& e) {
  const dem::host::ParticleArrays& p = e.particles();
  const std::vector<dem::PolyShape>& shapes = e.shapes();
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << std::setprecision(17) << "dem polyhedra state t " << e.time() << " particles " << p.size() << '\n';
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.shape[i] < 0)
      throw dem::host::InputError("--write-polyhedra-state: particle " + std::to_string(p.id[i]) + " is a sphere");
    const dem::PolyShape& s = shapes[static_cast<std::size_t>(p.shape[i])];
    const double size = p.radius[i] / s.bounding_radius;
    f << p.id[i] << ' ' << 1 / p.inv_mass[i] << ' ' << size << ' ' << p.x[i].x << ' ' << p.x[i].y << ' ' << p.x[i].z
      << ' ' << p.v[i].x << ' ' << p.v[i].y << ' ' << p.v[i].z << ' ' << p.w[i].x << ' ' << p.w[i].y << ' ' << p.w[i].z
      << ' ' << s.num_vertices << ' ' << s.num_faces << '\n';
    for (int k = 0; k < s.num_vertices; ++k) {
      const dem::Vec3 v = size * dem::rotate(p.q[i], s.vertex[k]);
      f << v.x << ' ' << v.y << ' ' << v.z << '\n';
    }
    for (int fc = 0; fc < s.num_faces; ++fc) {
      for (int k = s.face_start[fc]; k < s.face_start[fc + 1]; ++k) f << (k > s.face_start[fc] ? " " : "") << int(s.face_vertex[k]);
      f << '\n';
    }
  }
  if (!f.flush()) throw std::runtime_error("cannot write " + path);
}

// --tile K: the state of `src` repeated K times along each periodic axis of the scene, as a new
// simulation K (or K^2, K^3) times larger with the same physics, the same contacts and their
// histories: a settled bed of any size without settling it (for cost per particle-step against N).
// The meshes must span the period on those axes (a floor under a bed): they are stretched with it.
// hashes: the repeated state's physics (its period and stretched meshes), for its checkpoint.
std::unique_ptr<dem::host::Simulation> tile_state(const dem::host::SceneConfig& scene, const std::string& device,
                                                  const dem::host::BroadPhaseSpec& broad_phase,
                                                  const dem::host::Simulation& src, int k, std::uint64_t& params_hash,
                                                  std::uint64_t& meshes_hash) {
  using namespace dem::host;
  for (const MeshBody& b : src.meshes().bodies)  // a moving body would not stretch with the period
    if (dem::body_speed_bound(b) > 0 || dem::norm(dem::body_spin_bound(b)) > 0)
      throw InputError("--tile: mesh body " + b.name + " moves; only states with meshes at rest can be repeated");
  SceneInputs in = build_scene_inputs(scene, false);
  in.settings.broad_phase = broad_phase;
  const dem::PeriodicBox pb = in.settings.periodic;
  if (!pb.any()) throw InputError("--tile: " + scene.source + " has no periodic axis to repeat the state along");
  const double lo[3] = {pb.lo.x, pb.lo.y, pb.lo.z}, len[3] = {pb.length.x, pb.length.y, pb.length.z};
  for (std::vector<dem::Vec3>* vs : {&in.meshes.ref_vertices, &in.meshes.vertices})
    for (dem::Vec3& v : *vs) {
      double* c[3] = {&v.x, &v.y, &v.z};
      for (int a = 0; a < 3; ++a) {
        if (len[a] == 0) continue;
        const double f = (*c[a] - lo[a]) / len[a];
        if (std::abs(f) > 1e-9 && std::abs(f - 1) > 1e-9)
          throw InputError("--tile: a mesh vertex of " + scene.source +
                           " lies inside the period; only meshes that span it (a floor under a bed) can be repeated");
        *c[a] = lo[a] + (f > 0.5 ? k * len[a] : 0.0);
      }
    }
  const dem::Vec3 hi{pb.lo.x + k * pb.length.x, pb.lo.y + k * pb.length.y, pb.lo.z + k * pb.length.z};
  in.settings.periodic = dem::make_periodic_box(pb.lo, hi, len[0] > 0, len[1] > 0, len[2] > 0);
  ParticleArrays p;
  ContactState c;
  src.export_state(p, c);
  if (c.forces_current) throw std::runtime_error("--tile: the state's forces are current (run a step first)");
  const std::size_t n = p.size();
  std::int64_t stride = 0;
  for (std::int64_t id : p.id) stride = std::max(stride, id + 1);
  std::unordered_map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index[p.id[i]] = i;
  ParticleArrays t;
  ContactState tc;
  const int kx = len[0] > 0 ? k : 1, ky = len[1] > 0 ? k : 1, kz = len[2] > 0 ? k : 1;
  std::int64_t tile = 0;
  for (int ix = 0; ix < kx; ++ix)
    for (int iy = 0; iy < ky; ++iy)
      for (int iz = 0; iz < kz; ++iz, ++tile) {
#define DEM_TILE_FIELD(T, name) t.name.insert(t.name.end(), p.name.begin(), p.name.end());
        DEM_PARTICLE_FIELDS(DEM_TILE_FIELD)
#undef DEM_TILE_FIELD
        const dem::Vec3 shift{ix * pb.length.x, iy * pb.length.y, iz * pb.length.z};
        for (std::size_t i = t.size() - n; i < t.size(); ++i) {
          t.id[i] += tile * stride;
          t.x[i] += shift;
        }
        // A pair across a periodic face joins a particle to its partner's image: in the repeated
        // state that image is the partner's copy in the neighbouring tile.
        for (std::size_t q = 0; q < c.pair_a.size(); ++q) {
          const dem::Vec3 d = p.x[index.at(c.pair_b[q])] - p.x[index.at(c.pair_a[q])];
          const double dc[3] = {d.x, d.y, d.z};
          int at[3] = {ix, iy, iz};
          const int count[3] = {kx, ky, kz};
          for (int a = 0; a < 3; ++a)
            if (len[a] > 0 && std::abs(dc[a]) > 0.5 * len[a]) at[a] = (at[a] + (dc[a] > 0 ? -1 : 1) + count[a]) % count[a];
          const std::int64_t tile_b = (static_cast<std::int64_t>(at[0]) * ky + at[1]) * kz + at[2];
          const std::int64_t ida = c.pair_a[q] + tile * stride, idb = c.pair_b[q] + tile_b * stride;
          tc.pair_a.push_back(std::min(ida, idb));
          tc.pair_b.push_back(std::max(ida, idb));
          tc.pair_history.push_back(c.pair_history[q]);
        }
        tc.mesh_count.insert(tc.mesh_count.end(), c.mesh_count.begin(), c.mesh_count.end());
        tc.mesh_entity.insert(tc.mesh_entity.end(), c.mesh_entity.begin(), c.mesh_entity.end());
        tc.mesh_normal.insert(tc.mesh_normal.end(), c.mesh_normal.begin(), c.mesh_normal.end());
        tc.mesh_history.insert(tc.mesh_history.end(), c.mesh_history.begin(), c.mesh_history.end());
      }
  in.particles = std::move(t);
  params_hash = hash_contact_params(in.params, in.settings);
  meshes_hash = hash_meshes(in.meshes);
  std::unique_ptr<Simulation> sim = make_simulation(device, std::move(in));
  sim->restore_state(tc, src.step_count());
  return sim;
}

// Resident memory now (MB): what the state holds after the window, without the peaks of setting
// it up (a --tile run builds the large state from copies of the small one).
double rss_now_mb() {
  std::ifstream statm("/proc/self/statm");
  double pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // Linux: KiB
}

// The median of a non-empty list.
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size();
  return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

// The in-process A/B (--ab-block): whole pairs of whole blocks only (the steps after them are left out),
// each side's totals, and the median over the pairs of blocks (0,1), (2,3), ... of the ratio
// variant 1 / variant 0 in particle-steps/s and per phase (old / new seconds: above 1, faster).
void print_ab(const std::vector<double>& wall, const std::vector<std::array<double, 6>>& phases, int block, double np) {
  const std::size_t pairs = wall.size() / 2;
  if (pairs == 0) return;
  double sum[2] = {0, 0};
  std::array<double, 6> ph[2] = {};
  std::vector<double> ratio;
  std::array<std::vector<double>, 6> phase_ratio;
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::size_t b0 = 2 * p + p % 2, b1 = 2 * p + 1 - p % 2;  // variant 0's and 1's block (ABBA)
    for (int v = 0; v < 2; ++v) {
      const std::size_t b = v == 0 ? b0 : b1;
      sum[v] += wall[b];
      for (int c = 0; c < 6; ++c) ph[v][c] += phases[b][c];
    }
    ratio.push_back(wall[b0] / wall[b1]);
    for (int c = 0; c < 6; ++c)
      if (phases[b1][c] > 0) phase_ratio[c].push_back(phases[b0][c] / phases[b1][c]);
  }
  const double steps = double(pairs) * block;
  std::printf("A/B in this run, %zu pairs of %d-step blocks: variant 0 %.4g, variant 1 %.4g p-steps/s; variant 1 / 0: "
              "%.3f in total, median of pairs %.3f (pairs from %.3f to %.3f)\n",
              pairs, block, np * steps / sum[0], np * steps / sum[1], sum[0] / sum[1], median(ratio),
              *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()));
  const char* names[6] = {"broad", "pairs", "bins", "mesh", "gat+in", "motion"};
  for (int c = 0; c < 6; ++c)
    if (!phase_ratio[c].empty())
      std::printf("  %-7s variant 0 %.4f s, variant 1 %.4f s; speed-up of variant 1: %.3f in total, median %.3f\n",
                  names[c], ph[0][c], ph[1][c], ph[1][c] > 0 ? ph[0][c] / ph[1][c] : 0.0, median(phase_ratio[c]));
}

// --size-ab: the large state's cost per particle-step over the small one's, from the pairs of
// blocks (each pair of the same particle-steps, seconds apart), in total and as the median.
// The neighbour-list rebuilds (the broad phase's time) are also left out in a second figure: the
// large state's window spans fewer steps of the trajectory than the small one's blocks, so it may
// hold fewer rebuilds (or more) than as many steps of the small one.
void print_size_ab(const std::vector<double>& large, const std::vector<double>& small,
                   const std::vector<double>& large_broad, const std::vector<double>& small_broad, double large_ps,
                   double small_ps, double n_large, double n_small) {
  const std::size_t pairs = std::min(large.size(), small.size());
  if (pairs == 0) return;
  std::vector<double> ratio;
  double sum_large = 0, sum_small = 0, broad_large = 0, broad_small = 0;
  for (std::size_t b = 0; b < pairs; ++b) {
    sum_large += large[b];
    sum_small += small[b];
    broad_large += large_broad[b];
    broad_small += small_broad[b];
    ratio.push_back((large[b] / large_ps) / (small[b] / small_ps));
  }
  const double threads = omp_get_max_threads();
  std::printf("size A/B in this run, %zu pairs of blocks: %.0f particles %.4g p-steps/s (%.1f ns/p-step/core), "
              "%.0f particles %.4g p-steps/s (%.1f ns/p-step/core); cost per particle-step of the large over the "
              "small: %.3f in total, median of pairs %.3f (pairs from %.3f to %.3f)\n",
              pairs, n_small, small_ps * pairs / sum_small, 1e9 * threads * sum_small / (small_ps * pairs), n_large,
              large_ps * pairs / sum_large, 1e9 * threads * sum_large / (large_ps * pairs),
              (sum_large / large_ps) / (sum_small / small_ps), median(ratio),
              *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()));
  std::printf("size A/B without the neighbour-list rebuilds: %.1f and %.1f ns/p-step/core (the rebuilds %.1f and %.1f), "
              "%.3f in total\n",
              1e9 * threads * (sum_small - broad_small) / (small_ps * pairs),
              1e9 * threads * (sum_large - broad_large) / (large_ps * pairs),
              1e9 * threads * broad_small / (small_ps * pairs), 1e9 * threads * broad_large / (large_ps * pairs),
              ((sum_large - broad_large) / large_ps) / ((sum_small - broad_small) / small_ps));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dem::host;
  CLI::App app{"dem_run_bench: end-to-end throughput of one scene for a list of particle counts"};
  std::string scene_path, csv_path, machine = "unnamed", count_key = "fills.0.count", device = "cpu";
  std::vector<long long> counts;
  std::vector<std::string> overrides;
  int steps = 200, warmup = 20, threads = 0, tile = 1, ab_block = 0, size_ab = 0, calls_of = 0, run_ahead = -1;
  double settle = 0;
  std::string peer_data, polyhedra_state, torque_body, save_state, from_state;
  app.add_option("--scene", scene_path, "scene file")->required();
  app.add_option("--n", counts, "particle counts (comma separated); each sets --count-key")->delimiter(',');
  app.add_option("--count-key", count_key, "scene key that sets the particle count");
  app.add_option("--steps", steps, "timed steps per N");
  app.add_option("--warmup", warmup, "untimed steps before the window");
  app.add_option("--settle", settle, "simulated seconds to run before the warm-up (untimed)");
  app.add_option("--threads", threads, "OpenMP threads (default: all cores)");
  app.add_option("--set", overrides, "scene override key=value (repeatable)")->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--write-peer-data,--write-liggghts-data", peer_data,
                 "write the state at the start of the timed window as a LIGGGHTS/LAMMPS data file (one N only)");
  app.add_option("--tile", tile,
                 "repeat the state (after --from-state/--settle/--warmup) this many times along each periodic axis "
                 "before the timed window (a larger system of the same physics, contacts and histories)");
  app.add_option("--write-polyhedra-state", polyhedra_state,
                 "write the polyhedra's state (after --from-state/--settle/--warmup) for bench/peers/polyhedra (one N only)");
  app.add_option("--save-state", save_state, "write a checkpoint of the state at the start of the timed window (one N only; with --tile, the repeated state)");
  app.add_option("--from-state", from_state,
                 "start from this checkpoint (of the same scene and N) instead of the scene's fills; --settle then runs on from it");
  app.add_option("--torque-body", torque_body, "report the mean torque on this mesh body over the timed window");
  app.add_option("--ab-block", ab_block,
                 "an A/B inside this run: the experiment switch (bench/ab_switch.hpp) alternates between 0 "
                 "and 1 every this many steps of the window; each side's particle-steps/s and phase seconds, and the "
                 "median of the ratios of neighbouring blocks, are printed after the table");
  app.add_option("--size-ab", size_ab,
                 "with --tile K: the untiled state kept beside the tiled one and stepped in between, the window "
                 "split into this many blocks of the tiled state, each followed or preceded (in turn) by as many "
                 "particle-steps of the untiled one (both first take one untimed step: the tiled state's first build of "
                 "its lists); P even, so that each state follows the other in half its blocks; the "
                 "cost per particle-step of the large state over the small one is printed, in total and as the "
                 "median of the pairs of blocks (the machine's drift cancels)");
  app.add_option("--csv", csv_path, "append rows to this CSV file (header written if new)");
  app.add_option("--machine", machine, "machine label written into the CSV");
  app.add_option("--device", device, "cpu (host engine), gpu (device engine on CUDA), omp (device engine on Thrust's OpenMP system)")
      ->check(CLI::IsMember({"cpu", "gpu", "omp"}));
  std::string device_order = "rows";
  app.add_option("--device-order", device_order,
                 "the device engine's particle order on its uniform grid: rows of cells (default) or the cells' Hilbert "
                 "curve (EngineSettings' BroadPhaseSpec::device_curve_order; the same bits)")
      ->check(CLI::IsMember({"rows", "curve"}));
  app.add_option("--calls-of", calls_of,
                 "take the window's steps as `dem run` does: Simulation::advance in calls of this many steps, each step "
                 "health-checked (limits wide open); 0 (default): step() alone, one at a time");
  app.add_option("--run-ahead", run_ahead,
                 "the device engine's EngineSettings::run_ahead: steps queued past the last one seen decided, under "
                 "--calls-of (0: a wait every step; default: the engine's)");
  CLI11_PARSE(app, argc, argv);
  if (calls_of < 0 || (calls_of > 0 && (ab_block > 0 || size_ab > 0 || !torque_body.empty()))) {
    std::cerr << "dem_run_bench: --calls-of " << calls_of << ": must be at least 0, and takes no --ab-block, --size-ab or --torque-body\n";
    return 2;
  }
  if (tile < 1) {
    std::cerr << "dem_run_bench: --tile " << tile << ": must be at least 1\n";
    return 2;
  }
  if ((!save_state.empty() || !from_state.empty() || !peer_data.empty() || !polyhedra_state.empty()) &&
      counts.size() > 1) {
    std::cerr << "dem_run_bench: --save-state, --from-state, --write-peer-data and --write-polyhedra-state take one --n\n";
    return 2;
  }
  if (ab_block < 0 || (ab_block > 0 && steps < 2 * ab_block)) {
    std::cerr << "dem_run_bench: --ab-block " << ab_block << ": needs at least two blocks in --steps " << steps << "\n";
    return 2;
  }
  if (size_ab < 0 || (size_ab > 0 && (tile < 2 || size_ab % 2 != 0 || steps < size_ab || ab_block > 0))) {
    std::cerr << "dem_run_bench: --size-ab " << size_ab << ": needs --tile of at least 2, an even number of blocks, "
              << "at least one step a block in --steps " << steps << ", and no --ab-block\n";
    return 2;
  }
  if (threads > 0) omp_set_num_threads(threads);
  if (counts.empty()) counts.push_back(-1);  // the scene's own count

  // The windows, each on an engine from `make`: make_simulation, or under mpirun the engine
  // decomposed over the ranks (one engine: one --n, no --tile or --size-ab).
  const auto run_windows = [&](const EngineFactory& make) -> int {
    if (launcher_world_size() > 1 && (counts.size() > 1 || tile > 1 || size_ab > 0)) {
      std::cerr << "dem_run_bench: under mpirun the benchmark runs one engine: one --n, no --tile or --size-ab (write "
                   "a tiled state with --save-state in one process, then time it with --from-state)\n";
      return 2;
    }
    std::ofstream csv;
    if (!csv_path.empty()) {
      const bool fresh = !std::ifstream(csv_path).good();
      csv.open(csv_path, std::ios::app);
      if (!csv) {
        std::cerr << "dem_run_bench: cannot write " << csv_path << "\n";
        return 4;
      }
      if (fresh)
        csv << "machine,scene,device,threads,particles,mesh_elements,steps,wall_s,particle_steps_per_s,ms_per_step,"
               "broad_phase_s,pair_contacts_s,mesh_bins_s,mesh_contacts_s,gather_integrate_s,mesh_motion_s,"
               "pair_contacts_per_particle,mesh_contacts_per_particle,fe_potential_per_particle,peak_rss_mb\n";
    }
    std::printf("%10s %8s %10s %12s %9s | %6s %6s %6s %6s %6s %6s | %6s %6s %8s\n", "particles", "steps", "wall_s",
                "p-steps/s", "ms/step", "broad", "pairs", "bins", "mesh", "gat+in", "motion", "c/p", "m/p", "rss_MB");
    try {
      for (long long n : counts) {
        std::vector<std::string> o = overrides;
        if (n > 0) o.push_back(count_key + "=" + std::to_string(n));
        const SceneConfig scene = load_scene(scene_path, o);
        SceneInputs inputs = build_scene_inputs(scene, from_state.empty());
        inputs.settings.broad_phase.device_curve_order = device_order == "curve";
        if (run_ahead >= 0) inputs.settings.run_ahead = run_ahead;
        const dem::host::BroadPhaseSpec broad_phase = inputs.settings.broad_phase;
        Checkpoint from;
        if (!from_state.empty()) {
          from = read_checkpoint(from_state);
          check_checkpoint_fits(from_state, from, scene, inputs);
          inputs.particles = from.particles;
        }
        const std::uint64_t params_hash = hash_contact_params(inputs.params, inputs.settings);
        const std::uint64_t meshes_hash = hash_meshes(inputs.meshes);
        const double dt = inputs.settings.dt;
        const dem::Vec3 gravity = inputs.settings.gravity;
        // the card's memory in use before the engine (the CUDA context made by this first call)
        const long long card_before = device == "gpu" ? dem::device::cuda_memory_in_use() : -1;
        std::unique_ptr<Simulation> sim = make(device, std::move(inputs));
        if (!from_state.empty()) {
          restore_body_motions(*sim, from);
          sim->restore_state(from.contacts, from.step);
        }
        const auto settle_steps = static_cast<long long>(std::llround(settle / scene.simulation.dt));
        for (long long s = 0; s < settle_steps + warmup; ++s) sim->step();
        if (!sim->status().ok) throw std::runtime_error(sim->status().message);
        if (!peer_data.empty()) write_peer_data(peer_data, *sim, scene);
        if (!polyhedra_state.empty()) write_polyhedra_state(polyhedra_state, *sim);
        if (!save_state.empty() && tile == 1)
          write_checkpoint(save_state, capture_checkpoint(*sim, dt, gravity, params_hash, meshes_hash));
        std::unique_ptr<Simulation> small;  // (--size-ab: the untiled state, stepped between the blocks)
        if (tile > 1) {
          std::uint64_t tiled_params = 0, tiled_meshes = 0;
          std::unique_ptr<Simulation> large = tile_state(scene, device, broad_phase, *sim, tile, tiled_params, tiled_meshes);
          // (the repeated state; `dem run` continues it with the scene's period and floor made K times
          // wider: bench/mpi_scaling.sh writes that scene)
          if (!save_state.empty()) write_checkpoint(save_state, capture_checkpoint(*large, dt, gravity, tiled_params, tiled_meshes));
          if (size_ab > 0) small = std::move(sim);
          sim = std::move(large);
        }
        Simulation& e = *sim;
        // --size-ab: block b of the large state's window is followed (b even) or preceded (b odd) by
        // a block of the small state with as many particle-steps; the small state's time is left out
        // of the window's
        const int size_block = size_ab > 0 ? steps / size_ab : 0;
        const long long small_steps =
            small ? std::max<long long>(1, std::llround(double(size_block) * double(e.particles().size()) /
                                                        double(small->particles().size())))
                  : 0;
        std::vector<double> large_block_wall, small_block_wall, large_block_broad, small_block_broad;
        double small_wall = 0, large_broad0 = 0;
        const auto run_small = [&] {
          const double broad0 = small->phase_times().broad_phase;
          const auto t = std::chrono::steady_clock::now();
          for (long long k = 0; k < small_steps; ++k) small->step();
          const double broad1 = small->phase_times().broad_phase;  // (waits for a device engine)
          const double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
          small_block_wall.push_back(w);
          small_block_broad.push_back(broad1 - broad0);
          small_wall += w;
        };
        if (small) {  // untimed: the tiled state's first step builds all its lists (a whole new state)
          small->step();
          e.step();
        }
        auto large_block_start = std::chrono::steady_clock::now();
        std::int64_t body = -1;
        for (std::size_t b = 0; b < e.meshes().bodies.size(); ++b)
          if (e.meshes().bodies[b].name == torque_body) body = static_cast<std::int64_t>(b);
        if (!torque_body.empty() && body < 0) throw InputError("--torque-body " + torque_body + ": no mesh body of that name");
        const PhaseTimes t0 = e.phase_times();
        const dem::host::ContactStats s0 = e.stats();
        const std::uint64_t waits0 = e.host_waits(), launches0 = e.device_launches();
        dem::Vec3 torque_sum{0, 0, 0};
        // The whole window on one clock, read once the device has finished it (phase_times waits for
        // the device engine's last phases: on CUDA a step returns with its kernels still queued).
        // With --ab-block, each block's wall time and phase seconds go to its side.
        std::vector<double> block_wall;
        std::vector<std::array<double, 6>> block_phases;
        PhaseTimes tb = t0;
        auto block_start = std::chrono::steady_clock::now();
        const auto start = block_start;
        for (int s = 0; calls_of > 0 && s < steps;) {  // (--calls-of: as dem run steps, checked)
          const dem::real inf = std::numeric_limits<dem::real>::infinity();
          const dem::HealthLimits wide{inf, dem::Vec3{-inf, -inf, -inf}, dem::Vec3{inf, inf, inf}, inf};
          const Simulation::Advanced r = e.advance(static_cast<std::uint64_t>(std::min(calls_of, steps - s)), wide);
          if (!r.healthy) break;  // (status says why)
          s += static_cast<int>(r.steps);
        }
        for (int s = 0; calls_of == 0 && s < steps; ++s) {
          // ABBA: blocks 0 1 1 0 0 1 1 0 ..., so that neither side always takes the even blocks (the
          // trajectory's rebuilds fall on fixed steps: an even/odd split gave one side 11 % more
          // rebuild time on the mixer)
          if (ab_block > 0 && s % ab_block == 0) dem::bench::experiment_variant = (s / ab_block + s / ab_block / 2) % 2;
          const int size_b = size_block > 0 ? s / size_block : 0;
          if (size_block > 0 && s % size_block == 0 && size_b < size_ab) {
            if (size_b % 2 == 1) run_small();
            large_broad0 = e.phase_times().broad_phase;
            large_block_start = std::chrono::steady_clock::now();
          }
          e.step();
          if (body >= 0) torque_sum += e.body_torque()[body];
          if (size_block > 0 && (s + 1) % size_block == 0 && size_b < size_ab) {
            large_block_broad.push_back(e.phase_times().broad_phase - large_broad0);  // (waits for a device engine)
            large_block_wall.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - large_block_start).count());
            if (size_b % 2 == 0) run_small();
          }
          if (ab_block > 0 && (s + 1) % ab_block == 0) {  // (whole blocks only)
            const PhaseTimes& t = e.phase_times();
            const auto now = std::chrono::steady_clock::now();
            block_wall.push_back(std::chrono::duration<double>(now - block_start).count());
            block_phases.push_back({t.broad_phase - tb.broad_phase, t.pair_contacts - tb.pair_contacts,
                                    t.mesh_bins - tb.mesh_bins, t.mesh_contacts - tb.mesh_contacts, t.gather - tb.gather,
                                    t.mesh_motion - tb.mesh_motion});
            tb = t;
            block_start = now;
          }
        }
        dem::bench::experiment_variant = 0;
        const std::uint64_t waits = e.host_waits() - waits0;  // (before stats(), which may wait)
        const std::uint64_t launches = e.device_launches() - launches0;
        (void)e.phase_times();
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() - small_wall;
        if (!e.status().ok) {
          std::cerr << "dem_run_bench: " << e.status().message << "\n";
          return 3;
        }
        if (small && !small->status().ok) {
          std::cerr << "dem_run_bench: the untiled state (--size-ab): " << small->status().message << "\n";
          return 3;
        }
        const PhaseTimes& t1 = e.phase_times();
        const dem::host::ContactStats& s1 = e.stats();
        const double np = static_cast<double>(e.particles().size());
        const double ps = np * steps / wall;
        const double pair_cpp = 2.0 * double(s1.pair_contacts - s0.pair_contacts) / (np * steps);
        const double mesh_cpp = double(s1.valid_entities - s0.valid_entities) / (np * steps);
        const double fe_pot = double(s1.fe_potential - s0.fe_potential) / (np * steps);
        const double ph[6] = {t1.broad_phase - t0.broad_phase, t1.pair_contacts - t0.pair_contacts,
                              t1.mesh_bins - t0.mesh_bins,     t1.mesh_contacts - t0.mesh_contacts,
                              t1.gather - t0.gather,           t1.mesh_motion - t0.mesh_motion};
        std::printf("%10.0f %8d %10.3f %12.4g %9.3f | %5.1f%% %5.1f%% %5.1f%% %5.1f%% %5.1f%% %5.1f%% | %6.2f %6.3f %8.1f\n", np,
                    steps, wall, ps, 1e3 * wall / steps, 100 * ph[0] / wall, 100 * ph[1] / wall, 100 * ph[2] / wall,
                    100 * ph[3] / wall, 100 * ph[4] / wall, 100 * ph[5] / wall, pair_cpp, mesh_cpp, peak_rss_mb());
        if (ab_block > 0) print_ab(block_wall, block_phases, ab_block, np);
        if (small) print_size_ab(large_block_wall, small_block_wall, large_block_broad, small_block_broad, np * size_block,
                                 double(small->particles().size()) * double(small_steps), np,
                                 double(small->particles().size()));
        if (body >= 0)
          std::printf("mean torque on %s over the window: %.17g %.17g %.17g N m (blade angle at window start %.6f deg about its axis)\n",
                      torque_body.c_str(), torque_sum.x / steps, torque_sum.y / steps, torque_sum.z / steps,
                      std::fmod(norm(e.meshes().bodies[body].angular_velocity) * (e.time() - steps * scene.simulation.dt) * 180 / M_PI, 360.0));
        std::printf("engine %s on %s; engine state %.0f bytes per particle; resident memory after the window %.1f MB "
                    "(%.0f bytes per particle)\n",
                    e.engine_name().c_str(), e.device_name().c_str(), e.bytes_per_particle(), rss_now_mb(),
                    rss_now_mb() * 1024 * 1024 / np);
        {  // what holds the engine state: its largest buffers
          std::vector<dem::host::StateBuffer> buffers = e.state_buffers();
          std::sort(buffers.begin(), buffers.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
          std::string line;
          for (std::size_t k = 0; k < buffers.size() && k < 10; ++k) {
            char item[96];
            std::snprintf(item, sizeof item, "%s%s %.0f", k ? ", " : "", buffers[k].name.c_str(), buffers[k].bytes / np);
            line += item;
          }
          if (!line.empty()) std::printf("engine state's largest buffers, bytes per particle: %s\n", line.c_str());
        }
        if (const long long card_after = card_before >= 0 ? dem::device::cuda_memory_in_use() : -1; card_after >= 0)
          std::printf("device memory held on the card by the engines alive after the window (cudaMemGetInfo, less "
                      "before the first): %.1f MB, %.0f bytes per particle\n",
                      double(card_after - card_before) / (1024.0 * 1024.0), double(card_after - card_before) / np);
        std::printf("mean sphere-sphere contacts per particle over the window: %.6g\n", pair_cpp);
        std::printf("per particle and step: %.3g candidate pairs, %.3g Fast Intersection Tests, %.3g elements passed\n",
                    double(s1.pair_candidates - s0.pair_candidates) / (np * steps), fe_pot,
                    double(s1.fe_contact - s0.fe_contact) / (np * steps));
        std::printf("neighbour-list rebuilds in the window: %llu (every %.1f steps; %llu steps kept a list past a "
                    "particle's skin); each particle's mesh candidate list renewed every %.1f steps (%llu steps kept "
                    "them past a mesh skin)\n",
                    static_cast<unsigned long long>(s1.broad_phase_builds - s0.broad_phase_builds),
                    double(steps) / std::max<double>(1, double(s1.broad_phase_builds - s0.broad_phase_builds)),
                    static_cast<unsigned long long>(s1.lists_kept - s0.lists_kept),
                    np * steps / std::max<double>(1, double(s1.mesh_list_renewals - s0.mesh_list_renewals)),
                    static_cast<unsigned long long>(s1.mesh_lists_kept - s0.mesh_lists_kept));
        const RanksReport ranks = e.ranks_report();
        if (ranks.ranks > 1)  // (the phases above are each the slowest rank's; memory is rank 0's)
          std::printf("ranks %d: imbalance %.3f, %.3f ghosts per particle, %.0f ghost bytes per step; over the whole "
                      "run, settling included: %llu hand-overs (%.3f s on rank 0), ghost updates %.3f s on rank 0 (with its waits for the others)\n",
                      ranks.ranks, ranks.imbalance, ranks.ghost_fraction, ranks.bytes_per_step,
                      static_cast<unsigned long long>(ranks.handovers), ranks.handover_seconds, ranks.ghost_seconds);
        if (device != "cpu") {
          std::printf("host waits for the device: %.3f per step over the window (%llu)\n", double(waits) / steps,
                      static_cast<unsigned long long>(waits));
          std::printf("device algorithms launched: %.2f per step over the window (%llu)\n", double(launches) / steps,
                      static_cast<unsigned long long>(launches));
        }
        std::fflush(stdout);
        if (csv.is_open()) {
          csv << machine << ',' << scene.name << ',' << device << ',' << omp_get_max_threads() << ',' << np << ','
              << e.meshes().num_elements() << ',' << steps << ',' << wall << ',' << ps << ',' << 1e3 * wall / steps;
          for (double v : ph) csv << ',' << v;
          csv << ',' << pair_cpp << ',' << mesh_cpp << ',' << fe_pot << ',' << peak_rss_mb() << '\n';
          csv.flush();
        }
      }
    } catch (const InputError& err) {
      std::cerr << "dem_run_bench: " << err.what() << "\n";
      return 2;
    } catch (const std::exception& err) {
      std::cerr << "dem_run_bench: " << err.what() << "\n";
      return 4;
    }
    return 0;
  };
#ifdef DEM_HAVE_MPI
  if (launched_by_mpirun()) return run_on_ranks(argc, argv, threads, run_windows);
#else
  if (launcher_world_size() > 1) {
    std::cerr << "dem_run_bench: started as " << launcher_world_size()
              << " processes by mpirun, but this build has no MPI (configure with DEM_ENABLE_MPI=AUTO or ON)\n";
    return 2;
  }
#endif
  return run_windows(make_simulation);
}
