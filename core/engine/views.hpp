// Plain views of the engine state: structs of raw pointers and counts, trivially copyable, so the
// same phase bodies (core/engine/phases.hpp) run over std::vector storage on the host engine and
// over device buffers on the device engine (cuda/device_engine.inl). A view never owns memory.
#pragma once
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/contact/contact_law.hpp"
#include "core/dhm/h2_filter.hpp"
#include "core/geometry/periodic.hpp"
#include "core/math/quat.hpp"
#include "core/shape/polyhedron.hpp"

namespace dem {

// The one list of per-particle fields (type, name, meaning). The host arrays, the device arrays,
// re-sorting, download and the view are all generated from it, so a new field is added once.
//   id          stable particle id, unique (contact roles and sum orders follow it)
//   x           m;  v, w: m/s and rad/s at t - dt/2 (central differences); q: orientation
//   radius      m;  inv_mass 1/kg; inv_inertia 1/(kg m^2); material: index into the table
//   shape       -1: a sphere; else a polyhedron, index into ParticleView::shapes (radius: its
//               bounding sphere's; inv_inertia: 1 / (m size^2); core/engine/polyhedron_phases.hpp)
//   pad         m, a polyhedron's accumulated displacement (nezami2004 §6.3's PAD): a bound on its
//               vertices' travel since its pairs' planes were last searched in full; 0 for spheres
//   tag         a small integer the user gives (scene key tag:, or retag:), for the mixing indices
//               and the per-tag fields; no physics reads it
//   born        s, when the particle entered the run (0: at the start; an inlet's batch time), for
//               the residence times at the outlets; no physics reads it
//   prescribed  1: velocity imposed, not integrated
//   force       N, total contact force of the last step (no gravity); torque: N m
#define DEM_PARTICLE_FIELDS(X) \
  X(std::int64_t, id)          \
  X(::dem::Vec3, x)            \
  X(::dem::Vec3, v)            \
  X(::dem::Vec3, w)            \
  X(::dem::Quat, q)            \
  X(::dem::real, radius)       \
  X(::dem::real, inv_mass)     \
  X(::dem::real, inv_inertia)  \
  X(std::int32_t, material)    \
  X(std::int32_t, shape)       \
  X(::dem::real, pad)          \
  X(std::int32_t, tag)         \
  X(double, born)              \
  X(std::uint8_t, prescribed)  \
  X(::dem::Vec3, force)        \
  X(::dem::Vec3, torque)

struct ParticleView {
#define DEM_VIEW_FIELD(T, name) T* name;
  DEM_PARTICLE_FIELDS(DEM_VIEW_FIELD)
#undef DEM_VIEW_FIELD
  index_t n;
  PeriodicBox periodic;  // the periodic axes (none by default): pair distances and wrapping
  const PolyShape* shapes = nullptr;  // the polyhedral shapes (d_v = 1); null: every particle is a sphere
  // §6.3's TOL as a share of a polyhedron's size: while both particles of a pair in contact have
  // moved less than half their TOL since their last complete search, the plane is approximated
  // (0: every plane searched in full, every step).
  real plane_tolerance = 0;
};
static_assert(std::is_trivially_copyable_v<ParticleView>);

// Mixed contact parameters of every material pair, row-major num_materials^2.
struct ContactTable {
  const ContactParams* params;
  std::int32_t num_materials;
  DEM_HD const ContactParams& operator()(std::int32_t a, std::int32_t b) const {
    return params[static_cast<std::int64_t>(a) * num_materials + b];
  }
};
static_assert(std::is_trivially_copyable_v<ContactTable>);

// One row of a mesh body's motion table, at law time t: the centre's velocity and the signed spin
// rate about the body's fixed spin axis; d and angle, where the law has taken the body by t
// (integrated when the table is read: velocities are linear between rows, so exactly).
struct MotionKnot {
  double t;     // s, from the start of the law
  Vec3 v;       // m/s
  real spin;    // rad/s about MeshBodyMotion::spin_axis
  Vec3 d;       // m
  real angle;   // rad
};
static_assert(std::is_trivially_copyable_v<MotionKnot>);

// Prescribed motion of one rigid mesh body, plain data (its name lives on the host side). The law:
// a constant velocity and spin about a centre that moves with the body, or a motion table
// (knot_count > 0: velocities and spins piecewise linear in time, the spin about a fixed axis),
// plus an optional sinusoidal oscillation of the centre. It runs from `start` to `stop`: before,
// the body rests in its reference pose, after, in the pose it reached. t0, displacement_t0 and
// rotation_t0 re-anchor a constant law changed during the run (Simulation::change_body_motion):
// from t0 on it starts from the pose the body had then.
struct MeshBodyMotion {
  std::int32_t material = 0;
  Vec3 velocity{0, 0, 0};          // m/s (constant law)
  Vec3 angular_velocity{0, 0, 0};  // rad/s, about `center` (constant law)
  Vec3 center0{0, 0, 0};           // m, rotation centre in the reference pose (the reference vertices', t = 0)
  index_t first_vertex = 0, vertex_count = 0;
  index_t first_element = 0, element_count = 0;
  double t0 = 0;                     // s
  Vec3 displacement_t0{0, 0, 0};     // m, of the centre at t0 from center0
  Quat rotation_t0{1, 0, 0, 0};      // orientation at t0 relative to the reference pose
  double start = 0, stop = 1e300;    // s: when the law runs
  index_t first_knot = 0, knot_count = 0;   // the motion table in MeshView::knots (0 rows: constant law)
  Vec3 spin_axis{0, 0, 0};           // unit axis of the table's spins
  real table_max_speed = 0, table_max_spin = 0;  // m/s, rad/s: the table's largest (skins)
  Vec3 osc_amplitude{0, 0, 0};       // m: the centre moves by A (sin(w tau + phase) - sin(phase)) besides
  real osc_omega = 0;                // rad/s (2 pi times the frequency; 0: no oscillation)
  real osc_phase = 0;                // rad
};
static_assert(std::is_trivially_copyable_v<MeshBodyMotion>);

// Where the law has taken a body at time t (displacement of the centre and rotation vector, from
// the anchor at t0), and its velocity and spin then (zero outside [start, stop)). For a constant
// law with t0 = 0 and no displacement or rotation at t0, the pose has the bits of center0 + v t and
// of a rotation by w t (adding zero and multiplying by the identity quaternion are exact).
struct BodyLaw {
  Vec3 d;         // m
  Vec3 rotation;  // rotation vector, rad
  Vec3 v;         // m/s
  Vec3 w;         // rad/s
};
// Host only (with body_frame below): the oscillation goes through sin and cos.
inline BodyLaw body_law(const MeshBodyMotion& b, const MotionKnot* knots, double t) {
  const double clamped = t < b.start ? b.start : (t > b.stop ? b.stop : t);
  const double tau = clamped - b.start - b.t0;
  BodyLaw s;
  if (b.knot_count == 0) {
    s.d = b.velocity * real(tau);
    s.rotation = b.angular_velocity * real(tau);
    s.v = b.velocity;
    s.w = b.angular_velocity;
  } else {
    const MotionKnot* k = knots + b.first_knot;
    const index_t n = b.knot_count;
    Vec3 v, d;
    real spin, angle;
    if (tau <= k[0].t) {  // before the first row: its values held (d and angle scale with tau)
      v = k[0].v;
      spin = k[0].spin;
      d = v * real(tau);
      angle = spin * real(tau);
    } else if (tau >= k[n - 1].t) {  // after the last row: its values held
      const real h = real(tau - k[n - 1].t);
      v = k[n - 1].v;
      spin = k[n - 1].spin;
      d = k[n - 1].d + v * h;
      angle = k[n - 1].angle + spin * h;
    } else {
      index_t lo = 0, hi = n - 1;  // k[lo].t <= tau < k[hi].t
      while (hi - lo > 1) {
        const index_t mid = (lo + hi) / 2;
        if (k[mid].t <= tau) lo = mid;
        else hi = mid;
      }
      const real h = real(tau - k[lo].t), f = h / real(k[hi].t - k[lo].t);
      v = k[lo].v + (k[hi].v - k[lo].v) * f;
      spin = k[lo].spin + (k[hi].spin - k[lo].spin) * f;
      d = k[lo].d + (k[lo].v + v) * (real(0.5) * h);  // trapezoid: exact for a linear velocity
      angle = k[lo].angle + (k[lo].spin + spin) * (real(0.5) * h);
    }
    s.d = d;
    s.rotation = b.spin_axis * angle;
    s.v = v;
    s.w = b.spin_axis * spin;
  }
  if (b.osc_omega != 0) {
    const real phase = b.osc_omega * real(tau) + b.osc_phase;
    s.d += b.osc_amplitude * (std::sin(phase) - std::sin(b.osc_phase));
    s.v += b.osc_amplitude * (b.osc_omega * std::cos(phase));
  }
  if (!(t >= b.start && t < b.stop)) s.v = s.w = Vec3{0, 0, 0};
  return s;
}

// Where a body is at one time: its rotation since t = 0, its centre, its velocity and spin. Both
// engines evaluate it on the host, once per body and step (body_frame), and hand it to every
// per-vertex, per-element and per-contact body (MeshView::frames): the rotation and the
// oscillation go through sin and cos, whose last bits differ between glibc and CUDA's math
// library, and a body's pose and speed feed back into the particles through every contact with it.
// Evaluated once, the same bits reach both engines (and one evaluation per body and step costs
// nothing beside the vertices it moves).
struct BodyFrame {
  Quat rotation;  // since the reference pose (t = 0)
  Vec3 center;    // m, rotation centre
  Vec3 v;         // m/s
  Vec3 w;         // rad/s
};
static_assert(std::is_trivially_copyable_v<BodyFrame>);
inline BodyFrame body_frame(const MeshBodyMotion& b, const MotionKnot* knots, double t) {
  const BodyLaw s = body_law(b, knots, t);
  return BodyFrame{quat_from_rotation_vector(s.rotation) * b.rotation_t0, b.center0 + b.displacement_t0 + s.d, s.v,
                   s.w};
}
// The body as a contact partner (rigid: no curvature, infinite mass and inertia).
DEM_HD inline BodyKinematics frame_kinematics(const BodyFrame& f) { return BodyKinematics{f.center, f.v, f.w, 0, 0, 0}; }
// Bounds on a body's speed and spin over the whole run, for the skins (for a constant law, its own).
DEM_HD inline real body_speed_bound(const MeshBodyMotion& b) {
  return (b.knot_count ? b.table_max_speed : norm(b.velocity)) + norm(b.osc_amplitude) * b.osc_omega;
}
DEM_HD inline Vec3 body_spin_bound(const MeshBodyMotion& b) {
  return b.knot_count ? b.spin_axis * b.table_max_spin : b.angular_velocity;
}
// Whether the body never moves over the run (both bounds zero).
DEM_HD inline bool body_still(const MeshBodyMotion& b) {
  return body_speed_bound(b) == 0 && norm2(body_spin_bound(b)) == 0;
}

// The mesh bodies: reference vertices and normals (t = 0) and the current ones, elements of all
// bodies in one index space (CSR over elem_vertices).
struct MeshView {
  const MeshBodyMotion* bodies;
  index_t num_bodies;
  const MotionKnot* knots;   // the bodies' motion tables
  const BodyFrame* frames;   // each body at `time` (body_frame, evaluated on the host)
  const Vec3* ref_vertices;  // m, at t = 0
  Vec3* vertices;            // m, at `time`
  index_t num_vertices;
  const index_t* elem_offsets;   // num_elements + 1
  const index_t* elem_vertices;  // global vertex indices
  const index_t* elem_body;      // body of each element
  const Vec3* ref_normals;       // unit winding normal at t = 0
  Vec3* normals;                 // the same at `time`
  index_t num_elements;
  double time;  // s

