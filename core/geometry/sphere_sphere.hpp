// Sphere against sphere.
#pragma once
#include "core/geometry/contact_geometry.hpp"

namespace dem {

// Overlap, normal (from B to A) and contact point of spheres A (xa, ra) and B (xb, rb).
// The contact point lies in the middle of the overlap zone, at distance ra - delta/2 from A's
// centre, so both lever arms shrink symmetrically with the indentation.
// Coincident centres (d = 0) have no defined normal: the x axis is used, and the caller's status
// checks will already have flagged the state long before (overlap = ra + rb).
DEM_HD inline ContactGeometry sphere_sphere(Vec3 xa, real ra, Vec3 xb, real rb) {
  const Vec3 d = xa - xb;
  const real dist = norm(d);
  ContactGeometry g;
  const real inv_dist = real(1) / dist;  // (inf at d = 0, not kept: no branch, see select)
  g.normal = select(dist > real(0), d * inv_dist, Vec3{1, 0, 0});
  g.overlap = ra + rb - dist;
  g.point = xa - (ra - real(0.5) * g.overlap) * g.normal;
  return g;
}

// True iff spheres A and B overlap (sphere_sphere would give overlap > 0, up to rounding at
// exact touching), without a square root: the cheap test callers run before sphere_sphere.
// (from the difference d = x_a - x_b, which periodic boundaries take to its nearest image)
DEM_HD inline bool spheres_overlap_at(Vec3 d, real ra, real rb) {
  const real reach = ra + rb;
  return norm2(d) < reach * reach;
}
DEM_HD inline bool spheres_overlap(Vec3 xa, real ra, Vec3 xb, real rb) { return spheres_overlap_at(xa - xb, ra, rb); }

// Velocity of the material point at `point` of a rigid body (translation v, angular velocity w,
// centre x): the kinematics at the contact for both particles and moving walls.
DEM_HD inline Vec3 rigid_point_velocity(Vec3 v, Vec3 w, Vec3 x, Vec3 point) {
  return v + cross(w, point - x);
}

}  // namespace dem
