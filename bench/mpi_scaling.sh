#!/usr/bin/env bash
# Strong and weak scaling of `dem run` under mpirun, on the settled bed (scenes/bed) repeated
# K x K times along its periodic axes (dem_run_bench --tile: the same contacts and histories, 20,000
# K^2 beads, no settling), each run STEPS steps (default 500; the first hand-over and list builds
# included) from the repeated state with THREADS threads a rank:
#   strong  K = STRONG_K (default 7: 980,000 beads) on each rank count of RANKS (default
#           "1 2 4 8 16"): particle-steps/s, speed-up over the first and parallel efficiency;
#   weak    each K of WEAK_K (default "2 3 5 9") on round(K^2 / 5) ranks, about 100,000 beads a
#           rank (80,000 to 107,000: 1, 2, 5 and 16 ranks): efficiency, particle-steps/s a rank over
#           the first run's.
# Each line adds summary.json's mpi block: ghosts per particle, ghost bytes per step, hand-overs and
# the imbalance. On 2 cores: STRONG_K=2 RANKS="1 2" WEAK_K="2 3" (oversubscribed beyond 2 ranks).
# RANKS="" leaves the strong table out, WEAK_K="" the weak one. A failed or stopped run stops the
# script with its message.
# PEERS (default "lammps liggghts"; "" for none) run the same state on the same rank counts right
# after ours, each from a data file of it (dem_run_bench --write-peer-data) at its best settings:
#   lammps    LAMMPS pair gran/hertz/history (bench/peers/lammps/in.bed, style classic: Hertz and a
#             history spring, no rolling resistance, less physics than ours), skin SKIN;
#   liggghts  LIGGGHTS gran hertz with history and constant-torque rolling friction
#             (bench/peers/liggghts/in.bed: the scene's physics), skin SKIN;
# both split across the bed (processors * * 1) and launched as ours (MPIEXEC), SKIN 0.0002 m (a
# tenth of a radius: the fastest for LAMMPS, bench/peers/lammps/compare.sh; for LIGGGHTS within the
# noise of 0.0001 to 0.001 m, bench/results/dev-2core-epyc/mpi_scaling.md). Their
# particle-steps/s come from their loop time (the setup and first neighbour build left out; ours
# include the first hand-over and list builds), each with its efficiency and dem's ratio to it.
# contacts/p, the mean touching pairs a particle over the window, shows that the three ran the same
# state (ours under mpirun count each rank's work: a pair across a cut on both sides).
# PEER_RANKS (default RANKS) limits the strong rank counts the peers run. The peers come from the
# Debian packages lammps and liggghts, or from bench/peers/pack.sh's bundle (peer_unpack) on PATH.
#   WORK=/tmp/dms bench/mpi_scaling.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
STRONG_K=${STRONG_K:-7}
RANKS=${RANKS-"1 2 4 8 16"}
WEAK_K=${WEAK_K-"2 3 5 9"}
THREADS=${THREADS:-1}
STEPS=${STEPS:-500}
PEERS=${PEERS-"lammps liggghts"}
PEER_RANKS=${PEER_RANKS:-$RANKS}
SKIN=${SKIN:-0.0002}
MPIEXEC=${MPIEXEC:-"mpirun --oversubscribe --allow-run-as-root --bind-to none"}
work="${WORK:-$(mktemp -d /tmp/dem_mpi_scaling.XXXXXX)}"
mkdir -p "$work"
# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
build_dem_run_bench
for peer in $PEERS; do
  case $peer in
    lammps) peer_install lmp lammps openmpi-bin ;;
    liggghts) peer_install liggghts liggghts openmpi-bin ;;
    *) echo "mpi_scaling: PEERS: unknown peer '$peer' (lammps, liggghts)" >&2; exit 2 ;;
  esac
