#!/usr/bin/env bash
# The benchmark harness in one command: micro-benchmarks of each phase (Google Benchmark) and the
# end-to-end mixer for a list of particle counts, written to bench/results/<machine>/ with a
# description of the machine, then plotted.
#
#   bench/run.sh                       # CPU, N = 5000,10000,29559
#   N=2000,5000 STEPS=100 bench/run.sh # a quick run
#   DEM_MACHINE=mybox bench/run.sh     # results folder name (default: <hostname>-cpu)
#
# GPU: where the build has CUDA and a device answers, the end-to-end mixer runs on it too
# (--device gpu, mixer_gpu.csv); bench/gpu_check.sh is the fuller GPU run (tests, profile, sizes).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
./tools/install-deps
machine=${DEM_MACHINE:-$(hostname -s)-cpu}
out="bench/results/$machine"
N=${N:-5000,10000,29559}
STEPS=${STEPS:-200}
SETTLE=${SETTLE:-0.1}
THREADS=${THREADS:-$(nproc)}
build=${DEM_BUILD_DIR:-build}
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)" --target dem_run_bench dem_micro_bench
mkdir -p "$out"
{
  echo "# $machine"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores available"
  echo "- memory: $(free -g | awk '/^Mem:/{print $2}') GiB"
  echo "- compiler: $(c++ --version | head -1)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- build: $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt"), DEM_NATIVE_ARCH=$(sed -n 's/^DEM_NATIVE_ARCH:BOOL=//p' "$build/CMakeCache.txt")"
  echo "- threads: $THREADS"
  if gpu=$("$build/bench/dem_run_bench" --scene scenes/demo/demo.yaml --device gpu --warmup 0 --steps 1 2>&1 |
            sed -n 's/^engine device-cuda on \(.*\); engine state.*/\1/p') && [ -n "$gpu" ]; then
    echo "- gpu: $gpu"
  else
    echo "- gpu: none (no CUDA device, or a build without CUDA)"
  fi
} > "$out/machine.md"
echo "== micro-benchmarks (host, one thread) -> $out/micro.json and micro.txt"
OMP_NUM_THREADS=1 "$build/bench/dem_micro_bench" --benchmark_min_time=0.2 \
  --benchmark_out="$out/micro.json" --benchmark_out_format=json | tee "$out/micro.txt"
echo "== end-to-end mixer, N = $N, $STEPS steps after $SETTLE s of settling -> $out/mixer.csv"
rm -f "$out/mixer.csv"
"$build/bench/dem_run_bench" --scene scenes/mixer/mixer.yaml --n "$N" --steps "$STEPS" --settle "$SETTLE" \
  --warmup 20 --threads "$THREADS" --machine "$machine" --csv "$out/mixer.csv" --torque-body blades
python3 bench/plot_bench.py "$out/mixer.csv" "$out" || echo "bench: plots skipped (see the message above)"
if grep -q '^- gpu: none' "$out/machine.md"; then
  echo "== no GPU: the device engine's figures need one (bench/gpu_check.sh on a GPU machine)"
else
  echo "== end-to-end mixer on the GPU, N = $N -> $out/mixer_gpu.csv"
  rm -f "$out/mixer_gpu.csv"
  "$build/bench/dem_run_bench" --scene scenes/mixer/mixer.yaml --n "$N" --steps "$STEPS" --settle "$SETTLE" \
    --warmup 20 --device gpu --machine "$machine-gpu" --csv "$out/mixer_gpu.csv" --torque-body blades
fi
