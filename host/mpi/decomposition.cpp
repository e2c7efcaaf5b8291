#include "host/mpi/decomposition.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "host/mpi/pack.hpp"
#include "host/sim/id_order.hpp"
#include "host/sim/mesh_slots.hpp"
#include "host/sim/state_edit.hpp"

namespace dem::mpi {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The bytes of one particle's fields.
constexpr std::size_t kParticleBytes = 0
#define DEM_FIELD_BYTES(T, name) +sizeof(T)
    DEM_PARTICLE_FIELDS(DEM_FIELD_BYTES)
#undef DEM_FIELD_BYTES
    ;

// One particle's fields, in DEM_PARTICLE_FIELDS order.
void put_particle(Packer& out, const host::ParticleArrays& p, std::size_t i) {
#define DEM_PUT_FIELD(T, name) out.put(p.name[i]);
  DEM_PARTICLE_FIELDS(DEM_PUT_FIELD)
#undef DEM_PUT_FIELD
}
void get_particle(Unpacker& in, host::ParticleArrays& p) {
#define DEM_GET_FIELD(T, name) p.name.push_back(in.get<T>());
  DEM_PARTICLE_FIELDS(DEM_GET_FIELD)
#undef DEM_GET_FIELD
}

// Where each particle's packed mesh slots begin in a ContactState.
std::vector<std::size_t> slot_offsets(const host::ContactState& c) {
  std::vector<std::size_t> at(c.mesh_count.size() + 1, 0);
  for (std::size_t i = 0; i < c.mesh_count.size(); ++i) at[i + 1] = at[i] + c.mesh_count[i];
  return at;
}

// A particle with its mesh slots and whether the receiver owns it.
void put_record(Packer& out, const host::ParticleArrays& p, const host::ContactState& c,
                const std::vector<std::size_t>& slot_at, std::size_t i, bool owned) {
  out.put(static_cast<std::uint8_t>(owned));
  put_particle(out, p, i);
  out.put(c.mesh_count[i]);
  for (std::size_t s = slot_at[i]; s < slot_at[i + 1]; ++s) {
    out.put(c.mesh_entity[s]);
    out.put(c.mesh_normal[s]);
    out.put(c.mesh_history[s]);
  }
}

// A put_record's particle appended to p, its flag to own and its slots to c (ContactState's
// layout: c.mesh_count per particle, the slots packed in particle order).
void get_record(Unpacker& in, host::ParticleArrays& p, std::vector<std::uint8_t>& own, host::ContactState& c) {
  own.push_back(in.get<std::uint8_t>());
  get_particle(in, p);
  const auto count = in.get<std::uint8_t>();
  c.mesh_count.push_back(count);
  for (int q = 0; q < count; ++q) {
    c.mesh_entity.push_back(in.get<EntityContact>());
    c.mesh_normal.push_back(in.get<Vec3>());
    c.mesh_history.push_back(in.get<ContactHistory>());
  }
}

void put_pair(Packer& out, const host::ContactState& c, std::size_t k) {
  out.put(c.pair_a[k]);
  out.put(c.pair_b[k]);
  out.put(c.pair_history[k]);
}
void get_pair(Unpacker& in, host::ContactState& c) {
  c.pair_a.push_back(in.get<std::int64_t>());
  c.pair_b.push_back(in.get<std::int64_t>());
  c.pair_history.push_back(in.get<ContactHistory>());
}

// v reordered: v[order[0]], v[order[1]], ...
template <class V>
void permute(V& v, const std::vector<std::size_t>& order) {
  V out(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) out[k] = v[order[k]];
  v.swap(out);
}

// The particles put in increasing id, with their flags and mesh slots (field by field).
void sort_by_id(host::ParticleArrays& p, std::vector<std::uint8_t>& own, host::ContactState& c) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p.id[a] < p.id[b]; });
  const std::vector<std::size_t> slot_at = slot_offsets(c);
#define DEM_SORT_FIELD(T, name) permute(p.name, order);
  DEM_PARTICLE_FIELDS(DEM_SORT_FIELD)
#undef DEM_SORT_FIELD
  permute(own, order);
  permute(c.mesh_count, order);
  std::vector<std::size_t> slots;  // the slots' old places, in the new order
  slots.reserve(c.mesh_entity.size());
  for (const std::size_t i : order)
    for (std::size_t q = slot_at[i]; q < slot_at[i + 1]; ++q) slots.push_back(q);
  permute(c.mesh_entity, slots);
  permute(c.mesh_normal, slots);
  permute(c.mesh_history, slots);
}

