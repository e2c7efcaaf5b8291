// The device engine: every phase of a step runs on the device, over state that stays there for the
// whole run (the host touches it only for output). One source (cuda/device_engine.inl), written
// against Thrust algorithms and per-index bodies from core/engine/phases.hpp, built twice:
//  - with nvcc for CUDA (System::Cuda, when the build has CUDA: DEM_HAVE_CUDA);
//  - with g++ on Thrust's OpenMP device system (System::Omp, always built), which runs the real
//    device code path on the CPU: the tests compare it with the host engine, and anyone can check a
//    GPU result on a laptop with `dem run --device omp`.
// Plain C++ header: the driver and the tests include it; no CUDA or Thrust type appears here.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/sim/simulation.hpp"

namespace dem::device {

enum class System { Cuda, Omp };

const char* system_name(System s);  // "cuda" or "omp"

// Whether the engine for `system` can run here: built into this binary and, for CUDA, a device is
// present. When not, *why (if given) says why.
bool available(System system, std::string* why = nullptr);

// The CUDA devices this process sees (0 without CUDA), and the one of them that the CUDA engines
// made after the call use: one GPU per MPI rank takes the rank's place on its node modulo the
// count. use_cuda_device throws std::runtime_error (with CUDA's reason) where it cannot.
int cuda_device_count();
void use_cuda_device(int ordinal);

// The memory in use on the current CUDA device (cudaMemGetInfo: total less free, every process's),
// in bytes; -1 without CUDA or on an error. The difference across an engine's life is what it
// holds on the card, beside bytes_per_particle()'s sum of its buffers' capacities.
long long cuda_memory_in_use();

// The device engine for `system` over the given scene; throws std::runtime_error when it is not
// available (with the reason).
std::unique_ptr<host::Simulation> make_engine(System system, host::ParticleArrays particles, host::MeshSet meshes,
                                              std::vector<ContactParams> params, int num_materials,
                                              host::EngineSettings settings);

}  // namespace dem::device
