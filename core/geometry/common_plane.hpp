// The common plane (CP) of two convex polyhedra (Nezami, Hashash, Zhao & Ghaboussi 2004, "A fast
// contact detection algorithm for 3-D discrete element method"): the fast common plane search
// (FCP, §5-6), Cundall's iterative search it is measured against (§4), the separating-axis test
// for a pair first seen overlapping, and the approximation for slow pairs (§6.3).
//
// Conventions. A plane with unit normal n points from particle A towards particle B. Its gap is
//   gap(n) = min over B's vertices of n.b - max over A's vertices of n.a,
// positive when the plane separates the two, negative (minus the overlap along n) when both cross
// it. The CP is the plane of largest gap (the paper's Condition 2), placed midway (Condition 3).
// For convex bodies that largest gap is their distance when they are apart and minus their
// penetration depth (the shortest translation that separates them) when they overlap. The
// "closest vertices" of a plane are A's vertex of largest n.a and B's of smallest n.b.
#pragma once
#include <cstdint>

#include "core/shape/polyhedron.hpp"

namespace dem {

// What defines a plane (§5.2's candidate types; kAxis: a separating axis or an iterative search).
enum class PlaneType : std::uint8_t { kNone = 0, kBisector = 1, kFace = 2, kEdgeEdge = 3, kEdge = 4, kAxis = 5 };

struct CommonPlane {
  Vec3 n{0, 0, 1};  // unit, from A towards B
  real gap = 0;     // m, see above
  real level = 0;   // m, the plane is n.x = level (midway between the closest vertices' levels)
  std::int16_t a = -1, b = -1;  // the closest vertices
  PlaneType type = PlaneType::kNone;
  // The defining features: type kFace: the face f0 of A (side 0) or B (side 1); kEdgeEdge: A's
  // edge f0 and B's edge f1; kEdge: the edge f0 of A (side 0) or B (side 1).
  std::uint8_t side = 0;
  std::int16_t f0 = -1, f1 = -1;
  std::int32_t iterations = 0;  // rounds of §6.1's steps 2-4, or perturbations of the iterative search
};

// The levels of both particles along n in one pass: A's highest and lowest vertex, B's.
struct PlaneSpan {
  real max_a, min_a, max_b, min_b;
};
DEM_HD inline PlaneSpan plane_span(const PlacedVertices& A, const PlacedVertices& B, Vec3 n) {
  PlaneSpan s{dot(n, A.v[0]), dot(n, A.v[0]), dot(n, B.v[0]), dot(n, B.v[0])};
  for (int k = 1; k < A.n; ++k) {
    const real d = dot(n, A.v[k]);
    s.max_a = d > s.max_a ? d : s.max_a;
    s.min_a = d < s.min_a ? d : s.min_a;
  }
  for (int k = 1; k < B.n; ++k) {
    const real d = dot(n, B.v[k]);
    s.max_b = d > s.max_b ? d : s.max_b;
    s.min_b = d < s.min_b ? d : s.min_b;
  }
  return s;
}

DEM_HD inline real plane_gap(const PlacedVertices& A, const PlacedVertices& B, Vec3 n) {
  const PlaneSpan s = plane_span(A, B, n);
  return s.min_b - s.max_a;
}

namespace detail {

// A plane's closest vertices: among the vertices within `tie` of each particle's closest level
// (faces and edges parallel to the plane tie), the pair nearest each other (§6.1, step 2).
DEM_HD inline void closest_vertices(const PlacedVertices& A, const PlacedVertices& B, Vec3 n, real tie, std::int16_t& ia,
                                    std::int16_t& ib) {
  const PlaneSpan s = plane_span(A, B, n);
  real best = -1;
  for (int i = 0; i < A.n; ++i) {
    if (dot(n, A.v[i]) < s.max_a - tie) continue;
    for (int j = 0; j < B.n; ++j) {
      if (dot(n, B.v[j]) > s.min_b + tie) continue;
      const real d2 = norm2(B.v[j] - A.v[i]);
      if (best < 0 || d2 < best) {
        best = d2;
        ia = static_cast<std::int16_t>(i);
        ib = static_cast<std::int16_t>(j);
      }
    }
  }
}

// A candidate normal m (either sense) against the best so far: the sense with the larger gap is
// taken, and kept if it beats `best`. `ab` (B's vertex minus A's, of a pair the candidate was
// made for; zero: none) bounds the gap from above: n.ab in one sense, -n.ab in the other, since
// each body reaches at least as far as its vertex. A candidate whose bound cannot beat `best` is
// not scored.
DEM_HD inline void try_plane(const PlacedVertices& A, const PlacedVertices& B, Vec3 m, PlaneType type, std::uint8_t side,
                             std::int16_t f0, std::int16_t f1, CommonPlane& best, Vec3 ab = Vec3{0, 0, 0}) {
  const real len2 = norm2(m);
  if (!(len2 > real(1e-24))) return;  // parallel edges, or coincident vertices: no plane
  const Vec3 n = m * (real(1) / std::sqrt(len2));
  if (best.type != PlaneType::kNone && norm2(ab) > real(0) && !(dem_abs(dot(n, ab)) > best.gap)) return;
  // The span over both bodies' vertices taken a vertex of each at a time: each sense's gap only
  // falls as vertices come in, so the candidate is dropped as soon as neither sense can beat
  // `best` (in contact, where the bound above never prunes, most candidates fall within a few
  // vertices). Minima and maxima are exact, so a plane scored to the end has plane_span's bits.
  PlaneSpan s{dot(n, A.v[0]), dot(n, A.v[0]), dot(n, B.v[0]), dot(n, B.v[0])};
  const bool prune = best.type != PlaneType::kNone;
  const int count = A.n > B.n ? A.n : B.n;
  for (int k = 1; k < count; ++k) {
    if (k < A.n) {
      const real d = dot(n, A.v[k]);
      s.max_a = d > s.max_a ? d : s.max_a;
      s.min_a = d < s.min_a ? d : s.min_a;
    }
    if (k < B.n) {
      const real d = dot(n, B.v[k]);
      s.max_b = d > s.max_b ? d : s.max_b;
      s.min_b = d < s.min_b ? d : s.min_b;
    }
    if (prune && !(s.min_b - s.max_a > best.gap) && !(s.min_a - s.max_b > best.gap)) return;
  }
  const real forward = s.min_b - s.max_a, backward = s.min_a - s.max_b;  // gap(n), gap(-n)
  const bool flip = backward > forward;
  const real gap = flip ? backward : forward;
  if (best.type != PlaneType::kNone && !(gap > best.gap)) return;
  best.n = flip ? -n : n;
  best.gap = gap;
  best.level = flip ? real(-0.5) * (s.min_a + s.max_b) : real(0.5) * (s.min_b + s.max_a);
  best.type = type;
  best.side = side;
  best.f0 = f0;
  best.f1 = f1;
}

// One body's face normals and edge directions in the world, each computed the first time a
// candidate asks for it during one FCP search (in contact, the tied vertices of a face share their
// faces and edges: a face-on-face search asked for each 4 to 8 times). The same bits as computing
// them where they are used.
struct PlacedFeatures {
  const PolyShape* shape;
  Quat q;
  const PlacedVertices* vertices;
  std::uint64_t have_normal = 0;
  std::uint64_t have_edge[2] = {0, 0};
  // Faces whose plane this search has scored (or bounded): a candidate's gap depends on the
  // geometry alone, and the best plane only rises, so one that did not win once never will.
  std::uint64_t scored_face = 0;
  Vec3 normal[kMaxPolyFaces];
  Vec3 edge[kMaxPolyEdges];
  static_assert(kMaxPolyFaces <= 64 && kMaxPolyEdges <= 128, "the bit sets");
  DEM_HD PlacedFeatures(const PolyShape& s, Quat orientation, const PlacedVertices& v)
      : shape(&s), q(orientation), vertices(&v) {}
  DEM_HD Vec3 face_normal(int f) {
    const std::uint64_t bit = std::uint64_t(1) << f;
    if (!(have_normal & bit)) {
      normal[f] = rotate(q, shape->face_normal[f]);
      have_normal |= bit;
    }
    return normal[f];
  }
  DEM_HD Vec3 edge_direction(int e) {
    const std::uint64_t bit = std::uint64_t(1) << (e & 63);
    if (!(have_edge[e >> 6] & bit)) {
      edge[e] = placed_edge(*shape, *vertices, e);
      have_edge[e >> 6] |= bit;
    }
    return edge[e];
  }
};

// The candidate planes of §5.2 for closest vertices ia of A and ib of B: (a) the perpendicular
// bisector of AB; (b) parallel to a face of A at ia or of B at ib; (c) parallel to an edge of A at
// ia and an edge of B at ib; (d) containing an edge at ia or ib and tilted towards AB (Eq. 5).
// Every candidate passes through AB's midpoint, so its gap does not depend on where the plane
// lies: each is scored by its gap over all vertices, in either sense (Condition 1). A face's plane
// is scored once a search (PlacedFeatures::scored_face). Among tied closest vertices (tied_a,
// tied_b: bit sets; zero outside FCP's tie loop), an edge pair joining two tied vertices of each
// body turns up at every pair of its tied ends: it is scored at the pair of its smallest tied
// ends only, and not there either when that is the round's closest pair (main_a, main_b), whose
// candidates were all scored already. Skipping those changes no result: they could not beat it.
DEM_HD inline int smallest_tied_end(const PolyShape& s, int e, int at, std::uint32_t tied) {
  const int other = s.edge[e][0] == at ? s.edge[e][1] : s.edge[e][0];
  return ((tied >> other) & 1u) && other < at ? other : at;
}
DEM_HD inline void best_candidate(PlacedFeatures& fa, const PlacedVertices& A, PlacedFeatures& fb,
                                  const PlacedVertices& B, int ia, int ib, CommonPlane& best, std::uint32_t tied_a = 0,
                                  std::uint32_t tied_b = 0, int main_a = -1, int main_b = -1) {
  const PolyShape& sa = *fa.shape;
  const PolyShape& sb = *fb.shape;
  const Vec3 ab = B.v[ib] - A.v[ia];
  try_plane(A, B, ab, PlaneType::kBisector, 0, -1, -1, best, ab);
  for (int k = sa.vertex_face_start[ia]; k < sa.vertex_face_start[ia + 1]; ++k) {
    const int f = sa.vertex_face[k];
    const std::uint64_t bit = std::uint64_t(1) << f;
    if (fa.scored_face & bit) continue;
    fa.scored_face |= bit;
    try_plane(A, B, fa.face_normal(f), PlaneType::kFace, 0, static_cast<std::int16_t>(f), -1, best, ab);
  }
  for (int k = sb.vertex_face_start[ib]; k < sb.vertex_face_start[ib + 1]; ++k) {
    const int f = sb.vertex_face[k];
    const std::uint64_t bit = std::uint64_t(1) << f;
    if (fb.scored_face & bit) continue;
    fb.scored_face |= bit;
    try_plane(A, B, -fb.face_normal(f), PlaneType::kFace, 1, static_cast<std::int16_t>(f), -1, best, ab);
  }
  const Vec3 ab_unit = normalized(ab);
  for (int k = sa.vertex_edge_start[ia]; k < sa.vertex_edge_start[ia + 1]; ++k) {
    const int ea = sa.vertex_edge[k];
    const Vec3 da = fa.edge_direction(ea);
    const int ca = tied_a ? smallest_tied_end(sa, ea, ia, tied_a) : ia;
    for (int m = sb.vertex_edge_start[ib]; m < sb.vertex_edge_start[ib + 1]; ++m) {
      const int eb = sb.vertex_edge[m];
      if (tied_a) {
        const int cb = smallest_tied_end(sb, eb, ib, tied_b);
        if (ca != ia || cb != ib || (ca == main_a && cb == main_b)) continue;
      }
      try_plane(A, B, cross(da, fb.edge_direction(eb)), PlaneType::kEdgeEdge, 0, static_cast<std::int16_t>(ea),
                static_cast<std::int16_t>(eb), best, ab);
    }
    try_plane(A, B, ab_unit - dot(da, ab_unit) * da, PlaneType::kEdge, 0, static_cast<std::int16_t>(ea), -1, best, ab);
  }
  for (int m = sb.vertex_edge_start[ib]; m < sb.vertex_edge_start[ib + 1]; ++m) {
    const int eb = sb.vertex_edge[m];
    const Vec3 db = fb.edge_direction(eb);
    try_plane(A, B, ab_unit - dot(db, ab_unit) * db, PlaneType::kEdge, 1, static_cast<std::int16_t>(eb), -1, best, ab);
  }
}

// The scale of a pair's lengths (for the tie and improvement tolerances): the largest |coordinate|
// of a vertex, in the caller's frame.
DEM_HD inline real pair_scale(const PlacedVertices& A, const PlacedVertices& B) {
  real s = 0;
  for (int k = 0; k < A.n; ++k) s = dem_max(s, dem_max(dem_max(std::fabs(A.v[k].x), std::fabs(A.v[k].y)), std::fabs(A.v[k].z)));
  for (int k = 0; k < B.n; ++k) s = dem_max(s, dem_max(dem_max(std::fabs(B.v[k].x), std::fabs(B.v[k].y)), std::fabs(B.v[k].z)));
  return s;
}

}  // namespace detail

// Ties between vertex levels, and the least gain that counts as a better plane, relative to the
// pair's scale: above rounding (1e-16 relative), far below any length that matters.
constexpr real kPlaneTie = real(1e-12);
constexpr int kMaxFcpRounds = 64;  // a guard: the paper measured 1.54 rounds on average, at most 4

// FCP for a pair (§6.1), from the plane n0 (the previous step's CP, or the bisector of the
// centroids). Each round takes the closest vertices of the current plane and the best of their
// candidates; it stops when no candidate beats the current plane (the CP), or when the gap
// exceeds too_far (apart: no CP is needed, §3's TOL). The closest vertices are chosen as §6.1
// says; where several pairs tie (a face or edge parallel to the plane), the others' candidates
// are tried too before the plane is taken as the CP. The vertices A and B are those of the
// configuration searched (for a pair in contact, the separated one of §6.2).
DEM_HD inline CommonPlane fast_common_plane(const PolyShape& sa, Quat qa, const PlacedVertices& A, const PolyShape& sb,
                                            Quat qb, const PlacedVertices& B, Vec3 n0, real too_far) {
  const real scale = detail::pair_scale(A, B);
  const real tie = kPlaneTie * scale;
  CommonPlane cp;
  cp.n = normalized(n0);
  {
    const PlaneSpan s = plane_span(A, B, cp.n);
    cp.gap = s.min_b - s.max_a;
    cp.level = real(0.5) * (s.min_b + s.max_a);
    cp.type = PlaneType::kAxis;
  }
  std::int16_t made_a = -1, made_b = -1;  // the closest vertices whose candidates gave the current plane
  detail::PlacedFeatures fa(sa, qa, A), fb(sb, qb, B);
  for (int round = 1; round <= kMaxFcpRounds; ++round) {
    cp.iterations = round;
    std::int16_t ia = 0, ib = 0;
    detail::closest_vertices(A, B, cp.n, tie, ia, ib);
    cp.a = ia;
    cp.b = ib;
    if (cp.gap > too_far) break;
    CommonPlane best = cp;  // a candidate must beat the current plane (and is not scored where it cannot)
    // The same closest vertices as the round that made this plane: their candidates were all scored
    // then, and this plane was the best of them (§6.1, step 4).
    if (ia != made_a || ib != made_b) detail::best_candidate(fa, A, fb, B, ia, ib, best);
    if (!(best.gap > cp.gap + tie)) {
      // The tied closest vertices (a face or an edge parallel to the plane): their candidates too.
      const PlaneSpan s = plane_span(A, B, cp.n);
      std::uint32_t tied_a = 0, tied_b = 0;
      for (int i = 0; i < A.n; ++i)
        if (!(dot(cp.n, A.v[i]) < s.max_a - tie)) tied_a |= std::uint32_t(1) << i;
      for (int j = 0; j < B.n; ++j)
        if (dot(cp.n, B.v[j]) <= s.min_b + tie) tied_b |= std::uint32_t(1) << j;
      for (int i = 0; i < A.n; ++i) {
        if (!((tied_a >> i) & 1u)) continue;
        for (int j = 0; j < B.n; ++j)
          if (((tied_b >> j) & 1u) && (i != ia || j != ib))
            detail::best_candidate(fa, A, fb, B, i, j, best, tied_a, tied_b, ia, ib);
      }
      if (!(best.gap > cp.gap + tie)) break;
    }
    best.iterations = cp.iterations;
    cp = best;
    made_a = ia;
    made_b = ib;
  }
  return cp;
}

// The plane of least penetration over the separating axes of two convex polyhedra: A's face
// normals, B's, and the cross products of an edge of each. For a pair first seen overlapping (a
// fill, an inlet, a restart without planes): its gap is minus the penetration depth exactly; for a
// separated pair it is a lower bound of the distance. Costs (F_A + F_B + E_A E_B)(V_A + V_B).
DEM_HD inline CommonPlane separating_axis_plane(const PolyShape& sa, Quat qa, const PlacedVertices& A, const PolyShape& sb,
                                                Quat qb, const PlacedVertices& B) {
  CommonPlane best;
  for (int f = 0; f < sa.num_faces; ++f)
    detail::try_plane(A, B, rotate(qa, sa.face_normal[f]), PlaneType::kFace, 0, static_cast<std::int16_t>(f), -1, best);
  for (int f = 0; f < sb.num_faces; ++f)
    detail::try_plane(A, B, -rotate(qb, sb.face_normal[f]), PlaneType::kFace, 1, static_cast<std::int16_t>(f), -1, best);
  // (B's edge directions are computed again for each edge of A: taken out of the loop into an
  // array, two polyhedra tests failed in clang's ThreadSanitizer build alone, for a reason not
  // found: bench/results/dev-2core-epyc/polyhedra_engines.md)
  for (int ea = 0; ea < sa.num_edges; ++ea) {
    const Vec3 da = placed_edge(sa, A, ea);
    for (int eb = 0; eb < sb.num_edges; ++eb)
      detail::try_plane(A, B, cross(da, placed_edge(sb, B, eb)), PlaneType::kEdgeEdge, 0, static_cast<std::int16_t>(ea),
                        static_cast<std::int16_t>(eb), best);
  }
  detail::closest_vertices(A, B, best.n, kPlaneTie * detail::pair_scale(A, B), best.a, best.b);
  best.iterations = 1;
  return best;
}

// §6.2: a pair in contact (the previous plane's gap below zero) is first separated along the
// previous normal, by its overlap along that normal now plus a margin (a thousandth of it, at least
// kPlaneTie of the scale), and FCP runs on the separated configuration from the previous normal.
// The separated pair's plane is where the bodies just touch, which for an edge or a corner can
// turn far from the overlap's own plane; so the better of it and the previous plane, scored on
// the real configuration, starts FCP's rounds again there. Overlapping, the closest vertices are
// the deepest ones and the largest gap (minus the penetration depth) lies on a plane parallel to a
// face at them (vertex-face) or to an edge of each (edge-edge): candidates (b) and (c), so the
// rounds end on the largest gap near the previous plane exactly. `moved` is storage for B's
// shifted vertices; `iterations` counts the rounds of both searches.
DEM_HD inline CommonPlane contact_common_plane(const PolyShape& sa, Quat qa, const PlacedVertices& A, const PolyShape& sb,
                                               Quat qb, const PlacedVertices& B, const CommonPlane& previous,
                                               PlacedVertices& moved) {
  const real overlap = -plane_gap(A, B, previous.n);
  if (!(overlap > 0))  // apart along the previous normal already: §6.1 from it
    return fast_common_plane(sa, qa, A, sb, qb, B, previous.n, real(1e300));
  const real shift = overlap * real(1.001) + kPlaneTie * detail::pair_scale(A, B);
  moved.n = B.n;
  for (int k = 0; k < B.n; ++k) moved.v[k] = B.v[k] + shift * previous.n;
  const CommonPlane apart = fast_common_plane(sa, qa, A, sb, qb, moved, previous.n, real(1e300));
  const Vec3 start = plane_gap(A, B, apart.n) > -overlap ? apart.n : previous.n;
  CommonPlane cp = fast_common_plane(sa, qa, A, sb, qb, B, start, real(1e300));
  cp.iterations += apart.iterations;
  return cp;
}

// §6.3: a slow pair keeps its plane's type, defining features and closest vertices; the normal
// follows those features at the new pose, and the gap is that of the two closest vertices alone
// (O(1) instead of a pass over the vertices).
DEM_HD inline CommonPlane approximate_common_plane(const PolyShape& sa, Quat qa, const PlacedVertices& A,
                                                   const PolyShape& sb, Quat qb, const PlacedVertices& B,
                                                   const CommonPlane& previous) {
  CommonPlane cp = previous;
  const Vec3 ab = B.v[previous.b] - A.v[previous.a];
  Vec3 m = previous.n;
  switch (previous.type) {
    case PlaneType::kBisector: m = ab; break;
    case PlaneType::kFace:
      m = previous.side == 0 ? rotate(qa, sa.face_normal[previous.f0]) : -rotate(qb, sb.face_normal[previous.f0]);
      break;
    case PlaneType::kEdgeEdge: m = cross(placed_edge(sa, A, previous.f0), placed_edge(sb, B, previous.f1)); break;
    case PlaneType::kEdge: {
      const Vec3 d = previous.side == 0 ? placed_edge(sa, A, previous.f0) : placed_edge(sb, B, previous.f0);
      const Vec3 u = normalized(ab);
      m = u - dot(d, u) * d;
      break;
    }
    default: break;
  }
  Vec3 n = normalized(m);
  if (!(norm2(n) > real(0.5))) n = previous.n;  // degenerate features: keep the normal
  if (dot(n, previous.n) < 0) n = -n;           // the sense the features had
  cp.n = n;
  const real la = dot(n, A.v[previous.a]), lb = dot(n, B.v[previous.b]);
  cp.gap = lb - la;
  cp.level = real(0.5) * (la + lb);
  return cp;
}

// Cundall's iterative search (§4), the paper's baseline. From the plane n0, each round rotates the
// plane about two orthogonal axes lying in it, in both senses, by a step s (the normal becomes
// n + s t, renormalised: a tilt of atan s); the best rotation that raises the gap enough is taken
// and s doubled (up to first_step), and when none does, s is halved. It starts at s = first_step and stops below last_step, or when the
// gap exceeds too_far. The axes are "arbitrary" in the paper; here the first lies along the two
// vertices of a particle that tie for closest within the step (the plane then turns about them:
// the optimum of an edge-edge or edge plane lies on such a ridge of the gap, which rotations about
// fixed axes only approach in ever smaller steps, stalling far from it), else along the coordinate
// axis least aligned with n; with ties on both particles both pairs of axes are tried.
// `iterations` counts the gap evaluations.
struct IterativeSchedule {
  real first_step = real(0.1);   // about 5.7 degrees
  real last_step = real(1e-7);   // the normal to about 1e-7 rad
  // A rotation counts as better when it raises the gap by least_gain s^2 times the pair's size:
  // tiny gains at a step too coarse for the ridge being followed then halve the step instead of
  // keeping it (a forcing function, as pattern searches use to converge).
  real least_gain = real(0.01);
  std::int32_t max_evaluations = 100000;
};

namespace detail {

// The second-closest vertex of a particle within `near` of its closest level, or -1. A's closest
// is its highest along n (sign +1), B's its lowest (sign -1).
DEM_HD inline int tied_vertex(const PlacedVertices& P, Vec3 n, real sign, int closest, real near) {
  const real top = sign * dot(n, P.v[closest]);
  int tie = -1;
  real tie_level = 0;
  for (int k = 0; k < P.n; ++k) {
    if (k == closest) continue;
    const real level = sign * dot(n, P.v[k]);
    if (level >= top - near && (tie < 0 || level > tie_level)) {
      tie = k;
      tie_level = level;
    }
  }
  return tie;
}

}  // namespace detail

DEM_HD inline CommonPlane iterative_common_plane(const PlacedVertices& A, const PlacedVertices& B, Vec3 n0, real too_far,
                                                 const IterativeSchedule& schedule = IterativeSchedule{}) {
  const real scale = detail::pair_scale(A, B);
  CommonPlane cp;
  cp.type = PlaneType::kAxis;
  cp.n = normalized(n0);
  cp.gap = plane_gap(A, B, cp.n);
  cp.iterations = 1;
  real step = schedule.first_step;
  while (step >= schedule.last_step && cp.iterations < schedule.max_evaluations && !(cp.gap > too_far)) {
    const Vec3 n = cp.n;
    std::int16_t ia = 0, ib = 0;
    detail::closest_vertices(A, B, n, real(0), ia, ib);
    const int ta = detail::tied_vertex(A, n, real(1), ia, step * scale);
    const int tb = detail::tied_vertex(B, n, real(-1), ib, step * scale);
    Vec3 along[2];
    int axes = 0;
    if (ta >= 0) along[axes++] = A.v[ta] - A.v[ia];
    if (tb >= 0) along[axes++] = B.v[tb] - B.v[ib];
    if (axes == 0) {
      along[axes++] = std::fabs(n.x) <= std::fabs(n.y) && std::fabs(n.x) <= std::fabs(n.z)
                          ? Vec3{1, 0, 0}
                          : (std::fabs(n.y) <= std::fabs(n.z) ? Vec3{0, 1, 0} : Vec3{0, 0, 1});
    }
    Vec3 best_n = n;
    real best_gap = cp.gap;
    for (int k = 0; k < axes; ++k) {
      const Vec3 t1 = normalized(cross(n, along[k]));  // turning about `along` moves n along t1
      if (!(norm2(t1) > real(0.5))) continue;
      const Vec3 t2 = cross(n, t1);
      const Vec3 dirs[4] = {t1, -t1, t2, -t2};
      for (const Vec3& t : dirs) {
        const Vec3 m = normalized(n + step * t);
        const real g = plane_gap(A, B, m);
        ++cp.iterations;
        if (g > best_gap) {
          best_gap = g;
          best_n = m;
        }
      }
    }
    if (best_gap > cp.gap + schedule.least_gain * step * step * scale) {
      cp.n = best_n;
      cp.gap = best_gap;
      step = dem_min(schedule.first_step, real(2) * step);
    } else {
      step *= real(0.5);
    }
  }
  const PlaneSpan s = plane_span(A, B, cp.n);
  cp.level = real(0.5) * (s.min_b + s.max_a);
  detail::closest_vertices(A, B, cp.n, kPlaneTie * scale, cp.a, cp.b);
  return cp;
}

// A sphere against a convex polyhedron A: the plane between A and the sphere's centre c (B is the
// centre alone). Inside A, the largest gap is over A's face planes alone (minus the distance to the
// nearest face); outside, it is the centre's distance to A, which FCP finds from the face of
// largest gap with the centre as a body of one vertex (no edges or faces: the candidates are the
// bisector to A's closest vertex, A's faces there, and planes containing A's edges there). The
// sphere's overlap is then its radius minus the gap.
DEM_HD inline PolyShape point_body() {
  PolyShape s{};
  s.num_vertices = 1;
  s.vertex[0] = Vec3{0, 0, 0};
  return s;  // (no edges, no faces: every start index 0)
}
DEM_HD inline CommonPlane sphere_polyhedron_plane(const PolyShape& sa, Quat qa, const PlacedVertices& A, Vec3 centre) {
  CommonPlane cp;
  cp.type = PlaneType::kFace;
  for (int f = 0; f < sa.num_faces; ++f) {
    const Vec3 n = rotate(qa, sa.face_normal[f]);
    const real gap = dot(n, centre - A.v[sa.face_vertex[sa.face_start[f]]]);
    if (f == 0 || gap > cp.gap) {
      cp.n = n;
      cp.gap = gap;
      cp.f0 = static_cast<std::int16_t>(f);
    }
  }
  if (cp.gap > 0) {  // outside: the distance, by FCP from that face's plane
    const PolyShape point = point_body();
    PlacedVertices c;
    c.n = 1;
    c.v[0] = centre;
    cp = fast_common_plane(sa, qa, A, point, quat_identity(), c, cp.n, real(1e300));
  } else {
    cp.side = 0;
    cp.a = sa.face_vertex[sa.face_start[cp.f0]];
    cp.b = 0;
    cp.level = dot(cp.n, centre) - real(0.5) * cp.gap;
    cp.iterations = 1;
  }
  return cp;
}

}  // namespace dem
