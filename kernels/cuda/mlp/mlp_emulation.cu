// The host emulation of the tiled pass (emulated_mlp_tiling, emulate_mlp_pass; mlp_kernels.hpp
// has their contract): mlp_pass_block.cuh's block code, compiled for the host, run block after
// block as blocks of one thread, and the loss as the kernel's last block computes it, in another
// summation order. nvcc compiles it: the block code is __host__ __device__ and loads through
// CUDA's vector types.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/cuda/mlp/mlp_pass_block.cuh"

namespace rbfpde::gpu {
using namespace detail;  // mlp_pass_block.cuh's block code, named as in the kernel

template <class T>
MlpTiling emulated_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                              int points, int grid, int variant) {
  if (variant != kMlpTiledFloat && variant != kMlpTiled<T>)
    throw std::invalid_argument("emulate_mlp_pass runs the tiled variants of its precision");
  MlpTiling t;
  t.variant = variant;
  t.points = points;
  t.ld = pass_ld<T>(net.dim, points);
  t.tiles_interior = (n_int + points - 1) / points;
  t.tiles_boundary = (n_bnd + points - 1) / points;
  t.grid = grid;
  t.shared_bytes = pass_shared_elements(net, points, gradient) * sizeof(T);
  return t;
}

template <class T>
void emulate_mlp_pass(const MlpNetView<T>& net, const MlpTiling& tiling, const MlpPassArgs<T>& a) {
  std::vector<T> sm(tiling.shared_bytes / sizeof(T));
  const int total = tiling.tiles_interior + tiling.tiles_boundary;
  auto run = [&](auto mma, auto plain) {
    for (int block = 0; block < tiling.grid; ++block)
      pass_block<decltype(mma)::value, 2, decltype(plain)::value>(net, a, tiling.points, tiling.ld,
                                                                  tiling.tiles_interior, total,
                                                                  sm.data(), block, tiling.grid);
  };
  auto run_variant = [&](auto plain) {
    if constexpr (kPassMma<T>)
      if (tiling.variant == kMlpTiledDouble) return run(std::true_type{}, plain);
    run(std::false_type{}, plain);
  };
  if (plain_pass(net, a))
    run_variant(std::true_type{});
  else
    run_variant(std::false_type{});
  if (a.out_u || !a.losses) return;
  double se = 0, sb = 0;
  for (int k = 0; k < a.n_int; ++k) se += double(a.e[k]) * double(a.e[k]);
  for (int k = 0; k < a.n_bnd; ++k) sb += double(a.b[k]) * double(a.b[k]);
  const double nn = double(std::max(a.n_int, 1)), kk = double(std::max(a.n_bnd, 1));
  a.losses[3 * a.step] = 0.5 * se / nn + 0.5 * a.penalty * sb / kk;
  a.losses[3 * a.step + 1] = std::sqrt(se / nn);
  a.losses[3 * a.step + 2] = std::sqrt(sb / kk);
  if (a.sums) {
    a.sums[0] = se;
    a.sums[1] = sb;
  }
}

#define RBFPDE_MLP_EMULATION_INSTANTIATE(T)                                                       \
  template MlpTiling emulated_mlp_tiling<T>(const MlpNetView<T>&, int, int, bool, int, int, int); \
  template void emulate_mlp_pass<T>(const MlpNetView<T>&, const MlpTiling&, const MlpPassArgs<T>&);
RBFPDE_MLP_EMULATION_INSTANTIATE(float)
RBFPDE_MLP_EMULATION_INSTANTIATE(double)
#undef RBFPDE_MLP_EMULATION_INSTANTIATE

}  // namespace rbfpde::gpu
