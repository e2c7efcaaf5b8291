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
#include <thrust/iterator/counting_iterator.h>
#include <thrust/scan.h>
#include <thrust/sequence.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/system/cuda/execution_policy.h>
#endif

#include "core/dhm/fast_intersection.hpp"
#include "core/engine/phases.hpp"
#include "core/grid/cell_grid.hpp"
#include "core/grid/hgrid.hpp"
#include "host/engine/broad_phase.hpp"
#include "cuda/device_engine.hpp"

namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

template <class T>
using dvec = thrust::device_vector<T>;

template <class T>
T* raw(dvec<T>& v) {
  return thrust::raw_pointer_cast(v.data());
}

class TempCache;

// How the engine runs its algorithms: ranges of fewer than serial_below items run on the calling
// thread on the OpenMP system (waking a thread team for a few items costs more than the work; the
// host engine's EngineSettings::parallel_min), and temporary storage comes from `cache`.
// `waits` counts the host's waits for the device (DeviceEngine::host_waits): every helper below
// that brings a value back, copies from the host or reallocates a buffer adds one, on either
// system, where CUDA would make the host wait for the work queued before it (a copy from the
// host: Thrust synchronises the stream after it). Nothing else in this file may do those things
// (tests/lint/device_source_lint.sh), so the count is every wait of a step.
struct Exec {
  std::int64_t serial_below = 0;
  TempCache* cache = nullptr;
  std::uint64_t* waits = nullptr;
  void waited() const {
    if (waits) ++*waits;
  }
};

// A device buffer resized to n elements: where it grows, a wait (Thrust fills the new elements
// with its synchronous policy; past the capacity CUDA's free of the old storage waits as well).
// Past the capacity, storage for exactly n: Thrust's resize would take at least twice the old
// capacity (its vectors grow geometrically), and the lists that grow here by a quarter (ensure)
// then held up to twice what they use (the mixer's device state a fifth more).
template <class T>
void resize(const Exec& ex, dvec<T>& v, std::size_t n) {
  if (n > v.size()) ex.waited();
  if (n > v.capacity()) v.reserve(n);  // (counted)
  v.resize(n);  // (counted)
}

// n copies of value (a fill with Thrust's synchronous policy).
template <class T>
void assign(const Exec& ex, dvec<T>& v, std::size_t n, const T& value) {
  if (n > 0) ex.waited();
  v.assign(n, value);  // (counted)
}

// Grows a device buffer to at least n elements (never shrinks: no reallocation in the step loop
// once the run has reached its sizes). An empty one to n; one that grows again (a list whose size
// creeps up, renewal after renewal) to a quarter more, so that it seldom grows, each time a wait.
template <class T>
void ensure(const Exec& ex, dvec<T>& v, std::size_t n) {
  if (v.size() < n) resize(ex, v, v.empty() ? n : n + n / 4);
}

// h copied to d[at, at + h.size()) (which d must hold).
template <class T>
void upload_into(const Exec& ex, dvec<T>& d, std::size_t at, const std::vector<T>& h) {
  if (h.empty()) return;
  ex.waited();
  thrust::copy(h.begin(), h.end(), d.begin() + static_cast<std::ptrdiff_t>(at));  // (counted)
}

template <class T>
void upload(const Exec& ex, dvec<T>& d, const std::vector<T>& h) {
  resize(ex, d, h.size());
  upload_into(ex, d, 0, h);
}

template <class T>
void download(const Exec& ex, const dvec<T>& d, std::size_t n, std::vector<T>& h) {
  h.resize(n);
  if (n == 0) return;
  ex.waited();
  thrust::copy_n(d.begin(), n, h.begin());  // (counted)
}

template <class T>
T read_one(const Exec& ex, const dvec<T>& d, std::size_t k) {
  T v;
  ex.waited();
  thrust::copy_n(d.begin() + static_cast<std::ptrdiff_t>(k), 1, &v);  // (counted)
  return v;
}

// Thrust's temporary storage (sorts, scans, reductions, copy_if), kept for the engine's life.
// Thrust's own allocates and frees device memory in every such call, several times a step, and on
// CUDA each free waits for the device (gpu-design.md: no allocation in the step loop). Here a
// request takes the smallest cached block that holds it, and a block given back stays cached; the
// step's algorithms ask for about the same sizes step after step, so after the first steps
// nothing is allocated. Locked: the OpenMP system's sort asks from inside its parallel region.
class TempCache {
 public:
  using value_type = char;
  TempCache() = default;
  TempCache(const TempCache&) = delete;
  TempCache& operator=(const TempCache&) = delete;
  ~TempCache() {
    for (auto& [size, p] : free_) thrust::device_free(thrust::device_pointer_cast(p));
    for (auto& [p, size] : used_) thrust::device_free(thrust::device_pointer_cast(p));
  }
  char* allocate(std::ptrdiff_t n) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t want = static_cast<std::size_t>(n);
    auto it = free_.lower_bound(want);
    char* p;
    std::size_t size;
    if (it != free_.end()) {
      size = it->first;
      p = it->second;
      free_.erase(it);
    } else {  // a new block, with room for requests that grow a little
      size = want + want / 4 + 256;
      p = thrust::raw_pointer_cast(thrust::device_malloc<char>(size));
      bytes_ += size;
    }
    used_.emplace(p, size);
    return p;
  }
  void deallocate(char* p, std::size_t) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = used_.find(p);
    free_.emplace(it->second, p);
    used_.erase(it);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::mutex mutex_;
  std::multimap<std::size_t, char*> free_;   // by size
  std::unordered_map<char*, std::size_t> used_;
  std::size_t bytes_ = 0;
};

// Runs algo(policy) with the device's execution policy (serially below ex.serial_below on the
// OpenMP system). Every algorithm here gives the same result either way: integer or min/max
// reductions, stable sorts, scans of integers.
// On CUDA the policy is par_nosync: thrust::device waits for the device after every algorithm,
// some 25 times a step; par_nosync queues the kernels on the default stream and waits only where
// a result comes back to the host (a reduction, copy_if's count). Everything the host reads or
// writes goes through copies on that stream, which wait for the kernels before them (Exec::waits
// counts each); the phase timers record events on it (PhaseClock) and do not wait.
template <class Algo>
decltype(auto) launch(std::int64_t n, const Exec& ex, Algo&& algo) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP
  if (n < ex.serial_below) return algo(thrust::seq);
  return algo(thrust::device(*ex.cache));
#else
  (void)n;
  return algo(thrust::cuda::par_nosync(*ex.cache));
#endif
}

// f(i) for every i in [0, n), on the device.
template <class F>
void for_each_index(const Exec& sb, std::int64_t n, const F& f) {
  if (n <= 0) return;
  launch(n, sb, [&](auto pol) {
    thrust::for_each(pol, thrust::counting_iterator<std::int64_t>(0), thrust::counting_iterator<std::int64_t>(n), f);
  });
}

// f(i) over [0, n) reduced by op from init (op exact in any order: integer sums, min/max).
template <class T, class F, class Op>
T reduce_index(const Exec& sb, std::int64_t n, const F& f, T init, Op op) {
  if (n <= 0) return init;
  sb.waited();
  return launch(n, sb, [&](auto pol) {
    return thrust::transform_reduce(pol, thrust::counting_iterator<std::int64_t>(0),  // (counted)
                                    thrust::counting_iterator<std::int64_t>(n), f, init, op);
  });
}

// Integer sum of f(i) over [0, n) (exact, so the reduction order does not matter).
template <class T, class F>
T sum_index(const Exec& sb, std::int64_t n, const F& f) {
  return reduce_index(sb, n, f, T(0), thrust::plus<T>());
}

// Whether the ascending run [first, last) holds key (a binary search, in device code).
template <class T>
DEM_HD inline bool sorted_contains(const T* first, const T* last, T key) {
  const T* lo = first;  // the first entry not below key
  for (const T* hi = last; lo < hi;) {
    const T* mid = lo + (hi - lo) / 2;
    if (*mid < key) lo = mid + 1;
    else hi = mid;
  }
  return lo != last && *lo == key;
}

// Results left in device memory, so that several come back to the host in one copy (one wait for
// the device instead of one per algorithm). On CUDA they are CUB's device-wide algorithms queued on
// the default stream, where Thrust's par_nosync runs the other kernels, with their temporary
// storage from the cache; on the OpenMP system the same Thrust algorithms as elsewhere, whose
// results are stored at once (device memory is host memory there). Both give the same values.
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
namespace cub = CUB_NS_QUALIFIER;
// A CUDA error as an exception naming the call (also the PhaseClock's, device_engine_cuda.cu).
inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in the device engine (") + what + "): " + cudaGetErrorName(e) +
                             " (" + cudaGetErrorString(e) + ")");
}
// Runs a CUB device-wide algorithm `run(temp, bytes)`: once for its storage size, then with storage.
template <class Run>
void run_cub(const Exec& ex, const char* what, Run&& run) {
  std::size_t bytes = 0;
  check_cuda(run(static_cast<void*>(nullptr), bytes), what);
  char* temp = ex.cache->allocate(static_cast<std::ptrdiff_t>(bytes));
  const cudaError_t e = run(static_cast<void*>(temp), bytes);
  ex.cache->deallocate(temp, bytes);  // (reused only by work queued after this on the same stream)
  check_cuda(e, what);
}
#endif

// f(i) over [0, n) reduced by op from init (exact in any order) into *out, in device memory.
template <class T, class F, class Op>
void reduce_index_into(const Exec& sb, std::int64_t n, const F& f, T init, Op op, T* out) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  if (n <= 0) {
    launch(0, sb, [&](auto pol) { thrust::fill_n(pol, thrust::device_pointer_cast(out), 1, init); });
    return;
  }
  const thrust::counting_iterator<std::int64_t> in(0);
  run_cub(sb, "cub::DeviceReduce::TransformReduce", [&](void* temp, std::size_t& bytes) {
    return cub::DeviceReduce::TransformReduce(temp, bytes, in, out, n, op, f, init, cudaStream_t(0));
  });
#else
  Exec uncounted = sb;  // (none: CUB's reduction above returns nothing to the host)
  uncounted.waits = nullptr;
  *out = reduce_index(uncounted, n, f, init, op);
#endif
}

// The indices i in [0, n) with pred(i), in increasing order, into out[0, count); count into
// *count, in device memory.
template <class Pred>
void select_index_into(const Exec& sb, std::int32_t n, const Pred& pred, std::int32_t* out, std::int64_t* count) {
  const thrust::counting_iterator<std::int32_t> in(0);
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
  if (n <= 0) {
    launch(0, sb, [&](auto pol) { thrust::fill_n(pol, thrust::device_pointer_cast(count), 1, std::int64_t(0)); });
    return;
  }
  run_cub(sb, "cub::DeviceSelect::If", [&](void* temp, std::size_t& bytes) {
    return cub::DeviceSelect::If(temp, bytes, in, out, count, static_cast<std::int64_t>(n), pred, cudaStream_t(0));
  });
#else
  // (counted: none, as CUB's copy above returns nothing to the host)
  *count = launch(n, sb, [&](auto pol) { return thrust::copy_if(pol, in, in + n, out, pred) - out; });
#endif
}

// A kept list's check: whether f(i) (0 or 1) is 1 for any i in [0, n), into *out in device memory.
// f is heavy code that returns at once for all but a few i. As a CUB reduction's functor it ran
// in a few blocks, inlined many times over (16 us a step on the 20,000-bead bed on an H200, ncu),
// so f runs in a for_each, its findings into `scratch` (n entries), and the reduction reads those.
template <class F, class T>
struct StoreEach {
  F f;
  T* out;
  DEM_HD void operator()(std::int64_t i) const { out[i] = f(i); }
};
template <class T>
struct ReadEach {
  const T* in;
  DEM_HD T operator()(std::int64_t i) const { return in[i]; }
};
struct ReadFinding {
  const std::int64_t* found;
  DEM_HD int operator()(std::int64_t i) const { return static_cast<int>(found[i]); }
};
template <class F>
void any_index_into(const Exec& sb, std::int64_t n, const F& f, std::int64_t* scratch, int* out) {
  for_each_index(sb, n, StoreEach<F, std::int64_t>{f, scratch});
  reduce_index_into(sb, n, ReadFinding{scratch}, 0, thrust::maximum<int>(), out);
}

// The per-step skin tests in one reduction, so one wait for the device: how many particles have
// moved past their half skins and the largest excess over one (the check of a kept pair list
// needs both), how many are past their mesh skins (update_mesh_candidates), and the last pair
// pass's touching pairs, counted from both sides (fold_touching).
struct PastSkins {
  std::int64_t past;
  real excess;
  std::int64_t mesh_past;
  std::int64_t touching;
};
struct PastSkinsSum {
  DEM_HD PastSkins operator()(const PastSkins& a, const PastSkins& b) const {
    return PastSkins{a.past + b.past, dem_max(a.excess, b.excess), a.mesh_past + b.mesh_past, a.touching + b.touching};
  }
};

// Whether particle i may have met an element its mesh candidate list leaves out since the list
// was made (core mesh_skin_used): the per-step count, the fused skin tests and mesh_lists_hold.
struct MeshSkinUsed {
  const Vec3* x;
  const Vec3* x0;   // positions at the renewal
  const real* skin;
  PeriodicBox pb;
  real travel;
  DEM_HD bool operator()(std::int64_t i) const { return mesh_skin_used(norm2(nearest_image(pb, x[i] - x0[i])), skin[i], travel); }
};

struct Box {
  Vec3 lo, hi;
};
struct BoxUnion {
  DEM_HD Box operator()(const Box& a, const Box& b) const {
    return Box{Vec3{dem_min(a.lo.x, b.lo.x), dem_min(a.lo.y, b.lo.y), dem_min(a.lo.z, b.lo.z)},
               Vec3{dem_max(a.hi.x, b.hi.x), dem_max(a.hi.y, b.hi.y), dem_max(a.hi.z, b.hi.z)}};
  }
};
inline Box empty_box() {
  const real inf = std::numeric_limits<real>::infinity();
  return Box{Vec3{inf, inf, inf}, Vec3{-inf, -inf, -inf}};
}
// Two results of one reduction (one wait for the device instead of two), each exact in any order.
struct BoxAndReach {  // the particles' box and their largest reach (rebuild)
  Box box;
  real reach;
};
struct BoxAndReachUnion {
  DEM_HD BoxAndReach operator()(const BoxAndReach& a, const BoxAndReach& b) const {
    return BoxAndReach{BoxUnion{}(a.box, b.box), dem_max(a.reach, b.reach)};
  }
};
struct TwoBoxes {  // the particles' box and the elements' (update_mesh_candidates)
  Box a, b;
};
// The elements in the intersection domain, their bins' bound and their bins for the first bin
// size tried (update_mesh_candidates), in one reduction.
struct DomainCounts {
  std::int64_t elements, bound, bins;
};
struct DomainCountsSum {
  DEM_HD DomainCounts operator()(const DomainCounts& p, const DomainCounts& q) const {
    return DomainCounts{p.elements + q.elements, p.bound + q.bound, p.bins + q.bins};
  }
};
// The mesh candidate lists' total and the particles that have any (their slot blocks), in one.
struct ListSizes {
  std::int64_t candidates, blocks;
};
struct ListSizesSum {
  DEM_HD ListSizes operator()(const ListSizes& p, const ListSizes& q) const {
    return ListSizes{p.candidates + q.candidates, p.blocks + q.blocks};
  }
};
struct TwoBoxesUnion {
  DEM_HD TwoBoxes operator()(const TwoBoxes& p, const TwoBoxes& q) const {
    return TwoBoxes{BoxUnion{}(p.a, q.a), BoxUnion{}(p.b, q.b)};
  }
};

