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

std::vector<host::StateBuffer> DeviceEngine::state_buffers() const {
  std::vector<host::StateBuffer> out;
  const auto add = [&out](const char* name, const auto& v) {
    out.push_back(host::StateBuffer{name, double(v.capacity()) * sizeof(typename std::decay_t<decltype(v)>::value_type)});
  };
  double fields = 0;
#define DEM_FIELD_BYTES(T, name) fields += double(p_.name.capacity()) * sizeof(T);
  DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
  out.push_back(host::StateBuffer{"particle fields", fields});
  add("pairs.offsets", pairs_.offsets), add("pairs.old_offsets", pairs_.old_offsets), add("pairs.index", pairs_.index);
  add("pairs.xi", pairs_.xi), add("pairs.roll", pairs_.roll), add("pairs.touching", pairs_.touching);
  add("pairs.carry_offsets", pairs_.carry_offsets), add("pairs.carry_index", pairs_.carry_index);
  add("pairs.carry_xi", pairs_.carry_xi), add("pairs.carry_roll", pairs_.carry_roll);
  add("pairs.carry_touching", pairs_.carry_touching), add("pairs.totals", pairs_.totals);
  add("order", order_), add("cell_keys", cell_keys_);
  add("cell_start", cell_start_), add("cell_end", cell_end_), add("counts", counts_);
  add("pairs.x_at_build", pairs_.x_at_build), add("pairs.reach", pairs_.reach), add("pairs.half_skin2", pairs_.half_skin2);
  add("pairs.speed", pairs_.speed), add("pairs.touching_count", pairs_.touching_count), add("pairs.deepest", pairs_.deepest);
  add("mesh_lists.offsets", mesh_lists_.offsets), add("mesh_lists.elements", mesh_lists_.elements);
  add("mesh_lists.x_at_build", mesh_lists_.x_at_build), add("mesh_lists.skin", mesh_lists_.skin);
  add("slots.count", slots_.count), add("slots.entity", slots_.entity), add("slots.normal", slots_.normal);
  add("slots.xi", slots_.xi), add("slots.roll", slots_.roll), add("field_scratch", field_scratch_);
  add("slots.spare_entity", slots_.spare_entity), add("slots.spare_normal", slots_.spare_normal);
  add("slots.spare_xi", slots_.spare_xi), add("slots.spare_roll", slots_.spare_roll), add("slots.force", slots_.force);
  add("slots.torque", slots_.torque), add("slots.particle_force", slots_.particle_force);
  add("slots.particle_torque", slots_.particle_torque), add("slots.stats", slots_.stats), add("slots.block", slots_.block);
  add("slots.block_particle", slots_.block_particle);
  add("kept_force", kept_force_), add("kept_point", kept_point_), add("plane_counts", plane_counts_);
  out.push_back(host::StateBuffer{"temporary storage", double(cache_->bytes())});
  return out;
}

}  // namespace dem::device::DEM_DEVICE_NS
