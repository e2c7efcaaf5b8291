#include "host/sim/health.hpp"

#include <sstream>

namespace dem::host {

std::string mesh_overflow_message(std::int64_t id, int count, std::uint64_t step, double time) {
  std::ostringstream msg;
  msg << "particle " << id << " has " << count << " valid mesh contacts at step " << step << " (t = " << time
      << " s), more than the capacity kMaxMeshContacts = " << kMaxMeshContacts
      << " (core/dhm/h2_filter.hpp). The particle is probably deep inside a mesh: reduce the time step, check "
         "the mesh for overlapping or duplicated surfaces, or raise the capacity.";
  return msg.str();
}

std::string health_message(int problem, std::int64_t id, Vec3 x, Vec3 v, std::uint64_t step, double time,
                           const HealthLimits& limits) {
  std::ostringstream msg;
  msg << "particle " << id;
  if (problem == kNonFinite) {
    msg << " has a non-finite position or velocity at step " << step << " (t = " << time
        << " s). The time step is probably too large for the stiffest contact: reduce simulation.dt (Hertz "
           "contact time ~ 2.87 (m*^2 / (R* E*^2 v))^(1/5) should span at least 20 steps).";
  } else if (problem == kTooFast) {
    msg << " moves at " << norm(v) << " m/s at step " << step << " (t = " << time << " s), far above the "
        << limits.max_speed
        << " m/s this scene allows (ten times its initial speeds, mesh speeds and a fall across the domain; "
           "simulation.max_speed sets it): the run has blown up. Likely causes: simulation.dt too large for the "
           "stiffest contact (the Hertz contact time ~ 2.87 (m*^2 / (R* E*^2 v))^(1/5) should span at least 20 "
           "steps), or particles placed deep inside each other or inside a mesh.";
  } else if (problem == kOverlap) {
    msg << " overlaps a neighbour or a wall by more than " << 100 * limits.max_overlap
        << " % of the smaller radius at step " << step << " (t = " << time
        << " s; simulation.max_overlap sets the limit): the state is no longer a sound contact. Likely causes: "
           "particles placed inside each other or inside a mesh, a time step too large for the impact speeds, or a "
           "Young's modulus far too low for the loads.";
  } else {
    msg << " left the domain [" << limits.lo.x << ", " << limits.hi.x << "] x [" << limits.lo.y << ", " << limits.hi.y
        << "] x [" << limits.lo.z << ", " << limits.hi.z << "] m at step " << step << " (t = " << time
        << " s), at (" << x.x << ", " << x.y << ", " << x.z << ") m moving at " << norm(v)
        << " m/s: it escaped through a gap in the meshes or was thrown out by a blow-up. The scene's `domain` "
           "sets the region (by default the particles, fills and meshes with a margin).";
  }
  return msg.str();
}

}  // namespace dem::host
