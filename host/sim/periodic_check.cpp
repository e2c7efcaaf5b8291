#include "host/sim/periodic_check.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace dem::host {

void check_periodic_after_adding(const EngineSettings& settings, real r_max, const std::vector<real>& radii) {
  if (!settings.periodic.any()) return;
  for (real r : radii) r_max = std::max(r_max, r);
  check_periodic_box(settings.periodic, r_max, mesh_skin_max(settings.skin >= 0 ? settings.skin : real(0.5) * r_max, settings.skin < 0));
}

void check_periodic_box(const PeriodicBox& b, real r_max, real mesh_skin) {
  const real l[3] = {b.length.x, b.length.y, b.length.z};
  const real need = std::max(real(4) * r_max, real(2) * (r_max + mesh_skin));
  for (int a = 0; a < 3; ++a)
    if (l[a] > 0 && !(l[a] > need)) {
      std::ostringstream msg;
      msg << "the period along " << "xyz"[a] << " (" << l[a] << " m) must exceed " << need
          << " m: four largest radii (" << r_max << " m), and twice the largest radius plus the mesh skin ("
          << mesh_skin << " m)";
      throw std::invalid_argument(msg.str());
    }
}

}  // namespace dem::host
