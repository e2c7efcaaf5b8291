// The pair list: the broad phase's choice, the skin tests and the kept list's check, the half
// skins, the rebuild (with the particles re-sorted in the broad phase's order) and the pair pass's
// stripes.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "host/omp/parallel.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

namespace {
template <class T>
void permute_vector(std::vector<T>& v, const std::vector<std::int64_t>& order, std::size_t parallel_min) {
  std::vector<T> out(order.size());  // order may be a subset: the particles kept
  const T* from = v.data();
  parallel_for(static_cast<std::int64_t>(order.size()), parallel_min, 0, [&](std::int64_t i) { out[i] = from[order[i]]; });
  v.swap(out);
}
}  // namespace

void Engine::permute_particles(const std::vector<std::int64_t>& order) {
  contacts_kept_ = false;  // (the kept forces are by pair)
#define DEM_PERMUTE_FIELD(T, name) permute_vector(p_.name, order, settings_.parallel_min);
  DEM_PARTICLE_FIELDS(DEM_PERMUTE_FIELD)
#undef DEM_PERMUTE_FIELD
  // Mesh contact slots: the blocks go with their particles (the slots stay where they are; the
  // next mesh pass makes new candidate lists and lays the blocks out in the new order).
  permute_vector(slots_.count, order, settings_.parallel_min);
  permute_vector(slots_.block, order, settings_.parallel_min);
  if (!ghost_.empty()) permute_vector(ghost_, order, settings_.parallel_min);
  if (!pairs_.x_at_build.empty()) permute_vector(pairs_.x_at_build, order, settings_.parallel_min);
  if (!pairs_.reach.empty()) {
    permute_vector(pairs_.reach, order, settings_.parallel_min);
    permute_vector(pairs_.half_skin2, order, settings_.parallel_min);
  }
  mesh_lists_.offsets.clear();  // candidate lists are per index: rebuilt at the next step
  // The pair list follows the particles: indices remapped, rows re-formed (counting sort by the
  // new lower index, then each row by partner), history and touching flags carried along.
  if (!pairs_.offsets.empty()) {
    // (order may leave particles out: their pairs go with them)
    const std::size_t n = order.size(), n_old = pairs_.offsets.size() - 1;
    std::vector<std::int32_t> inv(n_old, -1);
    for (std::size_t i = 0; i < n; ++i) inv[order[i]] = static_cast<std::int32_t>(i);
    std::size_t np = 0;
    for (std::size_t k = 0; k < pairs_.i.size(); ++k) {
      if (inv[pairs_.i[k]] < 0 || inv[pairs_.j[k]] < 0) continue;
      pairs_.i[np] = pairs_.i[k];
      pairs_.j[np] = pairs_.j[k];
      pairs_.history.set(np, pairs_.history.get(k));
      pairs_.touching[np] = pairs_.touching[k];
      ++np;
    }
    pairs_.i.resize(np);
    pairs_.j.resize(np);
    pairs_.history.resize(np);
    pairs_.touching.resize(np);
    std::vector<std::int32_t> lo(np), hi(np);
    std::vector<std::int32_t> offsets(n + 1, 0);
    for (std::size_t k = 0; k < np; ++k) {
      lo[k] = std::min(inv[pairs_.i[k]], inv[pairs_.j[k]]);
      hi[k] = std::max(inv[pairs_.i[k]], inv[pairs_.j[k]]);
      ++offsets[lo[k] + 1];
    }
    for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
    std::vector<std::int32_t> cursor(offsets.begin(), offsets.end() - 1), new_i(np), new_j(np);
    PairHistory history;
    history.with_roll = pairs_.history.with_roll;
    history.resize(np);
    std::vector<std::uint8_t> touching(np);
    for (std::size_t k = 0; k < np; ++k) {
      const std::int32_t to = cursor[lo[k]]++;
      new_i[to] = lo[k];
      new_j[to] = hi[k];
      history.set(to, pairs_.history.get(k));
      touching[to] = pairs_.touching[k];
    }
    for (std::size_t i = 0; i < n; ++i)  // insertion sort of each (short) row by partner
      for (std::int32_t k = offsets[i] + 1; k < offsets[i + 1]; ++k)
        for (std::int32_t m = k; m > offsets[i] && new_j[m - 1] > new_j[m]; --m) {
          std::swap(new_j[m - 1], new_j[m]);
          history.swap_entries(m - 1, m);
          std::swap(touching[m - 1], touching[m]);
        }
    pairs_.offsets.swap(offsets);
    pairs_.i.swap(new_i);
    pairs_.j.swap(new_j);
    pairs_.history.swap(history);
    pairs_.touching.swap(touching);
  }
  needs_build_ = true;  // the stripes and the grid are per index
}