done
# shellcheck source=bench/peers/lammps/bed_vars.sh
source "$root/bench/peers/lammps/bed_vars.sh"
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
peer_data() {  # K: the tiled state as a LAMMPS/LIGGGHTS data file
  local k=$1
  [ -f "$work/bed_$k.data" ] && return 0
  if ! "$bench" --scene "$work/bed_$k.yaml" --from-state "$work/bed_$k.ckpt" --warmup 0 --steps 1 --threads 1 \
    --write-peer-data "$work/bed_$k.data.part" > /dev/null || ! mv "$work/bed_$k.data.part" "$work/bed_$k.data"; then
    echo "mpi_scaling: could not write $work/bed_$k.data" >&2
    return 1
  fi
}
run_peer() {  # PEER K RANKS -> "p-steps/s contacts/particle"
  local peer=$1 k=$2 ranks=$3 log="$work/${1}_${2}_${3}.log" launch=()
  peer_data "$k" || return 1
  read -r -a launch <<< "$MPIEXEC -np $ranks"  # (as ours: the same binding)
  case $peer in
    lammps)
      lammps_bed_vars "$work/bed_$k.data" "$STEPS" "$SKIN"
      (cd "$work" && "${launch[@]}" lmp -in "$root/bench/peers/lammps/in.bed" -var style classic "${lammps_vars[@]}" \
        -log none > "$log" 2>&1) ;;
    liggghts)
      (cd "$work" && "${launch[@]}" liggghts -in "$root/bench/peers/liggghts/in.bed" -var datafile "$work/bed_$k.data" \
        -var steps "$STEPS" -var skin "$SKIN" -log none > "$log" 2>&1) ;;
  esac || { tail -5 "$log" >&2; echo "mpi_scaling: $peer failed on $ranks ranks (log: $log)" >&2; return 1; }
  # "Loop time of T on P procs for S steps with N atoms"; contacts per particle: the thermo lines' mean
  awk '/^Loop time of/ {for (i = 5; i < NF; ++i) {if ($i == "with") n = $(i + 1); if ($i == "steps") s = $(i - 1)}
      rate = n * s / $4}
    /^ *Step +Atoms/ {on = 1; next} /^Loop time/ {on = 0} on && $1 ~ /^[0-9]+$/ {c += $3; k++}
    END {if (!rate || !k) exit 1; printf "%.6g %.4f\n", rate, c / k}' "$log" ||
    { echo "mpi_scaling: no loop time in $log" >&2; return 1; }
}
run_one() {  # K ranks -> "particles p-steps/s wall/step ghosts bytes hand-overs imbalance contacts/particle"
  local k=$1 ranks=$2 launch=() out="$work/out_${1}_${2}"
  [ "$ranks" -gt 1 ] && read -r -a launch <<< "$MPIEXEC -np $ranks"
  rm -rf "$out"
  "${launch[@]}" "$dem" run "$work/bed_$k.yaml" --restart "$work/bed_$k.ckpt" --threads "$THREADS" -q --out "$out" \
    --set simulation.end_time="$(end_time_after "$work/bed_$k.ckpt" "$STEPS")" --set output.vtk=false >&2 ||
    { echo "mpi_scaling: dem failed on $ranks ranks (output: $out)" >&2; return 1; }
  python3 - "$out/summary.json" "$STEPS" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1])); m = s.get("mpi", {})
if s["status"] != "completed":
    sys.exit(f"mpi_scaling: dem {s['status']}: {s['reason']} ({sys.argv[1]})")
print(s["particles"], s["particle_steps_per_second"], s["wall_seconds"] / int(sys.argv[2]),
      m.get("ghosts_per_particle", 0), m.get("ghost_bytes_per_step", 0), m.get("hand_overs", 0), m.get("imbalance", 1),
      s["contacts"]["pair_contacts_per_particle"])
EOF
}
# A table row: ENGINE RANKS PARTICLES P-STEPS/S FIRST-P-STEPS/S FIRST-RANKS DEM-P-STEPS/S
# [GHOSTS BYTES HAND-OVERS IMBALANCE] CONTACTS; speed-up over the engine's first row, efficiency
# that over the ratio of their ranks (strong and weak alike)
row() {
  python3 - "$@" <<'EOF'
import sys
a = sys.argv[1:]
engine, r, n, pss, f, r0, ours = a[0], int(a[1]), int(a[2]), float(a[3]), float(a[4]), int(a[5]), float(a[6])
s = pss / f
ratio = "-" if engine == "dem" else "%.2f" % (ours / pss)
mpi = ("%9.3f %12.0f %10d %9.3f" % (float(a[7]), float(a[8]), int(a[9]), float(a[10]))) if len(a) > 8 else "%9s %12s %10s %9s" % ("", "", "", "")
print("%-8s %5d %10d %12.4g %9.2f %9.0f%% %9s %s %10.3f" % (engine, r, n, pss, s, 100 * s * r0 / r, ratio, mpi, float(a[-1])))
EOF
}
in_list() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
header="%-8s %5s %10s %12s %9s %10s %9s %9s %12s %10s %9s %10s\n"
declare -A first
table() {  # K RANKS PEER-RANKS: dem, then each peer, on each rank count
  local k=$1 r=$2 peer_ranks=$3 line n pss ghosts bytes ho imb contacts ppss pcontacts peer
  tiled "$k"
  line=$(run_one "$k" "$r") || exit 1
  read -r n pss _ ghosts bytes ho imb contacts <<< "$line"
  [ -z "${first[dem]:-}" ] && first[dem]="$pss $r"
  # shellcheck disable=SC2086
  row dem "$r" "$n" "$pss" ${first[dem]} "$pss" "$ghosts" "$bytes" "$ho" "$imb" "$contacts"
  in_list "$r" "$peer_ranks" || return 0
  for peer in $PEERS; do
    line=$(run_peer "$peer" "$k" "$r") || exit 1
    read -r ppss pcontacts <<< "$line"
    [ -z "${first[$peer]:-}" ] && first[$peer]="$ppss $r"
    # shellcheck disable=SC2086
    row "$peer" "$r" "$n" "$ppss" ${first[$peer]} "$pss" "$pcontacts"
  done
}
heading() {  # TITLE: a table's title and column names
  echo "$1, $STEPS steps, $THREADS thread(s) a dem rank, the peers on as many ranks"
  # shellcheck disable=SC2059
  printf "$header" engine ranks particles p-steps/s speed-up efficiency dem/peer ghosts/p ghost_B/step hand-overs imbalance contacts/p
}
[ -n "$RANKS" ] && heading "strong: the bed ${STRONG_K}x${STRONG_K}"
for r in $RANKS; do table "$STRONG_K" "$r" "$PEER_RANKS"; done
[ -n "$WEAK_K" ] && heading "weak: about 100,000 beads a rank"
first=()
for k in $WEAK_K; do
  r=$(python3 -c "print(max(1, round($k * $k / 5)))")
  table "$k" "$r" "$r"
done
