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
  if (!body_loads_fresh_) {
    download(sb_, d_body_force_, d_body_force_.size(), body_force_);
    download(sb_, d_body_torque_, d_body_torque_.size(), body_torque_);
    body_loads_fresh_ = true;
  }
  return body_force_;
}

const std::vector<Vec3>& DeviceEngine::body_torque() const {
  body_force();
  return body_torque_;
}

double DeviceEngine::bytes_per_particle() const {
  if (n_ == 0) return 0;
  double bytes = 0;
#define DEM_FIELD_BYTES(T, name) bytes += double(p_.name.capacity()) * sizeof(T);
  DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
  auto add = [&bytes](const auto& v) { bytes += double(v.capacity()) * sizeof(typename std::decay_t<decltype(v)>::value_type); };
  add(nbr_offsets_), add(old_offsets_), add(nbr_index_), add(nbr_id_), add(old_id_), add(nbr_xi_), add(nbr_roll_),
      add(old_xi_), add(old_roll_), add(nbr_touching_), add(old_touching_), add(order_), add(cell_keys_), add(cell_start_),
      add(counts_), add(x_at_build_), add(reach_), add(half_skin2_), add(speed_), add(pair_touching_count_),
      add(cand_offsets_), add(cand_), add(x_at_mesh_build_), add(mesh_skin_), add(mesh_count_), add(mesh_entity_), add(mesh_normal_),
      add(mesh_xi_), add(mesh_roll_), add(field_scratch_), add(tmp_entity_), add(tmp_normal_), add(tmp_xi_), add(tmp_roll_),
      add(slot_force_), add(slot_torque_), add(mesh_force_), add(mesh_torque_), add(mesh_stats_),
      add(touching_by_id_), add(id_scratch_), add(mesh_block_), add(tmp_block_), add(block_particle_);
  bytes += double(cache_->bytes());
  return bytes / double(n_);
}

}  // namespace dem::device::DEM_DEVICE_NS
