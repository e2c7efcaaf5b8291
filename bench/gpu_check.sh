#!/usr/bin/env bash
# Everything that needs a CUDA GPU, in one command, from prebuilt binaries (a lent GPU machine has
# no package registry and a short lease: build elsewhere, carry the binaries, run this):
#   1. the GPU test suite (dem_cuda_tests, dem_engine_gpu_tests) under DEM_REQUIRE_GPU=1;
#   2. the device engine's throughput (dem_run_bench --device gpu): the settled bed (20,000 beads),
#      the ribbon mixer (29,559 spheres; the step rate gives the 20 s mixer's wall time), and the bed
#      repeated K x K times (up to about 1e7 beads), with device memory per particle (the engines'
#      buffers, and what cudaMemGetInfo says they hold on the card); the host engine on all cores
#      beside each, from the same saved state; the bed and the mixer also in calls of 100 steps as
#      `dem run` takes them, with the run ahead and without (--run-ahead 2 and 0); the cube bed
#      (scenes/polyhedra/cube_bed.yaml, 600 cubes) repeated 13 x 13 and 41 x 41 times (101,400 and
#      1,008,600 cubes: polyhedron-steps/s), in calls of 100, the host engine beside the first;
#      the GPU rows as records in OUTDIR/gpu-checklist.json
#      (bench/gpu_checklist.py; COMMIT names the build, default git's HEAD);
#   3. the host engine's thread table (bench/host_scaling.sh, THREADS up to the machine's cores) and,
#      with SCALING="threads size", its size table (HOST_TILES, default "1 4 16": up to 5.1 million);
#   4. with CLI_S > 0: `dem run` of the mixer scene on the GPU for at most CLI_S seconds (progress,
#      outputs), to CLI_END simulated seconds (default 1);
#   5. with PEERS=peer.tar.xz (bench/peers/pack.sh): the host engine against LAMMPS (the settled
#      bed, `gran/hertz/history`) and LIGGGHTS (the mixer) on PEER_THREADS cores (default 2),
#      PEER_REPS back-to-back pairs each (default 3), from the saved states.
#
#   BIN=DIR STATES=DIR bench/gpu_check.sh OUTDIR
# (bench/gpu_prepare.sh builds and packs BIN and STATES on a machine with the toolchain and prints
# the whole command for the device tool.)
# BIN holds dem_cuda_tests, dem_engine_gpu_tests and dem_run_bench (flat, or a CMake build folder);
# STATES holds bed.ckpt (the bed settled 0.5 s) and mixer.ckpt (the mixer, 29,559 spheres, settled
# 0.25 s), as bench/host_scaling.sh makes them, and cubes.ckpt (the cube bed settled 0.8 s, as
# bench/gpu_prepare.sh makes it; without it the cube rows are left out, with a line saying so). Every step has its own time limit (GPU_TEST_S,
# BENCH_S) so that one slow step cannot eat the lease; the logs go to OUTDIR, a summary to stdout.
# TILES (default "7 16 22"; "" for none), CURVE_TILES (those run again with the particles along the
# cells' Hilbert curve, --device-order curve; default the last of TILES), STEPS_SMALL, STEPS_LARGE, SCALING ("threads", "threads size" or "")
# and THREADS (default 1 2 4 ... up to the cores) choose the work. OLD_BENCH (another
# dem_run_bench) adds an A/B of the GPU rows, AB_REPS rounds alternating the two binaries;
# PROFILE_KERNELS > 0 adds ncu's device time per kernel (bed, mixer, bed x 7 x 7), PROFILE_STEPS
# steps each; SKIP_TESTS=1 leaves out the test suite. RUN_AB=1 adds `dem run` itself (its health
# check after every step, which the benchmark rows leave out) from the saved states, OLD_DEM
# (another dem) against BIN's, RUN_AB_REPS rounds alternating (default 2; BIN's alone without
# OLD_DEM), on RUN_DEVICE (default gpu): particle-steps/s and waits a step from summary.json.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out=${1:?usage: BIN=DIR STATES=DIR bench/gpu_check.sh OUTDIR}
BIN=${BIN:-$root/build}
STATES=${STATES:?STATES: a folder with bed.ckpt and mixer.ckpt}
GPU_TEST_S=${GPU_TEST_S:-240}
BENCH_S=${BENCH_S:-90}
TILES=${TILES-"7 16 22"}
CURVE_TILES=${CURVE_TILES-${TILES##* }}
STEPS_SMALL=${STEPS_SMALL:-4000}
STEPS_LARGE=${STEPS_LARGE:-200}
SCALING=${SCALING-threads}
cores=$(nproc)
if [ -z "${THREADS:-}" ]; then
  THREADS=1
  t=2
  while [ "$t" -le "$cores" ]; do THREADS+=" $t"; t=$((t * 2)); done
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)  # (the peer comparisons change folder)
find_bin() {
  local f
  for f in "$BIN/$1" "$BIN/tests/cuda/$1" "$BIN/tests/engine/$1" "$BIN/bench/$1"; do
    [ -x "$f" ] && { echo "$f"; return; }
  done
  echo "gpu_check: $1 not found under $BIN" >&2
  return 1
}
bench=$(find_bin dem_run_bench) || exit 2
# The host code's instruction set (bench/gpu_prepare.sh writes it beside the binaries): a CPU
# without AVX-512 cannot run an x86-64-v4 build, which would die of an illegal instruction.
arch=$(cat "$BIN/ARCH" 2>/dev/null || echo unknown)
if [ "$arch" = x86-64-v4 ]; then
  for flag in avx512f avx512bw avx512dq avx512vl; do
    grep -q -w "$flag" /proc/cpuinfo && continue
    echo "gpu_check: the binaries under $BIN were built for x86-64-v4 (AVX-512) and this CPU has no" \
      "$flag: build them with DEM_GPU_HOST_ARCH=x86-64-v3 bench/gpu_prepare.sh" >&2
    exit 2
  done
fi
cuda_tests=$(find_bin dem_cuda_tests) || cuda_tests=-
device_tests=$(find_bin dem_engine_gpu_tests) || exit 2
summary="$out/summary.txt"
say() { echo "$*" | tee -a "$summary"; }

{
  echo "# $(hostname -s)"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1)"
  echo "- cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $cores cores available ($(lscpu | grep -E '^(Thread|Core|Socket|NUMA node)\(s\)' | sed 's/  */ /g' | paste -sd ';'))"
  echo "- cpu clock: $(lscpu | sed -n 's/^CPU max MHz: *//p;s/^BogoMIPS: *//p' | paste -sd ' ') (max MHz, BogoMIPS)"
  echo "- vector units: $(grep -o -w -E 'avx2|avx512f' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "- memory: $(free -g | awk '/^Mem:/{print $2}') GiB"
  echo "- binaries: $bench (host code for $arch)"
} > "$out/machine.md"
cat "$out/machine.md" | tee -a "$summary"