// Keeps the pairs whose particles are both in p, in increasing (a, b), once each.
void keep_pairs_among(const host::ParticleArrays& p, host::ContactState& c) {
  const host::IdIndex held(p.id);
  struct Pair {
    std::int64_t a, b;
    std::size_t k;
  };
  std::vector<Pair> kept;
  kept.reserve(c.pair_a.size());
  for (std::size_t k = 0; k < c.pair_a.size(); ++k)
    if (held.find(c.pair_a[k]) >= 0 && held.find(c.pair_b[k]) >= 0) kept.push_back(Pair{c.pair_a[k], c.pair_b[k], k});
  std::sort(kept.begin(), kept.end(), [](const Pair& x, const Pair& y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  std::vector<std::int64_t> a, b;
  std::vector<ContactHistory> h;
  a.reserve(kept.size());
  b.reserve(kept.size());
  h.reserve(kept.size());
  for (const Pair& q : kept) {
    if (!a.empty() && a.back() == q.a && b.back() == q.b) continue;
    a.push_back(q.a);
    b.push_back(q.b);
    h.push_back(c.pair_history[q.k]);
  }
  c.pair_a.swap(a);
  c.pair_b.swap(b);
  c.pair_history.swap(h);
}

// Distance from x to the box (0 inside; its outer faces at infinity), or on the periodic axes to
// the nearest of its images, the box taken within the period there.
double box_distance(const RcbBox& b, Vec3 x, const PeriodicBox& period) {
  const double p[3] = {x.x, x.y, x.z};
  const double length[3] = {period.length.x, period.length.y, period.length.z};
  const double plo[3] = {period.lo.x, period.lo.y, period.lo.z}, phi[3] = {period.hi.x, period.hi.y, period.hi.z};
  double d2 = 0;
  for (int k = 0; k < 3; ++k) {
    double out = 0;
    if (length[k] > 0) {
      const double lo = std::max(b.lo[k], plo[k]), hi = std::min(b.hi[k], phi[k]);
      out = kInf;
      for (const double shift : {-length[k], 0.0, length[k]})
        out = std::min(out, std::max({lo + shift - p[k], 0.0, p[k] - (hi + shift)}));
    } else {
      out = std::max({b.lo[k] - p[k], 0.0, p[k] - b.hi[k]});
    }
    d2 += out * out;
  }
  return std::sqrt(d2);
}

void pack_inputs(Packer& out, const EngineInputs& in) {
  const host::MeshSet& m = in.meshes;
  out.put(static_cast<std::uint64_t>(m.bodies.size()));
  for (const host::MeshBody& b : m.bodies) {
    out.put(static_cast<const MeshBodyMotion&>(b));
    out.put_string(b.name);
  }
  out.put_vector(m.knots);
  out.put_vector(m.ref_vertices);
  out.put_vector(m.vertices);
  out.put_vector(m.elem_offsets);
  out.put_vector(m.elem_vertices);
  out.put_vector(m.elem_body);
  out.put_vector(m.ref_normals);
  out.put_vector(m.normals);
  out.put_vector(m.frames);
  out.put(m.time);
  out.put_vector(in.params);
  out.put(in.num_materials);
  const host::EngineSettings& s = in.settings;
  out.put(s.dt);
  out.put(s.gravity);
  out.put(s.skin);
  out.put(s.neighbour_interval);
  out.put(s.h2_tolerance);
  out.put(s.periodic);
  out.put(s.broad_phase.method);
  out.put(s.broad_phase.levels);
  out.put_vector(s.broad_phase.cell_sizes);
  out.put(static_cast<std::uint8_t>(s.broad_phase.device_curve_order));
  out.put(s.parallel_min);
  out.put(s.load_radius);
  out.put_vector(s.load_materials);
  out.put_vector(s.shapes);
  out.put(s.plane_tolerance);
  out.put_string(in.engine);
}

EngineInputs unpack_inputs(Unpacker& in) {
  EngineInputs r;
  host::MeshSet& m = r.meshes;
  m.bodies.resize(in.get<std::uint64_t>());
  for (host::MeshBody& b : m.bodies) {
    static_cast<MeshBodyMotion&>(b) = in.get<MeshBodyMotion>();
    b.name = in.get_string();
  }
  in.get_vector(m.knots);
  in.get_vector(m.ref_vertices);
  in.get_vector(m.vertices);
  in.get_vector(m.elem_offsets);
  in.get_vector(m.elem_vertices);
  in.get_vector(m.elem_body);
  in.get_vector(m.ref_normals);
  in.get_vector(m.normals);
  in.get_vector(m.frames);
  m.time = in.get<double>();
  in.get_vector(r.params);
  r.num_materials = in.get<int>();
  host::EngineSettings& s = r.settings;
  s.dt = in.get<real>();
  s.gravity = in.get<Vec3>();
  s.skin = in.get<real>();
  s.neighbour_interval = in.get<int>();
  s.h2_tolerance = in.get<real>();
  s.periodic = in.get<PeriodicBox>();
  s.broad_phase.method = in.get<host::BroadPhaseMethod>();
  s.broad_phase.levels = in.get<int>();
  in.get_vector(s.broad_phase.cell_sizes);
  s.broad_phase.device_curve_order = in.get<std::uint8_t>() != 0;
  s.parallel_min = in.get<std::size_t>();
  s.load_radius = in.get<real>();
  in.get_vector(s.load_materials);
  in.get_vector(s.shapes);
  s.plane_tolerance = in.get<real>();
  r.engine = in.get_string();
  return r;
}

}  // namespace

Decomposition::Decomposition(const Comm& comm, host::ParticleArrays particles, EngineInputs inputs, EngineMaker make_engine,
                             DecompositionSettings settings)
    : comm_(comm), dsettings_(settings), make_engine_(std::move(make_engine)) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {
    Packer out;
    pack_inputs(out, inputs);
    bytes.swap(out.bytes());
  }
  comm_.broadcast(bytes);
  if (comm_.rank() != 0) {
    Unpacker in(bytes);
    inputs = unpack_inputs(in);
  }
  inputs_ = std::move(inputs);
  report_.ranks = comm_.size();
  body_force_.assign(inputs_.meshes.bodies.size(), Vec3{0, 0, 0});
  body_torque_ = body_force_;
  Part part;
  if (comm_.rank() == 0) {
    initial_ = std::move(particles);
    part.p = initial_;
    part.own.assign(part.p.size(), 1);
    part.c.mesh_count.assign(part.p.size(), 0);
  }
  hand_over(std::move(part));
}

Decomposition::~Decomposition() = default;

EngineMaker host_engine_maker() {
  return [](const std::string& engine, host::ParticleArrays p, host::MeshSet meshes, std::vector<ContactParams> params,
            int num_materials, host::EngineSettings settings) -> std::unique_ptr<host::Simulation> {
    if (engine != "cpu") throw std::invalid_argument("engine '" + engine + "': this build makes the host engine (cpu) only");
    return std::make_unique<host::Engine>(std::move(p), std::move(meshes), std::move(params), num_materials, std::move(settings));
  };
}

bool Decomposition::is_ghost(std::int64_t id) const { return std::binary_search(ghost_ids_.begin(), ghost_ids_.end(), id); }

void Decomposition::restore_state(const host::ContactState& contacts, std::uint64_t step) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {
    Packer out;
    out.put(step);
    out.put(static_cast<std::uint8_t>(contacts.forces_current));
    out.put_vector(contacts.body_force);
    out.put_vector(contacts.body_torque);
    bytes.swap(out.bytes());
  }
  comm_.broadcast(bytes);
  Unpacker in(bytes);
  const auto restored_step = in.get<std::uint64_t>();
  const bool current = in.get<std::uint8_t>() != 0;
  std::vector<Vec3> bf, bt;
  in.get_vector(bf);
  in.get_vector(bt);
  Part part;
  if (comm_.rank() == 0) {
    part.p = initial_;
    part.c = contacts;
    part.own.assign(part.p.size(), 1);
  }
  part.c.forces_current = current;
  part.c.body_force = bf;
  part.c.body_torque = bt;
  local_ = nullptr;  // (the new engines start from the restored step)
  restored_step_ = restored_step;
  forces_current_ = current;
  if (current) {
    body_force_ = bf;
    body_torque_ = bt;
  }
  hand_over(std::move(part));
}

