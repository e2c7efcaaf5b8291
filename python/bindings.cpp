// The Python module's native part (dem._dem): a scene loaded from a file or YAML text, an engine
// on any device, stepping with the same health checks and output as `dem run`, the state as numpy
// arrays, mesh motion, particles added and removed, checkpoints. The Python package (python/dem)
// adds the run loop with callbacks on top.
#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/integrate/central_difference.hpp"
#include "cuda/device_engine.hpp"
#include "host/app/driver.hpp"
#include "host/sim/checkpoint.hpp"
#include "host/sim/errors.hpp"
#include "host/app/output/output.hpp"
#include "host/app/scene/flow.hpp"
#include "host/app/scene/retag.hpp"
#include "host/app/scene/scene_builder.hpp"
#include "host/app/scene/placement.hpp"
#include "host/app/scene/scene_loader.hpp"

namespace py = pybind11;
using namespace dem;
using namespace dem::host;

namespace {

static_assert(sizeof(Vec3) == 3 * sizeof(real), "Vec3 must be three packed reals for the numpy views");

// Raised when the engine stops on a health check (the message names the particle and the cause).
PyObject* g_simulation_error = nullptr;

class PySimulation {
 public:
  PySimulation(const std::string& source, bool is_text, const std::vector<std::string>& overrides,
               const std::string& device, const std::string& checkpoint)
      : device_(device) {
    scene_ = is_text ? load_scene_from_string(source, "<dict>", overrides) : load_scene(source, overrides);
    const bool restart = !checkpoint.empty();
    SceneInputs inputs = build_scene_inputs(scene_, !restart);
    Checkpoint from;
    if (restart) {
      from = read_checkpoint(checkpoint);
      check_checkpoint_fits(checkpoint, from, scene_, inputs);
      inputs.particles = from.particles;
    }
    params_hash_ = hash_contact_params(inputs.params, inputs.settings);
    meshes_hash_ = hash_meshes(inputs.meshes);
    limits_ = scene_health_limits(scene_, inputs);
    material_names_ = inputs.material_names;
    std::int64_t next_id = 0;
    for (const auto& p : inputs.particles.id) next_id = std::max(next_id, p + 1);
    const std::vector<std::int32_t> inlet_shapes = inputs.inlet_shapes;
    reach_ = largest_particle_radius(inputs);
    sim_ = make_simulation(device_, std::move(inputs));
    if (restart) {
      restore_body_motions(*sim_, from);
      sim_->restore_state(from.contacts, from.step);
    }
    flow_ = std::make_unique<FlowController>(scene_, next_id, inlet_shapes);
    if (restart) {
      restore_flow(*flow_, from);
      inserted_ = from.inserted_besides_inlets;  // (the module's; under dem run none)
      escaped_ = from.removed_besides_outlets;   // (for leaving the domain or by the module: one count)
    }
    retag_ = std::make_unique<Retagger>(scene_, sim_->time(), restart);
    retag_->apply(*sim_);  // (entries at time 0: the initial state's tags)
    // every contact's force at the times the forces are read (coarse_grained_fields' contact stress)
    sim_->keep_contact_forces(true);
    sim_->compute_forces();  // the initial state's forces: the first health check sees its overlaps
    check();
  }

