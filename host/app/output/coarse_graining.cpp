#include "host/app/output/coarse_graining.hpp"

#include "host/sim/id_order.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include <omp.h>

namespace dem::host {

CgGrid cg_grid(const CoarseGrainingSpec& spec, const PeriodicBox& periodic, double reach) {
  CgGrid g;
  const double cut = cg_cutoff(static_cast<CgKernel>(spec.kernel), spec.width) + (spec.contact_stress ? reach : 0.0);
  const double plo[3] = {periodic.lo.x, periodic.lo.y, periodic.lo.z};
  const double plen[3] = {periodic.length.x, periodic.length.y, periodic.length.z};
  for (int k = 0; k < 3; ++k) {
    if (plen[k] > 0) {
      g.periodic[k] = true;
      g.n[k] = std::max<std::int32_t>(1, static_cast<std::int32_t>(std::lround(plen[k] / spec.cell_size)));
      g.lo[k] = plo[k];
      g.h[k] = plen[k] / g.n[k];
    } else {
      g.h[k] = spec.cell_size;
      g.lo[k] = spec.min[k] - cut;
      // (one cell more than the padded region needs: a kernel ending on a cell face stays inside)
      g.n[k] = static_cast<std::int32_t>(std::ceil((spec.max[k] - spec.min[k] + 2 * cut) / spec.cell_size)) + 1;
    }
  }
  return g;
}

CoarseGrainer::CoarseGrainer(const CoarseGrainingSpec& spec, const PeriodicBox& periodic, double reach) : spec_(spec) {
  const CgGrid grid = cg_grid(spec, periodic, reach);
  const std::size_t c = grid.cells();
  if (c > (std::size_t(1) << 28))
    throw std::runtime_error("coarse_graining: " + std::to_string(c) + " cells; make cell_size larger or the region smaller");
  const double lo[3] = {spec.min[0], spec.min[1], spec.min[2]}, hi[3] = {spec.max[0], spec.max[1], spec.max[2]};
  sampling_ = field_sampling(grid, static_cast<CgKernel>(spec.kernel), spec.width, lo, hi, spec.per_tag);
  if (spec_.contact_stress) contact_sums_.assign(c, std::array<double, 9>{});
}

void CoarseGrainer::sample(Simulation& engine, Vec3 gravity, real dt, const ContactForces* contacts) {
  if (arrays_) throw std::logic_error("CoarseGrainer: sampled from arrays before");
  if (engine_ != &engine) {
    engine.start_field_sums(sampling_);
    engine_ = &engine;
  }
  engine.sample_fields(gravity, dt);
  if (spec_.contact_stress && contacts != nullptr) sample_contacts(*contacts);
}

void CoarseGrainer::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes,
                           const ContactForces* contacts) {
  if (engine_) throw std::logic_error("CoarseGrainer: sampled from an engine before");
  if (!arrays_) arrays_ = std::make_unique<HostFieldSampler>(sampling_);
  arrays_->sample(p, v, shapes);
  if (spec_.contact_stress && contacts != nullptr) sample_contacts(*contacts);
}

