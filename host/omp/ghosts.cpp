// What the MPI domain decomposition (host/mpi/decomposition.hpp) asks of a rank's engine: which
// particles are ghosts, the counts of the rank's own contacts, and the ghosts' states from their owners.
#include <algorithm>
#include <stdexcept>

#include "host/omp/engine.hpp"

namespace dem::host {

// The lists are made anew at the next step: the pair list leaves out the pairs of two ghosts
// (rebuild) and the mesh lists the ghosts (update_mesh_candidates), so lists made under other
// ghosts may lack contacts these need.
void Engine::set_ghosts(const std::vector<std::int64_t>& ghost_ids) {
  ghost_.assign(p_.size(), 0);
  for (std::size_t i = 0; i < p_.size(); ++i) ghost_[i] = std::binary_search(ghost_ids.begin(), ghost_ids.end(), p_.id[i]);
  needs_build_ = true;
  mesh_lists_.offsets.clear();
}

void Engine::set_states(const std::vector<std::int32_t>& index, const StepStates& s) {
  forces_current_ = false;  // (the forces are no longer those of this state)
  contacts_kept_ = false;
  for (std::size_t k = 0; k < index.size(); ++k) {
    const std::size_t i = static_cast<std::size_t>(index[k]);
    p_.x[i] = s.x[k];
    p_.v[i] = s.v[k];
    p_.w[i] = s.w[k];
    if (!s.q.empty()) p_.q[i] = s.q[k];
    if (!s.pad.empty()) p_.pad[i] = s.pad[k];
  }
}

std::size_t Engine::own_touching_pairs() const {
  if (ghost_.empty()) return touching_pairs_;
  std::size_t count = 0;
  if (pairs_.touching.size() != pairs_.i.size()) return 0;
  for (std::size_t k = 0; k < pairs_.i.size(); ++k) {
    if (!pairs_.touching[k]) continue;
    const std::int32_t a = pairs_.i[k], b = pairs_.j[k];
    if (!pair_in_contact(p_.shape[a] >= 0 || p_.shape[b] >= 0, pairs_.history.get(k).rolling)) continue;
    const std::int32_t first = p_.id[a] < p_.id[b] ? a : b;  // counted by the owner of the smaller id
    count += ghost_[first] ? 0 : 1;
  }
  return count;
}

std::size_t Engine::own_mesh_contacts() const {
  if (ghost_.empty()) return mesh_contacts_;
  std::size_t count = 0;
  for (std::size_t i = 0; i < slots_.count.size(); ++i) count += ghost_[i] ? 0 : slots_.count[i];
  return count;
}

}  // namespace dem::host
