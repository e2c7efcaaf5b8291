// The mesh pass: mesh contacts per particle (H2, then each contact's law) and the body loads.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;


void DeviceEngine::mesh_forces() {
  const std::int64_t n = static_cast<std::int64_t>(n_);
  fold_mesh();  // (rebuild_if_needed has, unless a caller skipped it)
  mesh_contacts_ = 0;
  body_loads_.pending = false;  // (this pass's replace the last one's, summed or not)
  if (d_elem_body_.empty() || n == 0) {  // no blocks: every particle's mesh force is zero (pair_pass)
    std::fill(body_loads_.force.begin(), body_loads_.force.end(), Vec3{0, 0, 0});
    std::fill(body_loads_.torque.begin(), body_loads_.torque.end(), Vec3{0, 0, 0});
    body_loads_.sums.assign(motions_.size(), BodyLoadSum{});
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
  const MeshStepStats none{0, 0, 0, 0, 0, kNoId, 0};
  const std::int64_t blocks = slots_.blocks;
  // The step's sums, left in the readback record.
  ensure(sb_, readback_, 1);
  StepReadback* rb = raw(readback_);
  const MeshStepStats* st = raw(slots_.stats);
  reduce_index_into(sb_, blocks, ReadEach<MeshStepStats>{st}, none, MeshStepStatsSum{}, &rb->found.mesh);
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
  const MeshStepStats& s = r.found.mesh;
  mesh_contacts_ = static_cast<std::size_t>(s.slots);
  stats_.fe_potential += s.potential;
  stats_.fe_contact += s.in_contact;
  stats_.valid_entities += s.valid;
  stats_.h2_compactions += s.compactions;
  if (s.overflow_id != kNoId && status_.ok)
    status_ = host::EngineStatus{false, host::mesh_overflow_message(s.overflow_id, int(s.overflow_count),
                                                                    mesh_pending_step_, mesh_pending_time_),
                                 0, static_cast<std::int64_t>(s.overflow_id)};
  // The body loads only when asked for (sum_body_loads): nothing on the device reads them, and
  // the next pass's replace them.
  body_loads_.pending = true;
}

// The last mesh pass's body loads: per body, the integers of every particle's contacts on it
// (core add_particle_body_loads over the blocks: the particles with candidate elements), reduced
// in any order (exact), brought back and converted on the host. From the pass's slots, by particle
// index and in the pass's units: before the particles are re-sorted or their units change, which
// comes with the next step's rebuild (the pass then replaces them) or an edit (edit_particles sums
// them first).
void DeviceEngine::sum_body_loads() {
  fold_mesh();
  if (!body_loads_.pending) return;
  Timer timer(clock_, times_.mesh_contacts);
  body_loads_.pending = false;
  const MeshSlotsView sv = slot_view();
  const std::int32_t* owner = raw(slots_.block_particle);
  const index_t* elem_body = raw(d_elem_body_);
  const LoadQuantum q = quantum_;
  // (under MPI the ghosts' loads are their owners' to add)
  const std::int64_t* id = raw(p_.id);
  const std::int64_t* ghost = ghost_ids_.empty() ? nullptr : raw(ghost_ids_);
  const std::int64_t* ghost_end = ghost == nullptr ? nullptr : ghost + ghost_ids_.size();
  body_loads_.sums.assign(motions_.size(), BodyLoadSum{});
  for (std::size_t b = 0; b < motions_.size(); ++b) {
    const index_t only = static_cast<index_t>(b);
    const BodyLoadSum sum = reduce_index(
        sb_, slots_.blocks,
        [=] DEM_HD(std::int64_t k) {
          BodyLoadSum s;
          if (ghost == nullptr || !sorted_contains(ghost, ghost_end, id[owner[k]]))
            add_particle_body_loads(owner[k], sv, elem_body, q, only, &s);
          return s;
        },
        BodyLoadSum{}, BodyLoadSumOp{});
    body_load_value(sum, q, body_loads_.force[b], body_loads_.torque[b]);
    body_loads_.sums[b] = sum;
  }
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
  const std::int32_t* gate = gate_;  // (a run ahead's: closed, the pass changes nothing)
  for_each_index(sb_, blocks, [=] DEM_HD(std::int64_t b) {
    if (gate_closed(gate)) return;
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