// Body frames written to the device through a kernel's parameters, kFramesPerLaunch at a time: a
// copy from the host would make the host wait for all the work queued before it (Thrust
// synchronises the stream after such a copy), once a step wherever a body moves.
constexpr std::size_t kFramesPerLaunch = 16;  // 1,664 bytes of parameters (a kernel takes 4 KB)
struct WriteFrames {
  BodyFrame frame[kFramesPerLaunch];
  BodyFrame* out;
  DEM_HD void operator()(std::int64_t k) const { out[k] = frame[k]; }
};

// One level of the body loads' tree (sum_body_partials), as a functor: it is launched from inside
// the host lambda that reduce_body_partials calls, where nvcc takes no extended lambda.
struct BodyPartialsLevel {
  std::int64_t count;
  index_t num_bodies;
  const Vec3 *in_force, *in_torque;
  Vec3 *out_force, *out_torque;
  DEM_HD void operator()(std::int64_t k) const {
    sum_body_partials(k, count, num_bodies, in_force, in_torque, out_force, out_torque);
  }
};

constexpr std::int64_t kNoId = 0x7fffffffffffffff;  // "no particle" in id reductions (INT64_MAX)

// Per-step mesh statistics of all particles, reduced exactly: integer sums, and the overflowing
// particle with the smallest id.
struct MeshStepStats {
  std::uint64_t potential, in_contact, valid, compactions, slots;
  std::int64_t overflow_id;  // INT64_MAX: none
  std::uint32_t overflow_count;
};
struct MeshStepStatsSum {
  DEM_HD MeshStepStats operator()(const MeshStepStats& a, const MeshStepStats& b) const {
    const bool first = a.overflow_id <= b.overflow_id;
    return MeshStepStats{a.potential + b.potential, a.in_contact + b.in_contact, a.valid + b.valid,
                         a.compactions + b.compactions, a.slots + b.slots, first ? a.overflow_id : b.overflow_id,
                         first ? a.overflow_count : b.overflow_count};
  }
};

// The unhealthy particle with the smallest id (kNoId: none), reduced exactly in any order.
struct HealthFinding {
  std::int64_t id;
  std::int32_t index;
  std::int32_t problem;
};
struct FirstFinding {
  DEM_HD HealthFinding operator()(const HealthFinding& a, const HealthFinding& b) const { return a.id <= b.id ? a : b; }
};

// What the host reads back from the device, one record, each copy of it a wait: the skin tests
// with the kept lists' checks (rebuild_if_needed), which also bring back the last mesh pass's sums
// and its count of particles touching a mesh where they still wait (mesh_forces leaves them on the
// device: apply_mesh_readback), and check_health's finding, likewise.
struct StepReadback {
  PastSkins skins;
  int list_broken;  // list_holds_on_device: 1 where a particle past its skin touches one its row lacks
  int mesh_broken;  // mesh_lists_check: 1 where a particle past its mesh skin meets one its list lacks
  MeshStepStats mesh;  // the last mesh pass's (mesh_forces, apply_mesh_readback)
  std::int64_t mesh_touching;
  HealthFinding health;  // check_health's
};

// Bounded uniform grid with a linear key when the box has few enough cells, else hashed cells.
struct GridKeys {
  CellGrid grid;
  bool bounded;
  DEM_HD std::uint32_t key(Int3 c) const { return bounded ? cell_key(c, grid) : hashed_cell_key(c, grid.hash_size); }
};

// Per-particle state on the device: one buffer per field of DEM_PARTICLE_FIELDS.
struct DeviceParticles {
#define DEM_DEVICE_FIELD(T, name) dvec<T> name;
  DEM_PARTICLE_FIELDS(DEM_DEVICE_FIELD)
#undef DEM_DEVICE_FIELD
  ParticleView view(index_t n) {
    ParticleView out;
#define DEM_DEVICE_VIEW(T, name) out.name = raw(name);
    DEM_PARTICLE_FIELDS(DEM_DEVICE_VIEW)
#undef DEM_DEVICE_VIEW
    out.n = n;
    return out;
  }
};

// Visits the partners of particle i in the 27 cells around its own, each once (hashed keys of
// distinct cells can coincide, and so can wrapped cells of a period of fewer than three cells: a
// key is visited only at its first occurrence), calling emit(j) for every j != i with
// |x_i - x_j| < reach_i + reach_j (nearest images on periodic axes).
struct CellNeighbours {
  GridKeys gk;
  const Vec3* x;
  const real* reach;
  const std::int32_t* start;  // cell ranges of the sorted particles
  PeriodicBox periodic;
  template <class Emit>
  DEM_HD void operator()(std::int64_t i, Emit&& emit) const {
    around(x[i], [&](std::int32_t j) {
      if (j == i) return;
      const real r = reach[i] + reach[j];
      if (norm2(nearest_image(periodic, x[i] - x[j])) < r * r) emit(j);
    });
  }
  // each(j) for every sorted particle j of the (distinct) cells within `span` (at most kMaxSpan)
  // cells of the cell of point p: the 27 around it by default
  template <int kMaxSpan = 1, class Each>
  DEM_HD void around(Vec3 p, Each&& each, int span = 1) const {
    const Int3 c = home_cell(p, gk.grid);
    std::uint32_t seen[(2 * kMaxSpan + 1) * (2 * kMaxSpan + 1) * (2 * kMaxSpan + 1)];
    int n_seen = 0;
    for (int dz = -span; dz <= span; ++dz)
      for (int dy = -span; dy <= span; ++dy)
        for (int dx = -span; dx <= span; ++dx) {
          const Int3 cc = wrap_cell(Int3{c.x + dx, c.y + dy, c.z + dz}, gk.grid);
          if (gk.bounded && (cc.x < 0 || cc.y < 0 || cc.z < 0 || cc.x >= gk.grid.dims.x || cc.y >= gk.grid.dims.y ||
                             cc.z >= gk.grid.dims.z))
            continue;
          const std::uint32_t key = gk.key(cc);
          bool dup = false;
          for (int s = 0; s < n_seen; ++s) dup = dup || seen[s] == key;
          if (dup) continue;
          seen[n_seen++] = key;
          for (std::int32_t j = start[key]; j < start[key + 1]; ++j) each(j);
        }
  }
};

// The mesh candidates of particle i (santasusana2016 Sect. 3.1 e-f): the bins its box (radius +
// skin) overlaps inside the domain; each element once (from the first bin of the overlap of the
// two boxes); emit(e) for those the sphere grown by the skin meets (Fast Intersection Test).
struct MeshCandidateQuery {
  MeshView mv;
  Box dom;                     // the intersection domain
  CellGrid g;                  // bounded bins over it
  const std::int32_t* bstart;  // bin ranges of bel
  const std::int32_t* bel;     // elements by bin
  const Vec3* elo;             // element boxes
  const Vec3* ehi;
  const Vec3* x;
  const real* radius;
  const real* skin;            // per particle: the mesh skin
  PeriodicBox periodic;
  // Particle i and, near a periodic face, its images across it (core near_face_images): an element
  // met from several images is emitted from the first only.
  template <class Emit>
  DEM_HD void operator()(std::int64_t i, Emit&& emit) const {
    const real r = radius[i] + skin[i];
    Vec3 at[8];
    const int images = near_face_images(periodic, x[i], r, at);
    for (int k = 0; k < images; ++k)
      search(at, k, r, [&](std::int32_t e) {
        for (int m = 0; m < k; ++m)
          if (fast_intersection_test(mv.polygon(static_cast<index_t>(e)), mv.normals[e], at[m], r)) return;
        emit(e);
      });
  }
  template <class Emit>
  DEM_HD void search(const Vec3* at, int k, real r, Emit&& emit) const {
    const Vec3 c = at[k];
    Vec3 lo{c.x - r, c.y - r, c.z - r}, hi{c.x + r, c.y + r, c.z + r};
    if (lo.x > dom.hi.x || hi.x < dom.lo.x || lo.y > dom.hi.y || hi.y < dom.lo.y || lo.z > dom.hi.z || hi.z < dom.lo.z)
      return;
    lo = Vec3{dem_max(lo.x, dom.lo.x), dem_max(lo.y, dom.lo.y), dem_max(lo.z, dom.lo.z)};
    hi = Vec3{dem_min(hi.x, dom.hi.x), dem_min(hi.y, dom.hi.y), dem_min(hi.z, dom.hi.z)};
    const Int3 c0 = cell_coords(lo, g), c1 = cell_coords(hi, g);
    for (int z = c0.z; z <= c1.z; ++z)
      for (int y = c0.y; y <= c1.y; ++y)
        for (int xx = c0.x; xx <= c1.x; ++xx) {
          const std::uint32_t key = cell_key(Int3{xx, y, z}, g);
          for (std::int32_t s = bstart[key]; s < bstart[key + 1]; ++s) {
            const std::int32_t e = bel[s];
            if (!(elo[e].x <= hi.x && ehi[e].x >= lo.x && elo[e].y <= hi.y && ehi[e].y >= lo.y && elo[e].z <= hi.z &&
                  ehi[e].z >= lo.z))
              continue;
            const Vec3 first{dem_max(lo.x, elo[e].x), dem_max(lo.y, elo[e].y), dem_max(lo.z, elo[e].z)};
            const Int3 fc = cell_coords(first, g);
            if (fc.x != xx || fc.y != y || fc.z != z) continue;
            if (fast_intersection_test(mv.polygon(static_cast<index_t>(e)), mv.normals[e], c, r)) emit(e);
          }
        }
  }
};

std::string describe_device();  // defined per system

// Phase times that never make the host wait for the device (defined per system). On the OpenMP
// system every algorithm has finished when it returns, so a phase's time is the wall clock around
// it. On CUDA the kernels run behind the host (par_nosync); the end of each phase used to wait for
// them (four times a step, each wait leaving the device idle while the host queued the next
// kernels). There a phase is timed by two events recorded on the stream around its kernels and
// read once they have passed: when the times are asked for (settle), or when many are pending.
class PhaseClock {
 public:
  PhaseClock();
  ~PhaseClock();
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;
  // A CUDA error in start or settle throws; stop runs in a timer's destructor, also while an
  // exception unwinds the phase, so it never throws: its error is kept, and the next start or
  // settle throws it (the phase's own error, if any, is the one that reaches the caller first).
  std::int64_t start();                                // a mark at a phase's start
  void stop(std::int64_t mark, double& sink) noexcept;  // sink += seconds since the mark (now, or once read)
  void settle();                                       // every pending time added to its sink

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class DeviceEngine final : public host::Simulation {
 public:
  DeviceEngine(host::ParticleArrays particles, host::MeshSet meshes, std::vector<ContactParams> params,
               int num_materials, host::EngineSettings settings);

  void step() override;
  void compute_forces() override;
  double time() const override { return time_; }
  std::uint64_t step_count() const override { return steps_; }
  const host::ParticleArrays& particles() const override;
  std::size_t num_particles() const override { return n_; }
  const host::MeshSet& meshes() const override;
  const std::vector<Vec3>& body_force() const override;
  const std::vector<Vec3>& body_torque() const override;
  const host::ContactStats& stats() const override {
    fold_touching(-1);
    fold_mesh();
    return stats_;
  }
  const host::PhaseTimes& phase_times() const override {
    clock_.settle();
    return times_;
  }
  const host::EngineStatus& status() const override {
    fold_mesh();  // (a full block of mesh contacts stops the run)
    return status_;
  }
  bool check_health(const HealthLimits& limits) override;
  void export_state(host::ParticleArrays& particles, host::ContactState& contacts) const override;
  void restore_state(const host::ContactState& contacts, std::uint64_t step) override;
  void set_stats(const host::ContactStats& s) override {
    fold_touching(-1);
    fold_mesh();
    stats_ = s;
  }
  void set_body_motion(std::size_t body, const MeshBodyMotion& motion) override;
  std::size_t edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more) override;
  real skin() const override { return skin_; }
  bool adaptive_skin() const override { return settings_.skin < 0; }
  std::size_t touching_pairs() const override {
    fold_touching(-1);
    return touching_pairs_;
  }
  std::size_t mesh_contacts() const override {
    fold_mesh();
    return mesh_contacts_;
  }
  double max_overlap() const override;
  std::string engine_name() const override { return std::string("device-") + DEM_DEVICE_SYSTEM_NAME; }
  std::string device_name() const override { return describe_device(); }
  double bytes_per_particle() const override;
  host::BroadPhaseReport broad_phase_report() const override { return report_; }
  std::uint64_t host_waits() const override { return waits_; }

  // The phases (public: CUDA's extended lambdas may not live in private member functions).
  void move_meshes(double t);
  void assign_mesh_blocks(std::int64_t blocks);  // (the particles with candidates, counted by the caller)
  void evaluate(bool and_integrate);
  void finish_particles(bool and_integrate);  // store the summed forces; integrate with them
  void rebuild_if_needed();
  // The skin tests (rebuild_if_needed, or check_health ahead of the next step): what ran.
  struct SkinTests {
    bool mesh = false, touching = false, can_keep = false, mesh_check = false;
  };
  bool rebuild_due() const;
  bool mesh_check_wanted() const {
    return have_candidates_ && !d_elem_body_.empty() && settings_.skin != 0 && mesh_check_ahead_;
  }
  SkinTests launch_skin_tests(StepReadback* rb, const MeshView* next = nullptr);
  MeshView pose_ahead();
  void write_frames(const std::vector<BodyFrame>& frames, dvec<BodyFrame>& out);
  void pose_meshes(const MeshView& v);
  void take_skin_tests(const SkinTests& run, const StepReadback& r);
  void list_holds_on_device(const StepReadback* rb, int* broken);
  void update_half_skins();
  void rebuild();
  void resort(const dvec<std::int32_t>& order);
  void update_mesh_candidates();
  bool mesh_lists_hold(std::int64_t past);
  void mesh_lists_check(const StepReadback* rb, real travel, int* broken, const MeshView* at = nullptr);
  void mesh_forces();
  void pair_forces(bool and_integrate);
  // The contact passes, built with or without the parts of the law that few scenes use
  // (kAllModels, normal_tangential_force): each engine runs the lean pass unless an interaction
  // needs them. The pair pass leaves each particle's touching pairs in pair_touching_count_.
  template <bool kAllModels>
  void mesh_pass();
  template <bool kAllModels>
  void pair_pass();
  // The last pair pass's touching pairs into touching_pairs_ and the stats, once: `both_sides`,
  // their count from both sides where a reduction has it (the next step's skin tests), else -1 (a
  // reduction of its own, which waits for the device).
  void fold_touching(std::int64_t both_sides) const;
  // The last mesh pass's results, left on the device by mesh_forces (mesh_pending_): r, from a copy
  // of the readback record made for something else, or fold_mesh's own copy (a wait).
  void apply_mesh_readback(const StepReadback& r);
  void fold_mesh() const;
  void sum_body_loads();  // (where loads_pending_)
  ParticleView pview() {  // with the periodic box
    ParticleView v = p_.view(static_cast<index_t>(n_));
    v.periodic = settings_.periodic;
    return v;
  }
  MeshView mview();
  MeshSlotsView sview() {
    return MeshSlotsView{raw(mesh_count_), raw(mesh_entity_), raw(mesh_normal_), history_view(mesh_xi_, mesh_roll_),
                         raw(slot_force_),  raw(slot_torque_),  raw(mesh_block_)};
  }

