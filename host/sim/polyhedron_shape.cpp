#include "host/sim/polyhedron_shape.hpp"

// Eigen's vector paths call fused multiply-add intrinsics on CPUs that have them, whatever the
// compiler's contraction setting: the shape records (and so every trajectory of a polyhedron)
// would then differ between machines. Its scalar paths keep each product rounded (DEM_STRICT_FP).
#define EIGEN_DONT_VECTORIZE
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <utility>

#include "host/sim/errors.hpp"

namespace dem::host {
namespace {

constexpr double kPi = 3.14159265358979323846;

[[noreturn]] void fail(const std::string& where, const std::string& what) { throw InputError(where + ": " + what); }

// Newell's normal of a face loop (its length: twice the face's area); robust for any planar polygon.
Vec3 newell(const std::vector<Vec3>& v, const std::vector<int>& face) {
  Vec3 n{0, 0, 0};
  for (std::size_t k = 0; k < face.size(); ++k) {
    const Vec3 a = v[face[k]], b = v[face[(k + 1) % face.size()]];
    n.x += (a.y - b.y) * (a.z + b.z);
    n.y += (a.z - b.z) * (a.x + b.x);
    n.z += (a.x - b.x) * (a.y + b.y);
  }
  return n;
}

// Built-ins are listed with faces in any sense: each is turned to face away from the centre.
PolyhedronMesh oriented(PolyhedronMesh m) {
  Vec3 centre{0, 0, 0};
  for (const Vec3& v : m.vertices) centre += v;
  centre = centre / real(m.vertices.size());
  for (std::vector<int>& f : m.faces) {
    Vec3 mid{0, 0, 0};
    for (int k : f) mid += m.vertices[k];
    mid = mid / real(f.size());
    if (dot(newell(m.vertices, f), mid - centre) < 0) std::reverse(f.begin(), f.end());
  }
  return m;
}

PolyhedronMesh box_mesh(double a, double b, double c) {
  PolyhedronMesh m;
  for (int k = 0; k < 8; ++k)
    m.vertices.push_back(Vec3{(k & 1 ? 0.5 : -0.5) * a, (k & 2 ? 0.5 : -0.5) * b, (k & 4 ? 0.5 : -0.5) * c});
  m.faces = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  return oriented(m);
}

std::string sides_text(const std::vector<double>& sides) {
  std::ostringstream s;
  s << "[";
  for (std::size_t k = 0; k < sides.size(); ++k) s << (k ? ", " : "") << sides[k];
  s << "]";
  return s.str();
}

}  // namespace

const std::vector<std::string>& builtin_polyhedron_names() {
  static const std::vector<std::string> names{"tetrahedron", "square_pyramid", "cube", "octahedron",
                                              "rhombic_dodecahedron", "box", "prism"};
  return names;
}

PolyhedronMesh builtin_polyhedron(const std::string& name, const std::vector<double>& sides, const std::string& where) {
  const bool takes_sides = name == "box" || name == "prism";
  if (!takes_sides && !sides.empty()) fail(where, "the " + name + " takes no sides (got " + sides_text(sides) + ")");
  for (double s : sides)
    if (!(s > 0) || !std::isfinite(s)) fail(where, "the sides of a " + name + " must be finite and > 0 (got " + sides_text(sides) + ")");
  PolyhedronMesh m;
  if (name == "tetrahedron") {
    m.vertices = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
    m.faces = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  } else if (name == "square_pyramid") {
    m.vertices = {{-0.5, -0.5, 0}, {0.5, -0.5, 0}, {0.5, 0.5, 0}, {-0.5, 0.5, 0}, {0, 0, 1}};
    m.faces = {{0, 1, 2, 3}, {0, 1, 4}, {1, 2, 4}, {2, 3, 4}, {3, 0, 4}};
  } else if (name == "cube") {
    return box_mesh(1, 1, 1);
  } else if (name == "octahedron") {
    m.vertices = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
    for (int x : {0, 1})
      for (int y : {2, 3})
        for (int z : {4, 5}) m.faces.push_back({x, y, z});
  } else if (name == "rhombic_dodecahedron") {
    // The cube's corners (+-1, +-1, +-1), indices 0-7 by their signs' bits, and the octahedron's
    // (+-2 on an axis), 8 + 2 axis + (negative); a face per pair of octahedron corners on two axes.
    for (int k = 0; k < 8; ++k) m.vertices.push_back(Vec3{k & 1 ? 1.0 : -1.0, k & 2 ? 1.0 : -1.0, k & 4 ? 1.0 : -1.0});
    for (int axis = 0; axis < 3; ++axis)
      for (int sign : {1, -1}) {
        Vec3 v{0, 0, 0};
        (axis == 0 ? v.x : axis == 1 ? v.y : v.z) = 2.0 * sign;
        m.vertices.push_back(v);
      }
    for (int i = 0; i < 3; ++i)
      for (int j = i + 1; j < 3; ++j)
        for (int si : {0, 1})
          for (int sj : {0, 1}) {
            const int k = 3 - i - j;  // the third axis
            auto corner = [&](int sk) { return (si ? 0 : 1) << i | (sj ? 0 : 1) << j | sk << k; };
            m.faces.push_back({8 + 2 * i + si, corner(1), 8 + 2 * j + sj, corner(0)});
          }
  } else if (name == "box") {
    if (sides.size() != 3) fail(where, "a box takes its three sides [a, b, c] (got " + sides_text(sides) + ")");
    return box_mesh(sides[0], sides[1], sides[2]);
  } else if (name == "prism") {
    if (sides.size() != 4)
      fail(where, "a prism takes its triangle's sides and its length [a, b, c, length] (got " + sides_text(sides) + ")");
    const double a = sides[0], b = sides[1], c = sides[2], len = sides[3];
    if (!(a < b + c && b < a + c && c < a + b)) fail(where, "the prism's triangle sides " + sides_text(sides) + " make no triangle");
    // |P0 P1| = c, |P0 P2| = b, |P1 P2| = a
    const double x = (b * b + c * c - a * a) / (2 * c), y = std::sqrt(std::max(0.0, b * b - x * x));
    const Vec3 tri[3] = {{0, 0, 0}, {c, 0, 0}, {x, y, 0}};
    for (double z : {-0.5 * len, 0.5 * len})
      for (const Vec3& p : tri) m.vertices.push_back(Vec3{p.x, p.y, z});
    m.faces = {{0, 1, 2}, {3, 4, 5}, {0, 1, 4, 3}, {1, 2, 5, 4}, {2, 0, 3, 5}};
  } else {
    std::string known;
    for (const std::string& n : builtin_polyhedron_names()) known += (known.empty() ? "" : ", ") + n;
    fail(where, "unknown polyhedron '" + name + "' (built-ins: " + known + ", or a convex OBJ or STL file)");
  }
  return oriented(m);
}

PolyhedronMass polyhedron_mass(const PolyhedronMesh& mesh) {
  // Per tetrahedron (0, a, b, c): volume det / 6 and second moment det A C0 A^T, C0 the canonical
  // tetrahedron's (1/120 [[2,1,1],[1,2,1],[1,1,2]]); summed, then moved to the centroid.
  Eigen::Matrix3d c0;
  c0 << 2, 1, 1, 1, 2, 1, 1, 1, 2;
  c0 /= 120.0;
  Eigen::Matrix3d cov = Eigen::Matrix3d::Zero();
  Eigen::Vector3d first = Eigen::Vector3d::Zero();
  double volume = 0;
  for (const std::vector<int>& f : mesh.faces)
    for (std::size_t k = 1; k + 1 < f.size(); ++k) {
      const Vec3 p = mesh.vertices[f[0]], q = mesh.vertices[f[k]], r = mesh.vertices[f[k + 1]];
      Eigen::Matrix3d a;
      a << p.x, q.x, r.x, p.y, q.y, r.y, p.z, q.z, r.z;
      const double det = a.determinant();
      volume += det / 6;
      first += det / 24 * (a.col(0) + a.col(1) + a.col(2));
      cov += det * a * c0 * a.transpose();
    }
  PolyhedronMass out;
  out.volume = volume;
  if (volume == 0) return out;
  const Eigen::Vector3d c = first / volume;
  out.centroid = Vec3{c.x(), c.y(), c.z()};
  const Eigen::Matrix3d cc = cov - volume * c * c.transpose();
  const Eigen::Matrix3d inertia = cc.trace() * Eigen::Matrix3d::Identity() - cc;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out.inertia[i][j] = inertia(i, j);
  return out;
}

double volume_equivalent_diameter(const PolyhedronMesh& mesh) {
  return std::cbrt(6 * std::abs(polyhedron_mass(mesh).volume) / kPi);
}

PolyShape make_poly_shape(const PolyhedronMesh& given, const std::string& where) {
  PolyhedronMesh m = given;
  const int nv = static_cast<int>(m.vertices.size());
  if (nv < 4) fail(where, "a polyhedron needs at least 4 vertices (got " + std::to_string(nv) + ")");
  double size = 0;
  for (int k = 0; k < nv; ++k) {
    if (!is_finite(m.vertices[k])) fail(where, "vertex " + std::to_string(k) + " is not finite");
    for (int l = 0; l < k; ++l) size = std::max(size, double(norm(m.vertices[k] - m.vertices[l])));
  }
  if (!(size > 0)) fail(where, "the vertices all coincide");
  // Faces: valid loops; closed, each directed edge once and its reverse once.
  std::map<std::pair<int, int>, int> edge_face;  // directed edge -> its face
  for (std::size_t f = 0; f < m.faces.size(); ++f) {
    const std::vector<int>& loop = m.faces[f];
    const std::string face = "face " + std::to_string(f);
    if (loop.size() < 3) fail(where, face + " has fewer than 3 vertices");
    for (std::size_t k = 0; k < loop.size(); ++k) {
      const int a = loop[k], b = loop[(k + 1) % loop.size()];
      if (a < 0 || a >= nv) fail(where, face + " names vertex " + std::to_string(a) + " of " + std::to_string(nv));
      if (a == b) fail(where, face + " repeats vertex " + std::to_string(a));
      if (!edge_face.emplace(std::make_pair(a, b), static_cast<int>(f)).second)
        fail(where, face + ": the edge " + std::to_string(a) + "-" + std::to_string(b) +
                        " is shared by faces that run it in the same sense (faces turned inconsistently, or more than two faces on it)");
    }
  }
  for (const auto& [e, f] : edge_face)
    if (!edge_face.count({e.second, e.first}))
      fail(where, "face " + std::to_string(f) + ": the edge " + std::to_string(e.first) + "-" + std::to_string(e.second) +
                      " borders no other face (the polyhedron is not closed)");
  // Outward: a positive volume (a file's faces may all run inward).
  if (polyhedron_mass(m).volume < 0) {
    for (std::vector<int>& loop : m.faces) std::reverse(loop.begin(), loop.end());
    std::map<std::pair<int, int>, int> reversed;
    for (const auto& [e, f] : edge_face) reversed[{e.second, e.first}] = f;
    edge_face.swap(reversed);
  }
  // Coplanar neighbours merge into one face: groups by union over shared edges.
  const int nf = static_cast<int>(m.faces.size());
  std::vector<Vec3> normal(nf);
  for (int f = 0; f < nf; ++f) {
    const Vec3 n = newell(m.vertices, m.faces[f]);
    if (!(norm(n) > 1e-12 * size * size)) fail(where, "face " + std::to_string(f) + " has no area");
    normal[f] = normalized(n);
  }
  std::vector<int> group(nf);
  std::iota(group.begin(), group.end(), 0);
  const auto root = [&](int f) {
    while (group[f] != f) f = group[f] = group[group[f]];
    return f;
  };
  for (const auto& [e, f] : edge_face) {
    const int g = edge_face.at({e.second, e.first});
    if (dot(normal[f], normal[g]) > 1 - 1e-10) group[root(f)] = root(g);
  }
  // Each group's boundary (its directed edges whose reverse lies in another group) as one loop.
  std::map<int, std::map<int, int>> next;  // group -> (vertex -> next vertex)
  for (const auto& [e, f] : edge_face)
    if (root(edge_face.at({e.second, e.first})) != root(f)) {
      if (!next[root(f)].emplace(e.first, e.second).second)
        fail(where, "face " + std::to_string(f) + " and its coplanar neighbours do not make one convex face");
    }
  std::vector<std::vector<int>> faces;
  std::vector<Vec3> face_normal;
  for (const auto& [g, links] : next) {
    std::vector<int> loop{links.begin()->first};
    while (loop.size() <= links.size()) {
      const auto it = links.find(loop.back());
      if (it == links.end()) break;
      if (it->second == loop.front()) break;
      loop.push_back(it->second);
    }
    if (loop.size() != links.size())
      fail(where, "face " + std::to_string(g) + " and its coplanar neighbours do not make one convex face");
    faces.push_back(loop);
    face_normal.push_back(normal[g]);
  }
  // Corners only: a vertex on a straight edge between two faces leaves the loops; one inside a
  // face (in no loop now) goes.
  std::vector<int> face_count(nv, 0);
  for (const std::vector<int>& loop : faces)
    for (int k : loop) ++face_count[k];
  for (std::vector<int>& loop : faces)
    loop.erase(std::remove_if(loop.begin(), loop.end(), [&](int k) { return face_count[k] < 3; }), loop.end());
  std::vector<int> index(nv, -1);
  std::vector<Vec3> vertices;
  for (int k = 0; k < nv; ++k)
    if (face_count[k] >= 3) {
      index[k] = static_cast<int>(vertices.size());
      vertices.push_back(m.vertices[k]);
    }
  for (std::vector<int>& loop : faces)
    for (int& k : loop) k = index[k];
  if (static_cast<int>(vertices.size()) > kMaxPolyVertices)
    fail(where, "the polyhedron has " + std::to_string(vertices.size()) + " corners; at most " +
                    std::to_string(kMaxPolyVertices) + " are supported");
  // Convex: every corner behind every face's plane (and every face flat).
  const double tol = 1e-9 * size;
  for (std::size_t f = 0; f < faces.size(); ++f) {
    const Vec3 p = vertices[faces[f][0]];
    for (std::size_t k = 0; k < vertices.size(); ++k) {
      const double d = dot(face_normal[f], vertices[k] - p);
      const bool on_face = std::find(faces[f].begin(), faces[f].end(), static_cast<int>(k)) != faces[f].end();
      if (on_face ? std::abs(d) > tol : d > tol)
        fail(where, on_face ? "face " + std::to_string(f) + " is not flat (a corner lies " + std::to_string(d) + " off its plane)"
                            : "the polyhedron is not convex: a corner lies " + std::to_string(d) + " in front of face " +
                                  std::to_string(f));
    }
  }
  // Mass properties; the principal frame at the centroid, scaled to d_v = 1.
  PolyhedronMesh merged{vertices, faces};
  const PolyhedronMass mass = polyhedron_mass(merged);
  Eigen::Matrix3d inertia;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) inertia(i, j) = mass.inertia[i][j];
  // The principal axes, moments increasing. Where the given axes are principal already (the
  // products of inertia vanish to rounding) they are kept, only ordered: a cube or a box given
  // along the axes stays so, where an eigensolver would turn the equal moments' axes at will.
  Eigen::Matrix3d axes;
  Eigen::Vector3d moments3;
  const double diag_max = inertia.diagonal().cwiseAbs().maxCoeff();
  if (std::max({std::abs(inertia(0, 1)), std::abs(inertia(0, 2)), std::abs(inertia(1, 2))}) <= 1e-12 * diag_max) {
    int order[3] = {0, 1, 2};
    std::stable_sort(order, order + 3, [&](int i, int j) { return inertia(i, i) < inertia(j, j); });
    axes.setZero();
    for (int k = 0; k < 3; ++k) {
      axes(order[k], k) = 1;
      moments3(k) = inertia(order[k], order[k]);
    }
  } else {
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(inertia);
    axes = eig.eigenvectors();
    moments3 = eig.eigenvalues();
  }
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  const double dv = std::cbrt(6 * mass.volume / kPi);
  const auto body = [&](Vec3 v, bool point) {
    Eigen::Vector3d x(v.x, v.y, v.z);
    if (point) {
      x -= Eigen::Vector3d(mass.centroid.x, mass.centroid.y, mass.centroid.z);
      x /= dv;
    }
    const Eigen::Vector3d b = axes.transpose() * x;
    return Vec3{b.x(), b.y(), b.z()};
  };
  PolyShape s{};
  s.num_vertices = static_cast<std::int32_t>(vertices.size());
  s.num_faces = static_cast<std::int32_t>(faces.size());
  s.bounding_radius = 0;
  for (int k = 0; k < s.num_vertices; ++k) {
    s.vertex[k] = body(vertices[k], true);
    s.bounding_radius = std::max(s.bounding_radius, norm(s.vertex[k]));
  }
  const Eigen::Vector3d moments = moments3 / (mass.volume * dv * dv);
  s.unit_inertia = Vec3{moments.x(), moments.y(), moments.z()};
  // Faces, edges (each once, in the order first met) and each corner's edges and faces.
  std::map<std::pair<int, int>, int> edge_index;
  std::vector<std::vector<int>> corner_edges(s.num_vertices), corner_faces(s.num_vertices);
  int incidences = 0;
  for (int f = 0; f < s.num_faces; ++f) {
    s.face_normal[f] = normalized(body(face_normal[f], false));
    s.face_start[f] = static_cast<std::uint8_t>(incidences);
    for (std::size_t k = 0; k < faces[f].size(); ++k) {
      const int a = faces[f][k], b = faces[f][(k + 1) % faces[f].size()];
      s.face_vertex[incidences++] = static_cast<std::uint8_t>(a);
      corner_faces[a].push_back(f);
      const std::pair<int, int> key{std::min(a, b), std::max(a, b)};
      if (!edge_index.count(key)) {
        const int e = static_cast<int>(edge_index.size());
        edge_index[key] = e;
        s.edge[e][0] = static_cast<std::uint8_t>(key.first);
        s.edge[e][1] = static_cast<std::uint8_t>(key.second);
        corner_edges[key.first].push_back(e);
        corner_edges[key.second].push_back(e);
      }
    }
  }
  s.face_start[s.num_faces] = static_cast<std::uint8_t>(incidences);
  s.num_edges = static_cast<std::int32_t>(edge_index.size());
  int ke = 0, kf = 0;
  for (int k = 0; k < s.num_vertices; ++k) {
    s.vertex_edge_start[k] = static_cast<std::uint8_t>(ke);
    for (int e : corner_edges[k]) s.vertex_edge[ke++] = static_cast<std::uint8_t>(e);
    s.vertex_face_start[k] = static_cast<std::uint8_t>(kf);
    for (int f : corner_faces[k]) s.vertex_face[kf++] = static_cast<std::uint8_t>(f);
  }
  s.vertex_edge_start[s.num_vertices] = static_cast<std::uint8_t>(ke);
  s.vertex_face_start[s.num_vertices] = static_cast<std::uint8_t>(kf);
  return s;
}

}  // namespace dem::host
