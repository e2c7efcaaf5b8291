// Mesh motion on the device: the bodies' poses at a time and the vertices and normals moved to them.
// Part of the device engine (cuda/device_engine.inl includes the parts in order, into one
// translation unit per system).
namespace dem::device::DEM_DEVICE_NS {
namespace thrust = THRUST_NS_QUALIFIER;


void DeviceEngine::move_meshes(double t) {
  Timer timer(clock_, times_.mesh_motion);
  mesh_time_ = t;
  // The bodies' frames on the host (the engines' one evaluation, core/engine/views.hpp), then the
  // vertices and normals on the device, unless no body moved since they were last posed (static
  // walls: the vertices are a function of the frames alone, so they would come out the same).
  if (!meshes_.update_frames(t) && meshes_posed_) return;
  const std::vector<BodyFrame>& frames = meshes_.frames;
  if (d_frames_.size() != frames.size()) upload(sb_, d_frames_, frames);
  else write_frames(frames, d_frames_);
  meshes_posed_ = true;
  pose_meshes(mesh_view());
}

// frames into out (as long), through kernel parameters (WriteFrames): no wait.
void DeviceEngine::write_frames(const std::vector<BodyFrame>& frames, dvec<BodyFrame>& out) {
  for (std::size_t b0 = 0; b0 < frames.size(); b0 += kFramesPerLaunch) {
    WriteFrames w{};
    const std::size_t count = std::min<std::size_t>(kFramesPerLaunch, frames.size() - b0);
    const auto first = frames.begin() + static_cast<std::ptrdiff_t>(b0);
    std::copy(first, first + static_cast<std::ptrdiff_t>(count), w.frame);
    w.out = raw(out) + b0;
    for_each_index(sb_, static_cast<std::int64_t>(count), w);
  }
}

// v's vertices and normals from its frames and reference pose, in one launch (each is a function
// of the frames alone).
void DeviceEngine::pose_meshes(const MeshView& v) {
  const std::int64_t nv = v.num_vertices, ne = v.num_elements;
  for_each_index(sb_, std::max(nv, ne), [v, nv, ne] DEM_HD(std::int64_t k) {
    if (k < nv) move_mesh_vertex(v, static_cast<index_t>(k));
    if (k < ne) move_mesh_normal(v, static_cast<index_t>(k));
  });
}

// The meshes at time_ (the next evaluation's), for check_health's kept mesh lists' check: the
// present pose where no body moves in between (static walls), else the bodies' frames at time_
// (on the host, as move_meshes takes them) and the vertices and normals they give, in spare
// buffers. The step's move_meshes poses the same in place (the same functions: the same bits).
MeshView DeviceEngine::pose_ahead() {
  Timer timer(clock_, times_.mesh_motion);
  const std::size_t nb = meshes_.bodies.size();
  ahead_frames_host_.resize(nb);
  bool same = meshes_posed_ && meshes_.frames.size() == nb;
  for (std::size_t b = 0; b < nb; ++b) {
    ahead_frames_host_[b] = body_frame(meshes_.bodies[b], meshes_.knots.data(), time_);
    same = same && std::memcmp(&ahead_frames_host_[b], &meshes_.frames[b], sizeof(BodyFrame)) == 0;
  }
  if (same) return mesh_view();
  write_frames(ahead_frames_host_, ahead_frames_);  // (the buffers sized by the constructor)
  MeshView v = mesh_view();
  // (the vertices of no body stay where they are: copied from the present pose)
  launch(v.num_vertices, sb_, [&](auto pol) {
    thrust::copy(pol, d_vertices_.begin(), d_vertices_.end(), ahead_vertices_.begin());
  });
  v.frames = raw(ahead_frames_);
  v.vertices = raw(ahead_vertices_);
  v.normals = raw(ahead_normals_);
  v.time = time_;
  pose_meshes(v);
  return v;
}

}  // namespace dem::device::DEM_DEVICE_NS
