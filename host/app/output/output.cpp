#include "host/app/output/output.hpp"

#include "core/integrate/central_difference.hpp"
#include "host/app/scene/placement.hpp"
#include "host/sim/exact_sum.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <initializer_list>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace dem::host {

namespace fs = std::filesystem;

namespace {
// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// Writes all of `data` to `fd` (write(2) may take part of it); 0, or the errno of the write that failed.
int write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

// Writes `text` to <path>.tmp, then renames it over `path`: a reader never sees a half-written
// file, and a failed write leaves the previous file (or none) and removes the .tmp.
void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) throw WriteError("cannot write '" + tmp.string() + "': " + std::strerror(errno));
  int error = write_all(fd, text.data(), text.size());
  if (error == 0 && ::fsync(fd) != 0 && errno != EINVAL) error = errno;  // (EINVAL: a file that cannot be synced)
  if (::close(fd) != 0 && error == 0) error = errno;
  std::error_code ec;
  if (error == 0) fs::rename(tmp, path, ec);
  if (error != 0 || ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw WriteError("cannot write '" + path.string() + "': " + (ec ? ec.message() : std::string(std::strerror(error))));
  }
}

// A stream that formats rows as the CSV files have them: 10 significant digits.
std::ostringstream rows() {
  std::ostringstream out;
  out << std::setprecision(10);
  return out;
}

// Appends each block to its file, all or none: when one fails, those already appended are cut
// back, so that every CSV ends with the same probe time, then the WriteError goes on.
void append_all(std::initializer_list<std::pair<RowFile*, std::string>> blocks) {
  std::vector<std::pair<RowFile*, std::uint64_t>> done;
  try {
    for (const auto& [file, block] : blocks) {
      if (!file->is_open() || block.empty()) continue;
      const std::uint64_t before = file->length();
      file->append(block);
      done.emplace_back(file, before);
    }
  } catch (const WriteError&) {
    for (const auto& [file, before] : done) file->truncate(before);
    throw;
  }
}
}  // namespace

RowFile::~RowFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RowFile::open(const std::string& path) {
  path_ = path;
  // O_APPEND: after a cut, the next block goes at the new end
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0666);
  if (fd_ < 0) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  length_ = 0;
}

void RowFile::append(const std::string& block) {
  const int error = write_all(fd_, block.data(), block.size());
  if (error == 0) {
    length_ += block.size();
    return;
  }
  // Part of the block may be in: cut it off. (A device such as /dev/full cannot be cut, and holds
  // nothing: the write's error is the one to report.)
  const int cut = ::ftruncate(fd_, static_cast<off_t>(length_));
  static_cast<void>(cut);
  throw WriteError("cannot write '" + path_ + "': " + std::strerror(error));
}

void RowFile::truncate(std::uint64_t length) {
  if (::ftruncate(fd_, static_cast<off_t>(length)) == 0) length_ = length;
}

