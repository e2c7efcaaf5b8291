#include "host/app/scene/flow.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "host/sim/errors.hpp"
#include "host/app/scene/placement.hpp"

namespace dem::host {

FlowController::FlowController(const SceneConfig& scene, std::int64_t next_id, std::vector<std::int32_t> inlet_shapes)
    : inlets_(scene.inlets), outlets_(scene.outlets), periodic_(periodic_box(scene)), shape_(std::move(inlet_shapes)),
      dt_(scene.simulation.dt) {
  shape_.resize(inlets_.size(), -1);
  for (std::size_t k = 0; k < inlets_.size(); ++k)
    if (inlets_[k].region.polyhedron.any() && shape_[k] < 0)
      throw std::invalid_argument("inlet '" + inlets_[k].name + "' pours polyhedra, but has no shape in the table");
  for (const MaterialSpec& m : scene.materials) densities_.push_back(m.density);
  for (const InletSpec& in : inlets_) {
    const int m = material_index(scene, in.region.material);
    if (m >= 0) material_.push_back(m);
  }
  state_.next_id = next_id;
  for (const InletSpec& in : inlets_) {
    state_.inserted.push_back(0);
    state_.inserted_mass.push_back(0);
    state_.pending_radius.push_back(0);
    rng_.emplace_back(in.region.seed);
    next_inlet_.push_back(in.start);
    warned_.push_back(0);
  }
  for (const OutletSpec& out : outlets_) {
    outlet_names_.push_back(out.name);
    state_.removed.push_back(0);
    state_.removed_mass.push_back(0);
    state_.residence_sum.push_back(0);
    state_.residence_sum2.push_back(0);
    next_outlet_.push_back(0);
  }
  state_.rng.resize(inlets_.size());
}

FlowState FlowController::state() const {
  FlowState s = state_;
  s.next_inlet = next_inlet_;
  s.next_outlet = next_outlet_;
  for (std::size_t k = 0; k < rng_.size(); ++k) {
    std::ostringstream text;
    text << rng_[k];
    s.rng[k] = text.str();
  }
  return s;
}

void FlowController::restore(const FlowState& s) {
  if (s.inserted.size() != inlets_.size() || s.removed.size() != outlets_.size() || s.rng.size() != inlets_.size())
    throw InputError("the checkpoint has " + std::to_string(s.inserted.size()) + " inlets and " +
                     std::to_string(s.removed.size()) + " outlets, the scene " + std::to_string(inlets_.size()) + " and " +
                     std::to_string(outlets_.size()));
  state_ = s;
  if (s.next_inlet.size() == inlets_.size()) next_inlet_ = s.next_inlet;
  if (s.next_outlet.size() == outlets_.size()) next_outlet_ = s.next_outlet;
  for (std::size_t k = 0; k < inlets_.size(); ++k) {
    std::istringstream text(s.rng[k]);
    text >> rng_[k];
    if (!text) throw InputError("the checkpoint's random state of inlet " + inlets_[k].name + " is damaged");
  }
}

void store_flow(const FlowController& flow, Checkpoint& c) {
  const FlowState s = flow.state();
  c.next_id = s.next_id;
  c.inlet_inserted = s.inserted;
  c.inlet_mass = s.inserted_mass;
  c.inlet_pending_radius = s.pending_radius;
  c.inlet_rng = s.rng;
  c.outlet_removed = s.removed;
  c.outlet_mass = s.removed_mass;
  c.outlet_residence_sum = s.residence_sum;
  c.outlet_residence_sum2 = s.residence_sum2;
  c.next_inlet = s.next_inlet;
  c.next_outlet = s.next_outlet;
}

void restore_flow(FlowController& flow, const Checkpoint& c) {
  FlowState s = flow.state();
  if (c.next_id < 0) {  // version 1: no inflow then; ids above every id there
    for (std::int64_t id : c.particles.id) s.next_id = std::max(s.next_id, id + 1);
    if (!s.inserted.empty() || !s.removed.empty())
      throw InputError("the checkpoint (format version 1) has no inflow or outflow state, but the scene has inlets or outlets");
    flow.restore(s);
    return;
  }
  s.next_id = c.next_id;
  s.inserted = c.inlet_inserted;
  s.inserted_mass = c.inlet_mass;
  s.pending_radius = c.inlet_pending_radius;
  s.rng = c.inlet_rng;
  s.removed = c.outlet_removed;
  s.removed_mass = c.outlet_mass;
  s.residence_sum = c.outlet_residence_sum;
  s.residence_sum2 = c.outlet_residence_sum2;
  s.residence_sum.resize(s.removed.size(), 0.0);  // (a checkpoint of version 1)
  s.residence_sum2.resize(s.removed.size(), 0.0);
  s.next_inlet = c.next_inlet;
  s.next_outlet = c.next_outlet;
  flow.restore(s);
}

std::uint64_t FlowController::inserted() const {
  std::uint64_t n = 0;
  for (std::uint64_t k : state_.inserted) n += k;
  return n;
}
std::uint64_t FlowController::removed() const {
  std::uint64_t n = 0;
  for (std::uint64_t k : state_.removed) n += k;
  return n;
}

namespace {
bool inside_box(Vec3 x, const Vec3d& lo, const Vec3d& hi) {
  return x.x >= lo[0] && x.y >= lo[1] && x.z >= lo[2] && x.x <= hi[0] && x.y <= hi[1] && x.z <= hi[2];
}
}  // namespace

FlowEvents FlowController::apply(Simulation& sim) {
  FlowEvents ev;
  ev.removed.assign(outlets_.size(), 0);
  ev.removed_mass.assign(outlets_.size(), 0.0);
  if (empty()) return ev;
  const double t = sim.time(), due = t + 0.5 * dt_;
  bool any = false;  // the particles are fetched (downloaded from a device) only when something is due
  for (std::size_t o = 0; o < outlets_.size(); ++o) any = any || due >= next_outlet_[o];
  const auto pouring = [&](std::size_t k) {  // before its stop, and short of its count
    const InletSpec& in = inlets_[k];
    return t <= in.stop + 0.5 * dt_ && (in.count == 0 || state_.inserted[k] < static_cast<std::uint64_t>(in.count));
  };
  for (std::size_t k = 0; k < inlets_.size(); ++k) any = any || (due >= next_inlet_[k] && pouring(k));
  if (!any) return ev;
  const ParticleArrays& p = sim.particles();
  // Outlets: every particle whose centre is inside, at their check times.
  std::vector<std::int64_t> gone;
  std::vector<char> taken;  // a particle inside two outlets counts once, for the first
  for (std::size_t o = 0; o < outlets_.size(); ++o) {
    const double interval = outlets_[o].interval > 0 ? outlets_[o].interval : 100 * dt_;
    if (due < next_outlet_[o]) continue;
    next_outlet_[o] = t + interval;
    taken.resize(p.size(), 0);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (!taken[i] && inside_box(p.x[i], outlets_[o].min, outlets_[o].max)) {
        taken[i] = 1;
        gone.push_back(p.id[i]);
        ++ev.removed[o];
        ev.removed_mass[o] += 1.0 / double(p.inv_mass[i]);
        ev.residences.push_back(Residence{o, p.id[i], p.born[i], t});
      }
  }
  // (in id order within each outlet: the same rows and sums whatever the engine's particle order)
  std::stable_sort(ev.residences.begin(), ev.residences.end(), [](const Residence& a, const Residence& b) {
    return a.outlet != b.outlet ? a.outlet < b.outlet : a.id < b.id;
  });
  for (const Residence& r : ev.residences) {
    state_.residence_sum[r.outlet] += r.removed - r.inserted;
    state_.residence_sum2[r.outlet] += (r.removed - r.inserted) * (r.removed - r.inserted);
  }
  ev.residence_sum = state_.residence_sum;
  ev.residence_sum2 = state_.residence_sum2;
  // Inlets: what their rates owe by now, placed at random in their regions.
  ParticleArrays more;
  for (std::size_t k = 0; k < inlets_.size(); ++k) {
    const InletSpec& in = inlets_[k];
    if (due < next_inlet_[k] || !pouring(k)) continue;
    next_inlet_[k] += in.interval * std::max(1.0, std::floor((due - next_inlet_[k]) / in.interval) + 1);
    const FillSpec& f = in.region;
    const double elapsed = std::min(t, in.stop) - in.start;
    const FillFrame frame = cylinder_frame(to_vec(f.cylinder_axis));
    const Vec3 base = to_vec(f.cylinder_base);
    // Polyhedra: the distribution is of sizes, placed by their bounding spheres (size times the
    // shape's bounding radius at size 1).
    const PolyShape* shape = shape_[k] >= 0 ? &sim.shapes().at(static_cast<std::size_t>(shape_[k])) : nullptr;
    const double reach = shape ? double(shape->bounding_radius) : 1.0;
    const double r_max = max_radius(f.radius) * reach;
    // The region's box grown by the largest reach: the particles and elements that can be in the way.
    Vec3 lo, hi;
    region_bounds(f, lo, hi);
    double p_max = 0;
    for (real r : p.radius) p_max = std::max(p_max, double(r));
    const real grow = real(r_max + p_max);
    lo -= Vec3{grow, grow, grow};
    hi += Vec3{grow, grow, grow};
    PlacementGrid grid(2 * std::max(r_max, p_max), periodic_);
    // With periodic axes the region can reach across a face: every particle may be in the way.
    const bool everywhere = periodic_.any();
    for (std::size_t i = 0; i < p.size(); ++i)
      if (everywhere || inside_box(p.x[i], {lo.x, lo.y, lo.z}, {hi.x, hi.y, hi.z})) grid.add(p.x[i], p.radius[i]);
    for (std::size_t i = 0; i < more.size(); ++i) grid.add(more.x[i], more.radius[i]);
    const MeshSet& meshes = sim.meshes();
    std::vector<index_t> near;  // elements whose box meets the grown region
    for (std::size_t e = 0; e < meshes.num_elements(); ++e) {
      const Polygon poly = meshes.polygon(static_cast<index_t>(e));
      Vec3 a = poly.v[0], b = poly.v[0];
      for (int c = 1; c < poly.n; ++c)
        a = Vec3{std::min(a.x, poly.v[c].x), std::min(a.y, poly.v[c].y), std::min(a.z, poly.v[c].z)},
        b = Vec3{std::max(b.x, poly.v[c].x), std::max(b.y, poly.v[c].y), std::max(b.z, poly.v[c].z)};
      if (everywhere || (a.x <= hi.x && b.x >= lo.x && a.y <= hi.y && b.y >= lo.y && a.z <= hi.z && b.z >= lo.z))
        near.push_back(static_cast<index_t>(e));
    }
    const auto blocked = [&](Vec3 x, double r) {
      if (grid.overlaps(x, r)) return true;
      const Vec3 at = wrap_far(periodic_, x);  // where the engine will put it
      for (index_t e : near)
        if (fast_intersection_test(meshes.polygon(e), at, real(r))) return true;
      return false;
    };
    const std::int32_t material = material_[k];
    const double density = densities_[static_cast<std::size_t>(material)];
    std::mt19937_64& rng = rng_[k];
    std::size_t placed_now = 0;
    for (;;) {
      double& drawn = state_.pending_radius[k];  // a radius, or a polyhedron's size
      if (drawn == 0) drawn = sample_radius(f.radius, rng);
      const double r = drawn * reach;
      const double mass = shape ? double(volume_equivalent_mass(real(density), real(drawn)))
                                : double(sphere_mass(real(density), real(r)));
      const bool owed = in.rate > 0 ? double(state_.inserted[k] + 1) <= in.rate * elapsed + 1e-9
                                    : state_.inserted_mass[k] + mass <= in.mass_rate * elapsed + 1e-12;
      if (!owed || (in.count > 0 && state_.inserted[k] >= static_cast<std::uint64_t>(in.count))) break;
      bool ok = false;
      Vec3 x{};
      for (int attempt = 0; attempt < 100 && !ok; ++attempt) {
        x = random_point_in_region(f, r, frame, base, rng);
        ok = !blocked(x, r);
      }
      if (!ok) {  // the region is full for now: the rest waits for the next batch
        if (!warned_[k]) {
          std::fprintf(stderr, "%sdem: inlet '%s' at t = %g s: no room in its region; particles wait for room "
                               "(inserted %llu so far)\n",
                       "\n", in.name.c_str(), t, static_cast<unsigned long long>(state_.inserted[k]));
          warned_[k] = 1;
        }
        break;
      }
      if (shape)
        more.push_polyhedron(state_.next_id++, x, random_orientation(rng), to_vec(f.velocity), Vec3{0, 0, 0}, real(drawn),
                             shape_[k], *shape, real(density), material, false);
      else
        more.push_back(state_.next_id++, x, to_vec(f.velocity), Vec3{0, 0, 0}, real(r), real(density), material, false);
      more.tag.back() = f.tag;
      more.born.back() = t;
      grid.add(x, r);
      ++state_.inserted[k];
      state_.inserted_mass[k] += mass;
      drawn = 0;
      ++placed_now;
    }
    ev.inserted += placed_now;
  }
  for (std::size_t o = 0; o < outlets_.size(); ++o) {
    state_.removed[o] += ev.removed[o];
    state_.removed_mass[o] += ev.removed_mass[o];
  }
  if (!gone.empty() || more.size()) sim.edit_particles(gone, more);
  return ev;
}

}  // namespace dem::host
