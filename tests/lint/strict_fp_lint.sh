#!/usr/bin/env bash
# With DEM_STRICT_FP the CPU code must hold no fused multiply-add: the host engine, the device
# engine on the OpenMP system and the CUDA engine (--fmad=false) then give the same bits. A flag
# alone does not guarantee it: GCC 12's basic-block vectoriser turned the quaternion product into
# vfmaddsub under -ffp-contract=off (core/math/quat.hpp). So this disassembles the built libraries
# and fails on any x86 fused multiply-add instruction, naming the function. Run by ctest as
# `lint.strict_fp` (skipped, exit 77, where objdump is missing or the machine is not x86).
set -u
command -v objdump >/dev/null || { echo "lint: objdump not found"; exit 77; }
case "$(uname -m)" in x86_64 | i?86) ;; *) echo "lint: not x86 ($(uname -m))"; exit 77 ;; esac
status=0
for lib in "$@"; do
  [ -f "$lib" ] || { echo "lint: $lib missing"; status=1; continue; }
  found=$(objdump -d -C --no-show-raw-insn "$lib" |
    awk '/^[0-9a-f]+ <.*>:$/ {f = $0} /\tv?fn?m(add|sub)[a-z0-9]*[ \t]/ {print f; print}' | head -20)
  if [ -n "$found" ]; then
    echo "lint: fused multiply-add in $lib (DEM_STRICT_FP):"
    echo "$found"
    status=1
  fi
done
[ $status = 0 ] && echo "lint: no fused multiply-add in $# libraries"
exit $status