OutputWriter::OutputWriter(std::string dir, const SceneConfig& scene, double particle_reach)
    : dir_(std::move(dir)), scene_(scene) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw std::runtime_error("cannot create output directory '" + dir_ + "': " + ec.message());
  // A new run starts clean: the files an earlier run wrote here (and only those) are removed, so
  // old snapshots or an old summary.json never sit beside the new ones.
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    const std::string f = e.path().filename().string();
    const bool ours = f == "particles.pvd" || f == "meshes.pvd" || f == "polyhedra.pvd" || f == "probes.csv" ||
                      f == "bodies.csv" || f == "summary.json" || f == "summary.json.tmp" || f == "checkpoint.bin" ||
                      f == "diagnostics.csv" || f == "outlets.csv" || f == "mixing.csv" || f == "residence.csv" ||
                      f == "fields.pvd" || f == "checkpoint.bin.tmp" ||
                      ((f.rfind("particles_", 0) == 0 || f.rfind("meshes_", 0) == 0 || f.rfind("polyhedra_", 0) == 0) &&
                       (e.path().extension() == ".vtu" || (f.size() > 8 && f.substr(f.size() - 8) == ".vtu.tmp"))) ||
                      (f.rfind("fields_", 0) == 0 &&
                       (e.path().extension() == ".vti" || (f.size() > 8 && f.substr(f.size() - 8) == ".vti.tmp")));
    if (ours && e.is_regular_file()) fs::remove(e.path(), ec);
  }
  if (scene_.output.vtk && scene_.output.snapshot_interval > 0) {
    particle_pvd_ = std::make_unique<PvdWriter>((fs::path(dir_) / "particles.pvd").string());
    if (!scene_.meshes.empty()) mesh_pvd_ = std::make_unique<PvdWriter>((fs::path(dir_) / "meshes.pvd").string());
  }
  if (scene_.output.probe_interval > 0) {
    probes_csv_.open((fs::path(dir_) / "probes.csv").string());
    probes_csv_.append("t,id,x,y,z,vx,vy,vz,wx,wy,wz,fx,fy,fz\n");
    diagnostics_csv_.open((fs::path(dir_) / "diagnostics.csv").string());
    diagnostics_csv_.append(
        "t,particles,inserted,removed,kinetic_translational,kinetic_rotational,mean_speed,max_speed,"
        "touching_pairs,mesh_contacts,coordination,max_overlap\n");
    if (!scene_.outlets.empty()) {
      outlets_csv_.open((fs::path(dir_) / "outlets.csv").string());
      outlets_csv_.append("t,outlet,count,mass\n");
      residence_csv_.open((fs::path(dir_) / "residence.csv").string());
      residence_csv_.append("t,outlet,id,inserted,residence\n");
    }
    if (!scene_.meshes.empty()) {
      bodies_csv_.open((fs::path(dir_) / "bodies.csv").string());
      bodies_csv_.append("t,body,fx,fy,fz,tx,ty,tz,power\n");
    }
    if (scene_.mixing.given) {
      mixing_csv_.open((fs::path(dir_) / "mixing.csv").string());
      mixing_csv_.append(
          "t,tag,fraction,cells,particles,variance,variance_segregated,variance_random,lacey,rsd,contacts,"
          "unlike_contacts,contact_index\n");
    }
  }
  // (the grid is made here, so that a run learns at once that it is too large)
  if (scene_.coarse_graining.given && scene_.output.vtk)
    fields_ = std::make_unique<CoarseGrainer>(scene_.coarse_graining, periodic_box(scene_), particle_reach);
}

bool OutputWriter::due_at(double t) const {
  const double half_step = 0.5 * scene_.simulation.dt;
  return (particle_pvd_ && t + half_step >= next_snapshot_) || (probes_csv_.is_open() && t + half_step >= next_probe_) ||
         (fields_ && t + half_step >= next_field_sample_);
}

void OutputWriter::write_due(Simulation& engine) {
  const double t = engine.time(), half_step = 0.5 * scene_.simulation.dt;
  const bool snapshot_due = particle_pvd_ && t + half_step >= next_snapshot_;
  const bool probe_due = probes_csv_.is_open() && t + half_step >= next_probe_;
  const bool field_sample_due = fields_ && t + half_step >= next_field_sample_;
  if (snapshot_due || probe_due || field_sample_due) engine.compute_forces();
  if (field_sample_due) {
    const CoarseGrainingSpec& cg = scene_.coarse_graining;
    sample_fields(engine);
    next_field_sample_ += cg.sample_interval * std::max(1.0, std::floor((t + half_step - next_field_sample_) / cg.sample_interval) + 1);
    if (t + half_step >= next_fields_) {
      write_fields(t);
      next_fields_ += cg.interval * std::max(1.0, std::floor((t + half_step - next_fields_) / cg.interval) + 1);
    }
  }
  if (snapshot_due) {
    snapshot(engine);
    next_snapshot_ += scene_.output.snapshot_interval * std::max(1.0, std::floor((t + half_step - next_snapshot_) / scene_.output.snapshot_interval) + 1);
  }
  if (probe_due) {
    probes(engine);
    next_probe_ += scene_.output.probe_interval * std::max(1.0, std::floor((t + half_step - next_probe_) / scene_.output.probe_interval) + 1);
  }
}

void OutputWriter::write_final(Simulation& engine) {
  const bool fields_left = fields_ && last_fields_time_ != engine.time();
  if ((particle_pvd_ && last_snapshot_time_ != engine.time()) || (probes_csv_.is_open() && last_probe_time_ != engine.time()) ||
      fields_left)
    engine.compute_forces();
  if (particle_pvd_ && last_snapshot_time_ != engine.time()) snapshot(engine);
  if (probes_csv_.is_open() && last_probe_time_ != engine.time()) probes(engine);
  if (fields_left) {  // the samples since the last field file, and the state now
    if (last_field_sample_time_ != engine.time()) sample_fields(engine);
    write_fields(engine.time());
  }
}

