// The mixing indices' samples, per particle (host/sim/mixing_contents.hpp gathers them, the
// application finishes the indices: host/app/output/mixing.hpp): the key of the sample a particle
// falls in, either a grid cell or its place on a Z-order curve, and the weight it counts with.
// Both engines order the particles by (key, id) and sum each sample in that order.
#pragma once
#include <cmath>
#include <cstdint>

#include "core/config.hpp"
#include "core/math/vec3.hpp"

namespace dem {

// A sample's key: a cell's indices along x, y, z, or (Z-order) the curve's index in x alone.
// Ordered lexicographically.
struct MixingKey {
  std::int64_t x, y, z;
};
DEM_HD inline bool operator<(const MixingKey& a, const MixingKey& b) {
  return a.x != b.x ? a.x < b.x : a.y != b.y ? a.y < b.y : a.z < b.z;
}
DEM_HD inline bool operator!=(const MixingKey& a, const MixingKey& b) { return a.x != b.x || a.y != b.y || a.z != b.z; }
struct MixingKeyLess {  // (a sort's comparison)
  DEM_HD bool operator()(const MixingKey& a, const MixingKey& b) const { return a < b; }
};

// The Z-order curve's resolution: 2^21 steps along each axis of the particles' bounding box.
constexpr int kMixingCurveBits = 21;

struct MixingSamples {
  double cell_size;     // m: cubic cells from origin; 0: runs of a particle count along the curve
  double origin[3];     // m, a corner of the cells
  double lo[3], hi[3];  // m, the curve's box: the particles' bounds (by count only)
  bool mass_weighted;   // a particle's weight: its mass, else 1

  DEM_HD MixingKey key(Vec3 p) const {
    const double x[3] = {p.x, p.y, p.z};
    if (cell_size > 0) {
      std::int64_t c[3];
      for (int k = 0; k < 3; ++k) c[k] = static_cast<std::int64_t>(std::floor((x[k] - origin[k]) / cell_size));
      return MixingKey{c[0], c[1], c[2]};
    }
    const std::uint64_t top = (std::uint64_t(1) << kMixingCurveBits) - 1;
    std::uint64_t q[3], z = 0;
    for (int k = 0; k < 3; ++k) {
      q[k] = 0;
      if (hi[k] > lo[k]) {
        const std::uint64_t s = static_cast<std::uint64_t>((x[k] - lo[k]) / (hi[k] - lo[k]) * double(top + 1));
        q[k] = s < top ? s : top;
      }
    }
    for (int b = kMixingCurveBits - 1; b >= 0; --b)
      for (int k = 0; k < 3; ++k) z = (z << 1) | ((q[k] >> b) & 1u);
    return MixingKey{static_cast<std::int64_t>(z), 0, 0};
  }
  DEM_HD double weight(real inv_mass) const { return mass_weighted ? 1.0 / double(inv_mass) : 1.0; }
};

// The place of `tag` in the increasing list tags[0, count), where it is present.
DEM_HD inline std::int32_t mixing_tag_place(const std::int32_t* tags, std::int32_t count, std::int32_t tag) {
  std::int32_t lo = 0;
  for (std::int32_t hi = count; lo < hi;) {
    const std::int32_t mid = lo + (hi - lo) / 2;
    if (tags[mid] < tag) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// A particle of weight w and tag place `place` added to its sample's sums (its particles, the
// weights and their squares, and per tag the weight: tag_w[place]), called in the sample's
// (key, id) order by both engines.
DEM_HD inline void mixing_sample_add(double w, std::int32_t place, std::uint64_t& n, double& sum, double& sum2, double* tag_w) {
  ++n;
  sum += w;
  sum2 += w * w;
  tag_w[place] += w;
}

}  // namespace dem
