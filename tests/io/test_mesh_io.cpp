// Mesh import/export: OBJ and STL round trips, STL format detection and welding, every input error
// with its file:line prefix, transform order, and the planar-convex element check.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "host/app/io/mesh_io.hpp"

namespace dem::host {
namespace {

namespace fs = std::filesystem;
using Vec = std::array<double, 3>;
constexpr double pi = 3.14159265358979323846;

// A fresh directory under the system temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("dem_io_test_" + std::to_string(std::random_device{}()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

class MeshIo : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.file(name);
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  // Expects load_mesh to throw an InputError whose message contains each of the parts.
  void expect_error(const std::string& path, const std::vector<std::string>& parts) {
    try {
      load_mesh(path);
      ADD_FAILURE() << "no InputError for " << path;
    } catch (const InputError& e) {
      for (const std::string& p : parts) {
        EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
            << "'" << p << "' not in: " << e.what();
      }
    }
  }
  TempDir dir_;
};

PolygonMesh make_mesh(std::vector<Vec> vertices,
                      const std::vector<std::vector<std::int32_t>>& faces) {
  PolygonMesh m;
  m.vertices = std::move(vertices);
  for (const auto& f : faces) {
    m.face_vertices.insert(m.face_vertices.end(), f.begin(), f.end());
    m.face_offsets.push_back(static_cast<std::int32_t>(m.face_vertices.size()));
  }
  m.source = "<inline>";
  return m;
}

// A triangle, a unit square quad and a regular pentagon, sharing no vertices.
PolygonMesh mixed_mesh() {
  std::vector<Vec> v{{0, 0, 0},   {1, 0, 0},   {0, 1, 0},  {2, 0, 0.1},
                     {3, 0, 0.1}, {3, 1, 0.1}, {2, 1, 0.1}};
  std::vector<std::int32_t> pentagon;
  for (int i = 0; i < 5; ++i) {
    const double a = 2 * pi * i / 5;
    v.push_back({5 + std::cos(a), std::sin(a) / 3, -0.7});
    pentagon.push_back(7 + i);
  }
  return make_mesh(v, {{0, 1, 2}, {3, 4, 5, 6}, pentagon});
}

// STL bytes: the 80-byte header (starting with header_text), the count, then the triangles.
std::string binary_stl(const std::string& header_text,
                       const std::vector<std::array<Vec, 3>>& tris) {
  std::string s(84 + 50 * tris.size(), '\0');
  std::memcpy(s.data(), header_text.data(), header_text.size());
  auto put = [&](std::size_t at, std::uint32_t u) {
    for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((u >> (8 * i)) & 0xff);
  };
  put(80, static_cast<std::uint32_t>(tris.size()));
  for (std::size_t t = 0; t < tris.size(); ++t)
    for (int k = 0; k < 3; ++k)
      for (int c = 0; c < 3; ++c) {
        const auto f = static_cast<float>(tris[t][k][c]);
        std::uint32_t u = 0;
        std::memcpy(&u, &f, 4);
        put(84 + 50 * t + 12 + 12 * k + 4 * c, u);
      }
  return s;
}

const std::vector<std::array<Vec, 3>> unit_square = {{{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}}},
                                                     {{{0, 0, 0}, {1, 1, 0}, {0, 1, 0}}}};

TEST_F(MeshIo, ObjRoundTripKeepsQuadsAndPentagons) {
  const PolygonMesh m = mixed_mesh();
  const std::string path = dir_.file("mixed.obj");
  write_obj(path, m);
  const PolygonMesh r = load_mesh(path);
  EXPECT_EQ(r.vertices, m.vertices);  // exact: shortest round-trip text
  EXPECT_EQ(r.face_offsets, (std::vector<std::int32_t>{0, 3, 7, 12}));
  EXPECT_EQ(r.face_vertices, m.face_vertices);
  EXPECT_EQ(r.source, path);
}

