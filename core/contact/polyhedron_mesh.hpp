// A polyhedral particle against the elements of a rigid mesh (planar convex polygons), in the
// spirit of the Double Hierarchy Method (santasusana2016): the contacts are ranked so that a mesh
// meets a particle the same way however its surface is cut into elements, with nothing counted
// twice across shared edges and vertices:
//  1. Face contacts. The particle's deepest feature along an element's plane (its normal turned
//     away from the particle) is projected on the plane; where it meets the element (boundary
//     included), the element meets the particle with its face: the depth below that plane, the
//     point and the overlap's size as two polyhedra's (core/contact/polyhedron_contact.hpp).
//     Except where the element's own common plane is shallower and passes through an edge or a
//     vertex of the surface that the particle's centroid is not within: a free edge (a thin
//     plate's rim), or a bend whose other element's plane has the centroid on its far side from
//     this element (beside a square shaft's corner, the centroid past one face, within the other's
//     plane). The depth across the face there measures the particle's reach across the plane
//     over open space, not an overlap (it would jump from nothing to that reach in one step); the
//     contact is step 2's, the edge or vertex cutting into the particle's side. Within a bend (a
//     particle in a drum's corner of mantle and end cap, or on a box's top by its edge) and in a
//     flat region the face stays: the element's plane through that edge is not the surface's, and
//     the particle would sink through the face unresisted.
//     Where the deepest feature falls off the element past a concave bend of the surface (a
//     vertex pushed past both walls of a drum's corner of mantle and end cap), and the centroid
//     lies in the bend's wedge, the face meets the particle with what lies across its plane over
//     the element: the deepest point of the particle within the element's prism, a point contact.
//     Of such contacts and the face contacts of neighbours in one plane holding the same bend's
//     edge or vertex, the deepest are kept (step 3 then shares equal ones).
//  2. Otherwise the element meets the particle through its own common plane, with an edge or a
//     vertex (its closest feature along that plane). Such a contact is dropped where that mesh
//     edge or vertex is not a bend of the surface (another candidate element holding it lies in
//     the same plane: the element-wise plane of a flat region is an artefact of its cutting), or
//     where an element holding it has a face contact (the face carries it); of those left on one
//     mesh edge or vertex, the deepest is kept.
//  3. Face contacts in one plane (normals and levels equal within a tie) share the load: each
//     takes the share of its overlap (area, length, or count of a point) in the group's, in the
//     highest dimension present. Their forces then sum to those of one element covering them all,
//     and their moments too (the pieces' area-weighted centroid is the whole's).
#pragma once
#include "core/contact/polyhedron_contact.hpp"
#include "core/geometry/polygon.hpp"

