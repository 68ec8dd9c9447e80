// The planning and launch of every CUDA MLP pass, and the network as the kernels see it
// (make_mlp_net_view). plan_mlp_tiling gives the training passes the point-stationary kernel is
// faster at (mlp_plan.hpp's rules) to that kernel (mlp_point_kernel.cu, called through
// mlp_variants.hpp), every other pass to the tiled kernel (mlp_pass_kernel.cu, through
// mlp_pass_block.cuh's pass_kernel). For the tiled kernel it picks the tile size (1 to 16
// points): about the smallest of those with the fewest waves of resident blocks, since a tile's
// time grows with its points.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/mlp/mlp_device.cuh"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/cuda/mlp/mlp_pass_block.cuh"
#include "kernels/cuda/mlp/mlp_plan.hpp"
#include "kernels/cuda/mlp/mlp_variants.hpp"
#include "kernels/mlp_backend.hpp"
#include "kernels/mlp_math.hpp"

namespace rbfpde::gpu {
using namespace detail;  // mlp_device.cuh's and mlp_pass_block.cuh's helpers
namespace {

DeviceLimits device_limits() {
  int dev = 0, sms = 0, optin = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  return {sms, std::size_t(optin), std::size_t(per_sm)};
}

constexpr std::size_t kPassStaticBytes = kPassThreads * sizeof(double) + 64;  // last block's

// Once per precision, outside any graph capture (plan_mlp_tiling runs before every launch).
template <class T>
void configure_pass_kernel(const DeviceLimits& limits) {
  static const bool configured = [&] {
    for (bool plain : {true, false})
      allow_shared_memory(pass_kernel<T>(plain), limits.shared_optin - kPassStaticBytes);
    return true;
  }();
  (void)configured;
}

}  // namespace

int mlp_device_sms() { return device_limits().sms; }

template <class T>
MlpNetView<T> make_mlp_net_view(const MlpOptions& options) {
  const std::vector<int> sizes = mlp_layer_sizes(options.dim, options.layers);
  if (options.dim < 1 || options.dim > kMlpMaxDim)
    throw std::invalid_argument("the CUDA MLP backend supports 1 to " + std::to_string(kMlpMaxDim) +
                                " dimensions, got " + std::to_string(options.dim));
  if (int(sizes.size()) - 1 > kMlpMaxLayers)
    throw std::invalid_argument("the CUDA MLP backend supports at most " +
                                std::to_string(kMlpMaxLayers - 1) + " hidden layers");
  for (int s : sizes)
    if (s < 1) throw std::invalid_argument("MLP layer widths must be ≥ 1");
  MlpNetView<T> net;
  net.dim = options.dim;
  net.layers = int(sizes.size()) - 1;
  net.activation = int(parse_activation(options.activation));
  net.lap_dims = options.laplacian_dims > 0 ? options.laplacian_dims : options.dim;
  if (net.lap_dims > net.dim)
    throw std::invalid_argument("the MLP's Laplacian cannot act on more coordinates (" +
                                std::to_string(net.lap_dims) + ") than it has (" +
                                std::to_string(net.dim) + ")");
  int off = 0;
  for (std::size_t l = 0; l < sizes.size(); ++l) net.sizes[l] = sizes[l];
  for (int l = 1; l <= net.layers; ++l) {
    net.w_offset[l - 1] = off;
    off += sizes[l] * sizes[l - 1];
    net.b_offset[l - 1] = off;
    off += sizes[l];
  }
  net.n_params = off;
  int ws = 0;
  for (int l = 1; l <= net.layers; ++l) {
    net.ws_stride[l - 1] = (sizes[l - 1] + 3) / 4 * 4;
    net.ws_offset[l - 1] = ws;
    ws += sizes[l] * net.ws_stride[l - 1];
    net.ws_bias[l - 1] = ws;
    ws += (sizes[l] + 3) / 4 * 4;
  }
  net.ws_size = ws;
  for (int j = 0; j < net.dim; ++j) {
    net.scale[j] = T(1);
    net.shift[j] = T(0);
  }
  if (!options.input_min.empty() || !options.input_max.empty()) {
    if (int(options.input_min.size()) != net.dim || int(options.input_max.size()) != net.dim)
      throw std::invalid_argument("the MLP input map needs dim values in input_min and input_max");
    for (int j = 0; j < net.dim; ++j) {
      const double len = options.input_max[j] - options.input_min[j];
      if (!(len > 0)) throw std::invalid_argument("the MLP input map needs input_max > input_min");
      net.scale[j] = T(2.0 / len);
      net.shift[j] = T(-2.0 * options.input_min[j] / len - 1.0);
    }
  }
  return net;
}

template <class T>
MlpTiling plan_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                          const MlpTuning& tuning) {
  static const DeviceLimits limits = device_limits();
  configure_pass_kernel<T>(limits);
  // The point kernel takes the training passes it is faster at (mlp_plan.hpp), or is forced.
  MlpTiling t;
  if (tuning.kernel != MlpTuning::Kernel::kTiled &&
      detail::plan_point_tiling(net, n_int, n_bnd, gradient, tuning, limits, t))
    return t;
  if (gradient && tuning.kernel == MlpTuning::Kernel::kPoint)
    throw std::invalid_argument(
        "the point-stationary MLP pass takes the training passes of 2D networks of hidden layers "
        "of one width ≤ " +
        std::to_string(kPtMaxWidth) + " with one output");
  const TileChoice choice =
      choose_tile_points(n_int, n_bnd, limits.sms, tuning.tile_points, [&](int p) {
        const std::size_t bytes = pass_shared_elements(net, p, gradient) * sizeof(T);
        if (bytes + kPassStaticBytes > limits.shared_optin) return 0;
        // The plan serves both instantiations (pass_block's Plain): the fewer blocks.
        int per_sm = 0, per_sm_other = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pass_kernel<T>(true),
                                                                 kPassThreads, bytes));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm_other, pass_kernel<T>(false), kPassThreads, bytes));
        return std::min(per_sm, per_sm_other);
      });
  if (choice.points == 0)
    throw std::runtime_error(
        "the CUDA MLP pass needs " +
        std::to_string(pass_shared_elements(net, 1, gradient) * sizeof(T) + kPassStaticBytes) +
        " bytes of shared memory per block for one point (" + std::to_string(net.n_params) +
        " parameters" + (gradient ? " and their gradient" : "") + "), the device allows " +
        std::to_string(limits.shared_optin) + ": use narrower layers");
  // The tiling emulate_mlp_pass gets, on the resident blocks or the tiles if fewer.
  t = emulated_mlp_tiling(net, n_int, n_bnd, gradient, choice.points, 1, kMlpTiled<T>);
  t.grid = std::max(1, std::min(t.tiles_interior + t.tiles_boundary, choice.resident));
  return t;
}

