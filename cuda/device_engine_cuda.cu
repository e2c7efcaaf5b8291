// The device engine on CUDA (nvcc). Thrust/CUB are wrapped in their own namespace (set by
// cuda/CMakeLists.txt) so that this build and the OpenMP-system one can share a binary.
#define DEM_DEVICE_NS cuda_system
#define DEM_DEVICE_SYSTEM_NAME "cuda"
#include "cuda/device_engine.inl"

#include <cuda_runtime.h>

namespace dem::device::cuda_system {

void device_synchronize() {
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in the device engine: ") + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}

std::string describe_device() {
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "cuda device";
  return std::string(prop.name) + " (CUDA device " + std::to_string(dev) + ", " +
         std::to_string(prop.totalGlobalMem >> 20) + " MiB)";
}

}  // namespace dem::device::cuda_system