void OutputWriter::sample_fields(Simulation& engine) {
  const auto start = std::chrono::steady_clock::now();
  // (the contacts' forces as the engine kept them: none at a restart's first sample, see
  // CgFields::contact_stress)
  const auto& g = scene_.simulation.gravity;
  fields_->sample(engine, Vec3{real(g[0]), real(g[1]), real(g[2])}, real(scene_.simulation.dt));
  last_field_sample_time_ = engine.time();
  fields_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void OutputWriter::write_fields(double t) {
  const auto start = std::chrono::steady_clock::now();
  const CgFields f = fields_->average();
  const std::size_t n = f.grid.cells();
  std::vector<VtkArray> arrays = {{"solid_fraction", 1, f.solid_fraction.data(), n},
                                  {"density", 1, f.density.data(), n},
                                  {"velocity", 3, f.velocity.data(), n},
                                  {"kinetic_stress", 9, f.kinetic_stress.data(), n},
                                  {"granular_temperature", 1, f.temperature.data(), n}};
  if (!f.contact_stress.empty()) {
    arrays.push_back({"contact_stress", 9, f.contact_stress.data(), n});
    arrays.push_back({"stress", 9, f.stress.data(), n});
  }
  std::vector<std::string> tag_names;
  tag_names.reserve(f.tag_solid_fraction.size());
  for (const auto& [tag, phi] : f.tag_solid_fraction) {
    tag_names.push_back("solid_fraction_tag" + std::to_string(tag));
    arrays.push_back({tag_names.back(), 1, phi.data(), n});
  }
  VtuOptions options;
  options.time = t;
  options.zlib = scene_.output.zlib;
  char name[64];
  std::snprintf(name, sizeof name, "fields_%06d.vti", fields_index_);
  write_vti_cells((fs::path(dir_) / name).string(), {f.grid.n[0], f.grid.n[1], f.grid.n[2]},
                  {f.grid.lo[0], f.grid.lo[1], f.grid.lo[2]}, {f.grid.h[0], f.grid.h[1], f.grid.h[2]}, arrays, options);
  if (!fields_pvd_) fields_pvd_ = std::make_unique<PvdWriter>((fs::path(dir_) / "fields.pvd").string());
  fields_pvd_->add(t, name);
  ++fields_index_;
  last_fields_time_ = t;
  fields_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<Vec3> velocities_at_time(const Simulation& engine, const SceneConfig& scene, std::vector<Vec3>& w) {
  const ParticleArrays& p = engine.particles();
  const Vec3 g{real(scene.simulation.gravity[0]), real(scene.simulation.gravity[1]), real(scene.simulation.gravity[2])};
  const real dt = scene.simulation.dt;
  std::vector<Vec3> v(p.v);
  w = p.w;
  const std::vector<PolyShape>& shapes = engine.shapes();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p.shape[i] >= 0) {  // a full inertia tensor (core/engine/polyhedron_phases.hpp)
      const Vec3 spin = polyhedron_spin_at_step_time(p.q[i], w[i], p.torque[i], polyhedron_moments(p, i, shapes), dt);
      velocities_at_step_time(v[i], w[i], p.force[i], Vec3{0, 0, 0}, p.inv_mass[i], 0, g, p.prescribed[i] != 0, dt);
      if (p.prescribed[i] == 0) w[i] = spin;
      continue;
    }
    velocities_at_step_time(v[i], w[i], p.force[i], p.torque[i], p.inv_mass[i], p.inv_inertia[i], g,
                            p.prescribed[i] != 0, dt);
  }
  return v;
}