[ "${SKIP_TESTS:-0}" = 1 ] || say "== 1. GPU test suite (DEM_REQUIRE_GPU=1)"
for t in "$cuda_tests" "$device_tests"; do
  [ "${SKIP_TESTS:-0}" = 1 ] && break
  [ "$t" = - ] && continue
  name=$(basename "$t")
  start=$(date +%s)
  DEM_REQUIRE_GPU=1 timeout "$GPU_TEST_S" "$t" --gtest_color=no > "$out/$name.log" 2>&1
  rc=$?
  say "$name: rc $rc in $(( $(date +%s) - start )) s; $(grep -E '^\[  PASSED  \]|^\[  FAILED  \]|^\[  SKIPPED \]' "$out/$name.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]|Failure|error' "$out/$name.log" | head -20 | tee -a "$summary"
done

say "== 2. throughput, GPU and host engine (all $cores cores), the same saved states"
row() { # label, then dem_run_bench arguments (the binary: $rowbench, else $bench)
  local label=$1
  shift
  local log="$out/bench.$label.log"
  timeout "$BENCH_S" "${rowbench:-$bench}" "$@" > "$log" 2>&1
  local rc=$?
  local line engine
  line=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /' "$log" | tail -1)
  engine=$(grep -m1 '^engine ' "$log")
  say "$(printf '%-16s rc %-3s %s' "$label" "$rc" "$line")"
  say "$(printf '%-16s %s' '' "$engine")"
  grep -m1 '^device memory held on the card' "$log" | while read -r card; do say "$(printf '%-16s %s' '' "$card")"; done
  [ "$rc" -eq 0 ] || tail -5 "$log" | tee -a "$summary"
}
bed=(--scene "$root/scenes/bed/bed.yaml" --from-state "$STATES/bed.ckpt")
mixer=(--scene "$root/scenes/mixer/mixer.yaml" --n 29559 --from-state "$STATES/mixer.ckpt" --torque-body blades)
say " particles    steps     wall_s    p-steps/s   ms/step |  broad  pairs   bins   mesh gat+in motion |    c/p    m/p   rss_MB"
row gpu.bed --device gpu "${bed[@]}" --warmup 200 --steps "$STEPS_SMALL"
row cpu.bed --device cpu --threads "$cores" "${bed[@]}" --warmup 0 --steps 1000
row gpu.mixer --device gpu "${mixer[@]}" --warmup 200 --steps "$STEPS_SMALL"
row cpu.mixer --device cpu --threads "$cores" "${mixer[@]}" --warmup 0 --steps 1000
# the steps as dem run takes them (Simulation::advance in calls of 100, each step checked): the
# run ahead (the steps between rebuilds queued without a wait) against a wait every step
for ra in 2 0; do
  row "gpu.bed.calls.ra$ra" --device gpu "${bed[@]}" --warmup 200 --steps "$STEPS_SMALL" --calls-of 100 --run-ahead "$ra"
  row "gpu.mixer.calls.ra$ra" --device gpu --scene "$root/scenes/mixer/mixer.yaml" --n 29559 --from-state "$STATES/mixer.ckpt" \
    --warmup 200 --steps "$STEPS_SMALL" --calls-of 100 --run-ahead "$ra"
