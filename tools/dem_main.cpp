// The `dem` command line.
#include <CLI/CLI.hpp>

#include "host/app/driver.hpp"

#ifdef DEM_HAVE_MPI
#include <omp.h>

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "cuda/device_engine.hpp"
#include "host/mpi/decomposed_simulation.hpp"
#include "host/sim/errors.hpp"

namespace {

// Started by mpirun (Open MPI, MPICH and other PMI launchers set these): MPI is initialised only
// then, so a plain `dem run` never starts MPI.
bool launched_by_mpirun() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

// Each rank's engine: the host engine (cpu) or the device engine on CUDA (gpu) or on Thrust's
// OpenMP system (omp).
std::unique_ptr<dem::host::Simulation> make_rank_engine(const std::string& engine, dem::host::ParticleArrays p,
                                                        dem::host::MeshSet meshes, std::vector<dem::ContactParams> params,
                                                        int num_materials, dem::host::EngineSettings settings) {
  if (engine == "cpu") return dem::mpi::host_engine_maker()(engine, std::move(p), std::move(meshes), std::move(params), num_materials, std::move(settings));
  const dem::device::System system = engine == "gpu" ? dem::device::System::Cuda : dem::device::System::Omp;
  std::string why;
  if (!dem::device::available(system, &why)) throw std::runtime_error("--device " + engine + ": " + why);
  return dem::device::make_engine(system, std::move(p), std::move(meshes), std::move(params), num_materials, std::move(settings));
}

// `mpirun -np N dem run ...`: rank 0 runs the scene as one process would, on the run decomposed
// over the ranks; the other ranks make the calls it names (dem::mpi::serve).
int run_on_ranks(int& argc, char**& argv, dem::host::RunOptions opt) {
  dem::mpi::Runtime runtime(argc, argv);
  const dem::mpi::Comm comm;
  if (comm.size() == 1) return dem::host::run_scene(opt);
  if (opt.threads > 0) omp_set_num_threads(opt.threads);
  if (comm.rank() != 0) {
    // Signals are rank 0's to act on: it stops every rank at the same step.
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    return dem::mpi::serve(comm, make_rank_engine);
  }
  opt.make_engine = [&](dem::host::SceneInputs in) -> std::unique_ptr<dem::host::Simulation> {
    std::string engine = opt.device;
    if (engine == "auto") engine = dem::device::available(dem::device::System::Cuda) ? "gpu" : "cpu";
    if (engine != "cpu") {
      std::string why;
      const auto system = engine == "gpu" ? dem::device::System::Cuda : dem::device::System::Omp;
      if (!dem::device::available(system, &why)) throw dem::host::InputError("--device " + opt.device + ": " + why);
      if (in.settings.broad_phase.method == dem::host::BroadPhaseMethod::Bsp)
        throw dem::host::InputError("broad_phase.method: bsp runs on the host engine only (--device cpu)");
    }
    return std::make_unique<dem::mpi::DecomposedSimulation>(
        comm, std::move(in.particles),
        dem::mpi::EngineInputs{std::move(in.meshes), std::move(in.params), in.num_materials, in.settings, engine},
        make_rank_engine);
  };
  const int code = dem::host::run_scene(opt);
  dem::mpi::finish_serving(comm);  // (when the run failed before its engine was made)
  return code;
}

}  // namespace
#endif

int main(int argc, char** argv) {
  CLI::App app{"dem: discrete element simulation of spheres against rigid meshes"};
  app.require_subcommand(1);
  dem::host::RunOptions opt;
  CLI::App* run = app.add_subcommand("run", "run a scene file");
  run->add_option("scene", opt.scene, "scene file (YAML)")->required();
  run->add_option("--out", opt.out_dir, "output directory (default out/<scene name>)");
  run->add_option("--threads", opt.threads, "OpenMP threads (default: all cores)");
  run->add_option("--set", opt.overrides, "override a scene value, e.g. --set simulation.dt=1e-5 (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_flag("-q,--quiet", opt.quiet, "no progress line");
  run->add_option("--restart", opt.restart,
                  "continue from a checkpoint (written with output.checkpoint_interval, or on an interrupt); the same bits as an uninterrupted run");
  run->add_option("--device", opt.device, "cpu (host engine), gpu (device engine on CUDA), omp (device engine on the CPU through Thrust's OpenMP system), auto (the GPU when one is present, else cpu)")
      ->check(CLI::IsMember({"cpu", "gpu", "omp", "auto"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and exits 0; every other parse error is bad input: exit 2, as documented.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
#ifdef DEM_HAVE_MPI
  if (launched_by_mpirun()) return run_on_ranks(argc, argv, opt);
#endif
  return dem::host::run_scene(opt);
}
