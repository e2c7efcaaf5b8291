// The exact sum of doubles (host/sim/exact_sum.hpp): the correctly rounded total of the terms, the
// same bits in any order and any split.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "host/sim/exact_sum.hpp"

namespace dem::host {
namespace {

__extension__ typedef __int128 Int128;

// Terms m 2^e with |m| < 2^53 and e in [-40, 10]: their exact sum is an integer times 2^-40 of at
// most 120 bits, which a 128-bit integer holds, and its conversion to double rounds once.
TEST(ExactSum, IsTheCorrectlyRoundedTotalInAnyOrderAndSplit) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> mant(-(std::int64_t(1) << 53) + 1, (std::int64_t(1) << 53) - 1);
  std::uniform_int_distribution<int> ex(-40, 10);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = trial == 0 ? 1 : 20000;
    std::vector<double> x(n);
    Int128 exact = 0;
    for (double& v : x) {
      const std::int64_t m = mant(rng);
      const int e = ex(rng);
      v = std::ldexp(double(m), e);
      exact += static_cast<Int128>(m) << (e + 40);
    }
    const double want = exact < 0 ? -std::ldexp(double(static_cast<ExactSumWide>(-exact)), -40)
                                  : std::ldexp(double(static_cast<ExactSumWide>(exact)), -40);
    ExactSum forward, shuffled, parts;
    for (double v : x) forward.add(v);
    std::shuffle(x.begin(), x.end(), rng);
    for (double v : x) shuffled.add(v);
    for (int part = 0; part < 5; ++part) {
      ExactSum mine;
      for (std::size_t k = std::size_t(part); k < n; k += 5) mine.add(x[k]);
      parts.merge(mine);
    }
    EXPECT_EQ(forward.value(), want) << trial;
    EXPECT_EQ(shuffled.value(), want) << trial;
    EXPECT_EQ(parts.value(), want) << trial;
    EXPECT_EQ(ExactSum::from_words(forward.words()).value(), want) << trial;
  }
}

TEST(ExactSum, KeepsWhatADoubleSumLoses) {
  ExactSum s;
  for (double v : {1e300, 1.0, -1e300, 1e-300, 3.0}) s.add(v);  // a double sum gives 3
  EXPECT_EQ(s.value(), 4.0);
  ExactSum tiny;
  tiny.add(std::numeric_limits<double>::denorm_min());
  tiny.add(std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(tiny.value(), 2 * std::numeric_limits<double>::denorm_min());
  ExactSum big;
  big.add(std::numeric_limits<double>::max());
  big.add(-std::numeric_limits<double>::max());
  big.add(-0.5);
  EXPECT_EQ(big.value(), -0.5);
  ExactSum none;
  EXPECT_EQ(none.value(), 0.0);
  ExactSum inf;
  inf.add(1.0);
  inf.add(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isinf(inf.value()));
  EXPECT_FALSE(inf.finite());
}

}  // namespace
}  // namespace dem::host
