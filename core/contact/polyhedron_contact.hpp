// The contact of two convex polyhedra from their common plane (core/geometry/common_plane.hpp):
// where the force acts, and the law.
//
// The law is the paper's penalty on the overlap across the common plane: the depth d = -gap (the
// penetration depth: the shortest translation that separates the bodies), the force along the
// plane's normal, F = k d - c v_n on B and -F on A, both at one contact point. Why this law: FCP
// gives the depth and normal exactly and cheaply (no overlap volume to clip), and with the point
// chosen as below the elastic part is the exact gradient of U = k d^2 / 2 over the relative pose
// wherever the closest features are a vertex against a face or an edge against an edge (the
// derivative of the depth under a turn of either body is that of the feature's point), so impacts
// keep their energy; both forces act on one line, so angular momentum is kept exactly. Where
// features tie (a face or an edge lying on a face), any point of the features' overlap is a
// gradient, and its centroid balances the load.
//
// The contact point: the closest vertices of each body (those within a tie of its deepest level),
// projected on the plane, make a point, a segment or a polygon; the point is the centroid of the
// overlap of the two (a vertex on a face: the vertex; crossing edges: their crossing; a face on a
// face: the centroid of the overlap of the two faces; edges that do not cross: between them).
#pragma once
#include "core/contact/normal_tangential.hpp"
#include "core/geometry/common_plane.hpp"

