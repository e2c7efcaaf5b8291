#include "host/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <omp.h>

#include "core/geometry/sphere_sphere.hpp"
#include "host/engine/fixed_lanes.hpp"
#include "host/engine/parallel.hpp"

namespace dem::host {
namespace {
// Adds the wall time of its scope to a PhaseTimes field.
class ScopedTimer {
 public:
  explicit ScopedTimer(double& sink) : sink_(sink), start_(std::chrono::steady_clock::now()) {}
  ~ScopedTimer() { sink_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  double& sink_;
  std::chrono::steady_clock::time_point start_;
};
}  // namespace

// ---------------------------------------------------------------------------------------------
// Particles and meshes

void ParticleArrays::resize(std::size_t n) {
  const std::size_t old = size();
#define DEM_RESIZE_FIELD(T, name) name.resize(n);
  DEM_PARTICLE_FIELDS(DEM_RESIZE_FIELD)
#undef DEM_RESIZE_FIELD
  for (std::size_t i = old; i < n; ++i) q[i] = quat_identity();
}

ParticleView ParticleArrays::view() {
  ParticleView out;
#define DEM_VIEW_OF(T, name) out.name = name.data();
  DEM_PARTICLE_FIELDS(DEM_VIEW_OF)
#undef DEM_VIEW_OF
  out.n = static_cast<index_t>(size());
  return out;
}

void ParticleArrays::push_back(std::int64_t pid, Vec3 pos, Vec3 vel, Vec3 ang, real r, real density,
                               std::int32_t mat, bool fixed_velocity) {
  const real m = sphere_mass(density, r);
  id.push_back(pid);
  x.push_back(pos);
  v.push_back(vel);
  w.push_back(ang);
  q.push_back(quat_identity());
  radius.push_back(r);
  inv_mass.push_back(1 / m);
  inv_inertia.push_back(1 / sphere_inertia(m, r));
  material.push_back(mat);
  prescribed.push_back(fixed_velocity ? 1 : 0);
  force.push_back(Vec3{0, 0, 0});
  torque.push_back(Vec3{0, 0, 0});
}

// Mesh items (vertices plus elements) above which the per-step pose update runs on the threads
// (the ribbon mixer's 4,900 measured no faster on 2 threads in parallel: the pass is short there).
constexpr index_t kParallelMeshItems = 8192;

void MeshSet::update(double t) {
  time = t;
  if (ref_normals.size() != num_elements()) {  // first call: Newell normals of the reference pose
    vertices = ref_vertices;
    ref_normals.resize(num_elements());
    for (std::size_t e = 0; e < num_elements(); ++e) ref_normals[e] = polygon_normal(polygon(static_cast<index_t>(e)));
    normals = ref_normals;
  }
  update_frames(t);
  const std::vector<MeshBodyMotion> m = motions();
  const MeshView view = this->view(m);
  // Every step, so on the threads for large meshes (a serial pass over a fine mesh would leave
  // the other threads waiting).
  const bool par = view.num_vertices + view.num_elements > kParallelMeshItems;
#pragma omp parallel if (par)
  {
#pragma omp for schedule(static) nowait
    for (index_t k = 0; k < view.num_vertices; ++k) move_mesh_vertex(view, k);
#pragma omp for schedule(static)
    for (index_t e = 0; e < view.num_elements; ++e) move_mesh_normal(view, e);
  }
}

bool MeshSet::update_frames(double t) {
  bool changed = frames.size() != bodies.size();
  frames.resize(bodies.size());
  for (std::size_t b = 0; b < bodies.size(); ++b) {
    const BodyFrame f = body_frame(bodies[b], knots.data(), t);
    if (std::memcmp(&f, &frames[b], sizeof f) != 0) {
      frames[b] = f;
      changed = true;
    }
  }
  return changed;
}

std::vector<MeshBodyMotion> MeshSet::motions() const { return std::vector<MeshBodyMotion>(bodies.begin(), bodies.end()); }

MeshView MeshSet::view(const std::vector<MeshBodyMotion>& m) {
  return MeshView{m.data(),          static_cast<index_t>(m.size()),
                  knots.data(),      frames.data(),
                  ref_vertices.data(), vertices.data(),
                  static_cast<index_t>(vertices.size()), elem_offsets.data(),
                  elem_vertices.data(), elem_body.data(),
                  ref_normals.data(), normals.data(),
                  static_cast<index_t>(num_elements()), time};
}

Polygon MeshSet::polygon(index_t e) const {
  Polygon p;
  p.n = elem_offsets[e + 1] - elem_offsets[e];
  for (int k = 0; k < p.n; ++k) p.v[k] = vertices[elem_vertices[elem_offsets[e] + k]];
  return p;
}

Vec3 MeshSet::center(index_t body) const { return frames.at(static_cast<std::size_t>(body)).center; }

BodyKinematics MeshSet::kinematics(index_t body) const { return frame_kinematics(frames.at(static_cast<std::size_t>(body))); }

// ---------------------------------------------------------------------------------------------
// Engine

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

Engine::Engine(ParticleArrays particles, MeshSet meshes, std::vector<ContactParams> params, int num_materials,
               EngineSettings settings)
    : p_(std::move(particles)),
      meshes_(std::move(meshes)),
      params_(std::move(params)),
      num_materials_(num_materials),
      settings_(settings),
      broad_phase_(nullptr) {
  choose_broad_phase();
  pair_history_.with_roll = std::any_of(params_.begin(), params_.end(), [](const ContactParams& p) { return uses_second_history(p); });
  mesh_history_.with_roll = spare_history_.with_roll = pair_history_.with_roll;
  real r_max = 0;
  for (real r : p_.radius) r_max = std::max(r_max, r);
  // The mesh skin, and the pair skin when it is fixed: half the largest radius by default. (On the
  // 30k-sphere ribbon mixer, fixed skins of 0.37 r, 0.5 r and 0.75 r gave the same speed within
  // the machine's noise: cheaper rebuilds are paid for with more candidate pairs.)
  skin_ = settings_.skin >= 0 ? settings_.skin : real(0.5) * r_max;
  r_max_ = r_max;
  if (settings_.periodic.any()) {
    check_periodic_box(settings_.periodic, r_max_, mesh_skin_max(skin_, settings_.skin < 0));
    for (Vec3& x : p_.x) x = wrap_far(settings_.periodic, x);
  }
  const std::size_t n = p_.size();
  mesh_count_.assign(n, 0);
  mesh_block_.assign(n, -1);  // blocks come with the first candidate lists
  motions_ = meshes_.motions();
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
  body_force_.assign(meshes_.bodies.size(), Vec3{0, 0, 0});
  body_torque_.assign(meshes_.bodies.size(), Vec3{0, 0, 0});
  load_sizing_.start(settings_, num_materials_, p_.material, p_.radius);
  update_quantum();
  meshes_.update(0);
}

// The pair sums, one per particle, all zero (as they are between steps) where the count changed.
void Engine::ensure_pair_sums() {
  if (pair_sum_.size() == p_.size()) return;
  resize_snug(pair_sum_, p_.size());
  std::fill(pair_sum_.begin(), pair_sum_.end(), FixedLoad{});
}

void LoadSizing::start(const EngineSettings& settings, int num_materials, const std::vector<std::int32_t>& materials,
                       const std::vector<real>& radii) {
  used.assign(static_cast<std::size_t>(std::max(num_materials, 0)), 0);
  radius = settings.load_radius;
  add(settings.load_materials, {});
  add(materials, radii);
}

void LoadSizing::add(const std::vector<std::int32_t>& materials, const std::vector<real>& radii) {
  for (const std::int32_t m : materials)
    if (m >= 0 && static_cast<std::size_t>(m) < used.size()) used[static_cast<std::size_t>(m)] = 1;
  for (const real r : radii) radius = std::max(radius, r);
}

LoadQuantum LoadSizing::quantum(const std::vector<ContactParams>& table, int num_materials) const {
  real bound = 0;
  for (int a = 0; a < num_materials; ++a)
    for (int b = a; b < num_materials; ++b) {
      if (!used[a] || !used[b]) continue;
      const real f = pair_force_bound(table[static_cast<std::size_t>(a) * num_materials + b], radius);
      if (!std::isfinite(f))
        throw std::invalid_argument("the pair loads' units: spheres of materials " + std::to_string(a) + " and " +
                                    std::to_string(b) +
                                    " would meet with an infinite stiffness (a rigid material is for walls only)");
      bound = std::max(bound, f);
    }
  return quanta_for(bound, radius);
}

void Engine::update_quantum() { quantum_ = load_sizing_.quantum(params_, num_materials_); }

std::int64_t Engine::index_of(std::int64_t pid) const {
  for (std::size_t i = 0; i < p_.size(); ++i)
    if (p_.id[i] == pid) return static_cast<std::int64_t>(i);
  return -1;
}

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
#define DEM_PERMUTE_FIELD(T, name) permute_vector(p_.name, order, settings_.parallel_min);
  DEM_PARTICLE_FIELDS(DEM_PERMUTE_FIELD)
#undef DEM_PERMUTE_FIELD
  // Mesh contact slots: the blocks go with their particles (the slots stay where they are; the
  // next mesh pass makes new candidate lists and lays the blocks out in the new order).
  permute_vector(mesh_count_, order, settings_.parallel_min);
  permute_vector(mesh_block_, order, settings_.parallel_min);
  if (!x_at_build_.empty()) permute_vector(x_at_build_, order, settings_.parallel_min);
  if (!reach_.empty()) {
    permute_vector(reach_, order, settings_.parallel_min);
    permute_vector(half_skin2_, order, settings_.parallel_min);
  }
  mesh_cand_offsets_.clear();  // candidate lists are per index: rebuilt at the next step
  in_touching_.clear();        // and so is the list of particles touching a mesh
  // The pair list follows the particles: indices remapped, rows re-formed (counting sort by the
  // new lower index, then each row by partner), history and touching flags carried along.
  if (!pair_offsets_.empty()) {
    // (order may leave particles out: their pairs go with them)
    const std::size_t n = order.size(), n_old = pair_offsets_.size() - 1;
    std::vector<std::int32_t> inv(n_old, -1);
    for (std::size_t i = 0; i < n; ++i) inv[order[i]] = static_cast<std::int32_t>(i);
    std::size_t np = 0;
    for (std::size_t k = 0; k < pair_i_.size(); ++k) {
      if (inv[pair_i_[k]] < 0 || inv[pair_j_[k]] < 0) continue;
      pair_i_[np] = pair_i_[k];
      pair_j_[np] = pair_j_[k];
      pair_history_.set(np, pair_history_.get(k));
      pair_touching_[np] = pair_touching_[k];
      ++np;
    }
    pair_i_.resize(np);
    pair_j_.resize(np);
    pair_history_.resize(np);
    pair_touching_.resize(np);
    std::vector<std::int32_t> lo(np), hi(np);
    std::vector<std::int32_t> offsets(n + 1, 0);
    for (std::size_t k = 0; k < np; ++k) {
      lo[k] = std::min(inv[pair_i_[k]], inv[pair_j_[k]]);
      hi[k] = std::max(inv[pair_i_[k]], inv[pair_j_[k]]);
      ++offsets[lo[k] + 1];
    }
    for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
    std::vector<std::int32_t> cursor(offsets.begin(), offsets.end() - 1), new_i(np), new_j(np);
    PairHistory history;
    history.with_roll = pair_history_.with_roll;
    history.resize(np);
    std::vector<std::uint8_t> touching(np);
    for (std::size_t k = 0; k < np; ++k) {
      const std::int32_t to = cursor[lo[k]]++;
      new_i[to] = lo[k];
      new_j[to] = hi[k];
      history.set(to, pair_history_.get(k));
      touching[to] = pair_touching_[k];
    }
    for (std::size_t i = 0; i < n; ++i)  // insertion sort of each (short) row by partner
      for (std::int32_t k = offsets[i] + 1; k < offsets[i + 1]; ++k)
        for (std::int32_t m = k; m > offsets[i] && new_j[m - 1] > new_j[m]; --m) {
          std::swap(new_j[m - 1], new_j[m]);
          history.swap_entries(m - 1, m);
          std::swap(touching[m - 1], touching[m]);
        }
    pair_offsets_.swap(offsets);
    pair_i_.swap(new_i);
    pair_j_.swap(new_j);
    pair_history_.swap(history);
    pair_touching_.swap(touching);
  }
  needs_build_ = true;  // the stripes and the grid are per index
}

std::size_t Engine::edit_particles(const std::vector<std::int64_t>& remove_ids, const ParticleArrays& more) {
  std::vector<std::int64_t> gone(remove_ids);
  std::sort(gone.begin(), gone.end());
  std::vector<std::int64_t> order;
  order.reserve(p_.size());
  for (std::size_t i = 0; i < p_.size(); ++i)
    if (!std::binary_search(gone.begin(), gone.end(), p_.id[i])) order.push_back(static_cast<std::int64_t>(i));
  const std::size_t removed = p_.size() - order.size();
  if (removed == 0 && more.size() == 0) return 0;
  check_periodic_after_adding(settings_, r_max_, more.radius);  // before anything changes
  // the removal resolves an escape (another particle still outside fails the next check again)
  if (!status_.ok && status_.problem == kEscaped) status_ = EngineStatus{};
  if (removed) permute_particles(order);  // the kept particles, in their order, with their contacts
  if (more.size()) {
    const std::size_t n_old = p_.size(), k = more.size();
#define DEM_APPEND_FIELD(T, name) p_.name.insert(p_.name.end(), more.name.begin(), more.name.end());
    DEM_PARTICLE_FIELDS(DEM_APPEND_FIELD)
#undef DEM_APPEND_FIELD
    for (std::size_t i = n_old; i < n_old + k; ++i) p_.x[i] = wrap_far(settings_.periodic, p_.x[i]);
    mesh_count_.resize(n_old + k, 0);  // no mesh contacts and no pairs yet: empty rows
    mesh_block_.resize(n_old + k, -1);
    if (!pair_offsets_.empty()) pair_offsets_.resize(n_old + k + 1, pair_offsets_.back());
    for (real r : more.radius) r_max_ = std::max(r_max_, r);
    if (settings_.skin < 0) skin_ = std::max(skin_, real(0.5) * r_max_);
    load_sizing_.add(more.material, more.radius);
    update_quantum();
  }
  mesh_cand_offsets_.clear();  // per index: made anew at the next mesh pass
  choose_broad_phase();
  in_touching_.clear();
  touching_by_id_.clear();
  x_at_build_.clear();
  needs_build_ = true;
  {
    ScopedTimer timer(times_.broad_phase);
    rebuild();  // the lists at the new count now, so that particles() and the contacts agree at once
  }
  return removed;
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

void Engine::rebuild_if_needed() {
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
      const Vec3* x0 = x_at_build_.data();
      const real* s2 = half_skin2_.data();
      const PeriodicBox box = settings_.periodic;
      const Finds past = find_where(n, p_.size() > settings_.parallel_min, most_past_skins(n),
                                    [=](std::int64_t i) { return norm2(nearest_image(box, x[i] - x0[i])) > s2[i]; });
      needs_build_ = past.count != 0 && (past.indices.empty() || !list_holds(past.indices));
      if (past.count != 0 && !needs_build_) ++stats_.lists_kept;
    }
  }
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
  if (settings_.skin == 0 || pair_offsets_.size() != static_cast<std::size_t>(n) + 1) return false;
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  const auto moved = [&](std::int64_t i) { return norm2(nearest_image(settings_.periodic, p_.x[i] - x_at_build_[i])); };
  real excess = 0;  // E
  for (const std::int32_t p : over) excess = std::max(excess, half_skin_excess(moved(p), half_skin2_[p]));
  const ParticleView pv = pview();
  const std::int32_t* row = pair_offsets_.data();
  const std::int32_t* partner = pair_j_.data();
  const auto listed = [&](index_t a, index_t b) {  // rows hold the higher index, increasing
    const index_t lo = std::min(a, b), hi = std::max(a, b);
    return std::binary_search(partner + row[lo], partner + row[lo + 1], static_cast<std::int32_t>(hi));
  };
  return holds_for_all(over, par, [&](index_t p, std::vector<std::int32_t>& near) {
    near.clear();
    // (a millionth more: rounding never drops a partner at the limit)
    if (!broad_phase_->near(p_.x[p], (p_.radius[p] + excess) * real(1.000001), near)) return false;
    for (const std::int32_t j : near)
      if (j != p && pair_overlaps(pv, p, j) && !listed(p, j)) return false;
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
  reach_.resize(n);
  half_skin2_.resize(n);
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  if (settings_.skin >= 0) {
#pragma omp parallel for schedule(static) if (par)
    for (std::int64_t i = 0; i < n; ++i) {
      reach_[i] = p_.radius[i] + real(0.5) * skin_;
      half_skin2_[i] = real(0.25) * skin_ * skin_;
    }
    return;
  }
  std::vector<real> speed(n), local(n);
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < n; ++i) speed[i] = local[i] = norm(p_.v[i]);
  // Partners' speeds over the current list (each thread takes a range of pairs into its own
  // array; the maxima are then combined, which is exact whatever the split).
  const std::int64_t np = pair_offsets_.size() == static_cast<std::size_t>(n) + 1 ? static_cast<std::int64_t>(pair_i_.size()) : 0;
  const int teams = par ? omp_get_max_threads() : 1;
  std::vector<std::vector<real>> part(teams);
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<real>& m = part[t];
    m.assign(n, 0);
    for (std::int64_t k = np * t / nt; k < np * (t + 1) / nt; ++k) {
      const std::int32_t a = pair_i_[k], b = pair_j_[k];
      m[a] = std::max(m[a], speed[b]);
      m[b] = std::max(m[b], speed[a]);
    }
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i)
      for (int u = 0; u < nt; ++u) local[i] = std::max(local[i], part[u][i]);
  }
  const bool have_candidates = mesh_cand_offsets_.size() == static_cast<std::size_t>(n) + 1;
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < n; ++i) {
    real v = local[i];
    // Moving bodies among the particle's mesh candidates (elements within r + mesh skin): the
    // speed of the body's points at the particle's distance from the axis.
    if (have_candidates)
      for (std::int64_t k = mesh_cand_offsets_[i]; k < mesh_cand_offsets_[i + 1]; ++k)
        v = std::max(v, body_speed_near(motions_[meshes_.elem_body[mesh_cand_[k]]],
                                        meshes_.frames[meshes_.elem_body[mesh_cand_[k]]].center, p_.x[i], p_.radius[i]));
    const real s = adaptive_half_skin(v, p_.radius[i], settings_.dt, r_max_);
    reach_[i] = p_.radius[i] + s;
    half_skin2_[i] = s * s;
  }
}

