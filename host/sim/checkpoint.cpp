#include "host/sim/checkpoint.hpp"
#include "host/sim/mesh_slots.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>

#include "host/sim/errors.hpp"

namespace dem::host {
namespace {

constexpr char kMagic[8] = {'D', 'E', 'M', 'C', 'K', 'P', 'T', '\0'};

// FNV-1a over the bytes of each value.
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  template <class T>
  void add(const T& v) {
    const unsigned char* b = reinterpret_cast<const unsigned char*>(&v);
    for (std::size_t k = 0; k < sizeof(T); ++k) h = (h ^ b[k]) * 1099511628211ull;
  }
  void add(const Vec3& v) {
    add(v.x);
    add(v.y);
    add(v.z);
  }
};

class Writer {
 public:
  explicit Writer(const std::string& path) : path_(path), f_(path, std::ios::binary | std::ios::trunc) {}
  template <class T>
  void value(const T& v) {
    f_.write(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  template <class T>
  void array(const std::vector<T>& v) {
    if (!v.empty()) f_.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(sizeof(T) * v.size()));
  }
  void finish() {
    f_.flush();
    if (!f_) throw WriteError("cannot write '" + path_ + "': " + std::strerror(errno));
  }

 private:
  std::string path_;
  std::ofstream f_;
};

class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path), f_(path, std::ios::binary) {
    if (!f_) throw InputError(path + ": cannot open the checkpoint");
  }
  template <class T>
  T value() {
    T v{};
    f_.read(reinterpret_cast<char*>(&v), sizeof(T));
    check();
    return v;
  }
  template <class T>
  void array(std::vector<T>& v, std::uint64_t n) {
    if (n > (std::uint64_t(1) << 40) / sizeof(T)) fail("an array of " + std::to_string(n) + " entries");
    v.resize(static_cast<std::size_t>(n));
    if (n) f_.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(sizeof(T) * n));
    check();
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(path_ + ": not a valid checkpoint (" + what + ")");
  }

 private:
  void check() {
    if (!f_) fail("it ends early");
  }
  std::string path_;
  std::ifstream f_;
};

// One particle field of a file of `version`: before version 4 there are no `shape` and `pad` (all
// spheres), before version 5 no `tag` and `born` (all 0).
template <class T>
void read_field(Reader& r, std::vector<T>& out, const char* name, std::uint64_t n, std::uint32_t version) {
  const std::string field(name);
  if ((version < 4 && (field == "shape" || field == "pad")) || (version < 5 && (field == "tag" || field == "born"))) {
    if constexpr (std::is_arithmetic_v<T>) out.assign(n, field == "shape" ? T(-1) : T(0));
    return;
  }
  r.array(out, n);
}

}  // namespace

std::uint64_t hash_contact_params(const std::vector<ContactParams>& params, const EngineSettings& settings) {
  const PeriodicBox& periodic = settings.periodic;
  const std::vector<PolyShape>& shapes = settings.shapes;
  const real plane_tolerance = settings.plane_tolerance;
  Hash h;
  if (!shapes.empty()) h.add(plane_tolerance);  // (it changes the planes of slow pairs)
  for (const PolyShape& s : shapes) {  // (nothing added without polyhedra: older checkpoints keep their hash)
    h.add(static_cast<std::uint64_t>(s.num_vertices));
    for (int k = 0; k < s.num_vertices; ++k)
      for (real v : {s.vertex[k].x, s.vertex[k].y, s.vertex[k].z}) h.add(v);
  }
  if (periodic.any()) {  // (nothing added without periodic axes: older checkpoints keep their hash)
    for (real v : {periodic.lo.x, periodic.lo.y, periodic.lo.z, periodic.length.x, periodic.length.y, periodic.length.z})
      h.add(v);
  }
  for (const ContactParams& p : params) {
    h.add(p.e_star);
    h.add(p.g_star);
    h.add(p.friction);
    h.add(p.rolling_friction);
    h.add(p.zeta);
    h.add(static_cast<std::uint8_t>(p.rolling_model));
    // the parts chosen per interaction: only what differs from Hertz-Mindlin without cohesion, so
    // checkpoints written before the choice existed keep their hash
    if (p.normal_model != NormalModel::Hertz || p.tangential_model != TangentialModel::Mindlin ||
        p.cohesion_model != CohesionModel::None || p.rolling_model != RollingModel::ConstantTorque) {
      h.add(static_cast<std::uint8_t>(p.normal_model));
      h.add(static_cast<std::uint8_t>(p.tangential_model));
      h.add(static_cast<std::uint8_t>(p.cohesion_model));
      for (real v : {p.k_n, p.k_t, p.rolling_damping, p.cohesion_energy_density}) h.add(v);
    }
    if (p.plastic) h.add(std::uint8_t(1));  // (its zeta, 1, is hashed above as well)
  }
  return h.h;
}