// The broad phase the settings ask for; `auto` decides from the radii and the particles' box (again
// after particles were added or removed, when the decision can change).
void Engine::choose_broad_phase() {
  const bool was_hgrid = broad_phase_ && std::string(broad_phase_->name()) == "hgrid";
  if (broad_phase_ && settings_.broad_phase.method != BroadPhaseMethod::Auto) return;
  real r_max = 0;
  for (real r : p_.radius) r_max = std::max(r_max, r);
  std::unique_ptr<BroadPhase> next = make_broad_phase(settings_.broad_phase, p_.radius, search_volume(p_.x, r_max));
  if (broad_phase_ && (std::string(next->name()) == "hgrid") == was_hgrid) return;  // unchanged
  broad_phase_ = std::move(next);
  broad_phase_->set_parallel_min(settings_.parallel_min);
  broad_phase_->set_periodic(settings_.periodic);
}

// Whether the pair list must be built before this step's pair pass (needs_build_).
void Engine::decide_pair_list() {
  if (!needs_build_) {
    if (settings_.neighbour_interval > 0 && steps_ - last_build_step_ >= std::uint64_t(settings_.neighbour_interval)) {
      needs_build_ = true;
    } else {
      // A pair left out of the list was farther apart than reach_a + reach_b, and each reach is
      // the radius plus the particle's half skin: while no particle has moved its half skin, no
      // such pair can touch. Past that, list_holds checks the few that have (counted and found in
      // one pass: the settled bed +2.3 % against a count and a second, finding pass).
      const std::int64_t n = static_cast<std::int64_t>(p_.size());
      const Vec3* x = p_.x.data();
      const Vec3* x0 = pairs_.x_at_build.data();
      const real* s2 = pairs_.half_skin2.data();
      const PeriodicBox box = settings_.periodic;
      const Finds past = find_where(n, p_.size() > settings_.parallel_min, most_past_skins(n),
                                    [=](std::int64_t i) { return moved2(box, x[i], x0[i]) > s2[i]; });
      needs_build_ = past.count != 0 && (past.indices.empty() || !list_holds(past.indices));
      if (past.count != 0 && !needs_build_) ++stats_.lists_kept;
    }
  }
}

void Engine::rebuild_if_needed() {
  if (needs_build_) {
    ScopedTimer timer(times_.broad_phase);
    rebuild();
  }
}

// Whether the pair list still holds every touching pair although the particles `over` have moved
// farther than their half skins since the build. A pair (a, b) left out of the list was at least
// reach_a + reach_b apart at the build, so it is apart now wherever e_a + e_b <= 0, e being a
// particle's displacement less its half skin: only a pair with a particle past its skin (e > 0)
// can touch. Such a particle p touches j only if j's build position lies within
// r_p + r_j + displacement_j = r_p + reach_j + e_j <= r_p + E + reach_j of p (E: the largest e),
// which is what the broad phase's near() returns: the list holds if every one of those that p
// touches now (the pair pass's own test) has its pair in it. As exact as the per-particle test,
// so the results keep their bits; most pairs move together, and on the ribbon mixer lists live
// about 16 steps instead of 12.5. Not for more than a few such particles (most_past_skins), nor
// with skin 0 (a new list every step).
bool Engine::list_holds(const std::vector<std::int32_t>& over) {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  if (settings_.skin == 0 || pairs_.offsets.size() != static_cast<std::size_t>(n) + 1) return false;
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  const auto moved = [&](std::int64_t i) { return moved2(settings_.periodic, p_.x[i], pairs_.x_at_build[i]); };
  real excess = 0;  // E
  for (const std::int32_t p : over) excess = std::max(excess, half_skin_excess(moved(p), pairs_.half_skin2[p]));
  const ParticleView pv = pview();
  const std::int32_t* row = pairs_.offsets.data();
  const std::int32_t* partner = pairs_.j.data();
  const auto listed = [&](index_t a, index_t b) {  // rows hold the higher index, increasing
    const index_t lo = std::min(a, b), hi = std::max(a, b);
    return std::binary_search(partner + row[lo], partner + row[lo + 1], static_cast<std::int32_t>(hi));
  };
  return holds_for_all(over, par, [&](index_t p, std::vector<std::int32_t>& near) {
    near.clear();
    if (!broad_phase_->near(p_.x[p], kept_list_search_radius(p_.radius[p], excess), near)) return false;
    const bool p_ghost = !ghost_.empty() && ghost_[static_cast<std::size_t>(p)];
    for (const std::int32_t j : near)
      if (j != p && !(p_ghost && ghost_[static_cast<std::size_t>(j)]) && pair_overlaps(pv, p, j) && !listed(p, j))
        return false;
    return true;
  });
}

