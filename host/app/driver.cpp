#include "host/app/driver.hpp"

#include <omp.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <limits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cuda/device_engine.hpp"
#include "host/sim/checkpoint.hpp"
#include "host/app/scene/flow.hpp"
#include "host/app/scene/placement.hpp"
#include "host/app/scene/retag.hpp"
#include "host/omp/engine.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/sim/errors.hpp"
#include "host/app/output/output.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace dem::host {
namespace {

// More OpenMP threads than this is a typo, not a machine (the runtime crashes on 100,000).
constexpr int kMaxThreads = 4096;
// More steps than this is a typo (dt or end_time), not a run: it would take years.
constexpr double kMaxSteps = 1e13;
// The wall time one Simulation::advance of the step loop takes at most, as the last call's time a
// step foretells it (an interrupt and the progress line wait for the call in progress).
constexpr double kCallSeconds = 0.2;

// SIGINT/SIGTERM: the handler only records the signal; the step loop sees it after the steps in
// progress (a call of Simulation::advance: about kCallSeconds, or one step), writes the outputs
// and the summary ("interrupted") and exits 128 + signal.
volatile std::sig_atomic_t g_signal = 0;
extern "C" void record_signal(int sig) { g_signal = sig; }

class SignalGuard {
 public:
  SignalGuard() {
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = record_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

// The output folder for a scene name: path separators, control characters and the like become
// '_', and a name of dots only is not a parent or current directory. A name can never write
// outside out/.
std::string folder_name(const std::string& name) {
  std::string out;
  for (unsigned char c : name) out += (std::isalnum(c) || c == '.' || c == '-' || c == '_') ? char(c) : '_';
  if (out.find_first_not_of('.') == std::string::npos) out = "scene" + std::string(out.size(), '_');
  return out;
}

// What the scene lets particles do: the fastest initial particle, the fastest point of a moving
// mesh, gravity, and the box of the particles (grown by their radii).
struct SceneMotion {
  double v0 = 0, v_mesh = 0, g = 0;  // m/s, m/s, m/s^2
  Vec3 lo, hi;                       // m; lo > hi when there are no particles
  std::vector<double> body_reach;    // m, largest distance of each body's points from its centre
};

SceneMotion scene_motion(const SceneConfig& scene, const SceneInputs& in) {
  SceneMotion m;
  const real inf = std::numeric_limits<real>::infinity();
  m.lo = Vec3{inf, inf, inf};
  m.hi = Vec3{-inf, -inf, -inf};
  for (std::size_t i = 0; i < in.particles.size(); ++i) {
    const Vec3 x = in.particles.x[i];
    const real r = in.particles.radius[i];
    m.lo = Vec3{std::min(m.lo.x, x.x - r), std::min(m.lo.y, x.y - r), std::min(m.lo.z, x.z - r)};
    m.hi = Vec3{std::max(m.hi.x, x.x + r), std::max(m.hi.y, x.y + r), std::max(m.hi.z, x.z + r)};
    m.v0 = std::max(m.v0, double(norm(in.particles.v[i])));
  }
  // Where inlets put particles and outlets take them: inside the domain too.
  const auto grow_box = [&m](Vec3 lo, Vec3 hi) {
    m.lo = Vec3{std::min(m.lo.x, lo.x), std::min(m.lo.y, lo.y), std::min(m.lo.z, lo.z)};
    m.hi = Vec3{std::max(m.hi.x, hi.x), std::max(m.hi.y, hi.y), std::max(m.hi.z, hi.z)};
  };
  for (const InletSpec& in_spec : scene.inlets) {
    const FillSpec& f = in_spec.region;
    Vec3 lo, hi;
    region_bounds(f, lo, hi);
    grow_box(lo, hi);
    m.v0 = std::max(m.v0, std::sqrt(f.velocity[0] * f.velocity[0] + f.velocity[1] * f.velocity[1] + f.velocity[2] * f.velocity[2]));
  }
  for (const OutletSpec& o : scene.outlets) grow_box(to_vec(o.min), to_vec(o.max));
  for (const MeshBody& b : in.meshes.bodies) {
    double reach = 0;
    for (index_t k = b.first_vertex; k < b.first_vertex + b.vertex_count; ++k)
      reach = std::max(reach, double(norm(in.meshes.ref_vertices[k] - b.center0)));
    m.body_reach.push_back(reach);
    m.v_mesh = std::max(m.v_mesh, double(body_speed_bound(b)) + double(norm(body_spin_bound(b))) * reach);
  }
  const auto& g = scene.simulation.gravity;
  m.g = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  return m;
}

// Health limits from the scene: the domain (given, or the box of the particles, fills and meshes
// grown by what a particle can travel in the run: a margin that never stops a sound run), and the
// largest believable speed (ten times the initial particle speeds, the fastest mesh point and a fall
// across the domain, plus 10 m/s; or simulation.max_speed).
HealthLimits health_limits(const SceneConfig& scene, const SceneInputs& in, const SceneMotion& m) {
  const double inf = std::numeric_limits<double>::infinity();
  Vec3 lo = m.lo, hi = m.hi;
  auto grow = [&](Vec3 a, double r) {
    lo = Vec3{std::min(lo.x, a.x - r), std::min(lo.y, a.y - r), std::min(lo.z, a.z - r)};
    hi = Vec3{std::max(hi.x, a.x + r), std::max(hi.y, a.y + r), std::max(hi.z, a.z + r)};
  };
  const double t_end = scene.simulation.end_time;
  for (std::size_t b = 0; b < in.meshes.bodies.size(); ++b) {
    // the body swept over the run: its reach sphere about the centre at the start and at the end
    const MeshBody& body = in.meshes.bodies[b];
    grow(body.center0, m.body_reach[b]);
    if (body.knot_count == 0 && body.osc_omega == 0)  // a constant velocity from start to stop
      grow(body.center0 + body.velocity * real(std::min(t_end, body.stop) - std::min(t_end, body.start)), m.body_reach[b]);
    else  // a table or an oscillation: as far as its fastest speed can take it
      grow(body.center0, m.body_reach[b] + double(body_speed_bound(body)) * t_end);
  }
  HealthLimits h;
  if (scene.domain.given) {
    h.lo = Vec3{real(scene.domain.min[0]), real(scene.domain.min[1]), real(scene.domain.min[2])};
    h.hi = Vec3{real(scene.domain.max[0]), real(scene.domain.max[1]), real(scene.domain.max[2])};
  } else if (lo.x <= hi.x) {
    const double diag = norm(hi - lo);
    const real margin = real(diag + (m.v0 + m.v_mesh) * t_end + 0.5 * m.g * t_end * t_end);
    h.lo = lo - Vec3{margin, margin, margin};
    h.hi = hi + Vec3{margin, margin, margin};
  } else {
    h.lo = Vec3{-real(inf), -real(inf), -real(inf)};
    h.hi = Vec3{real(inf), real(inf), real(inf)};
  }
  const double span = std::isfinite(double(norm(h.hi - h.lo))) ? double(norm(h.hi - h.lo)) : 0.0;
  h.max_overlap = real(scene.simulation.max_overlap);
  h.max_speed = scene.simulation.max_speed > 0 ? real(scene.simulation.max_speed)
                                               : real(10 * (m.v0 + m.v_mesh + std::sqrt(2 * m.g * span)) + 10);
  // Periodic axes: positions are kept in the box by wrapping, never an escape.
  for (int k = 0; k < 3; ++k)
    if (scene.domain.periodic[k]) {
      (k == 0 ? h.lo.x : k == 1 ? h.lo.y : h.lo.z) = -real(inf);
      (k == 0 ? h.hi.x : k == 1 ? h.hi.y : h.hi.z) = real(inf);
    }
  return h;
}

std::string format_duration(double s) {
  if (!std::isfinite(s) || s < 0) return "--:--";
  const long total = std::lround(s);
  char buf[32];
  if (total >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", total / 60, total % 60);
  return buf;
}

// One progress line about once a second: step, simulated time, particles, throughput, ETA.
class Progress {
 public:
  // first_step: where this run starts (a restart continues a run); particle_steps are counted by
  // the caller, as the particle count may change (inlets, outlets, removals).
  Progress(bool quiet, std::uint64_t first_step, std::uint64_t total_steps, double end_time)
      : quiet_(quiet), tty_(isatty(2)), first_(first_step), total_(total_steps), end_time_(end_time),
        start_(std::chrono::steady_clock::now()), last_(start_) {}
  void update(std::uint64_t step, double t, std::size_t particles, double particle_steps, bool force = false) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && std::chrono::duration<double>(now - last_).count() < 1.0) return;
    last_ = now;
    n_ = particles;
    const double wall = std::chrono::duration<double>(now - start_).count();
    const double rate = wall > 0 ? particle_steps / wall : 0;
    const std::uint64_t done = step - std::min(step, first_);
    const double eta = done > 0 ? wall * double(total_ - std::min(step, total_)) / double(done) : NAN;
    std::fprintf(stderr, "%sstep %llu/%llu  t = %.4g/%.4g s  N = %zu  %.3g particle-steps/s  elapsed %s  ETA %s%s",
                 tty_ ? "\r" : "", static_cast<unsigned long long>(step), static_cast<unsigned long long>(total_), t,
                 end_time_, n_, rate, format_duration(wall).c_str(), format_duration(eta).c_str(), tty_ ? "   " : "\n");
    std::fflush(stderr);
  }
  void finish() {
    if (!quiet_ && tty_) std::fputc('\n', stderr);
  }

 private:
  bool quiet_, tty_;
  std::uint64_t first_, total_;
  double end_time_;
  std::size_t n_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
};

// Before the run: the Hertz contact time of each kind of contact the scene can have, for its
// smallest particle (placed, or poured later by an inlet) at the largest believable impact speed, t_c = 2.868 (m*^2 / (R* E*^2 v))^(1/5)
// (the impact duration of two Hertz spheres); a warning when dt does not resolve it in 20 steps.
// And the dashpot's own limit: it is integrated explicitly, so its rate 2 zeta omega (omega =
// sqrt(S_n/m*) at the deepest overlap of that impact, sqrt(k_n/m*) on the linear law) must stay
// inside the step. dt <= 1/(2 zeta omega) reproduces the restitution (measured on two-sphere
// impacts from e = 0.5 down to 0.001, which needs zeta = 14: within 10 %); beyond 1/(zeta omega)
// the dashpot overshoots every step and the contact can give back more energy than it took.
// Small restitutions raise zeta, so they need fine steps though the contact time is resolved.
void warn_about_dt(const SceneConfig& scene, const SceneInputs& in, const SceneMotion& m, bool quiet) {
  if (quiet || (in.particles.size() == 0 && scene.inlets.empty())) return;
  const int nm = in.num_materials;
  std::vector<double> r_min(nm, 0), mass(nm, 0);
  std::vector<bool> is_wall(nm, false);
  const auto smallest = [&](int mat, double r, double m_r) {
    if (r_min[mat] == 0 || r < r_min[mat]) r_min[mat] = r, mass[mat] = m_r;
  };
  for (std::size_t i = 0; i < in.particles.size(); ++i)
    smallest(in.particles.material[i], in.particles.radius[i], 1.0 / in.particles.inv_mass[i]);
  // and the smallest particle each inlet may pour (a polyhedron's radius: its bounding sphere's,
  // as the particles' records hold it)
  for (std::size_t k = 0; k < scene.inlets.size(); ++k) {
    const FillSpec& region = scene.inlets[k].region;
    const int mat = material_index(scene, region.material);
    if (mat < 0) continue;
    const real low = real(min_radius(region.radius)), density = real(scene.materials[std::size_t(mat)].density);
    const std::int32_t shape = k < in.inlet_shapes.size() ? in.inlet_shapes[k] : -1;
    if (shape >= 0)  // (low: the smallest volume-equivalent diameter)
      smallest(mat, low * in.settings.shapes[std::size_t(shape)].bounding_radius, volume_equivalent_mass(density, low));
    else
      smallest(mat, low, sphere_mass(density, low));
  }
  for (const MeshBody& b : in.meshes.bodies) is_wall[b.material] = true;
  const double span = norm(m.hi - m.lo);
  const double v = std::max(m.v0 + m.v_mesh + std::sqrt(2 * m.g * span), 0.1);  // m/s: the impact speed assumed
  const double dt = scene.simulation.dt;
  for (int a = 0; a < nm; ++a) {
    if (r_min[a] == 0) continue;
    for (int b = 0; b < nm; ++b) {
      const bool wall = is_wall[b] && r_min[b] == 0;
      if (!wall && (r_min[b] == 0 || b < a)) continue;
      const ContactParams& p = in.params[std::size_t(a) * nm + b];
      const bool linear = p.normal_model == NormalModel::Linear;
      const double e_star = p.e_star;
      if (!linear && (!(e_star > 0) || !std::isfinite(e_star))) continue;
      // R* and m*: harmonic means with the smallest particle of b, or the particle alone on a wall.
      const double r_star = wall ? r_min[a] : r_min[a] * r_min[b] / (r_min[a] + r_min[b]);
      const double m_star = wall ? mass[a] : mass[a] * mass[b] / (mass[a] + mass[b]);
      // Hertz: the elastic contact time at the impact speed; linear: the clamped spring-dashpot's
      // (restitution.hpp, independent of speed)
      const double t_c = linear ? double(linear_impact(p.zeta).contact_time) / std::sqrt(double(p.k_n) / m_star)
                                : 2.868 * std::pow(m_star * m_star / (r_star * e_star * e_star * v), 0.2);
      const std::string pair =
          scene.materials[a].name + "-" + (wall ? scene.materials[b].name + " (wall)" : scene.materials[b].name);
      if (dt * 20 > t_c)
        std::fprintf(stderr,
                     "dem: warning: simulation.dt = %g s resolves a %s contact in %.1f steps (%s contact time "
                     "%.3g s for the smallest particle at %.3g m/s); 20 or more are needed for accurate contacts, "
                     "and below about 5 the run may blow up\n",
                     dt, pair.c_str(), t_c / dt, linear ? "linear" : "Hertz", t_c, v);
      const double damping_rate = normal_damping_rate(p, real(r_star), real(m_star), real(v));  // 1/s
      char what[96];
      if (p.plastic)
        std::snprintf(what, sizeof what, "the critically damped dent of its perfectly plastic law");
      else
        std::snprintf(what, sizeof what, "damping ratio %.3g for its restitution", double(p.zeta));
      if (dt * damping_rate > 1)
        std::fprintf(stderr,
                     "dem: warning: simulation.dt = %g s is too long for the dashpot of a %s contact (%s): its "
                     "restitution needs dt <= %.3g s, and above %.3g s the dashpot can add energy instead of "
                     "taking it\n",
                     dt, pair.c_str(), what, 1 / damping_rate, 2 / damping_rate);
    }
  }
}

}  // namespace

HealthLimits scene_health_limits(const SceneConfig& scene, const SceneInputs& inputs) {
  return health_limits(scene, inputs, scene_motion(scene, inputs));
}

void check_checkpoint_fits(const std::string& path, const Checkpoint& from, const SceneConfig& scene,
                           const SceneInputs& inputs) {
  // The checkpoint's physics must be the scene's: another dt, gravity, contact law or mesh would
  // not continue the same run.
  std::string differs;
  if (from.dt != inputs.settings.dt)
    differs = "simulation.dt (" + std::to_string(from.dt) + " s there, " + std::to_string(inputs.settings.dt) + " s here)";
  else if (norm(from.gravity - inputs.settings.gravity) != 0)
    differs = "simulation.gravity";
  else if (from.params_hash != hash_contact_params(inputs.params, inputs.settings))
    differs = "the materials or interactions (the contact parameters), the periodic axes, or the polyhedral "
              "shapes or simulation.common_plane_tolerance";
  else if (from.meshes_hash != hash_meshes(inputs.meshes))
    differs = "the meshes (geometry, placement, motion or material)";
  if (!differs.empty())
    throw InputError(path + ": the checkpoint was written under other physics than " + scene.source + ": " + differs +
                     " differs; a restart must continue the same run");
}

std::string engine_kind(const std::string& device, const EngineSettings& settings) {
  device::System system = device::System::Omp;
  if (device == "cpu") return "cpu";
  if (device == "gpu") {
    system = device::System::Cuda;
  } else if (device == "omp") {
    system = device::System::Omp;
  } else {  // auto
    if (!device::available(device::System::Cuda)) return "cpu";
    system = device::System::Cuda;
  }
  std::string why;
  if (!device::available(system, &why))
    throw InputError("--device " + device + ": " + why + (system == device::System::Cuda ? "; run with --device cpu (or auto)" : ""));
  if (settings.broad_phase.method == BroadPhaseMethod::Bsp)
    throw InputError("broad_phase.method: bsp runs on the host engine only (--device cpu); the device engine (--device " +
                     device + ") has grid, hgrid and auto");
  return system == device::System::Cuda ? "gpu" : "omp";
}

std::unique_ptr<Simulation> make_simulation(const std::string& device, SceneInputs in) {
  const std::string kind = engine_kind(device, in.settings);
  if (kind == "cpu")
    return std::make_unique<Engine>(std::move(in.particles), std::move(in.meshes), std::move(in.params), in.num_materials,
                                    in.settings);
  return device::make_engine(kind == "gpu" ? device::System::Cuda : device::System::Omp, std::move(in.particles),
                             std::move(in.meshes), std::move(in.params), in.num_materials, in.settings);
}

bool healthy_after_escapes(Simulation& sim, const HealthLimits& limits, bool remove_escaped, std::uint64_t& removed,
                           const std::function<void(std::size_t)>& on_removed) {
  while (!sim.check_health(limits)) {
    if (!(remove_escaped && sim.status().problem == kEscaped)) return false;
    // on_escape: remove. The particles outside leave the run; the rest continues with the same
    // bits (the engine drops them and carries every remaining contact).
    const ParticleArrays& p = sim.particles();
    std::vector<std::int64_t> outside;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (outside_domain(limits, p.x[i])) outside.push_back(p.id[i]);
    const std::size_t gone = sim.edit_particles(outside, ParticleArrays{});
    removed += gone;
    if (on_removed) on_removed(gone);
    if (gone == 0) return false;  // (cannot happen: check_health found one outside)
  }
  return true;
}

std::uint64_t steps_to_next_event(std::uint64_t now, std::uint64_t last, std::uint64_t most,
                                  const std::function<bool(std::uint64_t)>& event_at) {
  most = std::min(most, kStepsPerCall);
  std::uint64_t k = 1;
  while (k < most && now + k < last && !event_at(now + k)) ++k;
  return k;
}

int run_scene(const RunOptions& options) {
  try {
    if (options.device != "cpu" && options.device != "gpu" && options.device != "omp" && options.device != "auto")
      throw InputError("--device " + options.device + ": expected cpu, gpu, omp or auto");
    if (options.threads < 0 || options.threads > kMaxThreads)
      throw InputError("--threads " + std::to_string(options.threads) + ": must be between 1 and " +
                       std::to_string(kMaxThreads));
    if (options.threads > 0) omp_set_num_threads(options.threads);
    const SceneConfig scene = load_scene(options.scene, options.overrides);
    const double steps_needed = std::ceil(scene.simulation.end_time / scene.simulation.dt - 1e-9);
    if (!(steps_needed <= kMaxSteps))
      throw InputError(scene.source + ": simulation.end_time / simulation.dt = " + std::to_string(steps_needed) +
                       " steps, more than any run can take (" + std::to_string(kMaxSteps) + "); check both values");
    const bool restart = !options.restart.empty();
    SceneInputs inputs = build_scene_inputs(scene, !restart);
    Checkpoint from;
    if (restart) {
      from = read_checkpoint(options.restart);
      check_checkpoint_fits(options.restart, from, scene, inputs);
      if (from.step > static_cast<std::uint64_t>(steps_needed))
        throw InputError(options.restart + ": the checkpoint is at t = " + std::to_string(from.time) +
                         " s, past simulation.end_time");
      inputs.particles = from.particles;
    }
    const std::uint64_t params_hash = hash_contact_params(inputs.params, inputs.settings), meshes_hash = hash_meshes(inputs.meshes);
    const real dt = inputs.settings.dt;
    const Vec3 gravity = inputs.settings.gravity;
    // Probe ids: those given so far (0 to the next id less one; after outflow some are gone, and
    // their rows stop where they left), and with an inlet any later one (its rows start when it
    // is poured in).
    std::int64_t next_id = static_cast<std::int64_t>(inputs.particles.size());
    if (restart) next_id = std::max(next_id, from.next_id);
    for (const std::int64_t id : inputs.particles.id) next_id = std::max(next_id, id + 1);
    for (std::size_t k = 0; k < scene.output.probe_ids.size(); ++k) {
      const std::int64_t pid = scene.output.probe_ids[k];
      if (pid < 0 || (pid >= next_id && scene.inlets.empty()))
        throw InputError(scene.source + ": output.probe_ids[" + std::to_string(k) + "] = " + std::to_string(pid) +
                         ": no particle has this id (ids run from 0 to " + std::to_string(next_id - 1) + ")");
    }
    const SceneMotion motion = scene_motion(scene, inputs);
    const HealthLimits limits = health_limits(scene, inputs, motion);
    warn_about_dt(scene, inputs, motion, options.quiet);
    const std::vector<std::int32_t> inlet_shapes = inputs.inlet_shapes;
    const double reach = largest_particle_radius(inputs);  // (the coarse-graining grid's padding)
    std::unique_ptr<Simulation> sim =
        options.make_engine ? options.make_engine(std::move(inputs)) : make_simulation(options.device, std::move(inputs));
    if (restart) {
      restore_body_motions(*sim, from);
      sim->restore_state(from.contacts, from.step);
    }
    FlowController flow(scene, static_cast<std::int64_t>(sim->particles().size()), inlet_shapes);
    if (restart) restore_flow(flow, from);
    Retagger retag(scene, sim->time(), restart);
    // A restart writes beside the first run's folder by default, never over it.
    const std::string default_dir =
        folder_name(scene.name) + (restart ? "_from_step_" + std::to_string(from.step) : std::string());
    const std::string out_dir =
        options.out_dir.empty() ? (std::filesystem::path("out") / default_dir).string() : options.out_dir;
    const std::string checkpoint_path = (std::filesystem::path(out_dir) / "checkpoint.bin").string();
    RunSummary run;
    // The particles added and removed so far besides the inlets and outlets: removed for leaving
    // the domain (run.removed, from the run's start), added through the Python module (a restart
    // of a run it made).
    const std::uint64_t inserted_besides_inlets = restart ? from.inserted_besides_inlets : 0;
    if (restart) run.removed = from.removed_besides_outlets;
    const auto save_checkpoint = [&] {
      Checkpoint c = capture_checkpoint(*sim, dt, gravity, params_hash, meshes_hash);
      store_flow(flow, c);
      c.inserted_besides_inlets = inserted_besides_inlets;
      c.removed_besides_outlets = run.removed;
      write_checkpoint(checkpoint_path, c);
    };
    const double checkpoint_interval = scene.output.checkpoint_interval;
    double next_checkpoint = checkpoint_interval > 0
                                 ? checkpoint_interval * (std::floor(sim->time() / checkpoint_interval + 1e-9) + 1)
                                 : 0;
    OutputWriter out(out_dir, scene, reach);
    if (restart) {
      out.set_outflow_totals(flow.state());
      out.set_particle_flow(inserted_besides_inlets + flow.inserted(), run.removed + flow.removed());
    }
    const SignalGuard signals;
    const std::uint64_t total_steps = static_cast<std::uint64_t>(steps_needed);
    run.threads = omp_get_max_threads();
    run.backend = sim->engine_name();
    run.device = sim->device_name();
    if (!options.quiet)
      std::fprintf(stderr, "dem: %s: %zu particles, %zu mesh elements in %zu bodies, %llu steps of %g s on %s (%d threads) -> %s\n",
                   scene.name.c_str(), sim->particles().size(), sim->meshes().num_elements(),
                   sim->meshes().bodies.size(), static_cast<unsigned long long>(total_steps), scene.simulation.dt,
                   run.device.c_str(), run.threads, out_dir.c_str());
    Progress progress(options.quiet, sim->step_count(), total_steps, scene.simulation.end_time);
    double particle_steps = 0;  // summed over the steps (the count may change)
    const std::uint64_t first_step = sim->step_count(), waits_before = sim->host_waits(),
                        launches_before = sim->device_launches();
    const auto start = std::chrono::steady_clock::now();
    // The forces of the initial state: the first health check then sees its overlaps, the first
    // output its forces (the first step integrates with them: the same bits).
    retag.apply(*sim);  // (entries at time 0: the initial state's tags)
    sim->keep_contact_forces(out.wants_contact_forces());
    sim->compute_forces();
    out.write_due(*sim);
    // The health checks, with on_escape: remove applied: false when the run must stop.
    const auto healthy = [&]() -> bool {
      return healthy_after_escapes(*sim, limits, scene.domain.remove_escaped, run.removed, [&](std::size_t gone) {
        out.set_particle_flow(inserted_besides_inlets + flow.inserted(), run.removed + flow.removed());
        if (!options.quiet)
          std::fprintf(stderr, "%sdem: step %llu: removed %zu particle(s) that left the domain (%llu so far)\n",
                       isatty(2) ? "\n" : "", static_cast<unsigned long long>(sim->step_count()), gone,
                       static_cast<unsigned long long>(run.removed));
      });
    };
    healthy();  // the initial state too (a particle placed outside the domain)
    // The steps up to the next one after which anything happens between steps (an output, a
    // checkpoint, a retag, the inlets and outlets every step), in one call: a device engine queues
    // them without waiting for the device in between (Simulation::advance).
    const auto event_at = [&](std::uint64_t step) {
      const double t = static_cast<double>(step) * dt;  // (the engines' time after that step)
      return !flow.empty() || out.due_at(t) || retag.due_at(t) ||
             (checkpoint_interval > 0 && t + 0.5 * dt >= next_checkpoint);
    };
    std::uint64_t most = 1;  // steps a call may take (kCallSeconds)
    while (sim->status().ok && sim->step_count() < total_steps && !g_signal) {
      const double n = double(sim->num_particles());
      const auto call_start = std::chrono::steady_clock::now();
      const Simulation::Advanced ran =  // (each step health-checked)
          sim->advance(steps_to_next_event(sim->step_count(), total_steps, most, event_at), limits);
      const double call = std::chrono::duration<double>(std::chrono::steady_clock::now() - call_start).count();
      if (ran.steps > 0) {
        const double fit = kCallSeconds * double(ran.steps) / std::max(call, 1e-9);  // steps in kCallSeconds
        most = static_cast<std::uint64_t>(std::clamp(fit, 1.0, double(kStepsPerCall)));
      }
      particle_steps += n * double(ran.steps);
      if (!ran.healthy && !healthy()) break;  // (healthy: on_escape: remove, then the check again)
      if (!flow.empty()) {  // inlets and outlets, between steps
        const FlowEvents ev = flow.apply(*sim);
        out.record_outflow(ev);
        out.set_particle_flow(inserted_besides_inlets + flow.inserted(), run.removed + flow.removed());
      }
      if (!retag.empty()) retag.apply(*sim);
      out.write_due(*sim);
      if (checkpoint_interval > 0 && sim->time() + 0.5 * dt >= next_checkpoint) {
        save_checkpoint();
        next_checkpoint += checkpoint_interval;
      }
      progress.update(sim->step_count(), sim->time(), sim->num_particles(), particle_steps);
    }
    progress.update(sim->step_count(), sim->time(), sim->num_particles(), particle_steps, true);
    progress.finish();
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.particle_steps = particle_steps;
    run.steps = sim->step_count() - first_step;
    run.host_waits = sim->host_waits() - waits_before;
    run.device_launches = sim->device_launches() - launches_before;
    const int sig = g_signal;
    if (!sim->status().ok) {
      run.status = "stopped";
      run.reason = sim->status().message;
    } else if (sig) {
      run.status = "interrupted";
      run.reason = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig);
    }
    out.write_final(*sim);
    if (sim->status().ok && (sig || checkpoint_interval > 0)) save_checkpoint();  // to continue from
    out.write_summary(*sim, run);
    if (sig && sim->status().ok) {
      std::cerr << "\ndem: interrupted (" << run.reason << ") at step " << sim->step_count() << ", t = " << sim->time()
                << " s; output up to there is in " << out_dir << "; continue with --restart " << checkpoint_path << "\n";
      return 128 + sig;
    }
    if (!sim->status().ok) {
      std::cerr << "dem: error: " << sim->status().message << "\ndem: output up to t = " << sim->time()
                << " s is in " << out_dir << "\n";
      return 3;
    }
    if (!options.quiet)
      std::fprintf(stderr, "dem: done: %.3g s simulated in %.3g s wall (%.3g particle-steps/s); output in %s\n",
                   sim->time(), run.wall_seconds,
                   run.wall_seconds > 0 ? particle_steps / run.wall_seconds : 0.0,
                   out_dir.c_str());
    return 0;
  } catch (const InputError& e) {
    std::cerr << "dem: error: " << e.what() << "\n";
    return 2;
  } catch (const WriteError& e) {
    std::cerr << "dem: error: " << e.what() << " (the files written before are complete)\n";
    return 4;
  } catch (const std::exception& e) {
    std::cerr << "dem: error: " << e.what() << "\n";
    return 4;
  }
}

}  // namespace dem::host
