// The pass variants that live in files of their own, as mlp_kernels.cu's plan_mlp_tiling and
// launch_mlp_pass call them: variant 3 (mlp_fast_kernel.cu) and variant 4 (mlp_point_kernel.cu).
// Internal to kernels/cuda; no CUDA types.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/cuda/mlp_kernels.hpp"

namespace rbfpde::gpu::detail {

struct DeviceLimits {
  int sms = 0;
  std::size_t shared_optin = 0, shared_per_sm = 0;
};

// plan_*_tiling: when the variant takes this pass, fills t (variant, points, tiles, grid, shared
// and scratch sizes) and returns true; otherwise leaves t alone and returns false. want is
// RBFPDE_MLP_VARIANT's value (-1: unset).

// Variant 3 (double only), when asked for (want == 3): training passes (gradient) of 2D networks
// of 1 to 8 hidden layers, all of one width ≤ 56, and one output, whose θ image and staging fit
// in shared memory.
bool plan_fast_tiling(const MlpNetView<double>& net, int n_int, int n_bnd, bool gradient, int want,
                      const DeviceLimits& limits, MlpTiling& t);
// Its kernels' shared-memory attributes, once; outside any graph capture.
void configure_fast_kernels(const DeviceLimits& limits);
// Throws std::logic_error for an evaluation pass (args.out_u).
void launch_fast_pass(MlpStream stream, const MlpNetView<double>& net, const MlpTiling& tiling,
                      const MlpPassArgs<double>& args);

// Variant 4 (float and double): training passes of 2D networks of hidden layers all of one width
// ≤ 64 and one output, when asked for (want == 4) or by default (want == -1) from a number of
// tiles per SM (kPtDefaultTilesPerSm). Configures its kernels (once) when the network fits.
template <class T>
bool plan_point_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient, int want,
                       const DeviceLimits& limits, MlpTiling& t);
// Its phase timing (mlp_kernels.hpp's set_mlp_phase_timing): on zeroes the slots; the cycles
// of each PtPhase (mlp_point_kernel.cu), interior tiles in slots 0–15, boundary tiles 16–31.
void set_point_phase_timing(bool on);
std::vector<unsigned long long> point_phase_cycles();
// Throws std::logic_error for an evaluation pass (args.out_u).
template <class T>
void launch_point_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                       const MlpPassArgs<T>& args);

}  // namespace rbfpde::gpu::detail