void Engine::rebuild() {
  // 1. Sort particles by cell. Every kResortInterval-th rebuild also re-sorts the particle arrays
  // in the broad phase's locality order; particles drift slowly, so doing it every time does not pay.
  update_half_skins();
  broad_phase_->build(p_.x, reach_);
  if (rebuilds_since_resort_++ % kResortInterval == 0) {
    permute_particles(broad_phase_->spatial_order(p_.x));
    broad_phase_->build(p_.x, reach_);
  }
  // 2. Candidate pairs on the new order, sorted by (lower index, higher index): CSR rows. (The
  // scratch vectors hold the previous list's arrays: find_pairs reuses their memory and size.)
  std::vector<std::int32_t>& a = scratch_a_;
  std::vector<std::int32_t>& b = scratch_b_;
  broad_phase_->find_pairs(p_.x, reach_, a, b);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(a.size());
  std::vector<std::int32_t> offsets;
  row_offsets(a, n, offsets, settings_.parallel_min);
  // 3. History: a pair that was a candidate before keeps its history. Old and new rows are both
  // sorted by partner, so each row is a merge.
  const bool have_old = pair_offsets_.size() == static_cast<std::size_t>(n) + 1;
  PairHistory history;
  history.with_roll = pair_history_.with_roll;
  history.resize(static_cast<std::size_t>(np));
  std::vector<std::uint8_t> touching(np);
  parallel_for(n, settings_.parallel_min, 0, [&](std::int64_t i) {
    const std::int32_t o = have_old ? pair_offsets_[i] : 0, o_end = have_old ? pair_offsets_[i + 1] : 0;
    const std::int32_t to = offsets[i];
    merge_row(
        b.data() + to, offsets[i + 1] - to, pair_j_.data() + o, o_end - o,
        [&](std::int64_t from, std::int64_t k) {
          history.xi[to + k] = pair_history_.xi[o + from];
          if (history.with_roll) history.roll[to + k] = pair_history_.roll[o + from];
          touching[to + k] = pair_touching_[o + from];
        },
        [&](std::int64_t k) {
          history.xi[to + k] = Vec3{0, 0, 0};
          if (history.with_roll) history.roll[to + k] = Vec3{0, 0, 0};
          touching[to + k] = 0;
        });
  });
  pair_offsets_.swap(offsets);
  pair_i_.swap(a);
  pair_j_.swap(b);
  pair_history_.swap(history);
  pair_touching_.swap(touching);
  mark_swapped_pairs();
  lay_out_stripes();
  find_uniform_material();
  parallel_copy(p_.x, x_at_build_, settings_.parallel_min);
  last_build_step_ = steps_;
  needs_build_ = false;
  ++stats_.broad_phase_builds;
}