namespace dem {

// An element as a flat convex body: its vertices (as they are: the record's frame is the mesh's),
// its two sides as faces (the loop, and the loop reversed), its edges.
DEM_HD inline void flat_element_body(const Polygon& p, PolyShape& s, PlacedVertices& v) {
  s = PolyShape{};
  const int n = p.n;
  s.num_vertices = n;
  s.num_edges = n;
  s.num_faces = 2;
  const Vec3 normal = polygon_normal(p);
  s.face_normal[0] = normal;
  s.face_normal[1] = -normal;
  s.face_start[0] = 0;
  s.face_start[1] = static_cast<std::uint8_t>(n);
  s.face_start[2] = static_cast<std::uint8_t>(2 * n);
  v.n = n;
  for (int k = 0; k < n; ++k) {
    s.vertex[k] = p.v[k];
    v.v[k] = p.v[k];
    s.face_vertex[k] = static_cast<std::uint8_t>(k);
    s.face_vertex[n + k] = static_cast<std::uint8_t>(n - 1 - k);
    s.edge[k][0] = static_cast<std::uint8_t>(k);
    s.edge[k][1] = static_cast<std::uint8_t>(next_vertex(k, n));
    // vertex k: edges k - 1 and k, faces 0 and 1
    s.vertex_edge_start[k] = static_cast<std::uint8_t>(2 * k);
    s.vertex_edge[2 * k] = static_cast<std::uint8_t>(k == 0 ? n - 1 : k - 1);
    s.vertex_edge[2 * k + 1] = static_cast<std::uint8_t>(k);
    s.vertex_face_start[k] = static_cast<std::uint8_t>(2 * k);
    s.vertex_face[2 * k] = 0;
    s.vertex_face[2 * k + 1] = 1;
  }
  s.vertex_edge_start[n] = static_cast<std::uint8_t>(2 * n);
  s.vertex_face_start[n] = static_cast<std::uint8_t>(2 * n);
  s.unit_inertia = Vec3{0, 0, 0};
  real r = 0;
  for (int k = 0; k < n; ++k) r = dem_max(r, norm(p.v[k]));
  s.bounding_radius = r;
}

// One element's contact with the particle, and how it ranks.
struct ElementContact {
  PolyContact contact;  // the particle is A, the element B (the normal points from the particle)
  std::int32_t element;  // its index among the candidates (rank_element_contacts)
  // the element's feature: -1 its face; else the mesh vertex (feature_b < 0) or the mesh edge
  // (feature_a, feature_b: its two vertices, the smaller first) it meets the particle with
  std::int32_t feature_a, feature_b;
  bool face;
  // a face contact measured within the element's prism (its feature: the edge or vertex of the
  // element that bounds the particle's deepest point there)
  bool clipped = false;
  real weight;  // the share of the law's load this contact takes (0: dropped)
};

// The candidate elements of one particle: each one's mesh vertex indices and unit normal, and the
// mesh's vertex positions (by those indices).
struct ElementCandidates {
  const std::int32_t* const* ids;
  const int* sizes;
  const Vec3* normals;
  int count;
  const Vec3* vertices;
};

namespace detail {

DEM_HD inline bool element_has_vertex(const std::int32_t* ids, int n, std::int32_t v) {
  for (int k = 0; k < n; ++k)
    if (ids[k] == v) return true;
  return false;
}

// Whether candidate e holds the mesh vertex a, or the mesh edge (a, b) where b >= 0.
DEM_HD inline bool holds_feature(const ElementCandidates& cand, int e, std::int32_t a, std::int32_t b) {
  return element_has_vertex(cand.ids[e], cand.sizes[e], a) && (b < 0 || element_has_vertex(cand.ids[e], cand.sizes[e], b));
}

// Whether the mesh vertex a, or edge (a, b), of candidate `own` is held by another candidate in its
// plane: then it is no edge of the surface, only of its cutting into elements.
DEM_HD inline bool within_flat_region(const ElementCandidates& cand, int own, std::int32_t a, std::int32_t b) {
  for (int e = 0; e < cand.count; ++e)
    if (e != own && holds_feature(cand, e, a, b) && dot(cand.normals[e], cand.normals[own]) > real(1) - real(1e-9))
      return true;
  return false;
}

// Whether the point x lies in the wedge of every bend at the mesh vertex a, or edge (a, b), of
// candidate `own`: for each other candidate holding it, on own's side of that candidate's plane.
// True where one of them lies in own's plane (a flat region, either winding), unless `bends_only`
// (then only the others count, and there must be one); false where no other candidate holds it (a
// free edge or vertex).
DEM_HD inline bool within_bends(const ElementCandidates& cand, int own, std::int32_t a, std::int32_t b, Vec3 x,
                                bool bends_only = false) {
  bool flat = false, bend = false, outside = false;
  for (int e = 0; e < cand.count; ++e) {
    if (e == own || !holds_feature(cand, e, a, b)) continue;
    const Vec3 n = cand.normals[e];
    if (dem_abs(dot(n, cand.normals[own])) > real(1) - real(1e-9)) {
      flat = true;
      continue;
    }
    const Vec3 at = cand.vertices[cand.ids[e][0]];
    real side = 0;  // own's vertex farthest from e's plane, signed
    for (int k = 0; k < cand.sizes[own]; ++k) {
      const real d = dot(n, cand.vertices[cand.ids[own][k]] - at);
      if (dem_abs(d) > dem_abs(side)) side = d;
    }
    bend = true;
    outside = outside || !(side * dot(n, x - at) > 0);
  }
  return (flat && !bends_only) || (bend && !outside);
}

// Whether the mesh vertex a, or edge (a, b), of candidate `own` is a concave bend seen from the
// particle: another candidate holding it, not in own's plane, reaches more than `tie` to the
// particle's side of own's plane (its normal `toward` the particle, through `at`).
DEM_HD inline bool concave_bend(const ElementCandidates& cand, int own, std::int32_t a, std::int32_t b, Vec3 toward, Vec3 at,
                                real tie) {
  for (int e = 0; e < cand.count; ++e) {
    if (e == own || !holds_feature(cand, e, a, b) || dem_abs(dot(cand.normals[e], cand.normals[own])) > real(1) - real(1e-9))
      continue;
    for (int k = 0; k < cand.sizes[e]; ++k)
      if (dot(toward, cand.vertices[cand.ids[e][k]] - at) > tie) return true;
  }
  return false;
}

// The deepest point along n of the particle (vertices A, faces and edges of its shape s) within
// the prism of polygon p (the polygon swept along its normal; a point within `tie` of a side
// counts as inside): a vertex of the particle inside, an edge of the particle crossing a side, or a side's
// edge (a line through a polygon vertex along n) within the particle. Returns false where the
// particle has no point in the prism.
DEM_HD inline bool deepest_within_prism(const PlacedVertices& A, const PolyShape& s, const Polygon& p, Vec3 normal, Vec3 n,
                                        real tie, Vec3& out) {
  Vec3 side[kMaxPolygonVertices];  // inward, |side[k]| = the side's length
  real slack[kMaxPolygonVertices];
  for (int k = 0; k < p.n; ++k) {
    const Vec3 e = p.v[next_vertex(k, p.n)] - p.v[k];
    side[k] = cross(normal, e);
    slack[k] = tie * norm(e);
  }
  auto within = [&](Vec3 y, int skip) {
    for (int k = 0; k < p.n; ++k)
      if (k != skip && dot(side[k], y - p.v[k]) < -slack[k]) return false;
    return true;
  };
  bool found = false;
  real best = 0;
  auto take = [&](Vec3 y) {
    const real level = dot(n, y);
    if (!found || level > best) {
      found = true;
      best = level;
      out = y;
    }
  };
  for (int v = 0; v < A.n; ++v)
    if (within(A.v[v], -1)) take(A.v[v]);
  for (int e = 0; e < s.num_edges; ++e) {
    const Vec3 a = A.v[s.edge[e][0]], b = A.v[s.edge[e][1]];
    for (int k = 0; k < p.n; ++k) {
      const real sa = dot(side[k], a - p.v[k]), sb = dot(side[k], b - p.v[k]);
      if ((sa < 0) == (sb < 0)) continue;
      const Vec3 y = a + (sa / (sa - sb)) * (b - a);
      if (within(y, k)) take(y);
    }
  }
  for (int k = 0; k < p.n; ++k) {  // the line p.v[k] + t n within every face's plane
    real lo = -real(1e300), hi = real(1e300);
    bool apart = false;  // (the line misses the particle)
    for (int f = 0; f < s.num_faces && !apart && lo <= hi; ++f) {
      // the face's outward normal (Newell), unscaled, from its vertices less its first (far
      // from the origin, the products of the coordinates themselves would lose the digits)
      Vec3 m{0, 0, 0};
      const int first = s.face_start[f], end = s.face_start[f + 1];
      const Vec3 o = A.v[s.face_vertex[first]];
      for (int j = first; j < end; ++j) m += cross(A.v[s.face_vertex[j]] - o, A.v[s.face_vertex[j + 1 == end ? first : j + 1]] - o);
      const real c0 = dot(m, p.v[k] - o), c1 = dot(m, n);
      if (c1 > 0) hi = dem_min(hi, -c0 / c1);
      else if (c1 < 0) lo = dem_max(lo, -c0 / c1);
      else apart = c0 > 0;
    }
    if (!apart && lo <= hi) take(p.v[k] + hi * n);
  }
  return found;
}

// The element's edge (a, b: mesh vertices, the smaller first) or vertex (a; b = -1) on whose
// sides of the prism the point y lies (within `tie` of them). False where it lies on
// none (inside) or on two that do not meet.
DEM_HD inline bool prism_feature(const Polygon& p, Vec3 normal, Vec3 y, real tie, const std::int32_t* ids, std::int32_t& a,
                                 std::int32_t& b) {
  int on[kMaxPolygonVertices];
  int count = 0;
  for (int k = 0; k < p.n; ++k) {
    const Vec3 e = p.v[next_vertex(k, p.n)] - p.v[k];
    if (dot(cross(normal, e), y - p.v[k]) <= tie * norm(e)) on[count++] = k;
  }
  if (count == 1) {
    const std::int32_t u = ids[on[0]], w = ids[next_vertex(on[0], p.n)];
    a = u < w ? u : w;
    b = u < w ? w : u;
    return true;
  }
  if (count == 2 && (next_vertex(on[0], p.n) == on[1] || next_vertex(on[1], p.n) == on[0])) {
    a = ids[next_vertex(on[0], p.n) == on[1] ? on[1] : on[0]];  // the vertex the two sides share
    b = -1;
    return true;
  }
  return false;
}

}  // namespace detail

// The contact of a particle (vertices A, centroid x) with one element (candidate `element` of
// `cand`: polygon p, its body E from flat_element_body, its mesh vertex indices ids[0..n-1]), given
// their common plane cp (the particle as A). Returns weight 0 where they do not meet.
DEM_HD inline ElementContact element_contact(const PlacedVertices& A, const PolyShape& s, Vec3 x, const Polygon& p,
                                             const PlacedVertices& E,
                                             const std::int32_t* ids, std::int32_t element, const CommonPlane& cp,
                                             const ElementCandidates& cand) {
  ElementContact ec;
  ec.element = element;
  ec.feature_a = -1;
  ec.feature_b = -1;
  const real tie = kContactTie * detail::pair_scale(A, E);
  // the element's closest feature along cp: its vertices within a tie of its lowest level (more
  // than two: its face)
  real low = dot(cp.n, E.v[0]);
  for (int k = 1; k < E.n; ++k) low = dem_min(low, dot(cp.n, E.v[k]));
  int first = -1, second = -1, closest = 0;
  for (int k = 0; k < E.n; ++k)
    if (dot(cp.n, E.v[k]) <= low + tie) {
      ++closest;
      if (first < 0) first = k;
      else if (second < 0) second = k;
    }
  if (second < 0) {
    ec.feature_a = ids[first];
  } else {
    const std::int32_t a = ids[first], b = ids[second];
    ec.feature_a = a < b ? a : b;
    ec.feature_b = a < b ? b : a;
  }
  // 1. along the element's plane, its normal turned away from the particle's centroid
  const Vec3 normal = polygon_normal(p);
  const Vec3 n = dot(normal, x - p.v[0]) > 0 ? -normal : normal;
  real deepest = dot(n, A.v[0]);
  for (int k = 1; k < A.n; ++k) deepest = dem_max(deepest, dot(n, A.v[k]));
  const real plane = dot(n, p.v[0]);
  if (deepest > plane) {
    CommonPlane along;
    along.n = n;
    along.gap = plane - deepest;
    along.level = real(0.5) * (plane + deepest);
    const PolyContact c = polyhedron_contact(A, E, along);
    bool inside = true;  // the point over the element, its boundary included
    for (int k = 0; k < p.n && inside; ++k) {
      const Vec3 e = p.v[next_vertex(k, p.n)] - p.v[k];
      inside = dot(cross(e, c.point - p.v[k]), normal) >= -tie * norm(e);
    }
    const bool edge_cuts_in =
        closest <= 2 && -cp.gap < c.depth - tie && !detail::within_bends(cand, element, ec.feature_a, ec.feature_b, x);
    if (inside && !edge_cuts_in) {
      ec.contact = c;
      ec.face = true;
      ec.weight = 1;
      ec.feature_a = ec.feature_b = -1;
      return ec;
    }
    // 1b. the particle's deepest point within the element's prism, where that is bounded by a
    // concave bend of the surface whose wedge holds the centroid (a vertex pushed past both
    // walls of a drum's corner of mantle and end cap): the face meets the particle with the
    // depth of what lies across it over the element
    Vec3 y;
    std::int32_t fa = -1, fb = -1;
    // (first, where the deepest feature is off the element, whether any vertex of the element is
    // such a bend: not in a flat floor)
    bool bent = false;
    for (int k = 0; k < p.n && !inside && !bent; ++k) bent = detail::concave_bend(cand, element, ids[k], -1, -n, p.v[0], tie);
    if (bent && detail::deepest_within_prism(A, s, p, normal, n, tie, y) && dot(n, y) - plane > 0 &&
        detail::prism_feature(p, normal, y, tie, ids, fa, fb) && detail::concave_bend(cand, element, fa, fb, -n, p.v[0], tie) &&
        detail::within_bends(cand, element, fa, fb, x, true)) {
      const real d = dot(n, y) - plane;
      ec.contact.normal = n;
      ec.contact.depth = d;
      ec.contact.point = y - (real(0.5) * d) * n;
      ec.contact.dimension = 0;
      ec.contact.measure = 1;
      ec.face = true;
      ec.clipped = true;
      ec.weight = 1;
      ec.feature_a = fa;
      ec.feature_b = fb;
      return ec;
    }
  }
  // 2. through the element's own plane: an edge or a vertex
  ec.contact = polyhedron_contact(A, E, cp);
  ec.face = false;
  ec.weight = ec.contact.depth > 0 ? real(1) : real(0);
  return ec;
}

// Ranks the element contacts of one particle (steps 2 and 3 above), setting their weights; tie: a
// length (m) within which two planes' levels are equal.
DEM_HD inline void rank_element_contacts(ElementContact* c, int count, const ElementCandidates& cand, real tie) {
  auto holds = [&](int e, const ElementContact& f) { return detail::holds_feature(cand, e, f.feature_a, f.feature_b); };
  // 1b. a face contact within the element's prism yields to a deeper face of a neighbour in its
  // plane that holds its feature (the neighbour's prism holds its point: the surface's deepest
  // point lies there). First: a contact dropped here carries no edge in step 2
  for (int i = 0; i < count; ++i) {
    if (!c[i].clipped || c[i].weight == 0) continue;
    for (int j = 0; j < count; ++j)
      if (j != i && c[j].face && holds(c[j].element, c[i]) &&
          dot(c[j].contact.normal, c[i].contact.normal) > real(1) - real(1e-9) && c[j].contact.depth > c[i].contact.depth + tie)
        c[i].weight = 0;
  }
  // 2. edges and vertices: not a bend of the surface, carried by a neighbour's face, or met deeper
  for (int i = 0; i < count; ++i) {
    if (c[i].face || c[i].weight == 0) continue;
    if (detail::within_flat_region(cand, c[i].element, c[i].feature_a, c[i].feature_b)) c[i].weight = 0;
    for (int j = 0; j < count && c[i].weight > 0; ++j) {
      if (j == i || c[j].weight == 0 || !holds(c[j].element, c[i])) continue;
      if (c[j].face) c[i].weight = 0;
      else if (c[j].feature_a == c[i].feature_a && c[j].feature_b == c[i].feature_b &&
               (c[j].contact.depth > c[i].contact.depth || (c[j].contact.depth == c[i].contact.depth && j < i)))
        c[i].weight = 0;
    }
  }
  // 3. face contacts in one plane share the load by their overlaps (-1: not shared out yet)
  for (int i = 0; i < count; ++i)
    if (c[i].face && c[i].weight > 0) c[i].weight = -1;
  auto same_plane = [&](int i, int j) {
    return dot(c[i].contact.normal, c[j].contact.normal) > real(1) - real(1e-9) &&
           dem_abs(dot(c[i].contact.normal, c[j].contact.point - c[i].contact.point)) <= tie;
  };
  for (int i = 0; i < count; ++i) {
    if (c[i].weight != -1) continue;
    int top = 0;
    for (int j = i; j < count; ++j)
      if (c[j].weight == -1 && same_plane(i, j)) top = c[j].contact.dimension > top ? c[j].contact.dimension : top;
    real total = 0;
    for (int j = i; j < count; ++j)
      if (c[j].weight == -1 && same_plane(i, j) && c[j].contact.dimension == top) total += c[j].contact.measure;
    for (int j = count - 1; j >= i; --j)  // (i last: the others are compared with it)
      if (c[j].weight == -1 && same_plane(i, j))
        c[j].weight = c[j].contact.dimension == top && total > 0 ? c[j].contact.measure / total : real(0);
  }
}

}  // namespace dem
