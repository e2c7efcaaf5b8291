#!/usr/bin/env bash
# Runs the settled bed of scenes/bed/bed.yaml (20,000 beads on a floor, periodic along x and y) in
# dem and in LAMMPS on this machine, one after the other, from the same state, and prints each
# side's wall time and particle-steps per second, then `ratio <ours/theirs>` per LAMMPS style.
#
#   bench/peers/lammps/compare.sh [STEPS]     (default 2000 steps)
#   REPS=5 STYLES="classic granular" bench/peers/lammps/compare.sh
#
# dem fills the box and settles the bed once (SETTLE simulated seconds, default 0.5), saves the
# state as a checkpoint and as a LAMMPS data file (atom_style sphere); each timed dem run restarts
# from the checkpoint, each LAMMPS run reads the data file. FROM_STATE=bed.ckpt (a settled bed,
# as bench/host_scaling.sh and bench/gpu_prepare.sh save it) starts from that checkpoint instead. dem runs its full physics (Hertz,
# Mindlin, restitution damping, constant-torque rolling resistance); LAMMPS runs
#   classic   pair gran/hertz/history: Hertz normal and history tangential springs scaled by
#             sqrt(overlap R*) like ours (kn = 4/3 E*, kt = 8 G*), linear-in-velocity damping
#             gamma_n matched to our restitution damping at an overlap of 1 % of R* (the bed's
#             scale), no rolling resistance: the simplest and fastest style, less physics than ours;
#   granular  pair granular hertz/material + damping tsuji + tangential mindlin + rolling sds: the
#             same physics as ours (its rolling resistance a spring-dashpot-slider with our
#             rolling friction as its limit).
# Both at their best settings on the same cores: dem on THREADS (default 2) OpenMP threads,
# LAMMPS on as many MPI ranks split across the bed (processors * * 1), neighbour skin SKIN
# (default 0.0002 m, a tenth of a radius: of 0.0001, 0.0002, 0.0003, 0.0005, 0.001 and 0.002 m the
# fastest here, 2.1-2.2 s for 2000 classic steps against 2.3 s at 0.0005 and 2.6-2.8 s at 0.001
# and 0.002 m), no per-step computes. The mean sphere-sphere contacts per particle of each side over the window are printed
# and must agree within 10 % (the same state, at rest).
#
# Shared machines drift by 10-40 % within minutes, so the sides run REPS times (default 3) as
# back-to-back pairs: each gives a ratio, and the last lines are their medians.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/bench/peers/lammps"
STEPS=${1:-2000}
SETTLE=${SETTLE:-0.5}
REPS=${REPS:-3}
THREADS=${THREADS:-2}
SKIN=${SKIN:-0.0002}
STYLES=${STYLES:-"classic granular"}
scene="$root/scenes/bed/bed.yaml"
work="${WORK:-$(mktemp -d /tmp/dem_lammps.XXXXXX)}"
mkdir -p "$work"

# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
peer_install lmp lammps openmpi-bin
build_dem_run_bench

echo "compare: $(dem_build_desc);\
 LAMMPS $(dpkg-query -W -f '${Version}' lammps 2>/dev/null || echo '?') (Debian package, generic build)"
if [ -n "${FROM_STATE:-}" ] || [ ! -f "$work/state.ckpt" ]; then
  if [ -n "${FROM_STATE:-}" ]; then
    echo "== dem: the state of $FROM_STATE"
    start=(--from-state "$FROM_STATE")
  else
    echo "== dem: filling and settling the bed ($SETTLE s simulated, once)"
    start=(--settle "$SETTLE")
  fi
  "$bench" --scene "$scene" "${start[@]}" --warmup 0 --steps 1 --threads "$THREADS" \
    --save-state "$work/state.ckpt" --write-peer-data "$work/state.data" > "$work/settle.log"
fi

# The LAMMPS parameters from the scene's glass (bed_vars.sh)
# shellcheck source=bench/peers/lammps/bed_vars.sh
source "$here/bed_vars.sh"
lammps_bed_vars "$work/state.data" "$STEPS" "$SKIN"

median() { /usr/bin/env python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }
declare -A ratios
rm -f "$work/pairs.txt"
for rep in $(seq "$REPS"); do
  for style in $STYLES; do
    echo "== pair $rep/$REPS ($style), dem: from the settled state, $STEPS timed steps on $THREADS threads"
    "$bench" --scene "$scene" --from-state "$work/state.ckpt" --warmup 0 --steps "$STEPS" --threads "$THREADS" \
      | tee "$work/dem.$rep.$style.log"
    ours_wall=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $3}' "$work/dem.$rep.$style.log" | tail -1)
    ours_contacts=$(awk '/mean sphere-sphere contacts/{print $NF}' "$work/dem.$rep.$style.log")
    n=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $1}' "$work/dem.$rep.$style.log" | tail -1)
    echo "== pair $rep/$REPS ($style), LAMMPS: the same state, $STEPS steps on $THREADS MPI ranks"
    (cd "$work" && mpirun --allow-run-as-root --oversubscribe -np "$THREADS" lmp -in "$here/in.bed" \
      -var style "$style" "${lammps_vars[@]}" > "$work/lammps.$rep.$style.log" 2>&1) \
      || { tail -20 "$work/lammps.$rep.$style.log"; echo "compare: LAMMPS failed (log: $work/lammps.$rep.$style.log)" >&2; exit 1; }
    theirs_wall=$(awk '/^Loop time of/{print $4}' "$work/lammps.$rep.$style.log" | tail -1)
    # mean of the contacts per particle at the window's two ends
    theirs_contacts=$(awk '/^ *Step +Atoms/ {on=1; next} /^Loop time/ {on=0}
      on && $1 ~ /^[0-9]+$/ {c += $3; k++} END {if (k) printf "%.6g\n", c / k}' "$work/lammps.$rep.$style.log")
    ratio=$(/usr/bin/env python3 -c "print(f'{$theirs_wall / $ours_wall:.3f}')")
    ratios[$style]="${ratios[$style]:-} $ratio"
    /usr/bin/env python3 -c "w, v, ps = $ours_wall, $theirs_wall, $n * $STEPS
print(f'pair $rep ($style): dem {w:8.3f} s   LAMMPS {v:8.3f} s   {ps / w:10.4g} vs {ps / v:10.4g} particle-steps/s   ratio {v / w:.3f}   contacts/particle {$ours_contacts:.3f} vs {$theirs_contacts:.3f}')" \
      | tee -a "$work/pairs.txt"
  done
done
echo "== summary ($REPS pairs per style, the same settled state; work folder $work)"
cat "$work/pairs.txt"
for style in $STYLES; do
  # shellcheck disable=SC2086
  echo "ratio $style $(median ${ratios[$style]})   (pairs:${ratios[$style]})"
done