 private:
  class Timer {  // a phase's time into sink (PhaseClock)
   public:
    Timer(PhaseClock& clock, double& sink) : clock_(clock), sink_(sink), mark_(clock.start()) {}
    ~Timer() { clock_.stop(mark_, sink_); }

   private:
    PhaseClock& clock_;
    double& sink_;
    std::int64_t mark_;
  };

  std::size_t n_ = 0;
  std::unique_ptr<TempCache> cache_ = std::make_unique<TempCache>();  // before every buffer: freed last
  Exec sb_;  // how algorithms run: serially below settings.parallel_min (OpenMP system), cache_
  mutable std::uint64_t waits_ = 0;  // the host's waits for the device (Exec::waits)
  DeviceParticles p_;
  // The target of every re-sort's gathers, one array at a time (32 bytes a particle, the largest
  // field): a second copy of each per-particle array would cost their whole size again.
  dvec<std::uint64_t> field_scratch_;
  template <class T>
  void reorder(dvec<T>& a, const dvec<std::int32_t>& order) {
    static_assert(std::is_trivially_copyable_v<T> && alignof(T) <= alignof(std::uint64_t) && sizeof(T) <= 32);
    ensure(sb_, field_scratch_, (n_ * sizeof(T) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
    const thrust::device_ptr<T> tmp = thrust::device_pointer_cast(reinterpret_cast<T*>(raw(field_scratch_)));
    const std::int64_t n = static_cast<std::int64_t>(n_);
    launch(n, sb_, [&](auto pol) { thrust::gather(pol, order.begin(), order.begin() + n, a.begin(), tmp); });
    resize(sb_, a, n_);  // (at most shrinks, after removals: no reallocation)
    launch(n, sb_, [&](auto pol) { thrust::copy(pol, tmp, tmp + n, a.begin()); });
  }
  dvec<ContactParams> params_;
  std::vector<ContactParams> table_;  // the host's copy (load_sizing_)
  host::LoadSizing load_sizing_;      // what the pair loads' units are sized for
  LoadQuantum quantum_;               // the pair loads' units (core/engine/fixed_loads.hpp)
  bool all_models_ = true;  // some interaction needs the Mindlin-Deresiewicz or plastic parts
  int num_materials_;
  host::EngineSettings settings_;
  real skin_ = 0, r_max_ = 0;
  double time_ = 0;
  std::uint64_t steps_ = 0, last_build_step_ = 0;
  bool needs_build_ = true;
  bool forces_current_ = false;  // compute_forces ran since the last step (see host::Simulation)
  // Particles to drop at the next rebuild (edit_particles): flagged, sorted last, then cut off.
  dvec<std::uint8_t> remove_flag_;
  std::size_t remove_pending_ = 0;

  // Meshes: host copy (names, topology; poses downloaded for output) and device buffers.
  mutable host::MeshSet meshes_;
  mutable std::uint64_t meshes_step_ = ~std::uint64_t(0);
  std::vector<MeshBodyMotion> motions_;
  real mesh_step_ = 0;  // m, mesh_step_bound: how far a mesh point moves per step
  dvec<MeshBodyMotion> d_bodies_;
  dvec<MotionKnot> d_knots_;
  dvec<Vec3> d_ref_vertices_, d_vertices_, d_ref_normals_, d_normals_;
  dvec<index_t> d_elem_offsets_, d_elem_vertices_, d_elem_body_;
  double mesh_time_ = 0;

  // Full neighbour list, CSR by particle, rows sorted by partner id; the previous one (by the
  // index order before the last re-sort) for the history carry.
  bool have_list_ = false;
  std::int64_t nbr_total_ = 0;  // entries of the list (each pair twice)
  dvec<std::int64_t> nbr_offsets_, old_offsets_;
  dvec<std::int32_t> nbr_index_;
  dvec<std::int64_t> nbr_id_, old_id_;
  // Each entry's history (SplitHistory): the tangential one, and the second only where a law uses
  // it (with_roll_; else empty, and zero for every entry).
  dvec<Vec3> nbr_xi_, nbr_roll_, old_xi_, old_roll_;
  bool with_roll_ = true;
  SplitHistory history_view(dvec<Vec3>& xi, dvec<Vec3>& roll) { return SplitHistory{raw(xi), with_roll_ ? raw(roll) : nullptr}; }
  // The first n entries as ContactHistory records (a contact state's), and records into the arrays.
  std::vector<ContactHistory> download_histories(const dvec<Vec3>& xi, const dvec<Vec3>& roll, std::size_t n) const;
  void upload_histories(const std::vector<ContactHistory>& h, dvec<Vec3>& xi, dvec<Vec3>& roll);
  dvec<std::uint8_t> nbr_touching_, old_touching_;
  dvec<std::int32_t> order_;  // new index -> index before the last re-sort
  dvec<std::uint32_t> cell_keys_;
  // HGrid (settings_.broad_phase): the levels chosen from the radii (at construction and after
  // edits; the top level is stretched to the largest reach at each rebuild), and per particle its
  // level and home cell in the sorted order.
  bool use_hgrid_ = false;
  HGridLevels hgrid_{};
  dvec<std::uint8_t> hlevel_;
  dvec<Int3> hcell_;
  host::BroadPhaseReport report_;
  void choose_broad_phase();
  dvec<std::int32_t> cell_start_;
  // The last build's grid (and HGrid levels), for list_holds' searches around a particle.
  GridKeys built_keys_{};
  HGridLevels built_levels_{};
  real built_max_reach_ = 0;
  dvec<std::int64_t> counts_;  // scratch, n + 1
  dvec<Vec3> x_at_build_;
  dvec<real> reach_, half_skin2_, speed_;
  dvec<std::int32_t> pair_touching_count_;

  // Mesh candidates per particle (CSR, sorted by element), search bins over the elements.
  bool have_candidates_ = false;
  // The last renewal's bins (for mesh_lists_hold): the particles' box grown by how far around it
  // the bins hold elements, the intersection domain and the bin grid (used only with elements).
  Box mesh_held_{};
  Box mesh_dom_{};
  CellGrid mesh_bins_{};
  bool mesh_bins_used_ = false;
  dvec<std::int64_t> cand_offsets_;
  dvec<std::int32_t> cand_;
  dvec<Vec3> x_at_mesh_build_;
  dvec<real> mesh_skin_;  // m, per particle (core adaptive_mesh_skin)
  real mesh_travel_ = 0;
  std::int64_t mesh_past_ = -1;  // this step's count past the mesh skins, from rebuild_if_needed (-1: none)
  int mesh_broken_ = -1;         // with it, mesh_lists_check's finding (-1: not run)
  bool mesh_check_ahead_ = false;  // the last count was not 0: run mesh_lists_check with the skin tests
  // The skin tests check_health ran for the state at step ahead_step_, and their copy: the next
  // rebuild_if_needed takes them, unless an edit, a restore or a motion change came first.
  bool ahead_valid_ = false;
  std::uint64_t ahead_step_ = 0;
  SkinTests ahead_run_{};
  StepReadback ahead_readback_{};
  // The meshes at the next step's time for check_health's mesh lists' check (pose_ahead), beside
  // the present pose, which the step replaces (and meshes() returns until then).
  std::vector<BodyFrame> ahead_frames_host_;
  dvec<BodyFrame> ahead_frames_;
  dvec<Vec3> ahead_vertices_, ahead_normals_;
  dvec<Vec3> elem_lo_, elem_hi_;
  dvec<std::int64_t> elem_entries_;  // per element: bins it occupies, then the scan of it
  dvec<std::uint32_t> bin_keys_;
  dvec<std::int32_t> bin_elems_, bin_start_;

  // Mesh contact slots and loads.
  dvec<std::uint8_t> mesh_count_;
  // Per particle: its block of kMaxMeshContacts slots, or -1. Only particles with candidate
  // elements have one (assign_mesh_blocks, at each renewal of the candidate lists, as on the host
  // engine): a few per cent of a large bed. A re-sort moves the counts and blocks, not the slots.
  dvec<std::int32_t> mesh_block_, tmp_block_;
  std::int64_t mesh_blocks_ = 0;
  // The particle of each block; the mesh pass runs over the blocks, and its per-particle results
  // (mesh_force_, mesh_torque_, mesh_stats_) are per block. Valid from each assign_mesh_blocks to
  // the next re-sort, which always renews the candidate lists (and the blocks) before a mesh pass.
  dvec<std::int32_t> block_particle_;
  dvec<EntityContact> mesh_entity_, tmp_entity_;
  dvec<Vec3> mesh_normal_, tmp_normal_;
  dvec<Vec3> mesh_xi_, mesh_roll_, tmp_xi_, tmp_roll_;  // the slots' histories (SplitHistory, with_roll_)
  dvec<Vec3> slot_force_, slot_torque_, mesh_force_, mesh_torque_;
  dvec<MeshStepStats> mesh_stats_;
  dvec<std::int32_t> touching_by_id_;  // particles touching a mesh, sorted by id
  dvec<StepReadback> readback_;        // one record (StepReadback)
  dvec<BodyFrame> d_frames_;  // each body at mesh_time_ (body_frame, evaluated on the host: glibc's sin and cos)
  bool meshes_posed_ = false;  // d_vertices_ and d_normals_ are the reference ones moved by d_frames_
  dvec<std::int64_t> id_scratch_;
  dvec<Vec3> partial_force_, partial_torque_, d_body_force_, d_body_torque_;
  mutable std::vector<Vec3> body_force_, body_torque_;
  mutable bool body_loads_fresh_ = true;

  mutable host::ParticleArrays host_p_;
  mutable std::uint64_t host_p_step_ = ~std::uint64_t(0);
  mutable bool host_p_fresh_ = false;

  mutable host::ContactStats stats_;
  host::PhaseTimes times_;
  mutable PhaseClock clock_;  // (phase_times settles its pending times)
  host::EngineStatus status_;
  // The touching pairs and the stats wait for the device only when asked for (the pair pass's
  // count is folded in by the next step's skin tests, or by fold_touching).
  mutable std::size_t touching_pairs_ = 0;
  std::size_t mesh_contacts_ = 0;
  mutable bool touch_pending_ = false;
  // The last mesh pass's sums and overflow wait on the device (apply_mesh_readback); its step and
  // time name an overflow. Its body loads are summed when asked for (sum_body_loads).
  bool mesh_pending_ = false;
  std::uint64_t mesh_pending_step_ = 0;
  double mesh_pending_time_ = 0;
  bool loads_pending_ = false;        // the body loads of the last pass are not summed yet
  std::int64_t loads_touching_ = 0;  // its particles touching a mesh
};

DeviceEngine::DeviceEngine(host::ParticleArrays particles, host::MeshSet meshes, std::vector<ContactParams> params,
                           int num_materials, host::EngineSettings settings)
    : num_materials_(num_materials), settings_(settings), meshes_(std::move(meshes)) {
  n_ = particles.size();
  sb_ = Exec{static_cast<std::int64_t>(settings_.parallel_min), cache_.get(), &waits_};
  if (n_ >= (std::size_t(1) << 31)) throw std::runtime_error("device engine: at most 2^31 - 1 particles");
  for (Vec3& x : particles.x) x = wrap_far(settings_.periodic, x);
#define DEM_UPLOAD_FIELD(T, name) upload(sb_, p_.name, particles.name);
  DEM_PARTICLE_FIELDS(DEM_UPLOAD_FIELD)
#undef DEM_UPLOAD_FIELD
  upload(sb_, params_, params);
  table_ = params;
  all_models_ = std::any_of(params.begin(), params.end(), [](const ContactParams& q) { return needs_all_models(q); });
  with_roll_ = std::any_of(params.begin(), params.end(), [](const ContactParams& q) { return uses_second_history(q); });
  for (real r : particles.radius) r_max_ = std::max(r_max_, r);
  load_sizing_.start(settings_, num_materials_, particles.material, particles.radius);
  quantum_ = load_sizing_.quantum(table_, num_materials_);
  skin_ = settings_.skin >= 0 ? settings_.skin : real(0.5) * r_max_;
  if (settings_.periodic.any()) host::check_periodic_box(settings_.periodic, r_max_, mesh_skin_max(skin_, settings_.skin < 0));
  choose_broad_phase();

  // Meshes: the host copy at t = 0 supplies the reference normals; the device holds the rest.
  meshes_.update(0);
  motions_ = meshes_.motions();
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
  upload(sb_, d_bodies_, motions_);
  upload(sb_, d_knots_, meshes_.knots);
  upload(sb_, d_frames_, meshes_.frames);
  upload(sb_, d_ref_vertices_, meshes_.ref_vertices);
  upload(sb_, d_vertices_, meshes_.vertices);
  upload(sb_, d_ref_normals_, meshes_.ref_normals);
  upload(sb_, d_normals_, meshes_.normals);
  // pose_ahead's buffers, here rather than at their first use (no step waits for them)
  ensure(sb_, ahead_frames_, meshes_.frames.size());
  ensure(sb_, ahead_vertices_, d_vertices_.size());
  ensure(sb_, ahead_normals_, d_normals_.size());
  upload(sb_, d_elem_offsets_, meshes_.elem_offsets);
  upload(sb_, d_elem_vertices_, meshes_.elem_vertices);
  upload(sb_, d_elem_body_, meshes_.elem_body);
  meshes_step_ = 0;

  assign(sb_, mesh_count_, n_, std::uint8_t(0));
  assign(sb_, mesh_block_, n_, std::int32_t(-1));  // blocks come with the first candidate lists
  resize(sb_, pair_touching_count_, n_);
  resize(sb_, counts_, n_ + 1);
  body_force_.assign(motions_.size(), Vec3{0, 0, 0});
  body_torque_.assign(motions_.size(), Vec3{0, 0, 0});
  assign(sb_, d_body_force_, motions_.size(), Vec3{0, 0, 0});
  assign(sb_, d_body_torque_, motions_.size(), Vec3{0, 0, 0});
}

MeshView DeviceEngine::mview() {
  return MeshView{raw(d_bodies_),
                  static_cast<index_t>(d_bodies_.size()),
                  d_knots_.empty() ? nullptr : raw(d_knots_),
                  d_frames_.empty() ? nullptr : raw(d_frames_),
                  raw(d_ref_vertices_),
                  raw(d_vertices_),
                  static_cast<index_t>(d_vertices_.size()),
                  raw(d_elem_offsets_),
                  raw(d_elem_vertices_),
                  raw(d_elem_body_),
                  raw(d_ref_normals_),
                  raw(d_normals_),
                  static_cast<index_t>(d_elem_body_.size()),
                  mesh_time_};
}

// ---------------------------------------------------------------------------------------------
// Mesh motion

void DeviceEngine::move_meshes(double t) {
  Timer timer(clock_, times_.mesh_motion);
  mesh_time_ = t;
  // The bodies' frames on the host (the engines' one evaluation, core/engine/views.hpp), then the
  // vertices and normals on the device, unless no body moved since they were last posed (static
  // walls: the vertices are a function of the frames alone, so they would come out the same).
  if (!meshes_.update_frames(t) && meshes_posed_) return;
  const std::vector<BodyFrame>& frames = meshes_.frames;
  if (d_frames_.size() != frames.size()) upload(sb_, d_frames_, frames);
  else write_frames(frames, d_frames_);
  meshes_posed_ = true;
  pose_meshes(mview());
}

// frames into out (as long), through kernel parameters (WriteFrames): no wait.
void DeviceEngine::write_frames(const std::vector<BodyFrame>& frames, dvec<BodyFrame>& out) {
  for (std::size_t b0 = 0; b0 < frames.size(); b0 += kFramesPerLaunch) {
    WriteFrames w{};
    const std::size_t count = std::min<std::size_t>(kFramesPerLaunch, frames.size() - b0);
    const auto first = frames.begin() + static_cast<std::ptrdiff_t>(b0);
    std::copy(first, first + static_cast<std::ptrdiff_t>(count), w.frame);
    w.out = raw(out) + b0;
    for_each_index(sb_, static_cast<std::int64_t>(count), w);
  }
}

// v's vertices and normals from its frames and reference pose.
void DeviceEngine::pose_meshes(const MeshView& v) {
  for_each_index(sb_, v.num_vertices, [v] DEM_HD(std::int64_t k) { move_mesh_vertex(v, static_cast<index_t>(k)); });
  for_each_index(sb_, v.num_elements, [v] DEM_HD(std::int64_t e) { move_mesh_normal(v, static_cast<index_t>(e)); });
}

// The meshes at time_ (the next evaluation's), for check_health's kept mesh lists' check: the
// present pose where no body moves in between (static walls), else the bodies' frames at time_
// (on the host, as move_meshes takes them) and the vertices and normals they give, in spare
// buffers. The step's move_meshes poses the same in place (the same functions: the same bits).
MeshView DeviceEngine::pose_ahead() {
  Timer timer(clock_, times_.mesh_motion);
  const std::size_t nb = meshes_.bodies.size();
  ahead_frames_host_.resize(nb);
  bool same = meshes_posed_ && meshes_.frames.size() == nb;
  for (std::size_t b = 0; b < nb; ++b) {
    ahead_frames_host_[b] = body_frame(meshes_.bodies[b], meshes_.knots.data(), time_);
    same = same && std::memcmp(&ahead_frames_host_[b], &meshes_.frames[b], sizeof(BodyFrame)) == 0;
  }
  if (same) return mview();
  write_frames(ahead_frames_host_, ahead_frames_);  // (the buffers sized by the constructor)
  MeshView v = mview();
  // (the vertices of no body stay where they are: copied from the present pose)
  launch(v.num_vertices, sb_, [&](auto pol) {
    thrust::copy(pol, d_vertices_.begin(), d_vertices_.end(), ahead_vertices_.begin());
  });
  v.frames = raw(ahead_frames_);
  v.vertices = raw(ahead_vertices_);
  v.normals = raw(ahead_normals_);
  v.time = time_;
  pose_meshes(v);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Neighbour list

// The broad phase the settings ask for. The HGrid's levels come from the radii grown by the
// smallest half skin (here, where the host keeps no copy of the reaches; the host engine uses the
// reaches of each rebuild): chosen at construction and after edits, with the top level stretched
// to the largest reach at each rebuild.
void DeviceEngine::choose_broad_phase() {
  const host::BroadPhaseSpec& spec = settings_.broad_phase;
  if (spec.method == host::BroadPhaseMethod::Bsp)
    throw std::invalid_argument("broad_phase.method: bsp runs on the host engine only (--device cpu); the device "
                                "engine has grid, hgrid and auto");
  std::vector<real> radius;
  std::vector<Vec3> pos;
  download(sb_, p_.radius, n_, radius);
  download(sb_, p_.x, n_, pos);
  const double volume = host::search_volume(pos, r_max_);
  // search radii: the radius plus the fixed half skin, or at least the smallest adaptive one
  for (real& r : radius) r = settings_.skin >= 0 ? r + real(0.5) * settings_.skin : r * (1 + kMinHalfSkin);
  use_hgrid_ = spec.method == host::BroadPhaseMethod::HGrid ||
               (spec.method == host::BroadPhaseMethod::Auto && host::auto_wants_hgrid(radius, volume));
  report_ = host::BroadPhaseReport{use_hgrid_ ? "hgrid" : "grid", {}};
  if (!use_hgrid_) return;
  if (!spec.cell_sizes.empty()) {
    hgrid_.count = static_cast<int>(std::min<std::size_t>(spec.cell_sizes.size(), kMaxHGridLevels));
    for (int h = 0; h < hgrid_.count; ++h) hgrid_.cell[h] = real(spec.cell_sizes[h]);
  } else {
    hgrid_ = host::choose_hgrid_levels(radius, volume, spec.levels);
  }
}

// Whether this state's skin tests would decide anything: not where a rebuild is due anyway.
bool DeviceEngine::rebuild_due() const {
  return needs_build_ ||
         (settings_.neighbour_interval > 0 && steps_ - last_build_step_ >= std::uint64_t(settings_.neighbour_interval));
}

// The skin tests of the present positions, into rb on the device (no wait): the counts past the
// pair and mesh skins, then the kept list's check (which reads them on the device; it finds
// nothing where no particle is past its skin), and the kept mesh lists' check where the last step
// had particles past their mesh skins (they stay past until the lists are renewed); elsewhere
// update_mesh_candidates checks on its own, should a count turn out non-zero. The mesh skins are
// tested with the travel the mesh pass will test them with (update_mesh_candidates): the
// positions do not change in between. The kept mesh lists' check meets the meshes as the next
// evaluation poses them: the present pose in rebuild_if_needed, `next` (pose_ahead) ahead of the
// step in check_health. What it ran, for take_skin_tests.
DeviceEngine::SkinTests DeviceEngine::launch_skin_tests(StepReadback* rb, const MeshView* next) {
  const Vec3* x = raw(p_.x);
  const Vec3* x0 = raw(x_at_build_);
  const real* s2 = raw(half_skin2_);
  const PeriodicBox pb = settings_.periodic;
  SkinTests run;
  run.mesh = have_candidates_ && !d_elem_body_.empty();
  const MeshSkinUsed mesh_used{x, run.mesh ? raw(x_at_mesh_build_) : nullptr, run.mesh ? raw(mesh_skin_) : nullptr, pb,
                              mesh_travel_ + mesh_step_};
  run.touching = touch_pending_;
  const std::int32_t* touching = run.touching ? raw(pair_touching_count_) : nullptr;
  const bool mesh = run.mesh;
  reduce_index_into(sb_, static_cast<std::int64_t>(n_), [=] DEM_HD(std::int64_t i) {
    const real d2 = norm2(nearest_image(pb, x[i] - x0[i]));
    const bool mesh_past = mesh && mesh_used(i);
    return PastSkins{d2 > s2[i] ? 1 : 0, half_skin_excess(d2, s2[i]), mesh_past ? 1 : 0,
                     touching != nullptr ? std::int64_t(touching[i]) : std::int64_t(0)};
  }, PastSkins{0, 0, 0, 0}, PastSkinsSum{}, &rb->skins);
  run.can_keep = settings_.skin != 0 && have_list_;
  if (run.can_keep) list_holds_on_device(rb, &rb->list_broken);
  run.mesh_check = mesh_check_wanted();
  if (run.mesh_check) mesh_lists_check(rb, mesh_travel_ + mesh_step_, &rb->mesh_broken, next);
  return run;
}

// The decisions from the copy of rb that launch_skin_tests filled (the counts of touching pairs
// are the caller's: folded where the copy comes back).
void DeviceEngine::take_skin_tests(const SkinTests& run, const StepReadback& r) {
  const PastSkins& p = r.skins;
  const bool holds = run.can_keep && few_past_skins(p.past, static_cast<std::int64_t>(n_)) && r.list_broken == 0;
  needs_build_ = p.past != 0 && !holds;
  if (p.past != 0 && !needs_build_) ++stats_.lists_kept;
  if (run.mesh && !needs_build_) {  // (a rebuild re-sorts: new mesh lists)
    mesh_past_ = p.mesh_past;
    mesh_broken_ = run.mesh_check ? r.mesh_broken : -1;
  }
}

void DeviceEngine::rebuild_if_needed() {
  mesh_past_ = -1;
  mesh_broken_ = -1;
  // The driver's health check ran this state's skin tests in its copy (check_health), unless
  // something changed since.
  const bool ahead = ahead_valid_ && ahead_step_ == steps_;
  ahead_valid_ = false;
  if (!rebuild_due()) {
    if (ahead) {
      take_skin_tests(ahead_run_, ahead_readback_);
    } else {
      // A pair left out of the list was farther apart than reach_a + reach_b: while no particle
      // has moved its half skin, no such pair can touch. Past that, list_holds_on_device checks
      // the few that have (as on the host engine). The tests, then one copy back: one wait.
      ensure(sb_, readback_, 1);
      const SkinTests run = launch_skin_tests(raw(readback_));
      const StepReadback r = read_one(sb_, readback_, 0);
      if (run.touching) fold_touching(r.skins.touching);
      apply_mesh_readback(r);  // (the last mesh pass's, where it waits: before a re-sort moves its slots)
      take_skin_tests(run, r);
    }
  } else {
    needs_build_ = true;  // (due by the interval, or already)
  }
  if (needs_build_) {
    Timer timer(clock_, times_.broad_phase);
    rebuild();
  }
}

// Whether the list still holds every touching pair although some particles have moved past their
// half skins: the host engine's Engine::list_holds (host/engine/engine.cpp, which gives the
// reasoning), here in one pass over the particles, the others returning at once. It reads the
// step's skin tests (rb->skins) on the device and writes 1 to *broken where the list fails; it
// finds nothing where no particle is past its skin or too many are (few_past_skins: the caller
// rebuilds then). It runs on every step, also where it will find nothing (a short pass, and no
// wait: the host learns the counts only with its result; on the OpenMP system too, so that the
// tests run what CUDA runs). A particle p past its skin looks for partners touching it now
// without a pair among the particles the last build put in the cells around it: those within
// (r_p + E) + reach_j of it (E: the largest excess over a skin), which the 27 cells of size
// 2 max_reach hold while r_p + E < max_reach, the 125 while r_p + E < 3 max_reach (beyond, the
// list ends), or the HGrid's cells (HGridView::visit_cells).
void DeviceEngine::list_holds_on_device(const StepReadback* rb, int* broken) {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const Vec3* x0 = raw(x_at_build_);
  const real* s2 = raw(half_skin2_);
  const ParticleView pv = pview();
  const PeriodicBox pb = settings_.periodic;
  const real max_reach = built_max_reach_;
  const std::int32_t* start = raw(cell_start_);
  const CellNeighbours cells{built_keys_, x0, nullptr, start, pb};
  const std::int64_t* off = raw(nbr_offsets_);
  const std::int64_t* nid = raw(nbr_id_);
  const bool h_on = use_hgrid_;
  const HGridView hv{built_levels_, pb, start, nullptr, x0, nullptr, h_on ? raw(hlevel_) : nullptr,
                     h_on ? raw(hcell_) : nullptr};
  const auto body = [=] DEM_HD(std::int64_t i) -> int {
    if (rb->skins.past == 0 || !few_past_skins(rb->skins.past, n)) return 0;
    const Vec3 xi = pv.x[i];
    if (!(norm2(nearest_image(pb, xi - x0[i])) > s2[i])) return 0;
    const real rho = (pv.radius[i] + rb->skins.excess) * real(1.000001);  // (rounding never drops a partner)
    int bad = 0;
    const auto check = [&](std::int64_t j) {  // touching now, and no pair in i's row (by partner id)
      if (j == i || bad || !pair_overlaps(pv, static_cast<index_t>(i), static_cast<index_t>(j))) return;
      if (!sorted_contains(nid + off[i], nid + off[i + 1], pv.id[j])) bad = 1;
    };
    if (h_on) {
      hv.visit_cells(xi, rho, hv.g.count - 1, [&](std::int32_t k, int level, Int3 q) {
        if (hv.el[k] == level && hv.ec[k].x == q.x && hv.ec[k].y == q.y && hv.ec[k].z == q.z) check(k);
      });
      return bad;
    }
    // cells of 2 max_reach: partners within rho + max_reach lie within `span` cells
    const real span = std::floor((rho + max_reach) / (2 * max_reach)) + 1;
    if (!(span <= 2)) return 1;  // beyond 5 x 5 x 5 cells
    cells.around<2>(xi, check, static_cast<int>(span));
    return bad;
  };
  ensure(sb_, counts_, n_ + 1);  // (scratch: its other uses write it before they read it)
  any_index_into(sb_, n, body, raw(counts_), broken);
}

// Each particle's half skin, as on the host engine (core/engine/phases.hpp): fixed, or what it
// can travel in kSkinSteps steps at the largest speed around it (own, partners', moving bodies').
void DeviceEngine::update_half_skins() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  ensure(sb_, reach_, n_);
  ensure(sb_, half_skin2_, n_);
  real* reach = raw(reach_);
  real* s2 = raw(half_skin2_);
  const real* radius = raw(p_.radius);
  if (settings_.skin >= 0) {
    const real skin = skin_;
    for_each_index(sb_, n, [reach, s2, radius, skin] DEM_HD(std::int64_t i) {
      reach[i] = radius[i] + real(0.5) * skin;
      s2[i] = real(0.25) * skin * skin;
    });
    return;
  }
  ensure(sb_, speed_, n_);
  real* speed = raw(speed_);
  const Vec3* v = raw(p_.v);
  const Vec3* x = raw(p_.x);
  for_each_index(sb_, n, [speed, v] DEM_HD(std::int64_t i) { speed[i] = norm(v[i]); });
  const bool list = have_list_, cands = have_candidates_;
  const std::int64_t* off = list ? raw(nbr_offsets_) : nullptr;
  const std::int32_t* nbr = list ? raw(nbr_index_) : nullptr;
  const std::int64_t* coff = cands ? raw(cand_offsets_) : nullptr;
  const std::int32_t* cand = cands ? raw(cand_) : nullptr;
  const index_t* elem_body = raw(d_elem_body_);
  const MeshBodyMotion* bodies = raw(d_bodies_);
  const BodyFrame* frames = d_frames_.empty() ? nullptr : raw(d_frames_);
  const real dt = settings_.dt, r_max = r_max_;
  for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
    real s = speed[i];
    if (list)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k) s = dem_max(s, speed[nbr[k]]);
    if (cands)
      for (std::int64_t k = coff[i]; k < coff[i + 1]; ++k)
        s = dem_max(s, body_speed_near(bodies[elem_body[cand[k]]], frames[elem_body[cand[k]]].center, x[i], radius[i]));
    const real h = adaptive_half_skin(s, radius[i], dt, r_max);
    reach[i] = radius[i] + h;
    s2[i] = h * h;
  });
}

