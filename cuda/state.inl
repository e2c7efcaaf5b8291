// State: body motions changed, particles removed and added, and the export and restore of the
// state a restart needs.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

void DeviceEngine::set_body_motion(std::size_t body, const MeshBodyMotion& motion) {
  ahead_valid_ = false;  // (check_health's skin tests were of the state before)
  static_cast<MeshBodyMotion&>(meshes_.bodies.at(body)) = motion;
  motions_[body] = motion;
  upload(sb_, d_bodies_, motions_);
  meshes_posed_ = false;  // a new centre0 moves the vertices even where the frame stays
  // The candidate lists' travel bound follows the new speeds from the next step on.
  mesh_step_ = mesh_step_bound(motions_.data(), static_cast<index_t>(motions_.size()), meshes_.ref_vertices.data(),
                               settings_.dt);
}

std::size_t DeviceEngine::edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more) {
  contacts_kept_ = false;  // (the lists change)
  pairs_.deepest_valid = false;  // (per particle)
  ahead_valid_ = false;  // (check_health's skin tests were of the state before)
  fold_touching(-1);  // (the counts are per particle)
  fold_planes();
  fold_mesh();
  sum_body_loads();  // (the last pass's, from its slots and units: the edit re-sorts and resizes)
  std::size_t removed = 0;
  if (!remove_ids.empty() && n_ > 0) {  // flag them (binary search of each particle's id in the sorted list)
    std::vector<std::int64_t> sorted(remove_ids);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    dvec<std::int64_t> d_sorted;
    upload(sb_, d_sorted, sorted);
    resize(sb_, remove_flag_, n_);
    const std::int64_t* ids = raw(p_.id);
    const std::int64_t* list = raw(d_sorted);
    const std::int64_t m = static_cast<std::int64_t>(sorted.size());
    std::uint8_t* flag = raw(remove_flag_);
    for_each_index(sb_, static_cast<std::int64_t>(n_), [ids, list, m, flag] DEM_HD(std::int64_t i) {
      flag[i] = sorted_contains(list, list + m, ids[i]) ? 1 : 0;
    });
    removed = static_cast<std::size_t>(sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n_),
                                                               [flag] DEM_HD(std::int64_t i) { return std::int64_t(flag[i]); }));
  }
  if (removed == 0 && more.size() == 0) return 0;
  host::check_periodic_after_adding(settings_, r_max_, more.radius);  // before anything changes
  // the removal resolves an escape (another particle still outside fails the next check again)
  if (!status_.ok && status_.problem == kEscaped) status_ = host::EngineStatus{};
  if (more.size()) {  // appended with empty mesh slots and empty neighbour rows
    const std::size_t n_old = n_, k = more.size();
    if (n_old + k >= (std::size_t(1) << 31)) throw std::runtime_error("device engine: at most 2^31 - 1 particles");
#define DEM_APPEND_FIELD(T, name) \
  resize(sb_, p_.name, n_old + k);  \
  upload_into(sb_, p_.name, n_old, more.name);
    DEM_PARTICLE_FIELDS(DEM_APPEND_FIELD)
#undef DEM_APPEND_FIELD
    ensure(sb_, slots_.count, n_old + k);
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, slots_.count.begin() + static_cast<std::ptrdiff_t>(n_old), slots_.count.begin() + static_cast<std::ptrdiff_t>(n_old + k), std::uint8_t(0)); });
    ensure(sb_, slots_.block, n_old + k);  // no block until the next candidate lists
    launch(0, sb_, [&](auto pol) { thrust::fill(pol, slots_.block.begin() + static_cast<std::ptrdiff_t>(n_old), slots_.block.begin() + static_cast<std::ptrdiff_t>(n_old + k), std::int32_t(-1)); });
    if (pairs_.have) {
      resize(sb_, pairs_.offsets, n_old + k + 1);
      launch(0, sb_, [&](auto pol) { thrust::fill(pol, pairs_.offsets.begin() + static_cast<std::ptrdiff_t>(n_old + 1), pairs_.offsets.end(), pairs_.total); });
    }
    if (removed) {
      resize(sb_, remove_flag_, n_old + k);
      launch(0, sb_, [&](auto pol) { thrust::fill(pol, remove_flag_.begin() + static_cast<std::ptrdiff_t>(n_old), remove_flag_.end(), std::uint8_t(0)); });
    }
    for (real r : more.radius) r_max_ = std::max(r_max_, r);
    for (real r : more.radius) r_min_ = std::min(r_min_, r);
    if (settings_.skin < 0) skin_ = std::max(skin_, real(0.5) * r_max_);
    load_sizing_.add(more.material, more.radius);
    quantum_ = load_sizing_.quantum(table_, num_materials_);
    if (settings_.periodic.any()) {
      Vec3* x = raw(p_.x);
      const PeriodicBox pb = settings_.periodic;
      for_each_index(sb_, static_cast<std::int64_t>(k), [x, pb, n_old] DEM_HD(std::int64_t a) {
        x[n_old + a] = wrap_far(pb, x[n_old + a]);
      });
    }
    n_ = n_old + k;
  }
  ensure(sb_, pairs_.touching_count, n_);
  ensure(sb_, counts_, n_ + 1);
  remove_pending_ = removed;
  choose_broad_phase();
  mesh_lists_.have = false;
  needs_build_ = true;
  {
    Timer timer(clock_, times_.broad_phase);
    rebuild();  // the lists at the new count now, so that particles() and the contacts agree at once
  }
  host_p_fresh_ = false;
  return removed;
}

