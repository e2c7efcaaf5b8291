#!/usr/bin/env bash
# Packs the CPU peers (Debian's LAMMPS and LIGGGHTS, Open MPI) with every shared library they load
# except the C and C++ runtimes into DIR/peer.tar.xz (about 22 MB), for a machine that has no
# package registry (a lent GPU machine, whose 16 cores are steadier than a 2-vCPU VM's). There,
# `source bench/peers/common.sh; peer_unpack DIR/peer.tar.xz PREFIX` puts them on PATH, and the
# compare.sh scripts run as here (bench/gpu_check.sh does this with PEERS=DIR/peer.tar.xz).
#   bench/peers/pack.sh DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir=${1:?usage: bench/peers/pack.sh DIR}
# shellcheck source=bench/peers/common.sh
source "$root/bench/peers/common.sh"
peer_install lmp lammps openmpi-bin
peer_install liggghts liggghts openmpi-bin
mkdir -p "$dir"
progs=(/usr/bin/lmp /usr/bin/liggghts "$(readlink -f "$(command -v mpirun)")" "$(command -v orted)")
# the libraries they load, the C/C++ runtime left to the target machine (a newer one serves)
mapfile -t libs < <(for p in "${progs[@]}"; do ldd "$p"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt|ld-linux-x86-64)\.so')
tar -c -h -f - "${progs[@]}" "${libs[@]}" /usr/lib/x86_64-linux-gnu/openmpi /usr/share/openmpi 2>/dev/null |
  xz -T0 -6 > "$dir/peer.tar.xz"
echo "pack: ${#progs[@]} programs, ${#libs[@]} libraries and Open MPI's components in $dir/peer.tar.xz ($(du -h "$dir/peer.tar.xz" | cut -f1))"
