// A switch between two code paths of a host-engine experiment, for an A/B inside one process
// (`dem_run_bench --ab-block K` alternates it between 0 and 1 every K steps of the window and
// times each side): on a machine whose speed drifts by tens of percent from minute to minute,
// steps a second apart see the same machine, where runs a minute apart do not. Both paths must
// give the same bits. It is 0 everywhere else, and no committed code path reads it: an experiment
// reads it while under way, and keeps one path when decided.
#pragma once

namespace dem::host {
inline int experiment_variant = 0;
}  // namespace dem::host
