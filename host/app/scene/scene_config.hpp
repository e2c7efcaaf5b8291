// Everything a scene file says, validated, in SI units. Filled by load_scene() (scene_loader.hpp);
// consumed by the driver, which builds particles, meshes and contact parameters from it.
#pragma once
#include "core/contact/material_mixing.hpp"
#include "core/grid/hgrid.hpp"
#include "host/sim/engine_types.hpp"
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host/app/io/polygon_mesh.hpp"

namespace dem::host {

using Vec3d = std::array<double, 3>;

struct MaterialSpec {
  std::string name;
  double density = 0;          // kg/m^3 (walls may leave it 0: they are rigid, prescribed-motion bodies)
  double youngs_modulus = 0;   // Pa; "inf" in the file makes a rigid wall material
  double poisson_ratio = 0;    // -
};

// Interaction parameters for an unordered pair of materials (MercuryDPM's MixedSpecies).
struct InteractionSpec {
  std::string name;             // for --set interactions.<name>...; defaults to "<material_a>-<material_b>"
  std::string material_a, material_b;
  double friction = 0;          // Coulomb coefficient mu (-)
  double restitution = 1;       // normal coefficient of restitution e in [0, 1] (0: perfectly plastic)
  double rolling_friction = 0;  // rolling resistance coefficient mu_r (-)
  // The contact law's parts (README "Contact models"); the defaults are Hertz-Mindlin with the
  // constant rolling torque and no cohesion.
  NormalModel normal = NormalModel::Hertz;
  double stiffness = 0;                 // N/m, linear normal model
  TangentialModel tangential = TangentialModel::Mindlin;
  double tangential_stiffness = 0;      // N/m, linear tangential model
  RollingModel rolling = RollingModel::ConstantTorque;
  double rolling_damping = 0.3;         // EPSD dashpot, a fraction of its critical damping
  CohesionModel cohesion = CohesionModel::None;
  double cohesion_energy_density = 0;   // J/m^3, SJKR
};

// Parts of an interaction's law that cannot go together: both keep their history in the second
// vector of ContactHistory (EPSD's rolling torque, Mindlin-Deresiewicz's reversal force, the
// perfectly plastic lock), or Mindlin-Deresiewicz without a Hertzian contact. The key to blame and
// why ("epsd cannot be ..."), or a null key. One rule for the loader (which names the key's line)
// and the builder (scenes made in code).
struct ModelConflict {
  const char* key = nullptr;
  std::string why;
};
ModelConflict contact_model_conflict(const InteractionSpec& it);

struct RadiusDistribution {
  enum class Kind { Constant, Uniform, Discrete };
  Kind kind = Kind::Constant;
  double radius = 0;                 // m, Constant
  double min = 0, max = 0;           // m, Uniform (uniform in radius)
  std::vector<double> values;        // m, Discrete
  std::vector<double> weights;       // relative number fractions, Discrete (same size as values)
};

// A polyhedral particle shape (key `polyhedron:`): a built-in by name, with its sides for box and
// prism (host/sim/polyhedron_shape.hpp), or a convex OBJ or STL file. Neither: a sphere.
struct PolyhedronSpec {
  std::string builtin;              // tetrahedron, square_pyramid, cube, octahedron, rhombic_dodecahedron, box, prism
  std::vector<double> sides;        // box: [a, b, c]; prism: [a, b, c, L] (only their ratios matter)
  std::string file;                 // the file's path (relative paths resolved against the scene's folder)
  std::string where;                // the key's path in the scene ("fills[1].polyhedron"), for messages
  bool any() const { return !builtin.empty() || !file.empty(); }
};

struct ParticleSpec {               // one explicitly listed particle
  Vec3d position{};                 // m
  Vec3d velocity{};                 // m/s
  Vec3d angular_velocity{};         // rad/s
  double radius = 0;                // m (a sphere)
  std::string material;
  bool prescribed = false;          // true: velocity and angular velocity are imposed, not integrated
  PolyhedronSpec polyhedron;        // a polyhedron instead of a sphere, of
  double size = 0;                  // m, volume-equivalent diameter (6 V / pi)^(1/3)
  std::array<double, 4> orientation{1, 0, 0, 0};  // body to world, w x y z (normalised)
  std::int32_t tag = 0;             // ParticleArrays::tag (mixing indices, per-tag fields)
};

struct FillSpec {                   // a regular or random fill of a region
  enum class Shape { Box, Cylinder };
  // Plate: one hexagonal layer of touching spheres (a rough base), in the box's mid-plane across its
  // thinnest side, each raised or lowered at random by up to jitter * radius.
  enum class Pattern { Regular, Random, Plate };
  Shape shape = Shape::Box;
  Pattern pattern = Pattern::Random;
  Vec3d box_min{}, box_max{};       // m, Box
  Vec3d cylinder_base{};            // m, centre of one end disc, Cylinder
  Vec3d cylinder_axis{0, 0, 1};     // unit vector from the base along the axis, Cylinder
  double cylinder_radius = 0;       // m
  double cylinder_length = 0;       // m
  std::int64_t count = 0;           // number of particles (Random; Regular: an upper bound, 0 = fill)
  double spacing = 0;               // m, centre-to-centre distance (Regular; 0 = 2 * max radius)
  RadiusDistribution radius;        // m; for polyhedra (key size:) the volume-equivalent diameters
  PolyhedronSpec polyhedron;        // polyhedra at random orientations, placed by their bounding spheres
  std::string material;
  Vec3d velocity{};                 // m/s, initial velocity of every particle
  std::uint64_t seed = 1;           // random number seed (Random pattern and radius sampling)
  bool prescribed = false;          // the particles keep their velocity (glued: a rough base, a fixed bed)
  double jitter = 0;                // Plate: random offset across the plate, as a fraction of the radius
  std::int32_t tag = 0;             // every particle's tag (an inlet's too)
};

// At `time`, every particle whose centre lies in the region (a fill's box or cylinder: its shape,
// min/max or base/axis/cylinder_radius/length) takes `tag` (top-level key retag:).
struct RetagSpec {
  double time = 0;                  // s
  std::int32_t tag = 0;
  FillSpec region;                  // (its region fields only)
};

// The mixing indices written to mixing.csv every probe interval (top-level key mixing:;
// host/app/output/mixing.hpp). Samples are either the cubes of edge cell_size of a grid through
// origin (a cell with fewer than min_particles particles left out), or groups of sample_particles
// neighbouring particles (consecutive along a Z-order curve through the particles' box).
struct MixingSpec {
  bool given = false;
  double cell_size = 0;             // m (0: samples of sample_particles instead)
  std::int64_t sample_particles = 0;
  Vec3d origin{};                   // m, a corner of the grid's cells
  std::int64_t min_particles = 5;
  bool mass_weighted = false;       // weighting: count (default) or mass
};

struct MotionSpec {                 // prescribed rigid motion of a mesh body
  Vec3d velocity{};                 // m/s, translation velocity (constant law)
  Vec3d angular_velocity{};         // rad/s, about the rotation centre (axis * omega; constant law)
  Vec3d center{};                   // m, rotation centre at t = 0 (moves with the translation)
  // A motion table instead: rows (t, vx, vy, vz, wx, wy, wz), t in s from `start`, increasing;
  // velocities linear between rows, held before the first and after the last; every spin along
  // one axis (or zero).
  std::vector<std::array<double, 7>> table;
  std::string table_source;         // where the table came from, for messages ("<scene>" or a file)
  Vec3d osc_amplitude{};            // m, a sinusoidal oscillation of the centre (added)
  double osc_frequency = 0;         // Hz (0: none)
  double osc_phase_deg = 0;         // degrees
  double start = 0;                 // s: the motion starts then (at rest before)
  double stop = 1e300;              // s: and stops then (at rest after, where it got to)
};

struct MeshSpec {
  std::string name;                 // body name (bodies.csv); defaults to "mesh<i>"
  std::string file;                 // resolved path (relative paths are relative to the scene file,
                                    // ${VAR} is replaced by the environment variable VAR);
                                    // empty when the mesh is given inline
  PolygonMesh inline_mesh;          // "vertices:" and "faces:" given in the scene itself
  Vec3d scale{1, 1, 1};             // applied first, per axis (a scalar in the file scales all three)
  Vec3d rotation_deg{};             // then rotations about x, then y, then z (degrees)
  Vec3d translation{};              // then this translation (m)
  MotionSpec motion;
  std::string material;
};

struct OutputSpec {
  double snapshot_interval = 0;     // s of simulated time between VTK snapshots (0 = none)
  double probe_interval = 0;        // s between rows of probes.csv / bodies.csv (0 = none)
  std::vector<std::int64_t> probe_ids;  // particle ids written to probes.csv
  bool vtk = true;                  // write .vtu/.pvd at all
  bool zlib = false;                // compress the .vtu arrays (output.compression: zlib)
  double checkpoint_interval = 0;   // s between checkpoints (checkpoint.bin; 0 = none)
};

struct SimulationSpec {
  double dt = 0;                    // s, time step (> 0)
  double end_time = 0;              // s (> 0)
  Vec3d gravity{0, 0, -9.81};       // m/s^2
  double skin = -1;                 // m, Verlet skin of the broad phase (< 0: automatic)
  int neighbour_interval = 0;       // steps between re-detections (0: automatic, from the skin)
  double common_plane_tolerance = 0;  // §6.3's TOL as a share of a polyhedron's size (0: every plane searched in full)
  double max_speed = 0;             // m/s; a faster particle stops the run as a blow-up (0: derived)
  double max_overlap = 0.3;         // a contact overlapping more of the smaller radius stops the run
};

// The region the particles must stay in; a particle leaving it stops the run. Not given: derived
// from the particles, fills and meshes with a margin (host/app/driver.cpp, health_limits).
struct DomainSpec {
  bool given = false;
  Vec3d min{0, 0, 0}, max{0, 0, 0};  // m
  bool remove_escaped = false;        // on_escape: remove (else stop)
  bool periodic[3] = {false, false, false};  // axes along which the domain repeats (x, y, z)
};

// A particle source: spheres placed at random in a region (a fill's box or cylinder, without
// overlaps) at a rate, in batches every `interval`, between start and stop, or until it has
// placed `count`.
struct InletSpec {
  std::string name;                 // for messages and --set inlets.<name>...
  FillSpec region;                  // shape, box or cylinder, radius distribution, material, velocity, seed
  double rate = 0;                  // particles per second, or
  double mass_rate = 0;             // kg per second (exactly one of the two)
  double start = 0, stop = 1e300;   // s
  std::int64_t count = 0;           // particles in all (0: no limit); those that waited for room come later
  double interval = 0.01;           // s between batches
};

// A sink: particles whose centre is inside the box are removed (checked every `interval`; 0: every
// 100 steps) and counted in outlets.csv.
struct OutletSpec {
  std::string name;
  Vec3d min{}, max{};               // m
  double interval = 0;              // s
};

// Coarse-grained fields on a regular grid (top-level key coarse_graining:;
// host/app/output/coarse_graining.hpp), written as VTK ImageData every interval, each the
// average of the samples taken every sample_interval since the one before.
struct CoarseGrainingSpec {
  bool given = false;
  std::uint8_t kernel = 0;          // dem::CgKernel: 0 Lucy, 1 Gaussian
  double width = 0;                 // m: Lucy's support radius, the Gaussian's standard deviation
  double cell_size = 0;             // m
  bool region_given = false;
  Vec3d min{}, max{};               // m: the region whose particles count (default: the domain)
  double interval = 0;              // s between field files
  double sample_interval = 0;       // s between samples (0: interval)
  bool per_tag = false;             // each tag's solid fraction too
  bool contact_stress = true;       // the contact stress too (the engine keeps each contact's force)
};

// Why a coarse_graining width is outside its allowed range for the cell size (the message after
// the key's name), or "". One rule for the loader and the Python module.
std::string coarse_graining_width_conflict(const CoarseGrainingSpec& cg);

struct SceneConfig {
  std::string source;               // path of the scene file
  std::string name;                 // scene name (default: file stem)
  SimulationSpec simulation;
  DomainSpec domain;
  BroadPhaseSpec broad_phase;
  std::vector<MaterialSpec> materials;
  std::vector<InteractionSpec> interactions;
  std::vector<ParticleSpec> particles;
  std::vector<FillSpec> fills;
  std::vector<MeshSpec> meshes;
  std::vector<InletSpec> inlets;
  std::vector<OutletSpec> outlets;
  std::vector<RetagSpec> retags;    // in the order given (a later one wins where regions meet at one time)
  MixingSpec mixing;
  CoarseGrainingSpec coarse_graining;
  OutputSpec output;
};

// The index of the material named `name` in scene.materials (the particles' material index), or -1.
inline int material_index(const SceneConfig& scene, const std::string& name) {
  for (std::size_t m = 0; m < scene.materials.size(); ++m)
    if (scene.materials[m].name == name) return static_cast<int>(m);
  return -1;
}

}  // namespace dem::host
