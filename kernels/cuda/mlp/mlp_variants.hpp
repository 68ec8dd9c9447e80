// The point-stationary pass (mlp_point_kernel.cu), as mlp_launch.cu's plan_mlp_tiling and
// launch_mlp_pass call it. Internal to kernels/cuda; no CUDA types.
#pragma once

#include <cstddef>

#include "kernels/cuda/mlp/mlp_kernels.hpp"

namespace rbfpde::gpu::detail {

struct DeviceLimits {
  int sms = 0;
  std::size_t shared_optin = 0, shared_per_sm = 0;
};

// When the point kernel takes this pass (mlp_plan.hpp's rules: a training pass of a network it
// fits, from kPtDefaultTilesPerSm tiles an SM or when tuning forces it), fills t (variant,
// points, tiles, grid, shared and scratch sizes), configures its kernels (once) and returns true;
// otherwise leaves t alone and returns false. Throws std::invalid_argument when tuning forces
// what the network or the device cannot take.
template <class T>
bool plan_point_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                       const MlpTuning& tuning, const DeviceLimits& limits, MlpTiling& t);
// Throws std::logic_error for an evaluation pass (args.out_u).
template <class T>
void launch_point_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                       const MlpPassArgs<T>& args);

}  // namespace rbfpde::gpu::detail
