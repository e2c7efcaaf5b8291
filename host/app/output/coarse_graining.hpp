// Coarse-grained fields (scene key coarse_graining:): solid fraction, density, velocity, kinetic
// and contact stress and granular temperature on a regular grid, each particle spread over the
// grid by its kernel's cell-integrated, normalised weights (core/analysis/coarse_graining.hpp), so
// that the grid holds the particles' mass and momentum exactly; each contact's force spread along
// its branch vector (MercuryCG's contact stress). Samples of the state are summed, particle by
// particle and contact by contact in increasing id, and averaged over the samples since the last
// output: the same bits on every engine and in any particle order. docs/output.md ("fields")
// gives the definitions.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "core/analysis/coarse_graining.hpp"
#include "host/sim/contact_forces.hpp"
#include "host/sim/engine_types.hpp"
#include "host/sim/field_sums.hpp"
#include "host/sim/simulation.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

// The grid of a scene's coarse_graining: its region padded by the kernel's cutoff and `reach` (m:
// the largest particle radius, so that the kernels along every counted contact's branch lie
// inside) on the non-periodic axes, the period on the periodic ones (cells of the period over a
// whole number: cell_size rounded to divide it).
CgGrid cg_grid(const CoarseGrainingSpec& spec, const PeriodicBox& periodic, double reach);

// The averages written at one time (cell order: x fastest, then y, then z, as VTK ImageData).
struct CgFields {
  CgGrid grid;
  std::uint32_t samples = 0;
  double mass = 0;                       // kg: the counted particles' mass over the samples' mean
  std::vector<double> solid_fraction;    // -
  std::vector<double> density;           // kg/m^3 (bulk)
  std::vector<double> velocity;          // m/s, 3 per cell (0 where the density is 0)
  // Pa, 9 per cell (row-major, symmetric): the momentum flux about the window's mean velocity,
  // <sum m v v> - <p><p>/<rho> over the samples, so that the window's fields keep the momentum
  // balance (the flux of each sample about its own velocity would leave out the samples' spread)
  std::vector<double> kinetic_stress;
  // Pa, 9 per cell (row-major: force component, then branch component), averaged over the
  // contact_samples that had their contacts' forces; empty unless spec.contact_stress; NaN where
  // no sample had them (a restart's first, at the checkpoint's time)
  std::vector<double> contact_stress;
  std::uint32_t contact_samples = 0;
  std::vector<double> stress;            // Pa, 9 per cell: kinetic + contact (with contact_stress)
  std::vector<double> temperature;       // m^2/s^2: the granular temperature tr(kinetic stress) / (3 density)
  std::map<std::int32_t, std::vector<double>> tag_solid_fraction;  // per_tag: each tag's
};

class CoarseGrainer {
 public:
  // reach: the largest particle radius (m; cg_grid).
  CoarseGrainer(const CoarseGrainingSpec& spec, const PeriodicBox& periodic, double reach);
  const CgGrid& grid() const { return sampling_.grid; }
  // One sample of an engine's state, summed by the engine where its particles live
  // (Simulation::sample_fields, velocities at the step's time from gravity and dt; the engine's
  // sums started at its first sample here); with spec.contact_stress, the contacts whose forces
  // the engine kept (none: this sample has none, see CgFields::contact_stress), each side of a
  // contact counted where its particle is. Throws std::runtime_error naming a particle or contact
  // whose kernel leaves the grid (it cannot: the grid covers the region padded by the cutoff and
  // the reach).
  void sample(Simulation& engine, Vec3 gravity, real dt);
  // The same from arrays (in any order) and the particles' velocities v, summed here: for a
  // state that no engine holds. One CoarseGrainer samples one way.
  void sample(const ParticleArrays& p, const std::vector<Vec3>& v, const std::vector<PolyShape>& shapes,
              const ContactForces* contacts = nullptr);
  // The averages of the samples since the last call; then starts again.
  CgFields average();

 private:
  CoarseGrainingSpec spec_;
  FieldSampling sampling_;
  Simulation* engine_ = nullptr;                // the engine whose sums these are (sample(engine))
  std::unique_ptr<HostFieldSampler> arrays_;    // or the sums of sample(arrays)
  std::set<std::int32_t> tags_seen_;            // (per_tag)
};

}  // namespace dem::host