Decomposition::Part Decomposition::local_part() const {
  Part part;
  local_->export_state(part.p, part.c);
  part.own.resize(part.p.size());
  for (std::size_t i = 0; i < part.p.size(); ++i) part.own[i] = !is_ghost(part.p.id[i]);
  return part;
}

int Decomposition::owner(Vec3 x) const {
  for (std::size_t r = 0; r < boxes_.size(); ++r)
    if (boxes_[r].contains(x)) return static_cast<int>(r);
  // (NaN: the health check stops the run; meanwhile the particle stays with rank 0)
  return 0;
}

// The cut, on the costs of the owned particles: a particle and its touching pairs and mesh
// contacts, each rank's weighted by the time its engine took per unit of that cost since the last
// hand-over (as LAMMPS's `balance ... weight time`): the count misses what differs from one
// region to another (candidate pairs, skins, mesh candidates, the ghosts). Weighed only where the
// engines ran kWeighSteps steps or more (the same on every rank: they step together).
void Decomposition::cut(const Part& part, double engine_seconds, std::uint64_t engine_steps) {
  const std::size_t n = part.p.size();
  std::vector<std::int64_t> cost_of(n, 0);
  const host::IdIndex index(part.p.id, [&](std::size_t i) { return part.own[i] != 0; });
  for (std::size_t i = 0; i < n; ++i)
    if (part.own[i]) cost_of[i] = 4 + 2 * std::int64_t(part.c.mesh_count[i]);
  for (std::size_t k = 0; k < part.c.pair_a.size(); ++k) {
    if (const std::int64_t a = index.find(part.c.pair_a[k]); a >= 0) cost_of[std::size_t(a)] += 1;
    if (const std::int64_t b = index.find(part.c.pair_b[k]); b >= 0) cost_of[std::size_t(b)] += 1;
  }
  std::vector<Vec3> x;
  std::vector<std::int64_t> cost;
  std::int64_t counted = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (part.own[i]) {
      x.push_back(part.p.x[i]);
      cost.push_back(cost_of[i]);
      counted += cost_of[i];
    }
  if (engine_steps >= kWeighSteps) {
    const double per_cost = counted > 0 ? engine_seconds / double(counted) : 0;
    const double most = comm_.max(per_cost);
    if (most > 0) {  // (in units of the slowest rank's: kWeighUnits to its counted unit)
      const double weight = double(kWeighUnits) * (counted > 0 ? per_cost / most : 1.0);
      for (std::int64_t& c : cost) c = std::max<std::int64_t>(1, std::llround(double(c) * weight));
    }
  }
  // the domain: the particles' bounding box over the ranks, a little wider
  std::vector<double> extent(6, -kInf);
  for (const Vec3& p : x) {
    const double v[3] = {p.x, p.y, p.z};
    for (int k = 0; k < 3; ++k) {
      extent[k] = std::max(extent[k], -v[k]);
      extent[3 + k] = std::max(extent[3 + k], v[k]);
    }
  }
  comm_.max(extent);
  RcbBox domain;
  for (int k = 0; k < 3; ++k) {
    const double lo = -extent[k], hi = extent[3 + k];
    const double pad = lo <= hi ? 1e-6 * std::max(1.0, hi - lo) : 0;
    domain.lo[k] = lo <= hi ? lo - pad : 0;
    domain.hi[k] = lo <= hi ? hi + pad : 1;
  }
  const PeriodicBox& period = inputs_.settings.periodic;  // a periodic axis is cut within its period
  const double plen[3] = {period.length.x, period.length.y, period.length.z};
  const double plo[3] = {period.lo.x, period.lo.y, period.lo.z}, phi[3] = {period.hi.x, period.hi.y, period.hi.z};
  for (int k = 0; k < 3; ++k)
    if (plen[k] > 0) {
      domain.lo[k] = plo[k];
      domain.hi[k] = phi[k];
    }
  if (!boxes_.empty()) {
    const RcbLoad load = rcb_load(comm_, boxes_, x, cost);
    report_.imbalance = load.imbalance;
    if (load.imbalance <= dsettings_.rebalance) return;
  }
  boxes_ = rcb_partition(comm_, x, cost, domain, comm_.size());
  for (RcbBox& b : boxes_)  // the outer faces at infinity: the boxes tile all space
    for (int k = 0; k < 3; ++k) {
      if (b.lo[k] <= domain.lo[k]) b.lo[k] = -kInf;
      if (b.hi[k] >= domain.hi[k]) b.hi[k] = kInf;
    }
  ++report_.cuts;
  report_.imbalance = rcb_load(comm_, boxes_, x, cost).imbalance;
}

