// Polyhedral shapes from OBJ and STL files (host/app/io/polyhedron_io.hpp): a cube as quads and as
// welded STL triangles gives one shape; a file that is not a closed convex polyhedron of at most
// kMaxPolyVertices corners is refused naming the file and the fault.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "host/app/io/mesh_io.hpp"
#include "host/app/io/polyhedron_io.hpp"

namespace dem::host {
namespace {

namespace fs = std::filesystem;

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "dem_polyhedron_io";
  fs::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kCubeObj = R"(# a 2 cm cube
v 0 0 0
v 0.02 0 0
v 0.02 0.02 0
v 0 0.02 0
v 0 0 0.02
v 0.02 0 0.02
v 0.02 0.02 0.02
v 0 0.02 0.02
f 1 4 3 2
f 5 6 7 8
f 1 2 6 5
f 2 3 7 6
f 3 4 8 7
f 4 1 5 8
)";

std::string expect_refused(const std::string& path) {
  try {
    load_polyhedron(path);
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
    return e.what();
  }
  ADD_FAILURE() << path << " was accepted";
  return "";
}

TEST(PolyhedronFiles, ACubeAsQuadsOrAsSTLTrianglesIsOneShape) {
  const std::string obj = write_file("cube.obj", kCubeObj);
  const PolyShape from_obj = load_polyhedron(obj);
  EXPECT_EQ(from_obj.num_vertices, 8);
  EXPECT_EQ(from_obj.num_faces, 6);
  EXPECT_EQ(from_obj.num_edges, 12);
  const double side = std::cbrt(3.14159265358979323846 / 6);  // at d_v = 1
  EXPECT_NEAR(from_obj.unit_inertia.x, side * side / 6, 1e-13);
  // The same cube through binary STL (12 triangles, welded back to 8 corners, merged to 6 faces).
  const std::string stl = (fs::temp_directory_path() / "dem_polyhedron_io" / "cube.stl").string();
  write_stl_binary(stl, load_mesh(obj));
  const PolyShape from_stl = load_polyhedron(stl);
  ASSERT_EQ(from_stl.num_faces, 6);
  ASSERT_EQ(from_stl.num_vertices, 8);
  for (int k = 0; k < 8; ++k) {
    // corners in the same body frame (float32 coordinates in the STL: 1e-7 of the size)
    double nearest = 1;
    for (int l = 0; l < 8; ++l) nearest = std::min(nearest, double(norm(from_obj.vertex[k] - from_stl.vertex[l])));
    EXPECT_LT(nearest, 1e-6);
  }
}

TEST(PolyhedronFiles, FilesThatAreNoClosedConvexPolyhedronAreRefusedByName) {
  std::string open(kCubeObj);
  open.erase(open.rfind("f 4 1 5 8"));
  EXPECT_NE(expect_refused(write_file("open.obj", open)).find("the polyhedron is not closed"), std::string::npos);
  std::string dented(kCubeObj);
  dented.replace(dented.find("v 0.02 0.02 0.02"), 16, "v 0.01 0.01 0.01");
  // (the dented corner's three quads are no longer flat)
  EXPECT_NE(expect_refused(write_file("dented.obj", dented)).find("is not flat"), std::string::npos);
  // 40 corners: a prism on a 20-gon
  std::string many;
  for (int z = 0; z < 2; ++z)
    for (int k = 0; k < 20; ++k)
      many += "v " + std::to_string(std::cos(k * 0.1 * 3.14159265358979)) + " " + std::to_string(std::sin(k * 0.1 * 3.14159265358979)) +
              " " + std::to_string(z) + "\n";
  for (int k = 0; k < 20; ++k)
    many += "f " + std::to_string(k + 1) + " " + std::to_string((k + 1) % 20 + 1) + " " + std::to_string((k + 1) % 20 + 21) + " " +
            std::to_string(k + 21) + "\n";
  std::string bottom = "f", top = "f";
  for (int k = 0; k < 20; ++k) {
    bottom += " " + std::to_string(20 - k);
    top += " " + std::to_string(21 + k);
  }
  many += bottom + "\n" + top + "\n";
  EXPECT_NE(expect_refused(write_file("many.obj", many)).find("40 corners; at most 32"), std::string::npos);
  // a missing file: mesh_io's message
  EXPECT_THROW(load_polyhedron("/nonexistent/rock.obj"), InputError);
}

}  // namespace
}  // namespace dem::host
