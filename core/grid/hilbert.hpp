// The position of a cell along a 3-D Hilbert curve: the particles' order on both engines (the host
// engine's re-sort, host/omp/broad_phase.hpp; the device engine's sort of its uniform grid,
// cuda/pair_list.inl). Neighbours in all three directions stay close in memory, where a cell-row
// order puts the layer above a whole layer of the box away; consecutive cells of the curve share
// a face, where Z (Morton) order jumps across its blocks.
#pragma once
#include <cstdint>

#include "core/config.hpp"

namespace dem {

// Cell coordinates the curve orders: each below 2^21 (the key's 63 bits).
constexpr std::uint32_t kHilbertCoordMax = 0x1fffff;

// The low 21 bits of v spread to every third bit (bit k to bit 3k).
DEM_HD inline std::uint64_t spread_bits_3d(std::uint64_t v) {
  v &= kHilbertCoordMax;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

// Skilling's transform of the axes to the "transposed" Hilbert index (J. Skilling, Programming the
// Hilbert curve, AIP Conf. Proc. 707, 2004): undo the excess work of the curve's rotations and
// reflections level by level, then Gray-encode; the index's bits are then those of the three
// results interleaved, most significant first, as for a Morton key. Coordinates are taken modulo
// 2^21; distinct cells below that get distinct keys.
DEM_HD inline std::uint64_t hilbert_key(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  std::uint32_t X[3] = {x & kHilbertCoordMax, y & kHilbertCoordMax, z & kHilbertCoordMax};
  constexpr std::uint32_t kTop = 1u << 20;
  for (std::uint32_t q = kTop; q > 1; q >>= 1) {
    const std::uint32_t p = q - 1;
    for (int i = 0; i < 3; ++i) {
      if (X[i] & q) {
        X[0] ^= p;  // invert
      } else {      // exchange
        const std::uint32_t t = (X[0] ^ X[i]) & p;
        X[0] ^= t;
        X[i] ^= t;
      }
    }
  }
  X[1] ^= X[0];
  X[2] ^= X[1];
  std::uint32_t t = 0;
  for (std::uint32_t q = kTop; q > 1; q >>= 1)
    if (X[2] & q) t ^= q - 1;
  for (int i = 0; i < 3; ++i) X[i] ^= t;
  return spread_bits_3d(X[0]) << 2 | spread_bits_3d(X[1]) << 1 | spread_bits_3d(X[2]);
}

}  // namespace dem