  DEM_HD Polygon polygon(index_t e) const {
    Polygon p;
    p.n = elem_offsets[e + 1] - elem_offsets[e];
    for (int k = 0; k < p.n; ++k) p.v[k] = vertices[elem_vertices[elem_offsets[e] + k]];
    return p;
  }
  DEM_HD Vec3 first_vertex(index_t e) const { return vertices[elem_vertices[elem_offsets[e]]]; }
  DEM_HD BodyKinematics kinematics(index_t body) const { return frame_kinematics(frames[body]); }
};
static_assert(std::is_trivially_copyable_v<MeshView>);

// Contact histories kept as two arrays: the tangential one, and the second (ContactHistory::rolling)
// only where a law of the table uses it (uses_second_history); null, it is zero for every entry,
// and half the bytes of a history are neither stored nor moved (the host engine's PairHistory
// likewise). Entry k of both.
struct SplitHistory {
  Vec3* tangential;
  Vec3* second;  // or null
  DEM_HD ContactHistory get(std::int64_t k) const {
    return ContactHistory{tangential[k], second != nullptr ? second[k] : Vec3{0, 0, 0}};
  }
  DEM_HD void set(std::int64_t k, const ContactHistory& h) const {
    tangential[k] = h.tangential;
    if (second != nullptr) second[k] = h.rolling;
  }
  DEM_HD SplitHistory from(std::int64_t k) const {  // entry k on as entry 0 (a row's)
    return SplitHistory{tangential + k, second != nullptr ? second + k : nullptr};
  }
};

// Sphere-mesh contacts: blocks of kMaxMeshContacts slots, in H2's canonical order, with the loads
// each slot puts on its body. Particle i owns block `block[i]` (slot s at block[i] *
// kMaxMeshContacts + s), or block i when `block` is null (one block per particle). The host engine
// gives blocks only to the particles near a mesh (most particles have none and count 0): the
// slots were 1.3 KB of every particle's memory.
struct MeshSlotsView {
  std::uint8_t* count;         // used slots per particle
  EntityContact* entity;       // entity of each slot
  Vec3* normal;                // contact normal of each slot (history matching)
  SplitHistory history;        // (the second only where a law uses it)
  Vec3* body_force;            // N, force of the slot on its body (valid for used slots)
  Vec3* body_torque;           // N m, torque of the slot on its body about the body's centre
  const std::int32_t* block = nullptr;  // per particle: its block (valid where the particle can touch a mesh)
  // Index of particle i's first slot.
  DEM_HD std::int64_t base(std::int64_t i) const {
    return (block ? static_cast<std::int64_t>(block[i]) : i) * kMaxMeshContacts;
  }
};
static_assert(std::is_trivially_copyable_v<MeshSlotsView>);

}  // namespace dem