void OutputWriter::snapshot(const Simulation& engine) {
  const ParticleArrays& p = engine.particles();
  const std::size_t n = p.size();
  std::vector<Vec3> w;
  const std::vector<Vec3> v = velocities_at_time(engine, scene_, w);
  std::vector<double> xyz(3 * n), vel(3 * n), ang(3 * n), force(3 * n), radius(n), orientation(4 * n);
  std::vector<std::int64_t> material(n), shape(n), tag(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Vec3 a[4] = {p.x[i], v[i], w[i], p.force[i]};
    std::vector<double>* dst[4] = {&xyz, &vel, &ang, &force};
    for (int k = 0; k < 4; ++k) {
      (*dst[k])[3 * i] = a[k].x;
      (*dst[k])[3 * i + 1] = a[k].y;
      (*dst[k])[3 * i + 2] = a[k].z;
    }
    radius[i] = p.radius[i];
    material[i] = p.material[i];
    shape[i] = p.shape[i];
    tag[i] = p.tag[i];
    const Quat q = p.q[i];
    orientation[4 * i] = q.w, orientation[4 * i + 1] = q.x, orientation[4 * i + 2] = q.y, orientation[4 * i + 3] = q.z;
  }
  VtuOptions options;
  options.time = engine.time();
  options.zlib = scene_.output.zlib;
  options.global_ids = "id";
  char name[64];
  std::snprintf(name, sizeof name, "particles_%06d.vtu", snapshot_index_);
  // (radius: a polyhedron's bounding sphere's; orientation: body to world, w x y z; shape: -1 a
  // sphere, else the polyhedron's index in the scene's shape table)
  write_vtu_points((fs::path(dir_) / name).string(), n, xyz.data(),
                   {{"velocity", 3, vel.data(), n}, {"angular_velocity", 3, ang.data(), n},
                    {"force", 3, force.data(), n}, {"radius", 1, radius.data(), n},
                    {"orientation", 4, orientation.data(), n}},
                   {{"id", 1, p.id.data(), n}, {"material", 1, material.data(), n}, {"shape", 1, shape.data(), n},
                    {"tag", 1, tag.data(), n}},
                   options);
  particle_pvd_->add(engine.time(), name);
  if (!engine.shapes().empty()) {
    // The polyhedra as ParaView draws them: each one's faces as polygon cells, placed and turned,
    // with its id, velocity and shape per cell.
    const std::vector<PolyShape>& shapes = engine.shapes();
    std::vector<std::array<double, 3>> verts;
    std::vector<std::int32_t> offsets{0}, corners;
    std::vector<std::int64_t> cell_id, cell_shape, cell_tag;
    std::vector<double> cell_velocity;
    for (std::size_t i = 0; i < n; ++i) {
      if (p.shape[i] < 0) continue;
      const PolyShape& s = shapes[static_cast<std::size_t>(p.shape[i])];
      PlacedVertices placed;
      place_vertices(s, p.q[i], p.radius[i] / s.bounding_radius, p.x[i], placed);
      const std::int32_t first = static_cast<std::int32_t>(verts.size());
      for (int k = 0; k < placed.n; ++k) verts.push_back({placed.v[k].x, placed.v[k].y, placed.v[k].z});
      for (int f = 0; f < s.num_faces; ++f) {
        for (int k = s.face_start[f]; k < s.face_start[f + 1]; ++k) corners.push_back(first + s.face_vertex[k]);
        offsets.push_back(static_cast<std::int32_t>(corners.size()));
        cell_id.push_back(p.id[i]);
        cell_shape.push_back(p.shape[i]);
        cell_tag.push_back(p.tag[i]);
        for (double c : {double(v[i].x), double(v[i].y), double(v[i].z)}) cell_velocity.push_back(c);
      }
    }
    const std::size_t cells = cell_id.size();
    std::snprintf(name, sizeof name, "polyhedra_%06d.vtu", snapshot_index_);
    VtuOptions poly_options = options;
    poly_options.global_ids.clear();
    write_vtu_polygons((fs::path(dir_) / name).string(), verts, offsets, corners, {{"velocity", 3, cell_velocity.data(), cells}},
                       {{"id", 1, cell_id.data(), cells}, {"shape", 1, cell_shape.data(), cells},
                        {"tag", 1, cell_tag.data(), cells}},
                       poly_options);
    if (!polyhedra_pvd_) polyhedra_pvd_ = std::make_unique<PvdWriter>((fs::path(dir_) / "polyhedra.pvd").string());
    polyhedra_pvd_->add(engine.time(), name);
  }
  if (mesh_pvd_) {
    // One file per body, so that ParaView shows each as a block under its name (the .pvd's name
    // attribute) and a body can be coloured or hidden on its own.
    const MeshSet& m = engine.meshes();
    std::vector<PvdWriter::Part> parts;
    for (std::size_t b = 0; b < m.bodies.size(); ++b) {
      const MeshBody& body = m.bodies[b];
      std::vector<std::array<double, 3>> verts(static_cast<std::size_t>(body.vertex_count));
      for (std::size_t k = 0; k < verts.size(); ++k) {
        const Vec3 x = m.vertices[static_cast<std::size_t>(body.first_vertex) + k];
        verts[k] = {x.x, x.y, x.z};
      }
      const std::size_t e0 = static_cast<std::size_t>(body.first_element), ne = static_cast<std::size_t>(body.element_count);
      std::vector<std::int32_t> offsets(ne + 1), corners;
      offsets[0] = 0;
      for (std::size_t e = 0; e < ne; ++e) {
        for (index_t k = m.elem_offsets[e0 + e]; k < m.elem_offsets[e0 + e + 1]; ++k)
          corners.push_back(m.elem_vertices[static_cast<std::size_t>(k)] - body.first_vertex);
        offsets[e + 1] = static_cast<std::int32_t>(corners.size());
      }
      const std::vector<std::int64_t> body_index(ne, static_cast<std::int64_t>(b));
      VtuOptions mesh_options = options;
      mesh_options.global_ids.clear();
      mesh_options.name = body.name;
      std::snprintf(name, sizeof name, "meshes_%06d_%zu.vtu", snapshot_index_, b);
      write_vtu_polygons((fs::path(dir_) / name).string(), verts, offsets, corners, {},
                         {{"body", 1, body_index.data(), ne}}, mesh_options);
      parts.push_back({name, body.name});
    }
    mesh_pvd_->add(engine.time(), parts);
  }
  ++snapshot_index_;
  last_snapshot_time_ = engine.time();
}