TEST_F(MeshIo, ObjFaceFormsNegativeIndicesAndIgnoredStatements) {
  const std::string path = write("forms.obj",
                                 "# a comment\r\n"
                                 "mtllib x.mtl\n"
                                 "o thing\n"
                                 "g group\n"
                                 "\n"
                                 "v 0 0 0\n"
                                 "v 1 0 0   # trailing comment\n"
                                 "v 1 1 0\n"
                                 "v 0 1 0 1.0\n"  // optional w
                                 "vt 0 0\nvn 0 0 1\n"
                                 "s off\nusemtl steel\n"
                                 "f 1/1/1 2/1/1 3/1/1\n"
                                 "f 1//1 3//1 4//1\n"
                                 "f 1/1 2/1 3/1\n"
                                 "f -4 -3 -2 -1\n");
  const PolygonMesh m = load_mesh(path);
  ASSERT_EQ(m.vertices.size(), 4u);
  EXPECT_EQ(m.face_offsets, (std::vector<std::int32_t>{0, 3, 6, 9, 13}));
  EXPECT_EQ(m.face_vertices, (std::vector<std::int32_t>{0, 1, 2, 0, 2, 3, 0, 1, 2, 0, 1, 2, 3}));
}

TEST_F(MeshIo, BinaryStlWhoseHeaderBeginsWithSolidIsReadAsBinary) {
  const PolygonMesh m =
      load_mesh(write("solid_header.STL", binary_stl("solid square", unit_square)));
  EXPECT_EQ(m.num_faces(), 2u);
  EXPECT_EQ(m.vertices.size(), 4u);  // welded: the diagonal is shared
  EXPECT_EQ(m.face_vertices, (std::vector<std::int32_t>{0, 1, 2, 0, 2, 3}));
}

TEST_F(MeshIo, AsciiStlWeldsVerticesIncludingSignedZero) {
  const std::string path = write("square.stl",
                                 "solid square\r\n"
                                 "  facet normal 0 0 1\r\n"
                                 "    outer loop\n"
                                 "      vertex 0 0 0\n"
                                 "      vertex 1 0 0\n"
                                 "      vertex 1 1 0\n"
                                 "    endloop\n"
                                 "  endfacet\n"
                                 "  facet normal 0 0 1\n"
                                 "    outer loop\n"
                                 "      vertex -0 0 0\n"
                                 "      vertex 1.0 1e0 0\n"
                                 "      vertex 0 1 0\n"
                                 "    endloop\n"
                                 "  endfacet\n"
                                 "endsolid square\n");
  const PolygonMesh m = load_mesh(path);
  EXPECT_EQ(m.vertices.size(), 4u);
  EXPECT_EQ(m.face_vertices, (std::vector<std::int32_t>{0, 1, 2, 0, 2, 3}));
}

TEST_F(MeshIo, StlRoundTripFanTriangulatesAndWelds) {
  const std::string path = dir_.file("mixed.stl");
  write_stl_binary(path, mixed_mesh());
  std::ifstream in(path, std::ios::binary);
  char head[5] = {};
  in.read(head, 5);
  EXPECT_NE(std::string(head, 5), "solid");
  const PolygonMesh r = load_mesh(path);
  EXPECT_EQ(r.num_faces(), 1u + 2u + 3u);
  EXPECT_EQ(r.vertices.size(), 12u);
  EXPECT_EQ(r.vertices[3][0], 2.0);
  EXPECT_EQ(r.vertices[3][2], static_cast<double>(0.1f));  // STL is float32
}

