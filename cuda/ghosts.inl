// What the MPI domain decomposition (host/mpi/decomposition.hpp) asks of a rank's engine: which
// particles are ghosts, the counts of the rank's own contacts, and the ghosts' states from their
// owners (the host engine's host/omp/ghosts.cpp). Part of the device engine (cuda/device_engine.inl
// includes the parts in order, into one translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;

// The lists are made anew at the next step: the pair list leaves out the pairs of two ghosts and
// the mesh lists the ghosts, so lists made under other ghosts may lack contacts these need.
void DeviceEngine::set_ghosts(const std::vector<std::int64_t>& ghost_ids) {
  upload(sb_, ghost_ids_, ghost_ids);
  ghost_flag_.clear();
  needs_build_ = true;
  mesh_lists_.have = false;
  ahead_valid_ = false;  // (skin tests made ahead decided on the old list)
}

std::vector<BodyLoadSum> DeviceEngine::body_load_sums() const {
  const_cast<DeviceEngine&>(*this).sum_body_loads();
  return body_loads_.sums;
}

// A touching pair in contact (pair_in_contact) counts where its particle of smaller id is no ghost
// (each pair once: the full list holds it in both rows, and only the smaller id's row counts it).
std::size_t DeviceEngine::own_touching_pairs() const {
  if (!pairs_.have || n_ == 0) return 0;
  auto& self = const_cast<DeviceEngine&>(*this);
  const std::int64_t* id = raw(self.p_.id);
  const std::int64_t* off = raw(self.pairs_.offsets);
  const std::int32_t* partner = raw(self.pairs_.index);
  const std::uint8_t* touching = raw(self.pairs_.touching);
  const std::int32_t* shape = shapes_.empty() ? nullptr : raw(self.p_.shape);
  const Vec3* kept = shape != nullptr && with_roll_ ? raw(self.pairs_.roll) : nullptr;
  const std::int64_t* ghost = ghost_ids_.empty() ? nullptr : raw(self.ghost_ids_);
  const std::int64_t* ghost_end = ghost == nullptr ? nullptr : ghost + ghost_ids_.size();
  return static_cast<std::size_t>(sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n_), [=] DEM_HD(std::int64_t i) {
    if (ghost != nullptr && sorted_contains(ghost, ghost_end, id[i])) return std::int64_t(0);
    std::int64_t c = 0;
    for (std::int64_t k = off[i]; k < off[i + 1]; ++k) {
      const std::int32_t j = partner[k];
      const bool with_polyhedron = shape != nullptr && (shape[i] >= 0 || shape[j] >= 0);
      c += (touching[k] != 0 && id[i] < id[j] && pair_in_contact(with_polyhedron, kept ? kept[k] : Vec3{0, 0, 0})) ? 1 : 0;
    }
    return c;
  }));
}

std::size_t DeviceEngine::own_mesh_contacts() const {
  if (n_ == 0) return 0;
  auto& self = const_cast<DeviceEngine&>(*this);
  const std::int64_t* id = raw(self.p_.id);
  const std::uint8_t* count = raw(self.slots_.count);
  const std::int64_t* ghost = ghost_ids_.empty() ? nullptr : raw(self.ghost_ids_);
  const std::int64_t* ghost_end = ghost == nullptr ? nullptr : ghost + ghost_ids_.size();
  return static_cast<std::size_t>(sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n_), [=] DEM_HD(std::int64_t i) {
    return ghost != nullptr && sorted_contains(ghost, ghost_end, id[i]) ? std::int64_t(0) : std::int64_t(count[i]);
  }));
}

