#!/usr/bin/env bash
# The layers point one way (docs/architecture.md): each folder may include its own files and those
# of the layers below it, never one above or beside it:
#   core/      <- core/
#   host/sim/  <- core/, host/sim/                      (engine-neutral)
#   host/omp/  <- core/, host/sim/, host/omp/           (the OpenMP host engine)
#   cuda/      <- core/, host/sim/, cuda/               (the device engine; never the host engine)
#   host/mpi/  <- core/, host/sim/, host/omp/, host/mpi/ (the MPI processes; the host engine on each rank)
#   host/app/  <- everything above, and of cuda/ only its plain C++ seams (*.hpp)
# and the device libraries link neither the host engine nor the application. Run by ctest as
# `lint.layers`; prints file:line of each include that runs back up.
set -u
root=${1:?usage: layer_lint.sh SOURCE_DIR}
cd "$root" || exit 1
status=0
# check LAYER_DIR ALLOWED_REGEX: every quoted project include of the files under LAYER_DIR must
# match ALLOWED_REGEX.
check() {
  local dir=$1 allowed=$2
  local found
  found=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"(core|host|cuda|bench|tests|tools|python)/' \
            --include='*.hpp' --include='*.cpp' --include='*.inl' --include='*.cu' --include='*.cuh' --include='*.h' "$dir" |
          grep -vE "#[[:space:]]*include[[:space:]]+\"($allowed)")
  if [ -n "$found" ]; then
    echo "$found"
    echo "lint: an include in $dir/ runs back up or across the layers (above); allowed: $allowed"
    status=1
  fi
}
check core 'core/'
check host/sim 'core/|host/sim/'
check host/omp 'core/|host/sim/|host/omp/'
check cuda 'core/|host/sim/|cuda/'
check host/mpi 'core/|host/sim/|host/omp/|host/mpi/'
check host/app 'core/|host/sim/|host/omp/|host/mpi/|host/app/|cuda/[a-z_]+\.hpp"'
# Libraries: the device engine's targets link dem_sim (and dem_core), nothing above it.
if grep -nE 'target_link_libraries\([^)]*\b(dem_host_engine|dem_app|dem_io|dem_scene)\b' cuda/CMakeLists.txt; then
  echo "lint: a device library links the host engine or the application (above)"
  status=1
fi
if grep -nE 'target_link_libraries\([^)]*\b(dem_device|dem_app|dem_io|dem_scene|dem_mpi)\b' host/omp/CMakeLists.txt host/sim/CMakeLists.txt; then
  echo "lint: a lower layer links a library above it (above)"
  status=1
fi
[ "$status" -eq 0 ] && echo "lint: layers point one way"
exit "$status"