TEST_F(MeshIo, LargeBinaryStlGridWeldsToGridVertices) {
  constexpr int n = 300;  // n x n quads, 2 n^2 triangles in the STL
  PolygonMesh grid;
  for (int j = 0; j <= n; ++j)
    for (int i = 0; i <= n; ++i) grid.vertices.push_back({0.01 * i, 0.01 * j, 0});
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const std::int32_t a = j * (n + 1) + i;
      grid.face_vertices.insert(grid.face_vertices.end(), {a, a + 1, a + n + 2, a + n + 1});
      grid.face_offsets.push_back(static_cast<std::int32_t>(grid.face_vertices.size()));
    }
  const std::string path = dir_.file("grid.stl");
  write_stl_binary(path, grid);
  const PolygonMesh r = load_mesh(path);
  EXPECT_EQ(r.num_faces(), 2u * n * n);
  EXPECT_EQ(r.vertices.size(), static_cast<std::size_t>((n + 1) * (n + 1)));
}

// ---- errors: each names the file and, for text formats, the line ----

TEST_F(MeshIo, MissingFile) {
  const std::string path = dir_.file("absent.obj");
  expect_error(path, {path + ": ", "no such file"});
}

TEST_F(MeshIo, UnknownExtension) {
  expect_error(write("mesh.ply", "ply\n"), {"mesh.ply: ", "unknown mesh format '.ply'"});
}

TEST_F(MeshIo, ObjFaceIndexOutOfRange) {
  std::string text;
  for (int i = 0; i < 12; ++i) text += "v " + std::to_string(i) + " 0 0\n";
  text += "f 1 2 17\n";
  expect_error(write("range.obj", text),
               {"range.obj:13: face refers to vertex 17 but only 12 vertices are defined"});
}

TEST_F(MeshIo, ObjFaceIndexZeroAndRelativeTooFarBack) {
  expect_error(write("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"),
               {"zero.obj:4: ", "vertex 0"});
  expect_error(write("neg.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n"),
               {"neg.obj:4: ", "vertex -4 but only 3 vertices are defined"});
}

