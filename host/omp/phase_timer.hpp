// The host engine's phase timer: adds the wall time of its scope to a PhaseTimes field.
#pragma once
#include <chrono>

namespace dem::host {

class ScopedTimer {
 public:
  explicit ScopedTimer(double& sink) : sink_(sink), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() { sink_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  double& sink_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace dem::host
