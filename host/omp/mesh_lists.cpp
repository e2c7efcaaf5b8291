// The mesh lists: the kept lists' check, the per-particle candidate elements (santasusana2016
// Sect. 3.1) and their slot blocks.
#include "host/omp/engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "host/omp/parallel.hpp"
#include "host/omp/phase_timer.hpp"

namespace dem::host {

// Whether the mesh candidate lists still hold every element each particle touches although the
// particles `over` have used their rooms (mesh_lists_due). An element left out of particle
// i's list lay at least r_i + s_i from it at the renewal, so it can touch i only where i has used
// its room; for each such particle p, the bins (element boxes at the
// renewal, each point within the travel of where it is now) give every element within
// r_p + travel of it, and the lists hold if each one p meets now (the mesh pass's own test) is in
// p's list. The bins hold the elements within a skin more than the lists need of the particles'
// box at the renewal (MeshBins::covers): a search reaching beyond that ends the lists. Exact, like
// the per-particle test. Not for more than a few such particles (most_past_skins), nor with skin 0.
bool Engine::mesh_lists_hold(const std::vector<std::int32_t>& over) {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  if (settings_.skin == 0 || mesh_lists_.bins.empty()) return false;
  const bool par = static_cast<std::size_t>(n) > settings_.parallel_min;
  const real travel = mesh_lists_.travel;
  const MeshView mv = meshes_.view(motions_);
  return holds_for_all(over, par, [&](index_t p, std::vector<std::int32_t>& near) {
    const Vec3 c = p_.x[p];
    const real r = p_.radius[p], reach = kept_list_search_radius(r, travel);
    if (!mesh_lists_.bins.covers(c, reach)) return false;  // beyond what the bins hold
    mesh_lists_.bins.query(c, reach, near);
    const std::int32_t* first = mesh_lists_.elements.data() + mesh_lists_.offsets[p];
    const std::int32_t* last = mesh_lists_.elements.data() + mesh_lists_.offsets[p + 1];
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

// Whether the lists must be renewed before this step's mesh pass: decided once a step, before the
// pair list's build (renewed_anyway: that build re-sorts the particles, which leaves every list to
// be renewed).
bool Engine::mesh_lists_due(bool renewed_anyway) {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  mesh_lists_.travel += mesh_step_;
  // (skin 0: new lists every step, the reference the skins are tested against)
  bool rebuild = renewed_anyway || settings_.skin == 0 || !mesh_lists_fit();
  if (!rebuild) {
    const real travel = mesh_lists_.travel;
    const Vec3* x = p_.x.data();
    const Vec3* x0 = mesh_lists_.x_at_build.data();
    const real* still = mesh_lists_.room_still.data();
    const real* moving = mesh_lists_.room_moving.data();
    const PeriodicBox box = settings_.periodic;
    const bool par = p_.size() > settings_.parallel_min;
    const std::int64_t keep = most_past_skins(n);
    Finds past = find_where(n, par, keep, [=](std::int64_t i) {
      return mesh_rooms_used(moved2(box, x[i], x0[i]), still[i], moving[i], travel);
    });
    // The particles near a moving body, in that body's frame (rigid: its elements keep their
    // distances there).
    const MeshNearBody* near = mesh_lists_.near.data();
    const BodyFrame* frames = meshes_.frames.data();
    const Finds in_frame = find_where(static_cast<std::int64_t>(mesh_lists_.near.size()), mesh_lists_.near.size() > settings_.parallel_min, keep,
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
  return rebuild;
}

bool Engine::mesh_lists_fit() const {
  return mesh_lists_.offsets.size() == p_.size() + 1 && mesh_lists_.x_at_build.size() == p_.size();
}

void Engine::update_mesh_candidates() {
  if (!mesh_lists_due_ && mesh_lists_fit()) return;
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  ScopedTimer timer(times_.mesh_bins);
  // Each particle's mesh skin: fixed, or adaptive (core particle_mesh_skin).
  mesh_lists_.skin.resize(static_cast<std::size_t>(n));
  const bool adaptive = settings_.skin < 0;
  const real skin_max = mesh_skin_max(skin_, adaptive);
  parallel_for(n, settings_.parallel_min, 0, [&](std::int64_t i) {
    mesh_lists_.skin[i] = particle_mesh_skin(adaptive, p_.v[i], p_.radius[i], settings_.dt, mesh_step_, skin_max);
  });
  Vec3 lo, hi;
  points_box(p_.x, lo, hi, settings_.parallel_min);
  real q_max = 0, s_max = 0;
  std::vector<real> query(static_cast<std::size_t>(n));
#pragma omp parallel for reduction(max : q_max, s_max) schedule(static) if (static_cast<std::size_t>(n) > settings_.parallel_min)
  for (std::int64_t i = 0; i < n; ++i) {
    query[i] = p_.radius[i] + mesh_lists_.skin[i];
    q_max = std::max(q_max, query[i]);
    s_max = std::max(s_max, mesh_lists_.skin[i]);
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
  mesh_lists_.bins.build(meshes_, lo, hi, bins_reach, query[q99]);
  // One pass: each thread takes a contiguous range of particles and keeps its lists in order; the
  // ranges are then concatenated in order, so the lists do not depend on the thread count.
  mesh_lists_.offsets.assign(n + 1, 0);
  // Each particle's rooms (MeshRooms): the bins are searched a largest skin beyond the list's
  // reach, and the elements found there that the list leaves out bound how far the particle may
  // go before one of them can reach it (by the distance to their boxes or planes, whichever is
  // larger: both are lower bounds): a room for the still bodies (against its displacement), one
  // in the frame of the nearest moving body (against its displacement there) and one for the other
  // moving bodies (against its displacement plus their travel). Without such elements a room is
  // the skin plus that margin. On the ribbon mixer the drum is still and the beads the blades
  // carry move little in the blades' frame.
  mesh_lists_.room_still.resize(static_cast<std::size_t>(n));
  mesh_lists_.room_moving.resize(static_cast<std::size_t>(n));
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
      if (!ghost_.empty() && ghost_[i]) {  // under MPI a ghost's mesh contacts are its owner's: no list, never due
        mesh_lists_.room_still[i] = mesh_lists_.room_moving[i] = kNoRoomLimit;
        mesh_lists_.offsets[i + 1] = 0;
        continue;
      }
      const real r = p_.radius[i], s = mesh_lists_.skin[i], q = r + s;
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
        mesh_lists_.bins.query(at[k], reach, more);
        // Keep only the elements the sphere grown by the skin touches (the Fast Intersection Test
        // with radius r + skin, after the cheaper test of the element's box): the bins' box test
        // lets many more through, and each would cost a test every step until the next rebuild.
        for (const std::int32_t e : more) {
          const real box2 = mesh_lists_.bins.box_distance2(e, at[k]);
          const Vec3 n0 = meshes_.normals[e];
          if (box2 <= q2 && fast_intersection_test(meshes_.polygon(e), n0, at[k], q)) {
            found.push_back(e);
            continue;
          }
          const Vec3 v0 = meshes_.vertices[meshes_.elem_vertices[meshes_.elem_offsets[e]]];
          const real plane = std::abs(plane_offset(v0, n0, at[k])) - mesh_lists_.bins.planarity_slack(e);
          const real room = std::max(s, std::max(std::sqrt(box2), plane) - r);
          const index_t b = meshes_.elem_body[e];
          if (moves[b]) body_room[b] = std::min(body_room[b], room);
          else still = std::min(still, room);
        }
      }
      const MeshRooms rooms = mesh_rooms(body_room.data(), moves.data(), static_cast<index_t>(bodies), moving_bodies, far);
      mesh_lists_.room_still[i] = still;
      mesh_lists_.room_moving[i] = rooms.others;
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
      mesh_lists_.offsets[i + 1] = static_cast<std::int64_t>(found.size());
    }
  }
  for (std::int64_t i = 0; i < n; ++i) mesh_lists_.offsets[i + 1] += mesh_lists_.offsets[i];
  mesh_lists_.elements.clear();
  for (const std::vector<std::int32_t>& p : part) mesh_lists_.elements.insert(mesh_lists_.elements.end(), p.begin(), p.end());
  mesh_lists_.near.clear();
  for (const std::vector<MeshNearBody>& p : near_part) mesh_lists_.near.insert(mesh_lists_.near.end(), p.begin(), p.end());
  assign_mesh_blocks();
  parallel_copy(p_.x, mesh_lists_.x_at_build, settings_.parallel_min);
  mesh_lists_.travel = 0;
  stats_.mesh_list_renewals += static_cast<std::uint64_t>(n);
}

// Slot blocks for the particles with candidate elements, numbered in particle order (the mesh loop
// then walks the slots in memory order), each particle's used slots copied from its old block.
// A particle without candidates can touch no element before the next lists: its contacts end here
// (the next mesh pass would end them anyway, with the same result).
void Engine::assign_mesh_blocks() {
  const std::int64_t n = static_cast<std::int64_t>(p_.size());
  std::vector<std::int32_t> old_block(static_cast<std::size_t>(n));
  old_block.swap(slots_.block);
  std::int32_t blocks = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (mesh_lists_.offsets[i + 1] > mesh_lists_.offsets[i]) {
      slots_.block[i] = blocks++;
    } else {
      slots_.block[i] = -1;
      slots_.count[i] = 0;
    }
  }
  const std::size_t slots = static_cast<std::size_t>(blocks) * kMaxMeshContacts;
  slots_.spare_entity.swap(slots_.entity);
  slots_.spare_normal.swap(slots_.normal);
  slots_.spare_history.swap(slots_.history);
  slots_.entity.resize(slots);
  slots_.normal.resize(slots);
  slots_.history.resize(slots);
  slots_.force.resize(slots);  // written by the mesh pass before they are read
  slots_.torque.resize(slots);
  slots_.particle_force.resize(static_cast<std::size_t>(blocks));
  slots_.particle_torque.resize(static_cast<std::size_t>(blocks));
  parallel_for(n, settings_.parallel_min, 0, [&](std::int64_t i) {
    const int used = slots_.count[i];
    if (used == 0) return;
    const std::int64_t from = static_cast<std::int64_t>(old_block[i]) * kMaxMeshContacts;
    const std::int64_t to = static_cast<std::int64_t>(slots_.block[i]) * kMaxMeshContacts;
    move_mesh_slots(used, from, to, slots_.spare_entity.data(), slots_.spare_normal.data(), slots_.spare_history.view(), slots_.entity.data(),
                    slots_.normal.data(), slots_.history.view());
  });
}

}  // namespace dem::host
