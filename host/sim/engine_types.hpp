// The state and reports every engine shares: particle arrays, mesh bodies, settings, statistics,
// phase times and status. Plain host types: the host engine, the device engine (which copies
// these in and out) and the output all use them; none depends on a concrete engine.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/phases.hpp"
#include "core/engine/views.hpp"
#include "core/geometry/polygon.hpp"

namespace dem::host {

// Loops over fewer items than this run on one thread: below it, waking a thread team costs more
// than the work (and small scenes stay fast when several test processes share the cores).
constexpr std::size_t kParallelMin = 256;

// Particle state, structure of arrays, one std::vector per field of DEM_PARTICLE_FIELDS
// (core/engine/views.hpp). Everything a restart needs is in here or in an engine's contact arrays
// (plain arrays that can be written out as they are).
struct ParticleArrays {
#define DEM_HOST_FIELD(T, name) std::vector<T> name;
  DEM_PARTICLE_FIELDS(DEM_HOST_FIELD)
#undef DEM_HOST_FIELD

  std::size_t size() const { return id.size(); }
  void resize(std::size_t n);
  void push_back(std::int64_t pid, Vec3 pos, Vec3 vel, Vec3 ang, real r, real density, std::int32_t mat,
                 bool fixed_velocity);
  // A polyhedron of shape s (EngineSettings::shapes[shape_index]) and size (volume-equivalent
  // diameter, m): mass density * pi size^3 / 6, radius its bounding sphere's, inv_inertia 1 / (m
  // size^2) (core/engine/polyhedron_phases.hpp).
  void push_polyhedron(std::int64_t pid, Vec3 pos, Quat orientation, Vec3 vel, Vec3 ang, real size,
                       std::int32_t shape_index, const PolyShape& s, real density, std::int32_t mat, bool fixed_velocity);
  ParticleView view();
};

// Particle i's principal moments of inertia (kg m^2) when it is a polyhedron (shape[i] >= 0):
// the shape's unit_inertia over inv_inertia (1 / (m size^2)), as the engines take them
// (core/engine/polyhedron_phases.hpp).
inline Vec3 polyhedron_moments(const ParticleArrays& p, std::size_t i, const std::vector<PolyShape>& shapes) {
  return principal_moments(shapes[static_cast<std::size_t>(p.shape[i])], p.inv_inertia[i]);
}

// Rigid mesh bodies with prescribed motion. Elements of all bodies share one index space.
// A rigid mesh body with prescribed motion: the plain-data motion record the engines use
// (core/engine/views.hpp) and its name.
struct MeshBody : MeshBodyMotion {
  std::string name;
};

struct MeshSet {
  std::vector<MeshBody> bodies;
  std::vector<MotionKnot> knots;        // the bodies' motion tables (MeshBodyMotion::first_knot)
  std::vector<Vec3> ref_vertices;       // m, at t = 0
  std::vector<Vec3> vertices;           // m, at the current time
  std::vector<index_t> elem_offsets{0};   // CSR: element e uses elem_vertices[offsets[e], offsets[e+1])
  std::vector<index_t> elem_vertices;     // global vertex indices
  std::vector<index_t> elem_body;         // body of each element
  std::vector<Vec3> ref_normals;          // unit winding normal of each element at t = 0
  std::vector<Vec3> normals;              // the same at the current time (rotated with the body)
  std::vector<BodyFrame> frames;          // each body at the current time
  double time = 0;                        // s, time of `vertices`

