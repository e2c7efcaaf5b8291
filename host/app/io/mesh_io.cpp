// OBJ/STL import and export. Both readers share the same machinery: the whole file is read into
// memory, text is walked line by line with a whitespace tokenizer, numbers go through
// std::from_chars (locale independent), and a MeshBuilder validates vertices and faces.
#include "host/app/io/mesh_io.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace dem::host {
namespace {

using Vec = std::array<double, 3>;
constexpr double pi = 3.14159265358979323846;

// ---- messages -------------------------------------------------------------------------------

// Where in a file a problem is: a line (text formats, 1-based), a triangle (binary STL, 1-based),
// or neither (0).
struct Place {
  Place(std::size_t line_number = 0) : line(line_number) {}  // implicit: a line number is a Place
  static Place triangle(std::size_t t) {
    Place p;
    p.triangle_number = t;
    return p;
  }
  std::size_t line = 0, triangle_number = 0;
};

// Throws InputError "path:line: what", "path: triangle t: what" or "path: what".
[[noreturn]] void fail(const std::string& path, Place at, const std::string& what) {
  std::string where = ": ";
  if (at.line) {
    where = ":" + std::to_string(at.line) + ": ";
  } else if (at.triangle_number) {
    where = ": triangle " + std::to_string(at.triangle_number) + ": ";
  }
  throw InputError(path + where + what);
}

// A token for a message: quoted if it is short printable text (a corrupt binary file would
// otherwise print raw bytes).
std::string describe(std::string_view tok) {
  const bool text = tok.size() <= 40 && std::all_of(tok.begin(), tok.end(), [](char c) {
                      return std::isprint(static_cast<unsigned char>(c)) != 0;
                    });
  return text ? "'" + std::string(tok) + "'" : std::string("non-text data");
}

std::string short_text(double x) {  // 4 significant digits, for messages
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

// ---- reading --------------------------------------------------------------------------------

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    fail(path, 0,
         std::filesystem::exists(path, ec) ? "cannot read mesh file: not a regular file"
                                           : "cannot read mesh file: no such file");
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(std::filesystem::file_size(path, ec)), '\0');
  if (ec || !in || !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    fail(path, 0, "cannot read mesh file: " + (ec ? ec.message() : std::strerror(errno)));
  }
  return bytes;
}

// Calls f(line_number, line) for each line of text (1-based; "\r\n" and "\n" both end a line).
template <class F>
void for_each_line(std::string_view text, F&& f) {
  std::size_t line = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    std::string_view s = text.substr(0, end);
    if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
    f(++line, s);
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

// Splits a line into whitespace-separated tokens; next() returns "" at the end.
class Tokens {
 public:
  explicit Tokens(std::string_view s) : rest_(s) {}
  std::string_view next() {
    auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; };
    while (!rest_.empty() && is_space(rest_.front())) rest_.remove_prefix(1);
    std::size_t n = 0;
    while (n < rest_.size() && !is_space(rest_[n])) ++n;
    const std::string_view tok = rest_.substr(0, n);
    rest_.remove_prefix(n);
    return tok;
  }

 private:
  std::string_view rest_;
};

// Parses a whole token as a number (a leading '+' is allowed); false if it is not one.
template <class T>
bool parse_number(std::string_view tok, T& value) {
  if (!tok.empty() && tok.front() == '+') tok.remove_prefix(1);
  const auto [end, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), value);
  return ec == std::errc() && end == tok.data() + tok.size() && !tok.empty();
}

// Reads the three coordinates that follow a "v" (OBJ) or "vertex" (STL) keyword.
Vec parse_point(Tokens& t, const std::string& path, Place line) {
  Vec p{};
  for (double& c : p) {
    const std::string_view tok = t.next();
    if (!parse_number(tok, c)) {
      fail(path, line,
           tok.empty() ? "vertex needs 3 coordinates"
                       : "vertex coordinate " + describe(tok) + " is not a number");
    }
  }
  return p;
}

// ---- building -------------------------------------------------------------------------------

// Collects vertices and faces with the checks every format needs.
class MeshBuilder {
 public:
  explicit MeshBuilder(const std::string& path) { mesh_.source = path; }
  const std::string& path() const { return mesh_.source; }
  std::size_t num_vertices() const { return mesh_.vertices.size(); }
  std::size_t num_faces() const { return mesh_.num_faces(); }