namespace dem {

constexpr real kContactTie = real(1e-9);  // vertices within this share of the pair's size tie

struct PolyContact {
  Vec3 point;   // m, in the vertices' frame
  Vec3 normal;  // unit, from A towards B
  real depth;   // m, > 0 overlapping
  // The size of the features' overlap on the plane: its dimension (0: a point, 1: a segment, 2: a
  // polygon) and its measure (1 for a point, the length, the area). Contacts of one body with
  // several coplanar mesh elements share the load by it (core/contact/polyhedron_mesh.hpp).
  int dimension = 0;
  real measure = 1;
};

namespace detail {

struct Plane2 {
  real x, y;
};
DEM_HD inline real cross2(Plane2 o, Plane2 a, Plane2 b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

// A body's closest vertices, projected on the plane's axes (u, v): as a convex polygon
// counter-clockwise (gift wrapping; 1 or 2 points stay as they are). Returns the count.
DEM_HD inline int closest_feature(const PlacedVertices& P, Vec3 n, real sign, real tie, Vec3 u, Vec3 v, Plane2* out) {
  real top = -real(1e300);
  for (int k = 0; k < P.n; ++k) top = dem_max(top, sign * dot(n, P.v[k]));
  Plane2 pts[kMaxPolyVertices];
  int m = 0;
  for (int k = 0; k < P.n; ++k)
    if (sign * dot(n, P.v[k]) >= top - tie) pts[m++] = Plane2{dot(u, P.v[k]), dot(v, P.v[k])};
  if (m <= 2) {
    for (int k = 0; k < m; ++k) out[k] = pts[k];
    return m;
  }
  // gift wrapping from the lowest-x point (the tied vertices are a face's: few)
  int start = 0;
  for (int k = 1; k < m; ++k)
    if (pts[k].x < pts[start].x || (pts[k].x == pts[start].x && pts[k].y < pts[start].y)) start = k;
  int count = 0, at = start;
  do {
    out[count++] = pts[at];
    int next = at == 0 ? 1 : 0;
    for (int k = 0; k < m; ++k) {
      if (k == at) continue;
      const real c = cross2(pts[at], pts[next], pts[k]);
      if (c < 0 || (c == 0 && (pts[k].x - pts[at].x) * (pts[k].x - pts[at].x) + (pts[k].y - pts[at].y) * (pts[k].y - pts[at].y) >
                                   (pts[next].x - pts[at].x) * (pts[next].x - pts[at].x) +
                                       (pts[next].y - pts[at].y) * (pts[next].y - pts[at].y)))
        next = k;
    }
    at = next;
  } while (at != start && count < m);
  return count;
}

// The centroid of a convex polygon's area (counter-clockwise), or of its vertices if it has none.
DEM_HD inline Plane2 polygon_centroid(const Plane2* p, int n) {
  real a = 0, cx = 0, cy = 0, mx = 0, my = 0;
  for (int k = 0; k < n; ++k) {
    const Plane2 s = p[k], t = p[(k + 1) % n];
    const real w = s.x * t.y - t.x * s.y;
    a += w;
    cx += (s.x + t.x) * w;
    cy += (s.y + t.y) * w;
    mx += s.x;
    my += s.y;
  }
  if (n >= 3 && dem_abs(a) > real(0)) return Plane2{cx / (real(3) * a), cy / (real(3) * a)};
  return Plane2{mx / real(n), my / real(n)};
}

// The middle of the closest points of the segments p + t r and q + u s (t, u in [0, 1]) that do
// not cross: one of the closest points is an end of a segment, so the nearest of the four ends'
// projections on the other segment.
DEM_HD inline Plane2 closest_between_segments(Plane2 p, Plane2 r, Plane2 q, Plane2 s) {
  const auto onto = [](Plane2 x, Plane2 o, Plane2 d) {  // x's nearest point on o + t d
    const real dd = d.x * d.x + d.y * d.y;
    real t = dd > 0 ? ((x.x - o.x) * d.x + (x.y - o.y) * d.y) / dd : real(0);
    t = dem_min(real(1), dem_max(real(0), t));
    return Plane2{o.x + t * d.x, o.y + t * d.y};
  };
  const Plane2 ends[4] = {p, Plane2{p.x + r.x, p.y + r.y}, q, Plane2{q.x + s.x, q.y + s.y}};
  Plane2 best{0, 0};
  real best_d2 = -1;
  for (int k = 0; k < 4; ++k) {
    const Plane2 on = k < 2 ? onto(ends[k], q, s) : onto(ends[k], p, r);
    const real d2 = (on.x - ends[k].x) * (on.x - ends[k].x) + (on.y - ends[k].y) * (on.y - ends[k].y);
    if (best_d2 < 0 || d2 < best_d2) {
      best_d2 = d2;
      best = Plane2{real(0.5) * (on.x + ends[k].x), real(0.5) * (on.y + ends[k].y)};
    }
  }
  return best;
}

// Clips the convex polygon p (n points, counter-clockwise; a segment or a point when n < 3) by the
// half-plane left of the directed edge a -> b. Returns the new count.
DEM_HD inline int clip_left(const Plane2* p, int n, Plane2 a, Plane2 b, Plane2* out) {
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const Plane2 s = p[k], t = p[(k + 1) % n];
    const real ds = cross2(a, b, s), dt = cross2(a, b, t);
    if (ds >= 0) out[m++] = s;
    if (n > 1 && (k + 1 < n || n > 2) && ((ds >= 0) != (dt >= 0))) {
      const real f = ds / (ds - dt);
      out[m++] = Plane2{s.x + f * (t.x - s.x), s.y + f * (t.y - s.y)};
    }
  }
  return m;
}

}  // namespace detail

// The contact of a pair at its common plane cp (A's and B's vertices in one frame).
DEM_HD inline PolyContact polyhedron_contact(const PlacedVertices& A, const PlacedVertices& B, const CommonPlane& cp) {
  PolyContact c;
  c.normal = cp.n;
  c.depth = -cp.gap;
  const real tie = kContactTie * detail::pair_scale(A, B);
  // the plane's axes
  const Vec3 e = dem_abs(cp.n.x) < real(0.7) ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
  const Vec3 u = normalized(cross(cp.n, e)), v = cross(cp.n, u);
  detail::Plane2 fa[kMaxPolyVertices], fb[kMaxPolyVertices];
  const int na = detail::closest_feature(A, cp.n, real(1), tie, u, v, fa);
  const int nb = detail::closest_feature(B, cp.n, real(-1), tie, u, v, fb);
  detail::Plane2 at{0, 0};
  c.dimension = 0;
  c.measure = 1;
  if (na == 1 || nb == 1) {
    at = na == 1 ? fa[0] : fb[0];  // a vertex (on a face, an edge or a vertex)
  } else if (na == 2 && nb == 2) {  // two edges: their crossing, or the middle of their overlap
    const detail::Plane2 p = fa[0], r{fa[1].x - fa[0].x, fa[1].y - fa[0].y};
    const detail::Plane2 q = fb[0], s{fb[1].x - fb[0].x, fb[1].y - fb[0].y};
    const real rxs = r.x * s.y - r.y * s.x;
    const real len2 = dem_max(r.x * r.x + r.y * r.y, s.x * s.x + s.y * s.y);
    if (rxs * rxs > real(1e-18) * len2 * len2) {
      const real ta = ((q.x - p.x) * s.y - (q.y - p.y) * s.x) / rxs;  // along A's edge
      const real tb = ((q.x - p.x) * r.y - (q.y - p.y) * r.x) / rxs;  // along B's
      if (ta >= 0 && ta <= 1 && tb >= 0 && tb <= 1) {
        at = detail::Plane2{p.x + ta * r.x, p.y + ta * r.y};
      } else {
        // The edges' projections do not cross (a plane that §6.3 carried from the features of
        // an earlier pose, or rounding): the lines' crossing can lie far outside both bodies
        // (nearly parallel edges), so the middle of the segments' closest points instead.
        at = detail::closest_between_segments(p, r, q, s);
      }
    } else {  // parallel: the middle of their overlap along the line
      const real len = std::sqrt(r.x * r.x + r.y * r.y);
      const detail::Plane2 d{r.x / len, r.y / len};
      const real a0 = real(0), a1 = len;
      const real b0 = (q.x - p.x) * d.x + (q.y - p.y) * d.y, b1 = (fb[1].x - p.x) * d.x + (fb[1].y - p.y) * d.y;
      const real lo = dem_max(a0, dem_min(b0, b1)), hi = dem_min(a1, dem_max(b0, b1));
      const real mid = real(0.5) * (lo + hi);
      at = detail::Plane2{p.x + mid * d.x, p.y + mid * d.y};
      c.dimension = 1;
      c.measure = dem_max(real(0), hi - lo);
    }
  } else {
    // a segment or polygon clipped by a polygon: the polygon (>= 3 points) clips the other
    const bool a_clips = na >= 3 && (nb < 3 || na <= nb);
    const detail::Plane2* clipper = a_clips ? fa : fb;
    const int nc = a_clips ? na : nb;
    detail::Plane2 buf0[2 * kMaxPolyVertices + 4], buf1[2 * kMaxPolyVertices + 4];
    int m = a_clips ? nb : na;
    for (int k = 0; k < m; ++k) buf0[k] = a_clips ? fb[k] : fa[k];
    detail::Plane2* cur = buf0;
    detail::Plane2* nxt = buf1;
    for (int k = 0; k < nc && m > 0; ++k) {
      m = detail::clip_left(cur, m, clipper[k], clipper[(k + 1) % nc], nxt);
      detail::Plane2* t = cur;
      cur = nxt;
      nxt = t;
    }
    if (m > 0) {
      at = detail::polygon_centroid(cur, m);
      if (na >= 3 && nb >= 3) {  // a polygon: its area
        real area2 = 0;
        for (int k = 0; k < m; ++k) area2 += detail::cross2(detail::Plane2{0, 0}, cur[k], cur[(k + 1) % m]);
        c.dimension = 2;
        c.measure = real(0.5) * dem_abs(area2);
      } else if (m >= 2) {  // a segment clipped by a polygon: its length
        real len = 0;
        for (int k = 1; k < m; ++k) {
          const real dx = cur[k].x - cur[0].x, dy = cur[k].y - cur[0].y;
          len = dem_max(len, std::sqrt(dx * dx + dy * dy));
        }
        c.dimension = 1;
        c.measure = len;
      }
    } else {  // no overlap (rounding): midway between the two features
      const detail::Plane2 ca = detail::polygon_centroid(fa, na), cb = detail::polygon_centroid(fb, nb);
      at = detail::Plane2{real(0.5) * (ca.x + cb.x), real(0.5) * (ca.y + cb.y)};
    }
  }
  c.point = at.x * u + at.y * v + cp.level * cp.n;
  return c;
}

// A sphere (centre, radius) against a polyhedron A at their plane (sphere_polyhedron_plane): the
// overlap is the radius minus the centre's gap, the point midway through it on the line from the
// centre along the normal, and the same law acts there (the sphere as B).
DEM_HD inline PolyContact sphere_polyhedron_contact(const CommonPlane& cp, Vec3 centre, real radius) {
  PolyContact c;
  c.normal = cp.n;
  c.depth = radius - cp.gap;
  c.point = centre - (radius - real(0.5) * c.depth) * cp.n;
  return c;
}

// The law's parameters: a linear spring and dashpot along the normal, pushing only; a tangential
// spring and dashpot with a Coulomb limit, as the spheres' linear law (normal_tangential.hpp).
struct PolyContactLaw {
  real k_n, c_n;  // N/m, N s/m
  real k_t, c_t;  // N/m, N s/m
  real mu;        // friction coefficient
};

struct PolyContactLoads {
  Vec3 force_on_b;                // A takes its opposite, at the same point
  Vec3 torque_on_a, torque_on_b;  // about each centroid
  bool sliding;
};

// The loads of a contact, and its tangential history xi (m: B's tangential displacement against A
// at the contact point, carried into the current tangent plane with its length kept, as the
// spheres' is). Sliding, the spring is cut back to mu F_n and xi with it.
DEM_HD inline PolyContactLoads polyhedron_contact_loads(const PolyContact& c, const PolyContactLaw& law, Vec3 xa, Vec3 va,
                                                        Vec3 wa, Vec3 xb, Vec3 vb, Vec3 wb, Vec3& xi, real dt) {
  PolyContactLoads out{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, false};
  if (!(c.depth > 0)) {
    xi = Vec3{0, 0, 0};  // apart: the contact's history ends
    return out;
  }
  const Vec3 n = c.normal;
  const Vec3 ra = c.point - xa, rb = c.point - xb;
  const Vec3 rel = (vb + cross(wb, rb)) - (va + cross(wa, ra));  // B's point against A's
  const real v_n = dot(rel, n);
  const Vec3 v_t = rel - v_n * n;
  const real f_n = dem_max(real(0), law.k_n * c.depth - law.c_n * v_n);
  rotate_into_plane(xi, n);
  xi += v_t * dt;
  const Vec3 f_spring = -law.k_t * xi;
  const real f_max = law.mu * f_n;
  out.sliding = norm2(f_spring) > f_max * f_max;
  const Vec3 f_try = out.sliding ? f_spring : f_spring - law.c_t * v_t;
  const real try_len2 = norm2(f_try);
  const real cut = try_len2 > f_max * f_max ? f_max / std::sqrt(try_len2) : real(1);
  if (out.sliding) xi *= cut;
  out.force_on_b = f_n * n + cut * f_try;
  out.torque_on_b = cross(rb, out.force_on_b);
  out.torque_on_a = cross(ra, -out.force_on_b);
  return out;
}

}  // namespace dem