// Each particle's half skin s_i: its reach in the pair search is r_i + s_i, and the list holds
// until some particle has moved its own s_i. With a fixed skin, s_i = skin / 2 for all. Otherwise
// s_i is what the particle could travel in kSkinSteps steps at the largest speed around it: its
// own, its candidate partners' (a collision can pass a partner's speed on), and that of the moving
// mesh bodies near it (a blade can hit it). Slow particles then get thin skins (fewer candidate
// pairs) and fast ones wide skins, so the list lives about kSkinSteps steps instead of being
// ended by the fastest particle after a few. The choice only affects speed: the rebuild test is
// exact whatever s_i is.
void Engine::update_half_skins() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  pairs_.reach.resize(n);
  pairs_.half_skin2.resize(n);
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  if (settings_.skin >= 0) {
#pragma omp parallel for schedule(static) if (par)
    for (std::int64_t i = 0; i < n; ++i) fixed_pair_skin(p_.radius[i], skin_, pairs_.reach[i], pairs_.half_skin2[i]);
    return;
  }
  std::vector<real> speed(n), local(n);
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < n; ++i) speed[i] = local[i] = norm(p_.v[i]);
  // Partners' speeds over the current list (each thread takes a range of pairs into its own
  // array; the maxima are then combined, which is exact whatever the split).
  const std::int64_t np = pairs_.offsets.size() == static_cast<std::size_t>(n) + 1 ? static_cast<std::int64_t>(pairs_.i.size()) : 0;
  const int teams = par ? omp_get_max_threads() : 1;
  std::vector<std::vector<real>> part(teams);
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<real>& m = part[t];
    m.assign(n, 0);
    for (std::int64_t k = np * t / nt; k < np * (t + 1) / nt; ++k) {
      const std::int32_t a = pairs_.i[k], b = pairs_.j[k];
      m[a] = std::max(m[a], speed[b]);
      m[b] = std::max(m[b], speed[a]);
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      for (int u = 0; u < nt; ++u) local[i] = std::max(local[i], part[u][i]);
  }
  const bool have_candidates = mesh_lists_.offsets.size() == static_cast<std::size_t>(n) + 1;
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < n; ++i) {
    real v = local[i];
    // moving bodies among the particle's mesh candidates (elements within r + mesh skin)
    if (have_candidates)
      v = speed_near_candidates(v, mesh_lists_.elements.data(), mesh_lists_.offsets[i], mesh_lists_.offsets[i + 1],
                                meshes_.elem_body.data(), motions_.data(), meshes_.frames.data(), p_.x[i], p_.radius[i]);
    adaptive_pair_skin(v, p_.radius[i], settings_.dt, r_max_, pairs_.reach[i], pairs_.half_skin2[i]);
  }
}

