// The device engine's Thrust and CUB helpers: the buffers (dvec), the execution policy that counts
// the host's waits (Exec), the temporary-storage cache, and the counted copies, resizes,
// reductions and selections every phase goes through.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
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
// `launches` counts the algorithms run on the device through launch and run_cub (each a kernel or
// a few: DeviceEngine::device_launches), alike on both systems, but for the steps a run ahead
// queued past the one that closed it (cuda/run_ahead.inl), which only CUDA's lag leaves queued.
struct Exec {
  std::int64_t serial_below = 0;
  TempCache* cache = nullptr;
  std::uint64_t* waits = nullptr;
  std::uint64_t* launches = nullptr;
  void waited() const {
    if (waits) ++*waits;
  }
  void launched() const {
    if (launches) ++*launches;
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
  ex.launched();
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
  ex.launched();
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

}  // namespace dem::device::DEM_DEVICE_NS
