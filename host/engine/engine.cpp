#include "host/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

#include <omp.h>

#include "core/geometry/sphere_sphere.hpp"

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

// Distance of the point at offset d from a body's centre to its rotation axis (along w); for a body
// that does not turn, the distance from the centre.
real distance_from_axis(Vec3 d, Vec3 w) {
  const Vec3 axis = normalized(w);
  return norm(d - dot(d, axis) * axis);
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Particles and meshes

void ParticleArrays::resize(std::size_t n) {
  id.resize(n);
  x.resize(n);
  v.resize(n);
  w.resize(n);
  q.resize(n, quat_identity());
  radius.resize(n);
  inv_mass.resize(n);
  inv_inertia.resize(n);
  material.resize(n);
  prescribed.resize(n);
  force.resize(n, Vec3{0, 0, 0});
  torque.resize(n, Vec3{0, 0, 0});
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

void MeshSet::update(double t) {
  time = t;
  if (ref_normals.size() != num_elements()) {  // first call: Newell normals of the reference pose
    vertices = ref_vertices;
    ref_normals.resize(num_elements());
    for (std::size_t e = 0; e < num_elements(); ++e) ref_normals[e] = polygon_normal(polygon(static_cast<index_t>(e)));
    normals = ref_normals;
  }
  for (const MeshBody& b : bodies) {
    const Quat rot = quat_from_rotation_vector(b.angular_velocity * real(t));
    const Vec3 c = b.center0 + b.velocity * real(t);
    for (index_t k = b.first_vertex; k < b.first_vertex + b.vertex_count; ++k)
      vertices[k] = c + rotate(rot, ref_vertices[k] - b.center0);
    for (index_t e = b.first_element; e < b.first_element + b.element_count; ++e)
      normals[e] = rotate(rot, ref_normals[e]);
  }
}

Polygon MeshSet::polygon(index_t e) const {
  Polygon p;
  p.n = elem_offsets[e + 1] - elem_offsets[e];
  for (int k = 0; k < p.n; ++k) p.v[k] = vertices[elem_vertices[elem_offsets[e] + k]];
  return p;
}

Vec3 MeshSet::center(index_t body) const { return bodies[body].center0 + bodies[body].velocity * real(time); }

BodyKinematics MeshSet::kinematics(index_t body) const {
  return BodyKinematics{center(body), bodies[body].velocity, bodies[body].angular_velocity, 0, 0, 0};
}

// ---------------------------------------------------------------------------------------------
// Engine

Engine::Engine(ParticleArrays particles, MeshSet meshes, std::vector<ContactParams> params, int num_materials,
               EngineSettings settings)
    : p_(std::move(particles)),
      meshes_(std::move(meshes)),
      params_(std::move(params)),
      num_materials_(num_materials),
      settings_(settings),
      broad_phase_(std::make_unique<UniformGridBroadPhase>()) {
  broad_phase_->set_parallel_min(settings_.parallel_min);
  real r_max = 0;
  for (real r : p_.radius) r_max = std::max(r_max, r);
  // The mesh skin, and the pair skin when it is fixed: half the largest radius by default. (On the
  // 30k-sphere ribbon mixer, fixed skins of 0.37 r, 0.5 r and 0.75 r gave the same speed within
  // the machine's noise: cheaper rebuilds are paid for with more candidate pairs.)
  skin_ = settings_.skin >= 0 ? settings_.skin : real(0.5) * r_max;
  r_max_ = r_max;
  const std::size_t n = p_.size();
  mesh_count_.assign(n, 0);
  mesh_entity_.resize(n * kMaxMeshContacts);
  mesh_normal_.resize(n * kMaxMeshContacts);
  mesh_history_.resize(n * kMaxMeshContacts);
  mesh_force_.resize(n);
  mesh_torque_.resize(n);
  body_reach_.assign(meshes_.bodies.size(), 0);
  for (std::size_t b = 0; b < meshes_.bodies.size(); ++b) {
    // Largest distance of the body's points from its rotation axis: with |w x r| = |w| * that
    // distance, it bounds how far any point moves per step.
    const MeshBody& body = meshes_.bodies[b];
    for (index_t k = body.first_vertex; k < body.first_vertex + body.vertex_count; ++k)
      body_reach_[b] = std::max(body_reach_[b], distance_from_axis(meshes_.ref_vertices[k] - body.center0, body.angular_velocity));
  }
  body_force_.assign(meshes_.bodies.size(), Vec3{0, 0, 0});
  body_torque_.assign(meshes_.bodies.size(), Vec3{0, 0, 0});
  meshes_.update(0);
}

std::int64_t Engine::index_of(std::int64_t pid) const {
  for (std::size_t i = 0; i < p_.size(); ++i)
    if (p_.id[i] == pid) return static_cast<std::int64_t>(i);
  return -1;
}

namespace {
template <class T>
void permute_vector(std::vector<T>& v, const std::vector<std::int64_t>& order, std::size_t block = 1) {
  std::vector<T> out(v.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    std::copy_n(v.begin() + order[i] * block, block, out.begin() + i * block);
  v.swap(out);
}
}  // namespace

void Engine::permute_particles(const std::vector<std::int64_t>& order) {
  permute_vector(p_.id, order);
  permute_vector(p_.x, order);
  permute_vector(p_.v, order);
  permute_vector(p_.w, order);
  permute_vector(p_.q, order);
  permute_vector(p_.radius, order);
  permute_vector(p_.inv_mass, order);
  permute_vector(p_.inv_inertia, order);
  permute_vector(p_.material, order);
  permute_vector(p_.prescribed, order);
  permute_vector(p_.force, order);
  permute_vector(p_.torque, order);
  // Mesh contact slots: only the used ones are copied (most particles touch no wall).
  {
    std::vector<EntityContact> entity(mesh_entity_.size());
    std::vector<Vec3> normal(mesh_normal_.size());
    std::vector<ContactHistory> history(mesh_history_.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      for (int s = 0; s < mesh_count_[order[i]]; ++s) {
        const std::size_t from = order[i] * kMaxMeshContacts + s, to = i * kMaxMeshContacts + s;
        entity[to] = mesh_entity_[from];
        normal[to] = mesh_normal_[from];
        history[to] = mesh_history_[from];
      }
    mesh_entity_.swap(entity);
    mesh_normal_.swap(normal);
    mesh_history_.swap(history);
  }
  permute_vector(mesh_count_, order);
  if (!x_at_build_.empty()) permute_vector(x_at_build_, order);
  if (!reach_.empty()) {
    permute_vector(reach_, order);
    permute_vector(half_skin2_, order);
  }
  mesh_cand_offsets_.clear();  // candidate lists are per index: rebuilt at the next step
  // The pair list follows the particles: indices remapped, rows re-formed (counting sort by the
  // new lower index, then each row by partner), history and touching flags carried along.
  if (!pair_offsets_.empty()) {
    const std::size_t n = order.size(), np = pair_i_.size();
    std::vector<std::int32_t> inv(n);
    for (std::size_t i = 0; i < n; ++i) inv[order[i]] = static_cast<std::int32_t>(i);
    std::vector<std::int32_t> lo(np), hi(np);
    std::vector<std::int32_t> offsets(n + 1, 0);
    for (std::size_t k = 0; k < np; ++k) {
      lo[k] = std::min(inv[pair_i_[k]], inv[pair_j_[k]]);
      hi[k] = std::max(inv[pair_i_[k]], inv[pair_j_[k]]);
      ++offsets[lo[k] + 1];
    }
    for (std::size_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
    std::vector<std::int32_t> cursor(offsets.begin(), offsets.end() - 1), new_i(np), new_j(np);
    std::vector<ContactHistory> history(np);
    std::vector<std::uint8_t> touching(np);
    for (std::size_t k = 0; k < np; ++k) {
      const std::int32_t to = cursor[lo[k]]++;
      new_i[to] = lo[k];
      new_j[to] = hi[k];
      history[to] = pair_history_[k];
      touching[to] = pair_touching_[k];
    }
    for (std::size_t i = 0; i < n; ++i)  // insertion sort of each (short) row by partner
      for (std::int32_t k = offsets[i] + 1; k < offsets[i + 1]; ++k)
        for (std::int32_t m = k; m > offsets[i] && new_j[m - 1] > new_j[m]; --m) {
          std::swap(new_j[m - 1], new_j[m]);
          std::swap(history[m - 1], history[m]);
          std::swap(touching[m - 1], touching[m]);
        }
    pair_offsets_.swap(offsets);
    pair_i_.swap(new_i);
    pair_j_.swap(new_j);
    pair_history_.swap(history);
    pair_touching_.swap(touching);
  }
  needs_build_ = true;  // the gather lists and the grid are per index
}

void Engine::rebuild_if_needed() {
  if (!needs_build_) {
    if (settings_.neighbour_interval > 0 && steps_ - last_build_step_ >= std::uint64_t(settings_.neighbour_interval)) {
      needs_build_ = true;
    } else {
      // A pair left out of the list was farther apart than reach_a + reach_b, and each reach is
      // the radius plus the particle's half skin: while no particle has moved its half skin, no
      // such pair can touch.
      int exceeded = 0;
#pragma omp parallel for reduction(max : exceeded) schedule(static) if (p_.size() > settings_.parallel_min)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(p_.size()); ++i)
        exceeded = std::max(exceeded, norm2(p_.x[i] - x_at_build_[i]) > half_skin2_[i] ? 1 : 0);
      needs_build_ = exceeded != 0;
    }
  }
  if (needs_build_) {
    ScopedTimer timer(times_.broad_phase);
    rebuild();
  }
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
  const real horizon = real(kSkinSteps) * settings_.dt;
  const bool have_candidates = mesh_cand_offsets_.size() == static_cast<std::size_t>(n) + 1;
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < n; ++i) {
    real v = local[i];
    // Moving bodies among the particle's mesh candidates (elements within r + mesh skin): the
    // speed of the body's points at the particle's distance from the axis.
    if (have_candidates)
      for (std::int64_t k = mesh_cand_offsets_[i]; k < mesh_cand_offsets_[i + 1]; ++k) {
        const index_t body = meshes_.elem_body[mesh_cand_[k]];
        const MeshBody& b = meshes_.bodies[body];
        if (norm2(b.angular_velocity) == 0 && norm2(b.velocity) == 0) continue;
        const real from_axis = distance_from_axis(p_.x[i] - meshes_.center(body), b.angular_velocity);
        v = std::max(v, norm(b.velocity) + norm(b.angular_velocity) * (from_axis + p_.radius[i]));
      }
    const real s = std::min(std::max(horizon * v, kMinHalfSkin * p_.radius[i]), kMaxHalfSkin * r_max_);
    reach_[i] = p_.radius[i] + s;
    half_skin2_[i] = s * s;
  }
}

void Engine::rebuild() {
  // 1. Sort particles by cell. Every kResortInterval-th rebuild also re-sorts the particle arrays
  // in cell order (memory locality); particles drift slowly, so doing it every time does not pay.
  update_half_skins();
  broad_phase_->build(p_.x, reach_);
  if (rebuilds_since_resort_++ % kResortInterval == 0) {
    const std::vector<std::int32_t>& cell_order = broad_phase_->spatial_order();
    permute_particles(std::vector<std::int64_t>(cell_order.begin(), cell_order.end()));
    broad_phase_->build(p_.x, reach_);
  }
  // 2. Candidate pairs on the new order, sorted by (lower index, higher index): CSR rows. (The
  // scratch vectors hold the previous list's arrays: find_pairs reuses their memory and size.)
  std::vector<std::int32_t>& a = scratch_a_;
  std::vector<std::int32_t>& b = scratch_b_;
  broad_phase_->find_pairs(p_.x, reach_, a, b);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(a.size());
  std::vector<std::int32_t> offsets(n + 1, 0);
  for (std::int64_t k = 0; k < np; ++k) ++offsets[a[k] + 1];
  for (std::int64_t i = 0; i < n; ++i) offsets[i + 1] += offsets[i];
  // 3. History: a pair that was a candidate before keeps its history. Old and new rows are both
  // sorted by partner, so each row is a merge.
  const bool have_old = pair_offsets_.size() == static_cast<std::size_t>(n) + 1;
  std::vector<ContactHistory> history(np);
  std::vector<std::uint8_t> touching(np);
#pragma omp parallel for schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    std::int32_t o = have_old ? pair_offsets_[i] : 0;
    const std::int32_t o_end = have_old ? pair_offsets_[i + 1] : 0;
    for (std::int32_t k = offsets[i]; k < offsets[i + 1]; ++k) {
      while (o < o_end && pair_j_[o] < b[k]) ++o;
      if (o < o_end && pair_j_[o] == b[k]) {
        history[k] = pair_history_[o];
        touching[k] = pair_touching_[o];
      } else {
        history[k] = ContactHistory{{0, 0, 0}, {0, 0, 0}};
        touching[k] = 0;
      }
    }
  }
  pair_offsets_.swap(offsets);
  pair_i_.swap(a);
  pair_j_.swap(b);
  pair_history_.swap(history);
  pair_touching_.swap(touching);
  pair_load_.resize(np);
  build_gather_lists();
  x_at_build_ = p_.x;
  last_build_step_ = steps_;
  needs_build_ = false;
  ++stats_.broad_phase_builds;
}

// Per-particle (pair, role) lists, each sorted by the partner's id (unique within a list), so the
// lists depend neither on the thread count nor on the particle order.
void Engine::build_gather_lists() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const std::int64_t np = static_cast<std::int64_t>(pair_i_.size());
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  const int teams = par ? omp_get_max_threads() : 1;
  const std::vector<std::int64_t>& id = p_.id;
  // Each thread takes a contiguous range of pairs and counts, per particle, the entries it adds
  // on the higher index's side; a scan turns the counts into per-thread cursors (no atomics).
  std::vector<std::vector<std::int32_t>> cursor(teams, std::vector<std::int32_t>(static_cast<std::size_t>(n), 0));
  gather_offsets_.resize(n + 1);
  gather_entries_.resize(2 * np);
  std::vector<std::int64_t> key(2 * np);  // partner id of each entry
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const std::int64_t k0 = np * t / nt, k1 = np * (t + 1) / nt;
    std::vector<std::int32_t>& cur = cursor[t];
    for (std::int64_t k = k0; k < k1; ++k) ++cur[pair_j_[k]];
#pragma omp barrier
#pragma omp single
    {
      std::int32_t c = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        gather_offsets_[i] = c;
        c += pair_offsets_[i + 1] - pair_offsets_[i];  // own row first
        for (int u = 0; u < nt; ++u) {
          const std::int32_t m = cursor[u][i];
          cursor[u][i] = c;
          c += m;
        }
      }
      gather_offsets_[n] = c;
    }
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) {  // own row: the particle is the lower index
      std::int32_t c = gather_offsets_[i];
      for (std::int32_t k = pair_offsets_[i]; k < pair_offsets_[i + 1]; ++k, ++c) {
        key[c] = id[pair_j_[k]];
        gather_entries_[c] = 2 * k + (id[i] > key[c] ? 1 : 0);
      }
    }
    for (std::int64_t k = k0; k < k1; ++k) {  // the higher index's side
      const std::int32_t j = pair_j_[k];
      const std::int32_t c = cur[j]++;
      key[c] = id[pair_i_[k]];
      gather_entries_[c] = static_cast<std::int32_t>(2 * k + (id[j] > key[c] ? 1 : 0));
    }
  }
