#!/usr/bin/env bash
# Prepares a lent GPU machine's run of bench/gpu_check.sh from this machine: such a machine has no
# package registry and a short lease, so everything is built here and carried.
#   bench/gpu_prepare.sh [DIR]          (DIR default .devcarry, ignored by git through .git/info/exclude)
# Builds build-gpu/ (Release, CUDA for sm_90, the host code for DEM_GPU_HOST_ARCH, default
# x86-64-v4: AVX-512, which the lent Xeons have and which speeds the host engine up there
# (bench/results/nvidia-h100/gpu.md); name
# x86-64-v3 for a machine without it, and bench/gpu_check.sh refuses a binary the CPU cannot run),
# makes the saved states (the bed settled 0.5 s, the mixer 0.25 s, as
# bench/host_scaling.sh does, and the cube bed settled 0.8 s: 3 minutes on 2 cores), and fills DIR with the stripped, gzipped binaries (dem_cuda_tests,
# dem_engine_gpu_tests, dem_run_bench, dem), the shared libraries they need that a CUDA image may
# lack (libgomp, yaml-cpp, zlib), and the states. OLD=path/to/dem_run_bench also carries an older
# binary for an A/B, OLD_DEM=path/to/dem an older `dem` for gpu_check's RUN_AB=1; PEERS=1 packs LAMMPS, LIGGGHTS and Open MPI too (bench/peers/pack.sh, 24 MB)
# for gpu_check's comparisons on the lent machine's cores. The binaries are built without MPI (the
# image has no Open MPI library for them to load); MPI=1 builds them for mpirun and packs the peers
# with Open MPI too (PEERS=1 implied), for bench/mpi_scaling.sh and bench/mpi_ranks.sh on the lent
# machine's 16 cores (after peer_unpack). DEME=1 adds DEM-Engine (bench/peers/deme/bundle.sh, 41 MB)
# and the states as data files for bench/peers/deme/run.py; with the rest that outgrows one call's
# 64 MiB, so carry DIR/deme and DIR/work in a call of their own. It ends by printing the command to
# give the device tool (with carry: [DIR]).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
dir=${1:-.devcarry}
build=${DEM_GPU_BUILD_DIR:-build-gpu}
./tools/install-deps
grep -qx "/$dir/" .git/info/exclude 2>/dev/null || echo "/$dir/" >> .git/info/exclude
arch=${DEM_GPU_HOST_ARCH:-x86-64-v4}
if [ "$arch" = x86-64-v4 ] && [ ! -f "$dir/work/bed.ckpt" ] && ! grep -q -w avx512f /proc/cpuinfo; then
  echo "gpu_prepare: the saved states are made here by the x86-64-v4 binary, and this CPU has no" \
    "AVX-512: put bed.ckpt and mixer.ckpt in $dir/work (bench/host_scaling.sh makes them) or use" \
    "DEM_GPU_HOST_ARCH=x86-64-v3" >&2
  exit 2
fi
mpi=OFF
if [ "${MPI:-0}" = 1 ]; then mpi=ON; PEERS=1; fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDEM_NATIVE_ARCH=OFF -DCMAKE_CXX_FLAGS="-march=$arch" \
  -DDEM_PYTHON=OFF -DDEM_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DDEM_ENABLE_MPI=$mpi > /dev/null
cmake --build "$build" -j "$(nproc)" --target dem_cuda_tests dem_engine_gpu_tests dem_run_bench dem
mkdir -p "$dir/bin" "$dir/lib" "$dir/work" "$dir/old"
bench="$build/bench/dem_run_bench"
if [ ! -f "$dir/work/bed.ckpt" ]; then
  echo "gpu_prepare: settling the bed (0.5 s) and the mixer (0.25 s)" >&2
  "$bench" --scene scenes/bed/bed.yaml --settle 0.5 --warmup 0 --steps 1 --save-state "$dir/work/bed.ckpt" > /dev/null
  "$bench" --scene scenes/mixer/mixer.yaml --n 29559 --settle 0.25 --warmup 0 --steps 1 \
    --save-state "$dir/work/mixer.ckpt" > /dev/null
fi
if [ ! -f "$dir/work/cubes.ckpt" ]; then
  echo "gpu_prepare: settling the cube bed (0.8 s)" >&2
  "$bench" --scene scenes/polyhedra/cube_bed.yaml --settle 0.8 --warmup 0 --steps 1 --save-state "$dir/work/cubes.ckpt" > /dev/null
