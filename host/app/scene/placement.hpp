// Placing spheres at random without overlaps: shared by the scene's fills (scene_builder.cpp) and
// the inlets that add particles during a run (flow.cpp).
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/dhm/fast_intersection.hpp"
#include "core/integrate/central_difference.hpp"
#include "host/sim/engine_types.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

inline Vec3 to_vec(const Vec3d& a) { return Vec3{real(a[0]), real(a[1]), real(a[2])}; }

// Portable uniform [0, 1) from a 64-bit engine (std::uniform_real_distribution differs between
// standard libraries; scenes must fill the same way everywhere).
inline double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0); }

// A uniformly random orientation (Shoemake's: three uniform numbers give a uniform unit quaternion).
inline Quat random_orientation(std::mt19937_64& rng) {
  const double u1 = uniform01(rng), u2 = 2 * M_PI * uniform01(rng), u3 = 2 * M_PI * uniform01(rng);
  const double a = std::sqrt(1 - u1), b = std::sqrt(u1);
  return Quat{real(a * std::sin(u2)), real(a * std::cos(u2)), real(b * std::sin(u3)), real(b * std::cos(u3))};
}

inline double sample_radius(const RadiusDistribution& d, std::mt19937_64& rng) {
  switch (d.kind) {
    case RadiusDistribution::Kind::Constant: return d.radius;
    case RadiusDistribution::Kind::Uniform: return d.min + (d.max - d.min) * uniform01(rng);
    case RadiusDistribution::Kind::Discrete: {
      double total = 0;
      for (double w : d.weights) total += w;
      double u = uniform01(rng) * total;
      for (std::size_t k = 0; k < d.values.size(); ++k) {
        if (u < d.weights[k]) return d.values[k];
        u -= d.weights[k];
      }
      return d.values.back();
    }
  }
  return d.radius;
}

inline double min_radius(const RadiusDistribution& d) {
  switch (d.kind) {
    case RadiusDistribution::Kind::Constant: return d.radius;
    case RadiusDistribution::Kind::Uniform: return d.min;
    case RadiusDistribution::Kind::Discrete: return *std::min_element(d.values.begin(), d.values.end());
  }
  return d.radius;
}

inline double max_radius(const RadiusDistribution& d) {
  switch (d.kind) {
    case RadiusDistribution::Kind::Constant: return d.radius;
    case RadiusDistribution::Kind::Uniform: return d.max;
    case RadiusDistribution::Kind::Discrete: return *std::max_element(d.values.begin(), d.values.end());
  }
  return d.radius;
}

// Accepted spheres in a hash grid, for overlap rejection while filling.
class PlacementGrid {
 public:
  explicit PlacementGrid(double cell, const PeriodicBox& periodic = PeriodicBox{}) : cell_(cell), periodic_(periodic) {}
  // Whether a sphere at x would overlap one already placed (on periodic axes, through the faces too).
  bool overlaps(Vec3 x, double r) const {
    if (!periodic_.any()) return overlaps_here(x, r);
    Vec3 at[8];
    const int images = near_face_images(periodic_, wrap_far(periodic_, x), real(r + r_max_), at);
    for (int k = 0; k < images; ++k)
      if (overlaps_here(at[k], r)) return true;
    return false;
  }
  const PeriodicBox& periodic() const { return periodic_; }
  void add(Vec3 x, double r) {
    if (periodic_.any()) x = wrap_far(periodic_, x);
    r_max_ = std::max(r_max_, r);
    const auto c = coords(x);
    cells_[key(c[0], c[1], c[2])].push_back({x, r});
  }

 private:
  bool overlaps_here(Vec3 x, double r) const {
    const auto c = coords(x);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          auto it = cells_.find(key(c[0] + dx, c[1] + dy, c[2] + dz));
          if (it == cells_.end()) continue;
          for (const auto& [p, pr] : it->second)
            if (norm2(p - x) < (r + pr) * (r + pr)) return true;
        }
    return false;
  }
  std::array<std::int64_t, 3> coords(Vec3 x) const {
    return {static_cast<std::int64_t>(std::floor(x.x / cell_)), static_cast<std::int64_t>(std::floor(x.y / cell_)),
            static_cast<std::int64_t>(std::floor(x.z / cell_))};
  }
  static std::uint64_t key(std::int64_t x, std::int64_t y, std::int64_t z) {
    return (static_cast<std::uint64_t>(x) * 73856093u) ^ (static_cast<std::uint64_t>(y) * 19349663u) ^
           (static_cast<std::uint64_t>(z) * 83492791u);
  }
  double cell_;
  PeriodicBox periodic_;
  double r_max_ = 0;  // m, the largest sphere placed
  std::unordered_map<std::uint64_t, std::vector<std::pair<Vec3, double>>> cells_;
};

