// The scene's retag: list. At its time, each entry gives its tag to every particle whose centre
// lies in its region (ParticleArrays::tag; Simulation::set_tags), between steps, the same way on
// every engine. Used by `dem run` and the Python module.
#pragma once
#include <cstddef>

#include "host/sim/simulation.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

class Retagger {
 public:
  // t: the simulation's time now. An entry is due once the time reaches its time less half a step
  // (the step nearest to it); a run continued from a checkpoint at t (restart = true) counts those
  // due by t as done: the checkpoint holds their tags.
  Retagger(const SceneConfig& scene, double t, bool restart);
  bool empty() const { return next_ >= scene_.retags.size(); }
  // Applies the entries due at the simulation's time, in the scene's order (where two meet at one
  // time, the later entry's tag wins); returns how many particles changed their tag.
  std::size_t apply(Simulation& sim);
  // Whether an entry is due at time t (apply would change something then).
  bool due_at(double t) const { return next_ < order_.size() && due(order_[next_], t); }

 private:
  bool due(std::size_t k, double t) const;
  const SceneConfig& scene_;
  std::size_t next_ = 0;  // entries before it are done (sorted by time, stable)
  std::vector<std::size_t> order_;
};

}  // namespace dem::host
