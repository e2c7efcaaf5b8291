#include "host/app/output/coarse_graining.hpp"

#include "host/app/output/id_order.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

#include <omp.h>

namespace dem::host {

namespace {

// Calls add(cell, weight) for each cell of one point's support (its weights along the three axes:
// cells first[k] .. first[k] + count[k] - 1, wrapped on periodic axes) whose layer lies in
// [z0, z1), in the order z, y, x. (The wrapped indices once per point: a modulo per cell cost
// more than the sums.)
template <class Add>
void add_to_slab(const CgGrid& g, const std::int32_t* first, const std::int32_t* count, const double* const w[3],
                 std::int32_t z0, std::int32_t z1, Add&& add) {
  std::size_t at[3][kMaxCgSpan];
  for (int k = 0; k < 3; ++k)
    for (std::int32_t a = 0; a < count[k]; ++a) at[k][a] = std::size_t(((first[k] + a) % g.n[k] + g.n[k]) % g.n[k]);
  const std::size_t nx = std::size_t(g.n[0]), nxy = nx * std::size_t(g.n[1]);
  for (std::int32_t a = 0; a < count[2]; ++a) {
    const std::int32_t cz = std::int32_t(at[2][a]);
    if (cz < z0 || cz >= z1) continue;
    for (std::int32_t b = 0; b < count[1]; ++b) {
      const std::size_t row = at[2][a] * nxy + at[1][b] * nx;
      const double wzy = w[2][a] * w[1][b];
      for (std::int32_t d = 0; d < count[0]; ++d) add(row + at[0][d], wzy * w[0][d]);
    }
  }
}

}  // namespace

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

CoarseGrainer::CoarseGrainer(const CoarseGrainingSpec& spec, const PeriodicBox& periodic, double reach)
    : spec_(spec), grid_(cg_grid(spec, periodic, reach)) {
  const std::size_t c = grid_.cells();
  if (c > (std::size_t(1) << 28))
    throw std::runtime_error("coarse_graining: " + std::to_string(c) + " cells; make cell_size larger or the region smaller");
  sums_.assign(c, CellSums{});
  if (spec_.contact_stress) contact_sums_.assign(c, std::array<double, 9>{});
  const double cut = cg_cutoff(static_cast<CgKernel>(spec.kernel), spec.width);
  double h_min = grid_.h[0];
  for (int k = 1; k < 3; ++k) h_min = std::min(h_min, grid_.h[k]);
  span_ = std::min<std::int32_t>(kMaxCgSpan, static_cast<std::int32_t>(std::ceil(2 * cut / h_min)) + 2);
}

// Point q's weights along the three axes (x: its position) into first[3q + k], count[3q + k] and
// weight[(3q + k) span_ ...]; false when its kernel leaves the grid.
bool CoarseGrainer::weigh(const double x[3], std::size_t q, std::vector<std::int32_t>& first,
                          std::vector<std::int32_t>& count, std::vector<double>& weight) const {
  CgAxisWeights w;
  for (int k = 0; k < 3; ++k) {
    if (!cg_axis_weights(x[k], grid_.lo[k], grid_.h[k], grid_.n[k], grid_.periodic[k], static_cast<CgKernel>(spec_.kernel),
                         spec_.width, w) ||
        w.count > span_)
      return false;
    first[3 * q + std::size_t(k)] = w.first;
    count[3 * q + std::size_t(k)] = w.count;
    std::copy(w.w, w.w + w.count, &weight[(3 * q + std::size_t(k)) * std::size_t(span_)]);
  }
  return true;
}

bool CoarseGrainer::counted(Vec3 x) const {
  const double c[3] = {x.x, x.y, x.z};
  for (int k = 0; k < 3; ++k)
    if (!grid_.periodic[k] && (c[k] < spec_.min[k] || c[k] > spec_.max[k])) return false;
  return true;
}

// A sample in two passes. First each counted particle's weights along the three axes (in
// parallel: a particle's own). Then the scatter, in slabs of the grid along z, one slab a thread:
// every thread walks the particles in increasing id and adds to the cells of its own slab only, so
// that each cell receives its terms in increasing id whatever the number of threads.
void CoarseGrainer::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes,
                           const ContactForces* contacts) {
  order_by_id(p.id, [&](std::size_t i) { return counted(p.x[i]); }, order_);
  const std::size_t n = order_.size(), span = std::size_t(span_);
  first_.resize(3 * n);
  count_.resize(3 * n);
  weight_.resize(3 * span * n);
  for (const std::size_t i : order_)
    if (spec_.per_tag && !tag_volume_sum_.count(p.tag[i])) tag_volume_sum_.emplace(p.tag[i], std::vector<double>(grid_.cells(), 0.0));
  std::int64_t outside = -1;  // a particle whose kernel leaves the grid (it cannot: the grid covers the region)
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < std::int64_t(n); ++j) {
    const std::size_t i = order_[std::size_t(j)];
    const double x[3] = {p.x[i].x, p.x[i].y, p.x[i].z};
    if (!weigh(x, std::size_t(j), first_, count_, weight_)) {
#pragma omp critical(cg_outside)
      outside = p.id[i];
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel of particle " + std::to_string(outside) + " leaves the grid");
  const std::int32_t nz = grid_.n[2];
  // The slabs hold about as many particles each (a bed fills the bottom of its grid): bounds at
  // the quantiles of the particles' layers (any bounds give the same bits).
  std::vector<std::int64_t> per_layer(std::size_t(nz) + 1, 0);
  for (std::size_t j = 0; j < n; ++j)
    ++per_layer[std::size_t(((first_[3 * j + 2] + count_[3 * j + 2] / 2) % nz + nz) % nz) + 1];
  for (std::size_t z = 1; z < per_layer.size(); ++z) per_layer[z] += per_layer[z - 1];
  const int slabs = omp_get_max_threads();
  std::vector<std::int32_t> bound(std::size_t(slabs) + 1, nz);
  bound[0] = 0;
  for (int t = 1; t < slabs; ++t) {
    const std::int64_t target = std::int64_t(n) * t / slabs;
    bound[std::size_t(t)] = std::int32_t(std::lower_bound(per_layer.begin(), per_layer.end(), target) - per_layer.begin());
    bound[std::size_t(t)] = std::max(bound[std::size_t(t) - 1], std::min(bound[std::size_t(t)], nz));
  }
#pragma omp parallel num_threads(slabs)
  {
    const std::int32_t t = omp_get_thread_num();
    const std::int32_t z0 = bound[std::size_t(t)], z1 = bound[std::size_t(t) + 1];
    for (std::size_t j = 0; j < n && z0 < z1; ++j) {
      const std::size_t i = order_[j];
      const std::int32_t* first = &first_[3 * j];
      const std::int32_t* count = &count_[3 * j];
      const double* w[3] = {&weight_[3 * j * span], &weight_[(3 * j + 1) * span], &weight_[(3 * j + 2) * span]};
      const double m = 1.0 / double(p.inv_mass[i]);
      double size = 2 * double(p.radius[i]);  // a sphere's diameter; a polyhedron's volume-equivalent one
      if (p.shape[i] >= 0) size = double(p.radius[i]) / double(shapes.at(std::size_t(p.shape[i])).bounding_radius);
      const double vol = 3.14159265358979323846 / 6 * size * size * size;
      const double u[3] = {v[i].x, v[i].y, v[i].z};
      const double uu[6] = {u[0] * u[0], u[1] * u[1], u[2] * u[2], u[0] * u[1], u[0] * u[2], u[1] * u[2]};
      double* tag_volume = spec_.per_tag ? tag_volume_sum_.find(p.tag[i])->second.data() : nullptr;
      add_to_slab(grid_, first, count, w, z0, z1, [&](std::size_t c, double wc) {
        const double mw = m * wc;
        CellSums& s = sums_[c];
        s.mass += mw;
        s.volume += vol * wc;
        for (int k = 0; k < 3; ++k) s.momentum[k] += mw * u[k];
        for (int k = 0; k < 6; ++k) s.mvv[k] += mw * uu[k];
        if (tag_volume) tag_volume[c] += vol * wc;
      });
    }
  }
  if (spec_.contact_stress && contacts != nullptr) sample_contacts(*contacts, bound);
  double mass = 0;
  for (std::size_t j = 0; j < n; ++j) mass += 1.0 / double(p.inv_mass[order_[j]]);
  mass_ += mass;
  ++samples_;
}

// The contact stress of one sample: each contact's force F on a particle spread along the piece
// of its branch from the particle's centre x to the contact point c, as F (x) (x - c): a pair's two
// pieces add up to F (x) (x_a - x_b), MercuryCG's f_ij r_ij, and a mesh contact has its particle's
// piece alone. The kernel's line integral along a piece by the midpoint rule on m equal parts (m:
// the piece's length over half the kernel's cutoff, rounded up), each point's cell weights
// normalised as a particle's, so that the grid holds the sum of F (x) (x - c) exactly. As in
// sample(): the points' weights first (in parallel), then the scatter in slabs, every thread
// walking the pieces in order of (particle id, partner) and adding to its own slab's cells.
void CoarseGrainer::sample_contacts(const ContactForces& contacts, const std::vector<std::int32_t>& bound) {
  pieces_.clear();
  for (std::size_t k = 0; k < contacts.pairs(); ++k) {
    const Vec3 c = contacts.pair_point[k], f = contacts.pair_force[k];
    if (counted(contacts.pair_x_a[k]))
      pieces_.push_back(BranchPiece{contacts.pair_a[k], contacts.pair_b[k], contacts.pair_x_a[k], c - contacts.pair_x_a[k], f});
    // (b's own centre is counted, not its image: the two differ on periodic axes alone, which count all)
    if (counted(contacts.pair_x_b[k]))
      pieces_.push_back(BranchPiece{contacts.pair_b[k], contacts.pair_a[k], contacts.pair_x_b[k], c - contacts.pair_x_b[k], -f});
  }
  for (std::size_t k = 0; k < contacts.walls(); ++k)
    if (counted(contacts.wall_x[k]))
      pieces_.push_back(BranchPiece{contacts.wall_particle[k], -1 - contacts.wall_entity[k], contacts.wall_x[k],
                                    contacts.wall_point[k] - contacts.wall_x[k], contacts.wall_force[k]});
  order_pieces();
  const CgKernel kernel = static_cast<CgKernel>(spec_.kernel);
  const double half_cut = 0.5 * cg_cutoff(kernel, spec_.width);
  // the points: m per piece, from point_start_[j]
  const std::size_t np = pieces_.size(), span = std::size_t(span_);
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
      if (!weigh(x, std::size_t(point_start_[std::size_t(j)] + point), point_first_, point_count_, point_weight_)) {
#pragma omp critical(cg_outside)
        outside = b.particle;
      }
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel along a contact of particle " + std::to_string(outside) +
                             " leaves the grid");
  const int slabs = static_cast<int>(bound.size()) - 1;
#pragma omp parallel num_threads(slabs)
  {
    const std::int32_t t = omp_get_thread_num();
    const std::int32_t z0 = bound[std::size_t(t)], z1 = bound[std::size_t(t) + 1];
    for (std::size_t j = 0; j < np && z0 < z1; ++j) {
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
        add_to_slab(grid_, first, count, w, z0, z1, [&](std::size_t c, double wc) {
          std::array<double, 9>& sum = contact_sums_[c];
          for (int k = 0; k < 9; ++k) sum[std::size_t(k)] += term[k] * wc;
        });
      }
    }
  }
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
  f.grid = grid_;
  f.samples = samples_;
  const std::size_t c = grid_.cells();
  const double s = samples_ > 0 ? double(samples_) : 1.0, vc = grid_.cell_volume();
  f.mass = mass_ / s;
  f.solid_fraction.resize(c);
  f.density.resize(c);
  f.velocity.assign(3 * c, 0.0);
  f.kinetic_stress.resize(9 * c);
  f.temperature.assign(c, 0.0);
  // (xx yy zz xy xz yz) into a row-major 3x3
  const int at[9] = {0, 3, 4, 3, 1, 5, 4, 5, 2};
  for (std::size_t k = 0; k < c; ++k) {
    const CellSums& sum = sums_[k];
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
  for (auto& [tag, sums] : tag_volume_sum_) {
    std::vector<double> phi(c);
    for (std::size_t k = 0; k < c; ++k) phi[k] = sums[k] / s / vc;
    f.tag_solid_fraction.emplace(tag, std::move(phi));
    std::fill(sums.begin(), sums.end(), 0.0);
  }
  samples_ = 0;
  mass_ = 0;
  std::fill(sums_.begin(), sums_.end(), CellSums{});
  return f;
}

}  // namespace dem::host
