// Reads a YAML scene file into a validated SceneConfig (the schema is the table at the top of
// scene_loader.cpp). Every problem is one InputError that says where first:
//   "scene.yaml:12: materials[1].youngs_modulus must be > 0 (got -3)"
//   "--set simulation.td=1: unknown key 'td' in 'simulation'; did you mean 'dt'?"
#pragma once
#include <string>
#include <vector>

#include "host/scene/scene_config.hpp"

namespace dem::host {

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