void Decomposition::hand_over(Part part) {
  const auto start = std::chrono::steady_clock::now();
  const int ranks = comm_.size(), me = comm_.rank();
  const host::EngineSettings& s = inputs_.settings;
  cut(part, local_ ? local_->phase_times().total() : 0, local_ ? local_->step_count() - engine_start_step_ : 0);
  // The halo: until the next hand-over no particle moves farther than travel_ from where it is
  // now (or, far from the other boxes, farther: home_limit_ below), so two particles of different
  // ranks that touch before then are now within 2 r_max + 2 travel_ of each other: a rank's own
  // particles touch only particles within that of its box. Each engine keeps and builds its lists
  // meanwhile (when a list is built does not change the bits).
  double r_max = s.load_radius, v_max = 0;
  for (std::size_t i = 0; i < part.p.size(); ++i)
    if (part.own[i]) {
      r_max = std::max(r_max, double(part.p.radius[i]));
      v_max = std::max(v_max, double(norm(part.p.v[i])));
    }
  r_max = comm_.max(r_max);
  v_max = comm_.max(v_max);
  travel_ = std::min(std::max(kTravelSteps * v_max * double(s.dt), kTravelMin * r_max), kTravelMax * r_max);
  halo_ = (2 * r_max + 2 * travel_) * 1.001;

  // Each owned particle to its owner and, as a ghost, to every other rank whose box is within the
  // halo; each touching pair goes with its first particle (pair_a, the smaller id, where owned here).
  // A message holds columns: each particle field of the particles sent, their flags (owned by
  // the receiver) and mesh-slot counts, their slots, then the pairs' columns.
  const std::vector<std::size_t> slot_at = slot_offsets(part.c);
  const std::size_t n = part.p.size();
  std::vector<std::vector<std::uint32_t>> sent(static_cast<std::size_t>(ranks));  // the particles each rank gets
  std::vector<std::vector<std::uint8_t>> sent_own(static_cast<std::size_t>(ranks));
  std::vector<std::uint32_t> dest_at(n + 1, 0);  // particle i goes to dest[dest_at[i]..dest_at[i + 1])
  std::vector<int> dest;
  for (std::size_t i = 0; i < n; ++i) {
    if (part.own[i]) {
      const int o = owner(part.p.x[i]);
      dest.push_back(o);
      for (int r = 0; r < ranks; ++r)
        if (r != o && box_distance(boxes_[static_cast<std::size_t>(r)], part.p.x[i], s.periodic) < halo_) dest.push_back(r);
      for (std::uint32_t k = dest_at[i]; k < dest.size(); ++k) {
        sent[static_cast<std::size_t>(dest[k])].push_back(static_cast<std::uint32_t>(i));
        sent_own[static_cast<std::size_t>(dest[k])].push_back(k == dest_at[i] ? 1 : 0);
      }
    }
    dest_at[i + 1] = static_cast<std::uint32_t>(dest.size());
  }
  std::vector<std::vector<std::uint32_t>> sent_pairs(static_cast<std::size_t>(ranks));
  const host::IdIndex index(part.p.id, [&](std::size_t i) { return part.own[i] != 0; });
  for (std::size_t k = 0; k < part.c.pair_a.size(); ++k) {
    const std::int64_t a = index.find(part.c.pair_a[k]);
    if (a < 0) continue;
    for (std::uint32_t d = dest_at[std::size_t(a)]; d < dest_at[std::size_t(a) + 1]; ++d)
      sent_pairs[static_cast<std::size_t>(dest[d])].push_back(static_cast<std::uint32_t>(k));
  }
  std::vector<std::vector<char>> bytes(static_cast<std::size_t>(ranks));
  // The mesh slots go to the owner alone: a ghost's mesh contacts are its owner's (the engines
  // hold none for it).
  std::vector<std::size_t> slots;  // the mesh slots of the particles sent to a rank, in their order
  std::vector<std::uint8_t> slot_counts;
  for (int r = 0; r < ranks; ++r) {
    const std::vector<std::uint32_t>& at = sent[static_cast<std::size_t>(r)];
    const std::vector<std::uint8_t>& owns = sent_own[static_cast<std::size_t>(r)];
    const std::vector<std::uint32_t>& pairs = sent_pairs[static_cast<std::size_t>(r)];
    slots.clear();
    slot_counts.clear();
    for (std::size_t k = 0; k < at.size(); ++k) {
      const std::uint32_t i = at[k];
      slot_counts.push_back(owns[k] ? part.c.mesh_count[i] : std::uint8_t(0));
      if (owns[k])
        for (std::size_t q = slot_at[i]; q < slot_at[i + 1]; ++q) slots.push_back(q);
    }
    Packer o;
    o.reserve(2 * sizeof(std::uint64_t) + at.size() * (kParticleBytes + 2) +
              slots.size() * (sizeof(EntityContact) + sizeof(Vec3) + sizeof(ContactHistory)) +
              pairs.size() * (2 * sizeof(std::int64_t) + sizeof(ContactHistory)));
    o.put(static_cast<std::uint64_t>(at.size()));
    o.put(static_cast<std::uint64_t>(pairs.size()));
#define DEM_PUT_COLUMN(T, name) o.put_gathered(part.p.name, at);
    DEM_PARTICLE_FIELDS(DEM_PUT_COLUMN)
#undef DEM_PUT_COLUMN
    o.put_range(owns.data(), at.size());
    o.put_range(slot_counts.data(), at.size());
    o.put_gathered(part.c.mesh_entity, slots);
    o.put_gathered(part.c.mesh_normal, slots);
    o.put_gathered(part.c.mesh_history, slots);
    o.put_gathered(part.c.pair_a, pairs);
    o.put_gathered(part.c.pair_b, pairs);
    o.put_gathered(part.c.pair_history, pairs);
    bytes[static_cast<std::size_t>(r)].swap(o.bytes());
  }
  const bool current = part.c.forces_current;
  const std::vector<Vec3> body_force = part.c.body_force, body_torque = part.c.body_torque;
  host::ContactStats stats;
  if (local_) {
    stats = local_->stats();
    past_times_.add(local_->phase_times());
  }
  const bool had_engine = local_ != nullptr;
  const std::uint64_t step = had_engine ? local_->step_count() : restored_step_;
  host::MeshSet meshes = had_engine ? local_->meshes() : inputs_.meshes;
  part = Part{};
  local_ = nullptr;  // (its memory back before the new one is made)
  const std::vector<std::vector<char>> in = comm_.exchange(std::move(bytes));
  bytes.clear();

  // What this rank holds now: particles in increasing id, their slots and pairs.
  host::ParticleArrays p;
  std::vector<std::uint8_t> own;
  host::ContactState c;
  for (int r = 0; r < ranks; ++r) {
    Unpacker u(in[static_cast<std::size_t>(r)]);
    const auto np = static_cast<std::size_t>(u.get<std::uint64_t>()), npairs = static_cast<std::size_t>(u.get<std::uint64_t>());
#define DEM_GET_COLUMN(T, name) u.append(p.name, np);
    DEM_PARTICLE_FIELDS(DEM_GET_COLUMN)
#undef DEM_GET_COLUMN
    u.append(own, np);
    const std::size_t first = c.mesh_count.size();
    u.append(c.mesh_count, np);
    std::size_t slot_count = 0;
    for (std::size_t k = first; k < c.mesh_count.size(); ++k) slot_count += c.mesh_count[k];
    u.append(c.mesh_entity, slot_count);
    u.append(c.mesh_normal, slot_count);
    u.append(c.mesh_history, slot_count);
    u.append(c.pair_a, npairs);
    u.append(c.pair_b, npairs);
    u.append(c.pair_history, npairs);
    if (!u.done()) throw std::logic_error("hand-over: a message longer than its contents");
  }
  sort_by_id(p, own, c);
  keep_pairs_among(p, c);
  c.forces_current = current;
  c.body_force = body_force;
  c.body_torque = body_torque;
  if (c.body_force.size() != meshes.bodies.size()) c.body_force.assign(meshes.bodies.size(), Vec3{0, 0, 0});
  if (c.body_torque.size() != meshes.bodies.size()) c.body_torque.assign(meshes.bodies.size(), Vec3{0, 0, 0});

  // The ghost updates: each rank's owned particles that others hold, and the ghosts from each owner,
  // in increasing id on both sides (both decided from the same positions and boxes).
  send_ids_.assign(static_cast<std::size_t>(ranks), {});
  recv_ids_.assign(static_cast<std::size_t>(ranks), {});
  std::int64_t owned = 0, ghosts = 0;
  home_ids_.clear();
  home_x_.clear();
  home_limit_.clear();
  ghost_ids_.clear();
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (own[i]) {
      ++owned;
      home_ids_.push_back(p.id[i]);
      home_x_.push_back(p.x[i]);
      double nearest = kInf;
      for (int r = 0; r < ranks; ++r) {
        if (r == me) continue;
        const double d = box_distance(boxes_[static_cast<std::size_t>(r)], p.x[i], s.periodic);
        nearest = std::min(nearest, d);
        if (d < halo_) send_ids_[static_cast<std::size_t>(r)].push_back(p.id[i]);
      }
      // A particle may go farther than travel_ where it stays more than 2 r_max + travel_ from
      // every other box: no particle another rank owns can touch it there (one within travel_ of
      // its start lies within travel_ of that rank's box, one farther lies deep inside its own).
      home_limit_.push_back(std::max(travel_, 0.999 * (nearest - 2 * r_max - travel_)));
    } else {
      ++ghosts;
      ghost_ids_.push_back(p.id[i]);  // (ascending: p is)
      recv_ids_[static_cast<std::size_t>(owner(p.x[i]))].push_back(p.id[i]);
    }
  }
  std::vector<std::int64_t> counts{owned, ghosts};
  comm_.sum(counts);
  total_particles_ = static_cast<std::size_t>(counts[0]);
  report_.ghost_fraction = counts[0] > 0 ? double(counts[1]) / double(counts[0]) : 0;
  ++report_.handovers;

  local_ = make_engine_(inputs_.engine, std::move(p), std::move(meshes), inputs_.params, inputs_.num_materials, s);
  engine_start_step_ = step;
  local_->set_ghosts(ghost_ids_);
  local_->set_list_agreement([this](unsigned mine) {  // (a build anywhere: one everywhere)
    std::vector<std::uint8_t> bits{static_cast<std::uint8_t>(mine)};
    comm_.any(bits);
    return unsigned(bits[0]);
  });
  local_->restore_state(c, step);
  local_->set_stats(stats);
  local_->keep_contact_forces(keep_contacts_);
  indexed_builds_ = ~std::uint64_t(0);
  need_hand_over_ = false;
  if (!quanta_checked_) {  // every rank must sum the loads in the same units
    const LoadQuantum q = local_->load_quantum();
    std::vector<double> v{q.force_unit, q.torque_unit, q.body_force_unit, q.body_torque_unit}, neg(v.size());
    for (std::size_t k = 0; k < v.size(); ++k) neg[k] = -v[k];
    comm_.max(v);
    comm_.max(neg);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (v[k] != -neg[k])
        throw std::runtime_error("the ranks' engines sized the loads' integer units differently (EngineSettings::"
                                 "load_radius and load_materials must cover every particle of the run)");
    quanta_checked_ = true;
  }
  report_.handover_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Decomposition::refresh_indices() {
  if (local_->stats().broad_phase_builds == indexed_builds_) return;
  const host::IdIndex index(local_->particle_ids());
  const auto at = [&](std::int64_t id) {
    const std::int64_t i = index.find(id);
    if (i < 0) throw std::logic_error("the decomposition lost particle " + std::to_string(id));
    return static_cast<std::int32_t>(i);
  };
  const auto map = [&](const std::vector<std::vector<std::int64_t>>& ids, std::vector<std::vector<std::int32_t>>& out) {
    out.resize(ids.size());
    for (std::size_t r = 0; r < ids.size(); ++r) {
      out[r].clear();
      for (const std::int64_t id : ids[r]) out[r].push_back(at(id));
    }
  };
  map(send_ids_, send_index_);
  map(recv_ids_, recv_index_);
  home_index_.clear();
  for (const std::int64_t id : home_ids_) home_index_.push_back(at(id));
  send_all_.clear();
  for (const std::vector<std::int32_t>& to_rank : send_index_) send_all_.insert(send_all_.end(), to_rank.begin(), to_rank.end());
  indexed_builds_ = local_->stats().broad_phase_builds;
  ++index_version_;
}