std::uint64_t hash_meshes(const MeshSet& m) {
  Hash h;
  for (const MeshBody& b : m.bodies) {
    h.add(b.material);
    h.add(b.velocity);
    h.add(b.angular_velocity);
    h.add(b.center0);
    h.add(b.first_vertex);
    h.add(b.vertex_count);
    h.add(b.first_element);
    h.add(b.element_count);
    h.add(b.start);
    h.add(b.stop);
    h.add(b.first_knot);
    h.add(b.knot_count);
    h.add(b.spin_axis);
    h.add(b.osc_amplitude);
    h.add(b.osc_omega);
    h.add(b.osc_phase);
  }
  for (const MotionKnot& k : m.knots) {
    h.add(k.t);
    h.add(k.v);
    h.add(k.spin);
  }
  for (const Vec3& v : m.ref_vertices) h.add(v);
  for (index_t k : m.elem_offsets) h.add(k);
  for (index_t k : m.elem_vertices) h.add(k);
  for (index_t k : m.elem_body) h.add(k);
  return h.h;
}

namespace {
void write_checkpoint_file(const std::string& tmp, const Checkpoint& c) {
  {
    Writer w(tmp);
    w.value(kMagic);
    w.value(kCheckpointVersion);
    w.value(std::uint32_t(0x01020304));
    w.value(std::uint32_t(sizeof(real)));
    w.value(std::uint32_t(sizeof(EntityContact)));
    w.value(std::uint32_t(sizeof(ContactHistory)));
    w.value(c.step);
    w.value(c.time);
    w.value(c.dt);
    w.value(c.gravity);
    w.value(c.params_hash);
    w.value(c.meshes_hash);
    w.value(std::uint64_t(c.particles.size()));
#define DEM_WRITE_FIELD(T, name) w.array(c.particles.name);
    DEM_PARTICLE_FIELDS(DEM_WRITE_FIELD)
#undef DEM_WRITE_FIELD
    w.value(std::uint64_t(c.contacts.pair_a.size()));
    w.array(c.contacts.pair_a);
    w.array(c.contacts.pair_b);
    w.array(c.contacts.pair_history);
    checked_mesh_slots(c.contacts, c.particles.size(), "write_checkpoint");  // a file it can read back
    w.array(c.contacts.mesh_count);
    w.array(c.contacts.mesh_entity);
    w.array(c.contacts.mesh_normal);
    w.array(c.contacts.mesh_history);
    w.value(std::uint8_t(c.contacts.forces_current ? 1 : 0));
    w.value(std::uint64_t(c.contacts.body_force.size()));
    w.array(c.contacts.body_force);
    w.array(c.contacts.body_torque);
    w.value(std::uint64_t(c.motions.size()));
    for (const MeshBodyMotion& m : c.motions) {
      w.value(m.velocity);
      w.value(m.angular_velocity);
      w.value(m.t0);
      w.value(m.displacement_t0);
      w.value(m.rotation_t0);
      w.value(m.start);
      w.value(m.stop);
      w.value(m.osc_amplitude);
      w.value(m.osc_omega);
      w.value(m.osc_phase);
      w.value(std::uint32_t(m.knot_count));
    }
    w.value(c.next_id);
    w.value(std::uint64_t(c.inlet_inserted.size()));
    for (std::size_t k = 0; k < c.inlet_inserted.size(); ++k) {
      w.value(c.inlet_inserted[k]);
      w.value(c.inlet_mass[k]);
      w.value(c.inlet_pending_radius[k]);
      w.value(std::uint64_t(c.inlet_rng[k].size()));
      for (char ch : c.inlet_rng[k]) w.value(ch);
    }
    w.value(std::uint64_t(c.outlet_removed.size()));
    for (std::size_t k = 0; k < c.outlet_removed.size(); ++k) {
      w.value(c.outlet_removed[k]);
      w.value(c.outlet_mass[k]);
      w.value(k < c.outlet_residence_sum.size() ? c.outlet_residence_sum[k] : 0.0);
      w.value(k < c.outlet_residence_sum2.size() ? c.outlet_residence_sum2[k] : 0.0);
    }
    for (double t : c.next_inlet) w.value(t);
    for (double t : c.next_outlet) w.value(t);
    w.value(c.inserted_besides_inlets);
    w.value(c.removed_besides_outlets);
    w.finish();
  }
}
}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  const std::string tmp = path + ".tmp";
  try {
    write_checkpoint_file(tmp, c);
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw WriteError("cannot write '" + path + "': " + ec.message());
  } catch (...) {
    std::error_code ignored;  // a failed write leaves no temporary file; `path` stays as it was
    std::filesystem::remove(tmp, ignored);
    throw;
  }
}

