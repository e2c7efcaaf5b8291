// Health: the deepest overlap and the per-step checks of every particle.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cmath>

#include "host/omp/parallel.hpp"
#include "host/omp/phase_timer.hpp"
#include "host/sim/health.hpp"

namespace dem::host {

double Engine::max_overlap() const {
  const ParticleView pv = const_cast<Engine*>(this)->pview();
  const MeshSlotsView sv = const_cast<Engine*>(this)->slot_view();
  real deepest = 0;
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
#pragma omp parallel for schedule(static) reduction(max : deepest) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) deepest = std::max(deepest, mesh_overlap_fraction(pv, sv, static_cast<index_t>(i)));
  const std::int64_t pairs = static_cast<std::int64_t>(pairs_.i.size());
  if (pairs_.touching.size() == pairs_.i.size())
#pragma omp parallel for schedule(static) reduction(max : deepest) if (static_cast<std::size_t>(pairs) > settings_.parallel_min)
    for (std::int64_t k = 0; k < pairs; ++k)
      if (pairs_.touching[k]) deepest = std::max(deepest, pair_overlap_fraction(pv, pairs_.i[k], pairs_.j[k], pairs_.history.get(k).rolling));
  return deepest;
}

bool Engine::check_health(const HealthLimits& limits) {
  // The first error stands: a full block of mesh contacts must not give way to an escape found in
  // the same step, which on_escape: remove would then clear (the run went on).
  if (!status_.ok) return false;
  const ParticleView pv = pview();
  const MeshSlotsView sv = slot_view();
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  // The particles of touching pairs that overlap too deeply (rare: collected, then marked)
  std::vector<std::uint8_t> too_deep(static_cast<std::size_t>(n), 0);
  const std::int64_t np = static_cast<std::int64_t>(pairs_.i.size());
  if (pairs_.offsets.size() == static_cast<std::size_t>(n) + 1 && pairs_.touching.size() == pairs_.i.size()) {
    std::vector<std::int64_t> deep;
#pragma omp parallel if (static_cast<std::size_t>(np) > settings_.parallel_min)
    {
      std::vector<std::int64_t> mine;
#pragma omp for schedule(static) nowait
      for (std::int64_t k = 0; k < np; ++k)
        if (pairs_.touching[k] &&
            pair_overlap_fraction(pv, pairs_.i[k], pairs_.j[k], pairs_.history.get(k).rolling) > limits.max_overlap)
          mine.push_back(k);
#pragma omp critical(dem_health_pairs)
      deep.insert(deep.end(), mine.begin(), mine.end());
    }
    for (const std::int64_t k : deep) too_deep[pairs_.i[k]] = too_deep[pairs_.j[k]] = 1;
  }
  std::int64_t worst_id = std::numeric_limits<std::int64_t>::max(), worst = -1;
  int problem = kHealthy;
#pragma omp parallel if (static_cast<std::size_t>(n) > settings_.parallel_min)
  {
    std::int64_t my_id = std::numeric_limits<std::int64_t>::max(), my_i = -1;
    int my_problem = kHealthy;
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) {
      int h = particle_health(pv, static_cast<index_t>(i), limits);
      if (h == kHealthy) {  // overlaps: its touching pairs (when the lists exist) and its mesh slots
        if (too_deep[i] || mesh_overlap_fraction(pv, sv, static_cast<index_t>(i)) > limits.max_overlap) h = kOverlap;
      }
      if (h != kHealthy && p_.id[i] < my_id) {
        my_id = p_.id[i];
        my_i = i;
        my_problem = h;
      }
    }
#pragma omp critical(dem_health)
    if (my_i >= 0 && my_id < worst_id) {
      worst_id = my_id;
      worst = my_i;
      problem = my_problem;
    }
  }
  if (worst < 0) return true;
  status_ = EngineStatus{false, health_message(problem, worst_id, p_.x[worst], p_.v[worst], steps_, time_, limits), problem,
                         worst_id};
  return false;
}

}  // namespace dem::host
