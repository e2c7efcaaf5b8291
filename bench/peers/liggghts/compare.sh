#!/usr/bin/env bash
# Runs the same ribbon mixer in dem and in LIGGGHTS on this machine, one after the other, and
# prints each side's wall time and particle-steps per second, then `ratio <ours/theirs>`.
#
#   bench/peers/liggghts/compare.sh [N] [STEPS]      (defaults: 29559 particles, 1000 steps)
#
# Both start from the same state: dem fills and settles the mixer (SETTLE simulated seconds,
# default 0.25), writes the state as a LIGGGHTS data file, then times STEPS steps; LIGGGHTS reads
# that state (and the blade angle) and runs the same STEPS steps. So the speed is not bought with
# a different problem, it also compares the mean sphere-sphere contacts per particle and the mean
# shaft torque over the window; both should agree within 10 %. Cores: THREADS (default 2) OpenMP
# threads for dem, as many MPI ranks for LIGGGHTS.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/bench/peers/liggghts"
N=${1:-29559}
STEPS=${2:-1000}
SETTLE=${SETTLE:-0.25}
THREADS=${THREADS:-2}
OMEGA=18.85
work="${WORK:-$(mktemp -d /tmp/dem_liggghts.XXXXXX)}"
mkdir -p "$work"

if ! command -v liggghts >/dev/null || ! command -v mpirun >/dev/null; then
  echo "compare: installing liggghts and openmpi-bin (Debian packages)" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends liggghts openmpi-bin
fi
"$root/tools/install-deps"
build="$root/${DEM_BUILD_DIR:-build}"
[ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j "$(nproc)" --target dem_run_bench >/dev/null
[ -f "$root/scenes/mixer/blades.stl" ] || python3 "$root/tools/mixer_gen.py" >/dev/null

echo "== dem: $N particles, settle $SETTLE s, then $STEPS timed steps on $THREADS threads"
"$build/bench/dem_run_bench" --scene "$root/scenes/mixer/mixer.yaml" --n "$N" --settle "$SETTLE" --warmup 0 \
  --steps "$STEPS" --threads "$THREADS" --torque-body blades --write-liggghts-data "$work/state.data" \
  | tee "$work/dem.log"
ours_wall=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $3}' "$work/dem.log" | tail -1)
ours_torque=$(awk '/mean torque on blades/{print $8}' "$work/dem.log")
angle=$(awk '/blade angle at window start/{for(i=1;i<=NF;i++) if($i=="start") print $(i+1)}' "$work/dem.log")
ours_contacts=$(awk '/mean sphere-sphere contacts/{print $NF}' "$work/dem.log")

echo "== LIGGGHTS: the same state, $STEPS steps on $THREADS MPI ranks"
period=$(python3 -c "import math; print(2*math.pi/$OMEGA)")
(cd "$work" && mpirun --allow-run-as-root --oversubscribe -np "$THREADS" liggghts -in "$here/in.mixer" \
  -var datafile "$work/state.data" -var steps "$STEPS" -var angle "$angle" -var period "$period" \
  -var drum "$root/scenes/mixer/drum.stl" -var blades "$root/scenes/mixer/blades.stl" > "$work/liggghts.log" 2>&1) \
  || { tail -20 "$work/liggghts.log"; echo "compare: LIGGGHTS failed (log: $work/liggghts.log)" >&2; exit 1; }
theirs_wall=$(awk '/^Loop time of/{print $4}' "$work/liggghts.log" | tail -1)
read -r theirs_contacts theirs_torque < <(awk '
  /^ *Step +Atoms/ {on=1; next}
  /^Loop time/ {on=0}
  on && $1 ~ /^[0-9]+$/ && NF >= 4 {if (n++ > 0) {c += $3; t += $4; k++}}
  END {if (k) printf "%.6g %.6g\n", c/k, t/k}' "$work/liggghts.log")

python3 - "$N" "$STEPS" "$ours_wall" "$theirs_wall" "$ours_contacts" "$theirs_contacts" "$ours_torque" "$theirs_torque" <<'PY'
import sys
n, steps = int(sys.argv[1]), int(sys.argv[2])
ow, tw, oc, tc, ot, tt = map(float, sys.argv[3:9])
ops, tps = n * steps / ow, n * steps / tw
print(f"dem       wall {ow:8.2f} s   {ops:10.4g} particle-steps/s   contacts/particle {oc:6.3f}   shaft torque {ot:9.4f} N m")
print(f"LIGGGHTS  wall {tw:8.2f} s   {tps:10.4g} particle-steps/s   contacts/particle {tc:6.3f}   shaft torque {tt:9.4f} N m")
dc, dt = abs(oc - tc) / abs(tc), abs(ot - tt) / max(abs(tt), 1e-12)
print(f"physics: contacts differ by {100*dc:.1f} %, torque by {100*dt:.1f} % ({'within' if max(dc, dt) <= 0.10 else 'NOT within'} 10 %)")
print(f"ratio {ops/tps:.3f}")
PY
