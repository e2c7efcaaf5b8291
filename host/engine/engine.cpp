#include "host/engine/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <sstream>

#include "core/contact/history_map.hpp"
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
  for (const MeshBody& b : bodies) {
    const Quat rot = quat_from_rotation_vector(b.angular_velocity * real(t));
    const Vec3 c = b.center0 + b.velocity * real(t);
    for (index_t k = b.first_vertex; k < b.first_vertex + b.vertex_count; ++k)
      vertices[k] = c + rotate(rot, ref_vertices[k] - b.center0);
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
  // Default skin: half the largest radius. Measured on the 30k-sphere ribbon mixer (2 threads):
  // 0.25 r rebuilds every 3 steps (1.65e6 particle-steps/s), 0.5 r every 6 (2.0e6), 0.75 r every
  // 8 but with more candidate pairs (1.9e6).
  skin_ = settings_.skin >= 0 ? settings_.skin : real(0.5) * r_max;
  const std::size_t n = p_.size();
  mesh_count_.assign(n, 0);
  mesh_entity_.resize(n * kMaxMeshContacts);
  mesh_normal_.resize(n * kMaxMeshContacts);
  mesh_history_.resize(n * kMaxMeshContacts);
  slot_body_force_.resize(n * kMaxMeshContacts);
  slot_body_torque_.resize(n * kMaxMeshContacts);
  mesh_force_.resize(n);
  mesh_torque_.resize(n);
  body_reach_.assign(meshes_.bodies.size(), 0);
  for (std::size_t b = 0; b < meshes_.bodies.size(); ++b) {
    // Largest distance of the body's points from its rotation axis: with |w x r| = |w| * that
    // distance, it bounds how far any point moves per step.
    const MeshBody& body = meshes_.bodies[b];
    const Vec3 axis = normalized(body.angular_velocity);
    for (index_t k = body.first_vertex; k < body.first_vertex + body.vertex_count; ++k) {
      const Vec3 r = meshes_.ref_vertices[k] - body.center0;
      body_reach_[b] = std::max(body_reach_[b], norm(r - dot(r, axis) * axis));
    }
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
  mesh_cand_offsets_.clear();  // candidate lists are per index: rebuilt at the next step
  // Pair indices are stale now; the pair history is keyed by ids and survives the rebuild.
  needs_build_ = true;
}

void Engine::rebuild_if_needed() {
  if (!needs_build_) {
    if (settings_.neighbour_interval > 0 && steps_ - last_build_step_ >= std::uint64_t(settings_.neighbour_interval)) {
      needs_build_ = true;
    } else {
      // Rebuild when two particles may together have moved the skin: max displacement > skin/2.
      real max_d2 = 0;
#pragma omp parallel for reduction(max : max_d2) schedule(static) if (p_.size() > settings_.parallel_min)
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(p_.size()); ++i)
        max_d2 = std::max(max_d2, norm2(p_.x[i] - x_at_build_[i]));
      needs_build_ = 4 * max_d2 > skin_ * skin_;
    }
  }
  if (needs_build_) {
    ScopedTimer timer(times_.broad_phase);
    rebuild();
  }
}