// Each ghost takes its owner's new state: what a step changes of a particle.
void Decomposition::forward_ghosts() {
  const auto start = std::chrono::steady_clock::now();
  forward_ghost_states();
  report_.ghost_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Decomposition::forward_ghost_states() {
  refresh_indices();
  const int ranks = comm_.size();
  const std::size_t bytes = ghost_bytes();
  const bool shaped = ghosts_shaped();
  ghost_send_count_.assign(static_cast<std::size_t>(ranks), 0);
  ghost_recv_count_.assign(static_cast<std::size_t>(ranks), 0);
  std::size_t out = 0, in = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::size_t k = static_cast<std::size_t>(r);
    ghost_send_count_[k] = static_cast<int>(send_index_[k].size() * bytes);
    ghost_recv_count_[k] = static_cast<int>(recv_index_[k].size() * bytes);
    out += send_index_[k].size();
    in += recv_index_[k].size();
  }
  local_->get_states(send_all_, shaped, index_version_, sent_states_);
  ghost_send_.resize(out * bytes);
  char* at = ghost_send_.data();
  std::size_t first = 0;
  for (const std::vector<std::int32_t>& index : send_index_) {  // (a column each, rank by rank)
    const std::size_t n = index.size();
    sent_states_.for_each_column([&](const auto& field) {
      std::memcpy(at, field.data() + first, n * sizeof(field[0]));
      at += n * sizeof(field[0]);
    });
    first += n;
  }
  bytes_sent_ += double(ghost_send_.size());
  comm_.exchange_known(ghost_send_, ghost_send_count_, ghost_recv_, ghost_recv_count_);
  ghost_index_.clear();
  host::StepStates& s = ghost_states_;
  s.resize(in, shaped);
  const char* from = ghost_recv_.data();
  first = 0;
  for (const std::vector<std::int32_t>& index : recv_index_) {
    const std::size_t n = index.size();
    ghost_index_.insert(ghost_index_.end(), index.begin(), index.end());
    s.for_each_column([&](auto& field) {
      std::memcpy(field.data() + first, from, n * sizeof(field[0]));
      from += n * sizeof(field[0]);
    });
    first += n;
  }
  if (!ghost_index_.empty()) local_->set_states(ghost_index_, s);
}

