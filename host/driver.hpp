// `dem run`: load a scene, build the engine, step to the end with progress on stderr, write output.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/engine/simulation.hpp"
#include "host/scene/scene_builder.hpp"

namespace dem::host {

struct RunOptions {
  std::string scene;                    // path of the scene file
  std::string out_dir;                  // empty: out/<scene name>
  int threads = 0;                      // 0: OpenMP default
  std::vector<std::string> overrides;   // --set key=value
  bool quiet = false;                   // no progress line
  std::string device = "auto";          // cpu | gpu | omp | auto
  std::string restart;                  // checkpoint to continue from ("" = start at t = 0)
};

// Returns the process exit code: 0 success, 2 bad input (message names file/line/key),
// 3 the simulation stopped on an error (output written up to that point), 4 other failures.
// The engine --device asks for: cpu (the host engine), gpu (the device engine on CUDA), omp (the
// device engine on Thrust's OpenMP system), auto (the GPU when one is present, else the host
// engine). Throws InputError when the asked-for engine cannot run here (never falls back).
std::unique_ptr<Simulation> make_simulation(const std::string& device, SceneInputs in);

int run_scene(const RunOptions& options);

}  // namespace dem::host