// Re-sorts every per-particle array by `order` (new index i takes old order[i]); the mesh slots
// stay where they are: each particle takes its count and its block along.
void DeviceEngine::resort(const dvec<std::int32_t>& order) {
#define DEM_GATHER_FIELD(T, name) reorder(p_.name, order);
  DEM_PARTICLE_FIELDS(DEM_GATHER_FIELD)
#undef DEM_GATHER_FIELD
  reorder(reach_, order);
  reorder(half_skin2_, order);
  reorder(mesh_count_, order);
  reorder(mesh_block_, order);
  have_candidates_ = false;  // candidate lists are per index: renewed at the next step
}

// Rebuild: skins, cell keys, a stable sort by key (every rebuild re-sorts: the same permutation on
// CUDA's radix sort and the OpenMP merge sort), cell ranges, then the full neighbour list by
// count -> scan -> fill, rows sorted by partner id, and the history carried over by a merge of
// each particle's new row with its old one.
void DeviceEngine::rebuild() {
  std::int64_t n = static_cast<std::int64_t>(n_);
  update_half_skins();
  // 1. The grid: cells of twice the largest reach, so every partner lies in the 27 cells around.
  // (Wide size distributions need the hierarchical grid; until then they are correct but slower.)
  const Vec3* x = raw(p_.x);
  const real* reach = raw(reach_);
  const BoxAndReach extent = reduce_index(sb_, n, [x, reach] DEM_HD(std::int64_t i) {
    return BoxAndReach{Box{x[i], x[i]}, reach[i]};
  }, BoxAndReach{empty_box(), real(0)}, BoxAndReachUnion{});
  const Box box = extent.box;
  const real max_reach = extent.reach;
  GridKeys gk;
  const PeriodicBox& pb = settings_.periodic;
  Vec3 origin = box.lo, covered_hi = box.hi;
  cover_periods(pb, origin, covered_hi, 0);  // periodic axes: cells tile the period from its lower face
  gk.grid.origin = origin;
  gk.grid.cell_size = std::max(real(2) * max_reach, std::numeric_limits<real>::min());
  gk.grid.wrap = periodic_cells(pb, gk.grid.cell_size);
  Int3 top = n ? cell_coords(box.hi, gk.grid) : Int3{0, 0, 0};
  if (gk.grid.wrap.x) top.x = gk.grid.wrap.x - 1;
  if (gk.grid.wrap.y) top.y = gk.grid.wrap.y - 1;
  if (gk.grid.wrap.z) top.z = gk.grid.wrap.z - 1;
  const double cells = (double(top.x) + 1) * (double(top.y) + 1) * (double(top.z) + 1);
  gk.bounded = cells <= std::max(8.0 * double(n), 4096.0);
  gk.grid.dims = gk.bounded ? Int3{top.x + 1, top.y + 1, top.z + 1} : Int3{0, 0, 0};
  gk.grid.hash_size = static_cast<std::uint32_t>(gk.bounded ? cells : double(std::max<std::int64_t>(1, 2 * n)));
  HGridLevels hg = hgrid_;
  if (use_hgrid_) {  // the levels' cells tile the periods; the top level holds the largest reach
    hg.cell[hg.count - 1] = std::max(hg.cell[hg.count - 1], real(2) * max_reach);
    hg.origin = gk.grid.origin;
    for (int h = 0; h < hg.count; ++h)
      hg.wrap[h] = periodic_cells(pb, hg.cell[h]);
    hgrid_set_keys(hg, pb, covered_hi, n);
    gk.grid.hash_size = hg.hash_size;
    for (int h = 0; h < hg.count; ++h) {  // particles per level (empty levels are not searched)
      const HGridLevels lv = hg;
      hg.population[h] = static_cast<std::int32_t>(sum_index<std::int64_t>(sb_, n, [lv, reach, h] DEM_HD(std::int64_t i) {
        return hgrid_level(lv, reach[i]) == h ? std::int64_t(1) : std::int64_t(0);
      }));
    }
    report_.method = "hgrid";
    report_.cell_sizes.assign(hg.cell, hg.cell + hg.count);
  } else {
    report_.method = "grid";
    report_.cell_sizes = {double(gk.grid.cell_size)};
  }
  built_keys_ = gk;
  built_levels_ = hg;
  built_max_reach_ = max_reach;
  // 2. Keys and the stable sort; every per-particle array follows.
  ensure(sb_, cell_keys_, n_);
  std::uint32_t* keys = raw(cell_keys_);
  const std::uint8_t* gone = remove_pending_ ? raw(remove_flag_) : nullptr;
  const bool h_on = use_hgrid_;
  for_each_index(sb_, n, [keys, x, gk, gone, h_on, hg, pb, reach] DEM_HD(std::int64_t i) {
    if (gone && gone[i]) keys[i] = 0xFFFFFFFFu;  // removed: sorted last
    else if (h_on) {
      const int h = hgrid_level(hg, reach[i]);
      keys[i] = hgrid_key(hg, hgrid_cell(hg, pb, h, x[i]), h);
    } else keys[i] = gk.key(home_cell(x[i], gk.grid));
  });
  resize(sb_, order_, n_);
  launch(n, sb_, [&](auto pol) { thrust::sequence(pol, order_.begin(), order_.end()); });
  launch(n, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, cell_keys_.begin(), cell_keys_.begin() + n, order_.begin()); });
  resort(order_);
  if (remove_pending_) {  // the removed particles are the last ones now: cut them off
    n_ -= remove_pending_;
    n = static_cast<std::int64_t>(n_);
    remove_pending_ = 0;
  }
  // 3. Cell ranges: cell c holds sorted particles [start[c], start[c + 1]).
  ensure(sb_, cell_start_, static_cast<std::size_t>(gk.grid.hash_size) + 1);  // (grown, never shrunk)
  launch(n, sb_, [&](auto pol) { thrust::lower_bound(pol, cell_keys_.begin(), cell_keys_.begin() + n,
                      thrust::counting_iterator<std::uint32_t>(0),
                      thrust::counting_iterator<std::uint32_t>(gk.grid.hash_size + 1), cell_start_.begin()); });
  // 4. Neighbour rows: count, scan, fill, sort each row by partner id.
  x = raw(p_.x);
  reach = raw(reach_);
  const std::int64_t* id = raw(p_.id);
  const std::int32_t* start = raw(cell_start_);
  const CellNeighbours visit{gk, x, reach, start, settings_.periodic};
  HGridView hv{hg, pb, start, nullptr, x, reach, nullptr, nullptr};  // in entry order: no indirection
  if (h_on) {  // levels and home cells in the sorted order
    ensure(sb_, hlevel_, n_);
    ensure(sb_, hcell_, n_);
    std::uint8_t* lev = raw(hlevel_);
    Int3* cel = raw(hcell_);
    for_each_index(sb_, n, [lev, cel, x, reach, hg, pb] DEM_HD(std::int64_t i) {
      const int h = hgrid_level(hg, reach[i]);
      lev[i] = static_cast<std::uint8_t>(h);
      cel[i] = hgrid_cell(hg, pb, h, x[i]);
    });
    hv.el = lev;
    hv.ec = cel;
  }
  std::int64_t* counts = raw(counts_);
  for_each_index(sb_, n, [visit, hv, h_on, counts] DEM_HD(std::int64_t i) {
    std::int64_t c = 0;
    auto one = [&c](std::int32_t) { ++c; };
    if (h_on) hv.visit(i, hv.g.count - 1, one);
    else visit(i, one);
    counts[i] = c;
  });
  launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, counts_.begin() + n, 1, 0); });
  // The old list becomes the carry source (its rows are by the index order before the re-sort).
  nbr_offsets_.swap(old_offsets_);
  nbr_id_.swap(old_id_);
  nbr_xi_.swap(old_xi_);
  nbr_roll_.swap(old_roll_);
  nbr_touching_.swap(old_touching_);
  resize(sb_, nbr_offsets_, n_ + 1);
  launch(n, sb_, [&](auto pol) { thrust::exclusive_scan(pol, counts_.begin(), counts_.begin() + n + 1, nbr_offsets_.begin()); });
  const std::int64_t total = read_one(sb_, nbr_offsets_, n_);
  nbr_total_ = total;
  // (grown, never shrunk: a buffer that grows is a wait; the first `total` entries are the list)
  ensure(sb_, nbr_index_, static_cast<std::size_t>(total));
  ensure(sb_, nbr_id_, static_cast<std::size_t>(total));
  ensure(sb_, nbr_xi_, static_cast<std::size_t>(total));
  if (with_roll_) ensure(sb_, nbr_roll_, static_cast<std::size_t>(total));
  ensure(sb_, nbr_touching_, static_cast<std::size_t>(total));
  std::int64_t* off = raw(nbr_offsets_);
  std::int32_t* nbr = raw(nbr_index_);
  std::int64_t* nid = raw(nbr_id_);
  for_each_index(sb_, n, [visit, hv, h_on, off, nbr, nid, id] DEM_HD(std::int64_t i) {
    const std::int64_t b = off[i];
    std::int64_t w = b;
    auto put = [&w, nbr, nid, id](std::int32_t j) {
      nbr[w] = j;
      nid[w] = id[j];
      ++w;
    };
    if (h_on) hv.visit(i, hv.g.count - 1, put);
    else visit(i, put);
    for (std::int64_t s = b + 1; s < w; ++s) {  // insertion sort by partner id: rows are short
      const std::int64_t ks = nid[s];
      const std::int32_t js = nbr[s];
      std::int64_t m = s;
      for (; m > b && nid[m - 1] > ks; --m) {
        nid[m] = nid[m - 1];
        nbr[m] = nbr[m - 1];
      }
      nid[m] = ks;
      nbr[m] = js;
    }
  });
  // 5. History carry: new row of i against the old row of the particle it was (order_[i]).
  const SplitHistory hist = history_view(nbr_xi_, nbr_roll_);
  std::uint8_t* touch = raw(nbr_touching_);
  if (have_list_) {
    const std::int32_t* ord = raw(order_);
    const std::int64_t* ooff = raw(old_offsets_);
    const std::int64_t* oid = raw(old_id_);
    const SplitHistory ohist = history_view(old_xi_, old_roll_);
    const std::uint8_t* otouch = raw(old_touching_);
    for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
      const std::int64_t o = ooff[ord[i]], o_end = ooff[ord[i] + 1];
      carry_history_row(nid + off[i], off[i + 1] - off[i], oid + o, ohist.from(o), otouch + o, o_end - o, hist.from(off[i]),
                        touch + off[i]);
    });
  } else {
    launch(total, sb_, [&](auto pol) { thrust::fill_n(pol, nbr_xi_.begin(), total, Vec3{0, 0, 0}); });
    if (with_roll_) launch(total, sb_, [&](auto pol) { thrust::fill_n(pol, nbr_roll_.begin(), total, Vec3{0, 0, 0}); });
    launch(total, sb_, [&](auto pol) { thrust::fill_n(pol, nbr_touching_.begin(), total, std::uint8_t(0)); });
  }
  have_list_ = true;
  resize(sb_, x_at_build_, n_);
  launch(n, sb_, [&](auto pol) { thrust::copy(pol, p_.x.begin(), p_.x.begin() + n, x_at_build_.begin()); });
  last_build_step_ = steps_;
  needs_build_ = false;
  ++stats_.broad_phase_builds;
}

