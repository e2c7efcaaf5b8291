// State: particles removed and added, body motions changed, statistics carried over, and the
// export and restore of the state a restart needs.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "host/omp/parallel.hpp"
#include "host/omp/phase_timer.hpp"
#include "host/sim/mesh_slots.hpp"
#include "host/sim/periodic_check.hpp"

namespace dem::host {

std::size_t Engine::edit_particles(const std::vector<std::int64_t>& remove_ids, const ParticleArrays& more) {
  contacts_kept_ = false;  // (the lists change)
  pair_overlap_seen_ = mesh_overlap_seen_ = std::numeric_limits<real>::infinity();
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
    if (!ghost_.empty()) ghost_.resize(n_old + k, 0);  // (added particles are the rank's own)
    slots_.count.resize(n_old + k, 0);  // no mesh contacts and no pairs yet: empty rows
    slots_.block.resize(n_old + k, -1);
    if (!pairs_.offsets.empty()) pairs_.offsets.resize(n_old + k + 1, pairs_.offsets.back());
    for (real r : more.radius) r_max_ = std::max(r_max_, r);
    if (settings_.skin < 0) skin_ = std::max(skin_, real(0.5) * r_max_);
    load_sizing_.add(more.material, more.radius);
    update_quantum();
  }
  mesh_lists_.offsets.clear();  // per index: made anew at the next mesh pass
  choose_broad_phase();
  pairs_.x_at_build.clear();
  needs_build_ = true;
  {
    ScopedTimer timer(times_.broad_phase);
    rebuild();  // the lists at the new count now, so that particles() and the contacts agree at once
  }
  return removed;
}

void Engine::set_body_motion(std::size_t body, const MeshBodyMotion& motion) {
  // The lists' rooms were measured from the bodies that move: a still body set moving (or one
  // brought to rest) needs new lists.
  if (body_still(motions_.at(body)) != body_still(motion)) mesh_lists_.offsets.clear();
  static_cast<MeshBodyMotion&>(meshes_.bodies.at(body)) = motion;
  motions_[body] = motion;
  // The candidate lists' travel bound follows the new speeds from the next step on.
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
}

void Engine::set_stats(const ContactStats& s) { stats_ = s; }

void Engine::export_pairs(ContactState& contacts) const {
  contacts = ContactState{};
  for (std::size_t k = 0; k < pairs_.i.size(); ++k) {
    if (!pairs_.touching[k]) continue;  // a pair apart has no history
    const std::int64_t a = p_.id[pairs_.i[k]], b = p_.id[pairs_.j[k]];
    contacts.pair_a.push_back(std::min(a, b));
    contacts.pair_b.push_back(std::max(a, b));
    contacts.pair_history.push_back(pairs_.history.get(k));
  }
}

bool Engine::export_contact_forces(ContactForces& out) const {
  out = ContactForces{};
  if (!contacts_kept_ || !forces_current_) return false;
  const bool polyhedra = has_polyhedra();
  for (std::size_t k = 0; k < pairs_.i.size(); ++k) {
    if (!pairs_.touching[k]) continue;
    const std::size_t u = static_cast<std::size_t>(pairs_.i[k]), v = static_cast<std::size_t>(pairs_.j[k]);
    const bool with_polyhedron = polyhedra && (p_.shape[u] >= 0 || p_.shape[v] >= 0);
    add_pair_force(p_, settings_.periodic, u, v, pair_force_[k], with_polyhedron ? &pair_point_[k] : nullptr, out);
  }
  add_mesh_slot_forces(p_, settings_.periodic, slots_.count, slots_.block.data(), slots_.entity.data(), slots_.force.data(), out);
  return true;
}

void Engine::export_state(ParticleArrays& particles, ContactState& contacts) const {
  particles = p_;
  export_pairs(contacts);
  pack_mesh_slots(slots_.count, slots_.block.data(), slots_.entity, slots_.normal, slots_.history.records(), contacts);
  contacts.forces_current = forces_current_;
  if (forces_current_) {
    contacts.body_force = body_loads_.force;
    contacts.body_torque = body_loads_.torque;
  }
}

