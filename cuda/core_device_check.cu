// Compiles every public core/ function for the device (through core_probe) and runs it on demand.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "cuda/core_device_check.hpp"

namespace dem::cuda {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

__global__ void core_probe_kernel(const ProbeInput* in, ProbeOutput* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    core_probe(in[i], out[i]);
}

}  // namespace

int device_count(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky error state of the runtime
    return 0;
  }
  return n;
}

bool use_device(int ordinal, std::string* why) {
  const cudaError_t e = cudaSetDevice(ordinal);
  if (e == cudaSuccess) return true;
  if (why) *why = "CUDA device " + std::to_string(ordinal) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  cudaGetLastError();
  return false;
}

long long memory_in_use(std::string* why) {
  std::size_t free = 0, total = 0;
  const cudaError_t e = cudaMemGetInfo(&free, &total);
  if (e == cudaSuccess) return static_cast<long long>(total - free);
  if (why) *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  cudaGetLastError();
  return -1;
}

void launch_core_probe(const ProbeInput* inputs, ProbeOutput* outputs, int n) {
  ProbeInput* d_in = nullptr;
  ProbeOutput* d_out = nullptr;
  check(cudaMalloc(&d_in, sizeof(ProbeInput) * n), "cudaMalloc");
  check(cudaMalloc(&d_out, sizeof(ProbeOutput) * n), "cudaMalloc");
  check(cudaMemcpy(d_in, inputs, sizeof(ProbeInput) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
  core_probe_kernel<<<(n + 127) / 128, 128>>>(d_in, d_out, n);
  check(cudaGetLastError(), "core_probe_kernel launch");
  check(cudaMemcpy(outputs, d_out, sizeof(ProbeOutput) * n, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_in);
  cudaFree(d_out);
}

}  // namespace dem::cuda