TEST_F(MeshIo, FaceWithFewerThanThreeVertices) {
  expect_error(write("two.obj", "v 0 0 0\nv 1 0 0\n\nf 1 2\n"),
               {"two.obj:4: ", "face has 2 vertices"});
  expect_error(write("bad.stl",
                     "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                     "endloop\nendfacet\nendsolid\n"),
               {"bad.stl:7: ", "facet has 2 vertices"});
}

TEST_F(MeshIo, NonFiniteCoordinates) {
  expect_error(write("nan.obj", "v 0 0 0\nv nan 0 0\n"), {"nan.obj:2: ", "NaN or infinite"});
  expect_error(write("inf.stl", "solid s\nfacet normal 0 0 1\nouter loop\nvertex 0 inf 0\n"),
               {"inf.stl:4: ", "NaN or infinite"});
  auto tris = unit_square;
  tris[1][2][1] = std::numeric_limits<double>::quiet_NaN();
  expect_error(write("nan.stl", binary_stl("", tris)),
               {"nan.stl: triangle 2: ", "NaN or infinite"});
  expect_error(write("text.obj", "v 0 zero 0\n"), {"text.obj:1: ", "'zero' is not a number"});
}

TEST_F(MeshIo, MeshWithoutElements) {
  expect_error(write("points.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n"), {"points.obj: ", "no faces"});
  expect_error(write("empty.stl", binary_stl("", {})), {"empty.stl: ", "no faces"});
  expect_error(write("empty_ascii.stl", "solid s\nendsolid s\n"),
               {"empty_ascii.stl:2: ", "without any 'facet'"});
}

TEST_F(MeshIo, TruncatedBinaryStl) {
  std::string bytes = binary_stl("made by a CAD tool", unit_square);
  bytes.resize(bytes.size() - 10);
  expect_error(write("cut.stl", bytes), {"cut.stl:1: ", "184 bytes", "174 bytes", "truncated"});
  bytes = binary_stl("solid but binary", unit_square);
  bytes.resize(bytes.size() - 10);
  expect_error(write("cut_solid.stl", bytes), {"cut_solid.stl:", "truncated"});
}

TEST_F(MeshIo, AsciiStlSyntaxErrorNamesLine) {
  expect_error(write("typo.stl", "solid s\nfacet normal 0 0 1\nouter loop\nvertx 0 0 0\n"),
               {"typo.stl:4: ", "unexpected 'vertx'"});
}

// ---- placement and element checks ----

TEST(TransformMesh, ScaleThenRotateXThenYThenZThenTranslate) {
  PolygonMesh m;
  m.vertices = {{0, 1, 0}};
  // 2*(0,1,0) = (0,2,0); Rx(90): (0,0,2); Ry(90): (2,0,0); Rz(90): (0,2,0); + t.
  // Any other rotation order ends elsewhere (z, y, x gives (0,-2,0)).
  transform_mesh(m, {2.0, 2.0, 2.0}, {90, 90, 90}, {10, 20, 30});
  EXPECT_NEAR(m.vertices[0][0], 10, 1e-12);
  EXPECT_NEAR(m.vertices[0][1], 22, 1e-12);
  EXPECT_NEAR(m.vertices[0][2], 30, 1e-12);
  m.vertices = {{1, 0, 0}};
  transform_mesh(m, {1.0, 1.0, 1.0}, {0, 0, 30}, {0, 0, 0});  // right-handed, active: counter-clockwise
  EXPECT_NEAR(m.vertices[0][0], std::sqrt(3.0) / 2, 1e-15);
  EXPECT_NEAR(m.vertices[0][1], 0.5, 1e-15);
}

std::vector<Vec> regular_polygon(int k, int step = 1) {
  std::vector<Vec> v;
  for (int i = 0; i < k; ++i) {
    const double a = 2 * pi * ((i * step) % k) / k;
    v.push_back({std::cos(a), std::sin(a), 0});
  }
  return v;
}

void expect_rejected(const PolygonMesh& m, const std::string& what) {
  try {
    check_planar_convex(m, 1e-6);
    ADD_FAILURE() << "accepted a face that " << what;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("<inline>: face index 1 "), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(CheckPlanarConvex, AcceptsRegularHexagonAndMixedMesh) {
  EXPECT_NO_THROW(check_planar_convex(make_mesh(regular_polygon(6), {{0, 1, 2, 3, 4, 5}}), 1e-6));
  EXPECT_NO_THROW(check_planar_convex(mixed_mesh(), 1e-6));
}

TEST(CheckPlanarConvex, RejectsNonPlanarQuad) {
  expect_rejected(make_mesh({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0.01}, {0, 1, 0}},
                            {{0, 1, 2}, {0, 1, 3, 4}}),
                  "is not planar");
}

TEST(CheckPlanarConvex, RejectsConcavePentagonStraightCornerAndPentagram) {
  auto v = regular_polygon(5);
  v[2] = {0, 0.1, 0};  // pulled inside: a reflex corner
  v.push_back({0, 0, 0});
  expect_rejected(make_mesh(v, {{0, 1, 5}, {0, 1, 2, 3, 4}}), "reflex corner");
  expect_rejected(make_mesh({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {2, 1, 0}, {0, 1, 0}},
                            {{0, 1, 3}, {0, 1, 2, 3, 4}}),
                  "straight corner");
  auto star = regular_polygon(5, 2);  // a pentagram turns left at every corner but winds twice
  star.push_back({0, 0, 1});
  expect_rejected(make_mesh(star, {{0, 1, 5}, {0, 1, 2, 3, 4}}), "winds around more than once");
}

TEST(CheckPlanarConvex, RejectsDegenerateFaces) {
  expect_rejected(make_mesh({{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}}, {{0, 1, 3}, {0, 1, 2}}),
                  "zero area");
  expect_rejected(
      make_mesh({{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}, {{0, 1, 2}, {0, 1, 1, 2, 3}}),
      "zero-length edge");
}

}  // namespace
}  // namespace dem::host
