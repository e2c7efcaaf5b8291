// The core functions compiled by nvcc and run on the device agree with the host build of the same
// source (cuda/core_probe.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/gpu_fixture.hpp"

namespace dem {
namespace {

class CoreOnDevice : public test::GpuTest {};

TEST_F(CoreOnDevice, ProbeMatchesHost) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-0.5, 1.5);
  std::vector<cuda::ProbeInput> in(4096);
  for (auto& p : in) p = cuda::ProbeInput{{u(rng), u(rng), 0.4 * u(rng)}, 0.1 + 0.2 * (u(rng) + 0.5), {u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}};
  std::vector<cuda::ProbeOutput> gpu(in.size()), cpu(in.size());
  cuda::launch_core_probe(in.data(), gpu.data(), static_cast<int>(in.size()));
  for (std::size_t i = 0; i < in.size(); ++i) cuda::core_probe(in[i], cpu[i]);
  for (std::size_t i = 0; i < in.size(); ++i)
    for (int k = 0; k < cuda::kProbeOutputs; ++k) {
      // nvcc contracts a*b+c into FMA and its libm differs in the last ulp; results of O(1e7)
      // (moduli) carry that relative error through a few dozen operations: 1e-9 relative.
      const double a = gpu[i].value[k], b = cpu[i].value[k];
      ASSERT_NEAR(a, b, 1e-9 * std::max(1.0, std::abs(b))) << "input " << i << " output " << k;
    }
}

}  // namespace
}  // namespace dem
