// Reads a YAML scene file into a validated SceneConfig (the schema is the table at the top of
// scene_loader.cpp). Every problem is one InputError that says where first:
//   "scene.yaml:12: materials[1].youngs_modulus must be > 0 (got -3)"
//   "--set simulation.td=1: unknown key 'td' in 'simulation'; did you mean 'dt'?"
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host/app/scene/scene_config.hpp"

namespace dem::host {

// The largest scene file read, in bytes. A scene with an explicit list of 10^5 particles is 7.5 to
// 10 MB (75 to 100 bytes a line), so 64 MiB is far above any real scene; and the node tree of a
// file takes 50 to 70 times its size in memory (10^5 particles: 0.5 GB), so a 64 MiB file already
// needs some 4 GB. Larger files, and paths that are not regular files (a directory, /dev/zero, a
// pipe), are refused before they are read. Larger particle sets belong in fills or a checkpoint.
constexpr std::uintmax_t kMaxSceneFileBytes = std::uintmax_t(64) << 20;

// The most materials a scene may define. The contact table holds one ContactParams (80 bytes in
// double precision) for every ordered pair of materials, on the host and again on a device: 256
// materials make 65,536 entries, 5 MiB; 10,000 would make 8 GB. The interactions a scene must list
// grow the same way (one per pair of particle materials: 32,896 for 256).
constexpr std::size_t kMaxMaterials = 256;

// Loads the scene file at `path`. `overrides` are "key=value" strings (dem run --set): a dotted
// path into the YAML tree ("simulation.dt=1e-5", "materials.glass.youngs_modulus=5e7" where a
// sequence entry with a `name` may be addressed by it, "fills.0.count=20000" by index) and a value
// parsed as YAML ("output.probe_ids=[0,5,7]"). They are applied to the tree before validation.
// Relative mesh paths are resolved against the folder of `path`; mesh files are not opened.
SceneConfig load_scene(const std::string& path, const std::vector<std::string>& overrides = {});

// The same for YAML text in memory. `source_name` is used in messages, as SceneConfig::source and
// for the default scene name; relative mesh paths stay relative to the current directory.
SceneConfig load_scene_from_string(const std::string& yaml_text, const std::string& source_name,
                                   const std::vector<std::string>& overrides = {});

}  // namespace dem::host
