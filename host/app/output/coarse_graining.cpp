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

// A sample in two passes. First each counted particle's weights along the three axes (in
// parallel: a particle's own). Then the scatter, in slabs of the grid along z, one slab a thread:
// every thread walks the particles in increasing id and adds to the cells of its own slab only, so
// that each cell receives its terms in increasing id whatever the number of threads.
bool CoarseGrainer::counted(Vec3 x) const {
  const double c[3] = {x.x, x.y, x.z};
  for (int k = 0; k < 3; ++k)
    if (!grid_.periodic[k] && (c[k] < spec_.min[k] || c[k] > spec_.max[k])) return false;
  return true;
}

void CoarseGrainer::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes,
                           const ContactForces* contacts) {
  const CgKernel kernel = static_cast<CgKernel>(spec_.kernel);
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
    CgAxisWeights w;
    for (int k = 0; k < 3; ++k) {
      if (!cg_axis_weights(x[k], grid_.lo[k], grid_.h[k], grid_.n[k], grid_.periodic[k], kernel, spec_.width, w) ||
          w.count > span_) {
#pragma omp critical(cg_outside)
        outside = p.id[i];
        continue;
      }
      first_[3 * std::size_t(j) + std::size_t(k)] = w.first;
      count_[3 * std::size_t(j) + std::size_t(k)] = w.count;
      std::copy(w.w, w.w + w.count, &weight_[(3 * std::size_t(j) + std::size_t(k)) * span]);
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel of particle " + std::to_string(outside) + " leaves the grid");
  const std::size_t nx = std::size_t(grid_.n[0]), nxy = nx * std::size_t(grid_.n[1]);
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
      std::vector<double>* tag_volume = spec_.per_tag ? &tag_volume_sum_.find(p.tag[i])->second : nullptr;
      for (std::int32_t a = 0; a < count[2]; ++a) {
        const std::int32_t cz = ((first[2] + a) % nz + nz) % nz;
        if (cz < z0 || cz >= z1) continue;
        for (std::int32_t b = 0; b < count[1]; ++b) {
          const std::int32_t cy = ((first[1] + b) % grid_.n[1] + grid_.n[1]) % grid_.n[1];
          const double wzy = w[2][a] * w[1][b];
          for (std::int32_t d = 0; d < count[0]; ++d) {
            const std::int32_t cx = ((first[0] + d) % grid_.n[0] + grid_.n[0]) % grid_.n[0];
            const std::size_t c = std::size_t(cz) * nxy + std::size_t(cy) * nx + std::size_t(cx);
            const double wc = wzy * w[0][d], mw = m * wc;
            CellSums& s = sums_[c];
            s.mass += mw;
            s.volume += vol * wc;
            for (int k = 0; k < 3; ++k) s.momentum[k] += mw * u[k];
            for (int k = 0; k < 6; ++k) s.mvv[k] += mw * uu[k];
            if (tag_volume) (*tag_volume)[c] += vol * wc;
          }
        }
      }
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
// normalised as a particle's, so that the grid holds the sum of F (x) (x - c) exactly. The
// pieces in order of (particle id, partner), each slab's cells on one thread as in sample().
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
  std::sort(pieces_.begin(), pieces_.end(), [](const BranchPiece& a, const BranchPiece& b) {
    return a.particle != b.particle ? a.particle < b.particle : a.partner < b.partner;
  });
  const CgKernel kernel = static_cast<CgKernel>(spec_.kernel);
  const double half_cut = 0.5 * cg_cutoff(kernel, spec_.width);
  const std::size_t nx = std::size_t(grid_.n[0]), nxy = nx * std::size_t(grid_.n[1]);
  const std::int32_t nz = grid_.n[2];
  const int slabs = static_cast<int>(bound.size()) - 1;
  std::int64_t outside = -1;
#pragma omp parallel num_threads(slabs)
  {
    const std::int32_t t = omp_get_thread_num();
    const std::int32_t z0 = bound[std::size_t(t)], z1 = bound[std::size_t(t) + 1];
    CgAxisWeights w[3];
    for (std::size_t j = 0; j < pieces_.size() && z0 < z1; ++j) {
      const BranchPiece& b = pieces_[j];
      const double len = std::sqrt(double(norm2(b.arm)));
      const int m = std::max(1, static_cast<int>(std::ceil(len / half_cut)));
      // F (x) (x - c), shared among the m points
      const double fx[3] = {b.force.x, b.force.y, b.force.z}, arm[3] = {b.arm.x, b.arm.y, b.arm.z};
      double term[9];
      for (int r = 0; r < 3; ++r)
        for (int q = 0; q < 3; ++q) term[3 * r + q] = -fx[r] * arm[q] / m;
      for (int point = 0; point < m; ++point) {
        const double s = (point + 0.5) / m;
        const double x[3] = {double(b.start.x) + s * arm[0], double(b.start.y) + s * arm[1], double(b.start.z) + s * arm[2]};
        // z first: most points lie outside this slab
        if (!cg_axis_weights(x[2], grid_.lo[2], grid_.h[2], grid_.n[2], grid_.periodic[2], kernel, spec_.width, w[2])) {
#pragma omp critical(cg_outside)
          outside = b.particle;
          continue;
        }
        bool meets = false;
        for (std::int32_t a = 0; a < w[2].count && !meets; ++a) {
          const std::int32_t cz = ((w[2].first + a) % nz + nz) % nz;
          meets = cz >= z0 && cz < z1;
        }
        if (!meets) continue;
        bool inside = true;
        for (int k = 0; k < 2; ++k)
          inside = inside && cg_axis_weights(x[k], grid_.lo[k], grid_.h[k], grid_.n[k], grid_.periodic[k], kernel, spec_.width, w[k]);
        if (!inside) {
#pragma omp critical(cg_outside)
          outside = b.particle;
          continue;
        }
        for (std::int32_t a = 0; a < w[2].count; ++a) {
          const std::int32_t cz = ((w[2].first + a) % nz + nz) % nz;
          if (cz < z0 || cz >= z1) continue;
          for (std::int32_t e = 0; e < w[1].count; ++e) {
            const std::int32_t cy = ((w[1].first + e) % grid_.n[1] + grid_.n[1]) % grid_.n[1];
            const double wzy = w[2].w[a] * w[1].w[e];
            for (std::int32_t d = 0; d < w[0].count; ++d) {
              const std::int32_t cx = ((w[0].first + d) % grid_.n[0] + grid_.n[0]) % grid_.n[0];
              const double wc = wzy * w[0].w[d];
              std::array<double, 9>& sum = contact_sums_[std::size_t(cz) * nxy + std::size_t(cy) * nx + std::size_t(cx)];
              for (int q = 0; q < 9; ++q) sum[std::size_t(q)] += term[q] * wc;
            }
          }
        }
      }
    }
  }
  if (outside >= 0)
    throw std::runtime_error("coarse_graining: the kernel along a contact of particle " + std::to_string(outside) +
                             " leaves the grid");
  ++contact_samples_;
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