// The contact stress of one sample: each contact's force F on a particle spread along the piece
// of its branch from the particle's centre x to the contact point c, as F (x) (x - c): a pair's two
// pieces add up to F (x) (x_a - x_b), MercuryCG's f_ij r_ij, and a mesh contact has its particle's
// piece alone. The kernel's line integral along a piece by the midpoint rule on m equal parts (m:
// the piece's length over half the kernel's cutoff, rounded up), each point's cell weights
// normalised as a particle's, so that the grid holds the sum of F (x) (x - c) exactly. As in
// sample(): the points' weights first (in parallel), then the scatter in slabs, every thread
// walking the pieces in order of (particle id, partner) and adding to its own slab's cells.
void CoarseGrainer::sample_contacts(const ContactForces& contacts) {
  pieces_.clear();
  for (std::size_t k = 0; k < contacts.pairs(); ++k) {
    const Vec3 c = contacts.pair_point[k], f = contacts.pair_force[k];
    if (sampling_.counted(contacts.pair_x_a[k]))
      pieces_.push_back(BranchPiece{contacts.pair_a[k], contacts.pair_b[k], contacts.pair_x_a[k], c - contacts.pair_x_a[k], f});
    // (b's own centre is counted, not its image: the two differ on periodic axes alone, which count all)
    if (sampling_.counted(contacts.pair_x_b[k]))
      pieces_.push_back(BranchPiece{contacts.pair_b[k], contacts.pair_a[k], contacts.pair_x_b[k], c - contacts.pair_x_b[k], -f});
  }
  for (std::size_t k = 0; k < contacts.walls(); ++k)
    if (sampling_.counted(contacts.wall_x[k]))
      pieces_.push_back(BranchPiece{contacts.wall_particle[k], -1 - contacts.wall_entity[k], contacts.wall_x[k],
                                    contacts.wall_point[k] - contacts.wall_x[k], contacts.wall_force[k]});
  order_pieces();
  const CgKernel kernel = static_cast<CgKernel>(spec_.kernel);
  const double half_cut = 0.5 * cg_cutoff(kernel, spec_.width);
  // the points: m per piece, from point_start_[j]
  const std::size_t np = pieces_.size(), span = std::size_t(sampling_.span);
  point_start_.resize(np + 1);
  point_start_[0] = 0;
  for (std::size_t j = 0; j < np; ++j) {
    const double len = std::sqrt(double(norm2(pieces_[j].arm)));
    point_start_[j + 1] = point_start_[j] + std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(len / half_cut)));
  }
  const std::size_t points = std::size_t(point_start_[np]);
  point_first_.resize(3 * points);
  point_count_.resize(3 * points);
  point_weight_.resize(3 * span * points);
  std::int64_t outside = -1;
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < std::int64_t(np); ++j) {
    const BranchPiece& b = pieces_[std::size_t(j)];
    const std::int64_t m = point_start_[std::size_t(j) + 1] - point_start_[std::size_t(j)];
    const double arm[3] = {b.arm.x, b.arm.y, b.arm.z}, x0[3] = {b.start.x, b.start.y, b.start.z};
    for (std::int64_t point = 0; point < m; ++point) {
      const double s = (double(point) + 0.5) / double(m);
      const double x[3] = {x0[0] + s * arm[0], x0[1] + s * arm[1], x0[2] + s * arm[2]};
      if (!cg_weigh(sampling_, x, std::size_t(point_start_[std::size_t(j)] + point), point_first_.data(), point_count_.data(),
                    point_weight_.data())) {
#pragma omp critical(cg_outside)
        outside = b.particle;
      }
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel along a contact of particle " + std::to_string(outside) +
                             " leaves the grid");
  cg_in_slabs(cg_slab_bounds(sampling_.grid, point_first_, point_count_, points, omp_get_max_threads()), [&](std::int32_t z0, std::int32_t z1) {
    for (std::size_t j = 0; j < np; ++j) {
      const BranchPiece& b = pieces_[j];
      const std::int64_t m = point_start_[j + 1] - point_start_[j];
      // F (x) (x - c), shared among the m points
      const double fx[3] = {b.force.x, b.force.y, b.force.z}, arm[3] = {b.arm.x, b.arm.y, b.arm.z};
      double term[9];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) term[3 * r + c] = -fx[r] * arm[c] / double(m);
      for (std::size_t q = std::size_t(point_start_[j]); q < std::size_t(point_start_[j + 1]); ++q) {
        const std::int32_t* first = &point_first_[3 * q];
        const std::int32_t* count = &point_count_[3 * q];
        const double* w[3] = {&point_weight_[3 * q * span], &point_weight_[(3 * q + 1) * span], &point_weight_[(3 * q + 2) * span]};
        cg_add_to_slab(sampling_.grid, first, count, w, z0, z1, [&](std::size_t c, double wc) {
          std::array<double, 9>& sum = contact_sums_[c];
          for (int k = 0; k < 9; ++k) sum[std::size_t(k)] += term[k] * wc;
        });
      }
    }
  });
  ++contact_samples_;
}