// Whether an owned particle has moved farther than its limit since the hand-over (the halo holds
// until one has).
bool Decomposition::travelled() {
  refresh_indices();
  return local_->farther_than(home_index_, home_x_, home_limit_, inputs_.settings.periodic, index_version_);
}

// A stop on any rank stops every rank with the message of the smallest particle id (among the
// ranks whose own status failed, where `mine_counts`).
void Decomposition::agree_status(bool mine_counts) {
  const host::EngineStatus& mine = local_->status();
  const std::int64_t none = std::numeric_limits<std::int64_t>::max();
  const std::int64_t my_id = mine.ok || !mine_counts ? none : (mine.particle >= 0 ? mine.particle : none - 1);
  const std::int64_t first = comm_.min(my_id);
  if (first == none) return;
  const int from = static_cast<int>(comm_.min(my_id == first ? comm_.rank() : comm_.size()));
  std::vector<char> bytes;
  if (comm_.rank() == from) {
    Packer o;
    o.put_string(mine.message);
    o.put(mine.problem);
    o.put(mine.particle);
    bytes.swap(o.bytes());
  }
  comm_.broadcast(bytes, from);
  Unpacker u(bytes);
  status_.ok = false;
  status_.message = u.get_string();
  status_.problem = u.get<int>();
  status_.particle = u.get<std::int64_t>();
}

// After an evaluation (and the step, where `advanced`): the ghosts' new states, then, with
// `check`, the health check of limits_ (as check_health_again), and one reduction for all the
// ranks must agree on: the body loads, a stop in the step anywhere, a failed check anywhere, and
// whether a particle has moved farther than the halo allows. Returns whether the run is healthy.
bool Decomposition::after_evaluation(bool evaluated, bool advanced, bool check) {
  // (the travel of the rank's own particles, which the ghost updates leave alone)
  const bool far = advanced && travelled();
  if (advanced) {
    forward_ghosts();
    ++steps_forwarded_;
  }
  const bool step_failed = !local_->status().ok;
  // (the first error stands, as in one process: no check after a failed step)
  const bool checked = check && status_.ok && !step_failed;
  if (checked) local_->check_health(limits_);
  std::vector<BodyLoadSum> sums;
  if (evaluated) {
    sums = local_->body_load_sums();
    sums.resize(inputs_.meshes.bodies.size());
  }
  std::vector<std::int64_t> flags{step_failed ? 1 : 0, checked && !local_->status().ok ? 1 : 0, far ? 1 : 0};
  comm_.sum(sums, flags);
  if (evaluated) {
    const LoadQuantum q = local_->load_quantum();
    for (std::size_t b = 0; b < sums.size(); ++b) body_load_value(sums[b], q, body_force_[b], body_torque_[b]);
  }
  if (!status_.ok) {
    // the first error stands (as in one process): a later one elsewhere does not replace it
  } else if (flags[0] != 0) {
    agree_status(step_failed);  // a failed step names its particle before any check's
  } else if (flags[1] != 0) {
    agree_status(true);
  }
  need_hand_over_ = need_hand_over_ || flags[2] != 0;
  return status_.ok;
}

// One step, with `check` its health check; returns whether the run is healthy.
bool Decomposition::step_once(bool check) {
  if (need_hand_over_) hand_over(local_part());
  initial_ = host::ParticleArrays{};
  const bool evaluated = !forces_current_;
  local_->step();
  forces_current_ = false;
  return after_evaluation(evaluated, true, check);
}

void Decomposition::step() { step_once(false); }

host::Simulation::Advanced Decomposition::advance(std::uint64_t steps, const HealthLimits& limits) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {  // (root's, one broadcast a call)
    Packer o;
    o.put(steps);
    o.put(limits);
    bytes.swap(o.bytes());
  }
  comm_.broadcast(bytes);
  Unpacker u(bytes);
  steps = u.get<std::uint64_t>();
  limits_ = u.get<HealthLimits>();
  host::Simulation::Advanced done;
  while (done.steps < steps) {
    ++done.steps;
    if (!step_once(true)) {
      done.healthy = false;
      break;
    }
  }
  return done;
}

void Decomposition::compute_forces() {
  if (forces_current_) return;
  if (need_hand_over_) hand_over(local_part());
  local_->compute_forces();
  forces_current_ = true;
  after_evaluation(true, false, false);
}

bool Decomposition::check_health(const HealthLimits& limits) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {
    Packer o;
    o.put(limits);
    bytes.swap(o.bytes());
  }
  comm_.broadcast(bytes);
  Unpacker u(bytes);
  limits_ = u.get<HealthLimits>();
  return check_health_again();
}

bool Decomposition::check_health_again() {
  if (!status_.ok) return false;
  local_->check_health(limits_);
  std::vector<std::int64_t> failed{local_->status().ok ? 0 : 1};
  comm_.sum(failed);
  if (failed[0] == 0) return true;
  agree_status(true);
  return false;
}

// Each rank sends its own particles in increasing id (the ranks sort their parts at once), a
// column per field; root merges the ranks' runs.
host::ParticleArrays Decomposition::gather_particles() {
  const host::ParticleArrays& p = local_->particles();
  std::vector<std::uint32_t> at;
  at.reserve(p.size());
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!is_ghost(p.id[i])) at.push_back(static_cast<std::uint32_t>(i));
  std::sort(at.begin(), at.end(), [&](std::uint32_t a, std::uint32_t b) { return p.id[a] < p.id[b]; });
  Packer o;
  o.reserve(sizeof(std::uint64_t) + at.size() * kParticleBytes);
  o.put(static_cast<std::uint64_t>(at.size()));
#define DEM_PUT_COLUMN(T, name) o.put_gathered(p.name, at);
  DEM_PARTICLE_FIELDS(DEM_PUT_COLUMN)