// The scene's periodic box (the domain, on the axes it names as periodic; none without).
inline PeriodicBox periodic_box(const SceneConfig& scene) {
  const DomainSpec& d = scene.domain;
  return make_periodic_box(to_vec(d.min), to_vec(d.max), d.periodic[0], d.periodic[1], d.periodic[2]);
}

// Whether a sphere would start inside a wall: fills reject such positions.
inline bool touches_mesh(const MeshSet& m, Vec3 x, double r) {
  for (std::size_t e = 0; e < m.num_elements(); ++e)
    if (fast_intersection_test(m.polygon(static_cast<index_t>(e)), x, real(r))) return true;
  return false;
}

struct FillFrame {  // local frame of a cylinder fill
  Vec3 axis, u, v;
};
inline FillFrame cylinder_frame(Vec3 axis) {
  const Vec3 a = normalized(axis);
  const Vec3 helper = std::abs(a.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
  const Vec3 u = normalized(cross(a, helper));
  return FillFrame{a, u, cross(a, u)};
}

// The box around a fill's or an inlet's region (m).
inline void region_bounds(const FillSpec& f, Vec3& lo, Vec3& hi) {
  if (f.shape == FillSpec::Shape::Box) {
    lo = to_vec(f.box_min);
    hi = to_vec(f.box_max);
    return;
  }
  const Vec3 base = to_vec(f.cylinder_base);
  const Vec3 top = base + real(f.cylinder_length) * cylinder_frame(to_vec(f.cylinder_axis)).axis;
  const double e = f.cylinder_radius;
  lo = Vec3{real(std::min(base.x, top.x) - e), real(std::min(base.y, top.y) - e), real(std::min(base.z, top.z) - e)};
  hi = Vec3{real(std::max(base.x, top.x) + e), real(std::max(base.y, top.y) + e), real(std::max(base.z, top.z) + e)};
}

// Whether point x lies in a fill's, an inlet's or a retag's region (its boundary included).
inline bool region_contains(const FillSpec& f, Vec3 x) {
  if (f.shape == FillSpec::Shape::Box)
    return x.x >= f.box_min[0] && x.x <= f.box_max[0] && x.y >= f.box_min[1] && x.y <= f.box_max[1] &&
           x.z >= f.box_min[2] && x.z <= f.box_max[2];
  const double d[3] = {x.x - f.cylinder_base[0], x.y - f.cylinder_base[1], x.z - f.cylinder_base[2]};
  const double h = d[0] * f.cylinder_axis[0] + d[1] * f.cylinder_axis[1] + d[2] * f.cylinder_axis[2];
  if (h < 0 || h > f.cylinder_length) return false;
  double r2 = 0;
  for (int k = 0; k < 3; ++k) r2 += (d[k] - h * f.cylinder_axis[k]) * (d[k] - h * f.cylinder_axis[k]);
  return r2 <= f.cylinder_radius * f.cylinder_radius;
}

// A random centre for a sphere of radius r inside a fill's or an inlet's region (box, or the
// cylinder of `frame` from `base`), drawn from rng in a fixed order so that fills place the same
// way everywhere.
inline Vec3 random_point_in_region(const FillSpec& f, double r, const FillFrame& frame, Vec3 base, std::mt19937_64& rng) {
  if (f.shape == FillSpec::Shape::Box)
    return Vec3{real(f.box_min[0] + r + (f.box_max[0] - f.box_min[0] - 2 * r) * uniform01(rng)),
                real(f.box_min[1] + r + (f.box_max[1] - f.box_min[1] - 2 * r) * uniform01(rng)),
                real(f.box_min[2] + r + (f.box_max[2] - f.box_min[2] - 2 * r) * uniform01(rng))};
  const double rho = (f.cylinder_radius - r) * std::sqrt(uniform01(rng)), phi = 2 * M_PI * uniform01(rng);
  const double h = r + (f.cylinder_length - 2 * r) * uniform01(rng);
  return base + real(h) * frame.axis + real(rho * std::cos(phi)) * frame.u + real(rho * std::sin(phi)) * frame.v;
}

}  // namespace dem::host
