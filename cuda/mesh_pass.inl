// The mesh pass: mesh contacts per particle (H2, then each contact's law) and the body loads.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;


void DeviceEngine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  fold_mesh();  // (rebuild_if_needed has, unless a caller skipped it)
  mesh_contacts_ = 0;
  body_loads_.fresh = false;
  body_loads_.pending = false;  // (this pass's replace the last one's, summed or not)
  if (d_elem_body_.empty() || n == 0) {  // no blocks: every particle's mesh force is zero (pair_pass)
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, body_loads_.force.begin(), body_loads_.force.end(), Vec3{0, 0, 0}); });
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, body_loads_.torque.begin(), body_loads_.torque.end(), Vec3{0, 0, 0}); });
    return;
  }
  update_mesh_candidates();
  Timer timer(clock_, times_.mesh_contacts);
  if (!shapes_.empty()) {
    mesh_pass<true, true>();
  } else if (all_models_) {
    mesh_pass<true, false>();
  } else {
    mesh_pass<false, false>();
  }
  const MeshSlotsView sv = slot_view();
  const MeshStepStats none{0, 0, 0, 0, 0, kNoId, 0};
  const std::int64_t blocks = slots_.blocks;
  // The step's sums and the particles touching a mesh (by index), left in the readback record.
  ensure(sb_, readback_, 1);
  StepReadback* rb = raw(readback_);
  const MeshStepStats* st = raw(slots_.stats);
  reduce_index_into(sb_, blocks, [st] DEM_HD(std::int64_t b) { return st[b]; }, none, MeshStepStatsSum{}, &rb->mesh);
  ensure(sb_, body_loads_.touching_by_id, n_);
  ensure(sb_, id_scratch_, n_);
  const std::uint8_t* count = sv.count;
  select_index_into(sb_, static_cast<std::int32_t>(n), [count] DEM_HD(std::int32_t i) { return count[i] != 0; },
                    raw(body_loads_.touching_by_id), &rb->mesh_touching);
  // Not read here: the next step's skin tests bring them back in their copy, or the first caller
  // that needs them (status, the health check, the stats: fold_mesh) with its own.
  mesh_pending_ = true;
  mesh_pending_step_ = steps_;
  mesh_pending_time_ = time_;
}

void DeviceEngine::fold_mesh() const {
  if (mesh_pending_) const_cast<DeviceEngine&>(*this).apply_mesh_readback(read_one(sb_, readback_, 0));
}

// The last mesh pass's sums, overflow and count of particles touching a mesh, from r.
void DeviceEngine::apply_mesh_readback(const StepReadback& r) {
  if (!mesh_pending_) return;
  mesh_pending_ = false;
  const MeshStepStats& s = r.mesh;
  mesh_contacts_ = static_cast<std::size_t>(s.slots);
  stats_.fe_potential += s.potential;
  stats_.fe_contact += s.in_contact;
  stats_.valid_entities += s.valid;
  stats_.h2_compactions += s.compactions;
  if (s.overflow_id != kNoId && status_.ok)
    status_ = host::EngineStatus{false, host::mesh_overflow_message(s.overflow_id, int(s.overflow_count),
                                                                    mesh_pending_step_, mesh_pending_time_)};
  // The body loads only when asked for (sum_body_loads): nothing on the device reads them, and
  // the next pass's replace them.
  body_loads_.pending = true;
  body_loads_.touching = r.mesh_touching;
  body_loads_.fresh = false;
}

// The last mesh pass's body loads: the particles touching a mesh in increasing id (compacted by
// mesh_forces, then sorted by id), each summed on its own (a thread each), then the tree of
// partial sums (as on the host). From the pass's slots, by particle index: before a re-sort, which
// only comes with the next pass.
void DeviceEngine::sum_body_loads() {
  fold_mesh();
  if (!body_loads_.pending) return;
  Timer timer(clock_, times_.mesh_contacts);
  body_loads_.pending = false;
  const index_t nb = static_cast<index_t>(motions_.size());
  const MeshSlotsView sv = slot_view();
  const std::int64_t m = body_loads_.touching;
  const auto touching_end = body_loads_.touching_by_id.begin() + m;
  launch(m, sb_, [&](auto pol) { thrust::gather(pol, body_loads_.touching_by_id.begin(), touching_end, p_.id.begin(), id_scratch_.begin()); });
  launch(m, sb_, [&](auto pol) { thrust::sort_by_key(pol, id_scratch_.begin(), id_scratch_.begin() + m, body_loads_.touching_by_id.begin()); });
  // (sized by assign_mesh_blocks for every particle with a block, which m never exceeds: they do
  // not grow as m creeps up step by step, each growth a wait)
  const std::size_t room = static_cast<std::size_t>(body_partials_size(m) * nb);
  ensure(sb_, body_loads_.partial_force, room);
  ensure(sb_, body_loads_.partial_torque, room);
  const std::int32_t* by_id = raw(body_loads_.touching_by_id);
  const index_t* elem_body = raw(d_elem_body_);
  Vec3* cf = raw(body_loads_.partial_force);
  Vec3* ct = raw(body_loads_.partial_torque);
  for_each_index(sb_, m, [=] DEM_HD(std::int64_t k) { particle_body_loads(k, by_id, sv, elem_body, nb, cf, ct); });
  Vec3* bf = raw(body_loads_.force);
  Vec3* bt = raw(body_loads_.torque);
  const std::int64_t last =
      reduce_body_partials(m, nb, [&](std::int64_t partials, std::int64_t sums, std::int64_t in, std::int64_t out) {
        for_each_index(sb_, sums, BodyPartialsLevel{partials, nb, cf + in, ct + in, cf + out, ct + out});
      });
  for_each_index(sb_, nb, [=] DEM_HD(std::int64_t b) { body_load(static_cast<index_t>(b), m, last, cf, ct, bf, bt); });
}

// Per block (each particle with candidate elements): its mesh contacts (H2, then the law of each),
// their sum and the step's counts. The other particles have none, and a zero mesh force.
template <bool kAllModels, bool kPolyhedra>
void DeviceEngine::mesh_pass() {
  const std::int64_t blocks = slots_.blocks;
  const std::int32_t* bp = raw(slots_.block_particle);
  const ParticleView pv = pview();
  const MeshView mv = mesh_view();
  const ContactTable tab{raw(params_), num_materials_};
  const MeshSlotsView sv = slot_view();
  const std::int64_t* coff = raw(mesh_lists_.offsets);
  const std::int32_t* cand = raw(mesh_lists_.elements);
  Vec3* mf = raw(slots_.particle_force);
  Vec3* mt = raw(slots_.particle_torque);
  MeshStepStats* st = raw(slots_.stats);
  const real tol = settings_.h2_tolerance, dt = settings_.dt;
  for_each_index(sb_, blocks, [=] DEM_HD(std::int64_t b) {
    const std::int32_t i = bp[b];
    H2Accumulator acc;  // per thread (local memory on a GPU)
    const MeshContactCounts c = mesh_contacts_of_particle<kAllModels, kPolyhedra>(i, pv, mv, tab, sv, cand + coff[i],
                                                                      coff[i + 1] - coff[i], acc, tol, dt, mf[b], mt[b]);
    const bool over = c.valid > std::uint32_t(kMaxMeshContacts);
    st[b] = MeshStepStats{c.potential, c.in_contact, c.valid, c.compactions, sv.count[i],
                          over ? pv.id[i] : kNoId, over ? c.valid : 0u};
  });
}

}  // namespace dem::device::DEM_DEVICE_NS
