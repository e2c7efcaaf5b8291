// What the MPI domain decomposition (host/mpi/decomposition.hpp) asks of a rank's engine: which
// particles are ghosts, and the counts of the rank's own contacts.
#include <algorithm>
#include <stdexcept>

#include "host/omp/engine.hpp"

namespace dem::host {

void Engine::set_ghosts(std::vector<std::uint8_t> ghost) {
  if (!ghost.empty() && ghost.size() != p_.size())
    throw std::invalid_argument("set_ghosts: the flags are for another particle count");
  ghost_ = std::move(ghost);
}

std::size_t Engine::own_touching_pairs() const {
  if (ghost_.empty()) return touching_pairs_;
  std::size_t count = 0;
  if (pairs_.touching.size() != pairs_.i.size()) return 0;
  for (std::size_t k = 0; k < pairs_.i.size(); ++k) {
    if (!pairs_.touching[k]) continue;
    const std::int32_t a = pairs_.i[k], b = pairs_.j[k];
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
