// The per-element bodies of a step for polyhedral particles, called by both engines through the
// sphere phases' dispatch (core/engine/phases.hpp: touching_pair_contact, mesh_contacts_near_walls,
// finish_particle, pair_overlap_fraction), compiled in only where a scene has polyhedra
// (kPolyhedra), so that the spheres' kernels keep their size and bits.
//
// A polyhedral particle is a sphere record plus a shape (ParticleView::shape >= 0, an index into
// ParticleView::shapes, whose records have d_v = 1): its `radius` is the bounding sphere's (size
// times the shape's bounding_radius: the broad phase, the skins and the mesh candidates work on it
// unchanged), its `inv_inertia` holds 1 / (m s^2) (the principal moments are the shape's
// unit_inertia over it), and its `q` maps the body frame to the world.
//
// Pairs with a polyhedron:
//  - two polyhedra meet at their common plane (nezami2004): the plane of the last pass, kept in
//    the pair's second history vector (ContactHistory::rolling, which no polyhedral law uses
//    otherwise: the engines store it wherever a scene has polyhedra; pack_plane), is tested
//    first; while it still separates the bodies they do not touch and nothing else is computed.
//    Otherwise, for a pair that was in contact across it, while both particles have moved less
//    than half their TOL since their last complete search (PAD, §6.3; an option:
//    ParticleView::plane_tolerance), the plane keeps its kind, features and closest vertices
//    (approximate_common_plane, the depth then over every vertex) as long as no other vertex lies
//    deeper than the kept ones by half a TOL; else §6.2 (contact_common_plane) from it. A pair
//    first seen (no plane: zero) starts from the centroids' bisector by FCP (§6.1); where that
//    finds no separating plane the bodies already overlap (a fill, an inlet, a restart of an older
//    state) and the plane of least penetration over the separating axes is taken
//    (separating_axis_plane: minus the penetration depth exactly).
//  - a sphere and a polyhedron meet at the sphere's centre's plane (sphere_polyhedron_plane: the
//    exact distance). Its plane is kept only to say whether they are in contact (pair_in_contact:
//    the mixing indices' contacts); no pass reads it.
//  - the law is polyhedron_contact_loads (linear spring and dashpot on the depth across the
//    plane, tangential spring in the history): the pair's table entry gives k_n, k_t, the damping
//    ratio and the friction (a linear normal law: the scene builder refuses others for polyhedra).
//  - rolling resistance, where the table entry asks for it, is the spheres' constant torque
//    (rolling_resistance.hpp, model A) with the lever arms from each centroid to the contact point
//    and each body's inertia about the rolling axis (polyhedral_rolling_torque). Its spring-dashpot
//    model (Epsd) is refused: its spring would need the history vector that holds the plane.
//  - the history lives while the bounding spheres overlap (the pair counts as touching then, as
//    a sphere pair while it overlaps), so that a checkpoint, which keeps the touching pairs, keeps
//    every plane the next step reads: a restart gives the same bits.
//  - the pair loads' integer quantum (fixed_loads.hpp) holds them: it is sized for two particles
//    of the largest radius overlapping by that radius under the stiffest law, a polyhedral
//    contact's depth and lever arms lie within the bounding spheres, and its torque bound has room
//    for the rolling torque (pair_force_bound).
#pragma once
#include "core/contact/polyhedron_contact.hpp"
#include "core/contact/polyhedron_mesh.hpp"
#include "core/dhm/fast_intersection.hpp"
#include "core/engine/mesh_history.hpp"
#include "core/engine/views.hpp"
#include "core/integrate/rigid_rotation.hpp"

