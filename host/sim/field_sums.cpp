#include "host/sim/field_sums.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <omp.h>

#include "host/sim/id_order.hpp"

namespace dem::host {

FieldSampling field_sampling(const CgGrid& grid, CgKernel kernel, double width, const double min[3], const double max[3],
                             bool per_tag, bool contact_stress) {
  FieldSampling s;
  s.grid = grid;
  s.kernel = kernel;
  s.width = width;
  for (int k = 0; k < 3; ++k) s.min[k] = min[k], s.max[k] = max[k];
  s.per_tag = per_tag;
  s.contact_stress = contact_stress;
  double h_min = grid.h[0];
  for (int k = 1; k < 3; ++k) h_min = std::min(h_min, grid.h[k]);
  s.span = std::min<std::int32_t>(kMaxCgSpan, static_cast<std::int32_t>(std::ceil(2 * cg_cutoff(kernel, width) / h_min)) + 2);
  return s;
}

CgSampling FieldSampling::view() const {
  CgSampling v;
  for (int k = 0; k < 3; ++k) {
    v.lo[k] = grid.lo[k], v.h[k] = grid.h[k], v.n[k] = grid.n[k], v.periodic[k] = grid.periodic[k];
    v.min[k] = min[k], v.max[k] = max[k];
  }
  v.kernel = kernel;
  v.width = width;
  v.span = span;
  return v;
}

std::vector<std::int32_t> cg_slab_bounds(const CgGrid& g, const std::vector<std::int32_t>& first,
                                         const std::vector<std::int32_t>& count, std::size_t points, int slabs) {
  const std::int32_t nz = g.n[2];
  std::vector<std::int64_t> per_layer(std::size_t(nz) + 1, 0);
  for (std::size_t j = 0; j < points; ++j) ++per_layer[std::size_t(((first[3 * j + 2] + count[3 * j + 2] / 2) % nz + nz) % nz) + 1];
  for (std::size_t z = 1; z < per_layer.size(); ++z) per_layer[z] += per_layer[z - 1];
  std::vector<std::int32_t> bound(std::size_t(slabs) + 1, nz);
  bound[0] = 0;
  for (int t = 1; t < slabs; ++t) {
    const std::int64_t target = std::int64_t(points) * t / slabs;
    bound[std::size_t(t)] = std::int32_t(std::lower_bound(per_layer.begin(), per_layer.end(), target) - per_layer.begin());
    bound[std::size_t(t)] = std::max(bound[std::size_t(t) - 1], std::min(bound[std::size_t(t)], nz));
  }
  return bound;
}

HostFieldSampler::HostFieldSampler(const FieldSampling& sampling) : s_(sampling), view_(sampling.view()) {
  sums_.cells.assign(s_.grid.cells(), CgCellSums{});
  if (s_.contact_stress) sums_.contact.assign(s_.grid.cells(), CgStress{});
}

// A sample in two passes. First each counted particle's weights along the three axes (in
// parallel: a particle's own). Then the scatter, in slabs of the grid along z, one slab a thread:
// every thread walks the particles in increasing id and adds to the cells of its own slab only, so
// that each cell receives its terms in increasing id whatever the number of threads.
void HostFieldSampler::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes) {
  order_by_id(p.id, [&](std::size_t i) { return view_.counted(p.x[i]); }, order_);
  const std::size_t n = order_.size(), span = std::size_t(s_.span);
  first_.resize(3 * n);
  count_.resize(3 * n);
  weight_.resize(3 * span * n);
  for (const std::size_t i : order_)
    if (s_.per_tag && !sums_.tag_volume.count(p.tag[i])) sums_.tag_volume.emplace(p.tag[i], std::vector<double>(s_.grid.cells(), 0.0));
  std::int64_t outside = -1;
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < std::int64_t(n); ++j) {
    const std::size_t i = order_[std::size_t(j)];
    const double x[3] = {p.x[i].x, p.x[i].y, p.x[i].z};
    if (!view_.weigh(x, j, first_.data(), count_.data(), weight_.data())) {
#pragma omp critical(cg_outside)
      outside = p.id[i];
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel of particle " + std::to_string(outside) + " leaves the grid");
  cg_in_slabs(cg_slab_bounds(s_.grid, first_, count_, n, omp_get_max_threads()), [&](std::int32_t z0, std::int32_t z1) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = order_[j];
      const double* w[3] = {&weight_[3 * j * span], &weight_[(3 * j + 1) * span], &weight_[(3 * j + 2) * span]};
      const CgParticleTerms terms =
          cg_particle_terms(double(p.inv_mass[i]), volume_equivalent_diameter(p, i, shapes), v[i].x, v[i].y, v[i].z);
      double* tag_volume = s_.per_tag ? sums_.tag_volume.find(p.tag[i])->second.data() : nullptr;
      cg_add_to_slab(s_.grid, &first_[3 * j], &count_[3 * j], w, z0, z1, [&](std::size_t c, double wc) {
        cg_add(sums_.cells[c], terms, wc);
        if (tag_volume) tag_volume[c] += terms.vol * wc;
      });
    }
  });
  double mass = 0;
  for (std::size_t b = 0; b < n; b += kCgMassBlock) {
    double block = 0;
    for (std::size_t j = b; j < std::min(n, b + kCgMassBlock); ++j) block += 1.0 / double(p.inv_mass[order_[j]]);
    mass += block;
  }
  sums_.mass += mass;
  ++sums_.samples;
}

