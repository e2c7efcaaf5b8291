// Whether a periodic box is wide enough for the particles it holds (both engines ask before a run
// and before particles are added).
#pragma once
#include <vector>

#include "core/geometry/periodic.hpp"
#include "host/sim/engine_types.hpp"

namespace dem::host {

// Refuses periodic boxes too narrow for the particles: a touching pair must be touching through
// its nearest image alone (period > 4 largest radii), and the mesh search of a particle near a face
// looks across one face at a time (period > 2 (largest radius + mesh skin)). Throws
// std::invalid_argument naming the axis and the numbers.
void check_periodic_box(const PeriodicBox& b, real r_max, real mesh_skin);
// The same for an engine of largest radius r_max about to take particles of the given radii.
void check_periodic_after_adding(const EngineSettings& settings, real r_max, const std::vector<real>& radii);

}  // namespace dem::host
