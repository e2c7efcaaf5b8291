// The per-element bodies of every phase of a step, written once and called by both engines: the
// host engine (host/omp/, one file a phase) runs them in OpenMP loops, the device engine
// (cuda/device_engine.inl) in thrust::for_each over a counting iterator. Only the loops, the lists
// and the memory differ between the engines; the arithmetic of a step is here.
//
// Orders that make results independent of the particle order, the thread count and the engine:
//  - a sphere pair is evaluated with role A = the smaller id (pair_contact), whoever asks;
//  - a particle's force is its pair loads' sum, in integers (fixed_loads.hpp: exact, so in any
//    order), plus its mesh contacts' sum (slots in H2's canonical order);
//  - body loads are each mesh contact's load on its body in integers (add_particle_body_loads,
//    core/engine/fixed_loads.hpp: BodyLoadSum), summed over the particles in any order.
#pragma once
#include <cstring>

#include "core/contact/contact_law.hpp"
#include "core/dhm/fast_intersection.hpp"
#include "core/dhm/h2_filter.hpp"
#include "core/engine/fixed_loads.hpp"
#include "core/engine/mesh_history.hpp"
#include "core/engine/polyhedron_phases.hpp"
#include "core/engine/views.hpp"
#include "core/geometry/sphere_sphere.hpp"
#include "core/integrate/central_difference.hpp"

