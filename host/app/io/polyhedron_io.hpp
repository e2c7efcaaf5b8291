// Convex polyhedral particle shapes from files: an OBJ or STL surface (mesh_io's reader: OBJ faces
// kept as they are, STL triangles welded) made into a shape record (host/sim/polyhedron_shape.hpp:
// checked closed and convex, at most kMaxPolyVertices corners, coplanar faces merged, in the
// principal frame, volume-equivalent diameter 1). An error names the file, and the face or vertex
// at fault ("rock.stl: the polyhedron is not convex: a corner lies 0.02 in front of face 3").
#pragma once
#include <string>

#include "host/sim/polyhedron_shape.hpp"

namespace dem::host {

PolyhedronMesh load_polyhedron_mesh(const std::string& path);
PolyShape load_polyhedron(const std::string& path);

}  // namespace dem::host
