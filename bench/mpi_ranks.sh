#!/usr/bin/env bash
# Ranks against threads: the settled bed (scenes/bed, 20,000 beads, periodic sides) and the ribbon
# mixer (scenes/mixer, 29,559 spheres settled 0.25 s) run with `dem run` from saved states, for each
# layout of LAYOUTS ("RANKSxTHREADS", default "1x2 2x1": one process with two threads against two
# ranks of one thread), REPS rounds alternating the layouts (a drifting machine drifts for all
# alike). Prints, per scene and layout, the median particle-steps/s (summary.json, the whole
# `dem run` with its output) and its ratio to the first layout, and for the ranks the ghosts per
# owned particle, the ghost bytes sent per step (all ranks), the hand-overs per 1000 steps, and the
# shares of rank 0's wall time spent in the hand-overs and in the ghost updates (their waits included).
#   bench/mpi_ranks.sh                       (LAYOUTS="1x4 2x2 4x1" REPS=5 STEPS=2000 ... to vary)
# The states are made once with dem_run_bench (as bench/host_scaling.sh makes them) in WORK.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
LAYOUTS=${LAYOUTS:-"1x2 2x1"}
REPS=${REPS:-3}
STEPS=${STEPS:-1000}
MPIEXEC=${MPIEXEC:-"mpirun --oversubscribe --allow-run-as-root"}
work="${WORK:-$(mktemp -d /tmp/dem_mpi_ranks.XXXXXX)}"
mkdir -p "$work"
# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
build_dem_run_bench
# `dem` beside the build's dem_run_bench, or DEM (a carried binary: DEM_RUN_BENCH's folder by default)
if [ -n "$build" ]; then dem=${DEM:-$build/dem}; else dem=${DEM:-$(dirname "$bench")/dem}; fi
[ -f "$root/scenes/mixer/blades.stl" ] || python3 "$root/tools/mixer_gen.py" >/dev/null
bed="$root/scenes/bed/bed.yaml"
mixer="$root/scenes/mixer/mixer.yaml"
if [ ! -f "$work/bed.ckpt" ]; then
  echo "== settling the bed (0.5 s) and the mixer (0.25 s) once" >&2
  "$bench" --scene "$bed" --settle 0.5 --warmup 0 --steps 1 --save-state "$work/bed.ckpt" > /dev/null
  "$bench" --scene "$mixer" --n 29559 --settle 0.25 --warmup 0 --steps 1 --save-state "$work/mixer.ckpt" > /dev/null
fi
run_one() {  # scene checkpoint ranks threads out
  local scene=$1 ckpt=$2 ranks=$3 threads=$4 out=$5 launch=()
  [ "$ranks" -gt 1 ] && read -r -a launch <<< "$MPIEXEC -np $ranks"
  "${launch[@]}" "$dem" run "$scene" --restart "$ckpt" --threads "$threads" -q --out "$out" \
    --set simulation.end_time="$(end_time_after "$ckpt" "$STEPS")" --set output.vtk=false
  python3 - "$out/summary.json" "$STEPS" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1])); m = s.get("mpi", {})
# (summary.json's "steps" counts from t = 0; the run from the checkpoint took STEPS)
print(s["particle_steps_per_second"], m.get("ghosts_per_particle", 0), m.get("ghost_bytes_per_step", 0),
      1000 * m.get("hand_overs", 0) / int(sys.argv[2]),
      m.get("hand_over_seconds", 0) / max(1e-9, s["wall_seconds"]), m.get("ghost_update_seconds", 0) / max(1e-9, s["wall_seconds"]))
EOF
}
declare -A runs extra
for rep in $(seq "$REPS"); do
  for layout in $LAYOUTS; do
    ranks=${layout%x*} threads=${layout#*x}
    for scene in bed mixer; do
      file=$bed ckpt=$work/bed.ckpt
      [ "$scene" = mixer ] && file=$mixer ckpt=$work/mixer.ckpt
      read -r pss ghosts bytes handovers ho_share gh_share < <(run_one "$file" "$ckpt" "$ranks" "$threads" "$work/out_${scene}_$layout")
      runs[$scene.$layout]+=" $pss"
      extra[$scene.$layout]="$ghosts $bytes $handovers $ho_share $gh_share"
    done
  done
done
echo "$STEPS steps per run from the saved states, $REPS rounds alternating the layouts; medians (all runs in brackets)"
printf "%-6s %7s %13s %7s %14s %13s %15s %9s %9s   %s\n" scene layout p-steps/s ratio ghosts/particle ghost_B/step hand-overs/1000 hand-over ghosts runs
for scene in bed mixer; do
  first=""
  for layout in $LAYOUTS; do
    # shellcheck disable=SC2086
    med=$(python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" ${runs[$scene.$layout]})
    [ -z "$first" ] && first=$med
    read -r ghosts bytes handovers ho_share gh_share <<< "${extra[$scene.$layout]}"
    python3 -c "print('%-6s %7s %13.4g %7.2f %14.3f %13.0f %15.1f %8.0f%% %8.0f%%   (%s)' % ('$scene', '$layout', $med, $med / $first, $ghosts, $bytes, $handovers, 100 * $ho_share, 100 * $gh_share, '${runs[$scene.$layout]# }'))"
  done
done