  std::int32_t add_vertex(const Vec& p, Place at) {
    if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) {
      fail(path(), at, "vertex has a NaN or infinite coordinate");
    }
    if (mesh_.vertices.size() >= static_cast<std::size_t>(INT32_MAX)) {
      fail(path(), at, "too many vertices (more than 2^31 - 1)");
    }
    mesh_.vertices.push_back(p);
    return static_cast<std::int32_t>(mesh_.vertices.size() - 1);
  }
  // Vertex indices are 0-based and already checked by the caller.
  void add_face(const std::vector<std::int32_t>& face, Place at) {
    if (face.size() < 3) {
      fail(path(), at,
           "face has " + std::to_string(face.size()) + " vertices; a face needs at least 3");
    }
    mesh_.face_vertices.insert(mesh_.face_vertices.end(), face.begin(), face.end());
    mesh_.face_offsets.push_back(static_cast<std::int32_t>(mesh_.face_vertices.size()));
  }
  PolygonMesh finish(const char* hint) {
    if (mesh_.num_faces() == 0) fail(path(), 0, std::string("mesh has no faces (") + hint + ")");
    return std::move(mesh_);
  }

 private:
  PolygonMesh mesh_;
};

// Merges corners with equal coordinates into one vertex (STL stores each triangle's corners
// separately). Equality is exact: the key is the bit pattern of the coordinates, with -0 mapped
// to +0. Binary STL float32 values convert to double exactly, so this is float equality there.
class Welder {
 public:
  Welder(MeshBuilder& b, std::size_t expected_corners) : b_(b) {
    map_.reserve(expected_corners / 4);
  }
  std::int32_t vertex(const Vec& p, Place at) {
    Key k{};
    for (int i = 0; i < 3; ++i) {
      const double c = p[i] == 0.0 ? 0.0 : p[i];
      std::memcpy(&k[i], &c, sizeof c);
    }
    const auto [it, inserted] = map_.try_emplace(k, 0);
    if (inserted) it->second = b_.add_vertex(p, at);
    return it->second;
  }

 private:
  using Key = std::array<std::uint64_t, 3>;
  struct Hash {
    std::size_t operator()(const Key& k) const {
      std::uint64_t h = 0x9e3779b97f4a7c15ull;
      for (std::uint64_t v : k) {  // splitmix64-style mixing of each coordinate
        h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
        h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
        h ^= h >> 31;
      }
      return static_cast<std::size_t>(h);
    }
  };
  MeshBuilder& b_;
  std::unordered_map<Key, std::int32_t, Hash> map_;
};

// ---- OBJ ------------------------------------------------------------------------------------

PolygonMesh parse_obj(const std::string& path, std::string_view text) {
  MeshBuilder b(path);
  std::vector<std::int32_t> face;
  for_each_line(text, [&](std::size_t line, std::string_view s) {
    Tokens t(s.substr(0, s.find('#')));
    const std::string_view key = t.next();
    if (key == "v") {
      b.add_vertex(parse_point(t, path, line), line);
    } else if (key == "f") {
      face.clear();
      const auto n = static_cast<long long>(b.num_vertices());
      for (std::string_view tok = t.next(); !tok.empty(); tok = t.next()) {
        long long i = 0;  // "i", "i/t", "i//n", "i/t/n": the vertex index is before the first '/'
        if (!parse_number(tok.substr(0, tok.find('/')), i)) {
          fail(path, line, "face vertex " + describe(tok) + " is not an index");
        }
        if (i == 0) fail(path, line, "face refers to vertex 0, but OBJ indices start at 1");
        const long long index = i > 0 ? i - 1 : n + i;  // negative: counted back from the last
        if (index < 0 || index >= n) {
          fail(path, line,
               "face refers to vertex " + std::to_string(i) + " but only " + std::to_string(n) +
                   " vertices are defined");
        }
        face.push_back(static_cast<std::int32_t>(index));
      }
      b.add_face(face, line);
    }  // everything else (vt, vn, o, g, s, usemtl, mtllib, ...) carries nothing we need
  });
  return b.finish("an OBJ face is an 'f' line");
}

