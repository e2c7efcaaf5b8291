// The host engine's hand-vectorised code, behind one seam: each piece has a path for the
// instruction set it was written for and a portable path that gives the same bits (the tests hold
// them to it), and the engine's phases call only the functions below.
//  - FixedLanes: the pair lanes' loads converted to fixed point, a block at a time (pair pass).
//  - interleave3, interleave4: eight lanes' results written back as records (integration).
// Everything else in the lanes is plain loops over arrays, which the compiler vectorises.
//
// FixedLanes: the pair lanes' loads in quanta, a block at a time (Engine::pair_forces stores 64
// lanes' forces and torques at once): each lane's load on side A, to_fixed(F) and to_fixed(T_a),
// and on side B, to_fixed(-F) and to_fixed(T_b), the same integers as core/engine/fixed_loads.hpp's
// to_fixed, which the device engine and every other path call (tests/host/test_fixed_lanes.cpp).
//
// With AVX-512 DQ (`kFixedLanesVector`) the rounding itself is one instruction, vcvtpd2qq with its
// rounding embedded (to nearest, ties to even, whatever MXCSR says), after the same clamp: 7
// instructions for 8 loads, the scaling included, against to_fixed's 15 (to_fixed reads the
// integer off the bits of two rounding sums, so that AVX2, which has no vector conversion of
// doubles to 64-bit integers, vectorises it). GCC 12 vectorises neither std::rint nor llrint
// into it (it folds the cast of rint into a scalar llrint), hence the intrinsics, and with them
// to_fixed's clamp written again (core/ stays portable to the device; the test holds the two to
// the same bits). And the six components of 8 lanes are transposed in registers, so that each
// lane's six integers lie together, as the FixedLoad they are added to (the figures:
// bench/results/dev-2core-emr/inprocess_ab.md). Elsewhere, and with float reals, the portable
// loop over to_fixed, component-major.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__AVX512DQ__) && !defined(DEM_REAL_FLOAT)
#include <immintrin.h>
#define DEM_FIXED_LANES_AVX512 1
#else
#define DEM_FIXED_LANES_AVX512 0
#endif

#include "core/config.hpp"
#include "core/engine/fixed_loads.hpp"
#include "core/math/quat.hpp"

namespace dem::host {

// Whether FixedLanes converts with AVX-512 here (else the portable loop).
constexpr bool kFixedLanesVector = DEM_FIXED_LANES_AVX512 != 0;

// N lanes' loads in quanta (N a multiple of 8).
template <int N>
struct FixedLanes {
  static_assert(N % 8 == 0, "blocks of 8 lanes");