#pragma omp parallel for schedule(static) if (par)
  for (std::int64_t i = 0; i < n; ++i) {  // insertion sort by partner id: lists are short
    const std::int32_t b = gather_offsets_[i], e = gather_offsets_[i + 1];
    for (std::int32_t s = b + 1; s < e; ++s) {
      const std::int64_t ks = key[s];
      const std::int32_t es = gather_entries_[s];
      std::int32_t m = s;
      for (; m > b && key[m - 1] > ks; --m) {
        key[m] = key[m - 1];
        gather_entries_[m] = gather_entries_[m - 1];
      }
      key[m] = ks;
      gather_entries_[m] = es;
    }
  }
}

void Engine::pair_forces() {
  ScopedTimer timer(times_.pair_contacts);
  const real dt = settings_.dt;
  const std::int64_t np = static_cast<std::int64_t>(pair_i_.size());
  std::size_t touching = 0;
  // Dynamic chunks: touching pairs (the expensive ones) cluster where the bed is dense.
#pragma omp parallel for schedule(dynamic, 2048) reduction(+ : touching) if (static_cast<std::size_t>(np) > settings_.parallel_min)
  for (std::int64_t k = 0; k < np; ++k) {
    const std::int32_t lo = pair_i_[k], hi = pair_j_[k];
    if (!spheres_overlap(p_.x[lo], p_.radius[lo], p_.x[hi], p_.radius[hi])) {  // apart: history reset (cheap path)
      if (pair_touching_[k]) {
        pair_history_[k] = ContactHistory{{0, 0, 0}, {0, 0, 0}};
        pair_touching_[k] = 0;
      }
      continue;
    }
    // Role A is the smaller id (see pair_i_), whatever the order of the arrays.
    const bool swap = p_.id[lo] > p_.id[hi];
    const std::int32_t i = swap ? hi : lo, j = swap ? lo : hi;
    const Vec3 xi = p_.x[i], xj = p_.x[j];
    const ContactGeometry g = sphere_sphere(xi, p_.radius[i], xj, p_.radius[j]);
    const BodyKinematics ka{xi, p_.v[i], p_.w[i], 1 / p_.radius[i], p_.inv_mass[i], p_.inv_inertia[i]};
    const BodyKinematics kb{xj, p_.v[j], p_.w[j], 1 / p_.radius[j], p_.inv_mass[j], p_.inv_inertia[j]};
    const ContactResult r = evaluate_contact(params(p_.material[i], p_.material[j]), g, ka, kb, pair_history_[k], dt);
    const bool t = g.overlap > 0;
    pair_touching_[k] = t;
    pair_load_[k] = PairLoad{r.force_on_a, r.torque_on_a, r.torque_on_b};
    touching += t ? 1 : 0;
  }
  touching_pairs_ = touching;
  stats_.pair_candidates += static_cast<std::uint64_t>(np);
  stats_.pair_contacts += touching;
}

