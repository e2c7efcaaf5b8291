// Vec3: a small POD 3-vector for host and device code (as HOOMD's vec3, Box2D's b2Vec2).
// Eigen stays out of core/: it is not device-clean in every configuration and we need only this.
#pragma once
#include "core/config.hpp"

namespace dem {

struct Vec3 {
  real x, y, z;
};
static_assert(sizeof(Vec3) == 3 * sizeof(real), "Vec3 must stay a plain triple");

DEM_HD inline Vec3 make_vec3(real x, real y, real z) { return Vec3{x, y, z}; }
DEM_HD inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
DEM_HD inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
DEM_HD inline Vec3 operator-(Vec3 a) { return {-a.x, -a.y, -a.z}; }
DEM_HD inline Vec3 operator*(real s, Vec3 a) { return {s * a.x, s * a.y, s * a.z}; }
DEM_HD inline Vec3 operator*(Vec3 a, real s) { return {s * a.x, s * a.y, s * a.z}; }
DEM_HD inline Vec3 operator/(Vec3 a, real s) { return {a.x / s, a.y / s, a.z / s}; }
DEM_HD inline Vec3& operator+=(Vec3& a, Vec3 b) { a = a + b; return a; }
DEM_HD inline Vec3& operator-=(Vec3& a, Vec3 b) { a = a - b; return a; }
DEM_HD inline Vec3& operator*=(Vec3& a, real s) { a = a * s; return a; }
DEM_HD inline real dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
DEM_HD inline Vec3 cross(Vec3 a, Vec3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
DEM_HD inline real norm2(Vec3 a) { return dot(a, a); }
// c ? a : b per component: a choice the vectoriser turns into a blend (no branch)
DEM_HD inline Vec3 select(bool c, Vec3 a, Vec3 b) { return Vec3{c ? a.x : b.x, c ? a.y : b.y, c ? a.z : b.z}; }
DEM_HD inline real norm(Vec3 a) { return std::sqrt(dot(a, a)); }
// Unit vector along a; the zero vector stays zero (callers that need a direction check first).
DEM_HD inline Vec3 normalized(Vec3 a) {
  const real n = norm(a);
  return n > real(0) ? a * (real(1) / n) : a;
}
DEM_HD inline bool is_finite(Vec3 a) {
  return std::isfinite(a.x) && std::isfinite(a.y) && std::isfinite(a.z);
}

}  // namespace dem
