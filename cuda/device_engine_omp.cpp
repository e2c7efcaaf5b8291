// The device engine on Thrust's OpenMP device system: the real device code path, run on the CPU
// (THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP and Thrust/CUB wrapped in their own namespace,
// both set by cuda/CMakeLists.txt, so this build and the CUDA one can share a binary).
#define DEM_DEVICE_NS omp_system
#define DEM_DEVICE_SYSTEM_NAME "omp"
#include "cuda/device_engine.inl"

#include <omp.h>

namespace dem::device::omp_system {

// Every algorithm has finished when it returns: the wall clock around a phase is its time.
struct PhaseClock::Impl {};
PhaseClock::PhaseClock() = default;
PhaseClock::~PhaseClock() = default;
std::int64_t PhaseClock::start() { return std::chrono::steady_clock::now().time_since_epoch().count(); }
void PhaseClock::stop(std::int64_t mark, double& sink) noexcept {
  const std::chrono::steady_clock::duration since(std::chrono::steady_clock::now().time_since_epoch().count() - mark);
  sink += std::chrono::duration<double>(since).count();
}
void PhaseClock::settle() {}

// Every launch has finished when it returns: the host sees what the kernels wrote at once.
struct RunAheadSignal::Impl {
  RunAheadMirror mirror{1, 0};
};
RunAheadSignal::RunAheadSignal() : impl_(std::make_unique<Impl>()) {}
RunAheadSignal::~RunAheadSignal() = default;
RunAheadMirror* RunAheadSignal::device() const { return &impl_->mirror; }
RunAheadMirror RunAheadSignal::peek() const { return impl_->mirror; }
RunAheadMirror RunAheadSignal::wait_for(std::int64_t) const { return impl_->mirror; }
void RunAheadSignal::reset() { impl_->mirror = RunAheadMirror{1, 0}; }

std::string describe_device() {
  return "cpu (Thrust OpenMP system, " + std::to_string(omp_get_max_threads()) + " threads)";
}

}  // namespace dem::device::omp_system