// Candidate elements per particle (Sect. 3.1), kept while they must still contain every element
// the particle can touch: elements within r + skin at the build, so the list holds until the
// particle's displacement plus the largest displacement of any mesh point exceeds the skin.
// All lists are renewed together. Renewing each list on its own when its particle has used its
// skin was tried: on the ribbon mixer each list then lived 10 steps instead of 6, but the lists
// (in per-particle slots, or appended) were scattered in memory, and the contact loop lost what
// the search gained; it measured no faster, so the simpler scheme stays.
void Engine::update_mesh_candidates() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  // Bound on how far any mesh point moved during the last step: |v| dt + |w| dt * (largest
  // distance of the body's points from its rotation centre).
  real mesh_step = 0;
  for (std::size_t b = 0; b < meshes_.bodies.size(); ++b)
    mesh_step = std::max(mesh_step, (norm(meshes_.bodies[b].velocity) + norm(meshes_.bodies[b].angular_velocity) *
                                                                            body_reach_[b]) * settings_.dt);
  mesh_travel_ += mesh_step;
  bool rebuild = mesh_cand_offsets_.size() != static_cast<std::size_t>(n) + 1 || x_at_mesh_build_.size() != p_.size();
  if (!rebuild) {
    real max_d2 = 0;
#pragma omp parallel for reduction(max : max_d2) schedule(static) if (p_.size() > settings_.parallel_min)
    for (std::int64_t i = 0; i < n; ++i) max_d2 = std::max(max_d2, norm2(p_.x[i] - x_at_mesh_build_[i]));
    rebuild = std::sqrt(max_d2) + mesh_travel_ > skin_;
  }
  if (!rebuild) return;
  ScopedTimer timer(times_.mesh_bins);
  Vec3 lo = p_.x[0], hi = p_.x[0];
  real r_max = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    lo = Vec3{std::min(lo.x, p_.x[i].x), std::min(lo.y, p_.x[i].y), std::min(lo.z, p_.x[i].z)};
    hi = Vec3{std::max(hi.x, p_.x[i].x), std::max(hi.y, p_.x[i].y), std::max(hi.z, p_.x[i].z)};
    r_max = std::max(r_max, p_.radius[i]);
  }
  bins_.build(meshes_, lo, hi, r_max + skin_);
  // One pass: each thread takes a contiguous range of particles and keeps its lists in order; the
  // ranges are then concatenated in order, so the lists do not depend on the thread count.
  mesh_cand_offsets_.assign(n + 1, 0);
  const int teams = static_cast<std::size_t>(n) > settings_.parallel_min ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::int32_t>> part(teams);
