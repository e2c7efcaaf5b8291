#include "host/app/io/polyhedron_io.hpp"

#include "host/app/io/mesh_io.hpp"

namespace dem::host {

PolyhedronMesh load_polyhedron_mesh(const std::string& path) {
  const PolygonMesh m = load_mesh(path);
  PolyhedronMesh out;
  out.vertices.reserve(m.vertices.size());
  for (const auto& v : m.vertices) out.vertices.push_back(Vec3{v[0], v[1], v[2]});
  for (std::size_t f = 0; f < m.num_faces(); ++f)
    out.faces.emplace_back(m.face_vertices.begin() + m.face_offsets[f], m.face_vertices.begin() + m.face_offsets[f + 1]);
  return out;
}

PolyShape load_polyhedron(const std::string& path) { return make_poly_shape(load_polyhedron_mesh(path), path); }

}  // namespace dem::host