// (the second history only where a law uses it: else zero, as on the host, and not stored)
void DeviceEngine::upload_histories(const std::vector<ContactHistory>& h, dvec<Vec3>& xi, dvec<Vec3>& roll) {
  std::vector<Vec3> t(h.size()), r(with_roll_ ? h.size() : 0);
  for (std::size_t k = 0; k < h.size(); ++k) {
    t[k] = h[k].tangential;
    if (with_roll_) r[k] = h[k].rolling;
  }
  upload(sb_, xi, t);
  if (with_roll_) upload(sb_, roll, r);
}

void DeviceEngine::export_state(host::ParticleArrays& particles, host::ContactState& c) const {
  fold_mesh();
  particles = this->particles();
  c = host::ContactState{};
  if (pairs_.have) {  // each touching pair once, from the side of its smaller id
    std::vector<std::int64_t> off, id;
    std::vector<std::int32_t> nbr;
    std::vector<std::uint8_t> touch;
    download(sb_, pairs_.offsets, n_ + 1, off);
    download(sb_, pairs_.index, static_cast<std::size_t>(pairs_.total), nbr);
    download(sb_, pairs_.touching, static_cast<std::size_t>(pairs_.total), touch);
    const std::vector<ContactHistory> hist = download_histories(pairs_.xi, pairs_.roll, static_cast<std::size_t>(pairs_.total));
    for (std::size_t i = 0; i < n_; ++i)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k)
        if (touch[k] && particles.id[i] < particles.id[nbr[k]]) {
          c.pair_a.push_back(particles.id[i]);
          c.pair_b.push_back(particles.id[nbr[k]]);
          c.pair_history.push_back(hist[k]);
        }
  }
  {  // the used mesh slots, packed (ContactState)
    std::vector<std::uint8_t> count;
    std::vector<std::int32_t> block;
    std::vector<EntityContact> entity;
    std::vector<Vec3> normal;
    const std::size_t slots = static_cast<std::size_t>(slots_.blocks) * kMaxMeshContacts;
    download(sb_, slots_.count, n_, count);
    download(sb_, slots_.block, n_, block);
    download(sb_, slots_.entity, slots, entity);
    download(sb_, slots_.normal, slots, normal);
    const std::vector<ContactHistory> history = download_histories(slots_.xi, slots_.roll, slots);
    host::pack_mesh_slots(count, block.data(), entity, normal, history, c);
  }
  c.forces_current = forces_current_;
  if (forces_current_) {
    c.body_force = body_force();
    c.body_torque = body_torque();
  }
}

bool DeviceEngine::export_contact_forces(host::ContactForces& out) const {
  out = host::ContactForces{};
  if (!contacts_kept_ || !forces_current_) return false;
  fold_mesh();
  const host::ParticleArrays& p = particles();
  const bool polyhedra = !shapes_.empty();
  if (pairs_.have) {  // each touching pair once, from the side of its smaller id (as kept)
    std::vector<std::int64_t> off;
    std::vector<std::int32_t> nbr;
    std::vector<std::uint8_t> touch;
    std::vector<Vec3> force, point;
    const std::size_t total = static_cast<std::size_t>(pairs_.total);
    download(sb_, pairs_.offsets, n_ + 1, off);
    download(sb_, pairs_.index, total, nbr);
    download(sb_, pairs_.touching, total, touch);
    download(sb_, kept_force_, total, force);
    if (polyhedra) download(sb_, kept_point_, total, point);
    for (std::size_t i = 0; i < n_; ++i)
      for (std::int64_t k = off[i]; k < off[i + 1]; ++k) {
        const std::size_t j = static_cast<std::size_t>(nbr[k]);
        if (!touch[k] || p.id[i] > p.id[j]) continue;
        const bool with_polyhedron = polyhedra && (p.shape[i] >= 0 || p.shape[j] >= 0);
        host::add_pair_force(p, settings_.periodic, i, j, force[k], with_polyhedron ? &point[k] : nullptr, out);
      }
  }
  std::vector<std::uint8_t> count;
  std::vector<std::int32_t> block;
  std::vector<EntityContact> entity;
  std::vector<Vec3> body_force;
  const std::size_t slots = static_cast<std::size_t>(slots_.blocks) * kMaxMeshContacts;
  download(sb_, slots_.count, n_, count);
  download(sb_, slots_.block, n_, block);
  download(sb_, slots_.entity, slots, entity);
  download(sb_, slots_.force, slots, body_force);
  host::add_mesh_slot_forces(p, settings_.periodic, count, block.data(), entity.data(), body_force.data(), out);
  return true;
}

