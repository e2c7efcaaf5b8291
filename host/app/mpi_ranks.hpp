// The application under mpirun (`mpirun -np N dem run`, `mpirun -np N dem_run_bench`): MPI starts
// only when a launcher started the process. Rank 0 runs the program's body with an engine factory
// whose engines are decomposed over every rank (host/mpi/decomposed_simulation.hpp); the other
// ranks serve the calls it names. Each rank runs the engine --device names: the host engine with
// OpenMP threads inside, or the device engine, on CUDA one GPU a rank (the rank's place on its
// node modulo the node's GPUs).
#pragma once
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "host/app/scene/scene_builder.hpp"
#include "host/sim/simulation.hpp"

namespace dem::host {

// Whether a launcher (mpirun: Open MPI, MPICH and other PMI launchers) started this process, and
// the number of processes it started (1 where it does not say). Header-only: a build without MPI
// asks too, to refuse a run of several processes it would not decompose.
inline bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}
inline int launcher_world_size() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* n = std::getenv(v)) return std::max(1, std::atoi(n));
  return 1;
}

// The engine a program's body makes for --device `device` over `inputs` (make_simulation's
// contract: InputError where that engine cannot run here).
using EngineFactory = std::function<std::unique_ptr<Simulation>(const std::string& device, SceneInputs inputs)>;

// MPI for the life of the call (built with MPI only: DEM_HAVE_MPI). With one rank: body(make_simulation). With more: rank 0 runs
// body with a factory that decomposes each engine over the ranks (one engine at a time), while
// the others serve it, with signals left to rank 0 (it stops every rank at the same step).
// threads: OpenMP threads a rank (0: OpenMP's default). Returns the process's exit code.
int run_on_ranks(int& argc, char**& argv, int threads, const std::function<int(const EngineFactory&)>& body);

}  // namespace dem::host
