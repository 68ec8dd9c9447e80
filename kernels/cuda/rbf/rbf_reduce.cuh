// The RBF backend's reductions on top of common/device_reduce.cuh: one CG update of the weights
// and the loss scalars from per-block partials.
#pragma once

#include "kernels/cuda/common/device_reduce.cuh"
#include "kernels/cuda/rbf/launchers.hpp"

namespace rbfpde::gpu {

// One CG update with step α over this block's share of the m entries: w += α·d, r −= α·Ad.
// Returns |r|² at the new r, reduced over the block in fixed order (every thread must call it).
template <class T>
__device__ double cg_step_update(T alpha, T* w, T* r, const T* d, const T* ad, int m,
                                 double* scratch) {
  double rr_new = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) {
    w[i] += alpha * d[i];
    r[i] -= alpha * ad[i];
    rr_new += double(r[i]) * double(r[i]);
  }
  return block_sum(rr_new, scratch);
}

// The loss from per-block partials (Σe², Σb²) pairs: summed in block order by one whole block
// (deterministic), thread 0 writes I = Σe²/(2N) + λΣb²/(2K) and the rms residuals. The loads
// bypass L1: the partials may have been written by other blocks of the same launch.
__device__ inline void reduce_loss_partials(const double* partials, unsigned blocks, int n_int,
                                            int n_bnd, double penalty, DeviceScalars* scalars,
                                            double* scratch) {
  double se = 0, sb = 0;
  for (unsigned b = threadIdx.x; b < blocks; b += blockDim.x) {
    se += __ldcg(&partials[2 * b]);
    sb += __ldcg(&partials[2 * b + 1]);
  }
  se = block_sum(se, scratch);
  sb = block_sum(sb, scratch);
  if (threadIdx.x == 0) {
    const double n = double(n_int > 0 ? n_int : 1), k = double(n_bnd > 0 ? n_bnd : 1);
    scalars->loss = 0.5 * se / n + 0.5 * penalty * sb / k;
    scalars->rms_interior = sqrt(se / n);
    scalars->rms_boundary = sqrt(sb / k);
  }
}

}  // namespace rbfpde::gpu