void DeviceEngine::restore_state(const host::ContactState& c, std::uint64_t step) {
  contacts_kept_ = false;  // (a state's forces are per particle)
  pairs_.deepest_valid = false;
  ahead_valid_ = false;  // (check_health's skin tests were of the state before)
  fold_touching(-1);
  fold_planes();
  fold_mesh();
  body_loads_.pending = false;  // (the last pass's loads: replaced by the state's, or by the next pass's)
  const std::size_t mesh_slots = host::checked_mesh_slots(c, n_, "restore_state");
  {  // a block of kMaxMeshContacts slots for each particle with mesh contacts, in particle order
    std::vector<std::int32_t> block(n_, -1);
    std::int32_t blocks = 0;
    for (std::size_t i = 0; i < n_; ++i)
      if (c.mesh_count[i]) block[i] = blocks++;
    std::vector<EntityContact> entity;
    std::vector<Vec3> normal;
    std::vector<ContactHistory> history;
    host::unpack_mesh_slots(c, block.data(), static_cast<std::size_t>(blocks), entity, normal, history);
    upload(sb_, slots_.count, c.mesh_count);
    upload(sb_, slots_.block, block);
    upload(sb_, slots_.entity, entity);
    upload(sb_, slots_.normal, normal);
    upload_histories(history, slots_.xi, slots_.roll);
    slots_.blocks = blocks;
    ensure(sb_, slots_.force, entity.size());
    ensure(sb_, slots_.torque, entity.size());
  }
  // The touching pairs become the current full list (both sides, rows sorted by partner id), which
  // the first rebuild carries the history from.
  const host::ParticleArrays& p = particles();
  std::unordered_map<std::int64_t, std::int32_t> index;
  index.reserve(n_);
  for (std::size_t i = 0; i < n_; ++i) index[p.id[i]] = static_cast<std::int32_t>(i);
  std::vector<std::vector<std::pair<std::int64_t, std::size_t>>> rows(n_);  // (partner id, pair)
  std::size_t in_contact = 0;  // (the count of the evaluation the state holds, below)
  for (std::size_t k = 0; k < c.pair_a.size(); ++k) {
    const auto a = index.find(c.pair_a[k]), b = index.find(c.pair_b[k]);
    if (a == index.end() || b == index.end()) throw std::runtime_error("restore_state: a pair names an unknown particle");
    in_contact += pair_in_contact(p.shape[a->second] >= 0 || p.shape[b->second] >= 0, c.pair_history[k].rolling) ? 1 : 0;
    rows[a->second].emplace_back(c.pair_b[k], k);
    rows[b->second].emplace_back(c.pair_a[k], k);
  }
  std::vector<std::int64_t> off(n_ + 1, 0), id;
  std::vector<std::int32_t> nbr;
  std::vector<ContactHistory> hist;
  for (std::size_t i = 0; i < n_; ++i) {
    std::sort(rows[i].begin(), rows[i].end());
    for (const auto& [partner, k] : rows[i]) {
      id.push_back(partner);
      nbr.push_back(index[partner]);
      hist.push_back(c.pair_history[k]);
    }
    off[i + 1] = static_cast<std::int64_t>(id.size());
  }
  upload(sb_, pairs_.offsets, off);
  upload(sb_, pairs_.index, nbr);
  upload_histories(hist, pairs_.xi, pairs_.roll);
  upload(sb_, pairs_.touching, std::vector<std::uint8_t>(id.size(), 1));
  pairs_.total = static_cast<std::int64_t>(id.size());
  pairs_.have = true;
  mesh_lists_.have = false;
  needs_build_ = true;
  steps_ = step;
  time_ = static_cast<double>(step) * settings_.dt;
  host_p_fresh_ = false;
  forces_current_ = c.forces_current;
  if (forces_current_) {  // the particles' force fields hold the forces at this state
    if (c.body_force.size() != body_loads_.force.size() || c.body_torque.size() != body_loads_.torque.size())
      throw std::runtime_error("restore_state: the contact state is for another number of mesh bodies");
    body_loads_.force = c.body_force;
    body_loads_.torque = c.body_torque;
    move_meshes(time_);
  }
  // The counts of the evaluation the state holds, for an output before the next step (as on the
  // host engine).
  touching_pairs_ = forces_current_ ? in_contact : 0;
  mesh_contacts_ = forces_current_ ? mesh_slots : 0;
}

}  // namespace dem::device::DEM_DEVICE_NS
