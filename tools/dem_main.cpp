// The `dem` command line.
#include <CLI/CLI.hpp>
#include <iostream>

#include "host/app/driver.hpp"
#include "host/app/mpi_ranks.hpp"

int main(int argc, char** argv) {
  CLI::App app{"dem: discrete element simulation of spheres and polyhedra against rigid meshes"};
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
  // `mpirun -np N dem run ...`: rank 0 runs the scene as one process would, on the run decomposed
  // over the ranks; the other ranks make the calls it names.
  if (dem::host::launched_by_mpirun())
    return dem::host::run_on_ranks(argc, argv, opt.threads, [&](const dem::host::EngineFactory& make) {
      opt.make_engine = [&](dem::host::SceneInputs in) { return make(opt.device, std::move(in)); };
      return dem::host::run_scene(opt);
    });
#else
  if (dem::host::launcher_world_size() > 1) {
    std::cerr << "dem: error: started as " << dem::host::launcher_world_size()
              << " processes by mpirun, but this build has no MPI (configure with DEM_ENABLE_MPI=AUTO or ON)\n";
    return 2;
  }
#endif
  return dem::host::run_scene(opt);
}