#undef DEM_PUT_COLUMN
  const std::vector<std::vector<char>> all = comm_.gather(o.bytes());
  host::ParticleArrays out;
  std::vector<std::size_t> run_start{0};  // each rank's run in out, in rank order
  for (const std::vector<char>& b : all) {
    Unpacker u(b);
    const auto m = static_cast<std::size_t>(u.get<std::uint64_t>());
#define DEM_GET_COLUMN(T, name) u.append(out.name, m);
    DEM_PARTICLE_FIELDS(DEM_GET_COLUMN)
#undef DEM_GET_COLUMN
    if (!u.done()) throw std::logic_error("gather: a message longer than its contents");
    run_start.push_back(out.size());
  }
  if (run_start.size() <= 2) return out;  // (one run, or none: not root)
  std::vector<std::size_t> order(out.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  const auto by_id = [&](std::size_t a, std::size_t b) { return out.id[a] < out.id[b]; };
  for (std::size_t width = 1; width + 1 < run_start.size(); width *= 2)  // neighbouring runs merged pairwise
    for (std::size_t r = 0; r + width + 1 < run_start.size(); r += 2 * width) {
      const std::size_t end = run_start[std::min(r + 2 * width, run_start.size() - 1)];
      std::inplace_merge(order.begin() + std::ptrdiff_t(run_start[r]), order.begin() + std::ptrdiff_t(run_start[r + width]),
                         order.begin() + std::ptrdiff_t(end), by_id);
    }
#define DEM_ORDER_FIELD(T, name) permute(out.name, order);
  DEM_PARTICLE_FIELDS(DEM_ORDER_FIELD)
#undef DEM_ORDER_FIELD
  return out;
}

void Decomposition::export_state(host::ParticleArrays& particles, host::ContactState& contacts) {
  Part part = local_part();
  const std::vector<std::size_t> slot_at = slot_offsets(part.c);
  Packer o;
  std::uint64_t n = 0;
  std::vector<std::int64_t> mine;
  for (std::size_t i = 0; i < part.p.size(); ++i)
    if (part.own[i]) {
      ++n;
      mine.push_back(part.p.id[i]);
    }
  o.put(n);
  for (std::size_t i = 0; i < part.p.size(); ++i)
    if (part.own[i]) put_record(o, part.p, part.c, slot_at, i, true);
  std::sort(mine.begin(), mine.end());
  std::uint64_t np = 0;
  for (std::size_t k = 0; k < part.c.pair_a.size(); ++k) np += std::binary_search(mine.begin(), mine.end(), part.c.pair_a[k]);
  o.put(np);
  for (std::size_t k = 0; k < part.c.pair_a.size(); ++k)
    if (std::binary_search(mine.begin(), mine.end(), part.c.pair_a[k])) put_pair(o, part.c, k);
  const std::vector<std::vector<char>> all = comm_.gather(o.bytes());
  particles = host::ParticleArrays{};
  contacts = host::ContactState{};
  if (comm_.rank() != 0) return;
  std::vector<std::uint8_t> own;
  for (const std::vector<char>& b : all) {
    Unpacker u(b);
    const auto count = u.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < count; ++k) get_record(u, particles, own, contacts);
    const auto pairs = u.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < pairs; ++k) get_pair(u, contacts);
  }
  sort_by_id(particles, own, contacts);
  keep_pairs_among(particles, contacts);
  contacts.forces_current = forces_current_;
  if (forces_current_) {
    contacts.body_force = body_force_;
    contacts.body_torque = body_torque_;
  }
}

bool Decomposition::export_contact_forces(host::ContactForces& out) {
  host::ContactForces mine;
  const bool kept = local_->export_contact_forces(mine);
  const auto is_owned = [&](std::int64_t id) { return !is_ghost(id); };
  Packer o;
  std::uint64_t np = 0, nw = 0;
  for (std::size_t k = 0; k < mine.pairs(); ++k) np += is_owned(mine.pair_a[k]);
  for (std::size_t k = 0; k < mine.walls(); ++k) nw += is_owned(mine.wall_particle[k]);
  o.put(static_cast<std::uint8_t>(kept));
  o.put(np);
  for (std::size_t k = 0; k < mine.pairs(); ++k)
    if (is_owned(mine.pair_a[k])) {
      o.put(mine.pair_a[k]);
      o.put(mine.pair_b[k]);
      o.put(mine.pair_x_a[k]);
      o.put(mine.pair_x_b[k]);
      o.put(mine.pair_point[k]);
      o.put(mine.pair_force[k]);
    }
  o.put(nw);
  for (std::size_t k = 0; k < mine.walls(); ++k)
    if (is_owned(mine.wall_particle[k])) {
      o.put(mine.wall_particle[k]);
      o.put(mine.wall_entity[k]);
      o.put(mine.wall_x[k]);
      o.put(mine.wall_point[k]);
      o.put(mine.wall_force[k]);
    }
  const std::vector<std::vector<char>> all = comm_.gather(o.bytes());
  out = host::ContactForces{};
  bool all_kept = kept;
  for (const std::vector<char>& b : all) {
    Unpacker u(b);
    all_kept = all_kept && u.get<std::uint8_t>() != 0;
    const auto pairs = u.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < pairs; ++k) {
      out.pair_a.push_back(u.get<std::int64_t>());
      out.pair_b.push_back(u.get<std::int64_t>());
      out.pair_x_a.push_back(u.get<Vec3>());
      out.pair_x_b.push_back(u.get<Vec3>());
      out.pair_point.push_back(u.get<Vec3>());
      out.pair_force.push_back(u.get<Vec3>());
    }
    const auto walls = u.get<std::uint64_t>();
    for (std::uint64_t k = 0; k < walls; ++k) {
      out.wall_particle.push_back(u.get<std::int64_t>());
      out.wall_entity.push_back(u.get<std::int64_t>());
      out.wall_x.push_back(u.get<Vec3>());
      out.wall_point.push_back(u.get<Vec3>());
      out.wall_force.push_back(u.get<Vec3>());
    }
  }
  std::vector<std::int64_t> flag{kept ? 0 : 1};
  comm_.sum(flag);
  if (flag[0] != 0) {
    out = host::ContactForces{};
    return false;
  }
  return comm_.rank() == 0 ? all_kept : true;
}

void Decomposition::keep_contact_forces(bool on) {
  std::vector<char> bytes{static_cast<char>(on)};
  comm_.broadcast(bytes);
  keep_contacts_ = bytes.at(0) != 0;
  local_->keep_contact_forces(keep_contacts_);
}

