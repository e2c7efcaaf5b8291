// An exact sum of doubles (a long accumulator, Kulisch's): every term is added without rounding
// into a fixed-point number wide enough for any double, and the total is rounded once, to the
// nearest. Addition is then exact and associative: the same bits in any order and for any split
// of the terms between threads or processes (merge, or the words' integer sums across MPI
// ranks), which a floating-point sum gives in no order. For the run's reported sums over the
// particles (diagnostics.csv's energies and speeds): a few per probe time, each O(1) per term.
// Hand-written: no Debian or PyPI package offers an exact summation of doubles for C++.
#pragma once
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace dem::host {

__extension__ typedef unsigned __int128 ExactSumWide;  // (GCC's and Clang's 128-bit integer)

class ExactSum {
 public:
  // Digits of 32 bits, digit k worth 2^(32 k + kLowExponent): from below the lowest bit a double's
  // 53-bit significand can place (2^-1126, that of the smallest subnormal written as 2^52
  // 2^-1126) to above the largest double (2^1024) times 2^64 (room for 2^64 terms).
  static constexpr int kLowExponent = -1152;
  static constexpr int kDigits = 70;
  using Words = std::array<std::int64_t, kDigits>;

  void add(double x) {
    if (x == 0) return;
    if (!std::isfinite(x)) {
      special_ = special_ == 0 ? x : special_ + x;  // (inf + -inf: NaN, as a double sum gives)
      return;
    }
    int e = 0;
    const double m = std::frexp(std::fabs(x), &e);      // |x| = m 2^e, m in [0.5, 1)
    const std::uint64_t bits = static_cast<std::uint64_t>(std::ldexp(m, 53));  // exact: 53 bits
    const int shift = e - 53 - kLowExponent;           // |x| = bits 2^(shift + kLowExponent), shift >= 26
    const int at = shift / 32, offset = shift % 32;
    const ExactSumWide v = static_cast<ExactSumWide>(bits) << offset;  // < 2^85
    const std::int64_t sign = x < 0 ? -1 : 1;
    digit_[at] += sign * static_cast<std::int64_t>(v & 0xffffffffu);
    digit_[at + 1] += sign * static_cast<std::int64_t>((v >> 32) & 0xffffffffu);
    digit_[at + 2] += sign * static_cast<std::int64_t>(v >> 64);
    if (++pending_ == kCarryEvery) normalize();
  }
  void merge(const ExactSum& o) {
    ExactSum b = o;
    b.normalize();
    normalize();
    for (int k = 0; k < kDigits; ++k) digit_[k] += b.digit_[k];
    special_ = special_ == 0 ? b.special_ : (b.special_ == 0 ? special_ : special_ + b.special_);
    normalize();
  }
  // The total, rounded once to the nearest double (ties to even; a total in the subnormal range
  // may round twice).
  double value() const {
    if (special_ != 0) return special_;
    ExactSum s = *this;
    s.normalize();
    Words d = s.digit_;
    const bool negative = d[kDigits - 1] < 0;
    if (negative) {  // the magnitude: the digits of minus the number
      std::int64_t carry = 0;
      for (int k = 0; k < kDigits; ++k) {
        std::int64_t v = -d[k] + carry;
        carry = v >> 32;  // (floor)
        d[k] = v - carry * (std::int64_t(1) << 32);
      }
    }
    int top = kDigits - 1;
    while (top >= 0 && d[top] == 0) --top;
    if (top < 0) return 0;
    // the top three digits (at least 65 significant bits), the rest as a sticky bit below them
    ExactSumWide t = 0;
    for (int k = top; k >= top - 2; --k) t = (t << 32) | static_cast<std::uint64_t>(k >= 0 ? d[k] : 0);
    bool sticky = false;
    for (int k = top - 3; k >= 0 && !sticky; --k) sticky = d[k] != 0;
    if (sticky) t |= 1;
    const double r = std::ldexp(static_cast<double>(t), 32 * (top - 2) + kLowExponent);
    return negative ? -r : r;
  }
  // The digits, each in [0, 2^32) but the top one (the sign), for an integer sum across MPI ranks
  // (the ranks' words added digit by digit, then from_words); no infinite or NaN term allowed.
  Words words() const {
    ExactSum s = *this;
    s.normalize();
    return s.digit_;
  }
  bool finite() const { return special_ == 0; }
  static ExactSum from_words(const Words& w) {
    ExactSum s;
    s.digit_ = w;
    s.normalize();
    return s;
  }

 private:
  // A digit takes at most 2^32 a term: carried after 2^30 terms, it never passes 2^62.
  static constexpr int kCarryEvery = 1 << 30;
  void normalize() {
    for (int k = 0; k + 1 < kDigits; ++k) {
      const std::int64_t carry = digit_[k] >> 32;  // (floor)
      digit_[k] -= carry * (std::int64_t(1) << 32);
      digit_[k + 1] += carry;
    }
    pending_ = 0;
  }
  Words digit_{};
  int pending_ = 0;
  double special_ = 0;  // the sum of the infinite and NaN terms, if any
};

}  // namespace dem::host
