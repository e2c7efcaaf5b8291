#!/usr/bin/env bash
# Runs the poured cubes of scenes/polyhedra/poured_cubes.yaml (150 cubes of 10 mm in a 10 cm box)
# in dem, in YADE's Polyhedra and in LAMMPS's rounded polyhedra on this machine, one after the
# other, from the same state, and prints each side's wall time and polyhedron-steps per second,
# then `ratio <theirs/ours>` per peer.
#
#   bench/peers/polyhedra/compare.sh [STEPS]     (default 1000 steps)
#   REPS=3 THREADS=2 PEERS="yade lammps" bench/peers/polyhedra/compare.sh
#
# dem pours the cubes and lets them settle once (SETTLE simulated seconds, default 0.7), and saves
# the state as a checkpoint and as a text file of polyhedra (dem_run_bench --write-polyhedra-state);
# each timed dem run restarts from the checkpoint; the peers read the text file (peer_inputs.py):
#   dem     the scene's physics: linear stiffness 2e4 N/m on the common plane's overlap, damping
#           from restitution 0.5, tangential spring with Coulomb limit 0.5; THREADS OpenMP threads;
#   yade    Polyhedra (CGAL's intersection of the two bodies), the volumetric law with
#           kn = YOUNG/2 (default YOUNG 6e8 N/m^3: a cube's static overlap on the floor as deep as
#           in dem), tangential stiffness half that, friction 0.5, NewtonIntegrator's local damping
#           DAMPING (default 0.3, as YADE's Polyhedra examples), insertion-sort collider with
#           Verlet distance SKIN (default 0.5 mm); `yade -j THREADS`;
#   lammps  pair body/rounded/polyhedron, rounded diameter ROUNDING (default 0.5 mm; the core
#           shrunk so that the faces stay where dem has them): a linear repulsion k_n = 2e4 N/m per
#           vertex-face and edge-edge contact of the rounded surfaces, normal damping c_n = 1.1 N s/m
#           (restitution 0.5 for one such contact between two cubes), tangential damping half that,
#           friction 0.5 on it (LAMMPS keeps no tangential history, so nothing holds a pile at rest:
#           the cubes creep while dem's and YADE's stay), the body wall fix for the box, neighbour
#           skin SKIN; THREADS MPI ranks.
# Shared machines drift by 10-40 % within minutes, so the sides run REPS times (default 3) in turn:
# each round gives a ratio per peer, and the last lines are their medians.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
here="$root/bench/peers/polyhedra"
STEPS=${1:-1000}
SETTLE=${SETTLE:-0.7}
REPS=${REPS:-3}
THREADS=${THREADS:-2}
SKIN=${SKIN:-0.0005}
YOUNG=${YOUNG:-6e8}
DAMPING=${DAMPING:-0.3}
ROUNDING=${ROUNDING:-0.0005}
PEERS=${PEERS:-"yade lammps"}
PYTHON=${PYTHON:-/usr/bin/python3}  # (with numpy: Debian's python3-numpy)
scene="$root/scenes/polyhedra/poured_cubes.yaml"
work="${WORK:-$(mktemp -d /tmp/dem_polyhedra.XXXXXX)}"
mkdir -p "$work"

# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
case " $PEERS " in *" lammps "*) peer_install lmp lammps openmpi-bin python3-numpy ;; esac
case " $PEERS " in *" yade "*) peer_install yade yade python3-numpy ;; esac
build_dem_run_bench

echo "compare: $(dem_build_desc);\
 YADE $(dpkg-query -W -f '${Version}' yade 2>/dev/null || echo '?'),\
 LAMMPS $(dpkg-query -W -f '${Version}' lammps 2>/dev/null || echo '?') (Debian packages)"
if [ ! -f "$work/state.ckpt" ]; then
  echo "== dem: pouring and settling the cubes ($SETTLE s simulated, once)"
  "$bench" --scene "$scene" --settle "$SETTLE" --warmup 0 --steps 1 --threads "$THREADS" \
    --save-state "$work/state.ckpt" --write-polyhedra-state "$work/state.txt" > "$work/settle.log"
