#!/usr/bin/env bash
# The DEM-Engine bundle (bench/peers/deme/bundle.sh) unpacked into PREFIX, checked against its
# checksum: then PYTHONPATH=PREFIX python3 -c 'import deme' on a machine with an NVIDIA driver.
#   bench/peers/deme/unpack.sh DIR PREFIX
set -euo pipefail
dir=${1:?usage: unpack.sh DIR PREFIX}
prefix=${2:?usage: unpack.sh DIR PREFIX}
sum=$(cat "$dir"/deme-site.tar.xz.part-* | sha256sum | cut -d' ' -f1)
[ "$sum" = "$(cat "$dir/SHA256")" ] || { echo "unpack: the parts in $dir do not add up to the bundle (checksum)" >&2; exit 1; }
mkdir -p "$prefix"
cat "$dir"/deme-site.tar.xz.part-* | xz -d | tar -x -C "$prefix"
echo "unpack: DEME in $prefix (PYTHONPATH=$prefix)"
