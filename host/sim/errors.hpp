// Errors the host side reports to the user. An InputError's message names where the problem is
// first (file, line or key), then what is wrong and, when possible, what to do:
//   "scene.yaml:12: materials[1].youngs_modulus must be > 0 (got -3)".
#pragma once
#include <stdexcept>
#include <string>

namespace dem::host {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A write that failed (disk full, permissions): the run stops with exit 4 naming the file.
struct WriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace dem::host
