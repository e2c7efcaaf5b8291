// Coarse-grained fields (scene key coarse_graining:): solid fraction, density, velocity, kinetic
// stress and granular temperature on a regular grid, each particle spread over the grid by its
// kernel's cell-integrated, normalised weights (core/analysis/coarse_graining.hpp), so that the
// grid holds the particles' mass and momentum exactly. Samples of the state are summed, particle
// by particle in increasing id, and averaged over the samples since the last output: the same bits
// on every engine and in any particle order. docs/output.md ("fields") gives the definitions.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <vector>

#include "core/analysis/coarse_graining.hpp"
#include "host/sim/engine_types.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

// The grid: n[k] cells of size h[k] from lo[k]; a periodic axis spans its period, its cells wrap.
struct CgGrid {
  double lo[3] = {0, 0, 0}, h[3] = {0, 0, 0};
  std::int32_t n[3] = {0, 0, 0};
  bool periodic[3] = {false, false, false};
  std::size_t cells() const { return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]); }
  double cell_volume() const { return h[0] * h[1] * h[2]; }
};

// The grid of a scene's coarse_graining: its region padded by the kernel's cutoff on the
// non-periodic axes (so that every counted particle's kernel lies inside), the period on the
// periodic ones (cells of the period over a whole number: cell_size rounded to divide it).
CgGrid cg_grid(const CoarseGrainingSpec& spec, const PeriodicBox& periodic);

// The averages written at one time (cell order: x fastest, then y, then z, as VTK ImageData).
struct CgFields {
  CgGrid grid;
  std::uint32_t samples = 0;
  double mass = 0;                       // kg: the counted particles' mass over the samples' mean
  std::vector<double> solid_fraction;    // -
  std::vector<double> density;           // kg/m^3 (bulk)
  std::vector<double> velocity;          // m/s, 3 per cell (0 where the density is 0)
  std::vector<double> kinetic_stress;    // Pa, 9 per cell (row-major, symmetric)
  std::vector<double> temperature;       // m^2/s^2: the granular temperature tr(kinetic stress) / (3 density)
  std::map<std::int32_t, std::vector<double>> tag_solid_fraction;  // per_tag: each tag's
};

class CoarseGrainer {
 public:
  CoarseGrainer(const CoarseGrainingSpec& spec, const PeriodicBox& periodic);
  const CgGrid& grid() const { return grid_; }
  // One sample: the particles whose centres lie in the region, their velocities v at the
  // sample's time (the arrays in any order), their volumes from their radii (a polyhedron's from
  // its size: shapes). Throws std::runtime_error naming the particle whose kernel leaves the grid
  // (it cannot: the grid covers the region padded by the cutoff).
  void sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes);
  std::uint32_t samples() const { return samples_; }
  // The averages of the samples since the last call; then starts again.
  CgFields average();

 private:
  CoarseGrainingSpec spec_;
  CgGrid grid_;
  std::uint32_t samples_ = 0;
  double mass_ = 0;
  // Sums over the samples, per cell: mass, volume, momentum, m v v (xx yy zz xy xz yz), and each
  // sample's p p / rho (the kinetic stress's mean-flow part); one sample's mass and momentum.
  struct CellSums {
    double mass, volume, momentum[3], mvv[6], ppr[6];
  };
  struct SampleSums {
    double mass, momentum[3];
  };
  std::vector<CellSums> sums_;
  std::vector<SampleSums> sample_;
  std::map<std::int32_t, std::vector<double>> tag_volume_sum_;
  // a sample's particles in increasing id, and their weights along each axis (span_ a particle)
  std::vector<std::size_t> order_;
  std::vector<std::int32_t> first_;  // 3 per counted particle
  std::vector<std::int32_t> count_;
  std::vector<double> weight_;      // 3 span_ per counted particle
  std::int32_t span_ = 0;
};

}  // namespace dem::host