// pieces_ in order of (particle id, partner): by buckets of particle id where the ids are dense
// (dense_id_top), each particle's few pieces then sorted by partner; else one sort.
void CoarseGrainer::order_pieces() {
  const auto by_key = [](const BranchPiece& a, const BranchPiece& b) {
    return a.particle != b.particle ? a.particle < b.particle : a.partner < b.partner;
  };
  std::vector<std::int64_t>& ids = piece_ids_;
  ids.resize(pieces_.size());
  for (std::size_t j = 0; j < pieces_.size(); ++j) ids[j] = pieces_[j].particle;
  const std::int64_t top = dense_id_top(ids);
  if (top < 0) {
    std::sort(pieces_.begin(), pieces_.end(), by_key);
    return;
  }
  std::vector<std::int64_t>& start = piece_bucket_;
  start.assign(std::size_t(top) + 2, 0);
  for (const std::int64_t id : ids) ++start[std::size_t(id) + 1];
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  sorted_pieces_.resize(pieces_.size());
  {
    std::vector<std::int64_t> next(start.begin(), start.end() - 1);
    for (const BranchPiece& b : pieces_) sorted_pieces_[std::size_t(next[std::size_t(b.particle)]++)] = b;
  }
  for (std::size_t k = 0; k + 1 < start.size(); ++k)
    if (start[k + 1] - start[k] > 1)
      std::sort(sorted_pieces_.begin() + start[k], sorted_pieces_.begin() + start[k + 1], by_key);
  pieces_.swap(sorted_pieces_);
}

CgFields CoarseGrainer::average() {
  CgFields f;
  ParticleFieldSums sums;
  if (engine_) {
    sums = engine_->take_field_sums();
  } else if (arrays_) {
    sums = arrays_->take();
  } else {
    sums.cells.assign(sampling_.grid.cells(), CgCellSums{});
  }
  f.grid = sampling_.grid;
  f.samples = sums.samples;
  const std::size_t c = f.grid.cells();
  const double s = sums.samples > 0 ? double(sums.samples) : 1.0, vc = f.grid.cell_volume();
  f.mass = sums.mass / s;
  f.solid_fraction.resize(c);
  f.density.resize(c);
  f.velocity.assign(3 * c, 0.0);
  f.kinetic_stress.resize(9 * c);
  f.temperature.assign(c, 0.0);
  // (xx yy zz xy xz yz) into a row-major 3x3
  const int at[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
  for (std::size_t k = 0; k < c; ++k) {
    const CgCellSums& sum = sums.cells[k];
    f.solid_fraction[k] = sum.volume / s / vc;
    f.density[k] = sum.mass / s / vc;
    if (sum.mass > 0)
      for (int j = 0; j < 3; ++j) f.velocity[3 * k + j] = sum.momentum[j] / sum.mass;
    // the mean flow's part <p><p>/<rho> = (sum p)(sum p) / (sum m) / (samples vc)
    double pp[6] = {0, 0, 0, 0, 0, 0};
    if (sum.mass > 0) {
      const double* m = sum.momentum;
      const double prod[6] = {m[0] * m[0], m[1] * m[1], m[2] * m[2], m[0] * m[1], m[0] * m[2], m[1] * m[2]};
      for (int j = 0; j < 6; ++j) pp[j] = prod[j] / sum.mass;
    }
    double trace = 0;
    for (int j = 0; j < 9; ++j) {
      const double sk = (sum.mvv[at[j]] - pp[at[j]]) / s / vc;
      f.kinetic_stress[9 * k + j] = sk;
      if (j == 0 || j == 4 || j == 8) trace += sk;
    }
    if (f.density[k] > 0) f.temperature[k] = trace / (3 * f.density[k]);
  }
  if (spec_.contact_stress) {
    f.contact_samples = contact_samples_;
    f.contact_stress.assign(9 * c, std::numeric_limits<double>::quiet_NaN());
    if (contact_samples_ > 0) {
      const double cs = double(contact_samples_);
      for (std::size_t k = 0; k < c; ++k)
        for (std::size_t j = 0; j < 9; ++j) f.contact_stress[9 * k + j] = contact_sums_[k][j] / cs / vc;
    }
    f.stress.resize(9 * c);
    for (std::size_t k = 0; k < 9 * c; ++k) f.stress[k] = f.kinetic_stress[k] + f.contact_stress[k];
    std::fill(contact_sums_.begin(), contact_sums_.end(), std::array<double, 9>{});
    contact_samples_ = 0;
  }
  // every tag seen since the first sample, so that each file of a series has the same arrays
  for (const auto& [tag, volume] : sums.tag_volume) tags_seen_.insert(tag);
  for (const std::int32_t tag : tags_seen_) {
    std::vector<double> phi(c, 0.0);
    if (const auto it = sums.tag_volume.find(tag); it != sums.tag_volume.end())
      for (std::size_t k = 0; k < c; ++k) phi[k] = it->second[k] / s / vc;
    f.tag_solid_fraction.emplace(tag, std::move(phi));
  }
  return f;
}

}  // namespace dem::host
