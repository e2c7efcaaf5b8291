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
  sampling_ = field_sampling(grid, static_cast<CgKernel>(spec.kernel), spec.width, lo, hi, spec.per_tag, spec.contact_stress);
}

void CoarseGrainer::sample(Simulation& engine, Vec3 gravity, real dt) {
  if (arrays_) throw std::logic_error("CoarseGrainer: sampled from arrays before");
  if (engine_ != &engine) {
    engine.start_field_sums(sampling_);
    engine_ = &engine;
  }
  engine.sample_fields(gravity, dt);
}

void CoarseGrainer::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes,
                           const ContactForces* contacts) {
  if (engine_) throw std::logic_error("CoarseGrainer: sampled from an engine before");
  if (!arrays_) arrays_ = std::make_unique<HostFieldSampler>(sampling_);
  arrays_->sample(p, v, shapes);
  if (spec_.contact_stress && contacts != nullptr) arrays_->sample_contacts(*contacts);
}

CgFields CoarseGrainer::average() {
  CgFields f;
  FieldSums sums;
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
    f.contact_samples = sums.contact_samples;
    f.contact_stress.assign(9 * c, std::numeric_limits<double>::quiet_NaN());
    if (sums.contact_samples > 0) {
      const double cs = double(sums.contact_samples);
      for (std::size_t k = 0; k < c; ++k)
        for (std::size_t j = 0; j < 9; ++j) f.contact_stress[9 * k + j] = sums.contact[k].s[j] / cs / vc;
    }
    f.stress.resize(9 * c);
    for (std::size_t k = 0; k < 9 * c; ++k) f.stress[k] = f.kinetic_stress[k] + f.contact_stress[k];
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