void Engine::restore_state(const ContactState& c, std::uint64_t step) {
  contacts_kept_ = false;  // (a state's forces are per particle)
  pair_overlap_seen_ = mesh_overlap_seen_ = std::numeric_limits<real>::infinity();
  const std::size_t n = p_.size();
  const std::size_t mesh_slots = checked_mesh_slots(c, n, "restore_state");
  // blocks for the particles with mesh contacts; the first mesh pass makes candidate lists and
  // lays the blocks out anew
  slots_.count = c.mesh_count;
  slots_.block.assign(n, -1);
  std::int32_t blocks = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (slots_.count[i]) slots_.block[i] = blocks++;
  std::vector<ContactHistory> history;
  unpack_mesh_slots(c, slots_.block.data(), static_cast<std::size_t>(blocks), slots_.entity, slots_.normal, history);
  slots_.history.assign(history);
  slots_.force.resize(slots_.entity.size());
  slots_.torque.resize(slots_.entity.size());
  slots_.particle_force.resize(static_cast<std::size_t>(blocks));
  slots_.particle_torque.resize(static_cast<std::size_t>(blocks));
  mesh_lists_.offsets.clear();
  // The touching pairs become the pair list the first rebuild carries the history from: a half
  // list in rows of the lower index, each row sorted by partner.
  std::unordered_map<std::int64_t, std::int32_t> index;
  index.reserve(n);
  for (std::size_t i = 0; i < n; ++i) index[p_.id[i]] = static_cast<std::int32_t>(i);
  const std::size_t np = c.pair_a.size();
  std::vector<std::int32_t> lo(np), hi(np);
  pairs_.offsets.assign(n + 1, 0);
  for (std::size_t k = 0; k < np; ++k) {
    const auto a = index.find(c.pair_a[k]), b = index.find(c.pair_b[k]);
    if (a == index.end() || b == index.end()) throw std::runtime_error("restore_state: a pair names an unknown particle");
    lo[k] = std::min(a->second, b->second);
    hi[k] = std::max(a->second, b->second);
    ++pairs_.offsets[lo[k] + 1];
  }
  for (std::size_t i = 0; i < n; ++i) pairs_.offsets[i + 1] += pairs_.offsets[i];
  std::vector<std::int32_t> cursor(pairs_.offsets.begin(), pairs_.offsets.end() - 1);
  pairs_.i.resize(np);
  pairs_.j.resize(np);
  pairs_.history.resize(np);
  pairs_.touching.assign(np, 1);
  std::size_t in_contact = 0;  // (the count of the evaluation the state holds, below)
  for (std::size_t k = 0; k < np; ++k) {
    in_contact += pair_in_contact(p_.shape[lo[k]] >= 0 || p_.shape[hi[k]] >= 0, c.pair_history[k].rolling) ? 1 : 0;
    const std::int32_t to = cursor[lo[k]]++;
    pairs_.i[to] = lo[k];
    pairs_.j[to] = hi[k];
    pairs_.history.set(to, c.pair_history[k]);
  }
  for (std::size_t i = 0; i < n; ++i)  // insertion sort of each (short) row by partner
    for (std::int32_t k = pairs_.offsets[i] + 1; k < pairs_.offsets[i + 1]; ++k)
      for (std::int32_t m = k; m > pairs_.offsets[i] && pairs_.j[m - 1] > pairs_.j[m]; --m) {
        std::swap(pairs_.j[m - 1], pairs_.j[m]);
        pairs_.history.swap_entries(m - 1, m);
      }
  stripe_row_.clear();
  std::fill(pair_sum_.begin(), pair_sum_.end(), FixedLoad{});  // (zero already, unless a pass threw)
  needs_build_ = true;
  steps_ = step;
  time_ = static_cast<double>(step) * settings_.dt;
  forces_current_ = c.forces_current;
  if (forces_current_) {  // the particles' force fields hold the forces at this state
    if (c.body_force.size() != body_loads_.force.size() || c.body_torque.size() != body_loads_.torque.size())
      throw std::runtime_error("restore_state: the contact state is for another number of mesh bodies");
    body_loads_.force = c.body_force;
    body_loads_.torque = c.body_torque;
    meshes_.update(time_);
  }
  // The counts of the evaluation the state holds (its pairs in contact and used mesh slots; where
  // it holds none, the next evaluation counts them), for an output before the next step.
  touching_pairs_ = forces_current_ ? in_contact : 0;
  mesh_contacts_ = forces_current_ ? mesh_slots : 0;
}

}  // namespace dem::host
