// `dem run`: load a scene, build the engine, step to the end with progress on stderr, write output.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "host/sim/checkpoint.hpp"
#include "host/sim/simulation.hpp"
#include "host/app/scene/scene_builder.hpp"

namespace dem::host {

struct RunOptions {
  std::string scene;                    // path of the scene file
  std::string out_dir;                  // empty: out/<scene name>
  int threads = 0;                      // 0: OpenMP default
  std::vector<std::string> overrides;   // --set key=value
  bool quiet = false;                   // no progress line
  std::string device = "auto";          // cpu | gpu | omp | auto
  std::string restart;                  // checkpoint to continue from ("" = start at t = 0)
  // When set, makes the engine from the scene's inputs in place of --device's (under mpirun:
  // the run decomposed over the ranks, host/mpi/decomposed_simulation.hpp).
  std::function<std::unique_ptr<Simulation>(SceneInputs)> make_engine;
};

// Returns the process exit code: 0 success, 2 bad input (message names file/line/key),
// 3 the simulation stopped on an error (output written up to that point), 4 other failures.
// The engine --device asks for: cpu (the host engine), gpu (the device engine on CUDA), omp (the
// device engine on Thrust's OpenMP system), auto (the GPU when one is present, else the host
// engine). Throws InputError when the asked-for engine cannot run here (never falls back).
std::unique_ptr<Simulation> make_simulation(const std::string& device, SceneInputs in);
// The engine make_simulation makes for --device over a scene of these settings: "cpu", "gpu" or
// "omp" (auto resolved); throws InputError naming the option where it cannot run here.
std::string engine_kind(const std::string& device, const EngineSettings& settings);

int run_scene(const RunOptions& options);

// What `dem run` checks every step, for other drivers (the Python module): the scene's domain and
// speed limits (HealthLimits, from its particles, fills, meshes and their motions).
HealthLimits scene_health_limits(const SceneConfig& scene, const SceneInputs& inputs);

// The health checks of a step with the scene's on_escape applied, for every driver (`dem run`, the
// Python module): while check_health finds a problem, a particle outside the domain under
// `on_escape: remove` leaves the run (edit_particles; the rest keeps its bits) and the check runs
// again; any other problem, or an escape under `on_escape: stop`, returns false (the run stops with
// status().message). `removed` counts the particles removed; `on_removed(gone)` is called after
// each removal.
bool healthy_after_escapes(Simulation& sim, const HealthLimits& limits, bool remove_escaped, std::uint64_t& removed,
                           const std::function<void(std::size_t)>& on_removed = {});

// How many steps, from step `now`, one Simulation::advance takes for every driver: up to the first
// step after which something happens between steps (event_at(step): an output, a retag...), at
// most `most` (at most kStepsPerCall) and no further than step `last`. At least 1.
constexpr std::uint64_t kStepsPerCall = 100;
std::uint64_t steps_to_next_event(std::uint64_t now, std::uint64_t last, std::uint64_t most,
                                  const std::function<bool(std::uint64_t)>& event_at);

// Throws InputError naming `path` when the checkpoint was written under other physics than the
// scene's (time step, gravity, contact parameters, meshes).
void check_checkpoint_fits(const std::string& path, const Checkpoint& from, const SceneConfig& scene,
                           const SceneInputs& inputs);

}  // namespace dem::host