namespace dem {

// ---------------------------------------------------------------------------------------------
// Mesh motion: the pose of every body at time t (constant velocity and spin about a moving centre).

DEM_HD inline index_t body_of_vertex(const MeshView& m, index_t k) {
  for (index_t b = 0; b < m.num_bodies; ++b)
    if (k >= m.bodies[b].first_vertex && k < m.bodies[b].first_vertex + m.bodies[b].vertex_count) return b;
  return -1;
}

// Vertex k in its body's pose, m.frames (vertices of no body stay where they are).
DEM_HD inline void move_mesh_vertex(const MeshView& m, index_t k) {
  const index_t body = body_of_vertex(m, k);
  if (body < 0) return;
  m.vertices[k] = m.frames[body].center + rotate(m.frames[body].rotation, m.ref_vertices[k] - m.bodies[body].center0);
}

// Unit normal of element e, rotated with its body.
DEM_HD inline void move_mesh_normal(const MeshView& m, index_t e) {
  m.normals[e] = rotate(m.frames[m.elem_body[e]].rotation, m.ref_normals[e]);
}

// ---------------------------------------------------------------------------------------------
// Skins

// Distance of the point at offset d from a body's centre to its rotation axis (along w); for a body
// that does not turn, the distance from the centre.
DEM_HD inline real distance_from_axis(Vec3 d, Vec3 w) {
  const Vec3 axis = normalized(w);
  return norm(d - dot(d, axis) * axis);
}

// Speed of the points of a moving body that a sphere at x (radius r) can meet; 0 for a body at rest.
// (Bounds over the run for a time-varying law: body_speed_bound, body_spin_bound.)
// center: the body's rotation centre now (BodyFrame::center).
DEM_HD inline real body_speed_near(const MeshBodyMotion& b, Vec3 center, Vec3 x, real r) {
  const Vec3 w = body_spin_bound(b);
  const real v = body_speed_bound(b);
  if (norm2(w) == 0 && v == 0) return 0;
  const real from_axis = distance_from_axis(x - center, w);
  return v + norm(w) * (from_axis + r);
}

// Bound on how far any point of any mesh body moves in one step: |v| dt + |w| dt times the largest
// distance of the body's points from its rotation axis (ref_vertices: the bodies' vertices in the
// reference pose, turned by the rotation at t0 so that they are measured against the current axis).
// The mesh candidate lists hold while particle displacement plus the sum of these stays in the skin.
DEM_HD inline real mesh_step_bound(const MeshBodyMotion* bodies, index_t num_bodies, const Vec3* ref_vertices, real dt) {
  real bound = 0;
  for (index_t b = 0; b < num_bodies; ++b) {
    real reach = 0;
    for (index_t k = bodies[b].first_vertex; k < bodies[b].first_vertex + bodies[b].vertex_count; ++k)
      reach = dem_max(reach, distance_from_axis(rotate(bodies[b].rotation_t0, ref_vertices[k] - bodies[b].center0),
                                                body_spin_bound(bodies[b])));
    bound = dem_max(bound, (body_speed_bound(bodies[b]) + norm(body_spin_bound(bodies[b])) * reach) * dt);
  }
  return bound;
}

// The engines keep a neighbour or mesh candidate list past a particle's skin while an exact
// check of the particles past their skins finds nothing missing (list_holds, mesh_lists_hold):
// worth it for at most n / 64 of them (8 in small systems); beyond, a rebuild costs less.
DEM_HD inline std::int64_t most_past_skins(std::int64_t n) { return n / 64 > 8 ? n / 64 : 8; }
DEM_HD inline bool few_past_skins(std::int64_t past, std::int64_t n) { return past <= most_past_skins(n); }
// How far a particle has moved past its half skin (0 within it): d2 its squared displacement since
// the build, s2 its half skin squared.
DEM_HD inline real half_skin_excess(real d2, real s2) { return d2 > s2 ? std::sqrt(d2) - std::sqrt(s2) : real(0); }
// A kept list's check: the radius around a particle, at its present position, within which every
// partner it touches (pair list; excess: the largest half_skin_excess of any particle) or every
// element it may meet (mesh lists; excess: the mesh travel) must be listed. A millionth more, so
// that rounding never drops one at the limit.
DEM_HD inline real kept_list_search_radius(real radius, real excess) { return (radius + excess) * real(1.000001); }

constexpr int kSkinSteps = 16;       // steps an adaptive skin is sized for
constexpr real kMinHalfSkin = 0.05;  // in radii: the half skin of a particle at rest
constexpr real kMaxHalfSkin = 2;     // in largest radii

// Adaptive half skin of a particle: what it can travel in kSkinSteps steps at the largest speed
// around it (`speed`: its own, its partners', nearby moving bodies'), bounded below by a
// twentieth of its radius and above by twice the largest radius. Only speed depends on it: the
// rebuild test is exact whatever the skin is.
DEM_HD inline real adaptive_half_skin(real speed, real radius, real dt, real r_max) {
  const real horizon = real(kSkinSteps) * dt;
  return dem_min(dem_max(horizon * speed, kMinHalfSkin * radius), kMaxHalfSkin * r_max);
}

// Adaptive mesh skin of a particle: the elements within its radius plus this skin are its
// candidates, kept while its displacement plus the mesh travel stays inside the skin. What it and
// the fastest mesh point (mesh_step: per step) can close in kSkinSteps steps, at least half its
// radius, at most skin_max (half the largest radius). On equal spheres that is skin_max for all, as
// before; on a wide distribution a fine sphere at rest by a finely meshed wall keeps a few elements
// instead of every element within half the largest radius. Only speed depends on it: the renewal
// test is exact whatever the skin is.
DEM_HD inline real adaptive_mesh_skin(real speed, real radius, real dt, real mesh_step, real skin_max) {
  const real reach = real(kSkinSteps) * (speed * dt + mesh_step);
  return dem_min(dem_max(reach, real(0.5) * radius), skin_max);
}
// A particle's pair skin, written once for both engines: its reach in the pair search is
// radius + half skin s, and the pair list holds while it has moved less than s since the build.
// The squared distance it has moved since then (nearest image on periodic axes):
DEM_HD inline real moved2(const PeriodicBox& b, Vec3 x, Vec3 x_at_build) { return norm2(nearest_image(b, x - x_at_build)); }
// Reach and s^2 under a fixed pair skin (s = skin / 2):
DEM_HD inline void fixed_pair_skin(real radius, real skin, real& reach, real& half_skin2) {
  reach = radius + real(0.5) * skin;
  half_skin2 = real(0.25) * skin * skin;
}
// Under the adaptive skin, from the largest speed around the particle (adaptive_half_skin):
DEM_HD inline void adaptive_pair_skin(real speed, real radius, real dt, real r_max, real& reach, real& half_skin2) {
  const real s = adaptive_half_skin(speed, radius, dt, r_max);
  reach = radius + s;
  half_skin2 = s * s;
}
// That speed widened by the moving bodies among the particle's mesh candidates cand[begin, end):
// the speed of each body's points at the particle's distance from its axis.
DEM_HD inline real speed_near_candidates(real speed, const std::int32_t* cand, std::int64_t begin, std::int64_t end,
                                         const index_t* elem_body, const MeshBodyMotion* bodies,
                                         const BodyFrame* frames, Vec3 x, real radius) {
  for (std::int64_t k = begin; k < end; ++k) {
    const index_t b = elem_body[cand[k]];
    speed = dem_max(speed, body_speed_near(bodies[b], frames[b].center, x, radius));
  }
  return speed;
}

// The largest mesh skin, given the engine's skin (a fixed one, or half the largest radius when
// adaptive): a fixed skin as it is; adaptive, twice that, the largest radius. On the ribbon mixer
// the blades' 0.13 mm a step used up half a radius in 6 steps; with a whole radius the mesh lists
// live 12 steps (the neighbour list's 12.5) for a third more Fast Intersection Tests, and the step
// is 5 % faster (host engine, 6 alternated pairs). Wider still paid nothing measurable.
DEM_HD inline real mesh_skin_max(real skin, bool adaptive) { return adaptive ? 2 * skin : skin; }
// A particle's mesh skin: adaptive (adaptive_mesh_skin from its speed), or the fixed skin_max.
DEM_HD inline real particle_mesh_skin(bool adaptive, Vec3 v, real radius, real dt, real mesh_step, real skin_max) {
  return adaptive ? adaptive_mesh_skin(norm(v), radius, dt, mesh_step, skin_max) : skin_max;
}

// The host engine's rule (Engine::update_mesh_candidates). The elements a particle's list
// leaves out lay, at the renewal, at least `still` beyond its radius where their body never
// moves, and `moving` where it moves (each room at least its skin): those of still bodies cannot
// reach it before it has moved `still`, those of moving bodies before its displacement plus their
// travel exceeds `moving`. mesh_skin_used is the case still = moving = skin.
DEM_HD inline bool mesh_rooms_used(real d2, real still, real moving, real travel) {
  const real left = moving - travel;
  return d2 > still * still || left <= 0 || d2 > left * left;
}
// Whether particle i's mesh candidates may miss an element: its displacement since the lists were
// made (squared, d2) plus the mesh travel since then (travel) exceeds its mesh skin.
DEM_HD inline bool mesh_skin_used(real d2, real skin, real travel) { return mesh_rooms_used(d2, skin, skin, travel); }
// The elements of one moving body, whose motion is rigid, keep their places in its frame: a
// particle near it (`body`, whose left-out elements lay at least `room` beyond its radius at the
// renewal, when the particle was at `at` in the body's frame) may move `room` in that frame before
// one of them can reach it. That body's travel then does not count (mesh_rooms).
struct MeshNearBody {
  std::int32_t particle;
  index_t body;
  real room;  // m
  Vec3 at;    // m, in the body's frame (body_coordinates)
};
DEM_HD inline Vec3 body_coordinates(const BodyFrame& f, Vec3 x) { return rotate(conjugate(f.rotation), x - f.center); }
DEM_HD inline bool mesh_near_body_used(const MeshNearBody& m, Vec3 x, const BodyFrame* frames) {
  return norm2(body_coordinates(frames[m.body], x) - m.at) > m.room * m.room;  // (room: with slack for rounding)
}
// A particle's rooms from the least room each body's left-out elements leave it (body_room; `far`
// where the search met none: the skin plus the search's margin): the moving body nearest to it,
// measured in its frame, and the other moving bodies (no limit where there are none).
struct MeshRooms {
  index_t body;  // the nearest moving body (-1: none within the search)
  real nearest;  // m, its room
  real others;   // m, the room for the others
};
constexpr real kNoRoomLimit = real(1e30);
DEM_HD inline MeshRooms mesh_rooms(const real* body_room, const std::uint8_t* moves, index_t bodies, int moving_bodies,
                                   real far) {
  MeshRooms r{-1, far, far};
  for (index_t b = 0; b < bodies; ++b)
    if (moves[b] && body_room[b] < r.nearest) r.body = b, r.nearest = body_room[b];
  r.others = moving_bodies - (r.body >= 0 ? 1 : 0) == 0 ? kNoRoomLimit : far;
  for (index_t b = 0; b < bodies; ++b)
    if (moves[b] && b != r.body) r.others = dem_min(r.others, body_room[b]);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Sphere-sphere contact

struct PairLoad {
  Vec3 force_on_a, torque_on_a, torque_on_b;  // N, N m
};

// The contact of spheres A and B (A: the smaller id; xb: B's image nearest to A) whose cheap test
// passed, from their fields: whether they overlap, with the contact's loads and history, else zero
// loads and a reset history. touching_pair_contact's result to the bit, without its branch: the
// loads are computed and then kept or not, so that the host's batched pair pass runs this as one
// lane of a vector (kDefaultLaw: the default law alone, is_default_law). Every other caller takes
// touching_pair_contact, whose early return keeps the GPU kernel at 128 registers (this form
// needs 148 there).
struct SpherePairResult {
  ContactHistory history;
  PairLoad load;
  bool touching;
  real overlap;  // m (> 0: touching)
};
template <bool kAllModels = true, bool kDefaultLaw = false>  // (normal_tangential_force)
DEM_HD_INLINE SpherePairResult sphere_pair_loads(const ContactParams& prm, Vec3 xa, Vec3 va, Vec3 wa, real ra,
                                                 real inv_mass_a, real inv_inertia_a, Vec3 xb, Vec3 vb, Vec3 wb,
                                                 real rb, real inv_mass_b, real inv_inertia_b, ContactHistory h,
                                                 real dt) {
  const ContactGeometry g = sphere_sphere(xa, ra, xb, rb);
  const BodyKinematics ka{xa, va, wa, 1 / ra, inv_mass_a, inv_inertia_a};
  const BodyKinematics kb{xb, vb, wb, 1 / rb, inv_mass_b, inv_inertia_b};
  const ContactResult r = contact_loads<kAllModels, kDefaultLaw>(prm, g, ka, kb, h, dt);
  const bool touching = g.overlap > real(0);
  const Vec3 zero{0, 0, 0};
  return SpherePairResult{
      ContactHistory{select(touching, h.tangential, zero), select(touching, h.rolling, zero)},
      PairLoad{select(touching, r.force_on_a, zero), select(touching, r.torque_on_a, zero),
               select(touching, r.torque_on_b, zero)},
      touching, g.overlap};
}

// sphere_pair_loads of the default law (is_default_law) from its five parameters, the lane of the
// host's batched pair pass (PairLanes in host/omp/pair_pass.cpp, and dem_micro_bench's
// BM_PairLanesLaw): the default law reads nothing else of ContactParams, and neither reads nor
// writes the history's second vector (left where it is: zero for these pairs). By value (no
// local whose address is taken: OpenMP would turn it into an array per lane, which does not
// vectorise).
DEM_HD_INLINE SpherePairResult default_law_pair_loads(real e_star, real g_star, real zeta, real friction,
                                                      real rolling_friction, Vec3 x_a, Vec3 v_a, Vec3 w_a, real r_a,
                                                      real im_a, real ii_a, Vec3 x_b, Vec3 v_b, Vec3 w_b, real r_b,
                                                      real im_b, real ii_b, Vec3 xi, real dt) {
  ContactParams prm;
  prm.e_star = e_star;
  prm.g_star = g_star;
  prm.zeta = zeta;
  prm.friction = friction;
  prm.rolling_friction = rolling_friction;
  return sphere_pair_loads<false, true>(prm, x_a, v_a, w_a, r_a, im_a, ii_a, x_b, v_b, w_b, r_b, im_b, ii_b,
                                        ContactHistory{xi, {0, 0, 0}}, dt);
}

// The contact of spheres u and v (array indices, either order) whose cheap test passed
// (pair_contact), one pair at a time. kPolyhedra: the scene has polyhedra, and a pair with one
// goes to polyhedral_pair_loads (core/engine/polyhedron_phases.hpp: touching while the bounding
// spheres overlap, the history then holding its common plane), which also stores its contact point
// (for the coarse-grained contact stress; a sphere pair's lies between the centres) and how it
// found its plane in *poly where given.
template <bool kAllModels = true, bool kPolyhedra = false>  // (normal_tangential_force)
DEM_HD inline bool touching_pair_contact(const ParticleView& p, const ContactTable& table, index_t u, index_t v,
                                         ContactHistory& h, PairLoad& load, real dt, PolyPairLoad* poly = nullptr) {
  const bool swap = p.id[u] > p.id[v];
  const index_t i = swap ? v : u, j = swap ? u : v;
  const Vec3 xi = p.x[i];
  const Vec3 xj = p.periodic.any() ? image_near(p.periodic, xi, p.x[j]) : p.x[j];  // B's image nearest to A
  if (kPolyhedra && (p.shape[i] >= 0 || p.shape[j] >= 0)) {
    const PolyPairLoad l = polyhedral_pair_loads(p, table(p.material[i], p.material[j]), i, j, xj, h, dt);
    load = PairLoad{l.force_on_a, l.torque_on_a, l.torque_on_b};
    if (poly != nullptr) *poly = l;
    return true;
  }
  const ContactGeometry g = sphere_sphere(xi, p.radius[i], xj, p.radius[j]);
  const BodyKinematics ka{xi, p.v[i], p.w[i], 1 / p.radius[i], p.inv_mass[i], p.inv_inertia[i]};
  const BodyKinematics kb{xj, p.v[j], p.w[j], 1 / p.radius[j], p.inv_mass[j], p.inv_inertia[j]};
  const ContactResult r = evaluate_contact<kAllModels>(table(p.material[i], p.material[j]), g, ka, kb, h, dt);
  load = PairLoad{r.force_on_a, r.torque_on_a, r.torque_on_b};
  return g.overlap > 0;
}

// The contact of particles u and v (array indices, either order) with their history h; role A is
// the one with the smaller id, so the result does not depend on who evaluates it. Returns whether
// the spheres touch (then `load` holds the contact's loads); apart, the history is reset (it is
// already zero when the pair was not touching, so the write is skipped then) and `load` is left
// as it was, except when the cheap test passes and the overlap rounds to zero: then
// zero loads are stored (and neither engine adds them: the pair does not touch).
// The cheap test of a candidate pair: whether spheres u and v overlap, without a square root
// (symmetric to the bit: |x_u - x_v|^2 against (r_u + r_v)^2, the difference taken to its nearest
// image on periodic axes, which keeps the symmetry and leaves it untouched elsewhere). Component by
// component and without a branch, so that the host's pair pass runs it in vector lanes.
DEM_HD inline bool pair_overlaps(const ParticleView& p, index_t u, index_t v) {
  const Vec3 d{p.x[u].x - p.x[v].x, p.x[u].y - p.x[v].y, p.x[u].z - p.x[v].z};
  return spheres_overlap_at(nearest_image(p.periodic, d), p.radius[u], p.radius[v]);
}

template <bool kAllModels = true, bool kPolyhedra = false>  // (normal_tangential_force)
DEM_HD_INLINE bool pair_contact(const ParticleView& p, const ContactTable& table, index_t u, index_t v,
                                const SplitHistory& history, std::int64_t k, bool was_touching, PairLoad& load,
                                real dt, PolyPairLoad* poly = nullptr) {
  if (!pair_overlaps(p, u, v)) {  // apart: the cheap path
    if (was_touching) history.set(k, ContactHistory{{0, 0, 0}, {0, 0, 0}});
    return false;
  }
  ContactHistory h = history.get(k);
  const bool on = touching_pair_contact<kAllModels, kPolyhedra>(p, table, u, v, h, load, dt, poly);
  history.set(k, h);
  return on;
}

// Adds a pair's loads to the integer sum of the particle on side A or B of it (side B: -F and its
// own torque), as the host engine's pair pass adds them (core/engine/fixed_loads.hpp).
DEM_HD inline void add_pair_load(const PairLoad& l, bool role_b, const LoadQuantum& q, FixedLoad& sum) {
  if (!role_b) {
    add_fixed_load(sum, l.force_on_a, l.torque_on_a, q);
  } else {
    add_fixed_load(sum, -l.force_on_a, l.torque_on_b, q);
  }
}

// A rebuild of one particle's row: each new partner that was in the old row is carried (carry(o,
// k): old entry o to new entry k), the others start afresh (fresh(k)). Both rows are sorted by key
// (partner index or id, unique within a row), so this is one merge.
template <class NewKeys, class OldKeys, class Carry, class Fresh>
DEM_HD inline void merge_row(const NewKeys& new_keys, std::int64_t n_new, const OldKeys& old_keys, std::int64_t n_old,
                             const Carry& carry, const Fresh& fresh) {
  std::int64_t o = 0;
  for (std::int64_t k = 0; k < n_new; ++k) {
    while (o < n_old && old_keys[o] < new_keys[k]) ++o;
    if (o < n_old && old_keys[o] == new_keys[k]) carry(o, k);
    else fresh(k);
  }
}

// A row's keys read through its partner indices: key[index[k]] (the partners' ids, where a row
// stores only the indices).
template <class Key>
struct GatheredKeys {
  const std::int32_t* index;
  const Key* key;
  DEM_HD Key operator[](std::int64_t k) const { return key[index[k]]; }
};

// The first entry k of [lo, hi) whose key is not below `value`, in a range sorted by key (a row
// sorted by partner id: the entry of a given partner, where keys[k] == value). hi where none.
template <class Keys, class Key>
DEM_HD inline std::int64_t first_not_below(const Keys& keys, std::int64_t lo, std::int64_t hi, const Key& value) {
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// History carried across a rebuild of one particle's row (merge_row): new partners that were in
// the old row keep their history and touching flag, the others start at zero. The histories are
// the rows' own (entry 0 the row's first), in the same layout (both with or without the second).
// The old row may hold only the entries whose history or flag is not zero (history_is_blank): the
// others would carry zeros, as a fresh entry starts.
template <class NewKeys, class OldKeys>
DEM_HD inline void carry_history_row(const NewKeys& new_keys, std::int64_t n_new, const OldKeys& old_keys,
                                     const SplitHistory& old_history, const std::uint8_t* old_touching,
                                     std::int64_t n_old, const SplitHistory& history, std::uint8_t* touching) {
  merge_row(
      new_keys, n_new, old_keys, n_old,
      [&](std::int64_t o, std::int64_t k) {
        history.set(k, old_history.get(o));
        touching[k] = old_touching[o];
      },
      [&](std::int64_t k) {
        history.set(k, ContactHistory{{0, 0, 0}, {0, 0, 0}});
        touching[k] = 0;
      });
}

// Whether entry k is what a fresh entry starts as: every bit of its history zero (-0.0 is not:
// carried, it keeps its sign) and not touching.
DEM_HD inline bool history_is_blank(const SplitHistory& h, const std::uint8_t* touching, std::int64_t k) {
  if (touching[k] != 0) return false;
  const auto blank = [](const Vec3& v) {
    const real c[3] = {v.x, v.y, v.z};
    unsigned char b[sizeof c];
    std::memcpy(b, c, sizeof c);
    unsigned char any = 0;
    for (unsigned char x : b) any |= x;
    return any == 0;
  };
  return blank(h.tangential[k]) && (h.second == nullptr || blank(h.second[k]));
}

// ---------------------------------------------------------------------------------------------
// Sphere-mesh contacts of one particle (santasusana2016 Sects. 4-5)

struct MeshContactCounts {
  std::uint32_t potential = 0;    // candidates tested (Fast Intersection Test calls)
  std::uint32_t in_contact = 0;   // candidates that passed it
  std::uint32_t valid = 0;        // contacts left by H2 (before the capacity cut)
  std::uint32_t compactions = 0;  // H2 candidate buffer compactions
};

// Whether element e meets the sphere (c, r): its plane first (Sect. 4.1, before the polygon is
// gathered), then the Fast Intersection Test (Sect. 4). The mesh pass runs the same two steps
// itself, keeping the polygon for H2 (through an out-parameter here it measured slower).
DEM_HD inline bool element_meets_sphere(const MeshView& m, index_t e, Vec3 c, real r) {
  const Vec3 n0 = m.normals[e];
  return reaches_plane(m.first_vertex(e), n0, c, r) && fast_intersection_test(m.polygon(e), n0, c, r);
}

// Particle i against its candidate elements cand[0..n_cand) (sorted by element): Fast
// Intersection Test, H2, then the contact law per valid entity with the history of the matching
// old slot. Writes the particle's slots (count, entity, normal, history, loads on the bodies) and
// returns its total mesh force f and torque t. acc is caller-provided scratch (about 3 KB).
// kPolyhedra: the scene has polyhedra, whose contacts polyhedron_mesh_contacts makes.
template <bool kAllModels = true, bool kPolyhedra = false>  // (normal_tangential_force)
DEM_HD inline MeshContactCounts mesh_contacts_near_walls(index_t i, const ParticleView& p, const MeshView& m,
                                                         const ContactTable& table, const MeshSlotsView& s,
                                                         const std::int32_t* cand, std::int64_t n_cand,
                                                         H2Accumulator& acc, real tol, real dt, Vec3& f, Vec3& t) {
  MeshContactCounts counts;
  if (kPolyhedra && p.shape[i] >= 0) {
    const PolyMeshCounts c = polyhedron_mesh_contacts(i, p, m, table, s, cand, n_cand, dt, f, t);
    counts.potential = static_cast<std::uint32_t>(n_cand);
    counts.in_contact = c.in_contact;
    counts.valid = c.valid;
    return counts;
  }
  f = Vec3{0, 0, 0};
  t = Vec3{0, 0, 0};
  const int n_old = s.count[i];
  const std::int64_t base = s.base(i);
  const Vec3 c = p.x[i];
  const real r = p.radius[i];
  EntityContact old_entity[kMaxMeshContacts];
  Vec3 old_normal[kMaxMeshContacts];
  ContactHistory old_history[kMaxMeshContacts];
  bool old_used[kMaxMeshContacts] = {};
  // (a loop that ends by a test inside: GCC turned the plain one into three calls of memcpy, whose
  // start-up for the usual one or two slots cost 4 % of the ribbon mixer's step on the host)
  for (int o = 0; o < kMaxMeshContacts; ++o) {
    if (o == n_old) break;
    old_entity[o] = s.entity[base + o];
    old_normal[o] = s.normal[base + o];
    old_history[o] = s.history.get(base + o);
  }
  h2_begin(acc, c, tol);
  counts.potential = static_cast<std::uint32_t>(n_cand);
  for (std::int64_t k = 0; k < n_cand; ++k) {
    const std::int32_t e = cand[k];
    const Vec3 n0 = m.normals[e];
    if (!reaches_plane(m.first_vertex(e), n0, c, r)) continue;  // Sect. 4.1, before the polygon is gathered
    const Polygon poly = m.polygon(e);
    if (!fast_intersection_test(poly, n0, c, r)) continue;  // Sect. 4 (element_meets_sphere)
    ++counts.in_contact;
    contact_type_hierarchy(acc, poly, n0, e, r);  // Sect. 5.1
  }
  const int n_valid = h2_finish(acc);  // Sect. 5.2
  counts.compactions = static_cast<std::uint32_t>(acc.compactions);
  counts.valid = static_cast<std::uint32_t>(n_valid);
  const int n_new = dem_min(n_valid, kMaxMeshContacts);  // more is reported by the caller
  const BodyKinematics ka{c, p.v[i], p.w[i], 1 / r, p.inv_mass[i], p.inv_inertia[i]};
  for (int k = 0; k < n_new; ++k) {
    const EntityContact& ec = acc.c[k];
    const index_t body = m.elem_body[ec.element];
    const ContactGeometry g = entity_contact_geometry(ec, c, r, m.normals[ec.element]);
    // History: the same entity, else the closest normal on the same body (carried_mesh_history)
    ContactHistory h = carried_mesh_history(n_old, old_used, old_entity, old_normal, old_history, m.elem_body, body,
                                            g.normal, [&](int o) {
                                              return old_entity[o].element == ec.element && old_entity[o].type == ec.type &&
                                                     old_entity[o].entity == ec.entity;
                                            });
    const ContactResult res =
        evaluate_contact<kAllModels>(table(p.material[i], m.bodies[body].material), g, ka, m.kinematics(body), h, dt);
    s.entity[base + k] = ec;
    s.normal[base + k] = g.normal;
    s.history.set(base + k, h);
    s.body_force[base + k] = -res.force_on_a;
    s.body_torque[base + k] = res.torque_on_b;
    f += res.force_on_a;
    t += res.torque_on_a;
  }
  s.count[i] = static_cast<std::uint8_t>(n_new);
  return counts;
}

template <bool kAllModels = true, bool kPolyhedra = false>  // (normal_tangential_force)
DEM_HD_INLINE MeshContactCounts mesh_contacts_of_particle(index_t i, const ParticleView& p, const MeshView& m,
                                                          const ContactTable& table, const MeshSlotsView& s,
                                                          const std::int32_t* cand, std::int64_t n_cand,
                                                          H2Accumulator& acc, real tol, real dt, Vec3& f, Vec3& t) {
  if (s.count[i] == 0 && n_cand == 0) {  // most particles: no wall near, no contact to carry
    f = Vec3{0, 0, 0};
    t = Vec3{0, 0, 0};
    return MeshContactCounts{};
  }
  return mesh_contacts_near_walls<kAllModels, kPolyhedra>(i, p, m, table, s, cand, n_cand, acc, tol, dt, f, t);
}

// A particle's `used` mesh slots moved from slot index `from` to `to` (assign_mesh_blocks, both
// engines: the new blocks of a renewal).
DEM_HD inline void move_mesh_slots(int used, std::int64_t from, std::int64_t to, const EntityContact* entity0,
                                   const Vec3* normal0, const SplitHistory& history0, EntityContact* entity1,
                                   Vec3* normal1, const SplitHistory& history1) {
  for (int s = 0; s < used; ++s) {
    entity1[to + s] = entity0[from + s];
    normal1[to + s] = normal0[from + s];
    history1.set(to + s, history0.get(from + s));
  }
}

// Particle i's mesh contacts' loads on the bodies, in the body units (add_body_load): into
// per_body[its body] for every contact, or, with `only` >= 0, into per_body[0] for those on body
// `only` alone. Integers: the totals over the particles are the same bits in any order.
DEM_HD inline void add_particle_body_loads(index_t i, const MeshSlotsView& s, const index_t* elem_body, const LoadQuantum& q,
                                           index_t only, BodyLoadSum* per_body) {
  const std::int64_t base = s.base(i);
  for (int slot = 0; slot < s.count[i]; ++slot) {
    const index_t body = elem_body[s.entity[base + slot].element];
    if (only >= 0 && body != only) continue;
    add_body_load(per_body[only >= 0 ? 0 : body], s.body_force[base + slot], s.body_torque[base + slot], q);
  }
}

// ---------------------------------------------------------------------------------------------
// Per-particle sums and integration

// Stores particle i's total contact force and torque and, with and_integrate, advances it by
// central differences (santasusana2016 Eqs. 7-12).
// One particle's step from its motion s (advance_particle: the step, then back into the box on
// periodic axes). kSmallRotationOnly: see central_difference_step (false: s must be taken again
// with the general step).
template <bool kSmallRotationOnly = false>
DEM_HD_INLINE bool advance_particle(ParticleMotion& s, Vec3 f, Vec3 t, real inv_mass, real inv_inertia, bool prescribed,
                                    const PeriodicBox& periodic, Vec3 gravity, real dt) {
  const bool done =
      central_difference_step<kSmallRotationOnly>(s, f, t, inv_mass, inv_inertia, gravity, prescribed, dt);
  wrap_position(periodic, s.x);  // back into the box through the opposite face (unchanged without periodic axes)
  return done;
}

DEM_HD inline void finish_particle(const ParticleView& p, index_t i, Vec3 f, Vec3 t, Vec3 gravity, real dt,
                                   bool and_integrate) {
  p.force[i] = f;
  p.torque[i] = t;
  if (!and_integrate) return;
  if (is_polyhedron(p, i)) {
    polyhedron_step(p, i, f, t, gravity, dt);
    return;
  }
  ParticleMotion s{p.x[i], p.v[i], p.w[i], p.q[i]};
  advance_particle(s, f, t, p.inv_mass[i], p.inv_inertia[i], p.prescribed[i] != 0, p.periodic, gravity, dt);
  p.x[i] = s.x;
  p.v[i] = s.v;
  p.w[i] = s.w;
  p.q[i] = s.q;
}

// Non-finite position, velocity or spin.
DEM_HD inline bool particle_is_finite(const ParticleView& p, index_t i) {
  return is_finite(p.x[i]) && is_finite(p.v[i]) && is_finite(p.w[i]);
}

// ---------------------------------------------------------------------------------------------
// Health: what a run that has gone wrong looks like, checked every step on both engines.

struct HealthLimits {
  real max_speed;    // m/s: faster is a blow-up
  Vec3 lo, hi;       // m: the domain the particles must stay in
  real max_overlap;  // a contact's overlap over the smaller radius beyond which the state is unsound
};

enum HealthProblem : int { kHealthy = 0, kNonFinite = 1, kTooFast = 2, kEscaped = 3, kOverlap = 4 };

// Whether position x lies outside the domain (on_escape's test).
DEM_HD inline bool outside_domain(const HealthLimits& h, Vec3 x) {
  return x.x < h.lo.x || x.y < h.lo.y || x.z < h.lo.z || x.x > h.hi.x || x.y > h.hi.y || x.z > h.hi.z;
}

// Overlap of spheres i and j as a fraction of the smaller radius (<= 0: apart); of a pair with a
// polyhedron, its depth across the kept plane (`kept`: the pair's second history vector) over the
// smaller volume-equivalent radius (polyhedral_overlap_fraction). kPolyhedra = false leaves that
// measure out (a sphere scene's GPU kernel then holds no placed vertices).
template <bool kPolyhedra = true>
DEM_HD inline real pair_overlap_fraction(const ParticleView& p, index_t i, index_t j, Vec3 kept = Vec3{0, 0, 0}) {
  if (kPolyhedra && p.shapes != nullptr && (p.shape[i] >= 0 || p.shape[j] >= 0)) {
    const bool swap = p.id[i] > p.id[j];
    const index_t a = swap ? j : i, b = swap ? i : j;
    const Vec3 xb = p.periodic.any() ? image_near(p.periodic, p.x[a], p.x[b]) : p.x[b];
    return polyhedral_overlap_fraction(p, a, b, xb, kept);
  }
  return (p.radius[i] + p.radius[j] - norm(nearest_image(p.periodic, p.x[i] - p.x[j]))) / dem_min(p.radius[i], p.radius[j]);
}

// A bound on touching pairs' overlap fractions (pair_overlap_fraction) after a step, from the
// deepest one the step's pair pass met among them (`seen`, at the positions it evaluated), a
// bound on the sum of the two particles' moves since (`moves`: each moved |v| dt), the smaller
// radius (or less) and the largest coordinate of a position (`reach`): two spheres' overlap
// grows by no more than the sum of their moves (the distance of their nearest images is
// 1-Lipschitz in each position). The rounding of a position (x + v dt) and of the overlaps is a
// few units of the last place of the coordinates: 16 of them, and 16 of the fraction, are added.
// 1e300 where an input is unknown (inf or NaN). The health check's pass over the pairs is needed
// only where the bound reaches its limit: the verdict stays exact, and most steps skip the pass.
DEM_HD inline real pair_overlap_bound(real seen, real moves, real min_radius, real reach) {
  const real eps = sizeof(real) == 4 ? real(1.1920929e-7) : real(2.220446049250313e-16);  // (the unit roundoff's double)
  const real bound = seen + (moves + 16 * eps * reach) / min_radius;
  return bound == bound && bound < real(1e300) ? (bound + 16 * eps) * (1 + 16 * eps) : real(1e300);
}

// Largest overlap of particle i's mesh contacts (at their last evaluation) as a fraction of its radius.
DEM_HD inline real mesh_overlap_fraction(const ParticleView& p, const MeshSlotsView& s, index_t i) {
  real worst = 0;
  for (int k = 0; k < s.count[i]; ++k)
    worst = dem_max(worst, (p.radius[i] - s.entity[s.base(i) + k].distance) / p.radius[i]);
  return worst;
}

DEM_HD inline int particle_health(const ParticleView& p, index_t i, const HealthLimits& h) {
  if (!particle_is_finite(p, i)) return kNonFinite;
  if (norm2(p.v[i]) > h.max_speed * h.max_speed) return kTooFast;
  if (outside_domain(h, p.x[i])) return kEscaped;
  return kHealthy;
}

}  // namespace dem