// ---- STL ------------------------------------------------------------------------------------

float f32_le(const char* p) {
  std::uint32_t u = 0;
  for (int i = 3; i >= 0; --i) u = (u << 8) | static_cast<unsigned char>(p[i]);
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Layout: 80-byte header, uint32 triangle count, then per triangle 12 float32 (normal, 3
// corners) and a uint16 attribute, 50 bytes in all. The stored normal is ignored: the corner
// order defines the orientation.
PolygonMesh parse_stl_binary(const std::string& path, std::string_view bytes, std::size_t n) {
  MeshBuilder b(path);
  Welder w(b, 3 * n);
  std::vector<std::int32_t> face(3);
  for (std::size_t t = 0; t < n; ++t) {
    const char* corner = bytes.data() + 84 + 50 * t + 12;
    for (int k = 0; k < 3; ++k, corner += 12) {
      face[k] = w.vertex({f32_le(corner), f32_le(corner + 4), f32_le(corner + 8)},
                         Place::triangle(t + 1));
    }
    b.add_face(face, Place::triangle(t + 1));
  }
  return b.finish("binary STL with 0 triangles");
}

// solid name / facet normal nx ny nz / outer loop / vertex x y z (x3) / endloop / endfacet /
// endsolid name; several solids may follow each other. not_binary is appended to syntax errors,
// because a damaged binary file also ends up here.
PolygonMesh parse_stl_ascii(const std::string& path, std::string_view text,
                            const std::string& not_binary) {
  MeshBuilder b(path);
  Welder w(b, text.size() / 64);  // a corner takes about 40-60 characters
  std::vector<std::int32_t> face;
  bool in_facet = false, seen_solid = false;
  std::size_t facet_line = 0;
  auto syntax = [&](std::size_t line, const std::string& what) {
    fail(path, line, "ASCII STL: " + what + " (" + not_binary + ")");
  };
  std::size_t last_line = 1;
  for_each_line(text, [&](std::size_t line, std::string_view s) {
    last_line = line;
    Tokens t(s);
    const std::string_view key = t.next();
    if (key.empty()) return;
    if (!seen_solid && key != "solid") syntax(line, "expected 'solid', found " + describe(key));
    if (key == "outer" || key == "endloop" || key == "endsolid") return;
    if (key == "solid") {
      seen_solid = true;
    } else if (key == "facet") {
      if (in_facet)
        syntax(line, "'facet' inside the facet that starts on line " + std::to_string(facet_line));
      in_facet = true;
      facet_line = line;
      face.clear();
    } else if (key == "vertex") {
      if (!in_facet || face.size() == 3) syntax(line, "'vertex' outside a facet or a 4th vertex");
      face.push_back(w.vertex(parse_point(t, path, line), line));
    } else if (key == "endfacet") {
      if (!in_facet || face.size() != 3) {
        syntax(line, "facet has " + std::to_string(face.size()) + " vertices; STL needs 3");
      }
      b.add_face(face, line);
      in_facet = false;
    } else {
      syntax(line, "unexpected " + describe(key));
    }
  });
  if (in_facet) syntax(facet_line, "the file ends inside the facet that starts here");
  if (b.num_faces() == 0) syntax(last_line, "the file ends without any 'facet'");
  return b.finish("ASCII STL without facets");
}

PolygonMesh parse_stl(const std::string& path, std::string_view bytes) {
  std::string not_binary = "not binary STL either: the file has only " +
                           std::to_string(bytes.size()) + " bytes, less than the 84-byte header";
  if (bytes.size() >= 84) {
    std::uint32_t n = 0;
    for (int i = 83; i >= 80; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
    const std::uint64_t binary_size = 84 + 50 * std::uint64_t{n};
    if (bytes.size() == binary_size) return parse_stl_binary(path, bytes, n);
    not_binary = "not binary STL either: its header announces " + std::to_string(n) +
                 " triangles, 84 + 50 * " + std::to_string(n) + " = " +
                 std::to_string(binary_size) + " bytes, but the file has " +
                 std::to_string(bytes.size()) + " bytes; truncated binary STL?";
  }
  return parse_stl_ascii(path, bytes, not_binary);
}

// ---- geometry -------------------------------------------------------------------------------

Vec sub(const Vec& a, const Vec& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
double dot(const Vec& a, const Vec& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec cross(const Vec& a, const Vec& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double norm(const Vec& a) { return std::sqrt(dot(a, a)); }

// Newell's area vector: its direction is the best plane normal of a (near-)planar polygon for
// counter-clockwise vertices, its length the area.
Vec area_vector(const PolygonMesh& m, std::size_t f) {
  Vec s{0, 0, 0};
  const std::int32_t b = m.face_offsets[f], e = m.face_offsets[f + 1];
  for (std::int32_t i = b; i < e; ++i) {
    const Vec& p = m.vertices[m.face_vertices[i]];
    const Vec& q = m.vertices[m.face_vertices[i + 1 < e ? i + 1 : b]];
    const Vec c = cross(p, q);
    for (int k = 0; k < 3; ++k) s[k] += 0.5 * c[k];
  }
  return s;
}

// ---- writing --------------------------------------------------------------------------------

[[noreturn]] void write_failed(const std::string& path) {
  throw std::runtime_error(path + ": cannot write file: " + std::strerror(errno));
}

void put_u32_le(char* p, std::uint32_t u) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((u >> (8 * i)) & 0xffu);
}
void put_f32_le(char* p, double x) {
  const auto f = static_cast<float>(x);
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  put_u32_le(p, u);
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    write_failed(path);
  }
  out.close();
  if (!out) write_failed(path);
}

}  // namespace

PolygonMesh load_mesh(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".obj" && ext != ".stl") {
    fail(path, 0,
         (ext.empty() ? std::string("no file extension") : "unknown mesh format '" + ext + "'") +
             " (expected .obj or .stl)");
  }
  const std::string bytes = read_file(path);
  return ext == ".obj" ? parse_obj(path, bytes) : parse_stl(path, bytes);
}

void transform_mesh(PolygonMesh& m, const std::array<double, 3>& scale, const std::array<double, 3>& rotation_deg,
                    const std::array<double, 3>& translation) {
  using Mat = std::array<Vec, 3>;  // rows
  auto mul = [](const Mat& a, const Mat& b) {
    Mat c{};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        c[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
    return c;
  };
  Mat r{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  for (int axis = 0; axis < 3; ++axis) {  // x first: r = Rz * Ry * Rx
    const double a = rotation_deg[axis] * pi / 180.0, c = std::cos(a), s = std::sin(a);
    const int i = (axis + 1) % 3, j = (axis + 2) % 3;  // the rotation acts in the (i, j) plane
    Mat rot{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
    rot[axis][axis] = 1;
    rot[i][i] = c;
    rot[i][j] = -s;
    rot[j][i] = s;
    rot[j][j] = c;
    r = mul(rot, r);
  }
  for (Vec& p : m.vertices) {
    const Vec q{scale[0] * p[0], scale[1] * p[1], scale[2] * p[2]};
    for (int k = 0; k < 3; ++k) p[k] = dot(r[k], q) + translation[k];
  }
}

void check_planar_convex(const PolygonMesh& m, double rel_tol) {
  const std::size_t nv = m.vertices.size();
  std::vector<Vec> p;  // the current face's vertices
  for (std::size_t f = 0; f < m.num_faces(); ++f) {
    auto bad = [&](const std::string& what) {
      fail(m.source, 0,
           "face index " + std::to_string(f) + " (" + std::to_string(m.face_size(f)) +
               " vertices) " + what);
    };
    p.clear();
    for (std::int32_t i = m.face_offsets[f]; i < m.face_offsets[f + 1]; ++i) {
      const std::int32_t v = m.face_vertices[i];
      if (v < 0 || static_cast<std::size_t>(v) >= nv) {
        bad("refers to vertex " + std::to_string(v) + " of " + std::to_string(nv));
      }
      p.push_back(m.vertices[v]);
    }
    const std::size_t k = p.size();
    if (k < 3) bad("has fewer than 3 vertices");
    double diameter = 0;  // m
    for (std::size_t i = 0; i < k; ++i)
      for (std::size_t j = i + 1; j < k; ++j) diameter = std::max(diameter, norm(sub(p[i], p[j])));
    const Vec a = area_vector(m, f);
    const double area = norm(a);  // m^2
    // Zero up to round-off: the area of a face of this size computed in double precision.
    if (!(area > 1e-12 * diameter * diameter)) bad("is degenerate: zero area");
    if (k == 3) continue;  // a non-degenerate triangle is planar and convex
    const Vec n{a[0] / area, a[1] / area, a[2] / area};
    Vec centroid{0, 0, 0};
    for (const Vec& q : p)
      for (int c = 0; c < 3; ++c) centroid[c] += q[c] / static_cast<double>(k);
    double max_distance = 0;  // m
    for (const Vec& q : p)
      max_distance = std::max(max_distance, std::abs(dot(sub(q, centroid), n)));
    if (max_distance > rel_tol * diameter) {
      bad("is not planar: a vertex lies " + short_text(max_distance) +
          " from the face's best plane, more than rel_tol * diameter = " +
          short_text(rel_tol * diameter));
    }
    double turning = 0;  // rad; 2 pi for a simple convex polygon
    for (std::size_t i = 0; i < k; ++i) {
      const Vec e0 = sub(p[i], p[(i + k - 1) % k]), e1 = sub(p[(i + 1) % k], p[i]);
      const double l0 = norm(e0), l1 = norm(e1);
      if (l0 == 0 || l1 == 0) bad("is degenerate: it has a zero-length edge");
      const double sin_turn = dot(cross(e0, e1), n) / (l0 * l1);
      if (sin_turn <= rel_tol) {
        bad("is not strictly convex at its vertex " + std::to_string(i) +
            (sin_turn < 0 ? " (a reflex corner)" : " (a straight corner)"));
      }
      turning += std::atan2(sin_turn, dot(e0, e1) / (l0 * l1));
    }
    if (turning > 3 * pi) bad("is not convex: its boundary winds around more than once");
  }
}

void write_obj(const std::string& path, const PolygonMesh& m) {
  std::string s = "# written by dem: " + std::to_string(m.vertices.size()) + " vertices, " +
                  std::to_string(m.num_faces()) + " faces\n";
  char buf[32];
  for (const Vec& v : m.vertices) {
    s += 'v';
    for (double c : v) {  // shortest representation that reads back to the same double
      s += ' ';
      s.append(buf, std::to_chars(buf, buf + sizeof buf, c).ptr);
    }
    s += '\n';
  }
  for (std::size_t f = 0; f < m.num_faces(); ++f) {
    s += 'f';
    for (std::int32_t i = m.face_offsets[f]; i < m.face_offsets[f + 1]; ++i) {
      s += ' ' + std::to_string(m.face_vertices[i] + 1);
    }
    s += '\n';
  }
  write_bytes(path, s);
}

void write_stl_binary(const std::string& path, const PolygonMesh& m) {
  // STL has only triangles: a face (v0, ..., v_{k-1}) becomes the fan (v0, v_i, v_{i+1}).
  std::size_t triangles = 0;
  for (std::size_t f = 0; f < m.num_faces(); ++f) triangles += m.face_size(f) - 2;
  std::string bytes(84 + 50 * triangles, '\0');
  const char header[] = "binary STL written by dem";  // must not start with "solid"
  std::memcpy(bytes.data(), header, sizeof header - 1);
  put_u32_le(&bytes[80], static_cast<std::uint32_t>(triangles));
  char* out = &bytes[84];
  for (std::size_t f = 0; f < m.num_faces(); ++f) {
    const std::int32_t b = m.face_offsets[f];
    for (std::int32_t i = b + 1; i + 1 < m.face_offsets[f + 1]; ++i, out += 50) {
      const Vec* v[3] = {&m.vertices[m.face_vertices[b]], &m.vertices[m.face_vertices[i]],
                         &m.vertices[m.face_vertices[i + 1]]};
      Vec n = cross(sub(*v[1], *v[0]), sub(*v[2], *v[0]));
      const double len = norm(n);
      for (double& c : n) c = len > 0 ? c / len : 0.0;
      for (int c = 0; c < 3; ++c) put_f32_le(out + 4 * c, n[c]);
      for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c) put_f32_le(out + 12 + 12 * k + 4 * c, (*v[k])[c]);
    }
  }
  write_bytes(path, bytes);
}

}  // namespace dem::host