// The owners' states uploaded in one buffer per field and scattered to the ghosts' indices.
void DeviceEngine::set_states(const std::vector<std::int32_t>& index, const host::StepStates& s) {
  forces_current_ = false;  // (the forces are no longer those of this state)
  contacts_kept_ = false;
  ahead_valid_ = false;  // (skin tests made ahead on the old positions)
  host_p_fresh_ = false;
  if (index.empty()) return;
  upload(sb_, ghost_index_, index);
  upload(sb_, ghost_x_, s.x);
  upload(sb_, ghost_v_, s.v);
  upload(sb_, ghost_w_, s.w);
  const bool with_q = !s.q.empty(), with_pad = !s.pad.empty();
  if (with_q) upload(sb_, ghost_q_, s.q);
  if (with_pad) upload(sb_, ghost_pad_, s.pad);
  const std::int32_t* at = raw(ghost_index_);
  const Vec3 *sx = raw(ghost_x_), *sv = raw(ghost_v_), *sw = raw(ghost_w_);
  const Quat* sq = with_q ? raw(ghost_q_) : nullptr;
  const real* spad = with_pad ? raw(ghost_pad_) : nullptr;
  Vec3 *px = raw(p_.x), *pv = raw(p_.v), *pw = raw(p_.w);
  Quat* pq = raw(p_.q);
  real* ppad = raw(p_.pad);
  for_each_index(sb_, static_cast<std::int64_t>(index.size()), [=] DEM_HD(std::int64_t k) {
    const std::int32_t i = at[k];
    px[i] = sx[k];
    pv[i] = sv[k];
    pw[i] = sw[k];
    if (sq != nullptr) pq[i] = sq[k];
    if (spad != nullptr) ppad[i] = spad[k];
  });
}

// The states gathered on the device into one buffer per field, and only those copied back.
void DeviceEngine::get_states(const std::vector<std::int32_t>& index, bool shaped, std::uint64_t version,
                              host::StepStates& out) const {
  const std::size_t n = index.size();
  out.resize(n, shaped);
  if (n == 0) return;
  if (version != gather_version_) {
    upload(sb_, gather_index_, index);
    gather_version_ = version;
  }
  ensure(sb_, gather_x_, n);
  ensure(sb_, gather_v_, n);
  ensure(sb_, gather_w_, n);
  if (shaped) {
    ensure(sb_, gather_q_, n);
    ensure(sb_, gather_pad_, n);
  }
  auto& self = const_cast<DeviceEngine&>(*this);
  const std::int32_t* at = raw(gather_index_);
  const Vec3 *px = raw(self.p_.x), *pv = raw(self.p_.v), *pw = raw(self.p_.w);
  const Quat* pq = raw(self.p_.q);
  const real* ppad = raw(self.p_.pad);
  Vec3 *gx = raw(gather_x_), *gv = raw(gather_v_), *gw = raw(gather_w_);
  Quat* gq = shaped ? raw(gather_q_) : nullptr;
  real* gpad = shaped ? raw(gather_pad_) : nullptr;
  for_each_index(sb_, static_cast<std::int64_t>(n), [=] DEM_HD(std::int64_t k) {
    const std::int32_t i = at[k];
    gx[k] = px[i];
    gv[k] = pv[i];
    gw[k] = pw[i];
    if (gq != nullptr) {
      gq[k] = pq[i];
      gpad[k] = ppad[i];
    }
  });
  download(sb_, gather_x_, n, out.x);
  download(sb_, gather_v_, n, out.v);
  download(sb_, gather_w_, n, out.w);
  if (shaped) {
    download(sb_, gather_q_, n, out.q);
    download(sb_, gather_pad_, n, out.pad);
  }
}

std::vector<std::int64_t> DeviceEngine::particle_ids() const {
  if (host_p_fresh_ && host_p_step_ == steps_) return host_p_.id;
  std::vector<std::int64_t> ids;
  download(sb_, p_.id, n_, ids);
  return ids;
}

// The travel test on the device, the origins and limits kept there between versions: one integer comes back.
bool DeviceEngine::farther_than(const std::vector<std::int32_t>& index, const std::vector<Vec3>& origin,
                                const std::vector<double>& limit, const PeriodicBox& period, std::uint64_t version) const {
  const std::size_t n = index.size();
  if (n == 0) return false;
  if (version != travel_version_) {
    upload(sb_, travel_index_, index);
    upload(sb_, travel_origin_, origin);
    upload(sb_, travel_limit_, limit);
    travel_version_ = version;
  }
  auto& self = const_cast<DeviceEngine&>(*this);
  const std::int32_t* at = raw(travel_index_);
  const Vec3* from = raw(travel_origin_);
  const double* most = raw(travel_limit_);
  const Vec3* px = raw(self.p_.x);
  const PeriodicBox box = period;
  return sum_index<std::int64_t>(sb_, static_cast<std::int64_t>(n), [=] DEM_HD(std::int64_t k) {
           return double(moved2(box, px[at[k]], from[k])) > most[k] * most[k] ? std::int64_t(1) : std::int64_t(0);
         }) > 0;
}

}  // namespace dem::device::DEM_DEVICE_NS
