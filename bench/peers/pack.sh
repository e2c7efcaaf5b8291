#!/usr/bin/env bash
# Packs the CPU peers (Debian's LAMMPS and LIGGGHTS, Open MPI with its run-time components and
# PMIx) with every shared library they load except the C and C++ runtimes into DIR/peer.tar.xz
# (about 30 MB), for a machine that has no package registry (a lent GPU machine, whose 16 cores are
# steadier than a 2-vCPU VM's). The target needs a C library at least as new as this machine's
# (Debian 12: glibc 2.36). There, `source bench/peers/common.sh; peer_unpack DIR/peer.tar.xz
# PREFIX` puts them on PATH, and the compare.sh scripts run as here (bench/gpu_check.sh does this
# with PEERS=DIR/peer.tar.xz).
#   bench/peers/pack.sh DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir=${1:?usage: bench/peers/pack.sh DIR}
# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
peer_install lmp lammps openmpi-bin
peer_install liggghts liggghts openmpi-bin
mpirun=$(readlink -f "$(command -v mpirun)")
orted=$(command -v orted) || { echo "pack: no orted (Open MPI's daemon) on PATH" >&2; exit 1; }
lib=/usr/lib/x86_64-linux-gnu
folders=("$lib/openmpi" /usr/share/openmpi)
[ -d "$lib/pmix2" ] && folders+=("$lib/pmix2")  # (Open MPI 4 loads PMIx at run time)
progs=(/usr/bin/lmp /usr/bin/liggghts "$mpirun" "$orted")
# What they load, Open MPI's components (loaded at run time) included, the C/C++ runtime left to
# the target machine (a newer one serves).
mapfile -t libs < <(for f in "${progs[@]}" $(find "${folders[@]}" -name '*.so*' -type f); do ldd "$f" 2>/dev/null || true; done |
  awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux-x86-64)\.so')
mkdir -p "$dir"
# (paths relative to /, so that tar keeps them and says nothing about the leading slash)
rel=()
for p in "${progs[@]}" "${libs[@]}" "${folders[@]}"; do rel+=("${p#/}"); done
tar -c -h -C / -f - "${rel[@]}" | xz -T0 -6 > "$dir/peer.tar.xz"
echo "pack: ${#progs[@]} programs, ${#libs[@]} libraries, ${folders[*]} in $dir/peer.tar.xz ($(du -h "$dir/peer.tar.xz" | cut -f1))"
