// Surface mesh import and export: Wavefront OBJ and STL (ASCII and binary) into a PolygonMesh,
// rigid placement of a mesh in the scene, and the geometric checks the contact algorithm needs.
//
// Every problem in an input file is reported as an InputError whose message starts with the place,
//   "walls/hopper.obj:17: face refers to vertex 19 but only 12 vertices are defined",
// or "path: ..." where no line applies (binary STL, a missing file).
#pragma once
#include <array>
#include <string>

#include "host/sim/errors.hpp"
#include "host/app/io/polygon_mesh.hpp"

namespace dem::host {

// Reads a mesh, choosing the format by the file extension (case-insensitive): ".obj" or ".stl".
// STL: binary iff the file size equals 84 + 50 * (uint32 triangle count at byte 80), otherwise
// ASCII. The "solid" keyword is no evidence of ASCII: many binary files start their 80-byte header
// with it. STL triangles are welded: corners with bitwise equal float coordinates (+0 and -0
// counting as equal) become one vertex, so neighbouring triangles share edges.
// OBJ: "v x y z" and "f" with 3 or more vertices ("i", "i/t", "i/t/n", "i//n", negative indices
// counting back from the last vertex defined); quads and N-gons are kept, never triangulated; all
// other statements (vt, vn, o, g, s, usemtl, mtllib, ...) and comments are ignored.
// The result has source == path. Throws InputError (see above).
PolygonMesh load_mesh(const std::string& path);

// Places a mesh in the scene, in this order: x <- scale * x (per axis); then active right-handed rotations
// by rotation_deg[0] about the x axis, then rotation_deg[1] about y, then rotation_deg[2] about z
// (degrees); then x <- x + translation (m). That is, x' = Rz * Ry * Rx * (scale * x) + t.
void transform_mesh(PolygonMesh& m, const std::array<double, 3>& scale, const std::array<double, 3>& rotation_deg,
                    const std::array<double, 3>& translation);

// Checks that every element can be used by the Double Hierarchy Method (santasusana2016). DHM
// classifies a sphere-element contact as facet, edge or vertex by projecting the sphere centre onto
// the element's plane and testing it against the element's edges, and then discards edge/vertex
// contacts that are shadowed by a facet contact of a neighbour. Both steps assume each element is
// a planar convex polygon: on a warped face there is no single plane to project on, and on a
// concave face the projection can lie "inside" every edge half-plane test yet outside the face
// (or the reverse), so the contact type, normal and overlap would be wrong.
// Throws InputError "<source>: face <f> ..." for the first face that
//   - is degenerate: zero area (e.g. repeated or collinear vertices) or a zero-length edge;
//   - has >= 4 vertices and is not planar: a vertex lies farther than rel_tol * diameter from the
//     face's best-fit plane (the plane through the vertex centroid normal to the Newell normal);
//   - has >= 4 vertices and is not strictly convex: some corner turns the wrong way or is straight
//     (sin of its turning angle <= rel_tol), or the boundary winds around more than once.
// rel_tol is dimensionless, e.g. 1e-6.
void check_planar_convex(const PolygonMesh& m, double rel_tol);

// Writes the mesh as Wavefront OBJ with every coordinate in full (round-trip) precision and faces
// as they are (N-gons stay N-gons). Throws std::runtime_error naming path on I/O failure.
void write_obj(const std::string& path, const PolygonMesh& m);

// Writes binary STL (float32, little endian). STL only knows triangles, so every face of N vertices
// is fan-triangulated into N-2 triangles (v0, v_i, v_i+1); this is exact for the planar convex
// faces check_planar_convex accepts. Throws std::runtime_error naming path on I/O failure.
void write_stl_binary(const std::string& path, const PolygonMesh& m);

}  // namespace dem::host
