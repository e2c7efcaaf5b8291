// Compile-time configuration shared by the host (g++/OpenMP) and device (nvcc) paths.
// Every function in core/ is DEM_HD: one definition compiled for both, so the host path is the
// reference the GPU path is compared against.
#pragma once
#include <cmath>  // std::sqrt etc. are callable from device code under nvcc
#include <cstdint>

#if defined(__CUDACC__)
#define DEM_HD __host__ __device__
#define DEM_DEVICE_CODE 1
#else
#define DEM_HD
#endif

// For the small fast paths of the phase bodies (core/engine/phases.hpp): forced inline, so that a
// loop over mostly trivial items (candidate pairs apart, particles away from walls) does not pay a
// call each, while the large rest of the body stays out of line.
#if defined(__CUDACC__)
#define DEM_HD_INLINE __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define DEM_HD_INLINE inline __attribute__((always_inline))
#else
#define DEM_HD_INLINE inline
#endif

// For the rarely taken branches of an inlined body (a contact model other than the default): kept
// out of line on the host, so that they do not weigh on the hot loop's code (inlined, the
// Mindlin-Deresiewicz path cost the default laws 4 % on the settled bed). On the device they are
// inlined: an out-of-line call raised the pair kernel from 128 to 164 registers (nvcc -Xptxas -v,
// sm_90), halving the warps an H100 can keep per SM. (The linker keeps one host copy, possibly the
// CUDA unit's, which is not built for the native CPU: the same bits under strict FP, and only these
// rare paths.)
#if defined(__CUDA_ARCH__)
#define DEM_HD_NOINLINE __host__ __device__ inline
#elif defined(__CUDACC__)
#define DEM_HD_NOINLINE __host__ __device__ inline __noinline__
#elif defined(__GNUC__)
#define DEM_HD_NOINLINE inline __attribute__((noinline))
#else
#define DEM_HD_NOINLINE inline
#endif

namespace dem {

#if defined(DEM_REAL_FLOAT)
using real = float;
#else
using real = double;  // default: the validation cases need double precision
#endif

using index_t = std::int32_t;  // particle, element and contact indices (2^31 suffices per device)

template <class T>
DEM_HD constexpr T dem_min(T a, T b) { return b < a ? b : a; }
template <class T>
DEM_HD constexpr T dem_max(T a, T b) { return a < b ? b : a; }
template <class T>
DEM_HD constexpr T dem_abs(T a) { return a < T(0) ? -a : a; }
template <class T>
DEM_HD constexpr T dem_clamp(T x, T lo, T hi) { return x < lo ? lo : (hi < x ? hi : x); }

}  // namespace dem
