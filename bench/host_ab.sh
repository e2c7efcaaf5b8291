#!/usr/bin/env bash
# A/B of two dem_run_bench binaries on the host engine (the way every host change is kept or
# dropped): the settled bed (20,000 beads) and the ribbon mixer (29,559 spheres) from saved states,
# for each thread count, REPS rounds that alternate the two binaries (old first in odd rounds, new
# first in even ones), so that a drifting machine drifts for both. Prints each pair's ratio and the
# ratio of the medians (new / old, particle-steps per second).
#   OLD=path NEW=path STATES=dir [THREADS="2 16"] [REPS=3] [STEPS=1000] [SCENES="bed mixer"] [PHASES=1] [DEVICE=omp] bench/host_ab.sh
# STATES holds bed.ckpt and mixer.ckpt (bench/host_scaling.sh and bench/gpu_prepare.sh make them).
# PHASES=1 also prints each phase's seconds (the run's wall time times its share), as medians of
# the old and new runs and their ratio: on a machine whose speed drifts between runs, a change to
# one phase shows there more clearly than in the whole step. DEVICE=omp (or gpu) runs the device
# engine instead of the host engine (dem_run_bench --device).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
OLD=${OLD:?OLD: the old dem_run_bench}
NEW=${NEW:?NEW: the new dem_run_bench}
STATES=${STATES:?STATES: a folder with bed.ckpt and mixer.ckpt}
THREADS=${THREADS:-"2"}
REPS=${REPS:-3}
STEPS=${STEPS:-1000}
SCENES=${SCENES:-"bed mixer"}
PHASES=${PHASES:-0}
DEVICE=${DEVICE:-cpu}
# the window's line: p-steps/s, then (PHASES=1) the seconds of each phase, comma-separated
pss() {
  awk -v phases="$PHASES" '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{
      line = $4
      if (phases == 1) for (c = 7; c <= 12; ++c) { v = $c; sub(/%/, "", v); line = line "," ($3 * v / 100) }
      last = line
    } END { print last }'
}
run() { # binary scene threads
  local args
  case $2 in
    bed) args=(--scene "$root/scenes/bed/bed.yaml" --from-state "$STATES/bed.ckpt") ;;
    mixer) args=(--scene "$root/scenes/mixer/mixer.yaml" --n 29559 --from-state "$STATES/mixer.ckpt") ;;
  esac
  "$1" "${args[@]}" --device "$DEVICE" --warmup 0 --steps "$STEPS" --threads "$3" 2>&1 | pss
}
echo "A/B on --device $DEVICE: old $OLD, new $NEW; $REPS rounds of $STEPS steps, alternating"
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
        k = split(o, ro, " "); split(n, rn, " ")
        for (i = 1; i <= k; ++i) { fields = split(ro[i], f, ","); for (c = 1; c <= fields; ++c) old[c, i] = f[c]
                                   split(rn[i], f, ","); for (c = 1; c <= fields; ++c) new[c, i] = f[c] }
        pairs = ""
        for (i = 1; i <= k; ++i) { a[i] = old[1, i]; b[i] = new[1, i]; pairs = pairs sprintf(" %.3f", b[i] / a[i]) }
        mo = median(a, k); mn = median(b, k)
        printf "%-6s %2d threads: old %.4g  new %.4g p-steps/s  new/old %.3f  (pairs:%s)\n", scene, t, mo, mn, mn / mo, pairs
        split("broad pairs bins mesh gat+in motion", name, " ")
        for (c = 2; c <= fields; ++c) {
          for (i = 1; i <= k; ++i) { a[i] = old[c, i]; b[i] = new[c, i] }
          mo = median(a, k); mn = median(b, k)
          printf "         %-7s old %.4f s  new %.4f s  new/old %s\n", name[c - 1], mo, mn, (mo > 0 ? sprintf("%.3f", mn / mo) : "-")
        }
      }'
  done
done