// The rows of one probe time, formatted whole, then written to every CSV or to none (append_all).
void OutputWriter::probes(Simulation& engine) {
  const ParticleArrays& p = engine.particles();
  const double t = engine.time();
  std::vector<Vec3> w_t;
  const std::vector<Vec3> v_t = velocities_at_time(engine, scene_, w_t);
  std::ostringstream probe_rows = rows(), body_rows = rows(), diagnostics_row = rows(), outlet_rows = rows();
  if (!scene_.output.probe_ids.empty()) {
    // Ids are unique but, once particles have been removed, no longer 0..n-1: probed ids that are
    // gone are skipped.
    std::unordered_map<std::int64_t, std::size_t> index_by_id;
    for (std::int64_t pid : scene_.output.probe_ids) index_by_id.emplace(pid, p.size());
    for (std::size_t i = 0; i < p.size(); ++i)
      if (auto it = index_by_id.find(p.id[i]); it != index_by_id.end()) it->second = i;
    for (std::int64_t pid : scene_.output.probe_ids) {
      const std::size_t i = index_by_id[pid];
      if (i == p.size()) continue;
      const Vec3 x = p.x[i], v = v_t[i], w = w_t[i], f = p.force[i];
      probe_rows << t << ',' << pid << ',' << x.x << ',' << x.y << ',' << x.z << ',' << v.x << ',' << v.y << ','
                 << v.z << ',' << w.x << ',' << w.y << ',' << w.z << ',' << f.x << ',' << f.y << ',' << f.z << '\n';
    }
  }
  if (bodies_csv_.is_open()) {
    for (std::size_t b = 0; b < engine.meshes().bodies.size(); ++b) {
      const Vec3 f = engine.body_force()[b], tq = engine.body_torque()[b];
      // the rate at which the body does work on the particles (what drives it): minus the power of
      // their loads on it, at its velocity and spin now
      const BodyKinematics k = engine.meshes().kinematics(static_cast<index_t>(b));
      const double power = -(double(dot(f, k.v)) + double(dot(tq, k.w)));
      body_rows << t << ',' << csv_field(engine.meshes().bodies[b].name) << ',' << f.x << ',' << f.y << ',' << f.z << ','
                << tq.x << ',' << tq.y << ',' << tq.z << ',' << power << '\n';
    }
  }
  const Diagnostics d = diagnostics(engine, v_t, w_t);
  diagnostics_row << d.t << ',' << d.particles << ',' << inserted_ << ',' << removed_ << ',' << d.kinetic_translational
                  << ',' << d.kinetic_rotational << ',' << d.mean_speed << ',' << d.max_speed << ','
                  << d.touching_pairs << ',' << d.mesh_contacts << ',' << d.coordination << ',' << d.max_overlap << '\n';
  if (outlets_csv_.is_open()) {  // what each outlet removed since the last row (at t)
    for (std::size_t o = 0; o < scene_.outlets.size(); ++o) {
      outlet_rows << t << ',' << csv_field(scene_.outlets[o].name) << ',' << (o < outlet_count_.size() ? outlet_count_[o] : 0)
                  << ',' << (o < outlet_mass_.size() ? outlet_mass_[o] : 0.0) << '\n';
    }
  }
  std::ostringstream residence_rows = rows();
  for (const Residence& r : residences_)  // (rows of the removals since the last probe time, at their own times)
    residence_rows << r.removed << ',' << csv_field(scene_.outlets[r.outlet].name) << ',' << r.id << ',' << r.inserted
                   << ',' << r.removed - r.inserted << '\n';
  std::ostringstream mixing_rows = rows();
  if (mixing_csv_.is_open()) {
    const auto start = std::chrono::steady_clock::now();
    last_mixing_ = mixing_indices(engine.mixing_contents(mixing_sampling(scene_.mixing)), scene_.mixing);
    mixing_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    last_mixing_t_ = t;
    const MixingIndices& m = last_mixing_;
    for (const TagMixing& r : m.tags)
      mixing_rows << t << ',' << r.tag << ',' << r.fraction << ',' << r.cells << ',' << r.particles << ',' << r.variance
                  << ',' << r.variance_segregated << ',' << r.variance_random << ',' << r.lacey << ',' << r.rsd << ','
                  << m.contacts << ',' << m.unlike_contacts << ',' << m.contact_index << '\n';
  }
  append_all({{&probes_csv_, probe_rows.str()},
              {&bodies_csv_, body_rows.str()},
              {&mixing_csv_, mixing_rows.str()},
              {&residence_csv_, residence_rows.str()},
              {&diagnostics_csv_, diagnostics_row.str()},
              {&outlets_csv_, outlet_rows.str()}});
  last_ = d;
  residences_.clear();
  std::fill(outlet_count_.begin(), outlet_count_.end(), 0);
  std::fill(outlet_mass_.begin(), outlet_mass_.end(), 0.0);
  last_probe_time_ = t;
}