done
for k in $TILES; do
  row "gpu.bed.tile$k" --device gpu "${bed[@]}" --tile "$k" --warmup 20 --steps "$STEPS_LARGE"
done
# polyhedra: cubes at 10^5 and 10^6 (issue's goal: 1e8 polyhedron-steps/s on one card), run ahead
if [ -f "$STATES/cubes.ckpt" ]; then
  cubes=(--scene "$root/scenes/polyhedra/cube_bed.yaml" --from-state "$STATES/cubes.ckpt" --calls-of 100)
  row gpu.cubes.tile13 --device gpu "${cubes[@]}" --tile 13 --warmup 20 --steps "$STEPS_LARGE"
  row cpu.cubes.tile13 --device cpu --threads "$cores" "${cubes[@]}" --tile 13 --warmup 0 --steps 50
  row gpu.cubes.tile41 --device gpu "${cubes[@]}" --tile 41 --warmup 20 --steps "$STEPS_LARGE"
else
  say "cubes: no $STATES/cubes.ckpt (bench/gpu_prepare.sh makes it): the cube rows left out"
fi
# the largest bed again with its particles along the Hilbert curve of the grid's cells (the
# default is rows; the OpenMP system measured rows faster: bench/results/dev-2core-cpu/device_order.md)
for k in $CURVE_TILES; do
  row "gpu.bed.tile$k.curve" --device gpu "${bed[@]}" --tile "$k" --warmup 20 --steps "$STEPS_LARGE" --device-order curve
done
steps_s=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ /{print $2 / $3}' "$out/bench.gpu.mixer.log" | tail -1)
[ -n "$steps_s" ] && say "mixer on the GPU: $steps_s steps/s, so the 20 s mixer (400,000 steps of 5e-5 s) in $(awk -v s="$steps_s" 'BEGIN{printf "%.0f", 400000 / s}') s"
COMMIT=${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
python3 "$root/bench/gpu_checklist.py" "$out" --commit "$COMMIT" --out "$out/gpu-checklist.json" 2>&1 | tee -a "$summary"

if [ -n "${OLD_BENCH:-}" ]; then
  say "== 2b. A/B on the GPU: $OLD_BENCH (old) and $bench (new), alternating, ${AB_REPS:-2} rounds"
  for rep in $(seq "${AB_REPS:-2}"); do
    for which in old new; do
      rowbench=$([ "$which" = old ] && echo "$OLD_BENCH" || echo "$bench")
      row "ab.$which.bed.$rep" --device gpu "${bed[@]}" --warmup 200 --steps "$STEPS_SMALL"
      row "ab.$which.mixer.$rep" --device gpu "${mixer[@]}" --warmup 200 --steps "$STEPS_SMALL"
      row "ab.$which.tile22.$rep" --device gpu "${bed[@]}" --tile 22 --warmup 20 --steps "$STEPS_LARGE"
    done
  done
  unset rowbench
fi

if [ "${PROFILE_KERNELS:-0}" -gt 0 ]; then
  say "== 2c. device time per kernel (ncu --clock-control none, the first $PROFILE_KERNELS kernels)"
  for case in bed mixer tile7; do
    case $case in
      bed) args=("${bed[@]}") ;;
      mixer) args=("${mixer[@]}") ;;
      tile7) args=("${bed[@]}" --tile 7) ;;
    esac
    timeout "$BENCH_S" ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel --csv \
      -c "$PROFILE_KERNELS" "$bench" --device gpu "${args[@]}" --warmup 0 --steps "${PROFILE_STEPS:-20}" \
      > "$out/ncu.$case.csv" 2> "$out/ncu.$case.err"
    say "ncu $case: rc $?, $(wc -l < "$out/ncu.$case.csv") lines"
  done
fi

