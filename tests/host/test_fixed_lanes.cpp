// The pair lanes' block conversion of loads to quanta (host/omp/simd.hpp: FixedLanes)
// against core/engine/fixed_loads.hpp's to_fixed, which the device engine and every other path
// call: the same integer for every input, or the engines' sums would part.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "host/omp/simd.hpp"

using namespace dem;
using namespace dem::host;

namespace {
constexpr int kLanes = 64;

// Converts the values in blocks of kLanes lanes (as forces and torques of three components, at the
// scales given) and compares every lane's six integers on each side with to_fixed, and its adds
// into a sum with add_fixed_load's; returns the number of integers compared.
std::size_t expect_blocks_equal(const std::vector<real>& values, real fs, real ts) {
  alignas(64) real f[3][kLanes], ta[3][kLanes], tb[3][kLanes];
  FixedLanes<kLanes> q;
  std::size_t compared = 0;
  for (std::size_t k0 = 0; k0 < values.size(); k0 += kLanes) {
    for (int c = 0; c < 3; ++c)  // (each component and each output its own values)
      for (int l = 0; l < kLanes; ++l) {
        const std::size_t k = k0 + 3 * l + c;
        f[c][l] = values[k % values.size()];
        ta[c][l] = values[(k + 1) % values.size()];
        tb[c][l] = -values[(k + 2) % values.size()];
      }
    q.convert(f, ta, tb, fs, ts);
    for (int l = 0; l < kLanes; ++l)
      for (int c = 0; c < 3; ++c) {
        const std::int64_t want[4] = {to_fixed(f[c][l], fs), to_fixed(ta[c][l], ts), to_fixed(-f[c][l], fs),
                                      to_fixed(tb[c][l], ts)};
        const FixedLoad a = q.side_a(l), b = q.side_b(l);
        const std::int64_t got[4] = {a.f[c], a.t[c], b.f[c], b.t[c]};
        for (int s = 0; s < 4; ++s)
          if (got[s] != want[s]) {
            ADD_FAILURE() << "lane " << l << " component " << c << " output " << s << " (A's force, A's torque, B's "
                          << "force, B's torque): " << got[s] << " against to_fixed's " << want[s] << " (f "
                          << f[c][l] << ", ta " << ta[c][l] << ", tb " << tb[c][l] << "; scales " << fs << ", "
                          << ts << ")";
            return compared;
          }
        compared += 4;
      }
    // the adds into a sum, which wrap as fixed_add does (sums near the top of the range)
    std::mt19937_64 rng(k0);
    for (int l = 0; l < kLanes; ++l) {
      FixedLoad start;
      for (int c = 0; c < 3; ++c) start.f[c] = std::int64_t(rng()), start.t[c] = std::int64_t(rng());
      for (const bool side_a : {true, false}) {
        FixedLoad got = start, want = start;
        side_a ? q.add_side_a(got, l) : q.add_side_b(got, l);
        add_fixed_load(want, side_a ? q.side_a(l) : q.side_b(l));
        for (int c = 0; c < 3; ++c)
          if (got.f[c] != want.f[c] || got.t[c] != want.t[c]) {
            ADD_FAILURE() << "lane " << l << " component " << c << (side_a ? " side A" : " side B") << ": the sum "
                          << got.f[c] << ", " << got.t[c] << " against add_fixed_load's " << want.f[c] << ", "
                          << want.t[c];
            return compared;
          }
      }
    }
  }
  return compared;
}
}  // namespace

// Random magnitudes over the whole range the clamp leaves (and beyond it), every seam of to_fixed's
// split and of the clamp, ties, signed zeros, infinities and NaN of either sign.
TEST(FixedLanes, BlockConversionIsToFixedForEveryInput) {
  RecordProperty("avx512_path", kFixedLanesVector ? "yes" : "no (the portable loop)");
  std::vector<real> values;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> mantissa(-2, 2);
  std::uniform_int_distribution<int> exponent(-70, 70);
  for (int k = 0; k < 400000; ++k) values.push_back(real(std::ldexp(mantissa(rng), exponent(rng))));
  for (int e = -2; e <= 64; ++e)
    for (const double d : {-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5}) {
      const double x = std::ldexp(1.0, e);
      for (const double v : {x + d, -(x + d), std::nextafter(x, 0.0), std::nextafter(x, 1e300), x * 0.75 + 0.5})
        values.push_back(real(v));
    }
  for (const double v : {0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1e300, -1e300, double(INFINITY), -double(INFINITY),
                         double(NAN), std::copysign(double(NAN), -1.0)})
    values.push_back(real(v));
  for (const real fs : {real(1), real(std::ldexp(1.0, 40)), real(std::ldexp(1.0, -20))})  // (every block compared)
    EXPECT_GE(expect_blocks_equal(values, fs, fs * 1024), 12 * values.size()) << "scale " << fs;
}