fi
# the box (scene: -0.05..0.05 m in x and y, floor at 0) and LAMMPS's domain around it
"$PYTHON" "$here/peer_inputs.py" lammps "$work/state.txt" "$work/cubes.data" --rounding "$ROUNDING" \
  --box -0.06 0.06 -0.06 0.06 -0.01 0.1
# LAMMPS in mm, g, ms (peer_inputs.py): N/m -> g/ms^2 is 1e-3, N s/m -> g/ms is 1, m -> mm is 1e3
lammps_vars=(-var datafile "$work/cubes.data" -var steps "$STEPS" -var maxverts 8 -var dt 0.02
  -var k_n 20 -var k_wall 20 -var c_n 1.1 -var c_t 0.55 -var mu 0.5 -var cut_inner 0.01
  -var skin "$("$PYTHON" -c "print($SKIN * 1e3)")" -var gravity 9.81e-3
  -var xlo -50 -var xhi 50 -var ylo -50 -var yhi 50 -var zlo 0)

median() { "$PYTHON" -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }
declare -A ratios
rm -f "$work/rounds.txt"
for rep in $(seq "$REPS"); do
  echo "== round $rep/$REPS, dem: from the settled state, $STEPS timed steps on $THREADS threads"
  "$bench" --scene "$scene" --from-state "$work/state.ckpt" --warmup 0 --steps "$STEPS" --threads "$THREADS" \
    | tee "$work/dem.$rep.log"
  ours=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $3}' "$work/dem.$rep.log" | tail -1)
  n=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $1}' "$work/dem.$rep.log" | tail -1)
  line="round $rep: dem $(printf '%.3f' "$ours") s"
  for peer in $PEERS; do
    echo "== round $rep/$REPS, $peer: the same state, $STEPS steps on $THREADS threads or ranks"
    case $peer in
      yade)
        (cd "$work" && yade -j "$THREADS" -n -x "$here/yade_cubes.py" "$work/state.txt" "$STEPS" "$YOUNG" "$DAMPING" "$SKIN" \
          > "$work/yade.$rep.log" 2>&1) || { tail -20 "$work/yade.$rep.log"; echo "compare: YADE failed" >&2; exit 1; }
        grep '^yade:' "$work/yade.$rep.log"
        theirs=$(awk '/^yade:/{print $5}' "$work/yade.$rep.log") ;;
      lammps)
        (cd "$work" && mpirun --allow-run-as-root --oversubscribe -np "$THREADS" lmp -in "$here/in.cubes" -log none \
          "${lammps_vars[@]}" > "$work/lammps.$rep.log" 2>&1) \
          || { tail -20 "$work/lammps.$rep.log"; echo "compare: LAMMPS failed" >&2; exit 1; }
        grep -A2 '^ *Step' "$work/lammps.$rep.log"
        theirs=$(awk '/^Loop time of/{print $4}' "$work/lammps.$rep.log" | tail -1) ;;
      *) echo "compare: unknown peer $peer (yade, lammps)" >&2; exit 2 ;;
    esac
    ratio=$("$PYTHON" -c "print(f'{$theirs / $ours:.2f}')")
    ratios[$peer]="${ratios[$peer]:-} $ratio"
    line+="   $peer $(printf '%.3f' "$theirs") s (ratio $ratio)"
  done
  echo "$line   ($("$PYTHON" -c "print(f'{$n * $STEPS / $ours:.4g}')") polyhedron-steps/s in dem)" | tee -a "$work/rounds.txt"
done
echo "== summary ($REPS rounds of $STEPS steps, $n cubes, the same settled state; work folder $work)"
cat "$work/rounds.txt"
for peer in $PEERS; do
  # shellcheck disable=SC2086
  echo "ratio $peer $(median ${ratios[$peer]})   (rounds:${ratios[$peer]})"
done