// Role A of each pair is the particle with the smaller id (the pair pass's roles): 1 where that
// is the higher index.
void Engine::mark_swapped_pairs() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(pair_i_.size());
  resize_snug(pair_swapped_, static_cast<std::size_t>(np));
  const std::int64_t* id = p_.id.data();
#pragma omp parallel for schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int32_t k = pair_offsets_[i]; k < pair_offsets_[i + 1]; ++k) pair_swapped_[k] = id[i] > id[pair_j_[k]];
}

// The stripes of the pair pass (stripe_row_): with one thread one stripe; else about 8 per thread
// (4 per round, taken dynamically), each a run of rows with about the same number of pairs. The
// stripes only decide which thread adds which loads; the sums are the same for any stripes.
void Engine::lay_out_stripes() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(pair_i_.size());
  const int threads = static_cast<std::size_t>(np) > settings_.parallel_min ? omp_get_max_threads() : 1;
  const std::int64_t want = threads > 1 ? std::min<std::int64_t>(8 * threads, std::max<std::int64_t>(n / 64, 1)) : 1;
  stripe_row_.assign(1, 0);
  for (std::int64_t s = 1; s < want; ++s) {  // the first row at or past s / want of the pairs
    const std::int64_t target = np * s / want;
    const std::int32_t row = static_cast<std::int32_t>(
        std::lower_bound(pair_offsets_.begin(), pair_offsets_.end(), target) - pair_offsets_.begin());
    if (row > stripe_row_.back() && row < n) stripe_row_.push_back(row);
  }
  stripe_row_.push_back(static_cast<std::int32_t>(n));
}

namespace {

// The batched pair pass (Engine::pair_forces): pairs whose cheap test passed and whose law is the
// default one (is_default_law) are collected kPairLanes at a time (PairLanes), and one loop over
// the lanes runs sphere_pair_loads, the same function every other path calls, for
// all of them at once: GCC turns that loop into vector code (AVX-512 or AVX2),
// which takes 2.7 times less time per contact than one pair at a time, with the same bits (the
// law has no branch there, and no fused multiply-add anywhere).
// (In one process on the 2-core EPYC, 64 lanes against 32: the pair phase 1.02-1.06 as fast on
// the bed, 1.03-1.04 on the mixer, 1.03 at 1.28 million beads; 128 against 64: bed 0.95-0.96,
// mixer 1.03. Earlier, before the lanes read the particles by index: 16 against 32 4 % slower.)
constexpr int kPairLanes = 64;
// The candidates' cheap tests run in blocks of kPairBlock (a bit mask of the ones to evaluate).
constexpr int kPairBlock = 32;
static_assert(kPairBlock <= 32, "the cheap tests' bit mask is 32 bits");
struct PairLanes {
  // B's position (its image nearest A), and A's and B's particles: the loop over the lanes reads
  // their other fields by index (the compiler's gathers). Copying the 21 fields into the lanes one
  // by one as each pair was added was slower: in one process on the 2-core EPYC, the pair phase
  // 1.04-1.11 times as fast by index on the bed and the mixer, 1.05 on the bed tiled to 1.28
  // million beads (bench/results/dev-2core-epyc/inprocess_ab.md).
  alignas(64) real xb[3][kPairLanes];
  // (64-bit like the reals: GCC sizes a loop's step by its narrowest type, so with 32-bit indices
  // it took 8 lanes a step on AVX2, two registers for every real, and spilled; 4 lanes a step take
  // 12 % fewer instructions a lane: in one process on the AVX2 machine the pair phase 1.02-1.05
  // times as fast on the bed, 1.07 on the mixer in its slow state, 0.99-1.02 in its fast state;
  // bench/results/dev-2core-milan/inprocess_ab.md)
  alignas(64) std::int64_t ia[kPairLanes], ib[kPairLanes];
  alignas(64) real e_star[kPairLanes], g_star[kPairLanes], zeta[kPairLanes], friction[kPairLanes],
      rolling_friction[kPairLanes];
  alignas(64) real xi[3][kPairLanes];                                        // in/out: the tangential history
  alignas(64) real f[3][kPairLanes], ta[3][kPairLanes], tb[3][kPairLanes];  // out: the loads
  alignas(64) std::int64_t touching[kPairLanes];                             // out
  std::int64_t pair[kPairLanes];
  int count = 0;
  const ContactParams* uniform = nullptr;  // every lane's parameters, when all pairs share them

  // Lane `count` takes pair k of spheres i (role A, the smaller id) and j (its image xj near i),
  // with its tangential spring (the default law neither reads nor writes the rolling one).
  void add(const ContactParams& prm, std::int64_t k, index_t i, index_t j, Vec3 xj, Vec3 tangential) {
    const int l = count++;
    pair[l] = k;
    ia[l] = i, ib[l] = j;
    xb[0][l] = xj.x, xb[1][l] = xj.y, xb[2][l] = xj.z;
    if (!uniform) {  // (else run sets every lane's parameters at once)
      e_star[l] = prm.e_star, g_star[l] = prm.g_star, zeta[l] = prm.zeta, friction[l] = prm.friction;
      rolling_friction[l] = prm.rolling_friction;
    }
    xi[0][l] = tangential.x, xi[1][l] = tangential.y, xi[2][l] = tangential.z;
  }

  // All lanes at once (the unused ones repeat lane 0's inputs, and are not stored); the particles'
  // fields as they are now (the pass changes none of them).
  void run(const ParticleView& p, real dt) {
    if (uniform)
      for (int l = 0; l < kPairLanes; ++l) {
        e_star[l] = uniform->e_star, g_star[l] = uniform->g_star, zeta[l] = uniform->zeta;
        friction[l] = uniform->friction, rolling_friction[l] = uniform->rolling_friction;
      }
    for (int l = count; l < kPairLanes; ++l) copy_lane(0, l);
    // (no local of the loop body may have its address taken: OpenMP would turn it into an array
    // per lane, which does not vectorise; so the lane is a call by value)
#pragma omp simd
    for (int l = 0; l < kPairLanes; ++l) {
      const std::int64_t a = ia[l], b = ib[l];
      const SpherePairResult r = default_law_pair_loads(
          e_star[l], g_star[l], zeta[l], friction[l], rolling_friction[l], Vec3{p.x[a].x, p.x[a].y, p.x[a].z},
          Vec3{p.v[a].x, p.v[a].y, p.v[a].z}, Vec3{p.w[a].x, p.w[a].y, p.w[a].z}, p.radius[a], p.inv_mass[a],
          p.inv_inertia[a], Vec3{xb[0][l], xb[1][l], xb[2][l]}, Vec3{p.v[b].x, p.v[b].y, p.v[b].z},
          Vec3{p.w[b].x, p.w[b].y, p.w[b].z}, p.radius[b], p.inv_mass[b], p.inv_inertia[b],
          Vec3{xi[0][l], xi[1][l], xi[2][l]}, dt);
      touching[l] = r.touching;
      xi[0][l] = r.history.tangential.x, xi[1][l] = r.history.tangential.y, xi[2][l] = r.history.tangential.z;
      f[0][l] = r.load.force_on_a.x, f[1][l] = r.load.force_on_a.y, f[2][l] = r.load.force_on_a.z;
      ta[0][l] = r.load.torque_on_a.x, ta[1][l] = r.load.torque_on_a.y, ta[2][l] = r.load.torque_on_a.z;
      tb[0][l] = r.load.torque_on_b.x, tb[1][l] = r.load.torque_on_b.y, tb[2][l] = r.load.torque_on_b.z;
    }
  }

  void copy_lane(int from, int to) {
    for (auto* a : {&xb, &xi})
      for (int c = 0; c < 3; ++c) (*a)[c][to] = (*a)[c][from];
    for (auto* a : {&e_star, &g_star, &zeta, &friction, &rolling_friction}) (*a)[to] = (*a)[from];
    ia[to] = ia[from], ib[to] = ib[from];
  }
};

}  // namespace

void Engine::find_uniform_material() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int32_t* m = p_.material.data();
  const std::int32_t first = n > 0 ? m[0] : kMaterialMixed;
  std::int64_t others = 0;
#pragma omp parallel for reduction(+ : others) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) others += m[i] != first;
  uniform_material_ = others == 0 ? first : kMaterialMixed;
}

