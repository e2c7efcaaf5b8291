#!/usr/bin/env bash
# Keeps the shared device source portable between CUDA and Thrust's OpenMP system
# (../shared/docs/gpu-design.md, "traps"): no raw kernel launches, shared memory, warp intrinsics,
# block-level CUB, atomics or OpenMP pragmas in core/ or cuda/device_engine.inl, and no element
# access to a device buffer (one cudaMemcpy per element on CUDA, free on the CPU: tests would not
# see its cost). Run by ctest as `lint.device_source`; prints file:line of each finding.
set -u
root=${1:?usage: device_source_lint.sh SOURCE_DIR}
files=$(find "$root/core" -name '*.hpp'; echo "$root/cuda/device_engine.inl")
status=0
if grep -nE '<<<|__shared__|__syncthreads|__shfl|atomic(Add|CAS|Min|Max|Exch)|cub::(Block|Warp)|std::atomic|#pragma omp' $files; then
  echo "lint: CUDA-only or host-only construct in shared device source (above)"
  status=1
fi
# Device buffers: the names declared as dvec<...>; indexing one is element access.
inl="$root/cuda/device_engine.inl"
buffers=$(grep -oE '^ *dvec<[^;]*;' "$inl" | sed -E 's:;.*$:;:' | sed -E 's/^ *dvec<[^>]*(<[^>]*>)?[^>]*> *//; s/;//; s/,/ /g' | tr ' ' '\n' | grep -E '^[a-z][a-z0-9_]*_$')
for b in $buffers; do
  if grep -nE "(^|[^a-zA-Z0-9_])$b\[" "$inl" | grep -v '^[0-9]*: *//'; then
    echo "lint: element access to the device buffer $b (above); use a raw pointer inside a per-index body"
    status=1
  fi
done
[ -n "$buffers" ] || { echo "lint: found no device buffers in $inl (pattern out of date?)"; status=1; }
exit $status
