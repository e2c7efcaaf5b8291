// Random convex polygons and brute-force closest-point oracles for the geometry tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/geometry/contact_geometry.hpp"
#include "core/geometry/polygon.hpp"
#include "core/math/quat.hpp"

namespace dem::test {

// A random convex N-gon: N sorted random angles on a random ellipse (convex by construction),
// rotated to a random orientation and translated; counter-clockwise about its normal.
inline Polygon random_convex_polygon(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> ang(n);
  for (;;) {
    for (auto& a : ang) a = 2 * M_PI * u(rng);
    std::sort(ang.begin(), ang.end());
    double max_gap = 2 * M_PI - ang.back() + ang.front();
    double min_gap = max_gap;
    for (int i = 1; i < n; ++i) {
      max_gap = std::max(max_gap, ang[i] - ang[i - 1]);
      min_gap = std::min(min_gap, ang[i] - ang[i - 1]);
    }
    if (max_gap < M_PI * 0.9 && min_gap > 0.05) break;  // no sliver or near-degenerate polygons
  }
  const double ax = 0.5 + u(rng), ay = 0.5 + u(rng);
  // Random rotation from a random unit quaternion.
  std::normal_distribution<double> g(0, 1);
  double q[4] = {g(rng), g(rng), g(rng), g(rng)};
  const double qn = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (auto& c : q) c /= qn;
  const Quat rot{q[0], q[1], q[2], q[3]};
  const Vec3 shift{u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
  Polygon p;
  p.n = n;
  for (int i = 0; i < n; ++i) {
    const Vec3 local{ax * std::cos(ang[i]), ay * std::sin(ang[i]), 0};
    p.v[i] = rotate(rot, local + shift);
  }
  return p;
}

// Ericson's closest point on triangle (a, b, c), written independently of core/.
inline Vec3 closest_on_triangle(Vec3 p, Vec3 a, Vec3 b, Vec3 c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = dot(ab, ap), d2 = dot(ac, ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const Vec3 bp = p - b;
  const double d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + (d1 / (d1 - d3)) * ab;
  const Vec3 cp = p - c;
  const double d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + (d2 / (d2 - d6)) * ac;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  const double den = 1 / (va + vb + vc);
  return a + ab * (vb * den) + ac * (vc * den);
}

struct OracleResult {
  Vec3 point;
  double distance;
  EntityType type;
  double boundary_margin;  // distance of the closest point to the nearest region change (for skipping ties)
};

// Closest point of a convex polygon to p by brute force over its fan triangles, classified as
// vertex (at a vertex), edge (on the boundary, not at a vertex) or facet (interior).
inline OracleResult polygon_oracle(const Polygon& poly, Vec3 p) {
  OracleResult r{{0, 0, 0}, 1e300, EntityType::Facet, 0};
  for (int i = 1; i + 1 < poly.n; ++i) {
    const Vec3 q = closest_on_triangle(p, poly.v[0], poly.v[i], poly.v[i + 1]);
    const double d = norm(q - p);
    if (d < r.distance) {
      r.distance = d;
      r.point = q;
    }
  }
  double min_edge = 1e300, min_vertex = 1e300;
  for (int a = 0; a < poly.n; ++a) {
    const Vec3 va = poly.v[a], e = poly.v[(a + 1) % poly.n] - va;
    const double t = std::clamp(dot(r.point - va, e) / norm2(e), 0.0, 1.0);
    min_edge = std::min(min_edge, norm(va + t * e - r.point));
    min_vertex = std::min(min_vertex, norm(va - r.point));
  }
  const double eps = 1e-12;
  if (min_vertex < eps) r.type = EntityType::Vertex;
  else if (min_edge < eps) r.type = EntityType::Edge;
  else r.type = EntityType::Facet;
  r.boundary_margin = r.type == EntityType::Facet ? min_edge : min_vertex;
  if (r.type == EntityType::Vertex) {  // margin to the neighbouring edge regions
    r.boundary_margin = 1e300;
    for (int a = 0; a < poly.n; ++a) {
      const Vec3 va = poly.v[a], e = poly.v[(a + 1) % poly.n] - va;
      const Vec3 on_line = va + (dot(p - va, e) / norm2(e)) * e;
      if (norm(va - r.point) < eps || norm(poly.v[(a + 1) % poly.n] - r.point) < eps)
        r.boundary_margin = std::min(r.boundary_margin, norm(on_line - r.point));
    }
  }
  return r;
}

}  // namespace dem::test