  // ---- stepping
  void step(std::uint64_t n) {
    bool failed = false;
    std::string message;
    {
      py::gil_scoped_release release;
      while (waiting_.load() > 0) std::this_thread::yield();  // a call that waits goes first
      const std::lock_guard<std::mutex> busy(busy_);            // (let go before the GIL is taken back)
      // as `dem run` steps: up to the next step after which anything happens between steps, in one
      // Simulation::advance (a device engine queues them without waiting for the device)
      const real dt = real(scene_.simulation.dt);  // (EngineSettings::dt: the engines' time is step * dt)
      const auto event_at = [&](std::uint64_t step) {
        const double t = static_cast<double>(step) * dt;
        return !flow_->empty() || (out_ && out_->due_at(t)) || retag_->due_at(t);
      };
      for (std::uint64_t k = 0; k < n && ok_;) {
        const std::uint64_t now = sim_->step_count();
        const Simulation::Advanced ran =
            sim_->advance(steps_to_next_event(now, now + (n - k), kStepsPerCall, event_at), limits_);
        k += ran.steps;
        if (!ran.healthy &&
            !healthy_after_escapes(*sim_, limits_, scene_.domain.remove_escaped, escaped_, [this](std::size_t) {
              if (out_) out_->set_particle_flow(inserted(), removed());
            }))
          ok_ = false;
        if (ok_ && !flow_->empty()) {  // the scene's inlets and outlets
          const FlowEvents ev = flow_->apply(*sim_);
          if (out_) {
            out_->record_outflow(ev);
            out_->set_particle_flow(inserted(), removed());
          }
        }
        if (ok_ && !retag_->empty()) retag_->apply(*sim_);
        if (ok_ && out_) out_->write_due(*sim_);
      }
      failed = !(sim_->status().ok && ok_);  // (read here: another thread may step once this lets go)
      if (failed) {
        ok_ = false;
        message = sim_->status().message;
      }
    }
    if (failed) raise(message);
  }
  // Every other entry point holds this lock for its whole call, so that it never sees a step half
  // done: a step() running in another Python thread (which releases the GIL while it steps) is
  // waited for without the GIL, and the next step() lets the waiting call go first (a thread
  // calling step() back to back would otherwise starve it: std::mutex is not fair).
  std::unique_lock<std::mutex> hold() const {
    std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
    if (!lock) {
      struct Waiting {
        std::atomic<int>& n;
        explicit Waiting(std::atomic<int>& count) : n(count) { ++n; }
        ~Waiting() { --n; }
      } waiting(waiting_);
      py::gil_scoped_release release;  // (no thread waits for the lock while it holds the GIL)
      lock.lock();
    }
    return lock;
  }
  std::uint64_t steps_to(double t) const {  // steps from now to reach simulated time t
    const double steps = std::ceil(t / scene_.simulation.dt - 1e-9);
    return steps > double(sim_->step_count()) ? static_cast<std::uint64_t>(steps) - sim_->step_count() : 0;
  }

  double largest_radius_now() const {  // (add_particles may bring larger ones than the scene's)
    double r = 0;
    for (const real ri : sim_->particles().radius) r = std::max(r, double(ri));
    return r;
  }

  // ---- output (the files `dem run` writes)
  void open_output(const std::string& dir) {
    out_ = std::make_unique<OutputWriter>(dir, scene_, std::max(reach_, largest_radius_now()));
    out_->set_particle_flow(inserted(), removed());
    out_->set_outflow_totals(flow_->state());
    out_->write_due(*sim_);
    wall_start_ = std::chrono::steady_clock::now();
  }
  void close_output() {
    if (!out_) return;
    out_->write_final(*sim_);
    RunSummary run;
    run.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start_).count();
    run.backend = sim_->engine_name();
    run.device = sim_->device_name();
    run.removed = removed_ + escaped_;  // by the module and for leaving the domain (the outlets': summary.json's outlets)
    if (!sim_->status().ok) {
      run.status = "stopped";
      run.reason = sim_->status().message;
    }
    out_->write_summary(*sim_, run);
    out_.reset();
  }

