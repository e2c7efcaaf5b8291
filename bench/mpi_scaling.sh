#!/usr/bin/env bash
# Strong and weak scaling of `dem run` under mpirun, on the settled bed (scenes/bed) repeated
# K x K times along its periodic axes (dem_run_bench --tile: the same contacts and histories, 20,000
# K^2 beads, no settling), each run STEPS steps (default 500; the first hand-over and list builds
# included) from the repeated state with THREADS threads a rank:
#   strong  K = STRONG_K (default 7: 980,000 beads) on each rank count of RANKS (default
#           "1 2 4 8 16"): particle-steps/s, speed-up over the first and parallel efficiency;
#   weak    each K of WEAK_K (default "2 3 5 9") on round(K^2 / 5) ranks, about 100,000 beads a
#           rank (80,000 to 107,000: 1, 2, 5 and 16 ranks): wall time per step over the first's.
# Each line adds summary.json's mpi block: ghosts per particle, ghost bytes per step, hand-overs and
# the imbalance. On 2 cores: STRONG_K=2 RANKS="1 2" WEAK_K="2 3" (oversubscribed beyond 2 ranks).
#   WORK=/tmp/dms bench/mpi_scaling.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
STRONG_K=${STRONG_K:-7}
RANKS=${RANKS:-"1 2 4 8 16"}
WEAK_K=${WEAK_K:-"2 3 5 9"}
THREADS=${THREADS:-1}
STEPS=${STEPS:-500}
MPIEXEC=${MPIEXEC:-"mpirun --oversubscribe --allow-run-as-root --bind-to none"}
work="${WORK:-$(mktemp -d /tmp/dem_mpi_scaling.XXXXXX)}"
mkdir -p "$work"
# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
build_dem_run_bench
# `dem` beside the build's dem_run_bench, or DEM (a carried binary: DEM_RUN_BENCH's folder by default)
if [ -n "$build" ]; then dem=${DEM:-$build/dem}; else dem=${DEM:-$(dirname "$bench")/dem}; fi
bed="$root/scenes/bed/bed.yaml"
if [ ! -f "$work/bed.ckpt" ]; then
  echo "== settling the bed (0.5 s) once" >&2
  "$bench" --scene "$bed" --settle 0.5 --warmup 0 --steps 1 --save-state "$work/bed.ckpt" > /dev/null
fi
# The bed K x K times: its state, and its scene (the period and the floor K times wider, computed
# as dem_run_bench's --tile computes them, so that the checkpoint fits).
tiled() {  # K
  local k=$1
  if [ ! -f "$work/bed_$k.ckpt" ]; then
    if [ "$k" = 1 ]; then cp "$work/bed.ckpt" "$work/bed_1.ckpt"; else
      "$bench" --scene "$bed" --from-state "$work/bed.ckpt" --tile "$k" --warmup 0 --steps 1 --save-state "$work/bed_$k.ckpt" > /dev/null
    fi
  fi
  python3 - "$bed" "$k" "$work/bed_$k.yaml" <<'EOF'
import re, sys
src, k, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(src).read()
w = repr(0.0 + k * (0.1 - 0.0))  # lo + k * length, as the tiling computes it
for old, new in (("max: [0.1, 0.1, 0.3]", f"max: [{w}, {w}, 0.3]"),
                 ("vertices: [[0, 0, 0], [0.1, 0, 0], [0.1, 0.1, 0], [0, 0.1, 0]]",
                  f"vertices: [[0, 0, 0], [{w}, 0, 0], [{w}, {w}, 0], [0, {w}, 0]]")):
    assert old in text, "scenes/bed/bed.yaml changed: update bench/mpi_scaling.sh"
    text = text.replace(old, new)
open(out, "w").write(text.replace("name: bed", f"name: bed_{k}x{k}"))
EOF
}
run_one() {  # K ranks -> "particles p-steps/s wall/step ghosts bytes hand-overs imbalance"
  local k=$1 ranks=$2 launch=() out="$work/out_${1}_${2}"
  [ "$ranks" -gt 1 ] && read -r -a launch <<< "$MPIEXEC -np $ranks"
  "${launch[@]}" "$dem" run "$work/bed_$k.yaml" --restart "$work/bed_$k.ckpt" --threads "$THREADS" -q --out "$out" \
    --set simulation.end_time="$(end_time_after "$work/bed_$k.ckpt" "$STEPS")" --set output.vtk=false
  python3 - "$out/summary.json" "$STEPS" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1])); m = s.get("mpi", {})
print(s["particles"], s["particle_steps_per_second"], s["wall_seconds"] / int(sys.argv[2]),
      m.get("ghosts_per_particle", 0), m.get("ghost_bytes_per_step", 0), m.get("hand_overs", 0), m.get("imbalance", 1))
EOF
}
echo "strong: the bed ${STRONG_K}x${STRONG_K}, $STEPS steps, $THREADS thread(s) a rank"
printf "%6s %10s %12s %9s %10s %9s %12s %10s %9s\n" ranks particles p-steps/s speed-up efficiency ghosts/p ghost_B/step hand-overs imbalance
tiled "$STRONG_K"
first=""
for r in $RANKS; do
  read -r n pss wall ghosts bytes ho imb < <(run_one "$STRONG_K" "$r")
  [ -z "$first" ] && first="$pss $r"
  python3 -c "
f, r0 = map(float, '$first'.split()); s = $pss / f
print('%6d %10d %12.4g %9.2f %9.0f%% %9.3f %12.0f %10d %9.3f' % ($r, $n, $pss, s, 100 * s * r0 / $r, $ghosts, $bytes, $ho, $imb))"
done
echo "weak: about 100,000 beads a rank, $STEPS steps, $THREADS thread(s) a rank"
printf "%4s %6s %10s %12s %12s %10s %9s %12s %10s %9s\n" K ranks particles per_rank ms/step efficiency ghosts/p ghost_B/step hand-overs imbalance
first=""
for k in $WEAK_K; do
  r=$(python3 -c "print(max(1, round($k * $k / 5)))")
  tiled "$k"
  read -r n pss wall ghosts bytes ho imb < <(run_one "$k" "$r")
  [ -z "$first" ] && first="$wall $n $r"
  python3 -c "
w0, n0, r0 = map(float, '$first'.split())
# efficiency: the first run's time per step over its beads a rank, over this one's
e = (w0 / (n0 / r0)) / ($wall / ($n / $r))
print('%4d %6d %10d %12d %12.2f %9.0f%% %9.3f %12.0f %10d %9.3f' % ($k, $r, $n, $n // $r, 1e3 * $wall, 100 * e, $ghosts, $bytes, $ho, $imb))"
done