void Engine::rebuild() {
  // 1. Sort particles by cell. Every kResortInterval-th rebuild also re-sorts the particle arrays
  // in cell order (memory locality); particles drift slowly, so doing it every time does not pay.
  broad_phase_->build(p_.x, p_.radius, skin_);
  if (rebuilds_since_resort_++ % kResortInterval == 0) {
    const std::vector<std::int32_t>& cell_order = broad_phase_->spatial_order();
    permute_particles(std::vector<std::int64_t>(cell_order.begin(), cell_order.end()));
    broad_phase_->build(p_.x, p_.radius, skin_);
  }
  // 2. Candidate pairs on the new order, keyed by particle ids and sorted by key.
  std::vector<std::int32_t> a, b;
  broad_phase_->find_pairs(p_.x, p_.radius, skin_, a, b);
  const std::size_t np = a.size();
  std::vector<std::pair<std::uint64_t, std::int64_t>> sorted(np);  // (key, position in a/b)
  for (std::size_t k = 0; k < np; ++k) sorted[k] = {pair_key(p_.id[a[k]], p_.id[b[k]]), static_cast<std::int64_t>(k)};
  std::sort(sorted.begin(), sorted.end());
  // 3. Carry the history of every pair that was a candidate before (binary search on old keys).
  std::vector<std::uint64_t> new_key(np);
  std::vector<std::int32_t> new_a(np), new_b(np);
  std::vector<ContactHistory> new_history(np);
#pragma omp parallel for schedule(static) if (np > settings_.parallel_min)
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(np); ++k) {
    const std::int64_t s = sorted[k].second;
    new_key[k] = sorted[k].first;
    // Role A is always the smaller id, so the sign of the stored tangential spring stays valid.
    const bool swap = p_.id[a[s]] > p_.id[b[s]];
    new_a[k] = swap ? b[s] : a[s];
    new_b[k] = swap ? a[s] : b[s];
    const std::int64_t old = find_key(pair_key_.data(), static_cast<std::int64_t>(pair_key_.size()), new_key[k]);
    new_history[k] = old >= 0 ? pair_history_[old] : ContactHistory{{0, 0, 0}, {0, 0, 0}};
  }
  pair_key_.swap(new_key);
  pair_a_.swap(new_a);
  pair_b_.swap(new_b);
  pair_history_.swap(new_history);
  pair_result_.resize(np);
  // 4. Per-particle gather lists (CSR over both roles, in pair order): a fixed summation order.
  const std::size_t n = p_.size();
  std::vector<std::uint32_t> owner(2 * np);
  for (std::size_t k = 0; k < np; ++k) {
    owner[2 * k] = static_cast<std::uint32_t>(pair_a_[k]);
    owner[2 * k + 1] = static_cast<std::uint32_t>(pair_b_[k]);
  }
  counting_sort(owner, static_cast<std::uint32_t>(n), gather_offsets_, gather_entries_);
  x_at_build_ = p_.x;
  last_build_step_ = steps_;
  needs_build_ = false;
  ++stats_.broad_phase_builds;
}

void Engine::pair_forces() {
  ScopedTimer timer(times_.pair_contacts);
  const real dt = settings_.dt;
  std::size_t touching = 0;
#pragma omp parallel for schedule(static) reduction(+ : touching) if (pair_key_.size() > settings_.parallel_min)
  for (std::int64_t k = 0; k < static_cast<std::int64_t>(pair_key_.size()); ++k) {
    const std::int32_t i = pair_a_[k], j = pair_b_[k];
    const ContactGeometry g = sphere_sphere(p_.x[i], p_.radius[i], p_.x[j], p_.radius[j]);
    const BodyKinematics ka{p_.x[i], p_.v[i], p_.w[i], 1 / p_.radius[i], p_.inv_mass[i], p_.inv_inertia[i]};
    const BodyKinematics kb{p_.x[j], p_.v[j], p_.w[j], 1 / p_.radius[j], p_.inv_mass[j], p_.inv_inertia[j]};
    pair_result_[k] = evaluate_contact(params(p_.material[i], p_.material[j]), g, ka, kb, pair_history_[k], dt);
    if (g.overlap > 0) ++touching;
  }
  touching_pairs_ = touching;
  stats_.pair_candidates += pair_key_.size();
  stats_.pair_contacts += touching;
}

// Candidate elements per particle (Sect. 3.1), kept while they must still contain every element
// the particle can touch: elements within r + skin at the build, so the list holds until the
// particle's displacement plus the largest displacement of any mesh point exceeds the skin.
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
  // Two passes (count, scan, fill): the lists and their order do not depend on the thread count.
  mesh_cand_offsets_.assign(n + 1, 0);
  for (int pass = 0; pass < 2; ++pass) {
#pragma omp parallel if (static_cast<std::size_t>(n) > settings_.parallel_min)
    {
      std::vector<std::int32_t> found;
#pragma omp for schedule(dynamic, 64)
      for (std::int64_t i = 0; i < n; ++i) {
        bins_.query(p_.x[i], p_.radius[i] + skin_, found);
        if (pass == 0) mesh_cand_offsets_[i + 1] = static_cast<std::int64_t>(found.size());
        else std::copy(found.begin(), found.end(), mesh_cand_.begin() + mesh_cand_offsets_[i]);
      }
    }
    if (pass == 0) {
      for (std::int64_t i = 0; i < n; ++i) mesh_cand_offsets_[i + 1] += mesh_cand_offsets_[i];
      mesh_cand_.resize(mesh_cand_offsets_[n]);
    }
  }
  x_at_mesh_build_ = p_.x;
  mesh_travel_ = 0;
}

