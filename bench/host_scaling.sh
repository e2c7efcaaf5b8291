#!/usr/bin/env bash
# The host engine's scaling, in two tables:
#   threads  particle-steps/s of the settled bed (scenes/bed, 20,000 beads) and of the ribbon mixer
#            (scenes/mixer, 29,559 spheres, settled 0.25 s) for each thread count in THREADS
#            (default "1 2"; "1 2 4 8 16" on a 16-core machine), as REPS rounds that alternate the
#            thread counts (a drifting machine then drifts for all of them alike); speed-up over one
#            thread and parallel efficiency (speed-up / threads) from the medians;
#   size     the settled bed repeated K x K times along its periodic axes (dem_run_bench --tile:
#            the same contacts and histories, 20,000 K^2 beads) for each K in TILES (default
#            "1 2 4 8 16", up to 5.1 million beads): particle-steps/s, nanoseconds per particle-step
#            against the smallest, the engine state's bytes per particle and the resident memory per
#            particle after the window;
#   size_ab  the same ratio measured in one process (dem_run_bench --size-ab): for each K > 1 in
#            TILES, the bed and its K x K repetition stepped in turn, SIZE_PAIRS pairs of blocks of
#            equal particle-steps (SIZE_STEPS steps of the large one in all), so that the machine's
#            drift (tens of percent from minute to minute on a shared VM) falls on both alike: the
#            cost per particle-step of the large over the small, in total and as the median of pairs.
#   bench/host_scaling.sh                 (threads and size; TABLES="threads", "size" or "size_ab")
# Each state is made once (the bed settled 0.5 s, the mixer 0.25 s) and saved as a checkpoint that
# every timed run starts from.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
THREADS=${THREADS:-"1 2"}
TILES=${TILES:-"1 2 4 8 16"}
REPS=${REPS:-3}
STEPS=${STEPS:-600}
SIZE_STEPS=${SIZE_STEPS:-200}
SIZE_THREADS=${SIZE_THREADS:-$(nproc)}
SIZE_PAIRS=${SIZE_PAIRS:-20}
TABLES=${TABLES:-"threads size"}
work="${WORK:-$(mktemp -d /tmp/dem_scaling.XXXXXX)}"
mkdir -p "$work"
# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
build_dem_run_bench
[ -f "$root/scenes/mixer/blades.stl" ] || python3 "$root/tools/mixer_gen.py" >/dev/null
bed="$root/scenes/bed/bed.yaml"
mixer="$root/scenes/mixer/mixer.yaml"
pss() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $4}' | tail -1; }

if [ ! -f "$work/bed.ckpt" ]; then
  echo "== settling the bed (0.5 s) and the mixer (0.25 s) once" >&2
  "$bench" --scene "$bed" --settle 0.5 --warmup 0 --steps 1 --save-state "$work/bed.ckpt" > /dev/null
  "$bench" --scene "$mixer" --n 29559 --settle 0.25 --warmup 0 --steps 1 --save-state "$work/mixer.ckpt" > /dev/null
fi

if [[ " $TABLES " == *" threads "* ]]; then
  declare -A runs
  for rep in $(seq "$REPS"); do
    for t in $THREADS; do
      runs[bed.$t]+=" $("$bench" --scene "$bed" --from-state "$work/bed.ckpt" --warmup 0 --steps "$STEPS" --threads "$t" | pss)"
      runs[mixer.$t]+=" $("$bench" --scene "$mixer" --n 29559 --from-state "$work/mixer.ckpt" --warmup 0 --steps "$STEPS" --threads "$t" | pss)"
    done
  done
  echo "threads: $STEPS steps per run, $REPS rounds alternating the thread counts; medians (all runs in brackets)"
  printf "%-8s %8s %14s %9s %11s   %s\n" scene threads p-steps/s speed-up efficiency runs
  for scene in bed mixer; do
    one=""
    for t in $THREADS; do
      # shellcheck disable=SC2086
      read -r med < <(python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" ${runs[$scene.$t]})
      [ -z "$one" ] && one=$med
      python3 -c "m, o, t = $med, $one, $t
print(f'%-8s %8d %14.4g %9.2f %10.0f%%   (%s)' % ('$scene', t, m, m / o, 100 * m / o / t, '${runs[$scene.$t]# }'))"
    done
  done
fi

if [[ " $TABLES " == *" size "* ]]; then
  echo "size: the settled bed repeated K x K times, $SIZE_STEPS steps on $SIZE_THREADS threads"
  printf "%4s %10s %12s %14s %9s %12s %12s\n" K particles p-steps/s ns/p-step/core relative state_B/p resident_B/p
  first=""
  for k in $TILES; do
    "$bench" --scene "$bed" --from-state "$work/bed.ckpt" --tile "$k" --warmup 0 --steps "$SIZE_STEPS" \
      --threads "$SIZE_THREADS" > "$work/size.$k.log"
    read -r n ps < <(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $1, $4}' "$work/size.$k.log" | tail -1)
    read -r state resident < <(sed -n 's/.*engine state \([0-9]*\) bytes per particle.*(\([0-9]*\) bytes per particle).*/\1 \2/p' "$work/size.$k.log")
    ns=$(python3 -c "print(1e9 * $SIZE_THREADS / $ps)")
    [ -z "$first" ] && first=$ns
    python3 -c "print('%4d %10d %12.4g %14.1f %9.2f %12d %12d' % ($k, $n, $ps, $ns, $ns / $first, $state, $resident))"
  done
fi

if [[ " $TABLES " == *" size_ab "* ]]; then
  echo "size_ab: the settled bed and its K x K repetition in one process, $SIZE_PAIRS pairs of blocks ($SIZE_STEPS steps of the large one), $SIZE_THREADS threads"
  printf "%4s %10s %13s %13s %9s %9s %16s %12s\n" K particles small_ns/p-s large_ns/p-s total median "pairs from..to" no_rebuilds
  for k in $TILES; do
    [ "$k" -gt 1 ] || continue
    log="$work/size_ab.$k.log"
    "$bench" --scene "$bed" --from-state "$work/bed.ckpt" --tile "$k" --warmup 0 --steps "$SIZE_STEPS" \
      --threads "$SIZE_THREADS" --size-ab "$SIZE_PAIRS" > "$log"
    python3 - "$k" "$log" <<'PY'
import re, sys
k, text = int(sys.argv[1]), open(sys.argv[2]).read()
m = re.search(r"size A/B in this run, \d+ pairs of blocks: \d+ particles \S+ p-steps/s \(([\d.]+) ns/p-step/core\), "
              r"(\d+) particles \S+ p-steps/s \(([\d.]+) ns/p-step/core\); .*?: ([\d.]+) in total, median of pairs "
              r"([\d.]+) \(pairs from ([\d.]+) to ([\d.]+)\)", text)
w = re.search(r"size A/B without the neighbour-list rebuilds: .* ([\d.]+) in total", text)
small, n, large, total, median, lo, hi = m.groups()
print("%4d %10s %13s %13s %9s %9s %16s %12s" % (k, n, small, large, total, median, lo + ".." + hi, w.group(1)))
PY
  done
fi