  // Converts every lane: f the force on A, ta and tb the torques on A and B, by component
  // ([c][lane], aligned to 64 bytes), in units of 1 / fs and 1 / ts.
  void convert(const real (*f)[N], const real (*ta)[N], const real (*tb)[N], real fs, real ts) {
#if DEM_FIXED_LANES_AVX512
    const __m512d clamp = _mm512_set1_pd(kFixedClamp), nclamp = _mm512_set1_pd(-kFixedClamp);
    const __m512d zero = _mm512_setzero_pd(), sign = _mm512_set1_pd(-0.0);
    // to_fixed's clamp (|s| below 2^60 kept, else 2^60 with s's sign; NaN, for which both
    // compares are false, +2^60), then the conversion, rounding to nearest, ties to even
    const auto fixed8 = [&](__m512d s) {
      const __mmask8 inside = _mm512_cmp_pd_mask(_mm512_abs_pd(s), clamp, _CMP_LT_OQ);
      const __mmask8 negative = _mm512_cmp_pd_mask(s, zero, _CMP_LT_OQ);
      const __m512d y = _mm512_mask_blend_pd(inside, _mm512_mask_blend_pd(negative, clamp, nclamp), s);
      return _mm512_cvt_roundpd_epi64(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    };
    const __m512d vfs = _mm512_set1_pd(fs), vts = _mm512_set1_pd(ts);
    for (int l = 0; l < N; l += 8) {
      __m512i qa[6], qb[6];
      for (int c = 0; c < 3; ++c) {
        const __m512d fl = _mm512_load_pd(f[c] + l);
        qa[c] = fixed8(_mm512_mul_pd(fl, vfs));
        qb[c] = fixed8(_mm512_mul_pd(_mm512_xor_pd(fl, sign), vfs));  // (-f exactly)
        qa[3 + c] = fixed8(_mm512_mul_pd(_mm512_load_pd(ta[c] + l), vts));
        qb[3 + c] = fixed8(_mm512_mul_pd(_mm512_load_pd(tb[c] + l), vts));
      }
      transpose_store(qa, a + l);
      transpose_store(qb, b + l);
    }
#else
    for (int c = 0; c < 3; ++c) {  // (one component a loop: so GCC vectorises it)
      const real *fc = f[c], *tac = ta[c], *tbc = tb[c];
      std::int64_t *af = a[c], *at = a[3 + c], *bf = b[c], *bt = b[3 + c];
#pragma omp simd
      for (int l = 0; l < N; ++l) {
        af[l] = to_fixed(fc[l], fs);
        at[l] = to_fixed(tac[l], ts);
        bf[l] = to_fixed(-fc[l], fs);
        bt[l] = to_fixed(tbc[l], ts);
      }
    }
#endif
  }

  // Lane l's load on side A, on side B, in quanta.
  FixedLoad side_a(int l) const { return load(a, l); }
  FixedLoad side_b(int l) const { return load(b, l); }

  // s += lane l's load on side A, on side B (add_fixed_load's sums).
  void add_side_a(FixedLoad& s, int l) const { add(s, a, l); }
  void add_side_b(FixedLoad& s, int l) const { add(s, b, l); }

 private:
#if DEM_FIXED_LANES_AVX512
  // lane-major: a lane's force and torque, then two unused
  alignas(64) std::int64_t a[N][8], b[N][8];
  static FixedLoad load(const std::int64_t (*q)[8], int l) {
    return FixedLoad{{q[l][0], q[l][1], q[l][2]}, {q[l][3], q[l][4], q[l][5]}};
  }
  // Four integers and two, each a vector add (wrapping, as fixed_add): from add_fixed_load's loop,
  // which takes a force and a torque component in turn, GCC 12 built the sum's vectors with
  // scalar inserts (in one process the pair phase 1.011-1.030 as fast on the bed, 1.023-1.026 on
  // the mixer).
  static void add(FixedLoad& s, const std::int64_t (*q)[8], int l) {
    static_assert(sizeof(FixedLoad) == 6 * sizeof(std::int64_t), "a FixedLoad is its six integers");
    auto* s4 = reinterpret_cast<__m256i*>(&s);
    auto* s2 = reinterpret_cast<__m128i*>(&s.t[1]);
    const auto* q4 = reinterpret_cast<const __m256i*>(q[l]);
    const auto* q2 = reinterpret_cast<const __m128i*>(q[l] + 4);
    _mm256_storeu_si256(s4, _mm256_add_epi64(_mm256_loadu_si256(s4), _mm256_load_si256(q4)));
    _mm_storeu_si128(s2, _mm_add_epi64(_mm_loadu_si128(s2), _mm_load_si128(q2)));
  }
  // rows[c] holds component c of 8 lanes; out[k] (8 integers each, aligned) gets lane k's six.
  // The transpose of an 8 x 8 block of 64-bit integers, the last two rows zero: pairs within
  // 128-bit lanes, then 128-bit lanes twice.
  static void transpose_store(const __m512i (&rows)[6], std::int64_t (*out)[8]) {
    const __m512i z = _mm512_setzero_si512();
    const auto pick = [](__m512i x, __m512i index, __m512i y) { return _mm512_permutex2var_epi64(x, index, y); };
    // (every step a vpermt2q: GCC 12's unpack and shuffle intrinsics start from an undefined vector,
    // and -Wmaybe-uninitialized says so)
    const __m512i lo = _mm512_set_epi64(14, 6, 12, 4, 10, 2, 8, 0), hi = _mm512_set_epi64(15, 7, 13, 5, 11, 3, 9, 1);
    const __m512i t0 = pick(rows[0], lo, rows[1]), t1 = pick(rows[0], hi, rows[1]);
    const __m512i t2 = pick(rows[2], lo, rows[3]), t3 = pick(rows[2], hi, rows[3]);
    const __m512i t4 = pick(rows[4], lo, rows[5]), t5 = pick(rows[4], hi, rows[5]);
    // 128-bit lanes 0 and 2 of each source (even), 1 and 3 (odd)
    const __m512i even = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0), odd = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
    const __m512i s0 = pick(t0, even, t2), s1 = pick(t0, odd, t2);
    const __m512i s2 = pick(t4, even, z), s3 = pick(t4, odd, z);
    const __m512i s4 = pick(t1, even, t3), s5 = pick(t1, odd, t3);
    const __m512i s6 = pick(t5, even, z), s7 = pick(t5, odd, z);
    _mm512_store_si512(out[0], pick(s0, even, s2));
    _mm512_store_si512(out[4], pick(s0, odd, s2));
    _mm512_store_si512(out[2], pick(s1, even, s3));
    _mm512_store_si512(out[6], pick(s1, odd, s3));
    _mm512_store_si512(out[1], pick(s4, even, s6));
    _mm512_store_si512(out[5], pick(s4, odd, s6));
    _mm512_store_si512(out[3], pick(s5, even, s7));
    _mm512_store_si512(out[7], pick(s5, odd, s7));
  }
#else
  // component-major: force x, y, z, torque x, y, z, each for every lane
  alignas(64) std::int64_t a[6][N], b[6][N];
  static FixedLoad load(const std::int64_t (*q)[N], int l) {
    return FixedLoad{{q[0][l], q[1][l], q[2][l]}, {q[3][l], q[4][l], q[5][l]}};
  }
  static void add(FixedLoad& s, const std::int64_t (*q)[N], int l) { add_fixed_load(s, load(q, l)); }
#endif
};

// interleave3, interleave4: eight lanes' components (arrays of 8) interleaved into 8 consecutive
// records of 3 (Vec3) or 4 (Quat) values at `out`: whole-vector loads of what the lanes' vector
// loop stored, two-source shuffles (AVX-512: vpermt2pd) and full-width stores, where a write-back
// lane by lane would wait on the vector loop's stores (bench/results/dev-2core-epyc/inprocess_ab.md
// has the figures). GCC's vector extensions; other compilers take the integration's lane-by-lane
// path (DEM_LANE_SHUFFLES undefined), which gives the same bits.
#if defined(__GNUC__) && !defined(__clang__)
#define DEM_LANE_SHUFFLES 1
static_assert(sizeof(Quat) == 4 * sizeof(real), "the write-back takes a Quat for four packed reals");
using Real8 = real __attribute__((vector_size(8 * sizeof(real))));
using Index8 = std::conditional_t<sizeof(real) == 8, std::int64_t, std::int32_t> __attribute__((vector_size(8 * sizeof(real))));
inline Real8 load8(const real* a) {
  Real8 v;
  std::memcpy(&v, a, sizeof v);
  return v;
}
inline void store8(real* a, const Real8& v) { std::memcpy(a, &v, sizeof v); }
inline void interleave3(const real* xs, const real* ys, const real* zs, real* out) {
  const Real8 x = load8(xs), y = load8(ys), z = load8(zs);
  const Real8 t0 = __builtin_shuffle(x, y, Index8{0, 8, 0, 1, 9, 0, 2, 10});
  const Real8 t1 = __builtin_shuffle(x, y, Index8{0, 3, 11, 0, 4, 12, 0, 5});
  const Real8 t2 = __builtin_shuffle(x, y, Index8{13, 0, 6, 14, 0, 7, 15, 0});
  const Real8 o0 = __builtin_shuffle(t0, z, Index8{0, 1, 8, 3, 4, 9, 6, 7});
  const Real8 o1 = __builtin_shuffle(t1, z, Index8{10, 1, 2, 11, 4, 5, 12, 7});
  const Real8 o2 = __builtin_shuffle(t2, z, Index8{0, 13, 2, 3, 14, 5, 6, 15});
  store8(out, o0), store8(out + 8, o1), store8(out + 16, o2);
}
inline void interleave4(const real* ws, const real* xs, const real* ys, const real* zs, real* out) {
  const Real8 w = load8(ws), x = load8(xs), y = load8(ys), z = load8(zs);
  const Real8 wx_lo = __builtin_shuffle(w, x, Index8{0, 8, 1, 9, 2, 10, 3, 11});  // w0 x0 w1 x1 ...
  const Real8 wx_hi = __builtin_shuffle(w, x, Index8{4, 12, 5, 13, 6, 14, 7, 15});
  const Real8 yz_lo = __builtin_shuffle(y, z, Index8{0, 8, 1, 9, 2, 10, 3, 11});
  const Real8 yz_hi = __builtin_shuffle(y, z, Index8{4, 12, 5, 13, 6, 14, 7, 15});
  const Real8 o0 = __builtin_shuffle(wx_lo, yz_lo, Index8{0, 1, 8, 9, 2, 3, 10, 11});
  const Real8 o1 = __builtin_shuffle(wx_lo, yz_lo, Index8{4, 5, 12, 13, 6, 7, 14, 15});
  const Real8 o2 = __builtin_shuffle(wx_hi, yz_hi, Index8{0, 1, 8, 9, 2, 3, 10, 11});
  const Real8 o3 = __builtin_shuffle(wx_hi, yz_hi, Index8{4, 5, 12, 13, 6, 7, 14, 15});
  store8(out, o0), store8(out + 8, o1), store8(out + 16, o2), store8(out + 24, o3);
}
#endif

}  // namespace dem::host