if [ -n "$SCALING" ]; then
  say "== 3. host engine scaling (bench/host_scaling.sh, TABLES=\"$SCALING\", THREADS=\"$THREADS\")"
  mkdir -p "$out/scaling"
  cp "$STATES/bed.ckpt" "$STATES/mixer.ckpt" "$out/scaling/"
  DEM_RUN_BENCH="$bench" WORK="$out/scaling" TABLES="$SCALING" THREADS="$THREADS" \
    TILES="${HOST_TILES-1 4 16}" "$root/bench/host_scaling.sh" 2>&1 | tee -a "$summary"
  rm -f "$out/scaling/bed.ckpt" "$out/scaling/mixer.ckpt"
fi

if [ "${CLI_S:-0}" -gt 0 ]; then
  say "== 4. dem run scenes/mixer/mixer.yaml --device gpu (at most $CLI_S s, to ${CLI_END:-1} s simulated)"
  dem=$(find_bin dem) || exit 2
  cli_out=$(mktemp -d)
  timeout "$CLI_S" "$dem" run "$root/scenes/mixer/mixer.yaml" --device gpu --out "$cli_out" \
    --set simulation.end_time="${CLI_END:-1}" > "$out/cli.log" 2>&1
  say "dem run: rc $?"
  tail -8 "$out/cli.log" | tee -a "$summary"
  cp "$cli_out/summary.json" "$out/cli_summary.json" 2>/dev/null
  rm -rf "$cli_out"
fi

if [ "${RUN_AB:-0}" = 1 ]; then
  say "== 4b. dem run from the saved states (no outputs), ${OLD_DEM:+$OLD_DEM (old) against }BIN's, ${RUN_AB_REPS:-2} rounds"
  dem=$(find_bin dem) || exit 2
  run_out=$(mktemp -d)
  for rep in $(seq "${RUN_AB_REPS:-2}"); do
    for which in ${OLD_DEM:+old} new; do
      rundem=$([ "$which" = old ] && echo "$OLD_DEM" || echo "$dem")
      for scene in bed mixer; do
        # the states are at 0.5 s (bed, dt 2e-5: 2,000 steps to 0.54) and 0.25 s (mixer, dt 5e-5:
        # 2,000 steps to 0.35)
        case $scene in
          bed) args=(--set simulation.end_time=0.54) ;;
          mixer) args=(--set fills.0.count=29559 --set simulation.end_time=0.35) ;;
        esac
        rm -rf "$run_out/r"
        timeout "$BENCH_S" "$rundem" run "$root/scenes/$scene/$scene.yaml" --restart "$STATES/$scene.ckpt" \
          --device "${RUN_DEVICE:-gpu}" --out "$run_out/r" -q --set output.snapshot_interval=100 \
          --set output.probe_interval=100 "${args[@]}" > "$out/run.$which.$scene.$rep.log" 2>&1
        rc=$?
        cp "$run_out/r/summary.json" "$out/run.$which.$scene.$rep.json" 2>/dev/null
        say "run $which $scene $rep: rc $rc, $(grep -o '"particle_steps_per_second": [0-9.e+]*\|"host_waits_per_step": [0-9.]*' \
          "$run_out/r/summary.json" 2>/dev/null | tr '\n' ' ')"
      done
    done
  done
  rm -rf "$run_out"
fi

if [ -n "${PEERS:-}" ]; then
  peer_threads=${PEER_THREADS:-2}
  say "== 5. the host engine against LAMMPS and LIGGGHTS on $peer_threads cores ($PEERS)"
  (
    # shellcheck source=bench/peers/common.sh
    source "$root/bench/peers/common.sh"
    if ! peer_unpack "$PEERS" /tmp/dem_peers 2> "$out/peers.unpack.log"; then
      tee -a "$summary" < "$out/peers.unpack.log"
      exit 0  # (this subshell: the comparisons are skipped)
    fi
    export DEM_RUN_BENCH="$bench" THREADS="$peer_threads" REPS="${PEER_REPS:-3}"
    WORK="$out/lammps" FROM_STATE="$STATES/bed.ckpt" STYLES=classic timeout "${PEER_S:-120}" \
      "$root/bench/peers/lammps/compare.sh" 2000 > "$out/peers.lammps.log" 2>&1
    say "lammps: rc $?"
    sed -n '/^== summary/,$p' "$out/peers.lammps.log" | tee -a "$summary"
    WORK="$out/liggghts" FROM_STATE="$STATES/mixer.ckpt" timeout "${PEER_S:-120}" \
      "$root/bench/peers/liggghts/compare.sh" 29559 1000 > "$out/peers.liggghts.log" 2>&1
    say "liggghts: rc $?"
    sed -n '/^== summary/,$p' "$out/peers.liggghts.log" | tee -a "$summary"
  )
  rm -f "$out"/lammps/state.* "$out"/liggghts/state.data
fi
