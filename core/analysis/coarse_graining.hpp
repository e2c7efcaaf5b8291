// Coarse-graining kernels (Weinhart et al., Granular Matter 14 (2012) 289): a particle's weights
// over the cells of a regular grid, each the kernel integrated over the cell, normalised so that
// they add up to one. Fields built from them conserve mass and momentum exactly, whatever the
// width. The kernels are products of one 1-D kernel per axis, W(x) = w(x) w(y) w(z), so a cell's
// weight is the product of three 1-D integrals, and the arithmetic is +, -, *, / only, the same
// bits on every processor:
//   Lucy      w(u) = 5/(4c) (1 + 3|u|/c) (1 - |u|/c)^3 for |u| < c (c: the width), integrated
//             exactly (its antiderivative is a polynomial);
//   Gaussian  w(u) = exp(-u^2 / (2 s^2)) / (s sqrt(2 pi)) cut at 3 s (s: the width), integrated
//             over each cell by 4-point Gauss-Legendre quadrature of cg_exp (below).
// The product of 1-D Lucy kernels is not the radial Lucy kernel of MercuryCG; both are smooth,
// compact and integrate to one, which is what the fields need.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/config.hpp"
#include "core/geometry/periodic.hpp"
#include "core/geometry/sphere_sphere.hpp"
#include "core/math/vec3.hpp"

namespace dem {

enum class CgKernel : std::uint8_t { Lucy = 0, Gaussian = 1 };

// The most cells a kernel's support may span along one axis (the width's allowed range ends where
// it would span more: scene key coarse_graining.width).
constexpr int kMaxCgSpan = 64;

DEM_HD inline double cg_cutoff(CgKernel k, double width) { return k == CgKernel::Lucy ? width : 3 * width; }

// exp(x) for x in [-5, 0] by range reduction to [-ln2/2, ln2/2] and its Taylor polynomial to
// degree 13 (relative error below 2e-16): no library call, so CUDA and glibc give the same bits.
DEM_HD inline double cg_exp(double x) {
  const double ln2_hi = 0.693147180369123816490, ln2_lo = 1.90821492927058770002e-10;
  double kf = x * 1.44269504088896340736;  // x / ln 2, rounded to the nearest integer below
  const int k = static_cast<int>(kf < 0 ? kf - 0.5 : kf + 0.5);
  kf = k;
  const double r = (x - kf * ln2_hi) - kf * ln2_lo;
  double p = 1.0 / 6227020800.0;  // 1/13!
  const double inv_fact[13] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                               1.0 / 40320.0,     1.0 / 5040.0,     1.0 / 720.0,      1.0 / 120.0,
                               1.0 / 24.0,        1.0 / 6.0,        0.5,              1.0,
                               1.0};
  for (int j = 0; j < 13; ++j) p = p * r + inv_fact[j];
  for (int j = 0; j < -k; ++j) p *= 0.5;  // 2^k, exactly (k <= 0 here)
  for (int j = 0; j < k; ++j) p *= 2.0;
  return p;
}

// The 1-D kernel's integral from -infinity to u (Lucy), or over [a, b] (Gaussian, below).
DEM_HD inline double cg_lucy_cdf(double u, double c) {
  const double s = u / c;
  if (s <= -1) return 0;
  if (s >= 1) return 1;
  const double a = s < 0 ? -s : s;
  // (5/4) (s - 2 s^3 + 2 s^4 - 3/5 s^5): the integral of (5/4)(1 - 6s^2 + 8s^3 - 3s^4) from 0
  const double g = 1.25 * a * (1 + a * a * (-2 + a * (2 - 0.6 * a)));
  return s < 0 ? 0.5 - g : 0.5 + g;
}