// ---------------------------------------------------------------------------------------------
// Mesh candidates (santasusana2016 Sect. 3.1): bins over the elements in the intersection domain
// of particles and meshes, renewed together when some particle's displacement plus the mesh travel
// since the last renewal exceeds the mesh skin (as on the host engine).

// Slot blocks for the particles with candidate elements, numbered in particle order (count, scan,
// fill), each particle's used slots copied from its old block; a particle without candidates can
// touch no element before the next lists, so its contacts end here (the next mesh pass would end
// them anyway, with the same result). The host engine's assign_mesh_blocks, on the device.
void DeviceEngine::assign_mesh_blocks(std::int64_t blocks) {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const std::int64_t* coff = raw(cand_offsets_);
  std::int64_t* first = raw(counts_);  // n + 1: 1 for a particle with candidates, then its block
  for_each_index(sb_, n, [coff, first] DEM_HD(std::int64_t i) { first[i] = coff[i + 1] > coff[i] ? 1 : 0; });
  launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, counts_.begin() + n, 1, 0); });
  launch(n, sb_, [&](auto pol) { thrust::exclusive_scan(pol, counts_.begin(), counts_.begin() + n + 1, counts_.begin()); });
  const std::size_t slots = static_cast<std::size_t>(blocks) * kMaxMeshContacts;
  ensure(sb_, tmp_entity_, slots);
  ensure(sb_, tmp_normal_, slots);
  ensure(sb_, tmp_xi_, slots);
  if (with_roll_) ensure(sb_, tmp_roll_, slots);
  ensure(sb_, tmp_block_, n_);
  ensure(sb_, slot_force_, slots);  // written by the mesh pass before they are read
  ensure(sb_, slot_torque_, slots);
  ensure(sb_, block_particle_, static_cast<std::size_t>(blocks));
  ensure(sb_, mesh_force_, static_cast<std::size_t>(blocks));
  ensure(sb_, mesh_torque_, static_cast<std::size_t>(blocks));
  ensure(sb_, mesh_stats_, static_cast<std::size_t>(blocks));
  // the body loads' tree, for as many particles touching a mesh as have blocks (sum_body_loads)
  const std::size_t partials = static_cast<std::size_t>(body_partials_size(blocks) * std::int64_t(motions_.size()));
  ensure(sb_, partial_force_, partials);
  ensure(sb_, partial_torque_, partials);
  std::int32_t* bp = raw(block_particle_);
  std::uint8_t* count = raw(mesh_count_);
  const std::int32_t* b0 = raw(mesh_block_);
  std::int32_t* b1 = raw(tmp_block_);
  const EntityContact* e0 = raw(mesh_entity_);
  const Vec3* n0 = raw(mesh_normal_);
  const SplitHistory h0 = history_view(mesh_xi_, mesh_roll_);
  EntityContact* e1 = raw(tmp_entity_);
  Vec3* n1 = raw(tmp_normal_);
  const SplitHistory h1 = history_view(tmp_xi_, tmp_roll_);
  for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
    if (coff[i + 1] == coff[i]) {
      count[i] = 0;
      b1[i] = -1;
      return;
    }
    b1[i] = static_cast<std::int32_t>(first[i]);
    bp[first[i]] = static_cast<std::int32_t>(i);
    // (a particle with used slots has a block)
    move_mesh_slots(count[i], static_cast<std::int64_t>(b0[i]) * kMaxMeshContacts, first[i] * kMaxMeshContacts, e0, n0, h0,
                    e1, n1, h1);
  });
  mesh_entity_.swap(tmp_entity_);
  mesh_normal_.swap(tmp_normal_);
  mesh_xi_.swap(tmp_xi_);
  mesh_roll_.swap(tmp_roll_);
  mesh_block_.swap(tmp_block_);
  mesh_blocks_ = blocks;
}

// Whether the mesh candidate lists still hold every element each particle meets although some
// particles have moved past their mesh skins: the host engine's Engine::mesh_lists_hold
// (host/engine/engine.cpp, which gives the reasoning), in one pass over the particles, the others
// returning at once. A particle past its skin (the skin grown by `travel`, the mesh pass's) searches
// the last renewal's bins for elements within r + travel of it (those the sphere so grown meets
// now) and finds each one it meets itself now in its list; a search reaching beyond the particles'
// box grown by what the bins hold ends the lists. With rb, it reads the step's count past the mesh
// skins there (rb->skins.mesh_past) and finds nothing where it is 0 or too many (few_past_skins:
// the lists are renewed then); without, the caller has checked the count. It writes 1 to *broken
// (device memory) where the lists fail, else 0.
void DeviceEngine::mesh_lists_check(const StepReadback* rb, real travel, int* broken, const MeshView* at) {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const real* skin = raw(mesh_skin_);
  const PeriodicBox pb = settings_.periodic;
  const MeshSkinUsed used{raw(p_.x), raw(x_at_mesh_build_), skin, pb, travel};
  const MeshView mv = at != nullptr ? *at : mview();
  const Box held = mesh_held_;
  const bool bins = mesh_bins_used_;
  const MeshCandidateQuery query{mv, mesh_dom_, mesh_bins_, bins ? raw(bin_start_) : nullptr, bins ? raw(bin_elems_) : nullptr,
                                 raw(elem_lo_), raw(elem_hi_), raw(p_.x), raw(p_.radius), skin, pb};
  const std::int64_t* coff = raw(cand_offsets_);
  const std::int32_t* cand = raw(cand_);
  ensure(sb_, counts_, n_ + 1);  // (scratch: its other uses write it before they read it)
  any_index_into(sb_, n, [=] DEM_HD(std::int64_t i) -> std::int64_t {
    if (rb != nullptr && (rb->skins.mesh_past == 0 || !few_past_skins(rb->skins.mesh_past, n))) return 0;
    const Vec3 c = query.x[i];
    if (!used(i)) return 0;
    const real r = query.radius[i], reach = (r + travel) * real(1.000001);  // (rounding never drops one)
    if (!(c.x - reach >= held.lo.x && c.y - reach >= held.lo.y && c.z - reach >= held.lo.z && c.x + reach <= held.hi.x &&
          c.y + reach <= held.hi.y && c.z + reach <= held.hi.z))
      return 1;  // beyond what the bins hold
    if (!bins) return 0;  // no element within reach of any particle's box
    std::int64_t bad = 0;
    query.search(&c, 0, reach, [&](std::int32_t e) {  // (i's list is by element)
      if (!sorted_contains(cand + coff[i], cand + coff[i + 1], e) && element_meets_sphere(mv, e, c, r)) bad = 1;
    });
    return bad;
  }, raw(counts_), broken);
}

