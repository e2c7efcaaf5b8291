// The device engine on CUDA (nvcc). Thrust/CUB are wrapped in their own namespace (set by
// cuda/CMakeLists.txt) so that this build and the OpenMP-system one can share a binary.
#define DEM_DEVICE_NS cuda_system
#define DEM_DEVICE_SYSTEM_NAME "cuda"
#include "cuda/device_engine.inl"

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dem::device::cuda_system {

// Each phase between two events on the default stream, where the engine's kernels run; the
// events are reused once read. A mark is the index of its start event among those in use.
struct PhaseClock::Impl {
  struct Pending {
    cudaEvent_t start, stop;
    double* sink;
  };
  std::vector<cudaEvent_t> spare, all;
  std::vector<Pending> pending;
  std::vector<cudaEvent_t> open;  // started phases, by mark (a stack: timers end in reverse order)
  std::string error;              // the first CUDA error in stop, thrown by the next start or settle

  void throw_kept_error() {
    if (error.empty()) return;
    std::string e;
    e.swap(error);
    throw std::runtime_error(e);
  }

  cudaEvent_t take() {
    if (spare.empty()) {
      cudaEvent_t e;
      check_cuda(cudaEventCreate(&e), "cudaEventCreate");
      all.push_back(e);
      return e;
    }
    const cudaEvent_t e = spare.back();
    spare.pop_back();
    return e;
  }
  // the first `count` pending times into their sinks (their events have passed or are waited for)
  // (each one leaves `pending` as its events go back to `spare`, also when a later one fails)
  void read(std::size_t count) {
    std::size_t k = 0;
    const auto drop_read = [&] { pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(k)); };
    try {
      for (; k < count; ++k) {
        Pending& p = pending[k];
        check_cuda(cudaEventSynchronize(p.stop), "cudaEventSynchronize");
        float ms = 0;
        check_cuda(cudaEventElapsedTime(&ms, p.start, p.stop), "cudaEventElapsedTime");
        *p.sink += 1e-3 * double(ms);
        spare.push_back(p.start);
        spare.push_back(p.stop);
      }
    } catch (...) {
      drop_read();
      throw;
    }
    drop_read();
  }
};

PhaseClock::PhaseClock() : impl_(std::make_unique<Impl>()) {}
PhaseClock::~PhaseClock() {
  for (cudaEvent_t e : impl_->all) cudaEventDestroy(e);  // (no throw from a destructor)
}
std::int64_t PhaseClock::start() {
  impl_->throw_kept_error();
  const cudaEvent_t e = impl_->take();
  check_cuda(cudaEventRecord(e, 0), "cudaEventRecord");
  impl_->open.push_back(e);
  return static_cast<std::int64_t>(impl_->open.size()) - 1;
}
void PhaseClock::stop(std::int64_t mark, double& sink) noexcept {
  Impl& c = *impl_;
  const std::size_t m = static_cast<std::size_t>(mark);
  if (m >= c.open.size()) return;  // (its phase's start failed, or a later phase's clean-up took it)
  const cudaEvent_t begin = c.open[m];
  c.open.resize(m);
  try {
    const cudaEvent_t e = c.take();
    const cudaError_t r = cudaEventRecord(e, 0);
    if (r != cudaSuccess) {
      c.spare.push_back(e);
      c.spare.push_back(begin);
      check_cuda(r, "cudaEventRecord");
    }
    c.pending.push_back(Impl::Pending{begin, e, &sink});
    // Hundreds of phases back, the device has long passed them (the host queues at most a few
    // steps past the last one the device has decided: EngineSettings::run_ahead; a blind run
    // ahead, for tests, may wait here).
    if (c.pending.size() >= 512) c.read(256);
  } catch (const std::exception& e) {
    if (c.error.empty()) c.error = e.what();
  } catch (...) {
    if (c.error.empty()) c.error = "CUDA error in the device engine's phase timer";
  }
}
void PhaseClock::settle() {
  impl_->throw_kept_error();
  impl_->read(impl_->pending.size());
}

// The mirror in page-locked host memory mapped into the device's address space: the kernels'
// stores reach it over the bus, and the host reads it (volatile) without waiting for the stream.
struct RunAheadSignal::Impl {
  RunAheadMirror* host = nullptr;
  RunAheadMirror* device = nullptr;
};
RunAheadSignal::RunAheadSignal() : impl_(std::make_unique<Impl>()) {
  void* p = nullptr;
  check_cuda(cudaHostAlloc(&p, sizeof(RunAheadMirror), cudaHostAllocMapped), "cudaHostAlloc");
  void* d = nullptr;
  const cudaError_t e = cudaHostGetDevicePointer(&d, p, 0);
  if (e != cudaSuccess) {
    cudaFreeHost(p);
    check_cuda(e, "cudaHostGetDevicePointer");
  }
  impl_->host = static_cast<RunAheadMirror*>(p);
  impl_->device = static_cast<RunAheadMirror*>(d);
  reset();
}
RunAheadSignal::~RunAheadSignal() {
  if (impl_->host != nullptr) cudaFreeHost(impl_->host);  // (no throw from a destructor)
}
RunAheadMirror* RunAheadSignal::device() const { return impl_->device; }
RunAheadMirror RunAheadSignal::peek() const {
  const volatile RunAheadMirror* m = impl_->host;
  return RunAheadMirror{m->open, m->ran};
}
RunAheadMirror RunAheadSignal::wait_for(std::int64_t ran) const {
  for (;;) {
    const RunAheadMirror m = peek();
    if (m.open == 0 || m.ran >= ran) return m;
    const cudaError_t q = cudaStreamQuery(0);
    if (q == cudaSuccess) return peek();  // (the stream is idle: nothing will change it)
    if (q != cudaErrorNotReady) check_cuda(q, "cudaStreamQuery");
    std::this_thread::yield();
  }
}
void RunAheadSignal::reset() {
  volatile RunAheadMirror* m = impl_->host;
  m->open = 1;
  m->ran = 0;
}

std::string describe_device() {
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return "cuda device";
  return std::string(prop.name) + " (CUDA device " + std::to_string(dev) + ", " +
         std::to_string(prop.totalGlobalMem >> 20) + " MiB)";
}

}  // namespace dem::device::cuda_system
