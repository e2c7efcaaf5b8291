// Convex polyhedral shapes: the built-in ones, and the shape record (core/shape/polyhedron.hpp)
// built from any closed convex polyhedron given by vertices and faces, with its exact mass
// properties. Both engines and the application use the records; files are read by the
// application (host/app/io/) and handed here as a PolyhedronMesh.
#pragma once
#include <string>
#include <vector>

#include "core/shape/polyhedron.hpp"

namespace dem::host {

// Vertices and faces (each a loop of vertex indices; either orientation, the same for all faces).
struct PolyhedronMesh {
  std::vector<Vec3> vertices;
  std::vector<std::vector<int>> faces;
};

// The built-in shapes, by name: tetrahedron, square_pyramid (height = base side), cube,
// octahedron, rhombic_dodecahedron (14 vertices), and the two given by their sides: box (sides
// [a, b, c]) and prism (a triangular prism: the triangle's sides [a, b, c] and its length L).
// Throws InputError naming `where` for an unknown name or bad sides.
PolyhedronMesh builtin_polyhedron(const std::string& name, const std::vector<double>& sides, const std::string& where);
const std::vector<std::string>& builtin_polyhedron_names();

// Volume, centroid and inertia tensor (about the centroid, for density 1) of a closed polyhedron
// with outward faces: exact sums over the tetrahedra from the origin to each face's fan triangles.
struct PolyhedronMass {
  double volume = 0;
  Vec3 centroid{0, 0, 0};
  double inertia[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
};
PolyhedronMass polyhedron_mass(const PolyhedronMesh& mesh);

// The shape record: checked closed (every edge shared by two faces, in opposite senses), convex
// (every vertex behind every face's plane, within 1e-9 of the size) and within the caps of
// core/shape/polyhedron.hpp (kMaxPolyVertices); coplanar neighbouring faces merged into one; in
// the principal frame at the centroid, scaled to a volume-equivalent diameter of 1. Throws
// InputError naming `where` and the face or vertex at fault.
PolyShape make_poly_shape(const PolyhedronMesh& mesh, const std::string& where);

// The volume-equivalent diameter of a mesh as given (before make_poly_shape's scaling).
double volume_equivalent_diameter(const PolyhedronMesh& mesh);

}  // namespace dem::host
