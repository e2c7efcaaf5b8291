// The Fast Intersection Test of santasusana2016 Sect. 4 (Table 2): does a sphere touch a planar
// convex polygon? Only a yes/no: type, point and weights are left to the Double Hierarchy (H2).
#pragma once
#include "core/geometry/polygon.hpp"

namespace dem {

// Plane stage shared by the Fast Intersection Test and the Contact Type Hierarchy.
struct PlaneProjection {
  Vec3 normal;     // unit normal, flipped to point towards the sphere centre (zero-thickness walls
                   // are contacted from both sides, Sect. 4.1)
  real distance;   // d_pi >= 0, Eq. 16
  Vec3 projected;  // C_pi = C - d_pi n, Eq. 17
  int first_out;   // index_e: first edge whose inside-outside sign s_a is negative (Eq. 19),
                   // or -1 when C_pi lies inside the facet (or on its boundary)
};

// n0: the polygon's unit winding normal (polygon_normal, Eqs. 14-15), passed in when the caller
// keeps it per element; the overload below computes it.
// Signed distance of c from the plane through v0 with unit normal n0 (Eq. 16).
DEM_HD inline real plane_offset(Vec3 v0, Vec3 n0, Vec3 c) { return dot(n0, c - v0); }

DEM_HD inline PlaneProjection project_on_polygon(const Polygon& p, Vec3 n0, Vec3 c) {
  const real d = plane_offset(p.v[0], n0, c);      // Eq. 16, signed
  PlaneProjection pp;
  pp.normal = d < real(0) ? -n0 : n0;
  pp.distance = dem_abs(d);
  pp.projected = c - d * n0;                       // Eq. 17
  pp.first_out = -1;
  // Eq. 19 uses the element's own winding normal n0, whatever side the sphere is on: inside the
  // facet every s_a >= 0.
  for (int a = 0; a < p.n; ++a) {
    const Vec3 e = p.v[next_vertex(a, p.n)] - p.v[a];                 // Eq. 18
    const real s = dot(cross(e, pp.projected - p.v[a]), n0);    // Eq. 19
    if (s < real(0)) {
      pp.first_out = a;
      break;
    }
  }
  return pp;
}
DEM_HD inline PlaneProjection project_on_polygon(const Polygon& p, Vec3 c) {
  return project_on_polygon(p, polygon_normal(p), c);  // Eqs. 14-15 (winding orientation)
}

// Closest point of the infinite line through edge a to c, as the parameter eta along the edge
// (Eqs. 21-24: eta in [0, 1] is an edge contact, eta < 0 points to v_a, eta > 1 to v_a+1).
struct EdgeProjection {
  real eta;
  Vec3 point;   // Pc on the line, Eq. 21
  real dist2;   // de^2, Eq. 20
};
DEM_HD inline EdgeProjection project_on_edge(const Polygon& p, int a, Vec3 c) {
  const Vec3 va = p.v[a];
  const Vec3 e = p.v[next_vertex(a, p.n)] - va;          // Eq. 22
  EdgeProjection ep;
  ep.eta = dot(c - va, e) / norm2(e);              // Eqs. 23-24 with p/|e| folded in
  ep.point = va + ep.eta * e;
  ep.dist2 = norm2(ep.point - c);
  return ep;
}

// Sect. 4.1 alone, from the polygon's first vertex v0 and winding normal n0: false exactly where
// fast_intersection_test stops at the plane (plane_offset, as project_on_polygon), so that callers
// skip gathering the whole polygon for the elements whose plane the sphere does not reach.
DEM_HD inline bool reaches_plane(Vec3 v0, Vec3 n0, Vec3 c, real r) { return !(dem_abs(plane_offset(v0, n0, c)) > r); }

// Table 2. True iff the closed sphere (c, r) intersects the polygon.
DEM_HD inline bool fast_intersection_test(const Polygon& p, Vec3 n0, Vec3 c, real r) {
  const PlaneProjection pp = project_on_polygon(p, n0, c);
  if (pp.distance > r) return false;               // Sect. 4.1
  if (pp.first_out < 0) return true;               // Sect. 4.2: facet
  const real r2 = r * r;
  for (int a = pp.first_out; a < p.n; ++a) {       // Sect. 4.3, from the failing edge on
    const EdgeProjection ep = project_on_edge(p, a, c);
    if (ep.dist2 > r2) continue;
    if (ep.eta >= real(0) && ep.eta <= real(1)) return true;
    const Vec3 vertex = ep.eta < real(0) ? p.v[a] : p.v[next_vertex(a, p.n)];
    if (norm2(c - vertex) <= r2) return true;      // Sect. 4.4, Eq. 25
  }
  return false;
}

// The same, computing the winding normal n0 of the polygon.
DEM_HD inline bool fast_intersection_test(const Polygon& p, Vec3 c, real r) {
  return fast_intersection_test(p, polygon_normal(p), c, r);
}

}  // namespace dem