// The contact stress of one sample: each contact's force F on a particle spread along the piece
// of its branch from the particle's centre x to the contact point c, as F (x) (x - c): a pair's two
// pieces add up to F (x) (x_a - x_b), MercuryCG's f_ij r_ij, and a mesh contact has its particle's
// piece alone. The kernel's line integral along a piece by the midpoint rule on m equal parts (m:
// the piece's length over half the kernel's cutoff, rounded up), each point's cell weights
// normalised as a particle's, so that the grid holds the sum of F (x) (x - c) exactly. As in
// sample(): the points' weights first (in parallel), then the scatter in slabs, every thread
// walking the pieces in order of (particle id, partner) and adding to its own slab's cells.
void HostFieldSampler::sample_contacts(const ContactForces& contacts) {
  pieces_.clear();
  for (std::size_t k = 0; k < contacts.pairs(); ++k) {
    const Vec3 c = contacts.pair_point[k], f = contacts.pair_force[k];
    if (view_.counted(contacts.pair_x_a[k]))
      pieces_.push_back(CgBranchPiece{contacts.pair_a[k], contacts.pair_b[k], contacts.pair_x_a[k], c - contacts.pair_x_a[k], f});
    // (b's own centre is counted, not its image: the two differ on periodic axes alone, which count all)
    if (view_.counted(contacts.pair_x_b[k]))
      pieces_.push_back(CgBranchPiece{contacts.pair_b[k], contacts.pair_a[k], contacts.pair_x_b[k], c - contacts.pair_x_b[k], -f});
  }
  for (std::size_t k = 0; k < contacts.walls(); ++k)
    if (view_.counted(contacts.wall_x[k]))
      pieces_.push_back(CgBranchPiece{contacts.wall_particle[k], -1 - contacts.wall_entity[k], contacts.wall_x[k],
                                    contacts.wall_point[k] - contacts.wall_x[k], contacts.wall_force[k]});
  order_pieces();
  const double half_cut = 0.5 * cg_cutoff(s_.kernel, s_.width);
  // the points: m per piece, from point_start_[j]
  const std::size_t np = pieces_.size(), span = std::size_t(s_.span);
  point_start_.resize(np + 1);
  point_start_[0] = 0;
  for (std::size_t j = 0; j < np; ++j) point_start_[j + 1] = point_start_[j] + cg_piece_points(pieces_[j].arm, half_cut);
  const std::size_t points = std::size_t(point_start_[np]);
  point_first_.resize(3 * points);
  point_count_.resize(3 * points);
  point_weight_.resize(3 * span * points);
  std::int64_t outside = -1;
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < std::int64_t(np); ++j) {
    const CgBranchPiece& b = pieces_[std::size_t(j)];
    const std::int64_t m = point_start_[std::size_t(j) + 1] - point_start_[std::size_t(j)];
    for (std::int64_t point = 0; point < m; ++point) {
      double x[3];
      cg_piece_point(b.start, b.arm, point, m, x);
      if (!view_.weigh(x, point_start_[std::size_t(j)] + point, point_first_.data(), point_count_.data(), point_weight_.data())) {
#pragma omp critical(cg_outside)
        outside = b.particle;
      }
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel along a contact of particle " + std::to_string(outside) +
                             " leaves the grid");
  const std::vector<std::int32_t> bound = cg_slab_bounds(s_.grid, point_first_, point_count_, points, omp_get_max_threads());
  cg_in_slabs(bound, [&](std::int32_t z0, std::int32_t z1) {
    for (std::size_t j = 0; j < np; ++j) {
      const CgBranchPiece& b = pieces_[j];
      const std::int64_t m = point_start_[j + 1] - point_start_[j];
      const CgStress term = cg_piece_term(b.force, b.arm, m);  // F (x) (x - c), shared among the m points
      for (std::size_t q = std::size_t(point_start_[j]); q < std::size_t(point_start_[j + 1]); ++q) {
        const std::int32_t* first = &point_first_[3 * q];
        const std::int32_t* count = &point_count_[3 * q];
        const double* w[3] = {&point_weight_[3 * q * span], &point_weight_[(3 * q + 1) * span], &point_weight_[(3 * q + 2) * span]};
        cg_add_to_slab(s_.grid, first, count, w, z0, z1,
                       [&](std::size_t c, double wc) { cg_add_stress(sums_.contact[c], term, wc); });
      }
    }
  });
  ++sums_.contact_samples;
}

// pieces_ in order of (particle id, partner): by buckets of particle id where the ids are dense
// (dense_id_top), each particle's few pieces then sorted by partner; else one sort.
void HostFieldSampler::order_pieces() {
  const auto by_key = [](const CgBranchPiece& a, const CgBranchPiece& b) {
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
    for (const CgBranchPiece& b : pieces_) sorted_pieces_[std::size_t(next[std::size_t(b.particle)]++)] = b;
  }
  for (std::size_t k = 0; k + 1 < start.size(); ++k)
    if (start[k + 1] - start[k] > 1)
      std::sort(sorted_pieces_.begin() + start[k], sorted_pieces_.begin() + start[k + 1], by_key);
  pieces_.swap(sorted_pieces_);
}

FieldSums HostFieldSampler::take() {
  FieldSums out = std::move(sums_);
  sums_ = FieldSums{};
  sums_.cells.assign(s_.grid.cells(), CgCellSums{});
  if (s_.contact_stress) sums_.contact.assign(s_.grid.cells(), CgStress{});
  return out;
}

}  // namespace dem::host