  std::size_t num_elements() const { return elem_body.size(); }
  void update(double t);  // moves every body (vertices and element normals) to its pose at time t
  // Sets each body's frame at time t (body_frame); whether any changed, bitwise (the device engine
  // re-poses its copy of the vertices only then).
  bool update_frames(double t);
  Polygon polygon(index_t e) const;
  Vec3 center(index_t body) const;  // rotation centre at the current time
  BodyKinematics kinematics(index_t body) const;
  std::vector<MeshBodyMotion> motions() const;  // the bodies' plain motion records, in order
  // A view of the arrays; `motions` must hold motions() (views hold no std::string).
  MeshView view(const std::vector<MeshBodyMotion>& motions);
};

// The broad phase of the sphere pairs (scene key broad_phase).
enum class BroadPhaseMethod : std::uint8_t {
  Auto = 0,   // the HGrid where the cost model wants more than one level, else the uniform grid
  Grid = 1,   // uniform grid (cells of twice the 99th-percentile reach, wide particles on their own)
  HGrid = 2,  // hierarchical grid (krijgsman2014)
  Bsp = 3,    // binary space partitioning (petocz-armero1998), host engine only
};
struct BroadPhaseSpec {
  BroadPhaseMethod method = BroadPhaseMethod::Auto;
  int levels = 0;                  // HGrid: 0 chooses them
  std::vector<double> cell_sizes;  // HGrid: m, increasing (empty: chosen)
  // The device engine's uniform grid over the particles' box: the particles sorted along the
  // Hilbert curve of its cells (core/grid/hilbert.hpp) instead of in rows of cells. The same bits
  // either way. Rows by default: on the OpenMP system the curve measured 5 % (median) and 10 %
  // slower at 1 and 2 million spheres (bench/results/dev-2core-cpu/device_order.md); the curve is for the GPU's
  // large beds (dem_run_bench --device-order, bench/gpu_check.sh).
  bool device_curve_order = false;
};
// One of an engine's buffers and the bytes its capacity holds (Simulation::state_buffers).
struct StateBuffer {
  std::string name;
  double bytes = 0;
};

// What the broad phase used at its last build (summary.json).
struct BroadPhaseReport {
  std::string method = "grid";
  std::vector<double> cell_sizes;  // m, one per level
  // The device engine's particle order at its last build: "rows" or "curve" of the bounded
  // uniform grid's cells, "keys" (the hashed grid's buckets, the HGrid's keys); empty on the host
  // engine (the Hilbert curve of its cells, re-sorted when its lists are rebuilt).
  std::string order;
};

struct EngineSettings {
  real dt = 0;                           // s
  Vec3 gravity{0, 0, 0};                 // m/s^2
  real skin = -1;                        // m; >= 0: fixed pair skin; < 0: adaptive per particle
                                         // (the mesh skin is this, or 0.5 * largest radius)
  int neighbour_interval = 0;            // > 0: also rebuild every this many steps
  real h2_tolerance = kH2DefaultCoplanarTol;
  PeriodicBox periodic{};                // periodic axes (none by default)
  BroadPhaseSpec broad_phase{};
  std::size_t parallel_min = kParallelMin;  // loops over fewer items run on one thread
  // What the pair loads' integer sums are sized for (core/engine/fixed_loads.hpp, LoadSizing):
  // the scene's largest radius (m) and the materials its particles can have, listed, filled or
  // poured in by an inlet (the scene builder sets both), so that a restart sizes them as the first
  // run did; the engines add their own particles' radii and materials.
  real load_radius = 0;
  std::vector<std::int32_t> load_materials;
  // The polyhedral shapes particles may have (ParticleArrays::shape indexes them; d_v = 1). Not
  // empty: the engines compile in the polyhedral phases (core/engine/polyhedron_phases.hpp).
  std::vector<PolyShape> shapes;
  // §6.3's TOL as a share of a polyhedron's size (ParticleView::plane_tolerance; 0: every plane
  // searched in full every step). Scene key simulation.common_plane_tolerance.
  real plane_tolerance = 0;
  // The device engine's Simulation::advance (cuda/run_ahead.inl): the host queues steps at most
  // this many past the last one it has seen the device decide to run (0: none queued ahead, a
  // wait every step as with step and check_health); blind (tests): it queues every step of the
  // call without looking, as for a device far behind, so that the steps left undone run.
  int run_ahead = 2;
  bool run_ahead_blind = false;
};

// Contact statistics, cumulative since the start (the counts reported in santasusana2016 Fig. 30).
struct ContactStats {
  std::uint64_t broad_phase_builds = 0;
  std::uint64_t lists_kept = 0;        // steps a pair list outlived a particle's skin (exact check)
  std::uint64_t pair_candidates = 0;   // summed over steps
  std::uint64_t pair_contacts = 0;     // touching sphere pairs, summed over steps
  std::uint64_t pair_spills = 0;       // host pair pass: loads handed to another thread's particles
  std::uint64_t fe_potential = 0;      // Fast Intersection Test calls
  std::uint64_t fe_contact = 0;        // elements that passed it
  std::uint64_t valid_entities = 0;    // contacts left by H2
  std::uint64_t h2_compactions = 0;
  std::uint64_t mesh_list_renewals = 0;  // per-particle mesh candidate lists made
  std::uint64_t mesh_lists_kept = 0;     // steps the mesh lists outlived a particle's mesh skin (exact check)
  // the steps the sums cover (restore_state leaves the statistics alone: a restart counts from 0)
  std::uint64_t steps = 0;
  // Pairs of polyhedra whose bounding spheres overlap, each evaluation (core PlaneCounts): the kept
  // common plane still separated them, §6.3 followed it, or a complete search ran (FCP's rounds
  // summed, and the most in one search)
  std::uint64_t planes_kept = 0, planes_approximated = 0, plane_searches = 0, plane_iterations = 0;
  std::uint64_t plane_iterations_max = 0;
  void add_planes(const PlaneCounts& c) {
    planes_kept += std::uint64_t(c.kept);
    planes_approximated += std::uint64_t(c.approximated);
    plane_searches += std::uint64_t(c.searched);
    plane_iterations += std::uint64_t(c.iterations);
    if (std::uint64_t(c.iterations_max) > plane_iterations_max) plane_iterations_max = std::uint64_t(c.iterations_max);
  }
  // Another run's (or rank's) counts added to these (the most iterations: the larger).
  void add(const ContactStats& o) {
    broad_phase_builds += o.broad_phase_builds;
    lists_kept += o.lists_kept;
    pair_candidates += o.pair_candidates;
    pair_contacts += o.pair_contacts;
    pair_spills += o.pair_spills;
    fe_potential += o.fe_potential;
    fe_contact += o.fe_contact;
    valid_entities += o.valid_entities;
    h2_compactions += o.h2_compactions;
    mesh_list_renewals += o.mesh_list_renewals;
    mesh_lists_kept += o.mesh_lists_kept;
    steps += o.steps;
    planes_kept += o.planes_kept;
    planes_approximated += o.planes_approximated;
    plane_searches += o.plane_searches;
    plane_iterations += o.plane_iterations;
    if (o.plane_iterations_max > plane_iterations_max) plane_iterations_max = o.plane_iterations_max;
  }
};

// Wall time spent in each phase of the step, cumulative (s).
struct PhaseTimes {
  double broad_phase = 0;    // cell sort, re-sorting, candidate pairs, history carry-over
  double pair_contacts = 0;  // sphere-sphere geometry and contact law
  double mesh_bins = 0;      // search bins over the mesh elements (Sect. 3.1)
  double mesh_contacts = 0;  // per particle: Fast Intersection Test, H2, contact law, body loads
  double gather = 0;         // per-particle sums, and in step() the central
                             // differences, fused with the sums (one pass over the particles)
  double mesh_motion = 0;    // moving the mesh bodies
  double total() const { return broad_phase + pair_contacts + mesh_bins + mesh_contacts + gather + mesh_motion; }
  void add(const PhaseTimes& o) {
    broad_phase += o.broad_phase;
    pair_contacts += o.pair_contacts;
    mesh_bins += o.mesh_bins;
    mesh_contacts += o.mesh_contacts;
    gather += o.gather;
    mesh_motion += o.mesh_motion;
  }
};

// How a run was spread over MPI ranks (host/mpi/decomposition.hpp; summary.json's "mpi"):
// ranks 1 for one process.
struct RanksReport {
  int ranks = 1;
  double imbalance = 1;         // the largest rank's cost over the mean, at the last hand-over (the
                                // costs weighted by the ranks' measured times)
  std::uint64_t handovers = 0;  // hand-overs of the particles to their owners
  std::uint64_t cuts = 0;       // bisections made (the first included)
  double ghost_fraction = 0;    // ghosts per owned particle, all ranks, at the last hand-over
  double bytes_per_step = 0;    // ghost updates sent per step, all ranks (hand-overs not included)
  std::vector<double> rank_seconds;  // each rank's time in its engines' phases
  double handover_seconds = 0;  // rank 0's time in the hand-overs (export, exchange, new engine)
  double ghost_seconds = 0;     // rank 0's time in the ghost updates (with the waits for the others)
  bool cuda_aware_library = false;  // the MPI library takes device pointers (the halo is staged through the host anyway)
  std::vector<std::string> rank_devices;  // each rank's engine's device_name(), in rank order
};

// A problem found during a step (NaN, a full contact list): the engine stops with this message.
struct EngineStatus {
  bool ok = true;
  std::string message;
  int problem = 0;  // the failed health check (core HealthProblem), 0 for other stops
  std::int64_t particle = -1;  // the id of the particle the message names, -1 for none
};

// The contact state a restart needs beyond the particles (host/sim/checkpoint.hpp): every
// touching sphere pair with its history (by particle id, id_a < id_b), and every particle's
// mesh contacts, in the order of the particle arrays they were exported with: mesh_count per
// particle, and the used slots only, packed (particle 0's mesh_count[0] slots, then particle 1's...).
struct ContactState {
  std::vector<std::int64_t> pair_a, pair_b;  // particle ids, pair_a[k] < pair_b[k]
  std::vector<ContactHistory> pair_history;
  std::vector<std::uint8_t> mesh_count;       // per particle
  std::vector<EntityContact> mesh_entity;     // sum of mesh_count, packed
  std::vector<Vec3> mesh_normal;
  std::vector<ContactHistory> mesh_history;
  // True when the state was exported after compute_forces (for an output at this time): the
  // particles' force and torque fields and the body loads below are those of this state, already
  // evaluated (the history above includes that evaluation), and the next step integrates with them.
  bool forces_current = false;
  std::vector<Vec3> body_force, body_torque;  // per mesh body, when forces_current
};

}  // namespace dem::host
