#!/usr/bin/env bash
# Runs the same ribbon mixer in dem and in LIGGGHTS on this machine, one after the other, and
# prints each side's wall time and particle-steps per second, then `ratio <ours/theirs>`.
#
#   bench/peers/liggghts/compare.sh [N] [STEPS]      (defaults: 29559 particles, 1000 steps)
#   REPS=5 bench/peers/liggghts/compare.sh          (pairs of runs, default 3)
#
# Both start from the same state: dem fills and settles the mixer (SETTLE simulated seconds,
# default 0.25; or takes FROM_STATE=mixer.ckpt, a checkpoint of N spheres such as
# bench/host_scaling.sh and bench/gpu_prepare.sh save), writes the state as a LIGGGHTS data file,
# then times STEPS steps; LIGGGHTS reads
# that state (and the blade angle) and runs the same STEPS steps. So the speed is not bought with
# a different problem, it also compares the mean sphere-sphere contacts per particle and the mean
# shaft torque over the window; both should agree within 10 %. Cores: THREADS (default 2) OpenMP
# threads for dem, as many MPI ranks for LIGGGHTS (split along the drum axis, `processors * 1 1`:
# of the three splits the fastest; LIGGGHTS 3.8 has no `balance` command).
#
# Shared machines drift by 10-40 % within minutes, so the two sides run REPS times as back-to-back
# pairs (dem, then LIGGGHTS): each pair gives a ratio, and the last line is their median. dem is
# deterministic (same state, same window every time: its settling is repeated, untimed).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/bench/peers/liggghts"
N=${1:-29559}
STEPS=${2:-1000}
SETTLE=${SETTLE:-0.25}
REPS=${REPS:-3}
THREADS=${THREADS:-2}
OMEGA=18.85
work="${WORK:-$(mktemp -d /tmp/dem_liggghts.XXXXXX)}"
mkdir -p "$work"

# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
peer_install liggghts liggghts openmpi-bin
build_dem_run_bench
[ -f "$root/scenes/mixer/blades.stl" ] || python3 "$root/tools/mixer_gen.py" >/dev/null

echo "compare: $(dem_build_desc);\
 LIGGGHTS $(dpkg-query -W -f '${Version}' liggghts 2>/dev/null || echo '?') (Debian package, generic build)"
period=$(python3 -c "import math; print(2*math.pi/$OMEGA)")
ratios=()
rm -f "$work/pairs.txt"
start=(--settle "$SETTLE")
from="settle $SETTLE s"
if [ -n "${FROM_STATE:-}" ]; then
  start=(--from-state "$FROM_STATE")
  from="from $FROM_STATE"
fi
for rep in $(seq "$REPS"); do
  echo "== pair $rep/$REPS, dem: $N particles, $from, then $STEPS timed steps on $THREADS threads"
  data_opt=()
  [ "$rep" -eq 1 ] && data_opt=(--write-liggghts-data "$work/state.data")
  "$bench" --scene "$root/scenes/mixer/mixer.yaml" --n "$N" "${start[@]}" --warmup 0 \
    --steps "$STEPS" --threads "$THREADS" --torque-body blades "${data_opt[@]}" | tee "$work/dem.$rep.log"
  ours_wall=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $3}' "$work/dem.$rep.log" | tail -1)
  if [ "$rep" -eq 1 ]; then
    ours_torque=$(awk '/mean torque on blades/{print $8}' "$work/dem.1.log")
    angle=$(awk '/blade angle at window start/{for(i=1;i<=NF;i++) if($i=="start") print $(i+1)}' "$work/dem.1.log")
    ours_contacts=$(awk '/mean sphere-sphere contacts/{print $NF}' "$work/dem.1.log")
  fi

  echo "== pair $rep/$REPS, LIGGGHTS: the same state, $STEPS steps on $THREADS MPI ranks"
  (cd "$work" && mpirun --allow-run-as-root --oversubscribe -np "$THREADS" liggghts -in "$here/in.mixer" \
    -var datafile "$work/state.data" -var steps "$STEPS" -var angle "$angle" -var period "$period" \
    -var drum "$root/scenes/mixer/drum.stl" -var blades "$root/scenes/mixer/blades.stl" > "$work/liggghts.$rep.log" 2>&1) \
    || { tail -20 "$work/liggghts.$rep.log"; echo "compare: LIGGGHTS failed (log: $work/liggghts.$rep.log)" >&2; exit 1; }
  theirs_wall=$(awk '/^Loop time of/{print $4}' "$work/liggghts.$rep.log" | tail -1)
  if [ "$rep" -eq 1 ]; then
    read -r theirs_contacts theirs_torque < <(awk '
      /^ *Step +Atoms/ {on=1; next}
      /^Loop time/ {on=0}
      on && $1 ~ /^[0-9]+$/ && NF >= 4 {if (n++ > 0) {c += $3; t += $4; k++}}
      END {if (k) printf "%.6g %.6g\n", c/k, t/k}' "$work/liggghts.1.log")
  fi
  ratios+=("$(python3 -c "print(f'{$theirs_wall / $ours_wall:.3f}')")")
  python3 -c "w, v, ps = $ours_wall, $theirs_wall, $N * $STEPS
print(f'pair $rep: dem {w:8.3f} s   LIGGGHTS {v:8.3f} s   {ps / w:10.4g} vs {ps / v:10.4g} particle-steps/s   ratio {v / w:.3f}')" \
    | tee -a "$work/pairs.txt"
done

echo "== summary ($REPS pairs; physics from pair 1, the same state on both sides)"
cat "$work/pairs.txt"
python3 - "$N" "$STEPS" "$ours_contacts" "$theirs_contacts" "$ours_torque" "$theirs_torque" "${ratios[@]}" <<'PY'
import statistics, sys
n, steps = int(sys.argv[1]), int(sys.argv[2])
oc, tc, ot, tt = map(float, sys.argv[3:7])
ratios = [float(r) for r in sys.argv[7:]]
print(f"dem       contacts/particle {oc:6.3f}   shaft torque {ot:9.4f} N m")
print(f"LIGGGHTS  contacts/particle {tc:6.3f}   shaft torque {tt:9.4f} N m")
dc, dt = abs(oc - tc) / abs(tc), abs(ot - tt) / max(abs(tt), 1e-12)
print(f"physics: contacts differ by {100*dc:.1f} %, torque by {100*dt:.1f} % ({'within' if max(dc, dt) <= 0.10 else 'NOT within'} 10 %)")
print(f"ratios of the pairs: {' '.join(f'{r:.3f}' for r in ratios)} (min {min(ratios):.3f}, max {max(ratios):.3f})")
print(f"ratio {statistics.median(ratios):.3f}")
PY