void OutputWriter::record_outflow(const FlowEvents& ev) {
  const std::vector<std::uint64_t>& count = ev.removed;
  const std::vector<double>& mass = ev.removed_mass;
  residences_.insert(residences_.end(), ev.residences.begin(), ev.residences.end());
  if (!ev.residence_sum.empty()) {  // (the flow's run totals)
    residence_sum_ = ev.residence_sum;
    residence_sum2_ = ev.residence_sum2;
  }
  outlet_count_.resize(count.size(), 0);
  outlet_mass_.resize(count.size(), 0.0);
  outlet_total_.resize(count.size(), 0);
  outlet_total_mass_.resize(count.size(), 0.0);
  for (std::size_t o = 0; o < count.size(); ++o) {
    outlet_count_[o] += count[o];
    outlet_mass_[o] += mass[o];
    outlet_total_[o] += count[o];
    outlet_total_mass_[o] += mass[o];
  }
}

OutputWriter::Diagnostics OutputWriter::diagnostics(const Simulation& engine, const std::vector<Vec3>& v,
                                                     const std::vector<Vec3>& w) const {
  const ParticleArrays& p = engine.particles();
  Diagnostics d;
  d.t = engine.time();
  d.particles = p.size();
  // exact sums: the same bits in any particle order (either engine's, any split between processes)
  ExactSum speed_sum, translational, rotational;
  const std::vector<PolyShape>& shapes = engine.shapes();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double speed = norm(v[i]);
    translational.add(0.5 * norm2(v[i]) / p.inv_mass[i]);
    rotational.add(p.shape[i] >= 0 ? rotational_energy(p.q[i], w[i], polyhedron_moments(p, i, shapes))
                                   : 0.5 * norm2(w[i]) / p.inv_inertia[i]);
    speed_sum.add(speed);
    d.max_speed = std::max(d.max_speed, speed);
  }
  d.kinetic_translational = translational.value();
  d.kinetic_rotational = rotational.value();
  d.mean_speed = p.size() ? speed_sum.value() / double(p.size()) : 0;
  d.touching_pairs = engine.touching_pairs();
  d.mesh_contacts = engine.mesh_contacts();
  d.coordination = p.size() ? 2.0 * double(d.touching_pairs) / double(p.size()) : 0;
  d.max_overlap = engine.max_overlap();
  d.written = true;
  return d;
}

