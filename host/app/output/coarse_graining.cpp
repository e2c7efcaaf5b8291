#include "host/app/output/coarse_graining.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dem::host {

CgGrid cg_grid(const CoarseGrainingSpec& spec, const PeriodicBox& periodic) {
  CgGrid g;
  const double cut = cg_cutoff(static_cast<CgKernel>(spec.kernel), spec.width);
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

CoarseGrainer::CoarseGrainer(const CoarseGrainingSpec& spec, const PeriodicBox& periodic)
    : spec_(spec), grid_(cg_grid(spec, periodic)) {
  const std::size_t c = grid_.cells();
  if (c > (std::size_t(1) << 28))
    throw std::runtime_error("coarse_graining: " + std::to_string(c) + " cells; make cell_size larger or the region smaller");
  mass_sum_.assign(c, 0);
  volume_sum_.assign(c, 0);
  momentum_sum_.assign(3 * c, 0);
  mvv_sum_.assign(6 * c, 0);
  ppr_sum_.assign(6 * c, 0);
  sample_mass_.assign(c, 0);
  sample_momentum_.assign(3 * c, 0);
}

void CoarseGrainer::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes) {
  const CgKernel kernel = static_cast<CgKernel>(spec_.kernel);
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p.id[a] < p.id[b]; });
  std::fill(sample_mass_.begin(), sample_mass_.end(), 0.0);
  std::fill(sample_momentum_.begin(), sample_momentum_.end(), 0.0);
  const std::size_t nx = std::size_t(grid_.n[0]), nxy = nx * std::size_t(grid_.n[1]);
  CgAxisWeights w[3];
  for (const std::size_t i : order) {
    const double x[3] = {p.x[i].x, p.x[i].y, p.x[i].z};
    bool inside = true;
    for (int k = 0; k < 3; ++k)
      if (!grid_.periodic[k] && (x[k] < spec_.min[k] || x[k] > spec_.max[k])) inside = false;
    if (!inside) continue;
    for (int k = 0; k < 3; ++k)
      if (!cg_axis_weights(x[k], grid_.lo[k], grid_.h[k], grid_.n[k], grid_.periodic[k], kernel, spec_.width, w[k]))
        throw std::runtime_error("coarse_graining: the kernel of particle " + std::to_string(p.id[i]) +
                                 " leaves the grid");
    const double m = 1.0 / double(p.inv_mass[i]);
    double size = 2 * double(p.radius[i]);  // a sphere's diameter; a polyhedron's volume-equivalent one
    if (p.shape[i] >= 0) size = double(p.radius[i]) / double(shapes.at(std::size_t(p.shape[i])).bounding_radius);
    const double vol = 3.14159265358979323846 / 6 * size * size * size;
    const double u[3] = {v[i].x, v[i].y, v[i].z};
    const double uu[6] = {u[0] * u[0], u[1] * u[1], u[2] * u[2], u[0] * u[1], u[0] * u[2], u[1] * u[2]};
    std::vector<double>* tag_volume = nullptr;
    if (spec_.per_tag) {
      auto it = tag_volume_sum_.find(p.tag[i]);
      if (it == tag_volume_sum_.end()) it = tag_volume_sum_.emplace(p.tag[i], std::vector<double>(grid_.cells(), 0.0)).first;
      tag_volume = &it->second;
    }
    mass_ += m;
    for (std::int32_t a = 0; a < w[2].count; ++a) {
      const std::int32_t cz = ((w[2].first + a) % grid_.n[2] + grid_.n[2]) % grid_.n[2];
      for (std::int32_t b = 0; b < w[1].count; ++b) {
        const std::int32_t cy = ((w[1].first + b) % grid_.n[1] + grid_.n[1]) % grid_.n[1];
        const double wzy = w[2].w[a] * w[1].w[b];
        for (std::int32_t d = 0; d < w[0].count; ++d) {
          const std::int32_t cx = ((w[0].first + d) % grid_.n[0] + grid_.n[0]) % grid_.n[0];
          const std::size_t c = std::size_t(cz) * nxy + std::size_t(cy) * nx + std::size_t(cx);
          const double wc = wzy * w[0].w[d], mw = m * wc;
          sample_mass_[c] += mw;
          volume_sum_[c] += vol * wc;
          for (int k = 0; k < 3; ++k) sample_momentum_[3 * c + k] += mw * u[k];
          for (int k = 0; k < 6; ++k) mvv_sum_[6 * c + k] += mw * uu[k];
          if (tag_volume) (*tag_volume)[c] += vol * wc;
        }
      }
    }
  }
  for (std::size_t c = 0; c < grid_.cells(); ++c) {
    const double rho = sample_mass_[c];
    mass_sum_[c] += rho;
    for (int k = 0; k < 3; ++k) momentum_sum_[3 * c + k] += sample_momentum_[3 * c + k];
    if (rho > 0) {
      const double* q = &sample_momentum_[3 * c];
      const double pp[6] = {q[0] * q[0], q[1] * q[1], q[2] * q[2], q[0] * q[1], q[0] * q[2], q[1] * q[2]};
      for (int k = 0; k < 6; ++k) ppr_sum_[6 * c + k] += pp[k] / rho;
    }
  }
  ++samples_;
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
    f.solid_fraction[k] = volume_sum_[k] / s / vc;
    f.density[k] = mass_sum_[k] / s / vc;
    if (mass_sum_[k] > 0)
      for (int j = 0; j < 3; ++j) f.velocity[3 * k + j] = momentum_sum_[3 * k + j] / mass_sum_[k];
    double trace = 0;
    for (int j = 0; j < 9; ++j) {
      const double sk = (mvv_sum_[6 * k + at[j]] - ppr_sum_[6 * k + at[j]]) / s / vc;
      f.kinetic_stress[9 * k + j] = sk;
      if (j == 0 || j == 4 || j == 8) trace += sk;
    }
    if (f.density[k] > 0) f.temperature[k] = trace / (3 * f.density[k]);
  }
  for (auto& [tag, sums] : tag_volume_sum_) {
    std::vector<double> phi(c);
    for (std::size_t k = 0; k < c; ++k) phi[k] = sums[k] / s / vc;
    f.tag_solid_fraction.emplace(tag, std::move(phi));
    std::fill(sums.begin(), sums.end(), 0.0);
  }
  samples_ = 0;
  mass_ = 0;
  for (std::vector<double>* v : {&mass_sum_, &volume_sum_, &momentum_sum_, &mvv_sum_, &ppr_sum_})
    std::fill(v->begin(), v->end(), 0.0);
  return f;
}

}  // namespace dem::host
