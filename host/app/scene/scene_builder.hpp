// From a validated SceneConfig to a ready Engine: materials mixed into the contact-parameter
// table, meshes loaded, transformed and checked, particles placed (explicit list, then fills that
// avoid each other and the meshes).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/omp/engine.hpp"
#include "host/app/scene/scene_config.hpp"

namespace dem::host {

// Everything an engine is made from (host/omp/engine.hpp, cuda/device_engine.hpp).
struct SceneInputs {
  ParticleArrays particles;
  MeshSet meshes;
  std::vector<ContactParams> params;  // num_materials^2, row-major
  int num_materials = 0;
  EngineSettings settings;
  std::vector<std::string> material_names;
  std::vector<std::string> mesh_sources;  // file of each mesh body ("<inline>" for inline meshes)
  std::vector<std::int32_t> inlet_shapes;  // each inlet's polyhedral shape in settings.shapes, -1: spheres
};

// A scene with the host engine made from it.
struct BuiltScene {
  std::unique_ptr<Engine> engine;
  std::vector<std::string> material_names;
  std::vector<std::string> mesh_sources;  // file of each mesh body ("<inline>" for inline meshes)
};

// Throws InputError (naming the file, mesh or fill) for anything the loader could not check:
// unreadable or malformed mesh files, non-planar or concave elements, fills that cannot be placed.
// place_particles = false: no explicit particles and no fills (a restart takes them from its checkpoint).
SceneInputs build_scene_inputs(const SceneConfig& scene, bool place_particles = true);
BuiltScene build_scene(const SceneConfig& scene);

// The largest particle radius of a run made from these inputs (m): its particles' and what its
// inlets may pour (EngineSettings::load_radius). A polyhedron's is its bounding sphere's.
double largest_particle_radius(const SceneInputs& in);

}  // namespace dem::host