#pragma omp parallel num_threads(teams) if (teams > 1)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    std::vector<std::int32_t> found;
    for (std::int64_t i = n * t / nt; i < n * (t + 1) / nt; ++i) {
      bins_.query(p_.x[i], p_.radius[i] + skin_, found);
      // Keep only the elements the sphere grown by the skin touches (the Fast Intersection Test
      // with radius r + skin): the bins' box test lets many more through, and each would cost a
      // test every step until the next rebuild.
      std::int64_t kept = 0;
      for (std::int32_t e : found)
        if (fast_intersection_test(meshes_.polygon(e), meshes_.normals[e], p_.x[i], p_.radius[i] + skin_)) {
          part[t].push_back(e);
          ++kept;
        }
      mesh_cand_offsets_[i + 1] = kept;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) mesh_cand_offsets_[i + 1] += mesh_cand_offsets_[i];
  mesh_cand_.clear();
  for (const std::vector<std::int32_t>& p : part) mesh_cand_.insert(mesh_cand_.end(), p.begin(), p.end());
  x_at_mesh_build_ = p_.x;
  mesh_travel_ = 0;
  stats_.mesh_list_renewals += static_cast<std::uint64_t>(n);
}

void Engine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  mesh_contacts_ = 0;
  if (meshes_.num_elements() == 0 || n == 0) {
    std::fill(mesh_force_.begin(), mesh_force_.end(), Vec3{0, 0, 0});
    std::fill(mesh_torque_.begin(), mesh_torque_.end(), Vec3{0, 0, 0});
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
  // The particles go in fixed chunks, each summed in particle order into its own body loads; the
  // chunk sums are added in chunk order afterwards. The chunking does not depend on the thread
  // count, so neither do the body loads (bitwise).
  const std::size_t nb = meshes_.bodies.size();
  const std::int64_t chunks = (n + kBodyChunk - 1) / kBodyChunk;
  chunk_force_.assign(static_cast<std::size_t>(chunks) * nb, Vec3{0, 0, 0});
  chunk_torque_.assign(static_cast<std::size_t>(chunks) * nb, Vec3{0, 0, 0});
#pragma omp parallel reduction(+ : potential, in_contact, valid_total, compactions, slots) if (static_cast<std::size_t>(n) > settings_.parallel_min / 16)
  {
    H2Accumulator acc;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      for (std::int64_t i = chunk * kBodyChunk; i < std::min(n, (chunk + 1) * kBodyChunk); ++i) {
        const int n_old = mesh_count_[i];
        if (n_old == 0 && mesh_cand_offsets_[i + 1] == mesh_cand_offsets_[i]) {  // most particles
          mesh_force_[i] = Vec3{0, 0, 0};
          mesh_torque_[i] = Vec3{0, 0, 0};
          continue;
        }
        const Vec3 c = p_.x[i];
        const real r = p_.radius[i];
        EntityContact old_entity[kMaxMeshContacts];
        Vec3 old_normal[kMaxMeshContacts];
        ContactHistory old_history[kMaxMeshContacts];
        bool old_used[kMaxMeshContacts] = {};
        for (int s = 0; s < n_old; ++s) {
          old_entity[s] = mesh_entity_[i * kMaxMeshContacts + s];
          old_normal[s] = mesh_normal_[i * kMaxMeshContacts + s];
          old_history[s] = mesh_history_[i * kMaxMeshContacts + s];
        }
        h2_begin(acc, c, settings_.h2_tolerance);
        potential += static_cast<std::uint64_t>(mesh_cand_offsets_[i + 1] - mesh_cand_offsets_[i]);
        for (std::int64_t k = mesh_cand_offsets_[i]; k < mesh_cand_offsets_[i + 1]; ++k) {
          const std::int32_t e = mesh_cand_[k];
          const Polygon poly = meshes_.polygon(e);
          const Vec3 n0 = meshes_.normals[e];
          if (!fast_intersection_test(poly, n0, c, r)) continue;  // Sect. 4
          ++in_contact;
          contact_type_hierarchy(acc, poly, n0, e, r);            // Sect. 5.1
        }
        const int n_valid = h2_finish(acc);                   // Sect. 5.2
        compactions += static_cast<std::uint64_t>(acc.compactions);
        valid_total += static_cast<std::uint64_t>(n_valid);
        if (n_valid > kMaxMeshContacts) {
  #pragma omp critical(dem_overflow)
          if (overflow_id < 0 || p_.id[i] < overflow_id) {
            overflow_id = p_.id[i];
            overflow_count = n_valid;
          }
        }
        const int n_new = std::min(n_valid, kMaxMeshContacts);
        Vec3 f{0, 0, 0}, t{0, 0, 0};
        const BodyKinematics ka{c, p_.v[i], p_.w[i], 1 / r, p_.inv_mass[i], p_.inv_inertia[i]};
        for (int s = 0; s < n_new; ++s) {
          const EntityContact& ec = acc.c[s];
          const index_t body = meshes_.elem_body[ec.element];
          const ContactGeometry g = entity_contact_geometry(ec, c, r, meshes_.normals[ec.element]);
          // History: the same entity, else the unused old contact on the same body whose normal is
          // closest (within 10 degrees). The second rule carries the tangential spring across element
          // transitions (santasusana2016 Sect. 7.2), so sliding over internal edges of a plane gives
          // the same result however finely the plane is meshed.
          int match = -1;
          real best = real(0.984807753);  // cos(10 degrees)
          for (int o = 0; o < n_old; ++o) {
            if (old_used[o]) continue;
            if (old_entity[o].element == ec.element && old_entity[o].type == ec.type && old_entity[o].entity == ec.entity) {
              match = o;
              break;
            }
            const real d = dot(old_normal[o], g.normal);
            if (meshes_.elem_body[old_entity[o].element] == body && d > best) {
              best = d;
              match = o;
            }
          }
          ContactHistory h{{0, 0, 0}, {0, 0, 0}};
          if (match >= 0) {
            old_used[match] = true;
            h = old_history[match];
          }
          const ContactResult res = evaluate_contact(params(p_.material[i], meshes_.bodies[body].material), g, ka,
                                                     meshes_.kinematics(body), h, dt);
          const std::int64_t slot = i * kMaxMeshContacts + s;
          mesh_entity_[slot] = ec;
          mesh_normal_[slot] = g.normal;
          mesh_history_[slot] = h;
          chunk_force_[chunk * nb + body] -= res.force_on_a;
          chunk_torque_[chunk * nb + body] += res.torque_on_b;
          f += res.force_on_a;
          t += res.torque_on_a;
        }
        mesh_count_[i] = static_cast<std::uint8_t>(n_new);
        slots += static_cast<std::uint64_t>(n_new);
        mesh_force_[i] = f;
        mesh_torque_[i] = t;
      }
    }
  }
  mesh_contacts_ = static_cast<std::size_t>(slots);
  for (std::size_t b = 0; b < nb; ++b) {
    body_force_[b] = Vec3{0, 0, 0};
    body_torque_[b] = Vec3{0, 0, 0};
    for (std::int64_t c = 0; c < chunks; ++c) {
      body_force_[b] += chunk_force_[c * nb + b];
      body_torque_[b] += chunk_torque_[c * nb + b];
    }
  }
  stats_.fe_potential += potential;
  stats_.fe_contact += in_contact;
  stats_.valid_entities += valid_total;
  stats_.h2_compactions += compactions;
  if (overflow_id >= 0 && status_.ok) {
    std::ostringstream msg;
    msg << "particle " << overflow_id << " has " << overflow_count << " valid mesh contacts at step " << steps_
        << " (t = " << time_ << " s), more than the capacity kMaxMeshContacts = " << kMaxMeshContacts
        << " (core/dhm/h2_filter.hpp). The particle is probably deep inside a mesh: reduce the time step, check "
           "the mesh for overlapping or duplicated surfaces, or raise the capacity.";
    status_ = EngineStatus{false, msg.str()};
  }
}