void OutputWriter::write_summary(const Simulation& engine, const RunSummary& run) {
  const ContactStats& s = engine.stats();
  const double n = static_cast<double>(engine.num_particles());
  const double steps = static_cast<double>(std::max<std::uint64_t>(1, s.steps));
  const double per_particle_step = 1.0 / std::max(1.0, n * steps);
  const PhaseTimes& pt = engine.phase_times();
  nlohmann::ordered_json js;
  js["scene"] = scene_.name;
  js["particles"] = engine.num_particles();
  js["mesh_elements"] = engine.meshes().num_elements();
  js["mesh_bodies"] = engine.meshes().bodies.size();
  js["steps"] = engine.step_count();
  js["simulated_time"] = engine.time();
  js["time_step"] = scene_.simulation.dt;
  js["wall_seconds"] = run.wall_seconds;
  const double particle_steps = run.particle_steps >= 0 ? run.particle_steps : n * double(engine.step_count());
  js["particle_steps_per_second"] = run.wall_seconds > 0 ? particle_steps / run.wall_seconds : 0.0;
  js["threads"] = run.threads;
  js["backend"] = run.backend;
  js["device"] = run.device;
  js["status"] = run.status;
  js["reason"] = run.reason;
  js["removed_particles"] = run.removed;
  js["state_bytes_per_particle"] = engine.bytes_per_particle();
  {  // what holds it, buffer by buffer, in the same bytes per particle (under mpirun rank 0's
     // engine, its ghosts included: shares of its own figure)
    nlohmann::json by_buffer = nlohmann::json::object();
    const std::vector<StateBuffer> buffers = engine.state_buffers();
    double total = 0;
    for (const StateBuffer& b : buffers) total += b.bytes;
    const double per_particle = engine.bytes_per_particle();
    for (const StateBuffer& b : buffers) by_buffer[b.name] = total > 0 ? b.bytes / total * per_particle : 0.0;
    js["state_bytes_by_buffer"] = by_buffer;
  }
  // (a device engine's copies and results the host waited for, per step of this run: 0 on the host)
  js["host_waits_per_step"] = run.steps > 0 ? double(run.host_waits) / double(run.steps) : 0.0;
  js["device_launches_per_step"] = run.steps > 0 ? double(run.device_launches) / double(run.steps) : 0.0;
  // Under mpirun: how the run was spread over the ranks (host/mpi/decomposition.hpp)
  const RanksReport ranks = engine.ranks_report();
  js["ranks"] = ranks.ranks;
  if (ranks.ranks > 1)
    js["mpi"] = {{"imbalance", ranks.imbalance},
                 {"cuts", ranks.cuts},
                 {"hand_overs", ranks.handovers},
                 {"ghosts_per_particle", ranks.ghost_fraction},
                 {"ghost_bytes_per_step", ranks.bytes_per_step},
                 {"rank_phase_seconds", ranks.rank_seconds},
                 {"hand_over_seconds", ranks.handover_seconds},
                 {"ghost_update_seconds", ranks.ghost_seconds},
                 {"halo_staged_through", "host"},
                 {"cuda_aware_mpi_library", ranks.cuda_aware_library},
                 {"rank_devices", ranks.rank_devices}};
  const BroadPhaseReport bp = engine.broad_phase_report();
  js["broad_phase"] = {{"method", bp.method}, {"levels", bp.cell_sizes.size()}, {"cell_sizes", bp.cell_sizes}};
  if (!bp.order.empty()) js["broad_phase"]["order"] = bp.order;
  js["phase_seconds"] = {{"mesh_motion", pt.mesh_motion},     {"broad_phase", pt.broad_phase},
                         {"pair_contacts", pt.pair_contacts}, {"mesh_bins", pt.mesh_bins},
                         {"mesh_contacts", pt.mesh_contacts}, {"gather", pt.gather}};
  nlohmann::ordered_json c;
  c["broad_phase_builds"] = s.broad_phase_builds;
  c["pair_lists_kept_past_a_skin"] = s.lists_kept;
  c["mesh_lists_kept_past_a_skin"] = s.mesh_lists_kept;
  if (engine.adaptive_skin()) c["pair_skin"] = "adaptive";
  else c["pair_skin"] = engine.skin();
  if (engine.adaptive_skin()) {
    c["mesh_skin"] = "adaptive";  // per particle, at most mesh_skin_max
    c["mesh_skin_max"] = engine.skin();
  } else {
    c["mesh_skin"] = engine.skin();
  }
  c["pair_candidates_per_particle"] = 2.0 * double(s.pair_candidates) * per_particle_step;
  c["pair_contacts_per_particle"] = 2.0 * double(s.pair_contacts) * per_particle_step;
  c["fe_potential_per_particle"] = double(s.fe_potential) * per_particle_step;
  c["fe_contact_per_particle"] = double(s.fe_contact) * per_particle_step;
  c["valid_entities_per_particle"] = double(s.valid_entities) * per_particle_step;
  c["h2_compactions"] = s.h2_compactions;
  js["contacts"] = c;
  if (!engine.shapes().empty()) {  // how the pairs of polyhedra found their common planes
    const std::uint64_t evaluated = s.planes_kept + s.planes_approximated + s.plane_searches;
    nlohmann::ordered_json cp;
    cp["evaluations"] = evaluated;
    cp["kept"] = s.planes_kept;
    cp["approximated"] = s.planes_approximated;
    cp["searches"] = s.plane_searches;
    cp["iterations_per_search"] = s.plane_searches ? double(s.plane_iterations) / double(s.plane_searches) : 0.0;
    cp["iterations_max"] = s.plane_iterations_max;
    js["common_planes"] = cp;
  }
  if (!scene_.outlets.empty()) {
    nlohmann::ordered_json outlets = nlohmann::ordered_json::array();
    for (std::size_t o = 0; o < scene_.outlets.size(); ++o) {
      const std::uint64_t gone = o < outlet_total_.size() ? outlet_total_[o] : 0;
      const double sum = o < residence_sum_.size() ? residence_sum_[o] : 0.0;
      const double sum2 = o < residence_sum2_.size() ? residence_sum2_[o] : 0.0;
      const double mean = gone ? sum / double(gone) : 0.0;
      nlohmann::ordered_json entry = {{"name", scene_.outlets[o].name},
                                      {"removed", gone},
                                      {"mass", o < outlet_total_mass_.size() ? outlet_total_mass_[o] : 0.0}};
      // the residence times of the particles removed (run totals): mean and variance, s and s^2
      entry["residence_mean"] = gone ? nlohmann::ordered_json(mean) : nlohmann::ordered_json();
      entry["residence_variance"] =
          gone ? nlohmann::ordered_json(std::max(0.0, sum2 / double(gone) - mean * mean)) : nlohmann::ordered_json();
      outlets.push_back(entry);
    }
    js["outlets"] = outlets;
  }
  js["inserted_particles"] = inserted_;
  if (last_.written)
    js["diagnostics"] = {{"t", last_.t},
                         {"particles", last_.particles},
                         {"inserted", inserted_},
                         {"removed", removed_},
                         {"kinetic_translational", last_.kinetic_translational},
                         {"kinetic_rotational", last_.kinetic_rotational},
                         {"mean_speed", last_.mean_speed},
                         {"max_speed", last_.max_speed},
                         {"touching_pairs", last_.touching_pairs},
                         {"mesh_contacts", last_.mesh_contacts},
                         {"coordination", last_.coordination},
                         {"max_overlap", last_.max_overlap}};
  // the output's own analyses (their share of wall_seconds: what they cost the run)
  if (mixing_csv_.is_open() || fields_) {
    nlohmann::ordered_json a;
    if (mixing_csv_.is_open()) a["mixing"] = mixing_seconds_;
    if (fields_) a["coarse_graining"] = fields_seconds_;
    js["analysis_seconds"] = a;
  }
  if (last_mixing_t_ >= 0) {  // the last mixing.csv rows (NaN: null)
    const auto num = [](double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(); };
    nlohmann::ordered_json tags = nlohmann::ordered_json::array();
    for (const TagMixing& r : last_mixing_.tags)
      tags.push_back({{"tag", r.tag},
                      {"fraction", num(r.fraction)},
                      {"cells", r.cells},
                      {"particles", r.particles},
                      {"lacey", num(r.lacey)},
                      {"rsd", num(r.rsd)}});
    js["mixing"] = {{"t", last_mixing_t_},
                    {"tags", tags},
                    {"contacts", last_mixing_.contacts},
                    {"unlike_contacts", last_mixing_.unlike_contacts},
                    {"contact_index", num(last_mixing_.contact_index)}};
  }
  // Atomically (summary.json.tmp, renamed): a reader never sees a half-written summary, and a
  // failed write leaves the previous one (or none) and no .tmp.
  write_atomically(fs::path(dir_) / "summary.json", js.dump(2) + '\n');
}

}  // namespace dem::host
