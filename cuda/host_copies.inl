// Host copies for output: particles, meshes and body loads brought back when asked.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;


const host::ParticleArrays& DeviceEngine::particles() const {
  if (!host_p_fresh_ || host_p_step_ != steps_) {
    auto& self = const_cast<DeviceEngine&>(*this);
#define DEM_DOWNLOAD_FIELD(T, name) download(sb_, self.p_.name, n_, host_p_.name);
    DEM_PARTICLE_FIELDS(DEM_DOWNLOAD_FIELD)
#undef DEM_DOWNLOAD_FIELD
    host_p_step_ = steps_;
    host_p_fresh_ = true;
  }
  return host_p_;
}

const host::MeshSet& DeviceEngine::meshes() const {
  if (meshes_step_ != steps_ || meshes_.time != mesh_time_) {
    download(sb_, d_vertices_, d_vertices_.size(), meshes_.vertices);
    download(sb_, d_normals_, d_normals_.size(), meshes_.normals);
    meshes_.time = mesh_time_;
    meshes_step_ = steps_;
  }
  return meshes_;
}

const std::vector<Vec3>& DeviceEngine::body_force() const {
  const_cast<DeviceEngine&>(*this).sum_body_loads();
  return body_loads_.force;
}

const std::vector<Vec3>& DeviceEngine::body_torque() const {
  body_force();
  return body_loads_.torque;
}

double DeviceEngine::bytes_per_particle() const {
  if (n_ == 0) return 0;
  double bytes = 0;
#define DEM_FIELD_BYTES(T, name) bytes += double(p_.name.capacity()) * sizeof(T);
  DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
  auto add = [&bytes](const auto& v) { bytes += double(v.capacity()) * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  add(pairs_.offsets), add(pairs_.old_offsets), add(pairs_.index), add(pairs_.id), add(pairs_.old_id), add(pairs_.xi), add(pairs_.roll),
      add(pairs_.old_xi), add(pairs_.old_roll), add(pairs_.touching), add(pairs_.old_touching), add(order_), add(cell_keys_), add(cell_start_), add(cell_end_),
      add(counts_), add(pairs_.x_at_build), add(pairs_.reach), add(pairs_.half_skin2), add(pairs_.speed), add(pairs_.touching_count),
      add(mesh_lists_.offsets), add(mesh_lists_.elements), add(mesh_lists_.x_at_build), add(mesh_lists_.skin), add(slots_.count), add(slots_.entity), add(slots_.normal),
      add(slots_.xi), add(slots_.roll), add(field_scratch_), add(slots_.spare_entity), add(slots_.spare_normal), add(slots_.spare_xi), add(slots_.spare_roll),
      add(slots_.force), add(slots_.torque), add(slots_.particle_force), add(slots_.particle_torque), add(slots_.stats),
      add(slots_.block), add(slots_.spare_block), add(slots_.block_particle),
      add(kept_force_), add(kept_point_), add(plane_counts_), add(pairs_.deepest);
  bytes += double(cache_->bytes());
  return bytes / double(n_);
}

}  // namespace dem::device::DEM_DEVICE_NS
