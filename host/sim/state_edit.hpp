// Editing an exported state (Simulation::export_state) between steps: removing particles with
// their pairs and mesh slots, and appending new ones with no contacts. An engine made from the
// edited particles and restored from the edited contacts (restore_state) continues the run: the
// particles that stay keep their bits as long as the removed ones touched none of them.
#pragma once
#include <cstdint>
#include <vector>

#include "host/sim/engine_types.hpp"

namespace dem::host {

// Keeps particle i where keep[i] != 0 (in order), its mesh slots, and the pairs between kept
// particles. The forces-current flag and body loads stay as they were.
void keep_particles(ParticleArrays& p, ContactState& c, const std::vector<std::uint8_t>& keep);

// Appends the particles of `more` (every field set by the caller) with empty mesh slots and no pairs.
void append_particles(ParticleArrays& p, ContactState& c, const ParticleArrays& more);

}  // namespace dem::host
