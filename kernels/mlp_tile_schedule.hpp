// The point kernel's static tile schedule (kernels/cuda/mlp/mlp_point_kernel.cu), written once for the
// kernel and its host-side test: which tiles each persistent block takes, and in which order.
// Same inputs, same schedule: each block sums its tiles' gradient terms into its own partials
// row in this order, so the gradient's bits do not depend on timing.
//
// A packed boundary tile (four boundary points a lane) costs about `cost` interior tiles (two on
// an H200 in float and double: its activations and adjoints run over every slot). Dealt round
// robin after the interior tiles, the boundary tiles would fall on blocks that already have a
// full share of interior tiles, and those blocks would set the pass's time. Here the blocks
// form columns of a table of rounds: boundary tile j sits in column G − 1 − (j mod G), taking
// `cost` rounds of it, and the interior tiles fill the other cells round by round, column by
// column. A block walks its column: its boundary tiles first, then its interior tiles.
#pragma once

#include "kernels/host_device.hpp"

namespace rbfpde {

// The tile that block b of G takes at its step `it` (0, 1, …): interior tiles are 0 … n_int − 1,
// boundary tiles n_int … n_int + n_bnd − 1; −1 when the block has no more. cost ≥ 1 (rounds a
// boundary tile takes in the table).
RBFPDE_HD int point_tile_schedule(int it, int b, int G, int n_int, int n_bnd, int cost) {
  const int full = n_bnd / G, extra = n_bnd % G;  // boundary tiles: every block, the last blocks
  const bool has_extra = b >= G - extra;
  const int own_bnd = full + (has_extra ? 1 : 0);
  if (it < own_bnd) return n_int + (G - 1 - b) + it * G;
  // Interior: after the full boundary rounds, `cost` rounds of G − extra cells (the last blocks
  // hold boundary tiles there), then rounds of G cells.
  const int k = it - own_bnd, narrow = G - extra;
  const int idx = !has_extra && k < cost ? k * narrow + b
                                         : cost * narrow + (k - (has_extra ? 0 : cost)) * G + b;
  return idx < n_int ? idx : -1;
}

}  // namespace rbfpde