std::size_t Decomposition::edit_particles(const std::vector<std::int64_t>& remove_ids, const host::ParticleArrays& more) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {
    Packer o;
    o.put_vector(remove_ids);
    o.put(static_cast<std::uint64_t>(more.size()));
    for (std::size_t i = 0; i < more.size(); ++i) put_particle(o, more, i);
    bytes.swap(o.bytes());
  }
  comm_.broadcast(bytes);
  Unpacker u(bytes);
  std::vector<std::int64_t> gone;
  u.get_vector(gone);
  host::ParticleArrays added;
  const auto n_more = u.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < n_more; ++k) get_particle(u, added);
  std::sort(gone.begin(), gone.end());
  Part part = local_part();
  std::vector<std::uint8_t> keep(part.p.size());
  std::vector<std::int64_t> removed{0};
  for (std::size_t i = 0; i < part.p.size(); ++i) {
    keep[i] = !std::binary_search(gone.begin(), gone.end(), part.p.id[i]);
    if (!keep[i] && part.own[i]) ++removed[0];
  }
  comm_.sum(removed);
  if (removed[0] == 0 && added.size() == 0) return 0;
  std::vector<std::uint8_t> own;
  for (std::size_t i = 0; i < part.p.size(); ++i)
    if (keep[i]) own.push_back(part.own[i]);
  host::keep_particles(part.p, part.c, keep);
  if (comm_.rank() == 0) {
    host::append_particles(part.p, part.c, added);
    own.resize(part.p.size(), 1);
  }
  part.own.swap(own);
  if (!status_.ok && status_.problem == kEscaped) status_ = host::EngineStatus{};  // (as an engine's removal)
  hand_over(std::move(part));
  return static_cast<std::size_t>(removed[0]);
}

void Decomposition::set_tags(const std::vector<std::int64_t>& ids, const std::vector<std::int32_t>& tags) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {
    Packer o;
    o.put_vector(ids);
    o.put_vector(tags);
    bytes.swap(o.bytes());
  }
  comm_.broadcast(bytes);
  Unpacker u(bytes);
  std::vector<std::int64_t> all_ids;
  std::vector<std::int32_t> all_tags;
  u.get_vector(all_ids);
  u.get_vector(all_tags);
  std::unordered_map<std::int64_t, std::int32_t> tag_of;
  tag_of.reserve(all_ids.size());
  for (std::size_t k = 0; k < all_ids.size(); ++k) tag_of[all_ids[k]] = all_tags.at(k);
  const host::ParticleArrays& p = local_->particles();
  std::vector<std::int32_t> mine(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) mine[i] = tag_of.at(p.id[i]);
  local_->set_tags(mine);
}

void Decomposition::set_body_motion(std::size_t body, const MeshBodyMotion& motion) {
  std::vector<char> bytes;
  if (comm_.rank() == 0) {
    Packer o;
    o.put(static_cast<std::uint64_t>(body));
    o.put(motion);
    bytes.swap(o.bytes());
  }
  comm_.broadcast(bytes);
  Unpacker u(bytes);
  const auto b = u.get<std::uint64_t>();
  local_->set_body_motion(static_cast<std::size_t>(b), u.get<MeshBodyMotion>());
}

host::ContactStats Decomposition::stats() {
  host::ContactStats s = local_->stats();
  std::vector<std::int64_t> v{std::int64_t(s.broad_phase_builds), std::int64_t(s.lists_kept), std::int64_t(s.pair_candidates),
                              std::int64_t(s.pair_contacts),      std::int64_t(s.pair_spills), std::int64_t(s.fe_potential),
                              std::int64_t(s.fe_contact),         std::int64_t(s.valid_entities), std::int64_t(s.h2_compactions),
                              std::int64_t(s.mesh_list_renewals), std::int64_t(s.mesh_lists_kept)};
  comm_.sum(v);
  s.broad_phase_builds = std::uint64_t(v[0]);  // (summed: each rank builds its lists when its own need it)
  s.lists_kept = std::uint64_t(v[1]);
  s.pair_candidates = std::uint64_t(v[2]);
  s.pair_contacts = std::uint64_t(v[3]);
  s.pair_spills = std::uint64_t(v[4]);
  s.fe_potential = std::uint64_t(v[5]);
  s.fe_contact = std::uint64_t(v[6]);
  s.valid_entities = std::uint64_t(v[7]);
  s.h2_compactions = std::uint64_t(v[8]);
  s.mesh_list_renewals = std::uint64_t(v[9]);
  s.mesh_lists_kept = std::uint64_t(v[10]);
  return s;
}

host::PhaseTimes Decomposition::phase_times() {
  const host::PhaseTimes& t = local_->phase_times();
  const host::PhaseTimes& p = past_times_;
  std::vector<double> v{p.broad_phase + t.broad_phase, p.pair_contacts + t.pair_contacts, p.mesh_bins + t.mesh_bins,
                        p.mesh_contacts + t.mesh_contacts, p.gather + t.gather, p.mesh_motion + t.mesh_motion};
  comm_.max(v);
  return host::PhaseTimes{v[0], v[1], v[2], v[3], v[4], v[5]};
}

std::size_t Decomposition::touching_pairs() {
  std::vector<std::int64_t> v{std::int64_t(local_->own_touching_pairs())};
  comm_.sum(v);
  return static_cast<std::size_t>(v[0]);
}

std::size_t Decomposition::mesh_contacts() {
  std::vector<std::int64_t> v{std::int64_t(local_->own_mesh_contacts())};
  comm_.sum(v);
  return static_cast<std::size_t>(v[0]);
}

double Decomposition::max_overlap() { return comm_.max(local_->max_overlap()); }

DecompositionReport Decomposition::report() {
  DecompositionReport r = report_;
  r.cuda_aware_library = library_cuda_aware();
  std::vector<std::int64_t> total{static_cast<std::int64_t>(bytes_sent_)};
  comm_.sum(total);
  r.bytes_per_step = steps_forwarded_ > 0 ? double(total[0]) / double(steps_forwarded_) : 0;
  std::vector<double> seconds(static_cast<std::size_t>(comm_.size()), 0);
  seconds[static_cast<std::size_t>(comm_.rank())] = past_times_.total() + local_->phase_times().total();
  comm_.max(seconds);
  r.rank_seconds = seconds;
  const std::string device = local_->device_name();
  for (const std::vector<char>& name : comm_.gather(std::vector<char>(device.begin(), device.end())))
    r.rank_devices.emplace_back(name.begin(), name.end());
  return r;
}

}  // namespace dem::mpi
