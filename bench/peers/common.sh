# Sourced by the peer comparisons (bench/peers/*/compare.sh), bench/host_scaling.sh and the MPI benchmarks, with
# $root set to the repository: installs what is missing and builds dem_run_bench.
#   peer_install COMMAND PACKAGE...   the Debian packages, unless COMMAND and mpirun are on PATH
#   build_dem_run_bench               sets $build and $bench (DEM_BUILD_DIR, default build/), or
#                                     only $bench to DEM_RUN_BENCH, a prebuilt binary
#   dem_build_desc                    one line on how $bench was built (for the comparisons' logs)
#   peer_unpack TARBALL PREFIX        the peers packed by bench/peers/pack.sh, unpacked under PREFIX
#                                     and put first on PATH and LD_LIBRARY_PATH
#   end_time_after CHECKPOINT STEPS   the simulated time STEPS steps after a checkpoint's (half a
#                                     step over, for simulation.end_time)
peer_install() {
  local command=$1
  shift
  if ! command -v "$command" >/dev/null || ! command -v mpirun >/dev/null; then
    echo "compare: installing $* (Debian packages)" >&2
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
  fi
}

build_dem_run_bench() {
  if [ -n "${DEM_RUN_BENCH:-}" ]; then # a prebuilt binary (a machine without the toolchain)
    bench="$DEM_RUN_BENCH"
    build=""
    return
  fi
  "$root/tools/install-deps"
  build="$root/${DEM_BUILD_DIR:-build}"
  [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$(nproc)" --target dem_run_bench >/dev/null
  bench="$build/bench/dem_run_bench"
}

dem_build_desc() {
  if [ -z "${build:-}" ]; then
    echo "dem prebuilt ($bench)"
    return
  fi
  local cache="$build/CMakeCache.txt"
  echo "dem built $(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$cache"),\
 DEM_NATIVE_ARCH=$(sed -n 's/^DEM_NATIVE_ARCH:BOOL=//p' "$cache"),\
 CXX flags '$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$cache")'"
}

peer_unpack() {
  local tarball=$1 prefix=$2 run
  [ -f "$tarball" ] || { echo "peer_unpack: no $tarball (bench/peers/pack.sh makes it)" >&2; return 1; }
  mkdir -p "$prefix"
  xz -dc "$tarball" | tar -x -f - -C "$prefix" || { echo "peer_unpack: $tarball would not unpack" >&2; return 1; }
  run=$(cd "$prefix/usr/bin" && ls orterun mpirun.openmpi 2>/dev/null | head -1)
  [ -n "$run" ] || { echo "peer_unpack: no mpirun in $tarball" >&2; return 1; }
  ln -sf "$run" "$prefix/usr/bin/mpirun"
  local lib="$prefix/usr/lib/x86_64-linux-gnu"
  export PATH="$prefix/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$prefix/lib/x86_64-linux-gnu:$lib:$lib/openmpi/lib:$lib/pmix2/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  # Open MPI and PMIx's components found where they were moved (Debian's PMIx takes no prefix);
  # shared memory without single-copy (a sandbox may forbid it)
  export OPAL_PREFIX="$prefix/usr" PMIX_MCA_mca_base_component_path="$lib/pmix2/lib/pmix"
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  # the programs must start here (a C library older than the packing machine's stops them)
  local p
  for p in lmp liggghts; do  # (an empty input: both exit 0; in PREFIX, where LIGGGHTS leaves its log)
    (cd "$prefix" && echo | "$p" -log none > /dev/null 2>&1) ||
      { echo "peer_unpack: $p from $tarball does not start here: $(cd "$prefix" && echo | "$p" -log none 2>&1 | head -2)" >&2; return 1; }
  done
  mpirun --allow-run-as-root -np 1 true > /dev/null 2>&1 ||
    { echo "peer_unpack: mpirun from $tarball does not start here: $(mpirun --allow-run-as-root -np 1 true 2>&1 | head -3)" >&2; return 1; }
}

end_time_after() {
  python3 - "$1" "$2" <<'EOF'
import struct, sys
with open(sys.argv[1], "rb") as f:
    head = f.read(8 + 4 * 5 + 24)  # magic, five u32 (version, byte order, sizes), step, time, dt
step, t, dt = struct.unpack_from("<Qdd", head, 8 + 4 * 5)
print(repr(t + (int(sys.argv[2]) + 0.5) * dt))
EOF
}
