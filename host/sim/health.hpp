// The messages with which an engine stops on a failed health check or a full mesh-slot block:
// the same text on every engine, so a run stops alike wherever it runs.
#pragma once
#include <cstdint>
#include <string>

#include "core/engine/phases.hpp"

namespace dem::host {

// The message for particle `id` with more valid mesh contacts than kMaxMeshContacts (both engines).
std::string mesh_overflow_message(std::int64_t id, int count, std::uint64_t step, double time);

// The status message for particle `id` failing a health check (problem: core HealthProblem), the
// same on every engine.
std::string health_message(int problem, std::int64_t id, Vec3 x, Vec3 v, std::uint64_t step, double time,
                           const HealthLimits& limits);

}  // namespace dem::host