void Engine::pair_forces() {
  ScopedTimer timer(times_.pair_contacts);
  const real dt = settings_.dt;
  const std::int64_t np = static_cast<std::int64_t>(pair_i_.size());
  std::size_t touching = 0;
  const ParticleView pv = pview();
  const ContactTable tab = table();
  Vec3* spring = pair_history_.xi.data();  // the default law's lanes touch only these
  Vec3* rolling = pair_history_.with_roll ? pair_history_.roll.data() : nullptr;  // (else zero for all)
  std::uint8_t* touching_flag = pair_touching_.data();
  const std::uint8_t* swapped = pair_swapped_.data();
  // One material among the particles (the common case): its parameters and whether its law is the
  // default one, once (the lookup and the test per pair cost 10 % of the pass on the bed).
  if (uniform_material_ == kMaterialUnknown) find_uniform_material();
  const bool one_material = uniform_material_ >= 0;
  const ContactParams& uniform = tab(one_material ? uniform_material_ : 0, one_material ? uniform_material_ : 0);
  const bool all_default = one_material && is_default_law(uniform);
  const bool periodic = pv.periodic.any();
  const bool sparse_springs = 2 * touching_pairs_ < static_cast<std::size_t>(np);  // (at the last pass)
  // The sums (zero between steps: the gather resets each one it reads)
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  ensure_pair_sums();
  FixedLoad* sum = pair_sum_.data();
  const LoadQuantum quantum = quantum_;
  if (np > 0 && stripe_row_.size() < 2) lay_out_stripes();  // (a rebuild lays them out; this is a guard)
  const int stripes = static_cast<int>(stripe_row_.size()) - 1;
  const bool par = static_cast<std::size_t>(np) > settings_.parallel_min;
  const int max_threads = par ? omp_get_max_threads() : 1;
  if (spill_.size() < static_cast<std::size_t>(max_threads)) spill_.resize(max_threads);
  for (auto& of_thread : spill_)
    if (of_thread.size() < static_cast<std::size_t>(max_threads)) of_thread.resize(max_threads);
  std::size_t spilled = 0;
#pragma omp parallel reduction(+ : touching, spilled) num_threads(max_threads) if (par)
  {
    const int thread = omp_get_thread_num(), threads = omp_get_num_threads();
    std::vector<std::vector<Spill>>& spills = spill_[thread];
    for (auto& to_owner : spills) to_owner.clear();
    PairLanes lanes;
    if (all_default) lanes.uniform = &uniform;
    FixedLanes<kPairLanes> q;  // the lanes' loads in quanta
    // The sums the present stripe adds to directly: up to the end of the next stripe (the pairs'
    // particles are never below the stripe's first row); beyond, a spill for the owner's thread
    std::int32_t direct_end = 0;
    const auto spill = [&](index_t target) -> FixedLoad& {
      auto& list = spills[static_cast<std::int64_t>(target) * threads / n];
      list.push_back(Spill{target, FixedLoad{}});
      return list.back().load;
    };
    const auto target_sum = [&](index_t target) -> FixedLoad& {
      return target < direct_end ? sum[target] : spill(target);
    };
    const auto store = [&] {  // the lanes' results into their pairs
      lanes.run(pv, dt);
      // every lane's loads in quanta at once (side B: its own -F, rounded as the device rounds it)
      q.convert(lanes.f, lanes.ta, lanes.tb, quantum.force_scale, quantum.torque_scale);
      for (int l = 0; l < lanes.count; ++l) {
        const std::int64_t k = lanes.pair[l];
        spring[k] = Vec3{lanes.xi[0][l], lanes.xi[1][l], lanes.xi[2][l]};
        if (lanes.touching[l]) {  // (a pair whose overlap rounds to zero adds nothing, as on the device)
          q.add_side_a(target_sum(lanes.ia[l]), l);
          q.add_side_b(target_sum(lanes.ib[l]), l);
        }
        touching_flag[k] = lanes.touching[l];
        touching += lanes.touching[l];
      }
      lanes.count = 0;
    };
    // The stripes in two rounds (lay_out_stripes), the even ones and then the odd ones, each
    // stripe on one thread, taken as the threads come free (a shared machine's cores do not run
    // at one speed). Within a stripe, the candidates in blocks of kPairBlock: their cheap tests in
    // one vectorised loop, then only the pairs that overlap or did (a bit mask: no branch per
    // candidate, which mispredicted on the quarter of a bed's candidates that do not touch and
    // most of a mixer's).
    for (int round = 0; round < 2; ++round) {
#pragma omp for schedule(dynamic, 1)
      for (int half = 0; half < (stripes - round + 1) / 2; ++half) {
        const int stripe = round + 2 * half;
        direct_end = stripe + 2 < stripes ? stripe_row_[stripe + 2] : std::numeric_limits<std::int32_t>::max();
        const std::int64_t k_begin = pair_offsets_[stripe_row_[stripe]], k_end = pair_offsets_[stripe_row_[stripe + 1]];
        for (std::int64_t k0 = k_begin; k0 < k_end; k0 += kPairBlock) {
          const int count = static_cast<int>(std::min<std::int64_t>(kPairBlock, k_end - k0));
          // The partners of the next block: the fields the lanes read are the misses here (not their
          // ids, which the lanes do not read: prefetching those instead of the masses and inertias
          // made the mixer's pair phase 5 % slower).
          if (k0 + 2 * kPairBlock < np)
            for (int l = 0; l < kPairBlock; ++l) {
              const index_t ahead = pair_j_[k0 + kPairBlock + l];
              __builtin_prefetch(&pv.x[ahead]);
              __builtin_prefetch(&pv.v[ahead]);
              __builtin_prefetch(&pv.w[ahead]);
              __builtin_prefetch(&pv.inv_mass[ahead]);
              __builtin_prefetch(&pv.inv_inertia[ahead]);
              __builtin_prefetch(&pv.radius[ahead]);
              // the partner's sum, which the lanes' adds read and write (48 bytes: two lines where it
              // straddles): in one process the pair phase 1.12-1.14 as fast on the bed tiled to 1.28
              // million beads, 1.18 on the mixer, 1.01-1.03 on the small bed
              __builtin_prefetch(&sum[ahead], 1);
              __builtin_prefetch(reinterpret_cast<const char*>(&sum[ahead]) + sizeof(FixedLoad) - 1, 1);
            }
          // The springs two blocks on, where few candidates touch: the lanes then read a few springs
          // per block, too sparsely for the hardware's stream prefetch (the ribbon mixer, a quarter
          // touching: its pair phase 1.05-1.11 as fast); where most do (a settled bed, three
          // quarters) the hardware fetches them in time, and the prefetches cost 2.5 %.
          if (sparse_springs && k0 + 3 * kPairBlock < np) {
            const char* h0 = reinterpret_cast<const char*>(spring + k0 + 2 * kPairBlock);
            for (int b = 0; b < int(kPairBlock * sizeof(Vec3)); b += 64) __builtin_prefetch(h0 + b, 1);
          }
          alignas(64) std::int32_t overlap[kPairBlock];
          const std::int32_t* pu = pair_i_.data() + k0;
          const std::int32_t* pw = pair_j_.data() + k0;
          // pair_contact's cheap test. Without periodic axes the nearest image is the difference
          // itself: the test without its selects (the same bits; the mixer +3 %). With them the same
          // loop also takes B's image nearest to A for every lane (image_near's coordinates, the same
          // bits) instead of one pair at a time as its lane is filled, where its compares were
          // branches: the settled bed +5 % (2 threads, the machine's fast state; +2.5 % on one
          // thread, no change in the slow state).
          alignas(64) real image[3][kPairBlock];
          if (!periodic) {
      #pragma omp simd
            for (int l = 0; l < count; ++l)
              overlap[l] = spheres_overlap(pv.x[pu[l]], pv.radius[pu[l]], pv.x[pw[l]], pv.radius[pw[l]]);
          } else {
            const PeriodicBox& box = pv.periodic;
            alignas(64) std::int32_t flips[kPairBlock];  // (bytes and doubles in one loop do not vectorise)
            for (int l = 0; l < count; ++l) flips[l] = swapped[k0 + l];
      #pragma omp simd
            for (int l = 0; l < count; ++l) {
              overlap[l] = pair_overlaps(pv, pu[l], pw[l]);
              const index_t a = flips[l] ? pw[l] : pu[l], b = flips[l] ? pu[l] : pw[l];  // the roles, as below
              image[0][l] = image_coord_near_diff(pv.x[a].x - pv.x[b].x, pv.x[b].x, box.length.x, box.half.x);
              image[1][l] = image_coord_near_diff(pv.x[a].y - pv.x[b].y, pv.x[b].y, box.length.y, box.half.y);
              image[2][l] = image_coord_near_diff(pv.x[a].z - pv.x[b].z, pv.x[b].z, box.length.z, box.half.z);
            }
          }
          std::uint32_t todo = 0;
          for (int l = 0; l < count; ++l) todo |= std::uint32_t((overlap[l] != 0) | (touching_flag[k0 + l] != 0)) << l;
          while (todo != 0) {
            const int l = __builtin_ctz(todo);
            todo &= todo - 1;
            const std::int64_t k = k0 + l;
            if (!overlap[l]) {  // apart now, touching before: reset (most pairs stay apart: no store)
              spring[k] = Vec3{0, 0, 0};
              if (rolling != nullptr) rolling[k] = Vec3{0, 0, 0};
              touching_flag[k] = 0;
              continue;
            }
            const index_t u = pair_i_[k], v = pair_j_[k];
            // roles by id (A: the smaller one), from the build, without a branch (it mispredicted)
            const index_t flip = (u ^ v) & -static_cast<index_t>(swapped[k]);
            const index_t i = u ^ flip, j = v ^ flip;
            const ContactParams& prm = one_material ? uniform : tab(pv.material[i], pv.material[j]);
            if (all_default || is_default_law(prm)) {
              const Vec3 xj = periodic ? Vec3{image[0][l], image[1][l], image[2][l]} : pv.x[j];
              lanes.add(prm, k, i, j, xj, spring[k]);
              if (lanes.count == kPairLanes) store();
              continue;
            }
            ContactHistory h{spring[k], rolling != nullptr ? rolling[k] : Vec3{0, 0, 0}};
            PairLoad ld;
            const bool t = touching_pair_contact(pv, tab, u, v, h, ld, dt);
            if (t) {
              add_pair_load(ld, false, quantum, target_sum(i));
              add_pair_load(ld, true, quantum, target_sum(j));
            }
            spring[k] = h.tangential;
            if (rolling != nullptr) rolling[k] = h.rolling;
            touching_flag[k] = t;
            touching += t ? 1 : 0;
          }
        }
        if (lanes.count > 0) store();  // (before the next stripe, which adds to other sums)
      }
    }
    // Both rounds are done (the loop's barrier): each thread adds the spills to its own range of
    // particles, from every thread's lists.
    for (int from = 0; from < threads; ++from) {
      for (const Spill& sp : spill_[from][thread]) add_fixed_load(sum[sp.target], sp.load);
      spilled += spill_[from][thread].size();
    }
  }
  touching_pairs_ = touching;
  stats_.pair_spills += spilled;
  stats_.pair_candidates += static_cast<std::uint64_t>(np);
  stats_.pair_contacts += touching;
}

// Whether the mesh candidate lists still hold every element each particle touches although the
// particles `over` have used their rooms (update_mesh_candidates). An element left out of particle
// i's list lay at least r_i + s_i from it at the renewal, so it can touch i only where i has used
// its room; for each such particle p, the bins (element boxes at the
// renewal, each point within the travel of where it is now) give every element within
// r_p + travel of it, and the lists hold if each one p meets now (the mesh pass's own test) is in
// p's list. The bins hold the elements within a skin more than the lists need of the particles'
// box at the renewal (MeshBins::covers): a search reaching beyond that ends the lists. Exact, like
// the per-particle test. Not for more than a few such particles (most_past_skins), nor with skin 0.
bool Engine::mesh_lists_hold(const std::vector<std::int32_t>& over) {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  if (settings_.skin == 0 || bins_.empty()) return false;
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  const real travel = mesh_travel_;
  const MeshView mv = meshes_.view(motions_);
  return holds_for_all(over, par, [&](index_t p, std::vector<std::int32_t>& near) {
    const Vec3 c = p_.x[p];
    const real r = p_.radius[p], reach = (r + travel) * real(1.000001);  // (rounding never drops one)
    if (!bins_.covers(c, reach)) return false;  // beyond what the bins hold
    bins_.query(c, reach, near);
    const std::int32_t* first = mesh_cand_.data() + mesh_cand_offsets_[p];
    const std::int32_t* last = mesh_cand_.data() + mesh_cand_offsets_[p + 1];
    for (const std::int32_t e : near)
      if (!std::binary_search(first, last, e) && element_meets_sphere(mv, e, c, r)) return false;
    return true;
  });
}

