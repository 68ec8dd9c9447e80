// mlp_pass_kernel, the CUDA MLP's tiled pass (MlpTiling::variant kMlpTiledFloat / kMlpTiledDouble;
// docs/mathematics.md has the streams and their adjoints): persistent blocks of 512 threads, each
// running mlp_pass_block.cuh's pass_block on its tiles (the three GEMMs of a tile on the FMA units
// in float, on the tensor cores in double), as many blocks as are resident or as there are tiles if
// fewer, each with the dynamic shared memory of pass_shared_elements (plan_mlp_tiling,
// mlp_launch.cu). The last block to finish (an integer ticket) sums Σe², Σb² over the whole batch
// in a fixed order: same inputs, same bits.
//
// Napkin math, 2-50-50-50-50-1 (P = 7851 parameters), N interior and K boundary points: forward
// ≈ 2·P·((d+2)N + K) FLOPs, backward twice that: 0.23 GFLOP at 1200 + 120, 3.1 GFLOP at
// 16384 + 1024 (≈ 50 µs at the H200's 67 TFLOP/s fp32 vector peak). Bytes: θ (31 KB float) per
// block from L2, the partials (grid × P) written and read once, points and residuals:
// negligible. Shared memory (θ, the gradient accumulators, 350 stream rows) leaves one block of
// 16 warps per SM, and a tile runs 24 barrier-separated phases: the 6 GEMM phases take 2/3 of
// the time, the 12 elementwise ones 1/3, and the GEMM phases are latency-bound (short dependent
// MMA/FMA chains per warp, one block per SM). Large batches of the networks the
// point-stationary kernel takes go to that kernel instead (plan_mlp_tiling).
#include "kernels/cuda/mlp/mlp_device.cuh"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/cuda/mlp/mlp_pass_block.cuh"

namespace rbfpde::gpu {
using namespace detail;  // mlp_device.cuh's and mlp_pass_block.cuh's helpers
namespace {

// Tensor-core GEMMs (Mma) or RM rows per thread's micro-tile, THREADS threads; Plain as in
// pass_block.
template <class T, bool Mma, int RM, bool Plain, int THREADS>
__global__ void __launch_bounds__(THREADS, 1)
    mlp_pass_kernel(const MlpNetView<T> net, const MlpPassArgs<T> a, const int P, const int ld,
                    const int tiles_int, const int tiles_total) {
  pdl_start();
  if (a.halt && a.halt[0] < a.step) return;
  extern __shared__ __align__(16) unsigned char mlp_smem[];
  pass_block<Mma, RM, Plain>(net, a, P, ld, tiles_int, tiles_total, reinterpret_cast<T*>(mlp_smem),
                             int(blockIdx.x), int(gridDim.x));
  if (a.out_u || !a.losses) return;
  __shared__ double scratch[THREADS];
  last_block_loss(a, scratch);
}

}  // namespace

namespace detail {

template <class T>
PassKernel<T> pass_kernel(bool plain) {
  return plain ? mlp_pass_kernel<T, kPassMma<T>, 2, true, kPassThreads>
               : mlp_pass_kernel<T, kPassMma<T>, 2, false, kPassThreads>;
}

template PassKernel<float> pass_kernel<float>(bool);
template PassKernel<double> pass_kernel<double>(bool);

}  // namespace detail
}  // namespace rbfpde::gpu
