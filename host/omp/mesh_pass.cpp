// The mesh pass: each particle's mesh contacts (Fast Intersection Test, H2, each contact's law),
// its mesh sums and the body loads, and the particles with mesh contacts kept in id order.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "host/omp/parallel.hpp"
#include "host/sim/health.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

void Engine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  mesh_contacts_ = 0;
  if (meshes_.num_elements() == 0 || n == 0) {
    std::fill(body_loads_.force.begin(), body_loads_.force.end(), Vec3{0, 0, 0});
    std::fill(body_loads_.torque.begin(), body_loads_.torque.end(), Vec3{0, 0, 0});
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
  const MeshSlotsView sv = this->slot_view();
  const bool polyhedra = has_polyhedra();
  // Chunks of kBodyChunk particles, dynamically scheduled: most particles touch no wall, so the
  // work is uneven. Each particle writes only its own slots; counts are reduced per thread and the
  // first overflowing particle (smallest id) is picked after the loop.
  const std::int64_t chunks = (n + kBodyChunk - 1) / kBodyChunk;
  // Particles that start touching a mesh this step, found on the way (see update_touching_by_id).
  const bool track = body_loads_.in_touching.size() == p_.size();
  body_loads_.newcomers.clear();
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
        if (track && slots_.count[i] && !body_loads_.in_touching[i]) my_new.push_back(static_cast<std::int32_t>(i));
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
      body_loads_.newcomers.insert(body_loads_.newcomers.end(), my_new.begin(), my_new.end());  // any order: sorted by id below
    }
  }
  mesh_contacts_ = static_cast<std::size_t>(slots);
  // Body loads: each particle touching a mesh summed on its own, then those particles in increasing
  // id through the tree of partial sums (core/engine/phases.hpp): the same bits whatever the
  // particle order, thread count or engine.
  update_touching_by_id(track);
  const std::int64_t m = static_cast<std::int64_t>(body_loads_.touching_by_id.size());
  const index_t nb = static_cast<index_t>(meshes_.bodies.size());
  body_loads_.partial_force.resize(static_cast<std::size_t>(body_partials_size(m) * nb));
  body_loads_.partial_torque.resize(body_loads_.partial_force.size());
  Vec3* cf = body_loads_.partial_force.data();
  Vec3* ct = body_loads_.partial_torque.data();
  parallel_for(m, settings_.parallel_min, 0, [&](std::int64_t k) {
    particle_body_loads(k, body_loads_.touching_by_id.data(), sv, meshes_.elem_body.data(), nb, cf, ct);
  });
  const std::int64_t last =
      reduce_body_partials(m, nb, [&](std::int64_t partials, std::int64_t sums, std::int64_t in, std::int64_t out) {
        for (std::int64_t k = 0; k < sums; ++k) sum_body_partials(k, partials, nb, cf + in, ct + in, cf + out, ct + out);
      });
  for (index_t b = 0; b < nb; ++b) body_load(b, m, last, cf, ct, body_loads_.force.data(), body_loads_.torque.data());
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
    body_loads_.in_touching.assign(n, 0);
    body_loads_.touching_by_id.clear();
    body_loads_.newcomers.clear();
    for (std::size_t i = 0; i < n; ++i)
      if (slots_.count[i]) body_loads_.newcomers.push_back(static_cast<std::int32_t>(i));
  }
  std::size_t kept = 0;
  for (std::int32_t i : body_loads_.touching_by_id) {
    if (slots_.count[i]) body_loads_.touching_by_id[kept++] = i;
    else body_loads_.in_touching[i] = 0;
  }
  body_loads_.touching_by_id.resize(kept);
  for (std::int32_t i : body_loads_.newcomers) body_loads_.in_touching[i] = 1;
  if (body_loads_.newcomers.empty()) return;
  const auto by_id = [this](std::int32_t a, std::int32_t b) { return p_.id[a] < p_.id[b]; };
  std::sort(body_loads_.newcomers.begin(), body_loads_.newcomers.end(), by_id);
  body_loads_.touching_by_id.insert(body_loads_.touching_by_id.end(), body_loads_.newcomers.begin(), body_loads_.newcomers.end());
  std::inplace_merge(body_loads_.touching_by_id.begin(), body_loads_.touching_by_id.begin() + static_cast<std::ptrdiff_t>(kept),
                     body_loads_.touching_by_id.end(), by_id);
}

}  // namespace dem::host
