// Planar convex polygons (the FE boundary elements of santasusana2016: triangles, planar quads and
// convex N-gons) and the nodal weights of a contact point on them (Eqs. 26-30, 32).
#pragma once
#include "core/math/vec3.hpp"

namespace dem {

// Largest element the contact code accepts. Mesh loading rejects larger faces with a message, so
// this is a documented limit, not a silent truncation. 16 covers every polygonal face in the
// meshes we know of; raising it costs device local memory only in Polygon copies.
constexpr int kMaxPolygonVertices = 16;

// One element, copied into registers/local memory for the contact test. Vertices are ordered
// counter-clockwise seen from the side `normal` points to.
struct Polygon {
  Vec3 v[kMaxPolygonVertices];  // m
  int n;                        // number of vertices, 3..kMaxPolygonVertices
};

// Index of the vertex after a (the end of edge a), without an integer division.
DEM_HD inline int next_vertex(int a, int n) { return a + 1 == n ? 0 : a + 1; }

// Unit normal of a planar polygon, Eqs. 14-15: T = (v2 - v1) x (v3 - v2). For robustness against
// nearly collinear first vertices we use Newell's sum over all edges, which equals T/|T| for a
// triangle and the exact plane normal for any planar polygon.
DEM_HD inline Vec3 polygon_normal(const Polygon& p) {
  Vec3 t{0, 0, 0};
  for (int a = 0; a < p.n; ++a) t += cross(p.v[a], p.v[next_vertex(a, p.n)]);
  return normalized(t);
}

// Twice the signed area of the triangle (a, b, c), measured along the unit normal n.
DEM_HD inline real signed_area2(Vec3 a, Vec3 b, Vec3 c, Vec3 n) { return dot(cross(b - a, c - a), n); }

// Nodal weights N_i of a point x lying in the plane of the polygon (inside or on its boundary).
// They are non-negative, sum to one and interpolate x: sum_i N_i v_i = x.
//  - Triangles: area coordinates, Eq. 26-27: N1 = D2/D, N2 = D3/D, N3 = D1/D with
//    D_a = area(x, v_a, v_a+1) = s_a / 2 (Eq. 19).
//  - N >= 4: the generalised barycentric coordinates of Eq. 32 (Meyer et al.), written in the
//    equivalent Wachspress product form  w_i = C_i * prod_{j != i-1, i} D_j,
//    C_i = area(v_i-1, v_i, v_i+1),  which stays finite when x lies on an edge (the cotangent
//    form of Eq. 32 divides by zero there). For parallelogram quads this coincides with Zhong's
//    Eq. 28-29; for other convex quads Eq. 28 does not reproduce x (sum N_i v_i != x), which is why
//    quads use this form too.
// w must hold p.n values.
DEM_HD inline void polygon_weights(const Polygon& p, Vec3 normal, Vec3 x, real* w) {
  const int n = p.n;
  real area[kMaxPolygonVertices];  // D_a, up to the factor 1/2 which cancels
  for (int a = 0; a < n; ++a) area[a] = signed_area2(x, p.v[a], p.v[next_vertex(a, n)], normal);
  real sum = 0;
  if (n == 3) {
    w[0] = area[1];
    w[1] = area[2];
    w[2] = area[0];
    sum = area[0] + area[1] + area[2];
  } else {
    // Areas are scaled by the element's own area so that the products stay O(1) (no underflow in
    // float builds for small elements with many vertices).
    real total = 0;
    for (int a = 0; a < n; ++a) total += area[a];
    const real scale = real(1) / total;
    for (int i = 0; i < n; ++i) {
      const int prev = (i + n - 1) % n;
      real wi = signed_area2(p.v[prev], p.v[i], p.v[next_vertex(i, n)], normal) * scale;
      for (int j = 0; j < n; ++j)
        if (j != i && j != prev) wi *= area[j] * scale;
      w[i] = wi;
      sum += wi;
    }
  }
  for (int i = 0; i < n; ++i) w[i] /= sum;
}

}  // namespace dem
