// Run output for ParaView and scripts, written as the run goes so that nothing already written is
// lost when a run stops early: particle and mesh snapshots (.vtu + .pvd), probes.csv, bodies.csv,
// diagnostics.csv, outlets.csv, residence.csv, mixing.csv, coarse-grained fields (.vti + .pvd),
// and summary.json at the end. A write that fails (a full disk)
// throws WriteError and leaves every file as it was after its last complete write: the CSVs end
// with the last probe time that went into all of them, whole rows only; summary.json and the
// snapshots are written to a .tmp and renamed, and a .tmp whose write failed is removed.
#pragma once
#include <cstdint>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "host/sim/simulation.hpp"
#include "host/sim/errors.hpp"
#include "host/app/io/vtk_writer.hpp"
#include "host/app/output/coarse_graining.hpp"
#include "host/app/output/mixing.hpp"
#include "host/app/scene/flow.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

struct RunSummary {
  double wall_seconds = 0;
  int threads = 1;
  std::string backend = "host-openmp";  // the engine that ran (Simulation::engine_name)
  std::string device = "cpu";
  std::string status = "completed";  // completed | stopped (the engine found a problem) | interrupted
  std::string reason;                 // why it stopped or was interrupted ("" when completed)
  std::uint64_t removed = 0;          // particles removed for leaving the domain (on_escape: remove)
  double particle_steps = -1;         // particles summed over the steps run (-1: particles x steps)
  std::uint64_t steps = 0;            // steps run (a restarted run counts its own)
  std::uint64_t host_waits = 0;       // the host's waits for a device engine over them (Simulation::host_waits)
  std::uint64_t device_launches = 0;  // the algorithms a device engine ran over them (Simulation::device_launches)
};

// The particles' velocities and spins at the engine's time (the scheme carries them half a step
// back): core velocities_at_step_time with the forces of the current time (call compute_forces
// first). Shared by the output files and the Python module.
std::vector<Vec3> velocities_at_time(const Simulation& engine, const SceneConfig& scene, std::vector<Vec3>& w);

// A CSV file written by blocks of whole rows: a block goes in by write(2) calls with nothing held
// back in a stream buffer or, when a write fails (a full disk, a file size limit, after part of the
// block went in), the file is cut back to its length before the block and WriteError is thrown
// naming the file. So the file always ends with a complete row.
class RowFile {
 public:
  RowFile() = default;
  RowFile(const RowFile&) = delete;
  RowFile& operator=(const RowFile&) = delete;
  ~RowFile();
  // Creates the file, or empties it; throws std::runtime_error naming the path if it cannot.
  void open(const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  // Bytes of complete rows written so far.
  std::uint64_t length() const { return length_; }
  // Writes `block` (whole rows, each ending in '\n') at the end; on failure cuts the file back
  // to length() and throws WriteError "cannot write '<path>': <why>".
  void append(const std::string& block);
  // Cuts the file back to `length` bytes: rows that went in while another file's did not.
  void truncate(std::uint64_t length);

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t length_ = 0;
};

class OutputWriter {
 public:
  // Creates dir (and parents); throws std::runtime_error naming the path if it cannot.
  // particle_reach: the run's largest particle radius (m; EngineSettings::load_radius), which the
  // coarse-graining grid is padded by for the contact stress.
  OutputWriter(std::string dir, const SceneConfig& scene, double particle_reach);
  // Whether the output needs each contact's force (the coarse-grained contact stress): the caller
  // sets the engine's Simulation::keep_contact_forces by it before the first compute_forces.
  bool wants_contact_forces() const { return fields_ && scene_.coarse_graining.contact_stress; }
  // Writes whatever is due at the engine's current time (snapshots, probe rows). Call after each step.
  // Before writing, the engine's forces, body loads and mesh pose are brought to the current time
  // (Simulation::compute_forces, which leaves the trajectory's bits unchanged), so every field of a
  // snapshot or a probe row belongs to the time it is labelled with.
  void write_due(Simulation& engine);
  // Whether write_due would write anything at time t (the driver runs the steps between in one go).
  bool due_at(double t) const;
  // Writes the current state unconditionally (at the end, or before stopping on an error).
  void write_final(Simulation& engine);
  void write_summary(const Simulation& engine, const RunSummary& run);
  const std::string& dir() const { return dir_; }
  // The scene's outlets (outlets.csv, per probe interval: the particles and mass each removed;
  // residence.csv: each particle removed), and what they removed since the last call.
  void record_outflow(const FlowEvents& ev);
  // The totals so far of a run continued from a checkpoint (summary.json reports run totals).
  void set_outflow_totals(const FlowState& s) {
    outlet_total_ = s.removed;
    outlet_total_mass_ = s.removed_mass;
    residence_sum_ = s.residence_sum;
    residence_sum2_ = s.residence_sum2;
  }
  // Particles added to and removed from the run so far (diagnostics.csv counts them).
  void set_particle_flow(std::uint64_t inserted, std::uint64_t removed) {
    inserted_ = inserted;
    removed_ = removed;
  }

 private:
  void snapshot(const Simulation& engine);
  void probes(Simulation& engine);  // (the mixing indices gather on the engine's device)
  void sample_fields(Simulation& engine);
  void write_fields(double t);  // fields_NNNNNN.vti: the samples' averages since the last one

  std::string dir_;
  const SceneConfig& scene_;
  double next_snapshot_ = 0, next_probe_ = 0;
  int snapshot_index_ = 0;
  double last_snapshot_time_ = -1, last_probe_time_ = -1;
  std::unique_ptr<PvdWriter> particle_pvd_, mesh_pvd_, polyhedra_pvd_, fields_pvd_;
  std::unique_ptr<CoarseGrainer> fields_;  // coarse_graining:
  double next_field_sample_ = 0, next_fields_ = 0, last_field_sample_time_ = -1, last_fields_time_ = -1;
  int fields_index_ = 0;
  RowFile probes_csv_, bodies_csv_, diagnostics_csv_, outlets_csv_, mixing_csv_, residence_csv_;
  std::vector<Residence> residences_;  // removed since the last row (residence.csv)
  std::vector<double> residence_sum_, residence_sum2_;  // per outlet, the flow's run totals (s, s^2)
  MixingIndices last_mixing_;  // mixing.csv's last rows (summary.json repeats them)
  double last_mixing_t_ = -1;
  double mixing_seconds_ = 0;  // s spent on the mixing indices (export included)
  double fields_seconds_ = 0;  // s spent on the coarse-grained fields (samples and files)
  std::vector<std::uint64_t> outlet_count_, outlet_total_;  // since the last row, and in all
  std::vector<double> outlet_mass_, outlet_total_mass_;     // kg
  std::uint64_t inserted_ = 0, removed_ = 0;
  // The run-wide values of the last diagnostics row (summary.json repeats them).
  struct Diagnostics {
    double t = 0;
    std::size_t particles = 0;
    double kinetic_translational = 0, kinetic_rotational = 0;  // J
    double mean_speed = 0, max_speed = 0;                       // m/s
    std::size_t touching_pairs = 0, mesh_contacts = 0;
    double coordination = 0;  // sphere-sphere contacts per particle, 2 pairs / n
    double max_overlap = 0;   // of the smaller radius
    bool written = false;
  } last_;
  Diagnostics diagnostics(const Simulation& engine, const std::vector<Vec3>& v, const std::vector<Vec3>& w) const;
};

}  // namespace dem::host
