// The device engine, one source for CUDA (device_engine_cuda.cu, nvcc) and for Thrust's OpenMP
// device system (device_engine_omp.cpp, g++). Included once by each with DEM_DEVICE_NS set to the
// namespace of that build (cuda_system or omp_system), after the Thrust configuration.
//
// Rules (../shared/docs/gpu-design.md, "traps"): only Thrust algorithms and per-index bodies
// (lambdas with explicit captures of views, never `this`), and CUB's device-wide algorithms only
// behind reduce_index_into and select_index_into (Thrust on the OpenMP system, the same results);
// no raw launches, shared memory, warp intrinsics or atomics; no element access to device
// vectors; every variable-length output by count -> exclusive scan -> fill; floating reductions
// only as min/max; integer sums only.
//
// The physics and the orders of every floating-point sum are those of the host engine
// (core/engine/phases.hpp; the pair loads are summed in integers, in any order), so the two
// engines give the same bits for the same build flags. The lists differ: the device
// keeps a full neighbour list (each particle its own row, sorted by partner id), evaluates each
// touching pair from both sides (pair_contact gives the same bits either way, and both copies of
// the pair's history stay equal), and re-sorts the particles by cell at every rebuild.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/device_free.h>
#include <thrust/device_malloc.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/gather.h>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>
#include <thrust/unique.h>
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/system/cuda/execution_policy.h>
#endif

#include "core/dhm/fast_intersection.hpp"
#include "core/engine/phases.hpp"
#include "core/grid/cell_grid.hpp"
#include "core/grid/grid_sizing.hpp"
#include "core/grid/hgrid.hpp"
#include "host/sim/broad_phase_choice.hpp"
#include "host/sim/field_sums.hpp"
#include "host/sim/health.hpp"
#include "host/sim/load_sizing.hpp"
#include "host/sim/mesh_slots.hpp"
#include "host/sim/periodic_check.hpp"
#include "cuda/device_engine.hpp"

// The parts, in the order they depend on each other: one file a phase, named as the host
// engine's (host/omp/).
#include "cuda/thrust_helpers.inl"
#include "cuda/device_records.inl"
#include "cuda/device_engine_class.inl"
#include "cuda/mesh_motion.inl"
#include "cuda/pair_list.inl"
#include "cuda/mesh_lists.inl"
#include "cuda/mesh_pass.inl"
#include "cuda/pair_pass.inl"
#include "cuda/integration.inl"
#include "cuda/state.inl"
#include "cuda/health.inl"
#include "cuda/state_checks.inl"
#include "cuda/run_ahead.inl"
#include "cuda/host_copies.inl"
#include "cuda/ghosts.inl"
#include "cuda/field_sums.inl"
#include "cuda/mixing_contents.inl"

namespace dem::device::DEM_DEVICE_NS {

std::unique_ptr<host::Simulation> make(host::ParticleArrays particles, host::MeshSet meshes,
                                       std::vector<ContactParams> params, int num_materials,
                                       host::EngineSettings settings) {
  return std::make_unique<DeviceEngine>(std::move(particles), std::move(meshes), std::move(params), num_materials,
                                        settings);
}

}  // namespace dem::device::DEM_DEVICE_NS