// mesh_lists_check where rebuild_if_needed has not run it: its own copy back.
bool DeviceEngine::mesh_lists_hold(std::int64_t past) {
  if (settings_.skin == 0 || !few_past_skins(past, static_cast<std::int64_t>(n_))) return false;
  ensure(sb_, readback_, 1);
  StepReadback* rb = raw(readback_);
  mesh_lists_check(nullptr, mesh_travel_, &rb->mesh_broken);
  return read_one(sb_, readback_, 0).mesh_broken == 0;
}

void DeviceEngine::update_mesh_candidates() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  mesh_travel_ += mesh_step_;
  const Vec3* x = raw(p_.x);
  bool renew = !have_candidates_;
  if (!renew) {
    const MeshSkinUsed used{x, raw(x_at_mesh_build_), raw(mesh_skin_), settings_.periodic, mesh_travel_};
    const std::int64_t past = mesh_past_ >= 0 ? mesh_past_ : sum_index<std::int64_t>(sb_, n, [used] DEM_HD(std::int64_t i) {
      return used(i) ? std::int64_t(1) : std::int64_t(0);
    });
    const int broken = mesh_broken_;
    mesh_past_ = -1;
    mesh_broken_ = -1;
    mesh_check_ahead_ = past != 0;
    const bool holds = past == 0 || (broken >= 0 ? few_past_skins(past, n) && broken == 0 : mesh_lists_hold(past));
    renew = !holds;
    if (past != 0 && holds) ++stats_.mesh_lists_kept;
  }
  if (!renew) return;
  Timer timer(clock_, times_.mesh_bins);
  // Each particle's mesh skin: fixed, or adaptive (core adaptive_mesh_skin, as on the host engine).
  ensure(sb_, mesh_skin_, n_);
  {
    real* skin = raw(mesh_skin_);
    const Vec3* v = raw(p_.v);
    const real* radius = raw(p_.radius);
    const bool adaptive = settings_.skin < 0;
    const real dt = settings_.dt, step = mesh_step_, skin_max = mesh_skin_max(skin_, adaptive);
    for_each_index(sb_, n, [skin, v, radius, adaptive, dt, step, skin_max] DEM_HD(std::int64_t i) {
      skin[i] = adaptive ? adaptive_mesh_skin(norm(v[i]), radius[i], dt, step, skin_max) : skin_max;
    });
  }
  const MeshView mv = mview();
  const std::int64_t ne = mv.num_elements;
  const real q = r_max_ + mesh_skin_max(skin_, settings_.skin < 0);  // the largest query radius
  // (a) the intersection domain of particles (grown by the query radius) and meshes.
  ensure(sb_, elem_lo_, static_cast<std::size_t>(ne));
  ensure(sb_, elem_hi_, static_cast<std::size_t>(ne));
  Vec3* elo = raw(elem_lo_);
  Vec3* ehi = raw(elem_hi_);
  for_each_index(sb_, ne, [mv, elo, ehi] DEM_HD(std::int64_t e) {
    const Polygon p = mv.polygon(static_cast<index_t>(e));
    Vec3 lo = p.v[0], hi = p.v[0];
    for (int k = 1; k < p.n; ++k) {
      lo = Vec3{dem_min(lo.x, p.v[k].x), dem_min(lo.y, p.v[k].y), dem_min(lo.z, p.v[k].z)};
      hi = Vec3{dem_max(hi.x, p.v[k].x), dem_max(hi.y, p.v[k].y), dem_max(hi.z, p.v[k].z)};
    }
    elo[e] = lo;
    ehi[e] = hi;
  });
  // the particles' box and the elements' in one reduction (indices n on: the elements)
  const Box none = empty_box();
  const TwoBoxes boxes = reduce_index(sb_, n + ne, [x, elo, ehi, n, none] DEM_HD(std::int64_t k) {
    return k < n ? TwoBoxes{Box{x[k], x[k]}, none} : TwoBoxes{none, Box{elo[k - n], ehi[k - n]}};
  }, TwoBoxes{none, none}, TwoBoxesUnion{});
  Box pbox = boxes.a;
  const Box mbox = boxes.b;
  const PeriodicBox& pb = settings_.periodic;
  cover_periods(pb, pbox.lo, pbox.hi, q);  // the searches near a face also run from the images across it
  // The bins hold the elements a skin farther around the particles than the lists need, for
  // mesh_lists_hold's searches from particles past their skins.
  const real reach = q + mesh_skin_max(skin_, settings_.skin < 0);
  const Vec3 grow{reach, reach, reach};
  pbox.lo -= grow;
  pbox.hi += grow;
  mesh_held_ = pbox;
  const Box dom{Vec3{std::max(pbox.lo.x, mbox.lo.x), std::max(pbox.lo.y, mbox.lo.y), std::max(pbox.lo.z, mbox.lo.z)},
                Vec3{std::min(pbox.hi.x, mbox.hi.x), std::min(pbox.hi.y, mbox.hi.y), std::min(pbox.hi.z, mbox.hi.z)}};
  const bool empty_domain = ne == 0 || n == 0 || dom.lo.x > dom.hi.x || dom.lo.y > dom.hi.y || dom.lo.z > dom.hi.z;
  auto in_domain = [dom, elo, ehi] DEM_HD(std::int64_t e) {
    return elo[e].x <= dom.hi.x && ehi[e].x >= dom.lo.x && elo[e].y <= dom.hi.y && ehi[e].y >= dom.lo.y &&
           elo[e].z <= dom.hi.z && ehi[e].z >= dom.lo.z;
  };
  // An element's bins: those its box clipped to the domain overlaps (c0 to c1), and a bound on
  // their number from its size alone (the bin size's test below).
  auto clipped_bins = [dom, elo, ehi] DEM_HD(std::int64_t e, const CellGrid& grid, Int3& c0, Int3& c1) {
    const Vec3 lo{dem_max(elo[e].x, dom.lo.x), dem_max(elo[e].y, dom.lo.y), dem_max(elo[e].z, dom.lo.z)};
    const Vec3 hi{dem_min(ehi[e].x, dom.hi.x), dem_min(ehi[e].y, dom.hi.y), dem_min(ehi[e].z, dom.hi.z)};
    c0 = cell_coords(lo, grid);
    c1 = cell_coords(hi, grid);
  };
  auto bins_bound = [elo, ehi] DEM_HD(std::int64_t e, real cell_size) {
    const Vec3 d = ehi[e] - elo[e];
    return std::int64_t(std::floor(d.x / cell_size) + 2) * std::int64_t(std::floor(d.y / cell_size) + 2) *
           std::int64_t(std::floor(d.z / cell_size) + 2);
  };
  // (c) bins of two query diameters, doubled while large elements would occupy too many (more
  // than 16 per element on average) or the box would have too many bins. The elements in the
  // domain, the bound and the bins at the first size come back in one copy; a larger size (rare)
  // takes its own bound and bins.
  CellGrid g{};
  g.origin = dom.lo;
  g.cell_size = std::max<real>(4 * q, std::numeric_limits<real>::min());
  const CellGrid g0 = g;
  const DomainCounts first =
      empty_domain ? DomainCounts{0, 0, 0}
                   : reduce_index(sb_, ne, [in_domain, clipped_bins, bins_bound, g0] DEM_HD(std::int64_t e) {
                       if (!in_domain(e)) return DomainCounts{0, 0, 0};
                       Int3 c0, c1;
                       clipped_bins(e, g0, c0, c1);
                       return DomainCounts{1, bins_bound(e, g0.cell_size),
                                           std::int64_t(c1.x - c0.x + 1) * (c1.y - c0.y + 1) * (c1.z - c0.z + 1)};
                     }, DomainCounts{0, 0, 0}, DomainCountsSum{});
  const std::int64_t in_dom = first.elements;
  std::int64_t blocks = 0;  // the particles with candidates (none where no element is in the domain)
  resize(sb_, cand_offsets_, n_ + 1);
  mesh_bins_used_ = in_dom != 0;
  if (in_dom == 0) {
    launch(n, sb_, [&](auto pol) { thrust::fill(pol, cand_offsets_.begin(), cand_offsets_.end(), std::int64_t(0)); });
    // (cand_ keeps its size: the offsets say every list is empty)
  } else {
    Int3 top{0, 0, 0};
    for (bool first_size = true;; first_size = false) {
      const real size = g.cell_size;
      const std::int64_t entries = first_size ? first.bound : sum_index<std::int64_t>(sb_, ne, [in_domain, bins_bound, size] DEM_HD(std::int64_t e) {
        return in_domain(e) ? bins_bound(e, size) : std::int64_t(0);
      });
      top = cell_coords(dom.hi, g);
      const double cells = (double(top.x) + 1) * (double(top.y) + 1) * (double(top.z) + 1);
      if (entries <= 16 * 8 * in_dom && cells <= std::max(1.0e6, 64.0 * double(in_dom))) break;
      g.cell_size *= 2;
    }
    g.dims = Int3{top.x + 1, top.y + 1, top.z + 1};
    g.hash_size = static_cast<std::uint32_t>(g.dims.x * g.dims.y * g.dims.z);
    // (d) every element into each bin its clipped box overlaps: count, scan, fill, stable sort.
    ensure(sb_, elem_entries_, static_cast<std::size_t>(ne) + 1);
    std::int64_t* ecount = raw(elem_entries_);
    auto bin_range = [clipped_bins, g] DEM_HD(std::int64_t e, Int3& c0, Int3& c1) { clipped_bins(e, g, c0, c1); };
    for_each_index(sb_, ne, [in_domain, bin_range, ecount] DEM_HD(std::int64_t e) {
      if (!in_domain(e)) {
        ecount[e] = 0;
        return;
      }
      Int3 c0, c1;
      bin_range(e, c0, c1);
      ecount[e] = std::int64_t(c1.x - c0.x + 1) * (c1.y - c0.y + 1) * (c1.z - c0.z + 1);
    });
    launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, elem_entries_.begin() + ne, 1, 0); });
    launch(ne, sb_, [&](auto pol) { thrust::exclusive_scan(pol, elem_entries_.begin(), elem_entries_.begin() + ne + 1, elem_entries_.begin()); });
    const std::int64_t entries = g.cell_size == g0.cell_size ? first.bins  // (the same bins: known)
                                                             : read_one(sb_, elem_entries_, static_cast<std::size_t>(ne));
    ensure(sb_, bin_keys_, static_cast<std::size_t>(entries));  // (the first `entries` used)
    ensure(sb_, bin_elems_, static_cast<std::size_t>(entries));
    std::uint32_t* bkey = raw(bin_keys_);
    std::int32_t* belem = raw(bin_elems_);
    for_each_index(sb_, ne, [in_domain, bin_range, ecount, bkey, belem, g] DEM_HD(std::int64_t e) {
      if (!in_domain(e)) return;
      Int3 c0, c1;
      bin_range(e, c0, c1);
      std::int64_t w = ecount[e];
      for (int z = c0.z; z <= c1.z; ++z)
        for (int y = c0.y; y <= c1.y; ++y)
          for (int xx = c0.x; xx <= c1.x; ++xx) {
            bkey[w] = cell_key(Int3{xx, y, z}, g);
            belem[w] = static_cast<std::int32_t>(e);
            ++w;
          }
    });
    const auto keys_end = bin_keys_.begin() + entries;
    launch(entries, sb_, [&](auto pol) { thrust::stable_sort_by_key(pol, bin_keys_.begin(), keys_end, bin_elems_.begin()); });
    ensure(sb_, bin_start_, static_cast<std::size_t>(g.hash_size) + 1);
    launch(entries, sb_, [&](auto pol) { thrust::lower_bound(pol, bin_keys_.begin(), keys_end, thrust::counting_iterator<std::uint32_t>(0),
                        thrust::counting_iterator<std::uint32_t>(g.hash_size + 1), bin_start_.begin()); });
    // (e-f) per particle: the bins its box (radius + skin) overlaps; each element once (from the
    // first bin of the overlap of the two boxes); kept if the sphere grown by the skin passes the
    // Fast Intersection Test.
    const MeshCandidateQuery query{mv, dom, g, raw(bin_start_), raw(bin_elems_), elo, ehi, x, raw(p_.radius), raw(mesh_skin_), pb};
    mesh_dom_ = dom;
    mesh_bins_ = g;
    std::int64_t* counts = raw(counts_);
    for_each_index(sb_, n, [query, counts] DEM_HD(std::int64_t i) {
      std::int64_t k = 0;
      query(i, [&k](std::int32_t) { ++k; });
      counts[i] = k;
    });
    launch(0, sb_, [&](auto pol) { thrust::fill_n(pol, counts_.begin() + n, 1, 0); });
    launch(n, sb_, [&](auto pol) { thrust::exclusive_scan(pol, counts_.begin(), counts_.begin() + n + 1, cand_offsets_.begin()); });
    // the lists' total and the particles with a list (assign_mesh_blocks' blocks) in one copy
    const ListSizes sizes = reduce_index(sb_, n, [counts] DEM_HD(std::int64_t i) {
      return ListSizes{counts[i], counts[i] > 0 ? std::int64_t(1) : std::int64_t(0)};
    }, ListSizes{0, 0}, ListSizesSum{});
    blocks = sizes.blocks;
    ensure(sb_, cand_, static_cast<std::size_t>(sizes.candidates));
    const std::int64_t* coff = raw(cand_offsets_);
    std::int32_t* cand = raw(cand_);
    for_each_index(sb_, n, [query, coff, cand] DEM_HD(std::int64_t i) {
      std::int64_t w = coff[i];
      query(i, [&w, cand](std::int32_t e) { cand[w++] = e; });
      for (std::int64_t s = coff[i] + 1; s < w; ++s)  // by element (H2's arrival order, as on the host)
        for (std::int64_t m = s; m > coff[i] && cand[m - 1] > cand[m]; --m) {
          const std::int32_t tmp = cand[m - 1];
          cand[m - 1] = cand[m];
          cand[m] = tmp;
        }
    });
  }
  assign_mesh_blocks(blocks);
  resize(sb_, x_at_mesh_build_, n_);
  launch(n, sb_, [&](auto pol) { thrust::copy(pol, p_.x.begin(), p_.x.begin() + n, x_at_mesh_build_.begin()); });
  mesh_travel_ = 0;
  mesh_check_ahead_ = false;
  have_candidates_ = true;
  stats_.mesh_list_renewals += static_cast<std::uint64_t>(n);
}

