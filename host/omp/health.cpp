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
  // The particles: their own checks, then their mesh slots' overlaps where the last mesh pass met
  // one beyond the limit (else none is); the fastest speed, the largest coordinate and the
  // smallest radius for the pairs' bound. The particle of the smallest id that fails is named.
  const bool slots_needed = !(mesh_overlap_seen_ <= limits.max_overlap);
  std::int64_t worst_id = std::numeric_limits<std::int64_t>::max(), worst = -1;
  int problem = kHealthy;
  real fastest2 = 0, farthest = 0, smallest = std::numeric_limits<real>::infinity();
#pragma omp parallel reduction(max : fastest2, farthest) reduction(min : smallest) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  {
    std::int64_t my_id = std::numeric_limits<std::int64_t>::max(), my_i = -1;
    int my_problem = kHealthy;
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) {
      int h = particle_health(pv, static_cast<index_t>(i), limits);
      if (h == kHealthy && slots_needed && mesh_overlap_fraction(pv, sv, static_cast<index_t>(i)) > limits.max_overlap) h = kOverlap;
      if (h != kHealthy && p_.id[i] < my_id) {
        my_id = p_.id[i];
        my_i = i;
        my_problem = h;
      }
      fastest2 = std::max(fastest2, norm2(pv.v[i]));
      farthest = std::max(farthest, std::max(std::abs(pv.x[i].x), std::max(std::abs(pv.x[i].y), std::abs(pv.x[i].z))));
      smallest = std::min(smallest, pv.radius[i]);
    }
#pragma omp critical(dem_health)
    if (my_i >= 0 && my_id < worst_id) {
      worst_id = my_id;
      worst = my_i;
      problem = my_problem;
    }
  }
  // The touching pairs that overlap too deeply (rare: collected, then their particles named where
  // their own checks passed), where the bound from the last pair pass reaches the limit.
  const std::int64_t np = static_cast<std::int64_t>(pairs_.i.size());
  const bool pairs_needed =
      !(pair_overlap_bound(pair_overlap_seen_, 2 * std::sqrt(fastest2) * settings_.dt, smallest, farthest) < limits.max_overlap);
  if (pairs_needed && pairs_.offsets.size() == static_cast<std::size_t>(n) + 1 && pairs_.touching.size() == pairs_.i.size()) {
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
    for (const std::int64_t k : deep)
      for (const index_t i : {pairs_.i[k], pairs_.j[k]})
        if (p_.id[i] < worst_id && particle_health(pv, i, limits) == kHealthy) {
          worst_id = p_.id[i];
          worst = i;
          problem = kOverlap;
        }
  }
  if (worst < 0) return true;
  status_ = EngineStatus{false, health_message(problem, worst_id, p_.x[worst], p_.v[worst], steps_, time_, limits), problem,
                         worst_id};
  return false;
}

}  // namespace dem::host
