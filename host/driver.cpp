#include "host/driver.hpp"

#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cuda/device_engine.hpp"
#include "host/engine/engine.hpp"
#include "host/scene/scene_builder.hpp"
#include "host/errors.hpp"
#include "host/output/output.hpp"
#include "host/scene/scene_loader.hpp"

namespace dem::host {
namespace {

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const long total = std::lround(s);
  char buf[32];
  if (total >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", total / 60, total % 60);
  return buf;
}

// One progress line about once a second: step, simulated time, particles, throughput, ETA.
class Progress {
 public:
  Progress(bool quiet, std::uint64_t total_steps, double end_time, std::size_t particles)
      : quiet_(quiet), tty_(isatty(2)), total_(total_steps), end_time_(end_time), n_(particles),
        start_(std::chrono::steady_clock::now()), last_(start_) {}
  void update(std::uint64_t step, double t, bool force = false) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && std::chrono::duration<double>(now - last_).count() < 1.0) return;
    last_ = now;
    const double wall = std::chrono::duration<double>(now - start_).count();
    const double rate = wall > 0 ? double(step) * n_ / wall : 0;
    const double eta = step > 0 ? wall * double(total_ - std::min(step, total_)) / double(step) : NAN;
    std::fprintf(stderr, "%sstep %llu/%llu  t = %.4g/%.4g s  N = %zu  %.3g particle-steps/s  elapsed %s  ETA %s%s",
                 tty_ ? "\r" : "", static_cast<unsigned long long>(step), static_cast<unsigned long long>(total_), t,
                 end_time_, n_, rate, format_duration(wall).c_str(), format_duration(eta).c_str(), tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (!quiet_ && tty_) std::fputc('\n', stderr);
  }

 private:
  bool quiet_, tty_;
  std::uint64_t total_;
  double end_time_;
  std::size_t n_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace

// The engine --device asks for: cpu (the host engine), gpu (the device engine on CUDA), omp (the
// device engine on Thrust's OpenMP system, on the CPU), auto (the GPU when one is present, else the
// host engine). Never falls back silently: gpu without a GPU is an error.
std::unique_ptr<Simulation> make_simulation(const std::string& device, SceneInputs in) {
  device::System system = device::System::Omp;
  if (device == "cpu") {
    return std::make_unique<Engine>(std::move(in.particles), std::move(in.meshes), std::move(in.params), in.num_materials,
                                    in.settings);
  } else if (device == "gpu") {
    system = device::System::Cuda;
  } else if (device == "omp") {
    system = device::System::Omp;
  } else {  // auto
    if (!device::available(device::System::Cuda))
      return make_simulation("cpu", std::move(in));
    system = device::System::Cuda;
  }
  std::string why;
  if (!device::available(system, &why))
    throw InputError("--device " + device + ": " + why + (system == device::System::Cuda ? "; run with --device cpu (or auto)" : ""));
  return device::make_engine(system, std::move(in.particles), std::move(in.meshes), std::move(in.params),
                             in.num_materials, in.settings);
}

int run_scene(const RunOptions& options) {
  try {
    if (options.device != "cpu" && options.device != "gpu" && options.device != "omp" && options.device != "auto")
      throw InputError("--device " + options.device + ": expected cpu, gpu, omp or auto");
    if (options.threads < 0) throw InputError("--threads " + std::to_string(options.threads) + ": must be >= 1");
    if (options.threads > 0) omp_set_num_threads(options.threads);
    const SceneConfig scene = load_scene(options.scene, options.overrides);
    std::unique_ptr<Simulation> sim = make_simulation(options.device, build_scene_inputs(scene));
    Simulation& engine = *sim;
    const std::string out_dir = options.out_dir.empty() ? (std::filesystem::path("out") / scene.name).string() : options.out_dir;
    OutputWriter out(out_dir, scene);
    const std::uint64_t total_steps = static_cast<std::uint64_t>(std::ceil(scene.simulation.end_time / scene.simulation.dt - 1e-9));
    RunSummary run;
    run.threads = omp_get_max_threads();
    run.backend = engine.engine_name();
    run.device = engine.device_name();
    if (!options.quiet)
      std::fprintf(stderr, "dem: %s: %zu particles, %zu mesh elements in %zu bodies, %llu steps of %g s on %s (%d threads) -> %s\n",
                   scene.name.c_str(), engine.particles().size(), engine.meshes().num_elements(),
                   engine.meshes().bodies.size(), static_cast<unsigned long long>(total_steps), scene.simulation.dt,
                   run.device.c_str(), run.threads, out_dir.c_str());
    Progress progress(options.quiet, total_steps, scene.simulation.end_time, engine.particles().size());
    const auto start = std::chrono::steady_clock::now();
    out.write_due(engine);
    const std::uint64_t check_every = std::max<std::uint64_t>(1, total_steps / 1000);
    while (engine.step_count() < total_steps) {
      engine.step();
      if (engine.step_count() % check_every == 0) engine.check_finite();
      if (!engine.status().ok) break;
      out.write_due(engine);
      progress.update(engine.step_count(), engine.time());
    }
    if (engine.status().ok) engine.check_finite();
    progress.update(engine.step_count(), engine.time(), true);
    progress.finish();
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!engine.status().ok) run.status = engine.status().message;
    out.write_final(engine);
    out.write_summary(engine, run);
    if (!engine.status().ok) {
      std::cerr << "dem: error: " << engine.status().message << "\ndem: output up to t = " << engine.time()
                << " s is in " << out_dir << "\n";
      return 3;
    }
    if (!options.quiet)
      std::fprintf(stderr, "dem: done: %.3g s simulated in %.3g s wall (%.3g particle-steps/s); output in %s\n",
                   engine.time(), run.wall_seconds,
                   run.wall_seconds > 0 ? engine.particles().size() * double(engine.step_count()) / run.wall_seconds : 0.0,
                   out_dir.c_str());
    return 0;
  } catch (const InputError& e) {
    std::cerr << "dem: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dem: error: " << e.what() << "\n";
    return 4;
  }
}

}  // namespace dem::host