// ---------------------------------------------------------------------------------------------
// Contacts, sums and integration

void DeviceEngine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  fold_mesh();  // (rebuild_if_needed has, unless a caller skipped it)
  mesh_contacts_ = 0;
  body_loads_fresh_ = false;
  loads_pending_ = false;  // (this pass's replace the last one's, summed or not)
  if (d_elem_body_.empty() || n == 0) {  // no blocks: every particle's mesh force is zero (pair_pass)
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, d_body_force_.begin(), d_body_force_.end(), Vec3{0, 0, 0}); });
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, d_body_torque_.begin(), d_body_torque_.end(), Vec3{0, 0, 0}); });
    return;
  }
  update_mesh_candidates();
  Timer timer(clock_, times_.mesh_contacts);
  if (all_models_) {
    mesh_pass<true>();
  } else {
    mesh_pass<false>();
  }
  const MeshSlotsView sv = sview();
  const MeshStepStats none{0, 0, 0, 0, 0, kNoId, 0};
  const std::int64_t blocks = mesh_blocks_;
  // The step's sums and the particles touching a mesh (by index), left in the readback record.
  ensure(sb_, readback_, 1);
  StepReadback* rb = raw(readback_);
  const MeshStepStats* st = raw(mesh_stats_);
  reduce_index_into(sb_, blocks, [st] DEM_HD(std::int64_t b) { return st[b]; }, none, MeshStepStatsSum{}, &rb->mesh);
  ensure(sb_, touching_by_id_, n_);
  ensure(sb_, id_scratch_, n_);
  const std::uint8_t* count = sv.count;
  select_index_into(sb_, static_cast<std::int32_t>(n), [count] DEM_HD(std::int32_t i) { return count[i] != 0; },
                    raw(touching_by_id_), &rb->mesh_touching);
  // Not read here: the next step's skin tests bring them back in their copy, or the first caller
  // that needs them (status, the health check, the stats: fold_mesh) with its own.
  mesh_pending_ = true;
  mesh_pending_step_ = steps_;
  mesh_pending_time_ = time_;
}

void DeviceEngine::fold_mesh() const {
  if (mesh_pending_) const_cast<DeviceEngine&>(*this).apply_mesh_readback(read_one(sb_, readback_, 0));
}

// The last mesh pass's sums, overflow and count of particles touching a mesh, from r.
void DeviceEngine::apply_mesh_readback(const StepReadback& r) {
  if (!mesh_pending_) return;
  mesh_pending_ = false;
  const MeshStepStats& s = r.mesh;
  mesh_contacts_ = static_cast<std::size_t>(s.slots);
  stats_.fe_potential += s.potential;
  stats_.fe_contact += s.in_contact;
  stats_.valid_entities += s.valid;
  stats_.h2_compactions += s.compactions;
  if (s.overflow_id != kNoId && status_.ok)
    status_ = host::EngineStatus{false, host::mesh_overflow_message(s.overflow_id, int(s.overflow_count),
                                                                    mesh_pending_step_, mesh_pending_time_)};
  // The body loads only when asked for (sum_body_loads): nothing on the device reads them, and
  // the next pass's replace them.
  loads_pending_ = true;
  loads_touching_ = r.mesh_touching;
  body_loads_fresh_ = false;
}

// The last mesh pass's body loads: the particles touching a mesh in increasing id (compacted by
// mesh_forces, then sorted by id), each summed on its own (a thread each), then the tree of
// partial sums (as on the host). From the pass's slots, by particle index: before a re-sort, which
// only comes with the next pass.
void DeviceEngine::sum_body_loads() {
  fold_mesh();
  if (!loads_pending_) return;
  Timer timer(clock_, times_.mesh_contacts);
  loads_pending_ = false;
  const index_t nb = static_cast<index_t>(motions_.size());
  const MeshSlotsView sv = sview();
  const std::int64_t m = loads_touching_;
  const auto touching_end = touching_by_id_.begin() + m;
  launch(m, sb_, [&](auto pol) { thrust::gather(pol, touching_by_id_.begin(), touching_end, p_.id.begin(), id_scratch_.begin()); });
  launch(m, sb_, [&](auto pol) { thrust::sort_by_key(pol, id_scratch_.begin(), id_scratch_.begin() + m, touching_by_id_.begin()); });
  // (sized by assign_mesh_blocks for every particle with a block, which m never exceeds: they do
  // not grow as m creeps up step by step, each growth a wait)
  const std::size_t room = static_cast<std::size_t>(body_partials_size(m) * nb);
  ensure(sb_, partial_force_, room);
  ensure(sb_, partial_torque_, room);
  const std::int32_t* by_id = raw(touching_by_id_);
  const index_t* elem_body = raw(d_elem_body_);
  Vec3* cf = raw(partial_force_);
  Vec3* ct = raw(partial_torque_);
  for_each_index(sb_, m, [=] DEM_HD(std::int64_t k) { particle_body_loads(k, by_id, sv, elem_body, nb, cf, ct); });
  Vec3* bf = raw(d_body_force_);
  Vec3* bt = raw(d_body_torque_);
  const std::int64_t last =
      reduce_body_partials(m, nb, [&](std::int64_t partials, std::int64_t sums, std::int64_t in, std::int64_t out) {
        for_each_index(sb_, sums, BodyPartialsLevel{partials, nb, cf + in, ct + in, cf + out, ct + out});
      });
  for_each_index(sb_, nb, [=] DEM_HD(std::int64_t b) { body_load(static_cast<index_t>(b), m, last, cf, ct, bf, bt); });
}

// Per block (each particle with candidate elements): its mesh contacts (H2, then the law of each),
// their sum and the step's counts. The other particles have none, and a zero mesh force.
template <bool kAllModels>
void DeviceEngine::mesh_pass() {
  const std::int64_t blocks = mesh_blocks_;
  const std::int32_t* bp = raw(block_particle_);
  const ParticleView pv = pview();
  const MeshView mv = mview();
  const ContactTable tab{raw(params_), num_materials_};
  const MeshSlotsView sv = sview();
  const std::int64_t* coff = raw(cand_offsets_);
  const std::int32_t* cand = raw(cand_);
  Vec3* mf = raw(mesh_force_);
  Vec3* mt = raw(mesh_torque_);
  MeshStepStats* st = raw(mesh_stats_);
  const real tol = settings_.h2_tolerance, dt = settings_.dt;
  for_each_index(sb_, blocks, [=] DEM_HD(std::int64_t b) {
    const std::int32_t i = bp[b];
    H2Accumulator acc;  // per thread (local memory on a GPU)
    const MeshContactCounts c = mesh_contacts_of_particle<kAllModels>(i, pv, mv, tab, sv, cand + coff[i],
                                                                      coff[i + 1] - coff[i], acc, tol, dt, mf[b], mt[b]);
    const bool over = c.valid > std::uint32_t(kMaxMeshContacts);
    st[b] = MeshStepStats{c.potential, c.in_contact, c.valid, c.compactions, sv.count[i],
                          over ? pv.id[i] : kNoId, over ? c.valid : 0u};
  });
}

// Per particle: its pairs' loads summed as integers (core/engine/fixed_loads.hpp: exact, so the
// row's order and the host's split of the pairs among threads do not matter; each touching pair
// evaluated from this side: same bits as from the other, and this side's copy of the history),
// plus its mesh sum, stored as the particle's force; then, in a second pass (partners read the
// state of the first), integration.
void DeviceEngine::pair_forces(bool and_integrate) {
  {
    Timer timer(clock_, times_.pair_contacts);
    fold_touching(-1);  // (the last pass's count, where this step's skin tests did not run)
    if (all_models_) {
      pair_pass<true>();
    } else {
      pair_pass<false>();
    }
    touch_pending_ = true;
    stats_.pair_candidates += static_cast<std::uint64_t>(nbr_total_ / 2);
  }
  finish_particles(and_integrate);
}

void DeviceEngine::fold_touching(std::int64_t both_sides) const {
  if (!touch_pending_) return;
  if (both_sides < 0) {
    const std::int32_t* cnt = thrust::raw_pointer_cast(pair_touching_count_.data());
    both_sides = sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n_), [cnt] DEM_HD(std::int64_t i) { return std::int64_t(cnt[i]); });
  }
  touching_pairs_ = static_cast<std::size_t>(both_sides / 2);  // each pair counted from both sides
  stats_.pair_contacts += static_cast<std::uint64_t>(both_sides / 2);
  touch_pending_ = false;
}

template <bool kAllModels>
void DeviceEngine::pair_pass() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const ParticleView pv = pview();
  const ContactTable tab{raw(params_), num_materials_};
  const std::int64_t* off = raw(nbr_offsets_);
  const std::int32_t* nbr = raw(nbr_index_);
  const SplitHistory hist = history_view(nbr_xi_, nbr_roll_);
  std::uint8_t* touch = raw(nbr_touching_);
  const Vec3* mf = raw(mesh_force_);
  const Vec3* mt = raw(mesh_torque_);
  const std::int32_t* block = raw(mesh_block_);
  std::int32_t* count = raw(pair_touching_count_);
  const real dt = settings_.dt;
  const LoadQuantum q = quantum_;
  for_each_index(sb_, n, [=] DEM_HD(std::int64_t i) {
    FixedLoad sum;
    std::int32_t c = 0;
    for (std::int64_t k = off[i]; k < off[i + 1]; ++k) {
      const std::int32_t j = nbr[k];
      PairLoad load;
      const bool was = touch[k] != 0;
      const bool on = pair_contact<kAllModels>(pv, tab, static_cast<index_t>(i), j, hist, k, was, load, dt);
      if (on != was) touch[k] = on ? 1 : 0;
      if (on) {
        add_pair_load(load, pv.id[i] > pv.id[j], q, sum);
        ++c;
      }
    }
    const std::int32_t b = block[i];
    finish_load_sum(sum, q, b >= 0 ? mf[b] : Vec3{0, 0, 0}, b >= 0 ? mt[b] : Vec3{0, 0, 0}, pv.force[i], pv.torque[i]);
    count[i] = c;
  });
}

// The particles' forces are complete: stored, and with and_integrate the central differences.
void DeviceEngine::finish_particles(bool and_integrate) {
  Timer timer(clock_, times_.gather);
  const ParticleView pv = pview();
  const Vec3 gravity = settings_.gravity;
  const real dt = settings_.dt;
  for_each_index(sb_, static_cast<std::int64_t>(n_), [=] DEM_HD(std::int64_t i) {
    finish_particle(pv, static_cast<index_t>(i), pv.force[i], pv.torque[i], gravity, dt, and_integrate);
  });
  host_p_fresh_ = false;
}

void DeviceEngine::set_body_motion(std::size_t body, const MeshBodyMotion& motion) {
  ahead_valid_ = false;  // (check_health's skin tests were of the state before)
  static_cast<MeshBodyMotion&>(meshes_.bodies.at(body)) = motion;
  motions_[body] = motion;
  upload(sb_, d_bodies_, motions_);
  meshes_posed_ = false;  // a new centre0 moves the vertices even where the frame stays
  // The candidate lists' travel bound follows the new speeds from the next step on.
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
}

std::size_t DeviceEngine::edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more) {
  ahead_valid_ = false;  // (check_health's skin tests were of the state before)
  fold_touching(-1);  // (the counts are per particle)
  fold_mesh();
  std::size_t removed = 0;
  if (!remove_ids.empty() && n_ > 0) {  // flag them (binary search of each particle's id in the sorted list)
    std::vector<std::int64_t> sorted(remove_ids);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    dvec<std::int64_t> d_sorted;
    upload(sb_, d_sorted, sorted);
    resize(sb_, remove_flag_, n_);
    const std::int64_t* ids = raw(p_.id);
    const std::int64_t* list = raw(d_sorted);
    const std::int64_t m = static_cast<std::int64_t>(sorted.size());
    std::uint8_t* flag = raw(remove_flag_);
    for_each_index(sb_, static_cast<std::int64_t>(n_), [ids, list, m, flag] DEM_HD(std::int64_t i) {
      flag[i] = sorted_contains(list, list + m, ids[i]) ? 1 : 0;
    });
    removed = static_cast<std::size_t>(sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n_),
                                                               [flag] DEM_HD(std::int64_t i) { return std::int64_t(flag[i]); }));
  }
  if (removed == 0 && more.size() == 0) return 0;
  host::check_periodic_after_adding(settings_, r_max_, more.radius);  // before anything changes
  // the removal resolves an escape (another particle still outside fails the next check again)
  if (!status_.ok && status_.problem == kEscaped) status_ = host::EngineStatus{};
  if (more.size()) {  // appended with empty mesh slots and empty neighbour rows
    const std::size_t n_old = n_, k = more.size();
    if (n_old + k >= (std::size_t(1) << 31)) throw std::runtime_error("device engine: at most 2^31 - 1 particles");
#define DEM_APPEND_FIELD(T, name) \
  resize(sb_, p_.name, n_old + k);  \
  upload_into(sb_, p_.name, n_old, more.name);
    DEM_PARTICLE_FIELDS(DEM_APPEND_FIELD)
#undef DEM_APPEND_FIELD
    ensure(sb_, mesh_count_, n_old + k);
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, mesh_count_.begin() + static_cast<std::ptrdiff_t>(n_old), mesh_count_.begin() + static_cast<std::ptrdiff_t>(n_old + k), std::uint8_t(0)); });
    ensure(sb_, mesh_block_, n_old + k);  // no block until the next candidate lists
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, mesh_block_.begin() + static_cast<std::ptrdiff_t>(n_old), mesh_block_.begin() + static_cast<std::ptrdiff_t>(n_old + k), std::int32_t(-1)); });
    if (have_list_) {
      resize(sb_, nbr_offsets_, n_old + k + 1);
      launch(0, sb_, [&](auto pol) { thrust::fill(pol, nbr_offsets_.begin() + static_cast<std::ptrdiff_t>(n_old + 1), nbr_offsets_.end(), nbr_total_); });
    }
    if (removed) {
      resize(sb_, remove_flag_, n_old + k);
      launch(0, sb_, [&](auto pol) { thrust::fill(pol, remove_flag_.begin() + static_cast<std::ptrdiff_t>(n_old), remove_flag_.end(), std::uint8_t(0)); });
    }
    for (real r : more.radius) r_max_ = std::max(r_max_, r);
    if (settings_.skin < 0) skin_ = std::max(skin_, real(0.5) * r_max_);
    load_sizing_.add(more.material, more.radius);
    quantum_ = load_sizing_.quantum(table_, num_materials_);
    if (settings_.periodic.any()) {
      Vec3* x = raw(p_.x);
      const PeriodicBox pb = settings_.periodic;
      for_each_index(sb_, static_cast<std::int64_t>(k), [x, pb, n_old] DEM_HD(std::int64_t a) {
        x[n_old + a] = wrap_far(pb, x[n_old + a]);
      });
    }
    n_ = n_old + k;
  }
  ensure(sb_, pair_touching_count_, n_);
  ensure(sb_, counts_, n_ + 1);
  remove_pending_ = removed;
  choose_broad_phase();
  have_candidates_ = false;
  needs_build_ = true;
  {
    Timer timer(clock_, times_.broad_phase);
    rebuild();  // the lists at the new count now, so that particles() and the contacts agree at once
  }
  host_p_fresh_ = false;
  return removed;
}

// The forces of t_n: boundary pose at t_n, lists, contacts, sums; with and_integrate, the central
// differences per particle (Eqs. 7-12).
void DeviceEngine::evaluate(bool and_integrate) {
  move_meshes(time_);
  rebuild_if_needed();
  mesh_forces();
  pair_forces(and_integrate);
}