DEM_HD inline double cg_gauss_integral(double a, double b, double s) {
  const double cut = 3 * s;
  if (a < -cut) a = -cut;
  if (b > cut) b = cut;
  if (b <= a) return 0;
  // 4-point Gauss-Legendre on [a, b] (the factor 1 / (s sqrt(2 pi)) left out: the weights are
  // normalised afterwards)
  const double node[4] = {-0.861136311594052575224, -0.339981043584856264803, 0.339981043584856264803,
                          0.861136311594052575224};
  const double weight[4] = {0.347854845137453857373, 0.652145154862546142627, 0.652145154862546142627,
                            0.347854845137453857373};
  const double mid = 0.5 * (a + b), half = 0.5 * (b - a);
  double sum = 0;
  for (int q = 0; q < 4; ++q) {
    const double u = (mid + half * node[q]) / s;
    sum += weight[q] * cg_exp(-0.5 * u * u);
  }
  return sum * half;
}

// A particle's weights along one axis: cells first .. first + count - 1 (count <= kMaxCgSpan) of
// a grid from lo with n cells of size h, normalised to add up to one. On a periodic axis
// (periodic = true; the grid spans the period) the cells wrap: the caller takes (first + k) mod n.
// Returns false when the support leaves a non-periodic grid (the caller's grid is too small).
struct CgAxisWeights {
  std::int32_t first, count;
  double w[kMaxCgSpan];
};
DEM_HD inline bool cg_axis_weights(double x, double lo, double h, std::int32_t n, bool periodic, CgKernel kernel,
                                   double width, CgAxisWeights& out) {
  const double cut = cg_cutoff(kernel, width);
  const std::int32_t first = static_cast<std::int32_t>(std::floor((x - cut - lo) / h));
  const std::int32_t last = static_cast<std::int32_t>(std::floor((x + cut - lo) / h));
  if (last - first + 1 > kMaxCgSpan) return false;
  if (!periodic && (first < 0 || last >= n)) return false;
  out.first = first;
  out.count = last - first + 1;
  double total = 0;
  for (std::int32_t k = 0; k < out.count; ++k) {
    const double a = lo + double(first + k) * h - x, b = a + h;
    out.w[k] = kernel == CgKernel::Lucy ? cg_lucy_cdf(b, width) - cg_lucy_cdf(a, width) : cg_gauss_integral(a, b, width);
    total += out.w[k];
  }
  for (std::int32_t k = 0; k < out.count; ++k) out.w[k] /= total;
  return true;
}

// How a sample is taken, as both engines' per-element bodies read it: the grid (n[k] cells of size
// h[k] from lo[k]; a periodic axis spans its period and its cells wrap), the region whose
// particles count (on the non-periodic axes), the kernel and its width, and span, the most cells
// a kernel's support may span along an axis (the stride of the weights).
struct CgSampling {
  double lo[3], h[3], min[3], max[3];
  std::int32_t n[3];
  bool periodic[3];
  CgKernel kernel;
  double width;
  std::int32_t span;
  DEM_HD bool counted(Vec3 x) const {
    const double c[3] = {x.x, x.y, x.z};
    for (int k = 0; k < 3; ++k)
      if (!periodic[k] && (c[k] < min[k] || c[k] > max[k])) return false;
    return true;
  }
  // Point q's weights along the three axes (x: its position) into first[3q + k], count[3q + k]
  // and weight[(3q + k) span ...]; false (its counts 0) when its kernel leaves the grid or spans
  // more than span cells.
  DEM_HD bool weigh(const double x[3], std::int64_t q, std::int32_t* first, std::int32_t* count, double* weight) const {
    CgAxisWeights w;
    for (int k = 0; k < 3; ++k) {
      if (!cg_axis_weights(x[k], lo[k], h[k], n[k], periodic[k], kernel, width, w) || w.count > span) {
        count[3 * q] = count[3 * q + 1] = count[3 * q + 2] = 0;
        return false;
      }
      first[3 * q + k] = w.first;
      count[3 * q + k] = w.count;
      for (std::int32_t a = 0; a < w.count; ++a) weight[(3 * q + k) * std::int64_t(span) + a] = w.w[a];
    }
    return true;
  }
};

// A sample's sums in one cell: mass (kg), volume (m^3), momentum (kg m/s) and m v v (xx yy zz xy xz
// yz), each term a particle's value times its weight in the cell.
struct CgCellSums {
  double mass, volume, momentum[3], mvv[6];
};