// Candidate elements per particle (Sect. 3.1), kept while they must still contain every element
// the particle can touch: elements within r + s at the build (s: the particle's mesh skin), so the
// list holds while the particle's displacement plus the largest displacement of any mesh point
// stays within s; or, sharper, within the rooms the left-out elements leave it (mesh_rooms_used,
// mesh_near_body_used: set at the renewal below).
// All lists are renewed together. Renewing each list on its own when its particle has used its
// skin was tried: on the ribbon mixer each list then lived 10 steps instead of 6, but the lists
// (in per-particle slots, or appended) were scattered in memory, and the contact loop lost what
// the search gained; it measured no faster, so the simpler scheme stays.
void Engine::update_mesh_candidates() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  mesh_travel_ += mesh_step_;
  // (skin 0: new lists every step, the reference the skins are tested against)
  bool rebuild = settings_.skin == 0 || mesh_cand_offsets_.size() != static_cast<std::size_t>(n) + 1 ||
                 x_at_mesh_build_.size() != p_.size();
  if (!rebuild) {
    const real travel = mesh_travel_;
    const Vec3* x = p_.x.data();
    const Vec3* x0 = x_at_mesh_build_.data();
    const real* still = mesh_room_still_.data();
    const real* moving = mesh_room_moving_.data();
    const PeriodicBox box = settings_.periodic;
    const bool par = p_.size() > settings_.parallel_min;
    const std::int64_t keep = most_past_skins(n);
    Finds past = find_where(n, par, keep, [=](std::int64_t i) {
      return mesh_rooms_used(norm2(nearest_image(box, x[i] - x0[i])), still[i], moving[i], travel);
    });
    // The particles near a moving body, in that body's frame (rigid: its elements keep their
    // distances there).
    const MeshNearBody* near = mesh_near_.data();
    const BodyFrame* frames = meshes_.frames.data();
    const Finds in_frame = find_where(static_cast<std::int64_t>(mesh_near_.size()), mesh_near_.size() > settings_.parallel_min, keep,
                                      [=](std::int64_t k) { return mesh_near_body_used(near[k], x[near[k].particle], frames); });
    if (in_frame.count != 0) {
      std::vector<std::int32_t> found;
      for (const std::int32_t k : in_frame.indices) found.push_back(near[k].particle);
      if (past.count > keep || in_frame.count > keep) {  // too many either way
        past.count += in_frame.count;
        past.indices.clear();
      } else {  // both in increasing order
        std::vector<std::int32_t> both(past.indices.size() + found.size());
        both.resize(static_cast<std::size_t>(std::set_union(past.indices.begin(), past.indices.end(), found.begin(),
                                                            found.end(), both.begin()) - both.begin()));
        past.count = static_cast<std::int64_t>(both.size());
        past.indices = past.count <= keep ? std::move(both) : std::vector<std::int32_t>{};
      }
    }
    rebuild = past.count != 0 && (past.indices.empty() || !mesh_lists_hold(past.indices));
    if (past.count != 0 && !rebuild) ++stats_.mesh_lists_kept;
  }
  if (!rebuild) return;
  ScopedTimer timer(times_.mesh_bins);
  // Each particle's mesh skin: fixed, or adaptive (core adaptive_mesh_skin).
  mesh_skin_.resize(static_cast<std::size_t>(n));
  const bool adaptive = settings_.skin < 0;
  const real skin_max = mesh_skin_max(skin_, adaptive);
  parallel_for(n, settings_.parallel_min, 0, [&](std::int64_t i) {
    mesh_skin_[i] = adaptive ? adaptive_mesh_skin(norm(p_.v[i]), p_.radius[i], settings_.dt, mesh_step_, skin_max) : skin_;
  });
  Vec3 lo, hi;
  points_box(p_.x, lo, hi, settings_.parallel_min);
  real q_max = 0, s_max = 0;
  std::vector<real> query(static_cast<std::size_t>(n));
#pragma omp parallel for reduction(max : q_max, s_max) schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    query[i] = p_.radius[i] + mesh_skin_[i];
    q_max = std::max(q_max, query[i]);
    s_max = std::max(s_max, mesh_skin_[i]);
  }
  // The bins hold the elements within q_max + s_max of the particles' box: a skin more than the
  // lists need, for mesh_lists_hold's searches from particles past their skins.
  const real bins_reach = q_max + s_max;
  // Bins sized by the 99th-percentile query radius: the few widest queries span several bins, and
  // the many narrow ones of a wide distribution meet fewer elements per bin (2.4 times faster on
  // spheres of 0.25 to 25 mm over a 1 mm mesh, bench/results/dev-2core-cpu/hgrid.md).
  const std::size_t q99 = static_cast<std::size_t>(n) * 99 / 100;
  std::nth_element(query.begin(), query.begin() + q99, query.end());
  const PeriodicBox& pb = settings_.periodic;
  cover_periods(pb, lo, hi, q_max);  // the searches near a face also run from the images across it
  bins_.build(meshes_, lo, hi, bins_reach, query[q99]);
  // One pass: each thread takes a contiguous range of particles and keeps its lists in order; the
  // ranges are then concatenated in order, so the lists do not depend on the thread count.
  mesh_cand_offsets_.assign(n + 1, 0);
  // Each particle's rooms (MeshRooms): the bins are searched a largest skin beyond the list's
  // reach, and the elements found there that the list leaves out bound how far the particle may
  // go before one of them can reach it (by the distance to their boxes or planes, whichever is
  // larger: both are lower bounds): a room for the still bodies (against its displacement), one
  // in the frame of the nearest moving body (against its displacement there) and one for the other
  // moving bodies (against its displacement plus their travel). Without such elements a room is
  // the skin plus that margin. On the ribbon mixer the drum is still and the beads the blades
  // carry move little in the blades' frame.
  mesh_room_still_.resize(static_cast<std::size_t>(n));
  mesh_room_moving_.resize(static_cast<std::size_t>(n));
  const std::size_t bodies = motions_.size();
  std::vector<std::uint8_t> moves(bodies);
  int moving_bodies = 0;
  for (std::size_t b = 0; b < bodies; ++b) moving_bodies += (moves[b] = !body_still(motions_[b])) != 0;
  const bool any_still = moving_bodies < static_cast<int>(bodies);  // (else no limit on the still room)
  const real margin = s_max;
  const int teams = static_cast<std::size_t>(n) > settings_.parallel_min ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::int32_t>> part(teams);
  std::vector<std::vector<MeshNearBody>> near_part(teams);
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<std::int32_t> found, more;
    std::vector<real> body_room(bodies);
    for (std::int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i) {
      const real r = p_.radius[i], s = mesh_skin_[i], q = r + s;
      // (a millionth more: rounding never drops an element at the limit)
      const real q2 = q * q * real(1.000002);
      Vec3 at[8], wider[8];
      const int images = near_face_images(pb, p_.x[i], q, at);  // 1 without periodic axes
      // Within the margin of a periodic face the wider search could take other images than the
      // list's (near_face_images assumes a period longer than twice its radius, checked only for
      // q_max): such a particle keeps its skin as its rooms and no frame room.
      const bool by_face = images > 1 || near_face_images(pb, p_.x[i], q + margin, wider) > 1;
      const real reach = by_face ? q : q + margin;
      const real far = by_face ? s : s + margin;
      real still = any_still ? far : kNoRoomLimit;
      std::fill(body_room.begin(), body_room.end(), far);
      found.clear();
      for (int k = 0; k < images; ++k) {
        bins_.query(at[k], reach, more);
        // Keep only the elements the sphere grown by the skin touches (the Fast Intersection Test
        // with radius r + skin, after the cheaper test of the element's box): the bins' box test
        // lets many more through, and each would cost a test every step until the next rebuild.
        for (const std::int32_t e : more) {
          const real box2 = bins_.box_distance2(e, at[k]);
          const Vec3 n0 = meshes_.normals[e];
          if (box2 <= q2 && fast_intersection_test(meshes_.polygon(e), n0, at[k], q)) {
            found.push_back(e);
            continue;
          }
          const Vec3 v0 = meshes_.vertices[meshes_.elem_vertices[meshes_.elem_offsets[e]]];
          const real plane = std::abs(plane_offset(v0, n0, at[k])) - bins_.planarity_slack(e);
          const real room = std::max(s, std::max(std::sqrt(box2), plane) - r);
          const index_t b = meshes_.elem_body[e];
          if (moves[b]) body_room[b] = std::min(body_room[b], room);
          else still = std::min(still, room);
        }
      }
      const MeshRooms rooms = mesh_rooms(body_room.data(), moves.data(), static_cast<index_t>(bodies), moving_bodies, far);
      mesh_room_still_[i] = still;
      mesh_room_moving_[i] = rooms.others;
      if (rooms.body >= 0) {
        const BodyFrame& f = meshes_.frames[rooms.body];
        const Vec3 in_frame = body_coordinates(f, p_.x[i]);
        // (less a millionth, and the rounding of the frame's rotation at that distance from its
        // centre: the poses' rounding never lets an element through, also in single precision)
        const real room = rooms.nearest * real(0.999999) -
                          16 * std::numeric_limits<real>::epsilon() * (norm(in_frame) + norm(f.center));
        if (room > 0) near_part[t].push_back(MeshNearBody{static_cast<std::int32_t>(i), rooms.body, room, in_frame});
      }
      std::sort(found.begin(), found.end());  // by element, as on the device engine (H2's arrival order)
      if (images > 1) found.erase(std::unique(found.begin(), found.end()), found.end());
      part[t].insert(part[t].end(), found.begin(), found.end());
      mesh_cand_offsets_[i + 1] = static_cast<std::int64_t>(found.size());
    }
  }
  for (std::int64_t i = 0; i < n; ++i) mesh_cand_offsets_[i + 1] += mesh_cand_offsets_[i];
  mesh_cand_.clear();
  for (const std::vector<std::int32_t>& p : part) mesh_cand_.insert(mesh_cand_.end(), p.begin(), p.end());
  mesh_near_.clear();
  for (const std::vector<MeshNearBody>& p : near_part) mesh_near_.insert(mesh_near_.end(), p.begin(), p.end());
  assign_mesh_blocks();
  parallel_copy(p_.x, x_at_mesh_build_, settings_.parallel_min);
  mesh_travel_ = 0;
  stats_.mesh_list_renewals += static_cast<std::uint64_t>(n);
}

