#include "host/app/scene/retag.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "host/app/scene/placement.hpp"

namespace dem::host {

Retagger::Retagger(const SceneConfig& scene, double t, bool restart) : scene_(scene), order_(scene.retags.size()) {
  std::iota(order_.begin(), order_.end(), std::size_t(0));
  std::stable_sort(order_.begin(), order_.end(),
                   [&](std::size_t a, std::size_t b) { return scene.retags[a].time < scene.retags[b].time; });
  if (restart)
    while (next_ < order_.size() && due(order_[next_], t)) ++next_;
}

bool Retagger::due(std::size_t k, double t) const { return t >= scene_.retags[k].time - 0.5 * scene_.simulation.dt; }

std::size_t Retagger::apply(Simulation& sim) {
  const double t = sim.time();
  if (next_ >= order_.size() || !due(order_[next_], t)) return 0;
  const ParticleArrays& p = sim.particles();
  std::vector<std::int32_t> tags = p.tag;
  for (; next_ < order_.size() && due(order_[next_], t); ++next_) {
    const RetagSpec& r = scene_.retags[order_[next_]];
    for (std::size_t i = 0; i < p.size(); ++i)
      if (region_contains(r.region, p.x[i])) tags[i] = r.tag;
  }
  std::size_t changed = 0;
  for (std::size_t i = 0; i < p.size(); ++i) changed += tags[i] != p.tag[i];
  if (changed) sim.set_tags(tags);
  return changed;
}

}  // namespace dem::host
