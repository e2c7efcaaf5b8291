// The Double Hierarchy Method (H2) of santasusana2016 Sect. 5, for one sphere against the
// elements that passed the Fast Intersection Test.
//
//  1. Contact Type Hierarchy (Sect. 5.1, Table 3), per element: facet over its edges, an edge over
//     its two vertices. Each contacting entity becomes an EntityContact candidate.
//  2. Distance Hierarchy (Sect. 5.2, Table 4), over all candidates of the sphere: with contact
//     vectors V = C - Pc, candidate i is invalid when some valid j has
//         Pr_ij = V_i . V_j/|V_j| >= |V_j|                                        (Eq. 31)
//     i.e. Pc_i lies behind the tangent plane through Pc_j, and j is discarded when Pr_ji >= |V_i|.
//
// Order independence. Table 4 applied in arrival order can depend on that order: a shared edge
// reported by two elements keeps whichever came first, and in general "j invalidates i" is not
// transitive. We therefore gather the candidates first and apply Table 4 in a canonical order:
// increasing |V|, then element index, entity type and entity index. The result is a function of
// the set of elements alone, whatever order the broad phase visits them in. (Only shorter or
// equal vectors can invalidate, so this order also visits the surviving contacts first.)
//
// Coplanar tolerance (Sect. 7.1). The comparisons use Pr_ij >= (1 - tol) |V_j|: a neighbour's
// edge or vertex on a coplanar (or almost coplanar) element would otherwise survive through
// round-off and double the force (error measure xi = 1 in Sect. 7.1). With tol = 1e-6 two facets
// whose normals differ by less than about acos(1 - 1e-6) = 0.08 degrees count as coplanar.
//
// Capacity. Candidates are gathered in a fixed buffer of kMaxH2Candidates. When it fills up (very
// fine meshes under large indentation, Fig. 16) the buffer is compacted by the same canonical
// Table 4 pass and gathering goes on; `compactions` counts these for the statistics. Compaction
// gives the same result as one final pass whenever "invalidates" is transitive among those
// candidates, which holds for every configuration in the paper and our tests. The valid contacts
// of one sphere are limited to kMaxMeshContacts; more is reported by h2_finish, never dropped
// silently.
#pragma once
#include "core/dhm/fast_intersection.hpp"
#include "core/geometry/contact_geometry.hpp"

namespace dem {

constexpr int kMaxH2Candidates = 64;  // entity candidates gathered per sphere before compaction
constexpr int kMaxMeshContacts = 8;   // valid mesh contacts per sphere (corner of 3 walls: 3)
constexpr real kH2DefaultCoplanarTol = real(1e-6);

struct EntityContact {
  Vec3 point;          // m, contact point Pc on the entity
  real distance;       // m, |C - Pc|
  index_t element;     // global element index
  EntityType type;     // facet, edge or vertex
  std::uint8_t entity; // edge a (from v_a to v_a+1) or vertex a; 0 for the facet
};

struct H2Accumulator {
  EntityContact c[kMaxH2Candidates];
  int count;
  int compactions;  // times the candidate buffer was full and compacted
  Vec3 center;      // m, sphere centre C
  real tol;         // coplanar tolerance of the comparisons
};

DEM_HD inline void h2_begin(H2Accumulator& acc, Vec3 center, real tol = kH2DefaultCoplanarTol) {
  acc.count = 0;
  acc.compactions = 0;
  acc.center = center;
  acc.tol = tol;
}

// Canonical order: (|V|, element, type, entity).
DEM_HD inline bool h2_precedes(const EntityContact& a, const EntityContact& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.element != b.element) return a.element < b.element;
  if (a.type != b.type) return a.type < b.type;
  return a.entity < b.entity;
}

// "j invalidates i" of Table 4: Pr_ij >= (1 - tol)|V_j|, multiplied through by |V_j|.
DEM_HD inline bool h2_invalidates(Vec3 vj, Vec3 vi, real tol) {
  return dot(vi, vj) >= (real(1) - tol) * norm2(vj);
}

// Table 4 over the whole buffer in canonical order; leaves the valid contacts, in that order.
DEM_HD inline void h2_distance_hierarchy(H2Accumulator& acc) {
  // Insertion sort: the buffer is small and usually holds one to three candidates.
  for (int i = 1; i < acc.count; ++i) {
    const EntityContact key = acc.c[i];
    int j = i - 1;
    while (j >= 0 && h2_precedes(key, acc.c[j])) {
      acc.c[j + 1] = acc.c[j];
      --j;
    }
    acc.c[j + 1] = key;
  }
  int kept = 0;
  for (int i = 0; i < acc.count; ++i) {
    const EntityContact cand = acc.c[i];
    const Vec3 vi = acc.center - cand.point;
    bool valid = true;
    int write = 0;
    for (int j = 0; j < kept; ++j) {
      const Vec3 vj = acc.center - acc.c[j].point;
      if (valid && h2_invalidates(vj, vi, acc.tol)) valid = false;  // i invalid: keep the rest
      if (valid && h2_invalidates(vi, vj, acc.tol)) continue;        // discard j
      acc.c[write++] = acc.c[j];
    }
    kept = write;
    if (valid) acc.c[kept++] = cand;
  }
  acc.count = kept;
}

