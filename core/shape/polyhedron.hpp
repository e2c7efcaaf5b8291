// A convex polyhedral shape as a fixed-size record (no allocation: the contact bodies read it on
// either engine), and the vertices of a particle of that shape placed in space.
//
// The shape's body frame has its origin at the centroid and its axes on the principal axes of
// inertia; its size is 1 in the volume-equivalent diameter d_v = (6 V / pi)^(1/3). A particle of
// size s, orientation q (body to world) and centroid x has the vertices x + s * rotate(q, v_k),
// the volume s^3 pi / 6, and the principal moments of inertia m s^2 * unit_inertia.
// host/sim/polyhedron_shape.hpp builds the record from vertices and faces (built-ins and files).
#pragma once
#include <cstdint>

#include "core/math/quat.hpp"
#include "core/math/vec3.hpp"

namespace dem {

// The largest shape: 32 vertices; a convex polyhedron of V vertices has at most 3V - 6 edges and
// 2V - 4 faces (Euler), and every edge bounds two faces.
constexpr int kMaxPolyVertices = 32;
constexpr int kMaxPolyEdges = 3 * kMaxPolyVertices - 6;
constexpr int kMaxPolyFaces = 2 * kMaxPolyVertices - 4;

struct PolyShape {
  std::int32_t num_vertices, num_edges, num_faces;
  Vec3 vertex[kMaxPolyVertices];      // body frame, d_v = 1
  Vec3 face_normal[kMaxPolyFaces];    // outward, unit
  std::uint8_t edge[kMaxPolyEdges][2];  // its two vertices
  // Faces as vertex loops (counter-clockwise seen from outside): face f is
  // face_vertex[face_start[f]] .. face_vertex[face_start[f + 1] - 1].
  std::uint8_t face_start[kMaxPolyFaces + 1];
  std::uint8_t face_vertex[2 * kMaxPolyEdges];
  // Each vertex's edges and faces: vertex k's are vertex_edge[vertex_edge_start[k]] .. and
  // vertex_face[vertex_face_start[k]] ..
  std::uint8_t vertex_edge_start[kMaxPolyVertices + 1];
  std::uint8_t vertex_edge[2 * kMaxPolyEdges];
  std::uint8_t vertex_face_start[kMaxPolyVertices + 1];
  std::uint8_t vertex_face[2 * kMaxPolyEdges];
  Vec3 unit_inertia;       // principal moments over mass, at d_v = 1 (m^2 per m^2 of size)
  real bounding_radius;    // largest |v|, at d_v = 1
};

// A particle's mass (kg) from its density and size (volume pi s^3 / 6), and its principal moments
// (kg m^2) from its shape and 1 / (m s^2) (the particle record's inv_inertia for a polyhedron).
DEM_HD inline real volume_equivalent_mass(real density, real size) {
  return density * real(3.14159265358979323846) / 6 * size * size * size;
}
DEM_HD inline Vec3 principal_moments(const PolyShape& s, real inv_m_size2) { return s.unit_inertia * (real(1) / inv_m_size2); }

// The vertices of one particle in a frame of the caller's choice (offset: the particle's centroid
// in that frame).
struct PlacedVertices {
  std::int32_t n;
  Vec3 v[kMaxPolyVertices];
};

DEM_HD inline void place_vertices(const PolyShape& s, Quat q, real size, Vec3 offset, PlacedVertices& out) {
  out.n = s.num_vertices;
  for (int k = 0; k < s.num_vertices; ++k) out.v[k] = offset + size * rotate(q, s.vertex[k]);
}

// A unit direction of edge e of a placed particle (from its first vertex to its second).
DEM_HD inline Vec3 placed_edge(const PolyShape& s, const PlacedVertices& p, int e) {
  return normalized(p.v[s.edge[e][1]] - p.v[s.edge[e][0]]);
}

}  // namespace dem