// Slot blocks for the particles with candidate elements, numbered in particle order (the mesh loop
// then walks the slots in memory order), each particle's used slots copied from its old block.
// A particle without candidates can touch no element before the next lists: its contacts end here
// (the next mesh pass would end them anyway, with the same result).
void Engine::assign_mesh_blocks() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  std::vector<std::int32_t> old_block(static_cast<std::size_t>(n));
  old_block.swap(mesh_block_);
  std::int32_t blocks = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (mesh_cand_offsets_[i + 1] > mesh_cand_offsets_[i]) {
      mesh_block_[i] = blocks++;
    } else {
      mesh_block_[i] = -1;
      mesh_count_[i] = 0;
    }
  }
  const std::size_t slots = static_cast<std::size_t>(blocks) * kMaxMeshContacts;
  spare_entity_.swap(mesh_entity_);
  spare_normal_.swap(mesh_normal_);
  spare_history_.swap(mesh_history_);
  mesh_entity_.resize(slots);
  mesh_normal_.resize(slots);
  mesh_history_.resize(slots);
  mesh_slot_force_.resize(slots);  // written by the mesh pass before they are read
  mesh_slot_torque_.resize(slots);
  mesh_force_.resize(static_cast<std::size_t>(blocks));
  mesh_torque_.resize(static_cast<std::size_t>(blocks));
  parallel_for(n, settings_.parallel_min, 0, [&](std::int64_t i) {
    const int used = mesh_count_[i];
    if (used == 0) return;
    const std::int64_t from = static_cast<std::int64_t>(old_block[i]) * kMaxMeshContacts;
    const std::int64_t to = static_cast<std::int64_t>(mesh_block_[i]) * kMaxMeshContacts;
    move_mesh_slots(used, from, to, spare_entity_.data(), spare_normal_.data(), spare_history_.view(), mesh_entity_.data(),
                    mesh_normal_.data(), mesh_history_.view());
  });
}

void Engine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  mesh_contacts_ = 0;
  if (meshes_.num_elements() == 0 || n == 0) {
    std::fill(body_force_.begin(), body_force_.end(), Vec3{0, 0, 0});
    std::fill(body_torque_.begin(), body_torque_.end(), Vec3{0, 0, 0});
    return;
  }
  update_mesh_candidates();
  ScopedTimer timer(times_.mesh_contacts);
  const real dt = settings_.dt;
  std::uint64_t potential = 0, in_contact = 0, valid_total = 0, compactions = 0, slots = 0;
  std::int64_t overflow_id = -1;
  int overflow_count = 0;
  const ParticleView pv = pview();
  const MeshView mv = meshes_.view(motions_);
  const ContactTable tab = table();
  const MeshSlotsView sv = this->slots();
  // Chunks of kBodyChunk particles, dynamically scheduled: most particles touch no wall, so the
  // work is uneven. Each particle writes only its own slots; counts are reduced per thread and the
  // first overflowing particle (smallest id) is picked after the loop.
  const std::int64_t chunks = (n + kBodyChunk - 1) / kBodyChunk;
  // Particles that start touching a mesh this step, found on the way (see update_touching_by_id).
  const bool track = in_touching_.size() == p_.size();
  newcomers_.clear();
#pragma omp parallel reduction(+ : potential, in_contact, valid_total, compactions, slots) if (static_cast<std::size_t>(n) > settings_.parallel_min / 16)
  {
    H2Accumulator acc;
    std::int64_t my_overflow_id = -1;
    int my_overflow_count = 0;
    std::vector<std::int32_t> my_new;
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::int64_t end = std::min(n, (chunk + 1) * kBodyChunk);
      constexpr std::int64_t kAhead = 3;
      for (std::int64_t i = chunk * kBodyChunk; i < end; ++i) {
        const std::int64_t cb = mesh_cand_offsets_[i], n_cand = mesh_cand_offsets_[i + 1] - cb;
        if (n_cand == 0) continue;  // no block, no contacts (assign_mesh_blocks), a zero mesh force
        if (i + kAhead < end && mesh_block_[i + kAhead] >= 0) {  // the old contacts a few particles on: the misses here
          const std::size_t next = static_cast<std::size_t>(mesh_block_[i + kAhead]) * kMaxMeshContacts;
          __builtin_prefetch(&mesh_entity_[next]);
          __builtin_prefetch(&mesh_normal_[next]);
          __builtin_prefetch(&mesh_history_.xi[next]);
        }
        const std::int32_t block = mesh_block_[i];
        const MeshContactCounts c = mesh_contacts_near_walls(static_cast<index_t>(i), pv, mv, tab, sv, mesh_cand_.data() + cb,
                                                             n_cand, acc, settings_.h2_tolerance, dt, mesh_force_[block],
                                                             mesh_torque_[block]);
        potential += c.potential;
        in_contact += c.in_contact;
        valid_total += c.valid;
        compactions += c.compactions;
        slots += mesh_count_[i];
        if (track && mesh_count_[i] && !in_touching_[i]) my_new.push_back(static_cast<std::int32_t>(i));
        if (c.valid > std::uint32_t(kMaxMeshContacts) && (my_overflow_id < 0 || p_.id[i] < my_overflow_id)) {
          my_overflow_id = p_.id[i];
          my_overflow_count = static_cast<int>(c.valid);
        }
      }
    }
#pragma omp critical(dem_overflow)
    {
      if (my_overflow_id >= 0 && (overflow_id < 0 || my_overflow_id < overflow_id)) {
        overflow_id = my_overflow_id;
        overflow_count = my_overflow_count;
      }
      newcomers_.insert(newcomers_.end(), my_new.begin(), my_new.end());  // any order: sorted by id below
    }
  }
  mesh_contacts_ = static_cast<std::size_t>(slots);
  // Body loads: each particle touching a mesh summed on its own, then those particles in increasing
  // id through the tree of partial sums (core/engine/phases.hpp): the same bits whatever the
  // particle order, thread count or engine.
  update_touching_by_id(track);
  const std::int64_t m = static_cast<std::int64_t>(touching_by_id_.size());
  const index_t nb = static_cast<index_t>(meshes_.bodies.size());
  partial_force_.resize(static_cast<std::size_t>(body_partials_size(m) * nb));
  partial_torque_.resize(partial_force_.size());
  Vec3* cf = partial_force_.data();
  Vec3* ct = partial_torque_.data();
  parallel_for(m, settings_.parallel_min, 0, [&](std::int64_t k) {
    particle_body_loads(k, touching_by_id_.data(), sv, meshes_.elem_body.data(), nb, cf, ct);
  });
  const std::int64_t last =
      reduce_body_partials(m, nb, [&](std::int64_t partials, std::int64_t sums, std::int64_t in, std::int64_t out) {
        for (std::int64_t k = 0; k < sums; ++k) sum_body_partials(k, partials, nb, cf + in, ct + in, cf + out, ct + out);
      });
  for (index_t b = 0; b < nb; ++b) body_load(b, m, last, cf, ct, body_force_.data(), body_torque_.data());
  stats_.fe_potential += potential;
  stats_.fe_contact += in_contact;
  stats_.valid_entities += valid_total;
  stats_.h2_compactions += compactions;
  if (overflow_id >= 0 && status_.ok) {
    status_ = EngineStatus{false, mesh_overflow_message(overflow_id, overflow_count, steps_, time_)};
  }
}

// The particles with mesh contacts, in increasing id, kept up to date from step to step: those
// that left are dropped, the newcomers (few per step, collected by the mesh loop when
// have_newcomers) are sorted by id and merged in. Equal to a
// fresh sort of the whole set, at a fraction of its cost (a full sort each step took 2-3 % of the
// 30k-sphere mixer's step).
void Engine::update_touching_by_id(bool have_newcomers) {
  const std::size_t n = p_.size();
  if (!have_newcomers) {  // first step, or the arrays were re-sorted: start afresh
    in_touching_.assign(n, 0);
    touching_by_id_.clear();
    newcomers_.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (mesh_count_[i]) newcomers_.push_back(static_cast<std::int32_t>(i));
  }
  std::size_t kept = 0;
  for (std::int32_t i : touching_by_id_) {
    if (mesh_count_[i]) touching_by_id_[kept++] = i;
    else in_touching_[i] = 0;
  }
  touching_by_id_.resize(kept);
  for (std::int32_t i : newcomers_) in_touching_[i] = 1;
  if (newcomers_.empty()) return;
  const auto by_id = [this](std::int32_t a, std::int32_t b) { return p_.id[a] < p_.id[b]; };
  std::sort(newcomers_.begin(), newcomers_.end(), by_id);
  touching_by_id_.insert(touching_by_id_.end(), newcomers_.begin(), newcomers_.end());
  std::inplace_merge(touching_by_id_.begin(), touching_by_id_.begin() + static_cast<std::ptrdiff_t>(kept),
                     touching_by_id_.end(), by_id);
}