Checkpoint read_checkpoint(const std::string& path) {
  Reader r(path);
  char magic[8];
  for (char& ch : magic) ch = r.value<char>();
  if (std::memcmp(magic, kMagic, sizeof magic) != 0) r.fail("no DEMCKPT header");
  const auto version = r.value<std::uint32_t>();
  if (version < 1 || version > kCheckpointVersion)
    r.fail("format version " + std::to_string(version) + "; this build reads versions 1 to " +
           std::to_string(kCheckpointVersion));
  if (r.value<std::uint32_t>() != 0x01020304u) r.fail("written on a machine of the other byte order");
  if (r.value<std::uint32_t>() != sizeof(real) || r.value<std::uint32_t>() != sizeof(EntityContact) ||
      r.value<std::uint32_t>() != sizeof(ContactHistory))
    r.fail("written by a build with other number types (DEM_REAL_FLOAT?)");
  Checkpoint c;
  c.step = r.value<std::uint64_t>();
  c.time = r.value<double>();
  c.dt = r.value<double>();
  c.gravity = r.value<Vec3>();
  c.params_hash = r.value<std::uint64_t>();
  c.meshes_hash = r.value<std::uint64_t>();
  const auto n = r.value<std::uint64_t>();
  if (n >= (std::uint64_t(1) << 31)) r.fail(std::to_string(n) + " particles");
#define DEM_READ_FIELD(T, name) read_field(r, c.particles.name, #name, n, version);
  DEM_PARTICLE_FIELDS(DEM_READ_FIELD)
#undef DEM_READ_FIELD
  {  // every particle's id once: the engines order sums and name contacts by it
    std::vector<std::int64_t> ids(c.particles.id.begin(), c.particles.id.end());
    std::sort(ids.begin(), ids.end());
    const auto twice = std::adjacent_find(ids.begin(), ids.end());
    if (twice != ids.end()) r.fail("particle id " + std::to_string(*twice) + " appears twice");
  }
  const auto m = r.value<std::uint64_t>();
  r.array(c.contacts.pair_a, m);
  r.array(c.contacts.pair_b, m);
  r.array(c.contacts.pair_history, m);
  r.array(c.contacts.mesh_count, n);
  std::uint64_t slots = 0;
  for (std::uint8_t k : c.contacts.mesh_count) {
    if (k > kMaxMeshContacts) r.fail("a particle with " + std::to_string(k) + " mesh contacts");
    slots += k;
  }
  if (version >= 3) {  // the used slots, packed
    r.array(c.contacts.mesh_entity, slots);
    r.array(c.contacts.mesh_normal, slots);
    r.array(c.contacts.mesh_history, slots);
  } else {  // versions 1 and 2: kMaxMeshContacts slots per particle
    std::vector<EntityContact> entity;
    std::vector<Vec3> normal;
    std::vector<ContactHistory> history;
    r.array(entity, n * kMaxMeshContacts);
    r.array(normal, n * kMaxMeshContacts);
    r.array(history, n * kMaxMeshContacts);
    pack_mesh_slots(c.contacts.mesh_count, nullptr, entity, normal, history, c.contacts);
  }
  if (version >= 2) {  // version 1 ends here: its states were exported between steps (no forces current)
    const auto flag = r.value<std::uint8_t>();
    if (flag > 1) r.fail("a forces-current flag of " + std::to_string(flag));
    c.contacts.forces_current = flag == 1;
    const auto bodies = r.value<std::uint64_t>();
    if (bodies >= (std::uint64_t(1) << 31)) r.fail(std::to_string(bodies) + " mesh bodies");
    r.array(c.contacts.body_force, bodies);
    r.array(c.contacts.body_torque, bodies);
    const auto motions = r.value<std::uint64_t>();
    if (motions >= (std::uint64_t(1) << 31)) r.fail(std::to_string(motions) + " mesh bodies");
    c.motions.resize(motions);
    for (MeshBodyMotion& motion : c.motions) {
      motion.velocity = r.value<Vec3>();
      motion.angular_velocity = r.value<Vec3>();
      motion.t0 = r.value<double>();
      motion.displacement_t0 = r.value<Vec3>();
      motion.rotation_t0 = r.value<Quat>();
      motion.start = r.value<double>();
      motion.stop = r.value<double>();
      motion.osc_amplitude = r.value<Vec3>();
      motion.osc_omega = r.value<real>();
      motion.osc_phase = r.value<real>();
      motion.knot_count = static_cast<index_t>(r.value<std::uint32_t>());
    }
    c.next_id = r.value<std::int64_t>();
    const auto inlets = r.value<std::uint64_t>();
    if (inlets >= (std::uint64_t(1) << 20)) r.fail(std::to_string(inlets) + " inlets");
    for (std::uint64_t k = 0; k < inlets; ++k) {
      c.inlet_inserted.push_back(r.value<std::uint64_t>());
      c.inlet_mass.push_back(r.value<double>());
      c.inlet_pending_radius.push_back(r.value<double>());
      const auto length = r.value<std::uint64_t>();
      if (length > (std::uint64_t(1) << 20)) r.fail("a random state of " + std::to_string(length) + " bytes");
      std::string text(length, '\0');
      for (char& ch : text) ch = r.value<char>();
      c.inlet_rng.push_back(text);
    }
    const auto outlets = r.value<std::uint64_t>();
    if (outlets >= (std::uint64_t(1) << 20)) r.fail(std::to_string(outlets) + " outlets");
    for (std::uint64_t k = 0; k < outlets; ++k) {
      c.outlet_removed.push_back(r.value<std::uint64_t>());
      c.outlet_mass.push_back(r.value<double>());
      c.outlet_residence_sum.push_back(version >= 5 ? r.value<double>() : 0.0);
      c.outlet_residence_sum2.push_back(version >= 5 ? r.value<double>() : 0.0);
    }
    for (std::uint64_t k = 0; k < inlets; ++k) c.next_inlet.push_back(r.value<double>());
    for (std::uint64_t k = 0; k < outlets; ++k) c.next_outlet.push_back(r.value<double>());
    if (version >= 6) {
      c.inserted_besides_inlets = r.value<std::uint64_t>();
      c.removed_besides_outlets = r.value<std::uint64_t>();
    }
  }
  return c;
}

