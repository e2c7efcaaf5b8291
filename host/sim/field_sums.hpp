// The coarse-grained fields' sums, made where the particles live: the grid and kernel an engine
// samples with (FieldSampling), the sums over the samples (FieldSums), and their host
// implementation (HostFieldSampler), which the host engine uses on its own arrays and any engine
// through a copy of its particles and contacts (Simulation's default). The device engine sums on
// the device with the same per-element bodies (core/analysis/coarse_graining.hpp) and the same
// order: every cell receives the particles' terms in increasing particle id and the contacts'
// pieces in order of (particle id, partner), so both give the same bits. The averages and the
// files are the application's (host/app/output/coarse_graining.hpp).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include <omp.h>

#include "core/analysis/coarse_graining.hpp"
#include "core/integrate/central_difference.hpp"
#include "host/sim/contact_forces.hpp"
#include "host/sim/engine_types.hpp"

namespace dem::host {

// The grid: n[k] cells of size h[k] from lo[k]; a periodic axis spans its period, its cells wrap.
struct CgGrid {
  double lo[3] = {0, 0, 0}, h[3] = {0, 0, 0};
  std::int32_t n[3] = {0, 0, 0};
  bool periodic[3] = {false, false, false};
  std::size_t cells() const { return std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]); }
  double cell_volume() const { return h[0] * h[1] * h[2]; }
};

// How the particles are sampled: the grid, the kernel and its width, the region whose particles
// count (on the non-periodic axes), each tag's volume too (per_tag), and span, the most cells a
// kernel's support spans along an axis (the stride of the weights).
struct FieldSampling {
  CgGrid grid;
  CgKernel kernel = CgKernel::Lucy;
  double width = 0;
  double min[3] = {0, 0, 0}, max[3] = {0, 0, 0};
  bool per_tag = false;
  bool contact_stress = false;  // the contacts' forces spread along their branches too
  std::int32_t span = 0;
  // The device engine gathers a sample's (particle, cell) entries this many at most at a time
  // (16 bytes each; cuda/field_sums.inl); any value gives the same sums.
  std::int64_t device_entry_chunk = std::int64_t(1) << 24;
  CgSampling view() const;  // (the per-element bodies' form)
  bool counted(Vec3 x) const { return view().counted(x); }
};

// The sums of the samples since the last take: per cell (x fastest, then y, then z), each tag's
// volume per cell (per_tag), the counted particles' mass summed over the samples, and the count;
// with contact_stress, the contacts' F (x) (x - c) per cell over the samples that had their
// contacts' forces (contact_samples: an engine has none at a restart's first sample).
struct FieldSums {
  std::vector<CgCellSums> cells;
  std::map<std::int32_t, std::vector<double>> tag_volume;
  double mass = 0;
  std::uint32_t samples = 0;
  std::vector<CgStress> contact;
  std::uint32_t contact_samples = 0;
};

// One side of a contact, for the contact stress: the particle, its partner (the other particle's
// id, or -1 - the mesh entity's key: mesh_entity_key), the particle's centre, the contact point
// from it, and the force on the particle. Pieces are summed in order of (particle, partner).
struct CgBranchPiece {
  std::int64_t particle, partner;
  Vec3 start, arm;  // m
  Vec3 force;       // N
};

// The mass of a sample's counted particles (masses in increasing id): summed sequentially in
// blocks of kCgMassBlock, then the blocks' sums in order, the order the device engine keeps too.
constexpr std::size_t kCgMassBlock = 4096;

// The velocity a particle has at the step's time (the stored one is half a step behind): v +
// (F / m + g) dt / 2 (core velocities_at_step_time; a prescribed particle's as stored).
inline Vec3 velocity_at_step_time(const ParticleArrays& p, std::size_t i, Vec3 gravity, real dt) {
  Vec3 v = p.v[i], w{0, 0, 0};
  velocities_at_step_time(v, w, p.force[i], Vec3{0, 0, 0}, p.inv_mass[i], 0, gravity, p.prescribed[i] != 0, dt);
  return v;
}

// The volume-equivalent diameter of particle i: a sphere's diameter, a polyhedron's size.
inline double volume_equivalent_diameter(const ParticleArrays& p, std::size_t i, const std::vector<PolyShape>& shapes) {
  if (p.shape[i] >= 0) return double(p.radius[i]) / double(shapes.at(std::size_t(p.shape[i])).bounding_radius);
  return 2 * double(p.radius[i]);
}

// FieldSampling for a grid, kernel and width (span from the smallest cell side).
FieldSampling field_sampling(const CgGrid& grid, CgKernel kernel, double width, const double min[3], const double max[3],
                             bool per_tag, bool contact_stress);

class HostFieldSampler {
 public:
  explicit HostFieldSampler(const FieldSampling& sampling);
  // One sample: the particles whose centres lie in the region (the arrays in any order), with
  // their velocities v. Throws std::runtime_error naming the particle whose kernel leaves the grid
  // (it cannot where the grid covers the region padded by the kernel's cutoff).
  void sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes);
  // The same sample's contacts (with contact_stress), each side of a contact counted where its
  // particle's centre lies in the region. Throws std::runtime_error naming a particle whose
  // contact's kernel leaves the grid (it cannot where the grid is padded by the largest radius).
  void sample_contacts(const ContactForces& contacts);
  // The sums since the last take; then starts again.
  FieldSums take();
  const FieldSampling& sampling() const { return s_; }

 private:
  FieldSampling s_;
  CgSampling view_;  // s_'s
  FieldSums sums_;
  // a sample's particles in increasing id, and their weights along each axis (span a particle)
  std::vector<std::size_t> order_;
  std::vector<std::int32_t> first_, count_;
  std::vector<double> weight_;
  // a sample's branch pieces in order, their quadrature points (from point_start_[piece]) and the
  // points' weights
  std::vector<CgBranchPiece> pieces_, sorted_pieces_;
  std::vector<std::int64_t> piece_ids_, piece_bucket_, point_start_;
  std::vector<std::int32_t> point_first_, point_count_;
  std::vector<double> point_weight_;
  void order_pieces();
};

// The z-layer bounds of `slabs` slabs of the grid holding about as many of the points each (each
// point's middle layer: first[3j + 2] + count[3j + 2] / 2); any bounds give the same bits.
std::vector<std::int32_t> cg_slab_bounds(const CgGrid& g, const std::vector<std::int32_t>& first,
                                         const std::vector<std::int32_t>& count, std::size_t points, int slabs);

// The scatter's threads: body(z0, z1) on one thread per slab [bound[t], bound[t + 1]) of
// cg_slab_bounds (each thread adds to its own slab's cells only).
template <class Body>
void cg_in_slabs(const std::vector<std::int32_t>& bound, Body&& body) {
#pragma omp parallel num_threads(static_cast<int>(bound.size()) - 1)
  {
    const std::size_t t = static_cast<std::size_t>(omp_get_thread_num());
    if (bound[t] < bound[t + 1]) body(bound[t], bound[t + 1]);
  }
}

// Calls add(cell, weight) for each cell of one point's support (its weights along the three axes:
// cells first[k] .. first[k] + count[k] - 1, wrapped on periodic axes) whose layer lies in
// [z0, z1), in the order z, y, x. (The wrapped indices once per point: a modulo per cell cost
// more than the sums.)
template <class Add>
void cg_add_to_slab(const CgGrid& g, const std::int32_t* first, const std::int32_t* count, const double* const w[3],
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

}  // namespace dem::host