void Engine::gather_and_reduce(bool and_integrate) {
  ScopedTimer timer(times_.gather);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  const real dt = settings_.dt;
  const Vec3 gravity = settings_.gravity;
#pragma omp parallel for schedule(dynamic, 1024) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    Vec3 f = mesh_force_[i], t = mesh_torque_[i];
    for (std::int32_t s = gather_offsets_[i]; s < gather_offsets_[i + 1]; ++s) {
      const std::int32_t entry = gather_entries_[s];
      if (!pair_touching_[entry / 2]) continue;
      const PairLoad& r = pair_load_[entry / 2];
      if (entry % 2 == 0) {
        f += r.force_on_a;
        t += r.torque_on_a;
      } else {
        f -= r.force_on_a;
        t += r.torque_on_b;
      }
    }
    p_.force[i] = f;
    p_.torque[i] = t;
    if (and_integrate) {  // the particle's forces are complete: advance it in the same pass
      ParticleMotion m{p_.x[i], p_.v[i], p_.w[i], p_.q[i]};
      central_difference_step(m, f, t, p_.inv_mass[i], p_.inv_inertia[i], gravity, p_.prescribed[i] != 0, dt);
      p_.x[i] = m.x;
      p_.v[i] = m.v;
      p_.w[i] = m.w;
      p_.q[i] = m.q;
    }
  }
}