namespace {

// Eight lanes' components (arrays of 8) interleaved into 8 consecutive records of 3 (Vec3) or 4
// (Quat) values at `out`: whole-vector loads of what the lanes' vector loop stored, two-source
// shuffles (AVX-512: vpermt2pd) and full-width stores. The integration wrote its results back
// lane by lane before, 16 x 13 scalar loads, which waited on the vector loop's stores, and as many
// stores: in one process on the 2-core EPYC, the gather-and-integrate phase now runs 1.08-1.34
// times as fast on the mixer (step 1.00-1.08), 1.03 on the bed and 1.05 at 1.28 million beads.
// (Copying the particles' state into the lanes the same way, by loads and shuffles instead of the
// vector loop's own strided loads: 0.99-1.08, not kept.) GCC's vector extensions; other compilers
// take the lane-by-lane path.
#if defined(__GNUC__) && !defined(__clang__)
#define DEM_LANE_SHUFFLES 1
static_assert(sizeof(Quat) == 4 * sizeof(real), "the write-back takes a Quat for four packed reals");
using Real8 = real __attribute__((vector_size(8 * sizeof(real))));
using Index8 = std::conditional_t<sizeof(real) == 8, std::int64_t, std::int32_t> __attribute__((vector_size(8 * sizeof(real))));
inline Real8 load8(const real* a) {
  Real8 v;
  std::memcpy(&v, a, sizeof v);
  return v;
}
inline void store8(real* a, const Real8& v) { std::memcpy(a, &v, sizeof v); }
inline void interleave3(const real* xs, const real* ys, const real* zs, real* out) {
  const Real8 x = load8(xs), y = load8(ys), z = load8(zs);
  const Real8 t0 = __builtin_shuffle(x, y, Index8{0, 8, 0, 1, 9, 0, 2, 10});
  const Real8 t1 = __builtin_shuffle(x, y, Index8{0, 3, 11, 0, 4, 12, 0, 5});
  const Real8 t2 = __builtin_shuffle(x, y, Index8{13, 0, 6, 14, 0, 7, 15, 0});
  const Real8 o0 = __builtin_shuffle(t0, z, Index8{0, 1, 8, 3, 4, 9, 6, 7});
  const Real8 o1 = __builtin_shuffle(t1, z, Index8{10, 1, 2, 11, 4, 5, 12, 7});
  const Real8 o2 = __builtin_shuffle(t2, z, Index8{0, 13, 2, 3, 14, 5, 6, 15});
  store8(out, o0), store8(out + 8, o1), store8(out + 16, o2);
}
inline void interleave4(const real* ws, const real* xs, const real* ys, const real* zs, real* out) {
  const Real8 w = load8(ws), x = load8(xs), y = load8(ys), z = load8(zs);
  const Real8 wx_lo = __builtin_shuffle(w, x, Index8{0, 8, 1, 9, 2, 10, 3, 11});  // w0 x0 w1 x1 ...
  const Real8 wx_hi = __builtin_shuffle(w, x, Index8{4, 12, 5, 13, 6, 14, 7, 15});
  const Real8 yz_lo = __builtin_shuffle(y, z, Index8{0, 8, 1, 9, 2, 10, 3, 11});
  const Real8 yz_hi = __builtin_shuffle(y, z, Index8{4, 12, 5, 13, 6, 14, 7, 15});
  const Real8 o0 = __builtin_shuffle(wx_lo, yz_lo, Index8{0, 1, 8, 9, 2, 3, 10, 11});
  const Real8 o1 = __builtin_shuffle(wx_lo, yz_lo, Index8{4, 5, 12, 13, 6, 7, 14, 15});
  const Real8 o2 = __builtin_shuffle(wx_hi, yz_hi, Index8{0, 1, 8, 9, 2, 3, 10, 11});
  const Real8 o3 = __builtin_shuffle(wx_hi, yz_hi, Index8{4, 5, 12, 13, 6, 7, 14, 15});
  store8(out, o0), store8(out + 8, o1), store8(out + 16, o2), store8(out + 24, o3);
}
#endif

// The integration of kStepLanes particles at once (Engine::gather_and_reduce): advance_particle, the
// function every path calls, in one vectorised loop over the lanes; a particle that turns more
// than the rotation series allow in one step (rare) is taken again on its own, with the same bits
// as any other path.
constexpr int kStepLanes = 16;  // (32: 1 % slower on the bed)
struct StepLanes {
  alignas(64) real f[3][kStepLanes], t[3][kStepLanes];
  alignas(64) std::int32_t prescribed[kStepLanes];
  alignas(64) real x[3][kStepLanes], v[3][kStepLanes], w[3][kStepLanes], q[4][kStepLanes];
  alignas(64) std::int32_t done[kStepLanes];

  struct Lane {
    ParticleMotion s;
    bool done;
  };
  static Lane lane(Vec3 x, Vec3 v, Vec3 w, Quat q, Vec3 f, Vec3 t, real inv_mass, real inv_inertia, bool prescribed,
                   const PeriodicBox& periodic, Vec3 gravity, real dt) {
    ParticleMotion s{x, v, w, q};
    const bool done = advance_particle<true>(s, f, t, inv_mass, inv_inertia, prescribed, periodic, gravity, dt);
    return Lane{s, done};
  }

  // Particles i0 .. i0 + kStepLanes - 1, their forces in f and t.
  void run(const ParticleView& p, std::int64_t i0, Vec3 gravity, real dt) {
    const PeriodicBox periodic = p.periodic;
    // (component by component: a whole Vec3 copied from memory does not vectorise)
#pragma omp simd
    for (int l = 0; l < kStepLanes; ++l) {
      const std::int64_t i = i0 + l;
      const Lane r = lane(Vec3{p.x[i].x, p.x[i].y, p.x[i].z}, Vec3{p.v[i].x, p.v[i].y, p.v[i].z},
                          Vec3{p.w[i].x, p.w[i].y, p.w[i].z}, Quat{p.q[i].w, p.q[i].x, p.q[i].y, p.q[i].z},
                          Vec3{f[0][l], f[1][l], f[2][l]}, Vec3{t[0][l], t[1][l], t[2][l]}, p.inv_mass[i],
                          p.inv_inertia[i], prescribed[l] != 0, periodic, gravity, dt);
      x[0][l] = r.s.x.x, x[1][l] = r.s.x.y, x[2][l] = r.s.x.z;
      v[0][l] = r.s.v.x, v[1][l] = r.s.v.y, v[2][l] = r.s.v.z;
      w[0][l] = r.s.w.x, w[1][l] = r.s.w.y, w[2][l] = r.s.w.z;
      q[0][l] = r.s.q.w, q[1][l] = r.s.q.x, q[2][l] = r.s.q.y, q[3][l] = r.s.q.z;
      done[l] = r.done;
    }
#ifdef DEM_LANE_SHUFFLES
    static_assert(kStepLanes % 8 == 0, "the write-back interleaves 8 lanes at a time");
    int all_done = 1;
    for (int l = 0; l < kStepLanes; ++l) all_done &= done[l];
    if (all_done) {  // (the usual case)
      for (int h = 0; h < kStepLanes; h += 8) {
        interleave3(x[0] + h, x[1] + h, x[2] + h, &p.x[i0 + h].x);
        interleave3(v[0] + h, v[1] + h, v[2] + h, &p.v[i0 + h].x);
        interleave3(w[0] + h, w[1] + h, w[2] + h, &p.w[i0 + h].x);
        interleave4(q[0] + h, q[1] + h, q[2] + h, q[3] + h, &p.q[i0 + h].w);
      }
      return;
    }
#endif
    for (int l = 0; l < kStepLanes; ++l) {
      const index_t i = static_cast<index_t>(i0 + l);
      if (done[l]) {
        p.x[i] = Vec3{x[0][l], x[1][l], x[2][l]};
        p.v[i] = Vec3{v[0][l], v[1][l], v[2][l]};
        p.w[i] = Vec3{w[0][l], w[1][l], w[2][l]};
        p.q[i] = Quat{q[0][l], q[1][l], q[2][l], q[3][l]};
      } else {  // a large turn: the general step, from the state still in memory
        finish_particle(p, i, Vec3{f[0][l], f[1][l], f[2][l]}, Vec3{t[0][l], t[1][l], t[2][l]}, gravity, dt, true);
      }
    }
  }
};

}  // namespace

// Particle i's force and torque: its mesh sum plus its pair loads' integer sum, which is then set
// back to zero for the next pass.
struct LoadSums {
  const Vec3* mf;  // per block
  const Vec3* mt;
  const std::int32_t* block;
  FixedLoad* sum;
  LoadQuantum quantum;
  void operator()(std::int64_t i, Vec3& f, Vec3& t) const {
    const std::int32_t b = block[i];
    finish_load_sum(sum[i], quantum, b >= 0 ? mf[b] : Vec3{0, 0, 0}, b >= 0 ? mt[b] : Vec3{0, 0, 0}, f, t);
    sum[i] = FixedLoad{};
  }
};

void Engine::gather_and_reduce(bool and_integrate) {
  ScopedTimer timer(times_.gather);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const real dt = settings_.dt;
  const Vec3 gravity = settings_.gravity;
  const ParticleView pv = pview();
  ensure_pair_sums();
  const LoadSums sums{mesh_force_.data(), mesh_torque_.data(), mesh_block_.data(), pair_sum_.data(), quantum_};
  // Particles in groups of kStepLanes: each one's forces are summed, then the group is advanced
  // in one vectorised step (the last, partial group one by one).
  const std::int64_t groups = (n + kStepLanes - 1) / kStepLanes;
  // A plain OpenMP loop rather than parallel_for: GCC does not inline this body into the outlined
  // loop of the template, which measured 8-15 % slower here (the hottest per-particle pass).
#pragma omp parallel for schedule(dynamic, 64) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t g = 0; g < groups; ++g) {
    StepLanes lanes;
    const std::int64_t i0 = g * kStepLanes;
    const int count = static_cast<int>(std::min<std::int64_t>(kStepLanes, n - i0));
    for (int l = 0; l < count; ++l) {
      const std::int64_t i = i0 + l;
      Vec3 f, t;
      sums(i, f, t);
      // the particle's forces are complete: it is advanced in the same pass
      if (count < kStepLanes || !and_integrate) {
        finish_particle(pv, static_cast<index_t>(i), f, t, gravity, dt, and_integrate);
        continue;
      }
      pv.force[i] = f, pv.torque[i] = t;
      lanes.f[0][l] = f.x, lanes.f[1][l] = f.y, lanes.f[2][l] = f.z;
      lanes.t[0][l] = t.x, lanes.t[1][l] = t.y, lanes.t[2][l] = t.z;
      lanes.prescribed[l] = pv.prescribed[i];
    }
    if (count == kStepLanes && and_integrate) lanes.run(pv, i0, gravity, dt);
  }
}

void Simulation::change_body_motion(std::size_t body, Vec3 velocity, Vec3 angular_velocity) {
  if (body >= meshes().bodies.size())
    throw std::out_of_range("change_body_motion: no mesh body " + std::to_string(body) + " (the scene has " +
                            std::to_string(meshes().bodies.size()) + ")");
  MeshBodyMotion m = meshes().bodies[body];
  const BodyFrame now = body_frame(m, meshes().knots.data(), time());
  // the new law: constant, from now, from the present pose (a table, an oscillation, start and
  // stop give way to it)
  m.knot_count = 0;
  m.osc_omega = 0;
  m.osc_amplitude = Vec3{0, 0, 0};
  m.start = 0;
  m.stop = 1e300;
  m.t0 = time();
  m.displacement_t0 = now.center - m.center0;
  m.rotation_t0 = now.rotation;
  m.velocity = velocity;
  m.angular_velocity = angular_velocity;
  set_body_motion(body, m);
}

void Engine::set_body_motion(std::size_t body, const MeshBodyMotion& motion) {
  // The lists' rooms were measured from the bodies that move: a still body set moving (or one
  // brought to rest) needs new lists.
  if (body_still(motions_.at(body)) != body_still(motion)) mesh_cand_offsets_.clear();
  static_cast<MeshBodyMotion&>(meshes_.bodies.at(body)) = motion;
  motions_[body] = motion;
  // The candidate lists' travel bound follows the new speeds from the next step on.
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
}

