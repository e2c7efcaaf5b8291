// Plain views of the engine state: structs of raw pointers and counts, trivially copyable, so the
// same phase bodies (core/engine/phases.hpp) run over std::vector storage on the host engine and
// over device buffers on the device engine (cuda/device_engine.inl). A view never owns memory.
#pragma once
#include <cstdint>
#include <type_traits>

#include "core/contact/contact_law.hpp"
#include "core/dhm/h2_filter.hpp"
#include "core/math/quat.hpp"

namespace dem {

// The one list of per-particle fields (type, name, meaning). The host arrays, the device arrays,
// re-sorting, download and the view are all generated from it, so a new field is added once.
//   id          stable particle id, unique (contact roles and sum orders follow it)
//   x           m;  v, w: m/s and rad/s at t - dt/2 (central differences); q: orientation
//   radius      m;  inv_mass 1/kg; inv_inertia 1/(kg m^2); material: index into the table
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
  X(std::uint8_t, prescribed)  \
  X(::dem::Vec3, force)        \
  X(::dem::Vec3, torque)

struct ParticleView {
#define DEM_VIEW_FIELD(T, name) T* name;
  DEM_PARTICLE_FIELDS(DEM_VIEW_FIELD)
#undef DEM_VIEW_FIELD
  index_t n;
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

// Prescribed motion of one rigid mesh body, plain data (its name lives on the host side): a
// constant velocity and a constant spin about a centre that moves with the body, from the time t0
// at which this motion began (0 unless it was changed during the run, Simulation::change_body_motion),
// when the body's pose was its reference pose displaced by displacement_t0 and turned by rotation_t0.
struct MeshBodyMotion {
  std::int32_t material = 0;
  Vec3 velocity{0, 0, 0};          // m/s
  Vec3 angular_velocity{0, 0, 0};  // rad/s, about `center`
  Vec3 center0{0, 0, 0};           // m, rotation centre in the reference pose (the reference vertices', t = 0)
  index_t first_vertex = 0, vertex_count = 0;
  index_t first_element = 0, element_count = 0;
  double t0 = 0;                     // s
  Vec3 displacement_t0{0, 0, 0};     // m, of the centre at t0 from center0
  Quat rotation_t0{1, 0, 0, 0};      // orientation at t0 relative to the reference pose
};
static_assert(std::is_trivially_copyable_v<MeshBodyMotion>);

// With t0 = 0 and no displacement or rotation at t0 these are the bits of center0 + v t and of a
// rotation by w t (adding zero and multiplying by the identity quaternion are exact).
DEM_HD inline Vec3 body_center(const MeshBodyMotion& b, double t) {
  return b.center0 + b.displacement_t0 + b.velocity * real(t - b.t0);
}
DEM_HD inline BodyKinematics body_kinematics(const MeshBodyMotion& b, double t) {
  return BodyKinematics{body_center(b, t), b.velocity, b.angular_velocity, 0, 0, 0};
}

// The mesh bodies: reference vertices and normals (t = 0) and the current ones, elements of all
// bodies in one index space (CSR over elem_vertices).
struct MeshView {
  const MeshBodyMotion* bodies;
  index_t num_bodies;
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
  DEM_HD BodyKinematics kinematics(index_t body) const { return body_kinematics(bodies[body], time); }
};
static_assert(std::is_trivially_copyable_v<MeshView>);

// Sphere-mesh contacts: kMaxMeshContacts slots per particle (slot s of particle i at
// i * kMaxMeshContacts + s), in H2's canonical order, with the loads each slot puts on its body.
struct MeshSlotsView {
  std::uint8_t* count;         // used slots per particle
  EntityContact* entity;       // entity of each slot
  Vec3* normal;                // contact normal of each slot (history matching)
  ContactHistory* history;
  Vec3* body_force;            // N, force of the slot on its body (valid for used slots)
  Vec3* body_torque;           // N m, torque of the slot on its body about the body's centre
};
static_assert(std::is_trivially_copyable_v<MeshSlotsView>);

}  // namespace dem