  // ---- state
  // Arrays built with explicit strides everywhere (numpy computes nothing from an item size).
  py::array vec3_array(const std::vector<Vec3>& v, py::handle owner, bool view) const {
    const std::size_t n = v.size();
    const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n), 3};
    const std::vector<py::ssize_t> strides{static_cast<py::ssize_t>(sizeof(Vec3)), static_cast<py::ssize_t>(sizeof(real))};
    if (view) {
      py::array a(py::dtype::of<real>(), shape, strides, n ? &v[0].x : nullptr, owner);
      a.attr("setflags")(py::arg("write") = false);
      return a;
    }
    py::array a(py::dtype::of<real>(), shape, strides);
    if (n) std::memcpy(a.mutable_data(), &v[0].x, n * sizeof(Vec3));
    return a;
  }
  template <class T>
  py::array scalar_array(const std::vector<T>& v, py::handle owner, bool view) const {
    const std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(v.size())}, strides{static_cast<py::ssize_t>(sizeof(T))};
    if (view) {
      py::array a(py::dtype::of<T>(), shape, strides, v.data(), owner);
      a.attr("setflags")(py::arg("write") = false);
      return a;
    }
    py::array a(py::dtype::of<T>(), shape, strides);
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    return a;
  }
  bool on_host() const { return sim_->engine_name() == "host-openmp"; }
  const ParticleArrays& particles_at_time() {
    sim_->compute_forces();
    return sim_->particles();
  }
  std::pair<std::vector<Vec3>, std::vector<Vec3>> velocities_at_time() {
    sim_->compute_forces();
    std::vector<Vec3> w;
    std::vector<Vec3> v = host::velocities_at_time(*sim_, scene_, w);
    return {std::move(v), std::move(w)};
  }
  // One sample of the coarse-grained fields now, with the scene's coarse_graining: completed or
  // changed by the arguments (checked by the loader's rule).
  py::dict coarse_grained_fields(std::optional<double> width, std::optional<double> cell_size,
                                 std::optional<std::string> kernel, std::optional<std::vector<double>> lo,
                                 std::optional<std::vector<double>> hi) {
    CoarseGrainingSpec spec = scene_.coarse_graining;
    if (width) spec.width = *width;
    if (cell_size) spec.cell_size = *cell_size;
    if (kernel) {
      if (*kernel != "lucy" && *kernel != "gaussian") throw py::value_error("kernel must be lucy or gaussian (got " + *kernel + ")");
      spec.kernel = *kernel == "lucy" ? 0 : 1;
    }
    if (lo && hi) {
      if (lo->size() != 3 || hi->size() != 3) throw py::value_error("region must be [[x, y, z], [x, y, z]]");
      for (int k = 0; k < 3; ++k) spec.min[k] = (*lo)[k], spec.max[k] = (*hi)[k];
      spec.region_given = true;
    }
    if (!(spec.cell_size > 0))
      throw py::value_error("coarse_grained_fields needs cell_size > 0 (the scene's coarse_graining: or the arguments)");
    if (const std::string why = coarse_graining_width_conflict(spec); !why.empty()) throw py::value_error("width " + why);
    if (!spec.region_given && !scene_.domain.given)
      throw py::value_error("coarse_grained_fields needs region=[min, max] when the scene has no domain");
    if (!spec.region_given) spec.min = scene_.domain.min, spec.max = scene_.domain.max;
    for (int k = 0; k < 3; ++k)
      if (!(spec.max[k] > spec.min[k])) throw py::value_error("region: max must be > min on every axis");
    spec.per_tag = true;
    spec.contact_stress = true;
    const auto vw = velocities_at_time();
    const ParticleArrays& p = sim_->particles();
    CoarseGrainer cg(spec, periodic_box(scene_), largest_radius_now());
    ContactForces contacts;
    const bool have_contacts = sim_->export_contact_forces(contacts);
    cg.sample(p, vw.first, sim_->shapes(), have_contacts ? &contacts : nullptr);
    const CgFields f = cg.average();
    const auto field = [&](const std::vector<double>& v, int components) {
      std::vector<py::ssize_t> shape{f.grid.n[2], f.grid.n[1], f.grid.n[0]};
      if (components > 1) shape.push_back(components == 9 ? 3 : components);
      if (components == 9) shape.push_back(3);
      py::array_t<double> a(shape);
      std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(double));
      return a;
    };
    py::dict out;
    out["solid_fraction"] = field(f.solid_fraction, 1);
    out["density"] = field(f.density, 1);
    out["velocity"] = field(f.velocity, 3);
    out["kinetic_stress"] = field(f.kinetic_stress, 9);
    if (have_contacts) {  // (not at a checkpoint's time: its forces were evaluated before the restart)
      out["contact_stress"] = field(f.contact_stress, 9);
      out["stress"] = field(f.stress, 9);
    }
    out["granular_temperature"] = field(f.temperature, 1);
    for (const auto& [tag, phi] : f.tag_solid_fraction) out[py::str("solid_fraction_tag" + std::to_string(tag))] = field(phi, 1);
    out["origin"] = py::make_tuple(f.grid.lo[0], f.grid.lo[1], f.grid.lo[2]);
    out["spacing"] = py::make_tuple(f.grid.h[0], f.grid.h[1], f.grid.h[2]);
    return out;
  }
  Vec3 gravity() const {
    return Vec3{real(scene_.simulation.gravity[0]), real(scene_.simulation.gravity[1]), real(scene_.simulation.gravity[2])};
  }
  std::vector<std::string> body_names() const {
    std::vector<std::string> names;
    for (const MeshBody& b : sim_->meshes().bodies) names.push_back(b.name);
    return names;
  }
  // A mesh body named or numbered from Python, read before the lock is taken (a conversion may run
  // Python code, which may call back into this simulation).
  struct BodyKey {
    bool by_name;
    std::string name;
    long long index;
  };
  static BodyKey body_key(const py::object& body) {
    if (py::isinstance<py::str>(body)) return BodyKey{true, body.cast<std::string>(), 0};
    return BodyKey{false, {}, body.cast<long long>()};
  }
  std::size_t body_index(const BodyKey& key) const {
    const std::vector<std::string> names = body_names();
    if (key.by_name) {
      const std::string& name = key.name;
      for (std::size_t b = 0; b < names.size(); ++b)
        if (names[b] == name) return b;
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      throw py::key_error("no mesh body named '" + name + "' (the scene has: " + (list.empty() ? "none" : list) + ")");
    }
    const long long b = key.index;
    if (b < 0 || static_cast<std::size_t>(b) >= names.size())
      throw py::index_error("mesh body " + std::to_string(b) + " out of range (the scene has " +
                            std::to_string(names.size()) + ")");
    return static_cast<std::size_t>(b);
  }
  py::array body_loads(bool torque) {
    sim_->compute_forces();
    return vec3_array(torque ? sim_->body_torque() : sim_->body_force(), py::none(), false);
  }

  // ---- editing
  void set_body_motion(const BodyKey& body, Vec3 v, Vec3 w) { sim_->change_body_motion(body_index(body), v, w); }
  std::vector<std::int64_t> add_particles(const std::vector<Vec3>& x, const std::vector<real>& r,
                                          const std::vector<Vec3>& v, const std::vector<Vec3>& w,
                                          const std::string& material) {
    const std::size_t k = x.size();
    if (r.size() != k || v.size() != k || w.size() != k)
      throw py::value_error("add_particles: positions, radii, velocities and angular velocities differ in length");
    std::size_t m = material_names_.size();
    for (std::size_t j = 0; j < material_names_.size(); ++j)
      if (material_names_[j] == material) m = j;
    if (m == material_names_.size()) throw py::key_error("add_particles: no material named '" + material + "'");
    const double density = scene_.materials[m].density;
    if (!(density > 0)) throw py::value_error("add_particles: material '" + material + "' has no density (a wall material)");
    const ParticleArrays& p = sim_->particles();
    const PeriodicBox pb = periodic_box(scene_);  // distances through periodic faces too
    // No overlaps with the particles there or among the new ones (a grid of the new spheres'
    // neighbourhoods would be faster; this is O(n k) and meant for tens to thousands at a time).
    for (std::size_t a = 0; a < k; ++a) {
      if (!(r[a] > 0) || !is_finite(x[a]) || !is_finite(v[a]) || !is_finite(w[a]))
        throw py::value_error("add_particles: particle " + std::to_string(a) + " has a non-positive radius or a non-finite value");
      for (std::size_t i = 0; i < p.size(); ++i)
        if (norm(nearest_image(pb, p.x[i] - wrap_far(pb, x[a]))) < p.radius[i] + r[a])
          throw py::value_error("add_particles: new particle " + std::to_string(a) + " overlaps particle " +
                                std::to_string(p.id[i]));
      for (std::size_t b = 0; b < a; ++b)
        if (norm(nearest_image(pb, wrap_far(pb, x[b]) - wrap_far(pb, x[a]))) < r[b] + r[a])
          throw py::value_error("add_particles: new particles " + std::to_string(b) + " and " + std::to_string(a) + " overlap");
    }
    ParticleArrays more;
    std::vector<std::int64_t> ids;
    const std::int64_t first = flow_->allocate_ids(k);
    for (std::size_t a = 0; a < k; ++a) {
      ids.push_back(first + static_cast<std::int64_t>(a));
      more.push_back(ids.back(), x[a], v[a], w[a], r[a], real(density), static_cast<std::int32_t>(m), false);
      more.born.back() = sim_->time();
    }
    sim_->edit_particles({}, more);
    inserted_ += k;
    if (out_) out_->set_particle_flow(inserted(), removed());
    return ids;
  }
  std::size_t remove_particles(const std::vector<std::int64_t>& ids) {
    const std::size_t gone = sim_->edit_particles(ids, ParticleArrays{});
    removed_ += gone;
    if (out_) out_->set_particle_flow(inserted(), removed());
    return gone;
  }

  void write_checkpoint(const std::string& path) const {
    Checkpoint c = capture_checkpoint(*sim_, scene_.simulation.dt, gravity(), params_hash_, meshes_hash_);
    store_flow(*flow_, c);
    c.inserted_besides_inlets = inserted_;
    c.removed_besides_outlets = removed_ + escaped_;
    host::write_checkpoint(path, c);
  }

  void check() {  // (the constructor's: no other thread has the simulation yet)
    if (sim_->status().ok && ok_) return;
    ok_ = false;
    raise(sim_->status().message);
  }
  [[noreturn]] static void raise(const std::string& message) {
    PyErr_SetString(g_simulation_error, message.c_str());
    throw py::error_already_set();
  }

  SceneConfig scene_;
  std::string device_;
  std::unique_ptr<Simulation> sim_;
  HealthLimits limits_{};
  std::vector<std::string> material_names_;
  std::uint64_t params_hash_ = 0, meshes_hash_ = 0;
  std::unique_ptr<FlowController> flow_;        // the scene's inlets and outlets; owns the next id
  std::unique_ptr<Retagger> retag_;             // the scene's retag: entries
  std::uint64_t inserted_ = 0, removed_ = 0;  // particles added and removed through the module
  std::uint64_t escaped_ = 0;                  // removed for leaving the domain (on_escape: remove); after a
                                               // restart also those removed by the module before it
  std::uint64_t inserted() const { return inserted_ + flow_->inserted(); }
  std::uint64_t removed() const { return removed_ + escaped_ + flow_->removed(); }
  bool ok_ = true;
  mutable std::mutex busy_;              // held by step() while it steps, and by every other call (hold)
  mutable std::atomic<int> waiting_{0};  // calls waiting for busy_
  std::unique_ptr<OutputWriter> out_;
  double reach_ = 0;  // m: the run's largest particle radius (largest_particle_radius)
  std::chrono::steady_clock::time_point wall_start_;
};

