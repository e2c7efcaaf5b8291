#include "host/app/scene/scene_builder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>

#include "core/dhm/fast_intersection.hpp"
#include "host/sim/errors.hpp"
#include "host/sim/periodic_check.hpp"
#include "host/app/io/mesh_io.hpp"
#include "host/app/io/polyhedron_io.hpp"
#include "host/app/scene/placement.hpp"

namespace dem::host {
namespace {


// Mean volume of a sphere drawn from the distribution (m^3).
double mean_sphere_volume(const RadiusDistribution& d) {
  switch (d.kind) {
    case RadiusDistribution::Kind::Constant: return 4.0 / 3.0 * M_PI * d.radius * d.radius * d.radius;
    case RadiusDistribution::Kind::Uniform: {  // E[r^3] = (b^4 - a^4) / (4 (b - a))
      if (d.max <= d.min) return 4.0 / 3.0 * M_PI * d.min * d.min * d.min;
      return 4.0 / 3.0 * M_PI * (std::pow(d.max, 4) - std::pow(d.min, 4)) / (4 * (d.max - d.min));
    }
    case RadiusDistribution::Kind::Discrete: {
      double total = 0, sum = 0;
      for (std::size_t k = 0; k < d.values.size(); ++k) {
        total += d.weights[k];
        sum += d.weights[k] * d.values[k] * d.values[k] * d.values[k];
      }
      return total > 0 ? 4.0 / 3.0 * M_PI * sum / total : 0.0;
    }
  }
  return 0;
}

// A body's motion law beyond a constant velocity and spin: the motion table (its rows integrated
// into MotionKnots: velocities linear between rows, so the trapezoid rule is exact), the
// oscillation, start and stop.
void set_motion_law(const MotionSpec& m, MeshBody& body, std::vector<MotionKnot>& knots) {
  body.start = m.start;
  body.stop = m.stop;
  if (m.osc_frequency > 0) {
    body.osc_amplitude = to_vec(m.osc_amplitude);
    body.osc_omega = real(2 * M_PI * m.osc_frequency);
    body.osc_phase = real(m.osc_phase_deg * M_PI / 180);
  }
  if (m.table.empty()) return;
  body.velocity = body.angular_velocity = Vec3{0, 0, 0};
  body.first_knot = static_cast<index_t>(knots.size());
  body.knot_count = static_cast<index_t>(m.table.size());
  for (const auto& row : m.table) {  // the spin axis: the first non-zero spin's (the loader checked they agree)
    const Vec3 w{real(row[4]), real(row[5]), real(row[6])};
    if (norm(w) > 0) {
      body.spin_axis = normalized(w);
      break;
    }
  }
  for (std::size_t r = 0; r < m.table.size(); ++r) {
    const auto& row = m.table[r];
    MotionKnot k;
    k.t = row[0];
    k.v = Vec3{real(row[1]), real(row[2]), real(row[3])};
    k.spin = dot(Vec3{real(row[4]), real(row[5]), real(row[6])}, body.spin_axis);
    if (r == 0) {  // before the first row its values hold, from the start of the law
      k.d = k.v * real(k.t);
      k.angle = k.spin * real(k.t);
    } else {
      const MotionKnot& p = knots.back();
      const real h = real(k.t - p.t);
      k.d = p.d + (p.v + k.v) * (real(0.5) * h);
      k.angle = p.angle + (p.spin + k.spin) * (real(0.5) * h);
    }
    body.table_max_speed = std::max(body.table_max_speed, norm(k.v));
    body.table_max_spin = std::max(body.table_max_spin, std::abs(k.spin));
    knots.push_back(k);
  }
}

// The axis across a plate fill's box: its thinnest side.
int plate_normal_axis(const FillSpec& f) {
  int n = 0;
  for (int k = 1; k < 3; ++k)
    if (f.box_max[k] - f.box_min[k] < f.box_max[n] - f.box_min[n]) n = k;
  return n;
}

// A fill's polyhedra: their shape, its index in the shape table, and its bounding radius at size 1.
struct FillPolyhedra {
  const PolyShape* shape = nullptr;  // null: spheres
  std::int32_t index = -1;
};

// f: a fill whose radius distribution is in placement radii (for polyhedra, the bounding spheres'
// radii: the sizes times the shape's bounding_radius), so that no two placed particles overlap.
void run_fill(const SceneConfig& scene, std::size_t index, const FillSpec& f, std::int32_t material,
              double density, const MeshSet& meshes, const FillPolyhedra& poly, PlacementGrid& grid,
              ParticleArrays& out) {
  std::mt19937_64 rng(f.seed);
  const double r_max = max_radius(f.radius);
  const bool box = f.shape == FillSpec::Shape::Box;
  const FillFrame frame = cylinder_frame(to_vec(f.cylinder_axis));
  const Vec3 base = to_vec(f.cylinder_base);
  auto inside = [&](Vec3 x, double r_true) {
    // a part in 1e-6 of a radius of slack: lattices at one diameter (times 1 + 1e-9, so that
    // neighbours do not count as overlapping) must not lose their last sphere to round-off
    const double r = r_true * (1 - 1e-6);
    if (box) {
      return x.x - r >= f.box_min[0] && x.x + r <= f.box_max[0] && x.y - r >= f.box_min[1] &&
             x.y + r <= f.box_max[1] && x.z - r >= f.box_min[2] && x.z + r <= f.box_max[2];
    }
    const Vec3 d = x - base;
    const double h = dot(d, frame.axis);
    return h - r >= 0 && h + r <= f.cylinder_length && norm(d - real(h) * frame.axis) + r <= f.cylinder_radius;
  };
  auto place = [&](Vec3 x, double r) {
    // (with periodic axes, the walls are met where the engine will put the sphere: inside the box)
    if (!inside(x, r) || grid.overlaps(x, r) || touches_mesh(meshes, wrap_far(grid.periodic(), x), r)) return false;
    grid.add(x, r);
    if (poly.shape != nullptr)
      out.push_polyhedron(static_cast<std::int64_t>(out.size()), x, random_orientation(rng), to_vec(f.velocity),
                          Vec3{0, 0, 0}, real(r) / poly.shape->bounding_radius, poly.index, *poly.shape, real(density),
                          material, f.prescribed);
    else
      out.push_back(static_cast<std::int64_t>(out.size()), x, to_vec(f.velocity), Vec3{0, 0, 0}, real(r),
                    real(density), material, f.prescribed);
    out.tag.back() = f.tag;
    return true;
  };
  // Bounded work: what cannot be placed is refused before the placement loop starts.
  const std::string what = scene.source + ": fills[" + std::to_string(index) + "]: ";
  constexpr double kMaxParticles = 2147483647.0;  // 2^31 - 1, the engines' index limit
  const double room = kMaxParticles - double(out.size());
  if (double(f.count) > room)
    throw InputError(what + "count " + std::to_string(f.count) + " is more than the " +
                     std::to_string(static_cast<long long>(room)) + " particles that can still be added (2^31 - 1 in all)");
  const double volume = box ? (f.box_max[0] - f.box_min[0]) * (f.box_max[1] - f.box_min[1]) * (f.box_max[2] - f.box_min[2])
                            : M_PI * f.cylinder_radius * f.cylinder_radius * f.cylinder_length;
  if (f.pattern == FillSpec::Pattern::Random) {
    // Random placement without overlaps jams near 38 % solid fraction (random sequential addition
    // of equal spheres; polydisperse mixes get somewhat higher): above half, no amount of trying helps.
    const double needed = double(f.count) * mean_sphere_volume(f.radius);
    if (needed > 0.5 * volume) {
      std::ostringstream msg;
      msg << what << f.count << " particles take " << needed << " m^3, " << 100 * needed / volume
          << " % of the fill region (" << volume
          << " m^3); random placement without overlaps jams near 38 %: enlarge the region, reduce count or "
             "radius, or use pattern: regular";
      throw InputError(msg.str());
    }
  } else {
    const double s = f.spacing > 0 ? f.spacing : 2 * r_max * (1 + 1e-9);
    const double extent[3] = {box ? f.box_max[0] - f.box_min[0] : 2 * f.cylinder_radius,
                              box ? f.box_max[1] - f.box_min[1] : 2 * f.cylinder_radius,
                              box ? f.box_max[2] - f.box_min[2] : f.cylinder_length};
    double sites = 1;
    if (f.pattern == FillSpec::Pattern::Plate) {  // one layer: rows s * sqrt(3)/2 apart
      const int n = plate_normal_axis(f);
      sites = (std::floor(extent[(n + 1) % 3] / s) + 2) * (std::floor(extent[(n + 2) % 3] / (s * 0.8660254037844386)) + 1);
    } else {
      for (double e : extent) sites *= std::floor(std::max(0.0, e) / s) + 1;
    }
    // Every site is visited (the loop cannot stop at count early when most sites are blocked),
    // so the sites themselves are bounded, whatever the count.
    if (sites > std::min(room, kMaxParticles)) {
      std::ostringstream msg;
      msg << what << "spacing " << s << " m gives " << sites << " lattice sites"
          << (f.count > 0 ? "" : " (count: 0 fills them all)") << ", more than the " << room
          << " particles that can still be added (about " << sites * 200 / 1e9
          << " GB of particle state); raise spacing or radius, or set count";
      throw InputError(msg.str());
    }
  }
  std::int64_t placed = 0;
  if (f.pattern == FillSpec::Pattern::Random) {
    // The radii are drawn first and placed largest first: drawn in turn, a large sphere that comes
    // late finds no room among the small ones already placed (a 1-10 mm mix placed a quarter of
    // its count), while small ones always find the gaps between large ones. Equal radii draw
    // nothing, so such fills place exactly as before.
    std::vector<double> radii(static_cast<std::size_t>(f.count));
    for (double& r : radii) r = sample_radius(f.radius, rng);
    std::stable_sort(radii.begin(), radii.end(), [](double a, double b) { return a > b; });
    const std::int64_t max_attempts = 200 * f.count + 10000;
    std::int64_t attempts = 0;
    while (placed < f.count && attempts < max_attempts) {
      ++attempts;
      const double r = radii[static_cast<std::size_t>(placed)];
      if (place(random_point_in_region(f, r, frame, base, rng), r)) ++placed;
    }
  } else if (f.pattern == FillSpec::Pattern::Plate) {
    // One hexagonal layer of spheres (touching at the default spacing, one largest diameter) in the
    // box's mid-plane across its thinnest side, each moved across the plate by a random fraction
    // (up to jitter) of its radius: a rough base of glued spheres when prescribed.
    const double s = f.spacing > 0 ? f.spacing : 2 * r_max * (1 + 1e-9), h = s * 0.8660254037844386;
    const int n = plate_normal_axis(f), a = (n + 1) % 3, b = (n + 2) % 3;
    const double mid = 0.5 * (f.box_min[n] + f.box_max[n]);
    const std::int64_t limit = f.count > 0 ? f.count : INT64_MAX;
    const double slack = 1e-7 * r_max;  // the default spacing's 1e-9 margin must not drop a row's last sphere
    for (int row = 0; f.box_min[b] + r_max + row * h <= f.box_max[b] - r_max + slack && placed < limit; ++row)
      for (double u = f.box_min[a] + r_max + (row % 2 ? 0.5 * s : 0.0); u <= f.box_max[a] - r_max + slack && placed < limit;
           u += s) {
        const double r = sample_radius(f.radius, rng);
        double x[3];
        x[a] = u;
        x[b] = f.box_min[b] + r_max + row * h;
        x[n] = mid + f.jitter * r * (2 * uniform01(rng) - 1);
        if (place(Vec3{real(x[0]), real(x[1]), real(x[2])}, r)) ++placed;
      }
  } else {
    // Simple cubic lattice with the given spacing (default: one largest diameter).
    const double s = f.spacing > 0 ? f.spacing : 2 * r_max * (1 + 1e-9);
    Vec3 lo, hi;
    region_bounds(f, lo, hi);
    const std::int64_t limit = f.count > 0 ? f.count : INT64_MAX;
    for (double z = lo.z + r_max; z <= hi.z - r_max + 1e-12 && placed < limit; z += s)
      for (double y = lo.y + r_max; y <= hi.y - r_max + 1e-12 && placed < limit; y += s)
        for (double x = lo.x + r_max; x <= hi.x - r_max + 1e-12 && placed < limit; x += s)
          if (place(Vec3{real(x), real(y), real(z)}, sample_radius(f.radius, rng))) ++placed;
  }
  const bool short_random = f.pattern == FillSpec::Pattern::Random && placed < f.count;
  const bool short_regular = f.pattern != FillSpec::Pattern::Random && f.count > 0 && placed < f.count;
  if (short_random || short_regular || placed == 0) {
    std::ostringstream msg;
    msg << scene.source << ": fills[" << index << "]: placed " << placed << " of "
        << (f.count > 0 ? std::to_string(f.count) : std::string("(fill)"))
        << " particles without overlapping each other or a mesh; enlarge the region, reduce count or radius";
    throw InputError(msg.str());
  }
}

}  // namespace

SceneInputs build_scene_inputs(const SceneConfig& scene, bool place_particles) {
  SceneInputs out;
  // Materials and the mixed parameter table.
  std::map<std::string, std::int32_t> mat_index;
  std::vector<Material> materials;
  for (const MaterialSpec& m : scene.materials) {
    mat_index[m.name] = static_cast<std::int32_t>(materials.size());
    materials.push_back(Material{real(m.density), real(m.youngs_modulus), real(m.poisson_ratio)});
    out.material_names.push_back(m.name);
  }
  const int nm = static_cast<int>(materials.size());
  std::vector<ContactParams> params(static_cast<std::size_t>(nm) * nm,
                                    ContactParams{0, 0, 0, 0, 0, RollingModel::ConstantTorque});
  for (const InteractionSpec& it : scene.interactions) {
    const std::int32_t a = mat_index.at(it.material_a), b = mat_index.at(it.material_b);
    // (the loader refuses these first, at the key's line; scenes made in code meet them here)
    if (const ModelConflict c = contact_model_conflict(it); c.key)
      throw InputError("interaction " + it.name + ": " + c.key + " " + c.why);
    InteractionParams ip{real(it.friction), real(it.restitution), real(it.rolling_friction)};
    ip.normal = it.normal;
    ip.stiffness = real(it.stiffness);
    ip.tangential = it.tangential;
    ip.tangential_stiffness = real(it.tangential_stiffness);
    ip.rolling = it.rolling;
    ip.rolling_damping = real(it.rolling_damping);
    ip.cohesion = it.cohesion;
    ip.cohesion_energy_density = real(it.cohesion_energy_density);
    const ContactParams p = mix_contact_params(materials[a], materials[b], ip);
    params[a * nm + b] = p;
    params[b * nm + a] = p;
  }
  // Meshes first (fills avoid them).
  MeshSet meshes;
  for (std::size_t k = 0; k < scene.meshes.size(); ++k) {
    const MeshSpec& ms = scene.meshes[k];
    PolygonMesh pm = ms.file.empty() ? ms.inline_mesh : load_mesh(ms.file);
    transform_mesh(pm, ms.scale, ms.rotation_deg, ms.translation);
    // Beyond 1e9 m (or not finite) a coordinate is a wrong scale, and areas would overflow.
    for (const auto& v : pm.vertices)
      if (!(std::abs(v[0]) <= 1e9 && std::abs(v[1]) <= 1e9 && std::abs(v[2]) <= 1e9)) {
        std::ostringstream msg;
        msg << scene.source << ": meshes[" << k << "] (" << pm.source << "): scale [" << ms.scale[0] << ", "
            << ms.scale[1] << ", " << ms.scale[2] << "] and translation [" << ms.translation[0] << ", "
            << ms.translation[1] << ", " << ms.translation[2]
            << "] put vertices at (" << v[0] << ", " << v[1] << ", " << v[2]
            << ") m, beyond 1e9 m from the origin; check the scale (and the units of the mesh file)";
        throw InputError(msg.str());
      }
    check_planar_convex(pm, 1e-6);
    MeshBody body;
    body.name = ms.name.empty() ? "mesh" + std::to_string(k) : ms.name;
    body.material = mat_index.at(ms.material);
    body.velocity = to_vec(ms.motion.velocity);
    body.angular_velocity = to_vec(ms.motion.angular_velocity);
    body.center0 = to_vec(ms.motion.center);
    set_motion_law(ms.motion, body, meshes.knots);
    body.first_vertex = static_cast<index_t>(meshes.ref_vertices.size());
    body.vertex_count = static_cast<index_t>(pm.vertices.size());
    body.first_element = static_cast<index_t>(meshes.num_elements());
    body.element_count = static_cast<index_t>(pm.num_faces());
    for (const auto& v : pm.vertices) meshes.ref_vertices.push_back(Vec3{real(v[0]), real(v[1]), real(v[2])});
    for (std::size_t f = 0; f < pm.num_faces(); ++f) {
      if (pm.face_size(f) > static_cast<std::size_t>(kMaxPolygonVertices))
        throw InputError(pm.source + ": face " + std::to_string(f) + " has " + std::to_string(pm.face_size(f)) +
                         " vertices; elements may have at most " + std::to_string(kMaxPolygonVertices) +
                         " (kMaxPolygonVertices in core/geometry/polygon.hpp): split it into convex pieces");
      for (std::int32_t k2 = pm.face_offsets[f]; k2 < pm.face_offsets[f + 1]; ++k2)
        meshes.elem_vertices.push_back(body.first_vertex + pm.face_vertices[k2]);
      meshes.elem_offsets.push_back(static_cast<index_t>(meshes.elem_vertices.size()));
      meshes.elem_body.push_back(static_cast<index_t>(meshes.bodies.size()));
    }
    meshes.bodies.push_back(body);
    out.mesh_sources.push_back(pm.source);
  }
  meshes.vertices = meshes.ref_vertices;
  meshes.update(0);
  // The polyhedral shapes, each once (by its built-in name and sides, or its file).
  std::vector<PolyShape> shapes;
  std::map<std::string, std::int32_t> shape_index;
  std::set<std::int32_t> polyhedral_materials;
  const auto shape_of = [&](const PolyhedronSpec& s, const std::string& material) {
    std::ostringstream key;
    key << (s.file.empty() ? "builtin:" + s.builtin : "file:" + s.file);
    for (double side : s.sides) key << ' ' << side;
    polyhedral_materials.insert(mat_index.at(material));
    const auto [at, fresh] = shape_index.emplace(key.str(), static_cast<std::int32_t>(shapes.size()));
    if (fresh) {
      const std::string where = scene.source + ": " + s.where;
      shapes.push_back(s.file.empty() ? make_poly_shape(builtin_polyhedron(s.builtin, s.sides, where), where)
                                      : load_polyhedron(s.file));
    }
    return at->second;
  };
  std::vector<std::int32_t> particle_shape, fill_shape;
  for (const ParticleSpec& p : scene.particles) particle_shape.push_back(p.polyhedron.any() ? shape_of(p.polyhedron, p.material) : -1);
  // The fills in placement radii: a polyhedral fill's sizes times its shape's bounding radius.
  std::vector<FillSpec> fills = scene.fills;
  for (FillSpec& f : fills) {
    fill_shape.push_back(f.polyhedron.any() ? shape_of(f.polyhedron, f.material) : -1);
    if (fill_shape.back() < 0) continue;
    const double br = shapes[static_cast<std::size_t>(fill_shape.back())].bounding_radius;
    f.radius.radius *= br;
    f.radius.min *= br;
    f.radius.max *= br;
    for (double& v : f.radius.values) v *= br;
  }
  // Polyhedra meet through the linear law (core/engine/polyhedron_phases.hpp): every interaction
  // of their materials must have one.
  for (const InteractionSpec& it : scene.interactions) {
    const bool with_polyhedra = polyhedral_materials.count(mat_index.at(it.material_a)) > 0 ||
                                polyhedral_materials.count(mat_index.at(it.material_b)) > 0;
    if (!with_polyhedra) continue;
    const std::string where = scene.source + ": interactions '" + it.name + "': polyhedral particles (materials '" +
                              it.material_a + "', '" + it.material_b + "') ";
    if (it.normal != NormalModel::Linear)
      throw InputError(where + "meet by a linear spring on the depth across their common plane: set normal: linear and its stiffness");
    // The polyhedral law has its springs, its damping from the restitution, Coulomb friction and
    // the constant rolling torque; no other part of the spheres' laws (refused, not ignored).
    const char* unsupported =
        it.tangential != TangentialModel::Linear ? "tangential (only linear)"
        : it.restitution == 0                  ? "restitution 0 (the perfectly plastic law)"
        : it.rolling != RollingModel::ConstantTorque
            ? "rolling: epsd (its spring would need the pair's second history vector, which holds the common plane; "
              "rolling: constant_torque is taken)"
        : it.cohesion != CohesionModel::None ? "cohesion"
                                             : nullptr;
    if (unsupported) throw InputError(where + "do not take " + std::string(unsupported));
  }
  const auto particle_radius = [&](std::size_t k) {
    const ParticleSpec& p = scene.particles[k];
    return particle_shape[k] < 0 ? p.radius : p.size * shapes[static_cast<std::size_t>(particle_shape[k])].bounding_radius;
  };
  // Particles: the explicit list, then each fill.
  ParticleArrays particles;
  double r_max = 0;
  for (std::size_t k = 0; k < scene.particles.size(); ++k) r_max = std::max(r_max, particle_radius(k));
  for (const FillSpec& f : fills) r_max = std::max(r_max, max_radius(f.radius));
  double r_run = r_max;  // the largest sphere of the run: placed now or later by an inlet
  for (const InletSpec& in : scene.inlets) {
    out.inlet_shapes.push_back(in.region.polyhedron.any() ? shape_of(in.region.polyhedron, in.region.material) : -1);
    const double reach =
        out.inlet_shapes.back() >= 0 ? double(shapes[static_cast<std::size_t>(out.inlet_shapes.back())].bounding_radius) : 1.0;
    r_run = std::max(r_run, max_radius(in.region.radius) * reach);
  }
  // SJKR on the linear law attracts with 2 pi k_c R* per metre of overlap against the spring's k_n:
  // where that wins, touching spheres pull into each other without bound. R* up to the largest
  // radius (a sphere on a wall).
  for (const InteractionSpec& it : scene.interactions)
    if (it.normal == NormalModel::Linear && it.cohesion == CohesionModel::Sjkr &&
        2 * M_PI * it.cohesion_energy_density * r_run >= it.stiffness) {
      std::ostringstream msg;
      msg << scene.source << ": interactions '" << it.name << "': cohesion_energy_density " << it.cohesion_energy_density
          << " J/m^3 pulls with 2 pi k_c R* = " << 2 * M_PI * it.cohesion_energy_density * r_run
          << " N/m for the largest sphere (R* = " << r_run << " m on a wall), at least its stiffness " << it.stiffness
          << " N/m: touching spheres would pull into each other; raise stiffness or lower the cohesion";
      throw InputError(msg.str());
    }
  const PeriodicBox periodic = periodic_box(scene);
  if (periodic.any()) {
    const double skin = scene.simulation.skin >= 0 ? scene.simulation.skin : 0.5 * r_run;
    try {
      check_periodic_box(periodic, real(r_run), real(skin));
    } catch (const std::invalid_argument& e) {
      throw InputError(scene.source + ": domain.periodic: " + e.what());
    }
  }
  PlacementGrid grid(std::max(2 * r_max, 1e-12), periodic);
  for (std::size_t k = 0; k < scene.particles.size() && place_particles; ++k) {
    const ParticleSpec& p = scene.particles[k];
    const std::int32_t m = mat_index.at(p.material);
    if (particle_shape[k] >= 0) {
      const auto& o = p.orientation;
      particles.push_polyhedron(static_cast<std::int64_t>(particles.size()), to_vec(p.position),
                                Quat{real(o[0]), real(o[1]), real(o[2]), real(o[3])}, to_vec(p.velocity),
                                to_vec(p.angular_velocity), real(p.size), particle_shape[k],
                                shapes[static_cast<std::size_t>(particle_shape[k])], real(scene.materials[m].density), m,
                                p.prescribed);
    } else {
      particles.push_back(static_cast<std::int64_t>(particles.size()), to_vec(p.position), to_vec(p.velocity),
                          to_vec(p.angular_velocity), real(p.radius), real(scene.materials[m].density), m, p.prescribed);
    }
    particles.tag.back() = p.tag;
    grid.add(to_vec(p.position), particle_radius(k));
  }
  for (std::size_t k = 0; k < fills.size() && place_particles; ++k) {
    const std::int32_t m = mat_index.at(fills[k].material);
    const FillPolyhedra poly{fill_shape[k] >= 0 ? &shapes[static_cast<std::size_t>(fill_shape[k])] : nullptr, fill_shape[k]};
    run_fill(scene, k, fills[k], m, scene.materials[m].density, meshes, poly, grid, particles);
  }
  if (particles.size() >= (std::size_t(1) << 31))
    throw InputError(scene.source + ": " + std::to_string(particles.size()) + " particles; at most 2^31 - 1 are supported");
  EngineSettings settings;
  settings.dt = real(scene.simulation.dt);
  settings.gravity = to_vec(scene.simulation.gravity);
  settings.skin = real(scene.simulation.skin);
  settings.neighbour_interval = scene.simulation.neighbour_interval;
  settings.plane_tolerance = real(scene.simulation.common_plane_tolerance);
  settings.periodic = periodic;
  settings.broad_phase = scene.broad_phase;
  settings.load_radius = real(r_run);
  settings.shapes = std::move(shapes);
  for (const ParticleSpec& p : scene.particles) settings.load_materials.push_back(mat_index.at(p.material));
  for (const FillSpec& f : scene.fills) settings.load_materials.push_back(mat_index.at(f.material));
  for (const InletSpec& in : scene.inlets) settings.load_materials.push_back(mat_index.at(in.region.material));
  out.particles = std::move(particles);
  out.meshes = std::move(meshes);
  out.params = std::move(params);
  out.num_materials = nm;
  out.settings = settings;
  return out;
}

BuiltScene build_scene(const SceneConfig& scene) {
  SceneInputs in = build_scene_inputs(scene);
  BuiltScene out;
  out.engine = std::make_unique<Engine>(std::move(in.particles), std::move(in.meshes), std::move(in.params),
                                        in.num_materials, in.settings);
  out.material_names = std::move(in.material_names);
  out.mesh_sources = std::move(in.mesh_sources);
  return out;
}

double largest_particle_radius(const SceneInputs& in) {
  double r = double(in.settings.load_radius);
  for (const real ri : in.particles.radius) r = std::max(r, double(ri));
  return r;
}

}  // namespace dem::host
