#include "host/sim/engine_types.hpp"

#include <cstring>

namespace dem::host {

void ParticleArrays::resize(std::size_t n) {
  const std::size_t old = size();
#define DEM_RESIZE_FIELD(T, name) name.resize(n);
  DEM_PARTICLE_FIELDS(DEM_RESIZE_FIELD)
#undef DEM_RESIZE_FIELD
  for (std::size_t i = old; i < n; ++i) {
    q[i] = quat_identity();
    shape[i] = -1;  // a sphere
  }
}

ParticleView ParticleArrays::view() {
  ParticleView out;
#define DEM_VIEW_OF(T, name) out.name = name.data();
  DEM_PARTICLE_FIELDS(DEM_VIEW_OF)
#undef DEM_VIEW_OF
  out.n = static_cast<index_t>(size());
  return out;
}

void ParticleArrays::push_back(std::int64_t pid, Vec3 pos, Vec3 vel, Vec3 ang, real r, real density,
                               std::int32_t mat, bool fixed_velocity) {
  const real m = sphere_mass(density, r);
  id.push_back(pid);
  x.push_back(pos);
  v.push_back(vel);
  w.push_back(ang);
  q.push_back(quat_identity());
  radius.push_back(r);
  inv_mass.push_back(1 / m);
  inv_inertia.push_back(1 / sphere_inertia(m, r));
  material.push_back(mat);
  shape.push_back(-1);
  pad.push_back(0);
  tag.push_back(0);
  born.push_back(0);
  prescribed.push_back(fixed_velocity ? 1 : 0);
  force.push_back(Vec3{0, 0, 0});
  torque.push_back(Vec3{0, 0, 0});
}

void ParticleArrays::push_polyhedron(std::int64_t pid, Vec3 pos, Quat orientation, Vec3 vel, Vec3 ang, real size,
                                     std::int32_t shape_index, const PolyShape& s, real density, std::int32_t mat,
                                     bool fixed_velocity) {
  const real m = volume_equivalent_mass(density, size);
  id.push_back(pid);
  x.push_back(pos);
  v.push_back(vel);
  w.push_back(ang);
  q.push_back(normalized(orientation));
  radius.push_back(size * s.bounding_radius);
  inv_mass.push_back(1 / m);
  inv_inertia.push_back(1 / (m * size * size));
  material.push_back(mat);
  shape.push_back(shape_index);
  pad.push_back(0);
  tag.push_back(0);
  born.push_back(0);
  prescribed.push_back(fixed_velocity ? 1 : 0);
  force.push_back(Vec3{0, 0, 0});
  torque.push_back(Vec3{0, 0, 0});
}

// Mesh items (vertices plus elements) above which the per-step pose update runs on the threads
// (the ribbon mixer's 4,900 measured no faster on 2 threads in parallel: the pass is short there).
constexpr index_t kParallelMeshItems = 8192;

void MeshSet::update(double t) {
  time = t;
  if (ref_normals.size() != num_elements()) {  // first call: Newell normals of the reference pose
    vertices = ref_vertices;
    ref_normals.resize(num_elements());
    for (std::size_t e = 0; e < num_elements(); ++e) ref_normals[e] = polygon_normal(polygon(static_cast<index_t>(e)));
    normals = ref_normals;
  }
  update_frames(t);
  const std::vector<MeshBodyMotion> m = motions();
  const MeshView view = this->view(m);
  // Every step, so on the threads for large meshes (a serial pass over a fine mesh would leave
  // the other threads waiting).
  const bool par = view.num_vertices + view.num_elements > kParallelMeshItems;
#pragma omp parallel if (par)
  {
#pragma omp for schedule(static) nowait
    for (index_t k = 0; k < view.num_vertices; ++k) move_mesh_vertex(view, k);
#pragma omp for schedule(static)
    for (index_t e = 0; e < view.num_elements; ++e) move_mesh_normal(view, e);
  }
}

bool MeshSet::update_frames(double t) {
  bool changed = frames.size() != bodies.size();
  frames.resize(bodies.size());
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const BodyFrame f = body_frame(bodies[b], knots.data(), t);
    if (std::memcmp(&f, &frames[b], sizeof f) != 0) {
      frames[b] = f;
      changed = true;
    }
  }
  return changed;
}

std::vector<MeshBodyMotion> MeshSet::motions() const { return std::vector<MeshBodyMotion>(bodies.begin(), bodies.end()); }

MeshView MeshSet::view(const std::vector<MeshBodyMotion>& m) {
  return MeshView{m.data(),          static_cast<index_t>(m.size()),
                  knots.data(),      frames.data(),
                  ref_vertices.data(), vertices.data(),
                  static_cast<index_t>(vertices.size()), elem_offsets.data(),
                  elem_vertices.data(), elem_body.data(),
                  ref_normals.data(), normals.data(),
                  static_cast<index_t>(num_elements()), time};
}

Polygon MeshSet::polygon(index_t e) const {
  Polygon p;
  p.n = elem_offsets[e + 1] - elem_offsets[e];
  for (int k = 0; k < p.n; ++k) p.v[k] = vertices[elem_vertices[elem_offsets[e] + k]];
  return p;
}

Vec3 MeshSet::center(index_t body) const { return frames.at(static_cast<std::size_t>(body)).center; }

BodyKinematics MeshSet::kinematics(index_t body) const { return frame_kinematics(frames.at(static_cast<std::size_t>(body))); }

}  // namespace dem::host