Checkpoint capture_checkpoint(const Simulation& sim, double dt, Vec3 gravity, std::uint64_t params_hash,
                              std::uint64_t meshes_hash) {
  Checkpoint c;
  c.step = sim.step_count();
  c.time = sim.time();
  c.dt = dt;
  c.gravity = gravity;
  c.params_hash = params_hash;
  c.meshes_hash = meshes_hash;
  sim.export_state(c.particles, c.contacts);
  for (const MeshBody& b : sim.meshes().bodies) c.motions.push_back(b);
  return c;
}

void restore_body_motions(Simulation& sim, const Checkpoint& c) {
  if (c.motions.empty()) return;
  if (c.motions.size() != sim.meshes().bodies.size())
    throw InputError("the checkpoint has " + std::to_string(c.motions.size()) + " mesh bodies, the scene " +
                     std::to_string(sim.meshes().bodies.size()));
  for (std::size_t b = 0; b < c.motions.size(); ++b) {
    MeshBodyMotion m = sim.meshes().bodies[b];
    m.velocity = c.motions[b].velocity;
    m.angular_velocity = c.motions[b].angular_velocity;
    m.t0 = c.motions[b].t0;
    m.displacement_t0 = c.motions[b].displacement_t0;
    m.rotation_t0 = c.motions[b].rotation_t0;
    m.start = c.motions[b].start;
    m.stop = c.motions[b].stop;
    m.osc_amplitude = c.motions[b].osc_amplitude;
    m.osc_omega = c.motions[b].osc_omega;
    m.osc_phase = c.motions[b].osc_phase;
    if (c.motions[b].knot_count == 0) m.knot_count = 0;  // the table gave way to a constant law during the run
    else if (c.motions[b].knot_count != m.knot_count)
      throw InputError("mesh body " + std::to_string(b) + ": the checkpoint's motion table has " +
                       std::to_string(c.motions[b].knot_count) + " rows, the scene's " + std::to_string(m.knot_count));
    sim.set_body_motion(b, m);
  }
}

}  // namespace dem::host