fi
rm -f "$dir"/bin/* "$dir"/old/*
cp "$build/tests/cuda/dem_cuda_tests" "$build/tests/engine/dem_engine_gpu_tests" "$bench" "$build/dem" "$dir/bin/"
echo "$arch" > "$dir/bin/ARCH"  # (bench/gpu_check.sh checks the CPU against it)
[ -n "${OLD:-}" ] && cp "$OLD" "$dir/old/dem_run_bench"
[ -n "${OLD_DEM:-}" ] && cp "$OLD_DEM" "$dir/old/dem"
for f in "$dir"/bin/* "$dir"/old/*; do
  [ -f "$f" ] && [ "$(basename "$f")" != ARCH ] || continue
  strip "$f"
  gzip -f "$f"
done
for lib in libgomp.so.1 libyaml-cpp.so.0.7 libz.so.1; do
  # (awk reads to the end: an early exit would leave ldconfig writing into a closed pipe, whose
  # SIGPIPE, under pipefail, ended this script part-way through now and then)
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l && p == "" {p = $NF} END {if (p != "") print p}')
  [ -n "$path" ] && cp -L "$path" "$dir/lib/"
done
rm -rf "$dir/peer"
[ "${PEERS:-0}" = 1 ] && "$root/bench/peers/pack.sh" "$dir/peer"
if [ "${DEME:-0}" = 1 ]; then  # DEM-Engine side by side: its bundle and the states as data files
  "$root/bench/peers/deme/bundle.sh" "$dir/deme"
  "$bench" --scene scenes/mixer/mixer.yaml --n 29559 --from-state "$dir/work/mixer.ckpt" --warmup 0 --steps 1 \
    --write-peer-data "$dir/work/mixer.data" > /dev/null
  "$bench" --scene scenes/bed/bed.yaml --from-state "$dir/work/bed.ckpt" --warmup 0 --steps 1 \
    --write-peer-data "$dir/work/bed.data" > /dev/null
fi
du -sh "$dir"
old_args=""
[ -n "${OLD:-}" ] && old_args="OLD_BENCH=\$PWD/$dir/old/dem_run_bench "
[ -n "${OLD_DEM:-}" ] && old_args+="RUN_AB=1 OLD_DEM=\$PWD/$dir/old/dem "
setup="[ -e $root ] || { mkdir -p $(dirname "$root") && ln -s \"\$PWD\" $root; }; export LD_LIBRARY_PATH=\$PWD/$dir/lib; gunzip -f $dir/bin/*.gz $dir/old/*.gz 2>/dev/null; chmod +x $dir/bin/* $dir/old/* 2>/dev/null"
fetch="tar czf \$OUT/gc.tgz -C /tmp gc; cp /tmp/gc/summary.txt \$OUT/"
cat <<EOF
The device tool's run, with carry: ["$dir"] (the working tree and DIR together stay under 64 MiB):
$setup; BIN=$dir/bin STATES=$dir/work ${old_args}PROFILE_KERNELS=500 timeout 540 bench/gpu_check.sh /tmp/gc; $fetch
(The link: the test binaries look for the scenes under $root, where they were built.)
EOF
if [ "${PEERS:-0}" = 1 ]; then  # (the suite and the peers together outgrow one 10-minute call)
  cat <<EOF
The peer comparisons alone (a few minutes), in a call of their own:
$setup; BIN=$dir/bin STATES=$dir/work SKIP_TESTS=1 SCALING= TILES= PEERS=\$PWD/$dir/peer/peer.tar.xz timeout 540 bench/gpu_check.sh /tmp/gc; $fetch
EOF
fi
if [ "$mpi" = ON ]; then  # (dem, LAMMPS and LIGGGHTS on 1 to 16 ranks: about 5 and 2 minutes, estimated)
  scaling="$setup; . bench/peers/common.sh; peer_unpack $dir/peer/peer.tar.xz /tmp/peers && mkdir -p /tmp/dms && cp $dir/work/bed.ckpt /tmp/dms/ && DEM_RUN_BENCH=\$PWD/$dir/bin/dem_run_bench WORK=/tmp/dms STEPS=100"
  cat <<EOF
The MPI scaling tables (bench/mpi_scaling.sh), strong then weak, in calls of their own:
$scaling WEAK_K= timeout 560 bench/mpi_scaling.sh | tee \$OUT/mpi_strong.txt
$scaling RANKS= timeout 560 bench/mpi_scaling.sh | tee \$OUT/mpi_weak.txt
EOF
fi
