#include "host/mpi/rcb.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace dem::mpi {
namespace {

// p's coordinate along axis, moved onto the domain where it lies outside (its nearest face).
double coordinate(const RcbBox& domain, Vec3 p, int axis) {
  const double v = axis == 0 ? p.x : axis == 1 ? p.y : p.z;
  const double top = std::nextafter(domain.hi[axis], -std::numeric_limits<double>::infinity());
  return std::min(std::max(v, domain.lo[axis]), top);
}

// total * part / parts in integers, rounded down (no overflow for totals below 2^62).
std::int64_t share(std::int64_t total, int part, int parts) {
  return total / parts * part + total % parts * part / parts;
}

}  // namespace

std::vector<RcbBox> rcb_partition(const Comm& comm, const std::vector<Vec3>& x, const std::vector<std::int64_t>& cost,
                                  const RcbBox& domain, int parts, const RcbSettings& settings) {
  if (parts < 1) throw std::invalid_argument("rcb_partition: parts must be at least 1 (got " + std::to_string(parts) + ")");
  if (settings.bins < 2 || settings.refinements < 1)
    throw std::invalid_argument("rcb_partition: at least 2 bins and 1 refinement");
  if (x.size() != cost.size()) throw std::invalid_argument("rcb_partition: a cost per particle");
  for (int k = 0; k < 3; ++k)
    if (!(domain.hi[k] > domain.lo[k])) throw std::invalid_argument("rcb_partition: an empty domain");
  std::vector<RcbBox> out(static_cast<std::size_t>(parts));
  std::vector<std::int64_t> hist(static_cast<std::size_t>(settings.bins));
  // depth first, the lower side first: every rank visits the same boxes in the same order (the
  // sums are collective)
  std::function<void(const RcbBox&, int, int, const std::vector<std::size_t>&)> split =
      [&](const RcbBox& box, int first, int count, const std::vector<std::size_t>& mine) {
        if (count == 1) {
          out[static_cast<std::size_t>(first)] = box;
          return;
        }
        int axis = 0;  // the longest side (the first of equal ones)
        for (int k = 1; k < 3; ++k)
          if (box.hi[k] - box.lo[k] > box.hi[axis] - box.lo[axis]) axis = k;
        const int lower = count / 2;
        std::vector<std::int64_t> total{0};
        for (std::size_t i : mine) total[0] += cost[i];
        comm.sum(total);
        const std::int64_t target = share(total[0], lower, count);
        // the bin holding the target, refined: below = the cost under lo
        double lo = box.lo[axis], hi = box.hi[axis];
        std::int64_t below = 0, in_bin = total[0];
        for (int r = 0; r < settings.refinements; ++r) {
          std::fill(hist.begin(), hist.end(), 0);
          const double width = (hi - lo) / settings.bins;
          for (std::size_t i : mine) {
            const double v = coordinate(domain, x[i], axis);
            if (!(v >= lo && v < hi)) continue;
            const int b = std::min(settings.bins - 1, static_cast<int>((v - lo) / width));
            hist[static_cast<std::size_t>(b)] += cost[i];
          }
          comm.sum(hist);
          int b = 0;
          std::int64_t cum = below;
          for (; b < settings.bins - 1 && cum + hist[static_cast<std::size_t>(b)] < target; ++b) cum += hist[static_cast<std::size_t>(b)];
          const double new_lo = lo + b * width, new_hi = b == settings.bins - 1 ? hi : lo + (b + 1) * width;
          lo = new_lo;
          hi = new_hi;
          below = cum;
          in_bin = hist[static_cast<std::size_t>(b)];
        }
        // the cut at the bin's edge nearer the target in cost
        const double at = target - below <= below + in_bin - target ? lo : hi;
        RcbBox left = box, right = box;
        left.hi[axis] = at;
        right.lo[axis] = at;
        std::vector<std::size_t> to_left, to_right;
        for (std::size_t i : mine) (coordinate(domain, x[i], axis) < at ? to_left : to_right).push_back(i);
        split(left, first, lower, to_left);
        split(right, first + lower, count - lower, to_right);
      };
  std::vector<std::size_t> all(x.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  split(domain, 0, parts, all);
  return out;
}

RcbLoad rcb_load(const Comm& comm, const std::vector<RcbBox>& boxes, const std::vector<Vec3>& x,
                 const std::vector<std::int64_t>& cost) {
  RcbLoad load;
  load.cost.assign(boxes.size(), 0);
  if (boxes.empty()) return load;
  RcbBox domain = boxes[0];
  for (const RcbBox& b : boxes)
    for (int k = 0; k < 3; ++k) {
      domain.lo[k] = std::min(domain.lo[k], b.lo[k]);
      domain.hi[k] = std::max(domain.hi[k], b.hi[k]);
    }
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double p[3] = {coordinate(domain, x[i], 0), coordinate(domain, x[i], 1), coordinate(domain, x[i], 2)};
    for (std::size_t b = 0; b < boxes.size(); ++b)
      if (boxes[b].contains(p)) {
        load.cost[b] += cost[i];
        break;
      }
  }
  comm.sum(load.cost);
  std::int64_t most = 0, sum = 0;
  for (std::int64_t c : load.cost) {
    most = std::max(most, c);
    sum += c;
  }
  load.imbalance = sum > 0 ? double(most) * double(boxes.size()) / double(sum) : 1;
  return load;
}

}  // namespace dem::mpi