DEM_HD inline void h2_add(H2Accumulator& acc, const EntityContact& e) {
  if (acc.count == kMaxH2Candidates) {
    h2_distance_hierarchy(acc);
    ++acc.compactions;
    if (acc.count == kMaxH2Candidates) {  // cannot happen unless 64 contacts are all valid
      acc.count = kMaxMeshContacts + 1;   // make the overflow visible in h2_finish
      return;
    }
  }
  acc.c[acc.count++] = e;
}

// Table 3 for one element that passed the Fast Intersection Test (or any element: the plane test
// is repeated, Sect. 5.1.1). Emits the contacting entities into the accumulator.
DEM_HD inline void contact_type_hierarchy(H2Accumulator& acc, const Polygon& p, Vec3 n0, index_t element, real r) {
  const Vec3 c = acc.center;
  const PlaneProjection pp = project_on_polygon(p, n0, c);
  if (pp.distance > r) return;
  if (pp.first_out < 0) {  // (1) facet level: the facet outranks all its edges and vertices
    h2_add(acc, EntityContact{pp.projected, pp.distance, element, EntityType::Facet, 0});
    return;
  }
  const real r2 = r * r;
  for (int a = pp.first_out; a < p.n; ++a) {  // (2) edge level, from index_e on
    const EdgeProjection ep = project_on_edge(p, a, c);
    if (ep.dist2 > r2) continue;
    if (ep.eta >= real(0) && ep.eta <= real(1)) {
      h2_add(acc, EntityContact{ep.point, std::sqrt(ep.dist2), element, EntityType::Edge,
                                static_cast<std::uint8_t>(a)});
      continue;  // the edge outranks its two vertices
    }
    const int vtx = ep.eta < real(0) ? a : next_vertex(a, p.n);  // (3) vertex level
    const real d2 = norm2(c - p.v[vtx]);
    if (d2 <= r2)
      h2_add(acc, EntityContact{p.v[vtx], std::sqrt(d2), element, EntityType::Vertex,
                                static_cast<std::uint8_t>(vtx)});
  }
}

// The same, computing the winding normal n0 of the polygon.
DEM_HD inline void contact_type_hierarchy(H2Accumulator& acc, const Polygon& p, index_t element, real r) {
  contact_type_hierarchy(acc, p, polygon_normal(p), element, r);
}

// Final Distance Hierarchy pass. Returns the number of valid contacts, c[0..count) in canonical
// order; a count above kMaxMeshContacts is an overflow the caller must report.
DEM_HD inline int h2_finish(H2Accumulator& acc) {
  h2_distance_hierarchy(acc);
  return acc.count;
}

// Contact geometry of a valid entity contact for the contact law: n = V/|V| from the element to the
// sphere centre, overlap R - |V|. A centre lying exactly on the element has no direction; the
// element normal towards the sphere's previous side cannot be known here, so +normal is used.
DEM_HD inline ContactGeometry entity_contact_geometry(const EntityContact& e, Vec3 center, real r,
                                                      Vec3 fallback_normal) {
  ContactGeometry g;
  const Vec3 v = center - e.point;
  g.normal = e.distance > real(0) ? v * (real(1) / e.distance) : fallback_normal;
  g.point = e.point;
  g.overlap = r - e.distance;
  return g;
}

// Nodal weights of the element at a valid entity contact (Sect. 5.1): facet by Eqs. 26-29/32
// (polygon_weights), edge by Eq. 30 (N_a = 1 - eta, N_a+1 = eta), vertex 1 at that vertex.
// w must hold p.n values; the weights sum to one and interpolate the contact point.
DEM_HD inline void entity_weights(const Polygon& p, const EntityContact& e, real* w) {
  for (int i = 0; i < p.n; ++i) w[i] = 0;
  if (e.type == EntityType::Facet) {
    polygon_weights(p, polygon_normal(p), e.point, w);
  } else if (e.type == EntityType::Edge) {
    const int a = e.entity, b = next_vertex(e.entity, p.n);
    const Vec3 edge = p.v[b] - p.v[a];
    const real eta = dot(e.point - p.v[a], edge) / norm2(edge);
    w[a] = 1 - eta;
    w[b] = eta;
  } else {
    w[e.entity] = 1;
  }
}

}  // namespace dem
