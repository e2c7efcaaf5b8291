// The host engine's construction, the order of the phases in a step, and its memory.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "host/omp/parallel.hpp"
#include "host/sim/periodic_check.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

Engine::Engine(ParticleArrays particles, MeshSet meshes, std::vector<ContactParams> params, int num_materials,
               EngineSettings settings)
    : p_(std::move(particles)),
      meshes_(std::move(meshes)),
      params_(std::move(params)),
      num_materials_(num_materials),
      settings_(settings),
      broad_phase_(nullptr) {
  choose_broad_phase();
  // (the second history vector also holds the common planes of polyhedral pairs)
  pairs_.history.with_roll = has_polyhedra() || std::any_of(params_.begin(), params_.end(), [](const ContactParams& p) {
                               return uses_second_history(p);
                             });
  slots_.history.with_roll = slots_.spare_history.with_roll = pairs_.history.with_roll;
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
  slots_.count.assign(n, 0);
  slots_.block.assign(n, -1);  // blocks come with the first candidate lists
  motions_ = meshes_.motions();
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
  body_loads_.force.assign(meshes_.bodies.size(), Vec3{0, 0, 0});
  body_loads_.torque.assign(meshes_.bodies.size(), Vec3{0, 0, 0});
  load_sizing_.start(settings_, num_materials_, p_.material, p_.radius);
  load_sizing_.set_bodies(meshes_);
  update_quantum();
  meshes_.update(0);
}

// The pair sums, one per particle, all zero (as they are between steps) where the count changed.
void Engine::ensure_pair_sums() {
  if (pair_sum_.size() == p_.size()) return;
  resize_snug(pair_sum_, p_.size());
  std::fill(pair_sum_.begin(), pair_sum_.end(), FixedLoad{});
}

void Engine::update_quantum() { quantum_ = load_sizing_.quantum(params_, num_materials_); }

std::int64_t Engine::index_of(std::int64_t pid) const {
  for (std::size_t i = 0; i < p_.size(); ++i)
    if (p_.id[i] == pid) return static_cast<std::int64_t>(i);
  return -1;
}

// The forces of t_n: boundary pose at t_n, lists, contacts, sums; with and_integrate, the central
// differences per particle in the same pass (Eqs. 7-12).
void Engine::evaluate(bool and_integrate) {
  {
    ScopedTimer timer(times_.mesh_motion);
    meshes_.update(time_);
  }
  decide_lists();
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

// Which lists this step builds: the pair list where a particle has used its skin, the mesh lists
// where one has used its room; under MPI each is built on every rank where any rank builds it
// (Simulation::set_list_agreement).
void Engine::decide_lists() {
  decide_pair_list();
  // (a build that re-sorts the particles leaves every mesh list to be renewed)
  const bool resorts = needs_build_ && rebuilds_since_resort_ % kResortInterval == 0;
  mesh_lists_due_ = meshes_.num_elements() > 0 && p_.size() > 0 && mesh_lists_due(resorts);
  if (list_agreement_) {
    const unsigned agreed = list_agreement_((needs_build_ ? kPairListBit : 0u) | (mesh_lists_due_ ? kMeshListsBit : 0u));
    needs_build_ = (agreed & kPairListBit) != 0;
    mesh_lists_due_ = (agreed & kMeshListsBit) != 0;
  }
}

void Engine::compute_forces() {
  if (forces_current_) return;  // already at this state: evaluating again would advance the history twice
  record_contacts_ = keep_contacts_;
  try {
    evaluate(false);
  } catch (...) {
    record_contacts_ = false;
    throw;
  }
  record_contacts_ = false;
  contacts_kept_ = keep_contacts_;
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
  contacts_kept_ = false;
  ++steps_;
  ++stats_.steps;
  time_ = static_cast<double>(steps_) * settings_.dt;
}

std::vector<StateBuffer> Engine::state_buffers() const {
  std::vector<StateBuffer> out;
  const auto add = [&out](const char* name, const auto& v) {
    out.push_back(StateBuffer{name, double(v.capacity()) * sizeof(typename std::decay_t<decltype(v)>::value_type)});
  };
  double fields = 0;
#define DEM_FIELD_BYTES(T, name) fields += double(p_.name.capacity()) * sizeof(T);
  DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
  out.push_back(StateBuffer{"particle fields", fields});
  add("pairs.x_at_build", pairs_.x_at_build), add("pairs.reach", pairs_.reach), add("pairs.half_skin2", pairs_.half_skin2);
  add("pairs.offsets", pairs_.offsets), add("pairs.i", pairs_.i), add("pairs.j", pairs_.j), add("pairs.old_i", pairs_.old_i);
  add("pairs.old_j", pairs_.old_j), add("pairs.history.xi", pairs_.history.xi), add("pairs.history.roll", pairs_.history.roll);
  add("pairs.touching", pairs_.touching), add("pairs.swapped", pairs_.swapped), add("pair_sum", pair_sum_);
  add("stripe_row", stripe_row_), add("slots.count", slots_.count), add("slots.block", slots_.block);
  add("slots.entity", slots_.entity), add("slots.normal", slots_.normal), add("slots.history.xi", slots_.history.xi);
  add("slots.history.roll", slots_.history.roll), add("slots.force", slots_.force), add("slots.torque", slots_.torque);
  add("slots.particle_force", slots_.particle_force), add("slots.particle_torque", slots_.particle_torque);
  add("mesh_lists.offsets", mesh_lists_.offsets), add("mesh_lists.elements", mesh_lists_.elements);
  add("mesh_lists.x_at_build", mesh_lists_.x_at_build), add("mesh_lists.skin", mesh_lists_.skin);
  add("mesh_lists.room_still", mesh_lists_.room_still), add("mesh_lists.room_moving", mesh_lists_.room_moving);
  add("mesh_lists.near", mesh_lists_.near), add("slots.spare_entity", slots_.spare_entity);
  add("slots.spare_normal", slots_.spare_normal), add("slots.spare_history.xi", slots_.spare_history.xi);
  add("slots.spare_history.roll", slots_.spare_history.roll), add("pair_force", pair_force_), add("pair_point", pair_point_);
  double spill = 0;
  for (const auto& of_thread : spill_)
    for (const auto& list : of_thread) spill += double(list.capacity()) * sizeof(list[0]);
  out.push_back(StateBuffer{"spill", spill});
  return out;  // the broad phase's cell arrays and the mesh bins are not counted
}

}  // namespace dem::host
