// A surface mesh as read from a file: shared vertices and polygonal faces of any size.
// Quads and N-gons are kept as they are (they are first-class elements for the Double Hierarchy
// Method); nothing here triangulates.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dem::host {

struct PolygonMesh {
  std::vector<std::array<double, 3>> vertices;  // m
  // Face f has the vertices face_vertices[face_offsets[f] .. face_offsets[f+1]), counter-clockwise
  // seen from the side its normal points to. face_offsets.size() == faces + 1, face_offsets[0] == 0.
  std::vector<std::int32_t> face_offsets{0};
  std::vector<std::int32_t> face_vertices;
  std::string source;  // file the mesh came from (for messages), or "<inline>"

  std::size_t num_faces() const { return face_offsets.size() - 1; }
  std::size_t face_size(std::size_t f) const {
    return static_cast<std::size_t>(face_offsets[f + 1] - face_offsets[f]);
  }
};

}  // namespace dem::host
