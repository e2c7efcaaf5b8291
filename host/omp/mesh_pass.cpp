// The mesh pass: each particle's mesh contacts (Fast Intersection Test, H2, each contact's law),
// its mesh sums and the body loads.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "host/omp/parallel.hpp"
#include "host/sim/health.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

// Particles per chunk of the mesh loop (its dynamic schedule).
constexpr std::int64_t kMeshChunk = 1024;

void Engine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  mesh_contacts_ = 0;
  if (meshes_.num_elements() == 0 || n == 0) {
    mesh_overlap_seen_ = 0;  // (no slots)
    std::fill(body_loads_.force.begin(), body_loads_.force.end(), Vec3{0, 0, 0});
    std::fill(body_loads_.torque.begin(), body_loads_.torque.end(), Vec3{0, 0, 0});
    body_sums_.assign(meshes_.bodies.size(), BodyLoadSum{});
    return;
  }
  update_mesh_candidates();
  ScopedTimer timer(times_.mesh_contacts);
  const real dt = settings_.dt;
  std::uint64_t potential = 0, in_contact = 0, valid_total = 0, compactions = 0, slots = 0;
  real deepest = 0;  // the slots' largest overlap fraction (mesh_overlap_seen_)
  std::int64_t overflow_id = -1;
  int overflow_count = 0;
  const ParticleView pv = pview();
  const MeshView mv = meshes_.view(motions_);
  const ContactTable tab = table();
  const MeshSlotsView sv = this->slot_view();
  const bool polyhedra = has_polyhedra();
  // Chunks of kMeshChunk particles, dynamically scheduled: most particles touch no wall, so the
  // work is uneven. Each particle writes only its own slots; counts are reduced per thread and the
  // first overflowing particle (smallest id) is picked after the loop. The body loads: each
  // thread sums its particles' contacts in integers (core add_particle_body_loads), then the
  // threads' sums are added, exactly, in any order.
  const std::int64_t chunks = (n + kMeshChunk - 1) / kMeshChunk;
  const std::size_t nb = meshes_.bodies.size();
  std::vector<BodyLoadSum> body_sums(nb);
  const index_t* elem_body = meshes_.elem_body.data();
  const LoadQuantum q = quantum_;
  const std::uint8_t* ghost = ghost_.empty() ? nullptr : ghost_.data();  // (their owners add their loads)
#pragma omp parallel reduction(+ : potential, in_contact, valid_total, compactions, slots) reduction(max : deepest) \
    if (static_cast<std::size_t>(n) > settings_.parallel_min / 16)
  {
    H2Accumulator acc;
    std::int64_t my_overflow_id = -1;
    int my_overflow_count = 0;
    std::vector<BodyLoadSum> my_sums(nb);
#pragma omp for schedule(dynamic, 1) nowait
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::int64_t end = std::min(n, (chunk + 1) * kMeshChunk);
      constexpr std::int64_t kAhead = 3;
      for (std::int64_t i = chunk * kMeshChunk; i < end; ++i) {
        const std::int64_t cb = mesh_lists_.offsets[i], n_cand = mesh_lists_.offsets[i + 1] - cb;
        if (n_cand == 0) continue;  // no block, no contacts (assign_mesh_blocks), a zero mesh force
        if (i + kAhead < end && slots_.block[i + kAhead] >= 0) {  // the old contacts a few particles on: the misses here
          const std::size_t next = static_cast<std::size_t>(slots_.block[i + kAhead]) * kMaxMeshContacts;
          __builtin_prefetch(&slots_.entity[next]);
          __builtin_prefetch(&slots_.normal[next]);
          __builtin_prefetch(&slots_.history.xi[next]);
        }
        const std::int32_t block = slots_.block[i];
        const MeshContactCounts c =
            polyhedra ? mesh_contacts_near_walls<true, true>(static_cast<index_t>(i), pv, mv, tab, sv, mesh_lists_.elements.data() + cb,
                                                             n_cand, acc, settings_.h2_tolerance, dt, slots_.particle_force[block],
                                                             slots_.particle_torque[block])
                      : mesh_contacts_near_walls(static_cast<index_t>(i), pv, mv, tab, sv, mesh_lists_.elements.data() + cb, n_cand,
                                                 acc, settings_.h2_tolerance, dt, slots_.particle_force[block],
                                                 slots_.particle_torque[block]);
        potential += c.potential;
        in_contact += c.in_contact;
        valid_total += c.valid;
        compactions += c.compactions;
        slots += slots_.count[i];
        deepest = std::max(deepest, mesh_overlap_fraction(pv, sv, static_cast<index_t>(i)));
        if (slots_.count[i] && (ghost == nullptr || !ghost[i])) add_particle_body_loads(static_cast<index_t>(i), sv, elem_body, q, -1, my_sums.data());
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
      for (std::size_t b = 0; b < nb; ++b) body_sums[b] = BodyLoadSumOp{}(body_sums[b], my_sums[b]);
    }
  }
  mesh_contacts_ = static_cast<std::size_t>(slots);
  mesh_overlap_seen_ = deepest;
  for (std::size_t b = 0; b < nb; ++b) body_load_value(body_sums[b], q, body_loads_.force[b], body_loads_.torque[b]);
  body_sums_.swap(body_sums);
  stats_.fe_potential += potential;
  stats_.fe_contact += in_contact;
  stats_.valid_entities += valid_total;
  stats_.h2_compactions += compactions;
  if (overflow_id >= 0 && status_.ok) {
    status_ = EngineStatus{false, mesh_overflow_message(overflow_id, overflow_count, steps_, time_), 0, overflow_id};
  }
}

}  // namespace dem::host