void Engine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  std::fill(mesh_force_.begin(), mesh_force_.end(), Vec3{0, 0, 0});
  std::fill(mesh_torque_.begin(), mesh_torque_.end(), Vec3{0, 0, 0});
  mesh_contacts_ = 0;
  if (meshes_.num_elements() == 0 || n == 0) return;
  update_mesh_candidates();
  ScopedTimer timer(times_.mesh_contacts);
  const real dt = settings_.dt;
  std::uint64_t potential = 0, in_contact = 0, valid_total = 0, compactions = 0;
  std::int64_t overflow_id = -1;
  int overflow_count = 0;
#pragma omp parallel reduction(+ : potential, in_contact, valid_total, compactions) if (static_cast<std::size_t>(n) > settings_.parallel_min / 16)
  {
    H2Accumulator acc;
#pragma omp for schedule(dynamic, 64)
    for (std::int64_t i = 0; i < n; ++i) {
      const Vec3 c = p_.x[i];
      const real r = p_.radius[i];
      EntityContact old_entity[kMaxMeshContacts];
      Vec3 old_normal[kMaxMeshContacts];
      ContactHistory old_history[kMaxMeshContacts];
      bool old_used[kMaxMeshContacts] = {};
      const int n_old = mesh_count_[i];
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
        if (!fast_intersection_test(poly, c, r)) continue;  // Sect. 4
        ++in_contact;
        contact_type_hierarchy(acc, poly, e, r);            // Sect. 5.1
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
        const ContactGeometry g = entity_contact_geometry(ec, c, r, polygon_normal(meshes_.polygon(ec.element)));
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
        slot_body_force_[slot] = -res.force_on_a;
        slot_body_torque_[slot] = res.torque_on_b;
        f += res.force_on_a;
        t += res.torque_on_a;
      }
      mesh_count_[i] = static_cast<std::uint8_t>(n_new);
      mesh_force_[i] = f;
      mesh_torque_[i] = t;
    }
  }
  for (std::int64_t i = 0; i < n; ++i) mesh_contacts_ += mesh_count_[i];
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

void Engine::gather_and_reduce() {
  ScopedTimer timer(times_.gather);
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
#pragma omp parallel for schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    Vec3 f = mesh_force_[i], t = mesh_torque_[i];
    for (std::int32_t s = gather_offsets_[i]; s < gather_offsets_[i + 1]; ++s) {
      const std::int32_t entry = gather_entries_[s];
      const ContactResult& r = pair_result_[entry / 2];
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
  }
  // Body loads: fixed-size chunks summed in parallel, then the chunk sums in chunk order. The
  // chunking does not depend on the thread count, so neither does the result (bitwise).
  const std::size_t nb = meshes_.bodies.size();
  if (nb == 0) return;
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<Vec3> chunk_f(chunks * nb, Vec3{0, 0, 0}), chunk_t(chunks * nb, Vec3{0, 0, 0});
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c)
    for (std::int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i)
      for (int s = 0; s < mesh_count_[i]; ++s) {
        const std::int64_t slot = i * kMaxMeshContacts + s;
        const std::size_t body = static_cast<std::size_t>(meshes_.elem_body[mesh_entity_[slot].element]);
        chunk_f[c * nb + body] += slot_body_force_[slot];
        chunk_t[c * nb + body] += slot_body_torque_[slot];
      }
  for (std::size_t b = 0; b < nb; ++b) {
    body_force_[b] = Vec3{0, 0, 0};
    body_torque_[b] = Vec3{0, 0, 0};
    for (std::int64_t c = 0; c < chunks; ++c) {
      body_force_[b] += chunk_f[c * nb + b];
      body_torque_[b] += chunk_t[c * nb + b];
    }
  }
}

void Engine::compute_forces() {
  rebuild_if_needed();
  pair_forces();
  mesh_forces();
  gather_and_reduce();
}

void Engine::integrate() {
  ScopedTimer timer(times_.integrate);
  const real dt = settings_.dt;
  const Vec3 g = settings_.gravity;
#pragma omp parallel for schedule(static) if (p_.size() > settings_.parallel_min)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(p_.size()); ++i) {
    ParticleMotion m{p_.x[i], p_.v[i], p_.w[i], p_.q[i]};
    central_difference_step(m, p_.force[i], p_.torque[i], p_.inv_mass[i], p_.inv_inertia[i], g,
                            p_.prescribed[i] != 0, dt);
    p_.x[i] = m.x;
    p_.v[i] = m.v;
    p_.w[i] = m.w;
    p_.q[i] = m.q;
  }
}

void Engine::step() {
  {
    ScopedTimer timer(times_.mesh_motion);
    meshes_.update(time_);  // boundary pose at t_n, with the forces of t_n
  }
  compute_forces();
  integrate();
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
