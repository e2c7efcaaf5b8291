// Periodic boundaries: the box, nearest images and wrapping, written once for both engines.
//
// Positions on a periodic axis are kept in [lo, lo + L): a particle that leaves through one face is
// moved by one period right after its integration step (wrap_position), so a trajectory's bits
// depend on nothing but the trajectory (not on when the lists are rebuilt). Distances between
// particles are taken to the nearest image: the difference first, then a shift by whole periods
// (nearest_image); fl(a - b) = -fl(b - a), so both sides of a pair see the same bits, and where no
// shift is needed the difference is untouched, so a periodic run where nothing crosses has the bits
// of the same run without periodic axes. Meshes are not repeated: a wall that should continue across
// a periodic face (a chute's base) must span the whole period, and near the face it must look the
// same on both sides (a plane, or a profile that repeats with the period): a particle's mesh
// contacts are evaluated where it is, so a different shape across the face is met only once the
// particle has crossed.
#pragma once
#include <cmath>

#include "core/math/vec3.hpp"

namespace dem {

struct PeriodicBox {
  Vec3 lo{0, 0, 0};      // m, lower corner on the periodic axes
  Vec3 hi{0, 0, 0};      // m, lo + length
  Vec3 length{0, 0, 0};  // m, the period on each axis; 0: that axis is not periodic
  Vec3 half{0, 0, 0};    // m, length / 2
  DEM_HD bool any() const { return length.x > 0 || length.y > 0 || length.z > 0; }
};

// The box [lo, hi) with the axes flagged periodic (no axis: a box that wraps nothing).
inline PeriodicBox make_periodic_box(Vec3 lo, Vec3 hi, bool px, bool py, bool pz) {
  PeriodicBox b;
  const Vec3 l = hi - lo;
  b.length = Vec3{px ? l.x : real(0), py ? l.y : real(0), pz ? l.z : real(0)};
  b.lo = Vec3{px ? lo.x : real(0), py ? lo.y : real(0), pz ? lo.z : real(0)};
  b.hi = b.lo + b.length;
  b.half = real(0.5) * b.length;
  return b;
}

// A box [lo, hi] replaced on the periodic axes by the period grown by `margin` on both sides
// (margin 0: the grid's origin at the period's lower face).
DEM_HD inline void cover_periods(const PeriodicBox& b, Vec3& lo, Vec3& hi, real margin) {
  if (b.length.x > 0) lo.x = b.lo.x - margin, hi.x = b.hi.x + margin;
  if (b.length.y > 0) lo.y = b.lo.y - margin, hi.y = b.hi.y + margin;
  if (b.length.z > 0) lo.z = b.lo.z - margin, hi.z = b.hi.z + margin;
}

// One coordinate of a difference taken to its nearest image (|d| < 1.5 L: positions in the box).
DEM_HD inline real nearest_image_coord(real d, real length, real half) {
  // (every case computed, one kept: no branch, so that the host's cheap pair tests vectorise)
  const real down = d - length, up = d + length;
  return length > 0 ? (d > half ? down : (d < -half ? up : d)) : d;
}

// The difference d = x_a - x_b of two positions in the box, taken to its nearest image.
DEM_HD inline Vec3 nearest_image(const PeriodicBox& b, Vec3 d) {
  return Vec3{nearest_image_coord(d.x, b.length.x, b.half.x), nearest_image_coord(d.y, b.length.y, b.half.y),
              nearest_image_coord(d.z, b.length.z, b.half.z)};
}

// One coordinate of image_near, from the difference d = x_a - x_b: x_b moved by a period where
// |d| exceeds half of it. Without a branch (every case computed, one kept), so that the host's
// pair pass runs it in vector lanes.
DEM_HD inline real image_coord_near_diff(real d, real xb, real length, real half) {
  const real shift = d > half ? length : (d < -half ? -length : real(0));
  return length > 0 ? xb + shift : xb;
}

// x_b moved by whole periods to its image nearest to x_a (the same bits where no shift is needed).
DEM_HD inline Vec3 image_near(const PeriodicBox& b, Vec3 xa, Vec3 xb) {
  const Vec3 d = xa - xb;
  return Vec3{image_coord_near_diff(d.x, xb.x, b.length.x, b.half.x),
              image_coord_near_diff(d.y, xb.y, b.length.y, b.half.y),
              image_coord_near_diff(d.z, xb.z, b.length.z, b.half.z)};
}

// One coordinate moved back into [lo, hi) after one step (it moves far less than a period per
// step). The result is always inside, whatever the rounding: x - L can fall one ulp below lo (then
// lo) and x + L can round up to hi (then lo, where it belongs).
DEM_HD inline real wrap_coord_once(real c, real lo, real hi, real length) {
  // (every case computed, one kept: no branch, so that the host's integration vectorises)
  const real down = c - length, up = c + length;
  const real from_above = down < lo ? lo : down;
  const real from_below = up >= hi ? lo : up;
  return c >= hi ? from_above : (c < lo ? from_below : c);
}

// A position moved back into [lo, hi) on the periodic axes after one step.
DEM_HD inline void wrap_position(const PeriodicBox& b, Vec3& x) {
  x.x = b.length.x > 0 ? wrap_coord_once(x.x, b.lo.x, b.hi.x, b.length.x) : x.x;
  x.y = b.length.y > 0 ? wrap_coord_once(x.y, b.lo.y, b.hi.y, b.length.y) : x.y;
  x.z = b.length.z > 0 ? wrap_coord_once(x.z, b.lo.z, b.hi.z, b.length.z) : x.z;
}

// A position anywhere moved into [lo, hi) on the periodic axes (particles placed or added); one
// already inside is returned as it is, so this agrees with wrap_position.
DEM_HD inline Vec3 wrap_far(const PeriodicBox& b, Vec3 x) {
  auto one = [](real c, real lo, real hi, real l) {
    if (!(l > 0) || (c >= lo && c < hi)) return c;
    const real w = c - l * std::floor((c - lo) / l);
    return w >= lo && w < hi ? w : lo;
  };
  return Vec3{one(x.x, b.lo.x, b.hi.x, b.length.x), one(x.y, b.lo.y, b.hi.y, b.length.y),
              one(x.z, b.lo.z, b.hi.z, b.length.z)};
}

// The images of a sphere at x in the box that a search of radius q must look at: x itself first,
// then x shifted by one period on every combination of the axes where it lies within q of a face
// (at most 8; the periods must exceed 2 q). Used by the mesh candidate search, since meshes are
// not repeated: a particle that crosses a face then already has the elements it meets there.
DEM_HD inline int near_face_images(const PeriodicBox& b, Vec3 x, real q, Vec3 out[8]) {
  out[0] = x;
  int n = 1;
  const real l[3] = {b.length.x, b.length.y, b.length.z};
  const real c[3] = {x.x, x.y, x.z};
  const real lo[3] = {b.lo.x, b.lo.y, b.lo.z};
  const real hi[3] = {b.hi.x, b.hi.y, b.hi.z};
  for (int a = 0; a < 3; ++a) {
    if (!(l[a] > 0)) continue;
    const real shift = c[a] - lo[a] < q ? l[a] : (hi[a] - c[a] < q ? -l[a] : real(0));
    if (shift == 0) continue;
    for (int k = 0; k < n; ++k) {
      Vec3 y = out[k];
      if (a == 0) y.x += shift;
      else if (a == 1) y.y += shift;
      else y.z += shift;
      out[n + k] = y;
    }
    n *= 2;
  }
  return n;
}

}  // namespace dem
