#include "host/sim/field_sums.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <omp.h>

#include "host/sim/id_order.hpp"

namespace dem::host {

FieldSampling field_sampling(const CgGrid& grid, CgKernel kernel, double width, const double min[3], const double max[3],
                             bool per_tag) {
  FieldSampling s;
  s.grid = grid;
  s.kernel = kernel;
  s.width = width;
  for (int k = 0; k < 3; ++k) s.min[k] = min[k], s.max[k] = max[k];
  s.per_tag = per_tag;
  double h_min = grid.h[0];
  for (int k = 1; k < 3; ++k) h_min = std::min(h_min, grid.h[k]);
  s.span = std::min<std::int32_t>(kMaxCgSpan, static_cast<std::int32_t>(std::ceil(2 * cg_cutoff(kernel, width) / h_min)) + 2);
  return s;
}

bool cg_weigh(const FieldSampling& s, const double x[3], std::size_t q, std::int32_t* first, std::int32_t* count,
              double* weight) {
  CgAxisWeights w;
  for (int k = 0; k < 3; ++k) {
    if (!cg_axis_weights(x[k], s.grid.lo[k], s.grid.h[k], s.grid.n[k], s.grid.periodic[k], s.kernel, s.width, w) ||
        w.count > s.span)
      return false;
    first[3 * q + std::size_t(k)] = w.first;
    count[3 * q + std::size_t(k)] = w.count;
    std::copy(w.w, w.w + w.count, &weight[(3 * q + std::size_t(k)) * std::size_t(s.span)]);
  }
  return true;
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

HostFieldSampler::HostFieldSampler(const FieldSampling& sampling) : s_(sampling) {
  sums_.cells.assign(s_.grid.cells(), CgCellSums{});
}

// A sample in two passes. First each counted particle's weights along the three axes (in
// parallel: a particle's own). Then the scatter, in slabs of the grid along z, one slab a thread:
// every thread walks the particles in increasing id and adds to the cells of its own slab only, so
// that each cell receives its terms in increasing id whatever the number of threads.
void HostFieldSampler::sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes) {
  order_by_id(p.id, [&](std::size_t i) { return s_.counted(p.x[i]); }, order_);
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
    if (!cg_weigh(s_, x, std::size_t(j), first_.data(), count_.data(), weight_.data())) {
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

ParticleFieldSums HostFieldSampler::take() {
  ParticleFieldSums out = std::move(sums_);
  sums_ = ParticleFieldSums{};
  sums_.cells.assign(s_.grid.cells(), CgCellSums{});
  return out;
}

}  // namespace dem::host