void Engine::compute_forces() {
  rebuild_if_needed();
  pair_forces();
  mesh_forces();
  gather_and_reduce(false);
}

void Engine::step() {
  {
    ScopedTimer timer(times_.mesh_motion);
    meshes_.update(time_);  // boundary pose at t_n, with the forces of t_n
  }
  rebuild_if_needed();
  pair_forces();
  mesh_forces();
  gather_and_reduce(true);  // sums, then central differences per particle (Eqs. 7-12)
  ++steps_;
  ++stats_.steps;
  time_ = static_cast<double>(steps_) * settings_.dt;
}

bool Engine::check_finite() {
  for (std::size_t i = 0; i < p_.size(); ++i) {
    if (is_finite(p_.x[i]) && is_finite(p_.v[i]) && is_finite(p_.w[i])) continue;
    std::ostringstream msg;
    msg << "particle " << p_.id[i] << " has a non-finite position or velocity at step " << steps_ << " (t = " << time_
        << " s). The time step is probably too large for the stiffest contact: reduce simulation.dt (Hertz "
           "contact time ~ 2.87 (m*^2 / (R* E*^2 v))^(1/5) should span at least 20 steps).";
    status_ = EngineStatus{false, msg.str()};
    return false;
  }
  return true;
}

}  // namespace dem::host