template <class T>
void launch_mlp_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                     const MlpPassArgs<T>& args) {
  const int total = tiling.tiles_interior + tiling.tiles_boundary;
  if (total == 0) return;
  if (tiling.variant == kMlpPoint) {
    detail::launch_point_pass(stream, net, tiling, args);
    return;
  }
  launch_mlp_kernel("mlp_pass_kernel", pass_kernel<T>(plain_pass(net, args)), tiling.grid,
                    kPassThreads, tiling.shared_bytes, stream, tiling.overlap, net, args,
                    tiling.points, tiling.ld, tiling.tiles_interior, total);
}

#define RBFPDE_MLP_LAUNCH_INSTANTIATE(T)                                                         \
  template MlpNetView<T> make_mlp_net_view<T>(const MlpOptions&);                                \
  template MlpTiling plan_mlp_tiling<T>(const MlpNetView<T>&, int, int, bool, const MlpTuning&); \
  template void launch_mlp_pass<T>(MlpStream, const MlpNetView<T>&, const MlpTiling&,            \
                                   const MlpPassArgs<T>&);
RBFPDE_MLP_LAUNCH_INSTANTIATE(float)
RBFPDE_MLP_LAUNCH_INSTANTIATE(double)
#undef RBFPDE_MLP_LAUNCH_INSTANTIATE

}  // namespace rbfpde::gpu
