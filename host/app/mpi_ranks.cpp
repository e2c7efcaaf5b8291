#include "host/app/mpi_ranks.hpp"

#include <omp.h>

#include <csignal>
#include <stdexcept>

#include "cuda/device_engine.hpp"
#include "host/app/driver.hpp"
#include "host/mpi/decomposed_simulation.hpp"

namespace dem::host {
namespace {

// Each rank's engine: the host engine (cpu) or the device engine on CUDA (gpu: on its node's GPU
// node_rank modulo their count; more ranks than GPUs share them) or on Thrust's OpenMP system (omp).
mpi::EngineMaker rank_engine_maker(int node_rank) {
  return [node_rank](const std::string& engine, ParticleArrays p, MeshSet meshes, std::vector<ContactParams> params,
            int num_materials, EngineSettings settings) -> std::unique_ptr<Simulation> {
    if (engine == "cpu")
      return mpi::host_engine_maker()(engine, std::move(p), std::move(meshes), std::move(params), num_materials,
                                      std::move(settings));
    const dem::device::System system = engine == "gpu" ? dem::device::System::Cuda : dem::device::System::Omp;
    std::string why;
    if (!dem::device::available(system, &why)) throw std::runtime_error("--device " + engine + ": " + why);
    if (system == dem::device::System::Cuda) dem::device::use_cuda_device(node_rank % dem::device::cuda_device_count());
    return dem::device::make_engine(system, std::move(p), std::move(meshes), std::move(params), num_materials,
                                    std::move(settings));
  };
}

}  // namespace

int run_on_ranks(int& argc, char**& argv, int threads, const std::function<int(const EngineFactory&)>& body) {
  mpi::Runtime runtime(argc, argv);
  const mpi::Comm comm;
  if (comm.size() == 1) return body(make_simulation);
  if (threads > 0) omp_set_num_threads(threads);
  const mpi::EngineMaker make_rank_engine = rank_engine_maker(comm.node_rank());
  if (comm.rank() != 0) {
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGTERM, SIG_IGN);
    return mpi::serve(comm, make_rank_engine);
  }
  bool made = false;
  const EngineFactory decomposed = [&](const std::string& device, SceneInputs in) -> std::unique_ptr<Simulation> {
    // (the other ranks serve one decomposed engine, and leave when it is destroyed)
    if (made) throw std::logic_error("under mpirun a program makes one engine");
    made = true;
    const std::string engine = engine_kind(device, in.settings);  // (rank 0 decides for every rank)
    return std::make_unique<mpi::DecomposedSimulation>(
        comm, std::move(in.particles),
        mpi::EngineInputs{std::move(in.meshes), std::move(in.params), in.num_materials, in.settings, engine},
        make_rank_engine);
  };
  int code = 4;
  try {
    code = body(decomposed);
  } catch (...) {
    mpi::finish_serving(comm);
    throw;
  }
  mpi::finish_serving(comm);  // (when the body failed before it made an engine)
  return code;
}

}  // namespace dem::host
