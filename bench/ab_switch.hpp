// A switch between two code paths of an engine experiment, for an A/B inside one process
// (`dem_run_bench --ab-block K` alternates it between 0 and 1 every K steps of the window and
// times each side): on a machine whose speed drifts from minute to minute, steps a second apart
// see the same machine, where runs a minute apart do not. Both paths must give the same bits.
// It is 0 everywhere else, and no committed engine code reads it: an experiment includes this
// header in the code under test while under way, and keeps one path when decided.
#pragma once

namespace dem::bench {
inline int experiment_variant = 0;
}  // namespace dem::bench
