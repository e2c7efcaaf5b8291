#!/usr/bin/env bash
# DEM-Engine (the `deme` package on PyPI, 3.0.19) for a lent GPU machine, which reaches no package
# registry: its wheel and the CUDA 12 wheels of its `cuda12` extra (runtime, NVRTC, nvcc's
# headers, CCCL, cuRAND: DEME compiles its kernels at run time with NVRTC and needs libcudart.so.12,
# libnvrtc.so.12 and the headers) downloaded here, unpacked as one site folder, pruned of what DEME
# never loads, and packed as an xz archive in parts of PART_MB (default 40) MiB, small enough to
# travel with the working tree (the device tool's limit: 64 MiB a call, repository included).
#   bench/peers/deme/bundle.sh [DIR]        (default .devcarry/deme; PYVER=3.12: the GPU image's python)
# On the GPU machine: bench/peers/deme/unpack.sh DIR PREFIX, then PYTHONPATH=PREFIX python3.
# Left out (about 330 MB unpacked): DEME's static library (lib64/*.a), NVRTC's .alt variants,
# nvcc's programs and libnvvm (NVRTC carries its own compiler), cuRAND's library (DEME's host code
# does not link it; its kernels use the device API in the headers). Kept although DEME draws
# nothing: its GL libraries (deme.libs), which _deme.so links.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root"
dir=${1:-.devcarry/deme}
pyver=${PYVER:-3.12}
part_mb=${PART_MB:-40}
tmp=$(mktemp -d /tmp/deme_bundle.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64 -d "$tmp/whl" \
  deme==3.0.19 "nvidia-cuda-runtime-cu12>=12.8,<12.9" "nvidia-cuda-nvrtc-cu12>=12.8,<12.9" \
  "nvidia-cuda-nvcc-cu12>=12.8,<12.9" "nvidia-cuda-cccl-cu12>=12.8,<12.9" "nvidia-curand-cu12>=10.3.9,<10.3.10"
site="$tmp/site"
mkdir -p "$site"
for w in "$tmp"/whl/*.whl; do python3 -m zipfile -e "$w" "$site"; done
before=$(du -sm "$site" | cut -f1)
rm -rf "$site/lib64" "$site"/nvidia/cuda_nvrtc/lib/*.alt.* "$site/nvidia/cuda_nvcc/bin" "$site/nvidia/cuda_nvcc/nvvm" \
  "$site/nvidia/cuda_nvcc/lib" "$site/nvidia/curand/lib"
# what DEME's loader (deme/_cuda.py) and its extension need must still be there
for f in deme/_cuda.py nvidia/cuda_runtime/lib/libcudart.so.12 nvidia/cuda_nvrtc/lib/libnvrtc.so.12 \
  nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8 nvidia/cuda_runtime/include/cuda_runtime.h \
  nvidia/curand/include/curand_kernel.h nvidia/cuda_nvcc/include/crt/host_defines.h; do
  [ -e "$site/$f" ] || { echo "bundle: $f is missing from the wheels" >&2; exit 1; }
done
ls "$site"/deme/_deme.cpython-*.so > /dev/null
after=$(du -sm "$site" | cut -f1)
mkdir -p "$dir"
rm -f "$dir"/deme-site.tar.xz.part-* "$dir/SHA256"
tar -C "$site" -cf - . | xz -T0 -9 | tee >(sha256sum | cut -d' ' -f1 > "$dir/SHA256") |
  split -b "${part_mb}M" -d - "$dir/deme-site.tar.xz.part-"
sleep 1  # (the checksum's process substitution ends after the pipe)
case "$dir" in /*) ;; *)  # a folder in the repository: ignored by git, carried by name
  top=${dir%%/*}; grep -qx "/$top/" .git/info/exclude 2>/dev/null || echo "/$top/" >> .git/info/exclude ;; esac
echo "bundle: deme 3.0.19 for Python $pyver, $before MB unpacked, $after MB kept, in $(ls "$dir"/deme-site.tar.xz.part-* | wc -l) part(s) of at most $part_mb MiB:"
ls -la "$dir"
