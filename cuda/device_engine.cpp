// Chooses the build of the device engine (CUDA or the OpenMP system) and says why one cannot run.
#include "cuda/device_engine.hpp"

#include <stdexcept>
#include <string>

#if defined(DEM_HAVE_CUDA)
#include "cuda/core_device_check.hpp"
#endif

namespace dem::device {

#define DEM_DECLARE_SYSTEM(ns)                                                                          \
  namespace ns {                                                                                        \
  std::unique_ptr<host::Simulation> make(host::ParticleArrays particles, host::MeshSet meshes,          \
                                         std::vector<ContactParams> params, int num_materials,          \
                                         host::EngineSettings settings);                                \
  }
#if defined(DEM_HAVE_DEVICE_OMP)
DEM_DECLARE_SYSTEM(omp_system)
#endif
#if defined(DEM_HAVE_CUDA)
DEM_DECLARE_SYSTEM(cuda_system)
#endif
#undef DEM_DECLARE_SYSTEM

const char* system_name(System s) { return s == System::Cuda ? "cuda" : "omp"; }

bool available(System system, std::string* why) {
  std::string reason;
  bool ok = false;
  if (system == System::Omp) {
#if defined(DEM_HAVE_DEVICE_OMP)
    ok = true;
#else
    reason = "this build has no device engine on the OpenMP system (no Thrust/CCCL headers were found at configure time)";
#endif
  } else {
#if defined(DEM_HAVE_CUDA)
    std::string detail;
    ok = cuda::device_count(&detail) > 0;
    if (!ok) reason = "no CUDA device (" + detail + ")";
#else
    reason = "this build has no CUDA (configure with nvcc present and DEM_ENABLE_CUDA=AUTO or ON)";
#endif
  }
  if (!ok && why) *why = reason;
  return ok;
}

int cuda_device_count() {
#if defined(DEM_HAVE_CUDA)
  return cuda::device_count();
#else
  return 0;
#endif
}

void use_cuda_device(int ordinal) {
#if defined(DEM_HAVE_CUDA)
  std::string why;
  if (!cuda::use_device(ordinal, &why)) throw std::runtime_error("device engine (cuda): " + why);
#else
  throw std::runtime_error("device engine (cuda): CUDA device " + std::to_string(ordinal) +
                           ": this build has no CUDA (configure with nvcc present and DEM_ENABLE_CUDA=AUTO or ON)");
#endif
}

long long cuda_memory_in_use() {
#if defined(DEM_HAVE_CUDA)
  return cuda_device_count() > 0 ? cuda::memory_in_use() : -1;
#else
  return -1;
#endif
}

std::unique_ptr<host::Simulation> make_engine(System system, host::ParticleArrays particles, host::MeshSet meshes,
                                              std::vector<ContactParams> params, int num_materials,
                                              host::EngineSettings settings) {
  std::string why;
  if (!available(system, &why)) throw std::runtime_error(std::string("device engine (") + system_name(system) + "): " + why);
#if defined(DEM_HAVE_CUDA)
  if (system == System::Cuda)
    return cuda_system::make(std::move(particles), std::move(meshes), std::move(params), num_materials, settings);
#endif
#if defined(DEM_HAVE_DEVICE_OMP)
  if (system == System::Omp)
    return omp_system::make(std::move(particles), std::move(meshes), std::move(params), num_materials, settings);
#endif
  throw std::runtime_error("device engine: unreachable");
}

}  // namespace dem::device