void DeviceEngine::compute_forces() {
  if (forces_current_) return;  // already at this state: evaluating again would advance the history twice
  evaluate(false);
  forces_current_ = true;
}

void DeviceEngine::step() {
  if (forces_current_) finish_particles(true);  // the forces of t_n were computed for the output: the same bits
  else evaluate(true);
  forces_current_ = false;
  ++steps_;
  ++stats_.steps;
  time_ = static_cast<double>(steps_) * settings_.dt;
}

struct MaxReal {
  DEM_HD real operator()(real a, real b) const { return a < b ? b : a; }
};

double DeviceEngine::max_overlap() const {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  if (n == 0) return 0;
  DeviceEngine& self = const_cast<DeviceEngine&>(*this);  // views of the buffers; nothing is changed
  const ParticleView pv = self.pview();
  const MeshSlotsView sv = self.sview();
  const bool list = have_list_;
  const std::int64_t* off = list ? raw(self.nbr_offsets_) : nullptr;
  const std::int32_t* nbr = list ? raw(self.nbr_index_) : nullptr;
  const std::uint8_t* touch = list ? raw(self.nbr_touching_) : nullptr;
  const auto deepest = [pv, sv, list, off, nbr, touch] DEM_HD(std::int64_t i) {
    real worst = mesh_overlap_fraction(pv, sv, static_cast<index_t>(i));
    if (list)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k)
        if (touch[k]) worst = dem_max(worst, pair_overlap_fraction(pv, static_cast<index_t>(i), nbr[k]));
    return worst;
  };
  return reduce_index(self.sb_, n, deepest, real(0), MaxReal{});
}

bool DeviceEngine::check_health(const HealthLimits& limits) {
  const ParticleView pv = pview();
  const HealthFinding none{kNoId, -1, kHealthy};
  const std::int64_t n = static_cast<std::int64_t>(n_);
  const MeshSlotsView sv = sview();
  const bool list = have_list_;
  const std::int64_t* off = list ? raw(nbr_offsets_) : nullptr;
  const std::int32_t* nbr = list ? raw(nbr_index_) : nullptr;
  const std::uint8_t* touch = list ? raw(nbr_touching_) : nullptr;
  const auto examine = [pv, sv, limits, list, off, nbr, touch] DEM_HD(std::int64_t i) {
    int h = particle_health(pv, static_cast<index_t>(i), limits);
    if (h == kHealthy) {  // overlaps: its touching pairs and its mesh slots
      real worst = mesh_overlap_fraction(pv, sv, static_cast<index_t>(i));
      if (list)
        for (std::int64_t k = off[i]; k < off[i + 1]; ++k)
          if (touch[k]) worst = dem_max(worst, pair_overlap_fraction(pv, static_cast<index_t>(i), nbr[k]));
      if (worst > limits.max_overlap) h = kOverlap;
    }
    return h == kHealthy ? HealthFinding{kNoId, -1, kHealthy}
                         : HealthFinding{pv.id[i], static_cast<std::int32_t>(i), static_cast<std::int32_t>(h)};
  };
  // As the kept lists' checks (any_index_into): the examination in a for_each, its findings into
  // scratch (the re-sorts' field scratch, 32 bytes a particle), then a light reduction into the
  // readback record, whose one copy also brings back the last mesh pass's results where they wait.
  ensure(sb_, field_scratch_, (n_ * sizeof(HealthFinding) + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t));
  static_assert(alignof(HealthFinding) <= alignof(std::uint64_t) && std::is_trivially_copyable_v<HealthFinding>);
  HealthFinding* found = reinterpret_cast<HealthFinding*>(raw(field_scratch_));
  for_each_index(sb_, n, StoreEach<decltype(examine), HealthFinding>{examine, found});
  ensure(sb_, readback_, 1);
  StepReadback* rb = raw(readback_);
  reduce_index_into(sb_, n, ReadEach<HealthFinding>{found}, none, FirstFinding{}, &rb->health);
  // The next step's skin tests too, on the positions it will start from: rebuild_if_needed takes
  // them from this copy, so that a driver's step waits once (twice before). Not where a rebuild is
  // due. The kept mesh lists' check, where it runs, meets the meshes at this time, posed apart
  // (pose_ahead): the present pose stays the last evaluation's (what meshes() returns, on both
  // engines) until the step poses them. Not where the forces of this state are already computed
  // (compute_forces): the step integrates with them without the tests.
  const bool ahead = !rebuild_due() && !forces_current_;
  MeshView next{};
  if (ahead && mesh_check_wanted()) next = pose_ahead();
  const SkinTests run = ahead ? launch_skin_tests(rb, &next) : SkinTests{};
  const StepReadback r = read_one(sb_, readback_, 0);
  if (ahead) {
    if (run.touching) fold_touching(r.skins.touching);
    ahead_valid_ = true;
    ahead_step_ = steps_;
    ahead_run_ = run;
    ahead_readback_ = r;
  }
  apply_mesh_readback(r);
  if (!status_.ok) return false;  // the first error stands (Engine::check_health)
  const HealthFinding f = r.health;
  if (f.index < 0) return true;
  const std::size_t at = static_cast<std::size_t>(f.index);
  const Vec3 x = read_one(sb_, p_.x, at), v = read_one(sb_, p_.v, at);
  status_ = host::EngineStatus{false, host::health_message(f.problem, f.id, x, v, steps_, time_, limits), f.problem};
  return false;
}

std::vector<ContactHistory> DeviceEngine::download_histories(const dvec<Vec3>& xi, const dvec<Vec3>& roll,
                                                             std::size_t n) const {
  std::vector<Vec3> t, r;
  download(sb_, xi, n, t);
  if (with_roll_) download(sb_, roll, n, r);
  std::vector<ContactHistory> h(n);
  for (std::size_t k = 0; k < n; ++k) h[k] = ContactHistory{t[k], with_roll_ ? r[k] : Vec3{0, 0, 0}};
  return h;
}

// (the second history only where a law uses it: else zero, as on the host, and not stored)
void DeviceEngine::upload_histories(const std::vector<ContactHistory>& h, dvec<Vec3>& xi, dvec<Vec3>& roll) {
  std::vector<Vec3> t(h.size()), r(with_roll_ ? h.size() : 0);
  for (std::size_t k = 0; k < h.size(); ++k) {
    t[k] = h[k].tangential;
    if (with_roll_) r[k] = h[k].rolling;
  }
  upload(sb_, xi, t);
  if (with_roll_) upload(sb_, roll, r);
}

void DeviceEngine::export_state(host::ParticleArrays& particles, host::ContactState& c) const {
  fold_mesh();
  particles = this->particles();
  c = host::ContactState{};
  if (have_list_) {  // each touching pair once, from the side of its smaller id
    std::vector<std::int64_t> off, id;
    std::vector<std::int32_t> nbr;
    std::vector<std::uint8_t> touch;
    download(sb_, nbr_offsets_, n_ + 1, off);
    download(sb_, nbr_index_, static_cast<std::size_t>(nbr_total_), nbr);
    download(sb_, nbr_touching_, static_cast<std::size_t>(nbr_total_), touch);
    const std::vector<ContactHistory> hist = download_histories(nbr_xi_, nbr_roll_, static_cast<std::size_t>(nbr_total_));
    for (std::size_t i = 0; i < n_; ++i)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k)
        if (touch[k] && particles.id[i] < particles.id[nbr[k]]) {
          c.pair_a.push_back(particles.id[i]);
          c.pair_b.push_back(particles.id[nbr[k]]);
          c.pair_history.push_back(hist[k]);
        }
  }
  {  // the used mesh slots, packed (ContactState)
    std::vector<std::uint8_t> count;
    std::vector<std::int32_t> block;
    std::vector<EntityContact> entity;
    std::vector<Vec3> normal;
    const std::size_t slots = static_cast<std::size_t>(mesh_blocks_) * kMaxMeshContacts;
    download(sb_, mesh_count_, n_, count);
    download(sb_, mesh_block_, n_, block);
    download(sb_, mesh_entity_, slots, entity);
    download(sb_, mesh_normal_, slots, normal);
    const std::vector<ContactHistory> history = download_histories(mesh_xi_, mesh_roll_, slots);
    host::pack_mesh_slots(count, block.data(), entity, normal, history, c);
  }
  c.forces_current = forces_current_;
  if (forces_current_) {
    c.body_force = body_force();
    c.body_torque = body_torque();
  }
}

void DeviceEngine::restore_state(const host::ContactState& c, std::uint64_t step) {
  ahead_valid_ = false;  // (check_health's skin tests were of the state before)
  fold_touching(-1);
  fold_mesh();
  loads_pending_ = false;  // (the last pass's loads: replaced by the state's, or by the next pass's)
  host::checked_mesh_slots(c, n_, "restore_state");
  {  // a block of kMaxMeshContacts slots for each particle with mesh contacts, in particle order
    std::vector<std::int32_t> block(n_, -1);
    std::int32_t blocks = 0;
    for (std::size_t i = 0; i < n_; ++i)
      if (c.mesh_count[i]) block[i] = blocks++;
    std::vector<EntityContact> entity;
    std::vector<Vec3> normal;
    std::vector<ContactHistory> history;
    host::unpack_mesh_slots(c, block.data(), static_cast<std::size_t>(blocks), entity, normal, history);
    upload(sb_, mesh_count_, c.mesh_count);
    upload(sb_, mesh_block_, block);
    upload(sb_, mesh_entity_, entity);
    upload(sb_, mesh_normal_, normal);
    upload_histories(history, mesh_xi_, mesh_roll_);
    mesh_blocks_ = blocks;
    ensure(sb_, slot_force_, entity.size());
    ensure(sb_, slot_torque_, entity.size());
  }
  // The touching pairs become the current full list (both sides, rows sorted by partner id), which
  // the first rebuild carries the history from.
  const host::ParticleArrays& p = particles();
  std::unordered_map<std::int64_t, std::int32_t> index;
  index.reserve(n_);
  for (std::size_t i = 0; i < n_; ++i) index[p.id[i]] = static_cast<std::int32_t>(i);
  std::vector<std::vector<std::pair<std::int64_t, std::size_t>>> rows(n_);  // (partner id, pair)
  for (std::size_t k = 0; k < c.pair_a.size(); ++k) {
    const auto a = index.find(c.pair_a[k]), b = index.find(c.pair_b[k]);
    if (a == index.end() || b == index.end()) throw std::runtime_error("restore_state: a pair names an unknown particle");
    rows[a->second].emplace_back(c.pair_b[k], k);
    rows[b->second].emplace_back(c.pair_a[k], k);
  }
  std::vector<std::int64_t> off(n_ + 1, 0), id;
  std::vector<std::int32_t> nbr;
  std::vector<ContactHistory> hist;
  for (std::size_t i = 0; i < n_; ++i) {
    std::sort(rows[i].begin(), rows[i].end());
    for (const auto& [partner, k] : rows[i]) {
      id.push_back(partner);
      nbr.push_back(index[partner]);
      hist.push_back(c.pair_history[k]);
    }
    off[i + 1] = static_cast<std::int64_t>(id.size());
  }
  upload(sb_, nbr_offsets_, off);
  upload(sb_, nbr_id_, id);
  upload(sb_, nbr_index_, nbr);
  upload_histories(hist, nbr_xi_, nbr_roll_);
  upload(sb_, nbr_touching_, std::vector<std::uint8_t>(id.size(), 1));
  nbr_total_ = static_cast<std::int64_t>(id.size());
  have_list_ = true;
  have_candidates_ = false;
  needs_build_ = true;
  steps_ = step;
  stats_.steps = step;
  time_ = static_cast<double>(step) * settings_.dt;
  host_p_fresh_ = false;
  forces_current_ = c.forces_current;
  if (forces_current_) {  // the particles' force fields hold the forces at this state
    if (c.body_force.size() != d_body_force_.size() || c.body_torque.size() != d_body_torque_.size())
      throw std::runtime_error("restore_state: the contact state is for another number of mesh bodies");
    upload(sb_, d_body_force_, c.body_force);
    upload(sb_, d_body_torque_, c.body_torque);
    body_loads_fresh_ = false;
    move_meshes(time_);
  }
}

// ---------------------------------------------------------------------------------------------
// Host copies for output

const host::ParticleArrays& DeviceEngine::particles() const {
  if (!host_p_fresh_ || host_p_step_ != steps_) {
    auto& self = const_cast<DeviceEngine&>(*this);
#define DEM_DOWNLOAD_FIELD(T, name) download(sb_, self.p_.name, n_, host_p_.name);
    DEM_PARTICLE_FIELDS(DEM_DOWNLOAD_FIELD)
#undef DEM_DOWNLOAD_FIELD
    host_p_step_ = steps_;
    host_p_fresh_ = true;
  }
  return host_p_;
}

const host::MeshSet& DeviceEngine::meshes() const {
  if (meshes_step_ != steps_ || meshes_.time != mesh_time_) {
    download(sb_, d_vertices_, d_vertices_.size(), meshes_.vertices);
    download(sb_, d_normals_, d_normals_.size(), meshes_.normals);
    meshes_.time = mesh_time_;
    meshes_step_ = steps_;
  }
  return meshes_;
}

const std::vector<Vec3>& DeviceEngine::body_force() const {
  const_cast<DeviceEngine&>(*this).sum_body_loads();
  if (!body_loads_fresh_) {
    download(sb_, d_body_force_, d_body_force_.size(), body_force_);
    download(sb_, d_body_torque_, d_body_torque_.size(), body_torque_);
    body_loads_fresh_ = true;
  }
  return body_force_;
}

const std::vector<Vec3>& DeviceEngine::body_torque() const {
  body_force();
  return body_torque_;
}

double DeviceEngine::bytes_per_particle() const {
  if (n_ == 0) return 0;
  double bytes = 0;
#define DEM_FIELD_BYTES(T, name) bytes += double(p_.name.capacity()) * sizeof(T);
  DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
  auto add = [&bytes](const auto& v) { bytes += double(v.capacity()) * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  add(nbr_offsets_), add(old_offsets_), add(nbr_index_), add(nbr_id_), add(old_id_), add(nbr_xi_), add(nbr_roll_),
      add(old_xi_), add(old_roll_), add(nbr_touching_), add(old_touching_), add(order_), add(cell_keys_), add(cell_start_),
      add(counts_), add(x_at_build_), add(reach_), add(half_skin2_), add(speed_), add(pair_touching_count_),
      add(cand_offsets_), add(cand_), add(x_at_mesh_build_), add(mesh_skin_), add(mesh_count_), add(mesh_entity_), add(mesh_normal_),
      add(mesh_xi_), add(mesh_roll_), add(field_scratch_), add(tmp_entity_), add(tmp_normal_), add(tmp_xi_), add(tmp_roll_),
      add(slot_force_), add(slot_torque_), add(mesh_force_), add(mesh_torque_), add(mesh_stats_),
      add(touching_by_id_), add(id_scratch_), add(mesh_block_), add(tmp_block_), add(block_particle_);
  bytes += double(cache_->bytes());
  return bytes / double(n_);
}

std::unique_ptr<host::Simulation> make(host::ParticleArrays particles, host::MeshSet meshes,
                                       std::vector<ContactParams> params, int num_materials,
                                       host::EngineSettings settings) {
  return std::make_unique<DeviceEngine>(std::move(particles), std::move(meshes), std::move(params), num_materials,
                                        settings);
}

}  // namespace dem::device::DEM_DEVICE_NS