// What one particle adds to a cell, before its weight: its mass, volume (of a sphere of its
// volume-equivalent diameter `size`), velocity v and v v.
struct CgParticleTerms {
  double m, vol, u[3], uu[6];
};
DEM_HD inline CgParticleTerms cg_particle_terms(double inv_mass, double size, double vx, double vy, double vz) {
  CgParticleTerms t;
  t.m = 1.0 / inv_mass;
  t.vol = 3.14159265358979323846 / 6 * size * size * size;
  t.u[0] = vx, t.u[1] = vy, t.u[2] = vz;
  t.uu[0] = vx * vx, t.uu[1] = vy * vy, t.uu[2] = vz * vz, t.uu[3] = vx * vy, t.uu[4] = vx * vz, t.uu[5] = vy * vz;
  return t;
}

// Adds a particle's terms with its weight wc in the cell (the weight: its three axes' weights
// multiplied as (w_z w_y) w_x). Both engines add a cell's terms in increasing particle id, so the
// sums have the same bits.
DEM_HD inline void cg_add(CgCellSums& s, const CgParticleTerms& t, double wc) {
  const double mw = t.m * wc;
  s.mass += mw;
  s.volume += t.vol * wc;
  for (int k = 0; k < 3; ++k) s.momentum[k] += mw * t.u[k];
  for (int k = 0; k < 6; ++k) s.mvv[k] += mw * t.uu[k];
}

// The contact stress (MercuryCG's): each contact's force F on a particle spread along the piece of
// its branch from the particle's centre (start) to the contact point (start + arm), as
// F (x) (x - c) = -F (x) arm, by the midpoint rule on m equal parts, m the piece's length over half
// the kernel's cutoff rounded up (at least 1).
struct CgStress {
  double s[9];  // row-major: force component, then branch component
};
DEM_HD inline std::int64_t cg_piece_points(Vec3 arm, double half_cut) {
  const double len = std::sqrt(double(norm2(arm)));
  const std::int64_t m = static_cast<std::int64_t>(std::ceil(len / half_cut));
  return m > 1 ? m : 1;
}
// Point `point` of m along the piece, into x.
DEM_HD inline void cg_piece_point(Vec3 start, Vec3 arm, std::int64_t point, std::int64_t m, double x[3]) {
  const double s = (double(point) + 0.5) / double(m);
  x[0] = double(start.x) + s * double(arm.x);
  x[1] = double(start.y) + s * double(arm.y);
  x[2] = double(start.z) + s * double(arm.z);
}
// A touching pair as the contact stress takes it (a: the side of smaller id): b's centre at its
// image nearest a, and the contact point near a, a polyhedral pair's recorded point (point; null
// for two spheres, whose point lies mid-overlap on the line of centres).
struct CgPairBranch {
  Vec3 xb, c;
};
DEM_HD inline CgPairBranch cg_pair_branch(const PeriodicBox& box, Vec3 xa, real ra, Vec3 xb, real rb, const Vec3* point) {
  CgPairBranch out;
  out.xb = box.any() ? image_near(box, xa, xb) : xb;
  out.c = point != nullptr ? xa + nearest_image(box, *point - xa) : sphere_sphere(xa, ra, out.xb, rb).point;
  return out;
}
// A mesh contact's point near the particle's centre x.
DEM_HD inline Vec3 cg_wall_point(const PeriodicBox& box, Vec3 x, Vec3 point) { return x + nearest_image(box, point - x); }

// Each point's share of F (x) (x - c).
DEM_HD inline CgStress cg_piece_term(Vec3 force, Vec3 arm, std::int64_t m) {
  const double fx[3] = {force.x, force.y, force.z}, a[3] = {arm.x, arm.y, arm.z};
  CgStress t;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) t.s[3 * r + c] = -fx[r] * a[c] / double(m);
  return t;
}
DEM_HD inline void cg_add_stress(CgStress& sum, const CgStress& term, double wc) {
  for (int k = 0; k < 9; ++k) sum.s[k] += term.s[k] * wc;
}

}  // namespace dem
