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
#include <stdexcept>
#include <iostream>
#include <omp.h>

#include "host/driver.hpp"
#include "host/scene/scene_builder.hpp"
#include "host/errors.hpp"
#include "host/scene/scene_loader.hpp"

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

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024.0;  // Linux: KiB
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dem::host;
  CLI::App app{"dem_run_bench: end-to-end throughput of one scene for a list of particle counts"};
  std::string scene_path, csv_path, machine = "unnamed", count_key = "fills.0.count", device = "cpu";
  std::vector<long long> counts;
  std::vector<std::string> overrides;
  int steps = 200, warmup = 20, threads = 0;
  double settle = 0;
  std::string peer_data, torque_body, save_state, from_state;
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
  app.add_option("--save-state", save_state, "write a checkpoint of the state at the start of the timed window (one N only)");
  app.add_option("--from-state", from_state,
                 "start from this checkpoint (of the same scene and N) instead of the scene's fills; --settle then runs on from it");
  app.add_option("--torque-body", torque_body, "report the mean torque on this mesh body over the timed window");
  app.add_option("--csv", csv_path, "append rows to this CSV file (header written if new)");
  app.add_option("--machine", machine, "machine label written into the CSV");
  app.add_option("--device", device, "cpu (host engine), gpu (device engine on CUDA), omp (device engine on Thrust's OpenMP system)")
      ->check(CLI::IsMember({"cpu", "gpu", "omp"}));
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) omp_set_num_threads(threads);
  if (counts.empty()) counts.push_back(-1);  // the scene's own count

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
      Checkpoint from;
      if (!from_state.empty()) {
        from = read_checkpoint(from_state);
        check_checkpoint_fits(from_state, from, scene, inputs);
        inputs.particles = from.particles;
      }
      const std::uint64_t params_hash = hash_contact_params(inputs.params, inputs.settings.periodic);
      const std::uint64_t meshes_hash = hash_meshes(inputs.meshes);
      const double dt = inputs.settings.dt;
      const dem::Vec3 gravity = inputs.settings.gravity;
      std::unique_ptr<Simulation> sim = make_simulation(device, std::move(inputs));
      Simulation& e = *sim;
      if (!from_state.empty()) {
        restore_body_motions(e, from);
        e.restore_state(from.contacts, from.step);
      }
      const auto settle_steps = static_cast<long long>(std::llround(settle / scene.simulation.dt));
      for (long long s = 0; s < settle_steps + warmup; ++s) e.step();
      if (!e.status().ok) throw std::runtime_error(e.status().message);
      if (!peer_data.empty()) write_peer_data(peer_data, e, scene);
      if (!save_state.empty())
        write_checkpoint(save_state, capture_checkpoint(e, dt, gravity, params_hash, meshes_hash));
      std::int64_t body = -1;
      for (std::size_t b = 0; b < e.meshes().bodies.size(); ++b)
        if (e.meshes().bodies[b].name == torque_body) body = static_cast<std::int64_t>(b);
      if (!torque_body.empty() && body < 0) throw InputError("--torque-body " + torque_body + ": no mesh body of that name");
      const PhaseTimes t0 = e.phase_times();
      const dem::host::ContactStats s0 = e.stats();
      dem::Vec3 torque_sum{0, 0, 0};
      double wall = 0;
      for (int s = 0; s < steps; ++s) {
        const auto start = std::chrono::steady_clock::now();
        e.step();
        wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (body >= 0) torque_sum += e.body_torque()[body];
      }
      if (!e.status().ok) {
        std::cerr << "dem_run_bench: " << e.status().message << "\n";
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
      if (body >= 0)
        std::printf("mean torque on %s over the window: %.6g %.6g %.6g N m (blade angle at window start %.6f deg about its axis)\n",
                    torque_body.c_str(), torque_sum.x / steps, torque_sum.y / steps, torque_sum.z / steps,
                    std::fmod(norm(e.meshes().bodies[body].angular_velocity) * (e.time() - steps * scene.simulation.dt) * 180 / M_PI, 360.0));
      std::printf("engine %s on %s; engine state %.0f bytes per particle\n", e.engine_name().c_str(),
                  e.device_name().c_str(), e.bytes_per_particle());
      std::printf("mean sphere-sphere contacts per particle over the window: %.6g\n", pair_cpp);
      std::printf("per particle and step: %.3g candidate pairs, %.3g Fast Intersection Tests, %.3g elements passed\n",
                  double(s1.pair_candidates - s0.pair_candidates) / (np * steps), fe_pot,
                  double(s1.fe_contact - s0.fe_contact) / (np * steps));
      std::printf("neighbour-list rebuilds in the window: %llu (every %.1f steps); each particle's mesh candidate list "
                  "renewed every %.1f steps\n",
                  static_cast<unsigned long long>(s1.broad_phase_builds - s0.broad_phase_builds),
                  double(steps) / std::max<double>(1, double(s1.broad_phase_builds - s0.broad_phase_builds)),
                  np * steps / std::max<double>(1, double(s1.mesh_list_renewals - s0.mesh_list_renewals)));
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
}