// The forces of t_n: boundary pose at t_n, lists, contacts, sums; with and_integrate, the central
// differences per particle in the same pass (Eqs. 7-12).
void Engine::evaluate(bool and_integrate) {
  {
    ScopedTimer timer(times_.mesh_motion);
    meshes_.update(time_);
  }
  rebuild_if_needed();
  try {
    pair_forces();
    mesh_forces();
  } catch (...) {  // the pair sums back to zero (the next pass adds to them), then on
    std::fill(pair_sum_.begin(), pair_sum_.end(), FixedLoad{});
    throw;
  }
  gather_and_reduce(and_integrate);
}

void Engine::compute_forces() {
  if (forces_current_) return;  // already at this state: evaluating again would advance the history twice
  evaluate(false);
  forces_current_ = true;
}

void Engine::integrate_only() {
  ScopedTimer timer(times_.gather);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const ParticleView pv = pview();
  const real dt = settings_.dt;
  const Vec3 gravity = settings_.gravity;
#pragma omp parallel for schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i)
    finish_particle(pv, static_cast<index_t>(i), pv.force[i], pv.torque[i], gravity, dt, true);
}

void Engine::step() {
  if (forces_current_) integrate_only();  // the forces of t_n were computed for the output: the same bits
  else evaluate(true);
  forces_current_ = false;
  ++steps_;
  ++stats_.steps;
  time_ = static_cast<double>(steps_) * settings_.dt;
}

namespace {
template <class T, class A>
double capacity_bytes(const std::vector<T, A>& v) {
  return double(v.capacity()) * sizeof(T);
}
}  // namespace

double Engine::bytes_per_particle() const {
  if (p_.size() == 0) return 0;
  double bytes = 0;
#define DEM_FIELD_BYTES(T, name) bytes += capacity_bytes(p_.name);
  DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
  for (double b : {capacity_bytes(x_at_build_), capacity_bytes(reach_), capacity_bytes(half_skin2_),
                   capacity_bytes(pair_offsets_), capacity_bytes(pair_i_), capacity_bytes(pair_j_),
                   capacity_bytes(scratch_a_), capacity_bytes(scratch_b_), capacity_bytes(pair_history_.xi), capacity_bytes(pair_history_.roll),
                   capacity_bytes(pair_touching_), capacity_bytes(pair_swapped_), capacity_bytes(pair_sum_), capacity_bytes(stripe_row_),
                   capacity_bytes(mesh_count_), capacity_bytes(mesh_block_), capacity_bytes(mesh_entity_),
                   capacity_bytes(mesh_normal_), capacity_bytes(mesh_history_.xi), capacity_bytes(mesh_history_.roll), capacity_bytes(mesh_slot_force_),
                   capacity_bytes(mesh_slot_torque_), capacity_bytes(mesh_force_), capacity_bytes(mesh_torque_),
                   capacity_bytes(touching_by_id_), capacity_bytes(in_touching_), capacity_bytes(mesh_cand_offsets_),
                   capacity_bytes(mesh_cand_), capacity_bytes(x_at_mesh_build_), capacity_bytes(mesh_skin_), capacity_bytes(mesh_room_still_), capacity_bytes(mesh_room_moving_),
                   capacity_bytes(mesh_near_),
                   capacity_bytes(spare_entity_), capacity_bytes(spare_normal_), capacity_bytes(spare_history_.xi), capacity_bytes(spare_history_.roll)})
    bytes += b;
  for (const auto& of_thread : spill_)
    for (const auto& list : of_thread) bytes += capacity_bytes(list);
  return bytes / double(p_.size());  // the broad phase's cell arrays and the mesh bins are not counted
}

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

double Engine::max_overlap() const {
  const ParticleView pv = const_cast<Engine*>(this)->pview();
  const MeshSlotsView sv = const_cast<Engine*>(this)->slots();
  real deepest = 0;
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
#pragma omp parallel for schedule(static) reduction(max : deepest) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) deepest = std::max(deepest, mesh_overlap_fraction(pv, sv, static_cast<index_t>(i)));
  const std::int64_t pairs = static_cast<std::int64_t>(pair_i_.size());
  if (pair_touching_.size() == pair_i_.size())
#pragma omp parallel for schedule(static) reduction(max : deepest) if (static_cast<std::size_t>(pairs) > settings_.parallel_min)
    for (std::int64_t k = 0; k < pairs; ++k)
      if (pair_touching_[k]) deepest = std::max(deepest, pair_overlap_fraction(pv, pair_i_[k], pair_j_[k]));
  return deepest;
}

bool Engine::check_health(const HealthLimits& limits) {
  // The first error stands: a full block of mesh contacts must not give way to an escape found in
  // the same step, which on_escape: remove would then clear (the run went on).
  if (!status_.ok) return false;
  const ParticleView pv = pview();
  const MeshSlotsView sv = slots();
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  // The particles of touching pairs that overlap too deeply (rare: collected, then marked)
  std::vector<std::uint8_t> too_deep(static_cast<std::size_t>(n), 0);
  const std::int64_t np = static_cast<std::int64_t>(pair_i_.size());
  if (pair_offsets_.size() == static_cast<std::size_t>(n) + 1 && pair_touching_.size() == pair_i_.size()) {
    std::vector<std::int64_t> deep;
#pragma omp parallel if (static_cast<std::size_t>(np) > settings_.parallel_min)
    {
      std::vector<std::int64_t> mine;
#pragma omp for schedule(static) nowait
      for (std::int64_t k = 0; k < np; ++k)
        if (pair_touching_[k] && pair_overlap_fraction(pv, pair_i_[k], pair_j_[k]) > limits.max_overlap) mine.push_back(k);
#pragma omp critical(dem_health_pairs)
      deep.insert(deep.end(), mine.begin(), mine.end());
    }
    for (const std::int64_t k : deep) too_deep[pair_i_[k]] = too_deep[pair_j_[k]] = 1;
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
  status_ = EngineStatus{false, health_message(problem, worst_id, p_.x[worst], p_.v[worst], steps_, time_, limits), problem};
  return false;
}

void Engine::set_stats(const ContactStats& s) { stats_ = s; }

void Engine::export_state(ParticleArrays& particles, ContactState& contacts) const {
  particles = p_;
  contacts = ContactState{};
  for (std::size_t k = 0; k < pair_i_.size(); ++k) {
    if (!pair_touching_[k]) continue;  // a pair apart has no history
    const std::int64_t a = p_.id[pair_i_[k]], b = p_.id[pair_j_[k]];
    contacts.pair_a.push_back(std::min(a, b));
    contacts.pair_b.push_back(std::max(a, b));
    contacts.pair_history.push_back(pair_history_.get(k));
  }
  pack_mesh_slots(mesh_count_, mesh_block_.data(), mesh_entity_, mesh_normal_, mesh_history_.records(), contacts);
  contacts.forces_current = forces_current_;
  if (forces_current_) {
    contacts.body_force = body_force_;
    contacts.body_torque = body_torque_;
  }
}

void Engine::restore_state(const ContactState& c, std::uint64_t step) {
  const std::size_t n = p_.size();
  checked_mesh_slots(c, n, "restore_state");
  // blocks for the particles with mesh contacts; the first mesh pass makes candidate lists and
  // lays the blocks out anew
  mesh_count_ = c.mesh_count;
  mesh_block_.assign(n, -1);
  std::int32_t blocks = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (mesh_count_[i]) mesh_block_[i] = blocks++;
  std::vector<ContactHistory> history;
  unpack_mesh_slots(c, mesh_block_.data(), static_cast<std::size_t>(blocks), mesh_entity_, mesh_normal_, history);
  mesh_history_.assign(history);
  mesh_slot_force_.resize(mesh_entity_.size());
  mesh_slot_torque_.resize(mesh_entity_.size());
  mesh_force_.resize(static_cast<std::size_t>(blocks));
  mesh_torque_.resize(static_cast<std::size_t>(blocks));
  mesh_cand_offsets_.clear();
  // The touching pairs become the pair list the first rebuild carries the history from: a half
  // list in rows of the lower index, each row sorted by partner.
  std::unordered_map<std::int64_t, std::int32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index[p_.id[i]] = static_cast<std::int32_t>(i);
  const std::size_t np = c.pair_a.size();
  std::vector<std::int32_t> lo(np), hi(np);
  pair_offsets_.assign(n + 1, 0);
  for (std::size_t k = 0; k < np; ++k) {
    const auto a = index.find(c.pair_a[k]), b = index.find(c.pair_b[k]);
    if (a == index.end() || b == index.end()) throw std::runtime_error("restore_state: a pair names an unknown particle");
    lo[k] = std::min(a->second, b->second);
    hi[k] = std::max(a->second, b->second);
    ++pair_offsets_[lo[k] + 1];
  }
  for (std::size_t i = 0; i < n; ++i) pair_offsets_[i + 1] += pair_offsets_[i];
  std::vector<std::int32_t> cursor(pair_offsets_.begin(), pair_offsets_.end() - 1);
  pair_i_.resize(np);
  pair_j_.resize(np);
  pair_history_.resize(np);
  pair_touching_.assign(np, 1);
  for (std::size_t k = 0; k < np; ++k) {
    const std::int32_t to = cursor[lo[k]]++;
    pair_i_[to] = lo[k];
    pair_j_[to] = hi[k];
    pair_history_.set(to, c.pair_history[k]);
  }
  for (std::size_t i = 0; i < n; ++i)  // insertion sort of each (short) row by partner
    for (std::int32_t k = pair_offsets_[i] + 1; k < pair_offsets_[i + 1]; ++k)
      for (std::int32_t m = k; m > pair_offsets_[i] && pair_j_[m - 1] > pair_j_[m]; --m) {
        std::swap(pair_j_[m - 1], pair_j_[m]);
        pair_history_.swap_entries(m - 1, m);
      }
  stripe_row_.clear();
  std::fill(pair_sum_.begin(), pair_sum_.end(), FixedLoad{});  // (zero already, unless a pass threw)
  needs_build_ = true;
  steps_ = step;
  stats_.steps = step;
  time_ = static_cast<double>(step) * settings_.dt;
  forces_current_ = c.forces_current;
  if (forces_current_) {  // the particles' force fields hold the forces at this state
    if (c.body_force.size() != body_force_.size() || c.body_torque.size() != body_torque_.size())
      throw std::runtime_error("restore_state: the contact state is for another number of mesh bodies");
    body_force_ = c.body_force;
    body_torque_ = c.body_torque;
    meshes_.update(time_);
  }
}

}  // namespace dem::host
