#!/usr/bin/env bash
# A/B of two dem_run_bench binaries on the host engine (the way every host change is kept or
# dropped): the settled bed (20,000 beads) and the ribbon mixer (29,559 spheres) from saved states,
# for each thread count, REPS rounds that alternate the two binaries (old first in odd rounds, new
# first in even ones), so that a drifting machine drifts for both. Prints each pair's ratio and the
# ratio of the medians (new / old, particle-steps per second).
#   OLD=path NEW=path STATES=dir [THREADS="2 16"] [REPS=3] [STEPS=1000] [SCENES="bed mixer"] bench/host_ab.sh
# STATES holds bed.ckpt and mixer.ckpt (bench/host_scaling.sh and bench/gpu_prepare.sh make them).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
OLD=${OLD:?OLD: the old dem_run_bench}
NEW=${NEW:?NEW: the new dem_run_bench}
STATES=${STATES:?STATES: a folder with bed.ckpt and mixer.ckpt}
THREADS=${THREADS:-"2"}
REPS=${REPS:-3}
STEPS=${STEPS:-1000}
SCENES=${SCENES:-"bed mixer"}
pss() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $4}' | tail -1; }
run() { # binary scene threads
  local args
  case $2 in
    bed) args=(--scene "$root/scenes/bed/bed.yaml" --from-state "$STATES/bed.ckpt") ;;
    mixer) args=(--scene "$root/scenes/mixer/mixer.yaml" --n 29559 --from-state "$STATES/mixer.ckpt") ;;
  esac
  "$1" "${args[@]}" --warmup 0 --steps "$STEPS" --threads "$3" 2>&1 | pss
}
echo "host A/B: old $OLD, new $NEW; $REPS rounds of $STEPS steps, alternating"
for t in $THREADS; do
  for scene in $SCENES; do
    old=()
    new=()
    for r in $(seq "$REPS"); do
      if [ $((r % 2)) = 1 ]; then
        old+=("$(run "$OLD" $scene "$t")")
        new+=("$(run "$NEW" $scene "$t")")
      else
        new+=("$(run "$NEW" $scene "$t")")
        old+=("$(run "$OLD" $scene "$t")")
      fi
    done
    awk -v scene=$scene -v t="$t" -v o="${old[*]}" -v n="${new[*]}" 'function median(a, k,   i, j, x) {
        for (i = 1; i <= k; ++i) for (j = i + 1; j <= k; ++j) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
      }
      BEGIN {
        k = split(o, a, " "); split(n, b, " ")
        pairs = ""
        for (i = 1; i <= k; ++i) pairs = pairs sprintf(" %.3f", b[i] / a[i])
        mo = median(a, k); mn = median(b, k)
        printf "%-6s %2d threads: old %.4g  new %.4g p-steps/s  new/old %.3f  (pairs:%s)\n", scene, t, mo, mn, mn / mo, pairs
      }'
  done
done