Vec3 to_vec3(const py::handle& h) {
  const auto a = py::array_t<real, py::array::c_style | py::array::forcecast>::ensure(h);
  if (!a || a.size() != 3) throw py::value_error("expected 3 numbers (x, y, z)");
  return Vec3{a.at(0), a.at(1), a.at(2)};
}
std::vector<Vec3> to_vec3s(const py::handle& h, std::size_t n, const char* what) {
  if (h.is_none()) return std::vector<Vec3>(n, Vec3{0, 0, 0});
  const auto a = py::array_t<real, py::array::c_style | py::array::forcecast>::ensure(h);
  if (!a || a.ndim() != 2 || a.shape(1) != 3)
    throw py::value_error(std::string(what) + " must be an array of shape (k, 3)");
  std::vector<Vec3> out(static_cast<std::size_t>(a.shape(0)));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = Vec3{a.at(i, 0), a.at(i, 1), a.at(i, 2)};
  return out;
}

}  // namespace

PYBIND11_MODULE(_dem, m) {
  m.doc() = "Native part of the dem package: see help(dem).";
  static py::exception<std::runtime_error> simulation_error(m, "SimulationError");
  g_simulation_error = simulation_error.ptr();
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  m.def("set_threads", [](int n) { omp_set_num_threads(n); }, "OpenMP threads for the engines (as OMP_NUM_THREADS)");
  m.def("devices_available", [] {
    std::vector<std::string> d{"cpu"};
    if (device::available(device::System::Omp)) d.push_back("omp");
    if (device::available(device::System::Cuda)) d.push_back("gpu");
    return d;
  });

  py::class_<PySimulation>(m, "_Simulation")
      .def(py::init<const std::string&, bool, const std::vector<std::string>&, const std::string&, const std::string&>(),
           py::arg("source"), py::arg("is_text"), py::arg("overrides"), py::arg("device"), py::arg("checkpoint"))
      .def("step", &PySimulation::step, py::arg("n") = 1)
      .def("steps_to",
           [](const PySimulation& s, double t) {
             const auto held = s.hold();
             return s.steps_to(t);
           })
      .def("open_output",
           [](PySimulation& s, const std::string& dir) {
             const auto held = s.hold();
             s.open_output(dir);
           })
      .def("close_output",
           [](PySimulation& s) {
             const auto held = s.hold();
             s.close_output();
           })
      .def_property_readonly("time", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.sim_->time();
      })
      .def_property_readonly("step_count", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.sim_->step_count();
      })
      .def_property_readonly("dt", [](const PySimulation& s) { return s.scene_.simulation.dt; })
      .def_property_readonly("end_time", [](const PySimulation& s) { return s.scene_.simulation.end_time; })
      .def_property_readonly("name", [](const PySimulation& s) { return s.scene_.name; })
      .def_property_readonly("engine", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.sim_->engine_name();
      })
      .def_property_readonly("device", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.sim_->device_name();
      })
      .def_property_readonly("num_particles", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.sim_->num_particles();
      })
      .def_property_readonly("body_names",
                             [](const PySimulation& s) {
                               const auto held = s.hold();
                               return s.body_names();
                             })
      .def_property_readonly("material_names", [](const PySimulation& s) { return s.material_names_; })
      .def_property_readonly("removed_particles", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.removed();
      })
      .def_property_readonly("inserted_particles", [](const PySimulation& s) {
        const auto held = s.hold();
        return s.inserted();
      })
      .def("ids", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.scalar_array(s.sim_->particles().id, self, s.on_host());
      })
      .def("positions", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.vec3_array(s.sim_->particles().x, self, s.on_host());
      })
      .def("radii", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.scalar_array(s.sim_->particles().radius, self, s.on_host());
      })
      .def("materials", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.scalar_array(s.sim_->particles().material, self, s.on_host());
      })
      .def("orientations", [](PySimulation& s) {  // (n, 4): w, x, y, z, body frame to world
        const auto held = s.hold();
        const std::vector<Quat>& q = s.sim_->particles().q;
        static_assert(sizeof(Quat) == 4 * sizeof(real));
        py::array a(py::dtype::of<real>(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(q.size()), 4});
        if (!q.empty()) std::memcpy(a.mutable_data(), &q[0].w, q.size() * sizeof(Quat));
        return a;
      })
      .def("coarse_grained_fields",
           [](PySimulation& s, std::optional<double> width, std::optional<double> cell_size,
              std::optional<std::string> kernel, std::optional<std::vector<double>> lo,
              std::optional<std::vector<double>> hi) {
             const auto held = s.hold();
             return s.coarse_grained_fields(width, cell_size, kernel, lo, hi);
           })
      .def("tags", [](py::object self) {  // each particle's tag (scene keys tag: and retag:)
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.scalar_array(s.sim_->particles().tag, self, s.on_host());
      })
      .def("set_tags", [](PySimulation& s, const py::handle& tags) {  // in the order of ids(), between steps
        const py::array raw = py::array::ensure(tags);
        if (!raw || raw.ndim() != 1 || (raw.size() > 0 && raw.dtype().kind() != 'i' && raw.dtype().kind() != 'u'))
          throw py::value_error("tags must be a 1-d array of integers");
        const auto a = py::array_t<std::int32_t, py::array::c_style | py::array::forcecast>::ensure(raw);
        const std::vector<std::int32_t> v(a.data(), a.data() + a.size());
        for (std::int32_t t : v)
          if (t < 0) throw py::value_error("tags must be >= 0 (got " + std::to_string(t) + ")");
        const auto held = s.hold();
        if (v.size() != s.sim_->num_particles())
          throw py::value_error("set_tags: " + std::to_string(v.size()) + " tags for " +
                                std::to_string(s.sim_->num_particles()) + " particles");
        s.sim_->set_tags(v);
      })
      .def("shape_indices", [](py::object self) {  // -1: a sphere; else an index into shapes()
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.scalar_array(s.sim_->particles().shape, self, s.on_host());
      })
      .def("shapes", [](PySimulation& s) {
        // Each polyhedral shape in its principal frame at volume-equivalent diameter 1: vertices
        // (V, 3), faces (lists of vertex indices, counter-clockwise seen from outside), the
        // principal moments of inertia over mass, the bounding radius.
        const auto held = s.hold();
        py::list out;
        for (const PolyShape& shape : s.sim_->shapes()) {
          py::array v(py::dtype::of<real>(), std::vector<py::ssize_t>{shape.num_vertices, 3});
          std::memcpy(v.mutable_data(), &shape.vertex[0].x, static_cast<std::size_t>(shape.num_vertices) * sizeof(Vec3));
          py::list faces;
          for (int f = 0; f < shape.num_faces; ++f) {
            py::list loop;
            for (int k = shape.face_start[f]; k < shape.face_start[f + 1]; ++k) loop.append(int(shape.face_vertex[k]));
            faces.append(loop);
          }
          py::dict d;
          d["vertices"] = v;
          d["faces"] = faces;
          d["unit_inertia"] = py::make_tuple(shape.unit_inertia.x, shape.unit_inertia.y, shape.unit_inertia.z);
          d["bounding_radius"] = shape.bounding_radius;
          out.append(d);
        }
        return out;
      })
      .def("half_step_velocities", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.vec3_array(s.sim_->particles().v, self, s.on_host());
      })
      .def("forces", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.vec3_array(s.particles_at_time().force, self, s.on_host());
      })
      .def("torques", [](py::object self) {
        auto& s = self.cast<PySimulation&>();
        const auto held = s.hold();
        return s.vec3_array(s.particles_at_time().torque, self, s.on_host());
      })
      .def("velocities", [](PySimulation& s) {
        const auto held = s.hold();
        const auto vw = s.velocities_at_time();
        return py::make_tuple(s.vec3_array(vw.first, py::none(), false), s.vec3_array(vw.second, py::none(), false));
      })
      .def("body_forces", [](PySimulation& s) {
        const auto held = s.hold();
        return s.body_loads(false);
      })
      .def("body_torques", [](PySimulation& s) {
        const auto held = s.hold();
        return s.body_loads(true);
      })
      .def("contact_counts", [](PySimulation& s) {
        const auto held = s.hold();
        s.sim_->compute_forces();
        return py::make_tuple(s.sim_->touching_pairs(), s.sim_->mesh_contacts());
      })
      .def("max_overlap", [](PySimulation& s) {
        const auto held = s.hold();
        s.sim_->compute_forces();
        return s.sim_->max_overlap();
      })
      .def("body_center", [](PySimulation& s, const py::object& body) {
        const PySimulation::BodyKey key = PySimulation::body_key(body);
        Vec3 c;
        {
          const auto held = s.hold();
          s.sim_->compute_forces();
          c = s.sim_->meshes().center(static_cast<index_t>(s.body_index(key)));
        }
        return py::make_tuple(c.x, c.y, c.z);
      })
      .def("set_body_motion", [](PySimulation& s, const py::object& body, const py::handle& v, const py::handle& w) {
        const PySimulation::BodyKey key = PySimulation::body_key(body);
        const Vec3 velocity = to_vec3(v), spin = to_vec3(w);
        const auto held = s.hold();
        s.set_body_motion(key, velocity, spin);
      })
      .def("body_motion", [](PySimulation& s, const py::object& body) {
        const PySimulation::BodyKey key = PySimulation::body_key(body);
        Vec3 v, w;
        {
          const auto held = s.hold();
          const MeshBody& b = s.sim_->meshes().bodies[s.body_index(key)];
          v = b.velocity;
          w = b.angular_velocity;
        }
        return py::make_tuple(py::make_tuple(v.x, v.y, v.z), py::make_tuple(w.x, w.y, w.z));
      })
      .def("add_particles",
           [](PySimulation& s, const py::handle& x, const py::handle& r, const py::handle& v, const py::handle& w,
              const std::string& material) {
             // (the arrays converted before the lock: a conversion may run Python code)
             const std::vector<Vec3> xs = to_vec3s(x, 0, "positions");
             const auto ra = py::array_t<real, py::array::c_style | py::array::forcecast>::ensure(r);
             if (!ra || ra.ndim() != 1) throw py::value_error("radii must be a 1-d array");
             const std::vector<real> rs(ra.data(), ra.data() + ra.size());
             const std::vector<Vec3> vs = to_vec3s(v, xs.size(), "velocities");
             const std::vector<Vec3> ws = to_vec3s(w, xs.size(), "angular_velocities");
             const auto held = s.hold();
             return s.add_particles(xs, rs, vs, ws, material);
           })
      .def("remove_particles",
           [](PySimulation& s, const std::vector<std::int64_t>& ids) {
             const auto held = s.hold();
             return s.remove_particles(ids);
           })
      .def("write_checkpoint",
           [](const PySimulation& s, const std::string& path) {
             const auto held = s.hold();
             s.write_checkpoint(path);
           })
      .def("stats", [](PySimulation& s) {
        const auto held = s.hold();
        const ContactStats& c = s.sim_->stats();
        py::dict d;
        d["steps"] = c.steps;
        d["broad_phase_builds"] = c.broad_phase_builds;
        d["pair_candidates"] = c.pair_candidates;
        d["pair_contacts"] = c.pair_contacts;
        d["fe_contact"] = c.fe_contact;
        d["valid_entities"] = c.valid_entities;
        d["planes_kept"] = c.planes_kept;
        d["planes_approximated"] = c.planes_approximated;
        d["plane_searches"] = c.plane_searches;
        d["plane_iterations"] = c.plane_iterations;
        d["plane_iterations_max"] = c.plane_iterations_max;
        d["bytes_per_particle"] = s.sim_->bytes_per_particle();
        return d;
      });
}
