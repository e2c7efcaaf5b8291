#!/usr/bin/env bash
# Keeps the shared device source portable between CUDA and Thrust's OpenMP system
# (../shared/docs/gpu-design.md, "traps"): no raw kernel launches, shared memory, warp intrinsics,
# block-level CUB, atomics or OpenMP pragmas in core/ or the device engine's cuda/*.inl, and no element
# access to a device buffer (one cudaMemcpy per element on CUDA, free on the CPU: tests would not
# see its cost), and no transcendental function (sin, exp, pow...) beyond the listed ones whose
# results never reach the device step; and no copy between host and device, growing buffer or
# value-returning algorithm outside the helpers that count the host's waits. Run by ctest as
# `lint.device_source`; prints file:line of each finding.
set -u
root=${1:?usage: device_source_lint.sh SOURCE_DIR}
inls=$(find "$root/cuda" -name '*.inl' | sort)
files=$(find "$root/core" -name '*.hpp'; echo "$inls")
status=0
if grep -nE '<<<|__shared__|__syncthreads|__shfl|atomic(Add|CAS|Min|Max|Exch)|cub::(Block|Warp)|std::atomic|#pragma omp' $files; then
  echo "lint: CUDA-only or host-only construct in shared device source (above)"
  status=1
fi
# Device buffers: the names declared as dvec<...>; indexing one is element access.
buffers=$(cat $inls | grep -oE '^ *dvec<[^;]*;' | sed -E 's:;.*$:;:' | sed -E 's/^ *dvec<[^>]*(<[^>]*>)?[^>]*> *//; s/;//; s/,/ /g' | tr ' ' '\n' | grep -E '^[a-z][a-z0-9_]*_$')
[ -n "$buffers" ] || { echo "lint: found no device buffers in cuda/*.inl (pattern out of date?)"; status=1; }
# Each part of the device engine on its own (line numbers are the file's).
for inl in $inls; do
  for b in $buffers; do
    if grep -nE "(^|[^a-zA-Z0-9_])$b\[" "$inl" | grep -v '^[0-9]*: *//'; then
      echo "lint: $inl: element access to the device buffer $b (above); use a raw pointer inside a per-index body"
      status=1
    fi
  done
  # The host's waits for the device are counted (Exec::waits, DeviceEngine::host_waits, held per step
  # by the device tests): copies between host and device, buffers that grow and algorithms that
  # return a value go through the counting helpers, whose lines say "(counted" (for copy_if on the
  # OpenMP system, the line above it).
  counted='(counted'
  for b in $buffers 'p_\.[a-z_]+' a d_sorted; do
    if grep -nE "(^|[^a-zA-Z0-9_])$b\.(resize|assign|insert|reserve|shrink_to_fit|push_back|emplace_back)\(" "$inl" |
      grep -vF "$counted" | grep -v '^[0-9]*: *//'; then
      echo "lint: $inl: a device buffer resized outside resize/assign/ensure (above): its wait is not counted"
      status=1
    fi
  done
  # An algorithm without the engine's policy runs under thrust::device, which on CUDA waits for the
  # device after every call (and the count would not see it); a copy between host and device has
  # none either, so this also keeps those inside upload/download/read_one.
  notalgo='counting_iterator|raw_pointer_cast|device_pointer_cast|plus|maximum|minimum|device_malloc|device_free|device|seq|get|make_[a-z_]+'
  if grep -nE 'thrust::[a-z_]+\(' "$inl" | grep -vE "thrust::($notalgo)\(" | grep -vE 'thrust::[a-z_]+\(pol[,)]' |
    grep -vF "$counted" | grep -v '^[0-9]*: *//'; then
    echo "lint: $inl: a Thrust algorithm or copy without the engine's policy (above): thrust::device waits after every call on CUDA, a copy from or to the host always"
    status=1
  fi
  returning='transform_reduce|reduce|reduce_by_key|count|count_if|copy_if|remove|remove_if|remove_copy|remove_copy_if|unique|unique_copy|unique_by_key|unique_by_key_copy|find|find_if|find_if_not|max_element|min_element|minmax_element|inner_product|all_of|any_of|none_of|equal|mismatch|partition|partition_copy|stable_partition|stable_partition_copy|is_sorted|is_sorted_until|is_partitioned|set_[a-z_]+'
  if grep -nE -B1 "thrust::($returning)\(" "$inl" | grep -E "thrust::($returning)\(" | grep -vF "$counted" |
    while IFS= read -r line; do  # (the marker may stand on the line above)
      k=${line%%:*}
      sed -n "$((k - 1))p" "$inl" | grep -qF "$counted" || echo "$line"
    done | grep .; then
    echo "lint: $inl: an algorithm that returns a value to the host outside reduce_index and its kind (above): its wait is not counted"
    status=1
  fi
done
# Transcendental functions: CUDA's and glibc's differ in the last bits, so one that feeds the
# forces splits the engines' bits (the first GPU run found the bodies' sin/cos so). Only these
# uses are known not to reach the device step's results, each for the reason given; a new one
# either goes on this list with its reason or is evaluated on the host (as body_frame is).
allowed='core/math/quat.hpp:.*std::(sin|cos)\(angle / 2\)'          # particles' orientations: feed back into nothing for spheres
allowed+='|core/engine/views.hpp:.*std::(sin|cos)\((b\.osc_)?phase\)' # body_law: host only (body_frame)
allowed+='|core/contact/normal_tangential.hpp:.*std::pow\(15 \* m_star' # normal_damping_rate: the run's time-step checks, host
allowed+='|core/contact/restitution.hpp:'                              # restitution to damping: the scene's setup, host
found=$(grep -nE 'std::(sin|cos|tan|asin|acos|atan|atan2|exp|expm1|log|log1p|log2|log10|pow|cbrt|sinh|cosh|tanh|erf|erfc|hypot|sincos)\(' $files |
  sed "s:^$root/::" | grep -vE "^[^:]*:[0-9]+: *//" | grep -vE "^($allowed)" || true)
if [ -n "$found" ]; then
  echo "$found"
  echo "lint: a transcendental function in shared device source (above): its last bits differ between CUDA and glibc"
  status=1
fi
exit $status