namespace dem {

DEM_HD inline bool is_polyhedron(const ParticleView& p, index_t i) { return p.shapes != nullptr && p.shape[i] >= 0; }

// Particle i's size (volume-equivalent diameter, m) and principal moments of inertia (kg m^2).
DEM_HD inline real polyhedron_size(const ParticleView& p, index_t i) {
  return p.radius[i] / p.shapes[p.shape[i]].bounding_radius;
}
DEM_HD inline Vec3 polyhedron_moments(const ParticleView& p, index_t i) {
  return principal_moments(p.shapes[p.shape[i]], p.inv_inertia[i]);
}
// Its vertices with the centroid at x (a periodic image, or the particle's own position).
DEM_HD inline void place_particle(const ParticleView& p, index_t i, Vec3 x, PlacedVertices& out) {
  place_vertices(p.shapes[p.shape[i]], p.q[i], polyhedron_size(p, i), x, out);
}

// The plane kept in a polyhedral pair's second history vector: two components of its normal and,
// in the third, an integer that says which component was left out (the largest, recovered as the
// root of one minus the others' squares: well conditioned) and its sign, the plane's kind,
// defining features and closest vertices (what §6.3 keeps), and whether the pair was in contact
// across it. Zero: no plane yet.
struct KeptPlane {
  CommonPlane plane;
  bool in_contact;
};
DEM_HD inline Vec3 pack_plane(const CommonPlane& cp, bool in_contact) {
  const real ax = dem_abs(cp.n.x), ay = dem_abs(cp.n.y), az = dem_abs(cp.n.z);
  const int big = ax >= ay && ax >= az ? 0 : (ay >= az ? 1 : 2);
  const real left_out = big == 0 ? cp.n.x : big == 1 ? cp.n.y : cp.n.z;
  const auto clamp5 = [](std::int16_t v) { return std::uint32_t(v < 0 ? 0 : v) & 31u; };
  const std::uint32_t code = std::uint32_t(cp.type) | std::uint32_t(cp.side & 1) << 3 |
                             (std::uint32_t(cp.f0 + 1) & 127u) << 4 | (std::uint32_t(cp.f1 + 1) & 127u) << 11 |
                             clamp5(cp.a) << 18 | clamp5(cp.b) << 23 | std::uint32_t(big) << 28 |
                             std::uint32_t(in_contact) << 30;
  const real tag = (real(1) + real(code)) * (left_out < 0 ? real(-1) : real(1));
  return big == 0 ? Vec3{cp.n.y, cp.n.z, tag} : big == 1 ? Vec3{cp.n.x, cp.n.z, tag} : Vec3{cp.n.x, cp.n.y, tag};
}
DEM_HD inline KeptPlane unpack_plane(Vec3 kept) {
  CommonPlane cp;
  const std::uint32_t code = static_cast<std::uint32_t>(dem_abs(kept.z)) - 1u;
  const int big = int((code >> 28) & 3u);
  const real rest = std::sqrt(dem_max(real(0), real(1) - kept.x * kept.x - kept.y * kept.y));
  const real left_out = kept.z < 0 ? -rest : rest;
  cp.n = big == 0 ? Vec3{left_out, kept.x, kept.y} : big == 1 ? Vec3{kept.x, left_out, kept.y} : Vec3{kept.x, kept.y, left_out};
  cp.type = static_cast<PlaneType>(code & 7u);
  cp.side = static_cast<std::uint8_t>((code >> 3) & 1u);
  cp.f0 = static_cast<std::int16_t>(int((code >> 4) & 127u) - 1);
  cp.f1 = static_cast<std::int16_t>(int((code >> 11) & 127u) - 1);
  cp.a = static_cast<std::int16_t>((code >> 18) & 31u);
  cp.b = static_cast<std::int16_t>((code >> 23) & 31u);
  return KeptPlane{cp, ((code >> 30) & 1u) != 0};
}
DEM_HD inline bool has_plane(Vec3 kept) { return kept.z != 0; }

// Whether a touching pair (its bounding spheres overlap) is in contact: two spheres always; a pair
// with a polyhedron while its kept plane says so (the pair pass keeps one for a sphere and a
// polyhedron too, the sphere's plane, read by no pass).
DEM_HD inline bool pair_in_contact(bool with_polyhedron, Vec3 kept) {
  return !with_polyhedron || (has_plane(kept) && unpack_plane(kept).in_contact);
}

// Whether particle i has moved less than half its TOL (§6.3) since its pairs' last complete search.
DEM_HD inline bool slow_for_plane(const ParticleView& p, index_t i) {
  return p.pad[i] <= real(0.5) * p.plane_tolerance * polyhedron_size(p, i);
}

// How much deeper than the two kept vertices the §6.3 plane may find another vertex before its
// approximation counts as failed: half the smaller TOL of the pair, the drift PAD allows.
DEM_HD inline real approximation_slack(const ParticleView& p, index_t i, index_t j) {
  return real(0.5) * p.plane_tolerance * dem_min(polyhedron_size(p, i), polyhedron_size(p, j));
}

// 1/I of particle i about the world axis u (unit): a polyhedron's from its principal moments, a
// sphere's its own, a prescribed particle's zero (no torque changes its spin).
DEM_HD inline real inv_inertia_about(const ParticleView& p, index_t i, Vec3 u) {
  if (p.prescribed[i] != 0) return 0;
  if (p.shape[i] < 0) return p.inv_inertia[i];
  const Vec3 m = polyhedron_moments(p, i);
  const Vec3 b = rotate(conjugate(p.q[i]), u);
  return b.x * b.x / m.x + b.y * b.y / m.y + b.z * b.z / m.z;
}

// The rolling resistance torque on particle i (A) at a contact with a polyhedron: the constant
// torque mu_r R* F_n against the relative rolling w_r = (w_A - w_B) less its twist about n, with
// R* = r_a r_b / (r_a + r_b) from the lever arms r = |c - x| (a wall's infinite: R* = r_a), and
// the limit that stops w_r within the step taken with 1/I_A + 1/I_B about w_r's axis (j < 0: a
// wall, whose inertia is infinite). f_n: the normal force (N). B takes the opposite couple.
DEM_HD inline Vec3 polyhedral_rolling_torque(const ParticleView& p, const ContactParams& prm, index_t i, index_t j,
                                             Vec3 n, real f_n, real r_a, real r_b, Vec3 w_rel, real dt) {
  const Vec3 w_r = w_rel - dot(w_rel, n) * n;
  const real len = norm(w_r);
  if (!(len > 0) || !(f_n > 0)) return Vec3{0, 0, 0};
  const Vec3 u = w_r / len;
  const real inv_sum = inv_inertia_about(p, i, u) + (j >= 0 ? inv_inertia_about(p, j, u) : real(0));
  const real r_star = j >= 0 ? r_a * r_b / (r_a + r_b) : r_a;
  Vec3 unused{0, 0, 0};
  return rolling_resistance_torque(prm, n, w_rel, r_star, f_n, 0, inv_sum, unused, dt, 0, true);
}

// The polyhedral law of a table entry for a pair of effective mass m_star (kg): the linear
// spring-dashpot of the spheres' linear law (normal_tangential.hpp), damping 2 zeta sqrt(k m*).
DEM_HD inline PolyContactLaw polyhedral_law(const ContactParams& prm, real m_star, real weight = 1) {
  PolyContactLaw law;
  law.k_n = weight * prm.k_n;
  law.k_t = weight * prm.k_t;
  law.c_n = weight * (2 * prm.zeta * std::sqrt(prm.k_n * m_star));
  law.c_t = weight * (2 * prm.zeta * std::sqrt(prm.k_t * m_star));
  law.mu = prm.friction;
  return law;
}

// How a pair of polyhedra found its common plane at one evaluation, and those counts summed over
// pairs and steps (ContactStats' common planes): the kept plane still separated them (kept), §6.3
// followed the kept features (approximated), or a complete search ran (searched: §6.1 for a pair
// first seen, §6.2 from the kept plane otherwise) in `iterations` rounds of FCP's steps 2-4 (both
// of §6.2's searches together), the largest in iterations_max.
struct PlaneCounts {
  std::int64_t kept = 0, approximated = 0, searched = 0, iterations = 0;
  std::int32_t iterations_max = 0;
  DEM_HD void add(const PlaneCounts& o) {
    kept += o.kept, approximated += o.approximated, searched += o.searched, iterations += o.iterations;
    iterations_max = iterations_max > o.iterations_max ? iterations_max : o.iterations_max;
  }
};
struct PlaneCountsSum {  // (a reduction's operator)
  DEM_HD PlaneCounts operator()(PlaneCounts a, const PlaneCounts& b) const {
    a.add(b);
    return a;
  }
};

// The contact of particles i (role A: the smaller id) and j (its image xj nearest to A), at least
// one a polyhedron, whose bounding spheres overlap. h: the pair's history (tangential spring, and
// the common plane's normal for two polyhedra); returns the loads as force on A, torques on A and B,
// the contact point (where the force acts; the centres' midpoint when apart across the plane) and
// how the plane was found (two polyhedra; nothing counted for a sphere and a polyhedron).
struct PolyPairLoad {
  Vec3 force_on_a, torque_on_a, torque_on_b;
  Vec3 point;  // m
  PlaneCounts plane;
};
DEM_HD inline PolyPairLoad polyhedral_pair_loads(const ParticleView& p, const ContactParams& prm, index_t i, index_t j,
                                                 Vec3 xj, ContactHistory& h, real dt) {
  const Vec3 xi = p.x[i];
  const bool poly_i = p.shape[i] >= 0, poly_j = p.shape[j] >= 0;
  PolyContact c;
  c.depth = 0;
  c.point = real(0.5) * (xi + xj);
  PlaneCounts counts;
  if (poly_i && poly_j) {
    const PolyShape& sa = p.shapes[p.shape[i]];
    const PolyShape& sb = p.shapes[p.shape[j]];
    PlacedVertices A, B;
    place_particle(p, i, xi, A);
    place_particle(p, j, xj, B);
    CommonPlane cp;
    if (!has_plane(h.rolling)) {  // first seen: from the bisector, or overlapping already
      cp = fast_common_plane(sa, p.q[i], A, sb, p.q[j], B, xj - xi, real(1e300));
      counts.searched = 1;
      counts.iterations = counts.iterations_max = cp.iterations;
      if (!(cp.gap > 0)) cp = separating_axis_plane(sa, p.q[i], A, sb, p.q[j], B);
      h.rolling = pack_plane(cp, !(cp.gap > 0));
    } else {
      const KeptPlane kept = unpack_plane(h.rolling);
      cp = kept.plane;
      cp.gap = plane_gap(A, B, cp.n);
      if (cp.gap > 0) {
        counts.kept = 1;
        if (kept.in_contact) h.rolling = pack_plane(kept.plane, false);
      } else {
        // The last plane no longer separates them. A slow pair in contact across it: §6.3 (its
        // kind, features and closest vertices kept); else §6.2 from it, and always where the
        // contact is new (the plane kept while apart may be far from the contact's own).
        bool approximated = false;
        if (kept.in_contact && p.plane_tolerance > 0 && slow_for_plane(p, i) && slow_for_plane(p, j)) {
          // the normal from the kept features; the depth along it over every vertex (the paper's
          // gap of the two kept vertices alone misses a deeper corner of a tilting face: one pass
          // over the vertices, still a small part of a search)
          const CommonPlane approx = approximate_common_plane(sa, p.q[i], A, sb, p.q[j], B, kept.plane);
          const PlaneSpan span = plane_span(A, B, approx.n);
          const real gap = span.min_b - span.max_a;
          // §6.3 assumes the kept vertices stay the closest. Where another vertex lies deeper by
          // more than half a TOL it has failed (e.g. the normal of two nearly parallel edges
          // turns far with a small rotation; their plane's depth then overstates the overlap
          // many times), and the complete search below is made instead.
          if (approx.gap - gap <= approximation_slack(p, i, j)) {
            cp = approx;
            cp.gap = gap;
            cp.level = real(0.5) * (span.min_b + span.max_a);
            counts.approximated = 1;
            approximated = true;
          }
        }
        if (!approximated) {
          PlacedVertices moved;
          cp = contact_common_plane(sa, p.q[i], A, sb, p.q[j], B, kept.plane, moved);
          counts.searched = 1;
          counts.iterations = counts.iterations_max = cp.iterations;
        }
        h.rolling = pack_plane(cp, !(cp.gap > 0));
      }
    }
    if (!(cp.gap > 0)) c = polyhedron_contact(A, B, cp);
  } else {
    // one sphere: the polyhedron as the plane's A, the normal then turned to run from i to j
    const index_t poly = poly_i ? i : j, ball = poly_i ? j : i;
    const Vec3 x_poly = poly_i ? xi : xj, x_ball = poly_i ? xj : xi;
    PlacedVertices A;
    place_particle(p, poly, x_poly, A);
    const CommonPlane cp = sphere_polyhedron_plane(p.shapes[p.shape[poly]], p.q[poly], A, x_ball);
    c = sphere_polyhedron_contact(cp, x_ball, p.radius[ball]);
    if (!poly_i) c.normal = -c.normal;
    h.rolling = pack_plane(cp, c.depth > 0);  // (read by no pass: says whether they are in contact)
  }
  const PolyContactLaw law = polyhedral_law(prm, real(1) / (p.inv_mass[i] + p.inv_mass[j]));
  // (apart across the plane: zero loads, the spring reset)
  const PolyContactLoads l = polyhedron_contact_loads(c, law, xi, p.v[i], p.w[i], xj, p.v[j], p.w[j], h.tangential, dt);
  PolyPairLoad out{-l.force_on_b, l.torque_on_a, l.torque_on_b, c.point, counts};
  if (prm.rolling_friction > 0 && c.depth > 0) {
    const Vec3 m = polyhedral_rolling_torque(p, prm, i, j, c.normal, dot(l.force_on_b, c.normal), norm(c.point - xi),
                                             norm(c.point - xj), p.w[i] - p.w[j], dt);
    out.torque_on_a += m;
    out.torque_on_b -= m;
  }
  return out;
}

// The depth of the pair's contact along the plane of its last pass (two polyhedra) or the exact
// plane (a sphere), over the smaller volume-equivalent radius (a sphere's: its radius); <= 0 apart.
// i: role A (the smaller id), xj: j's image nearest to it, normal: the pair's kept plane (pack_plane).
DEM_HD inline real polyhedral_overlap_fraction(const ParticleView& p, index_t i, index_t j, Vec3 xj, Vec3 normal) {
  const bool poly_i = p.shape[i] >= 0, poly_j = p.shape[j] >= 0;
  const real ri = poly_i ? real(0.5) * polyhedron_size(p, i) : p.radius[i];
  const real rj = poly_j ? real(0.5) * polyhedron_size(p, j) : p.radius[j];
  real depth = 0;
  if (poly_i && poly_j) {
    if (!has_plane(normal)) return 0;  // never met
    PlacedVertices A, B;
    place_particle(p, i, p.x[i], A);
    place_particle(p, j, xj, B);
    depth = -plane_gap(A, B, unpack_plane(normal).plane.n);
  } else {
    const index_t poly = poly_i ? i : j, ball = poly_i ? j : i;
    const Vec3 x_poly = poly_i ? p.x[i] : xj, x_ball = poly_i ? xj : p.x[i];
    PlacedVertices A;
    place_particle(p, poly, x_poly, A);
    depth = p.radius[ball] - sphere_polyhedron_plane(p.shapes[p.shape[poly]], p.q[poly], A, x_ball).gap;
  }
  return depth / dem_min(ri, rj);
}

// One polyhedron's step: central differences for the centroid (as a sphere's), the symplectic
// splitting for the rotation (core/integrate/rigid_rotation.hpp), then back into the periodic box.
// Its PAD (§6.3) starts again from zero where it had passed half the TOL (its pairs' planes were
// searched in full in this step's pair pass, which read it), then takes this step's bound on its
// vertices' travel: |v| dt + |w| dt times the bounding radius.
DEM_HD inline void polyhedron_step(const ParticleView& p, index_t i, Vec3 f, Vec3 t, Vec3 gravity, real dt) {
  const bool fixed = p.prescribed[i] != 0;
  Vec3 v = p.v[i];
  if (!fixed) v = v + (p.inv_mass[i] * f + gravity) * dt;
  Vec3 x = p.x[i] + v * dt;
  Quat q = p.q[i];
  Vec3 w = p.w[i];
  rigid_rotation_step(q, w, t, polyhedron_moments(p, i), fixed, dt);
  if (p.plane_tolerance > 0) p.pad[i] = (slow_for_plane(p, i) ? p.pad[i] : real(0)) + (norm(v) + norm(w) * p.radius[i]) * dt;
  wrap_position(p.periodic, x);
  p.x[i] = x;
  p.v[i] = v;
  p.w[i] = w;
  p.q[i] = q;
}

// The world-frame angular velocity at the step's time from the stored half-step one (the output's
// velocities_at_step_time for a body with a full inertia tensor): w + I^-1 T dt / 2.
DEM_HD inline Vec3 polyhedron_spin_at_step_time(Quat q, Vec3 w, Vec3 torque, Vec3 moments, real dt) {
  const Vec3 tb = rotate(conjugate(q), torque);
  return w + rotate(q, Vec3{tb.x / moments.x, tb.y / moments.y, tb.z / moments.z}) * (real(0.5) * dt);
}

// ---------------------------------------------------------------------------------------------
// A polyhedron against the mesh (core/contact/polyhedron_mesh.hpp)

// Elements a polyhedron's bounding sphere may meet at once (more stops the run, as a full block
// of mesh slots does): its contacts are ranked among them.
constexpr int kMaxPolyElements = 32;

struct PolyMeshCounts {
  std::uint32_t in_contact = 0;  // candidates whose element meets the bounding sphere
  std::uint32_t valid = 0;       // contacts left by the ranking (more than kMaxMeshContacts: reported)
};

// Particle i (a polyhedron) against its candidate elements cand[0..n_cand): each element meeting
// its bounding sphere (the Fast Intersection Test) is met through the plane of least penetration
// of the two (separating_axis_plane), the contacts are ranked (rank_element_contacts), and each
// kept one acts with its weight's share of the law. Slots as the spheres' (MeshSlotsView): the
// element, Facet / Edge / Vertex for a face, edge or vertex contact, the contact point, and as
// `distance` the radius less the depth scaled to the radius (mesh_overlap_fraction then gives the
// depth over the volume-equivalent radius); history by the same element and type, else the unused
// old contact on the same body with the closest normal within 10 degrees (as the spheres').
DEM_HD inline PolyMeshCounts polyhedron_mesh_contacts(index_t i, const ParticleView& p, const MeshView& m,
                                                      const ContactTable& table, const MeshSlotsView& s,
                                                      const std::int32_t* cand, std::int64_t n_cand, real dt, Vec3& f,
                                                      Vec3& t) {
  PolyMeshCounts counts;
  f = Vec3{0, 0, 0};
  t = Vec3{0, 0, 0};
  const int n_old = s.count[i];
  const std::int64_t base = s.base(i);
  const Vec3 x = p.x[i];
  const real r = p.radius[i];
  const real half_size = real(0.5) * polyhedron_size(p, i);
  const PolyShape& shape = p.shapes[p.shape[i]];
  PlacedVertices A;
  place_particle(p, i, x, A);
  ElementContact found[kMaxPolyElements];
  const std::int32_t* ids[kMaxPolyElements];
  int sizes[kMaxPolyElements];
  Vec3 normals[kMaxPolyElements];
  std::int32_t element_of[kMaxPolyElements];
  int near = 0, touching = 0;
  for (std::int64_t k = 0; k < n_cand; ++k) {
    const std::int32_t e = cand[k];
    const Vec3 n0 = m.normals[e];
    if (!reaches_plane(m.first_vertex(e), n0, x, r)) continue;
    const Polygon poly = m.polygon(e);
    if (!fast_intersection_test(poly, n0, x, r)) continue;
    ++counts.in_contact;
    if (near == kMaxPolyElements) continue;  // counted: reported below
    ids[near] = m.elem_vertices + m.elem_offsets[e];
    sizes[near] = poly.n;
    normals[near] = n0;
    element_of[near] = e;
    ++near;
  }
  // (all candidates first: an element's face contact asks whether its neighbours continue its plane)
  const ElementCandidates candidates{ids, sizes, normals, near, m.vertices};
  for (int k = 0; k < near; ++k) {
    const Polygon poly = m.polygon(element_of[k]);
    PolyShape flat;
    PlacedVertices E;
    flat_element_body(poly, flat, E);
    const CommonPlane cp = separating_axis_plane(shape, p.q[i], A, flat, quat_identity(), E);
    if (cp.gap < 0) {
      const ElementContact ec = element_contact(A, shape, x, poly, E, ids[k], k, cp, candidates);
      if (ec.weight > 0) found[touching++] = ec;
    }
  }
  rank_element_contacts(found, touching, candidates, kContactTie * r);
  EntityContact old_entity[kMaxMeshContacts];
  Vec3 old_normal[kMaxMeshContacts];
  ContactHistory old_history[kMaxMeshContacts];
  bool old_used[kMaxMeshContacts] = {};
  for (int o = 0; o < n_old; ++o) {
    old_entity[o] = s.entity[base + o];
    old_normal[o] = s.normal[base + o];
    old_history[o] = s.history.get(base + o);
  }
  int used = 0;
  for (int k = 0; k < touching; ++k) {
    const ElementContact& ec = found[k];
    if (!(ec.weight > 0)) continue;
    ++counts.valid;
    if (used == kMaxMeshContacts) continue;  // counted: reported by the caller
    const std::int32_t e = element_of[ec.element];
    const index_t body = m.elem_body[e];
    const EntityType type = ec.face ? EntityType::Facet : ec.feature_b < 0 ? EntityType::Vertex : EntityType::Edge;
    ContactHistory h = carried_mesh_history(n_old, old_used, old_entity, old_normal, old_history, m.elem_body, body,
                                            ec.contact.normal,
                                            [&](int o) { return old_entity[o].element == e && old_entity[o].type == type; });
    const ContactParams& prm = table(p.material[i], m.bodies[body].material);
    const PolyContactLaw law = polyhedral_law(prm, real(1) / p.inv_mass[i], ec.weight);
    const BodyFrame& fb = m.frames[body];
    PolyContactLoads l =
        polyhedron_contact_loads(ec.contact, law, x, p.v[i], p.w[i], fb.center, fb.v, fb.w, h.tangential, dt);
    if (prm.rolling_friction > 0) {  // (the weighted force: shared elements share the torque)
      const Vec3 n = ec.contact.normal;
      const Vec3 roll = polyhedral_rolling_torque(p, prm, i, -1, n, dot(l.force_on_b, n), norm(ec.contact.point - x), 0,
                                                  p.w[i] - fb.w, dt);
      l.torque_on_a += roll;
      l.torque_on_b -= roll;
    }
    s.entity[base + used] =
        EntityContact{ec.contact.point, r - ec.contact.depth * (r / half_size), e, type, std::uint8_t(0)};
    s.normal[base + used] = ec.contact.normal;
    s.history.set(base + used, h);
    s.body_force[base + used] = l.force_on_b;
    s.body_torque[base + used] = l.torque_on_b;
    f += -l.force_on_b;
    t += l.torque_on_a;
    ++used;
  }
  if (counts.in_contact > std::uint32_t(kMaxPolyElements)) counts.valid = counts.in_contact;  // (over: reported)
  s.count[i] = static_cast<std::uint8_t>(used);
  return counts;
}

}  // namespace dem
