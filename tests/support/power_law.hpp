// Radii from the truncated power law f(r) ~ r^alpha between r_min and omega r_min
// (krijgsman2014 Eq. 29), drawn by inverting the cumulative distribution: shared by the
// broad-phase tests and bench/dem_hgrid_bench.
#pragma once
#include <cmath>
#include <random>
#include <vector>

namespace dem::test {

inline std::vector<double> power_law_radii(std::mt19937_64& rng, int n, double r_min, double omega, double alpha) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> r(n);
  for (double& v : r) {
    const double p = u(rng), a1 = alpha + 1;
    v = std::abs(a1) < 1e-12 ? r_min * std::pow(omega, p)
                             : std::pow(std::pow(r_min, a1) + p * (std::pow(omega * r_min, a1) - std::pow(r_min, a1)), 1 / a1);
  }
  return r;
}

}  // namespace dem::test
