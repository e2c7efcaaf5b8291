// Plain C++ seam to the device compile check (no CUDA types): host code and tests include this.
#pragma once
#include <string>

#include "cuda/core_probe.hpp"

namespace dem::cuda {

// Number of usable CUDA devices; 0 on any CUDA error (e.g. no driver: error 35 on CI machines).
int device_count(std::string* why = nullptr);

// Makes device `ordinal` this process's current device (cudaSetDevice): the device engines made
// after it run there. False, with *why, on a CUDA error.
bool use_device(int ordinal, std::string* why = nullptr);

// The current device's memory in use (total less free, cudaMemGetInfo), in bytes; -1 on a CUDA
// error (with *why).
long long memory_in_use(std::string* why = nullptr);

// Runs core_probe on the device for n inputs; throws std::runtime_error on a CUDA error.
void launch_core_probe(const ProbeInput* inputs, ProbeOutput* outputs, int n);

}  // namespace dem::cuda