void Engine::rebuild() {
  // 1. Sort particles by cell. Every kResortInterval-th rebuild also re-sorts the particle arrays
  // in the broad phase's locality order; particles drift slowly, so doing it every time does not pay.
  update_half_skins();
  broad_phase_->build(p_.x, pairs_.reach);
  if (rebuilds_since_resort_++ % kResortInterval == 0) {
    permute_particles(broad_phase_->spatial_order(p_.x));
    broad_phase_->build(p_.x, pairs_.reach);
  }
  // 2. Candidate pairs on the new order, sorted by (lower index, higher index): CSR rows. (The
  // scratch vectors hold the previous list's arrays: find_pairs reuses their memory and size.)
  std::vector<std::int32_t>& a = pairs_.old_i;
  std::vector<std::int32_t>& b = pairs_.old_j;
  broad_phase_->find_pairs(p_.x, pairs_.reach, a, b);
  if (!ghost_.empty()) {  // under MPI: a pair of two ghosts is its owners' to evaluate
    std::size_t kept = 0;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!(ghost_[static_cast<std::size_t>(a[k])] && ghost_[static_cast<std::size_t>(b[k])])) {
        a[kept] = a[k];
        b[kept] = b[k];
        ++kept;
      }
    a.resize(kept);
    b.resize(kept);
  }
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(a.size());
  std::vector<std::int32_t> offsets;
  row_offsets(a, n, offsets, settings_.parallel_min);
  // 3. History: a pair that was a candidate before keeps its history. Old and new rows are both
  // sorted by partner, so each row is a merge.
  const bool have_old = pairs_.offsets.size() == static_cast<std::size_t>(n) + 1;
  PairHistory history;
  history.with_roll = pairs_.history.with_roll;
  history.resize(static_cast<std::size_t>(np));
  std::vector<std::uint8_t> touching(np);
  parallel_for(n, settings_.parallel_min, 0, [&](std::int64_t i) {
    const std::int32_t o = have_old ? pairs_.offsets[i] : 0, o_end = have_old ? pairs_.offsets[i + 1] : 0;
    const std::int32_t to = offsets[i];
    merge_row(
        b.data() + to, offsets[i + 1] - to, pairs_.j.data() + o, o_end - o,
        [&](std::int64_t from, std::int64_t k) {
          history.xi[to + k] = pairs_.history.xi[o + from];
          if (history.with_roll) history.roll[to + k] = pairs_.history.roll[o + from];
          touching[to + k] = pairs_.touching[o + from];
        },
        [&](std::int64_t k) {
          history.xi[to + k] = Vec3{0, 0, 0};
          if (history.with_roll) history.roll[to + k] = Vec3{0, 0, 0};
          touching[to + k] = 0;
        });
  });
  pairs_.offsets.swap(offsets);
  pairs_.i.swap(a);
  pairs_.j.swap(b);
  pairs_.history.swap(history);
  pairs_.touching.swap(touching);
  mark_swapped_pairs();
  lay_out_stripes();
  find_uniform_material();
  parallel_copy(p_.x, pairs_.x_at_build, settings_.parallel_min);
  last_build_step_ = steps_;
  needs_build_ = false;
  ++stats_.broad_phase_builds;
}

// Role A of each pair is the particle with the smaller id (the pair pass's roles): 1 where that
// is the higher index.
void Engine::mark_swapped_pairs() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(pairs_.i.size());
  resize_snug(pairs_.swapped, static_cast<std::size_t>(np));
  const std::int64_t* id = p_.id.data();
#pragma omp parallel for schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int32_t k = pairs_.offsets[i]; k < pairs_.offsets[i + 1]; ++k) pairs_.swapped[k] = id[i] > id[pairs_.j[k]];
}

// The stripes of the pair pass (stripe_row_): with one thread one stripe; else about 8 per thread
// (4 per round, taken dynamically), each a run of rows with about the same number of pairs. The
// stripes only decide which thread adds which loads; the sums are the same for any stripes.
void Engine::lay_out_stripes() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(pairs_.i.size());
  const int threads = static_cast<std::size_t>(np) > settings_.parallel_min ? omp_get_max_threads() : 1;
  const std::int64_t want = threads > 1 ? std::min<std::int64_t>(8 * threads, std::max<std::int64_t>(n / 64, 1)) : 1;
  stripe_row_.assign(1, 0);
  for (std::int64_t s = 1; s < want; ++s) {  // the first row at or past s / want of the pairs
    const std::int64_t target = np * s / want;
    const std::int32_t row = static_cast<std::int32_t>(
        std::lower_bound(pairs_.offsets.begin(), pairs_.offsets.end(), target) - pairs_.offsets.begin());
    if (row > stripe_row_.back() && row < n) stripe_row_.push_back(row);
  }
  stripe_row_.push_back(static_cast<std::int32_t>(n));
}

}  // namespace dem::host
