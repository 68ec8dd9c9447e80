// Fused residual pass, loss reduction, feature assembly and evaluation: everything that sums
// w_k·φ_k or w_k·Δφ_k over the neurons at each point.
//
// Residual kernel: e = M w − f and b = N w − p without storing M or N (the paper's fusion: the
// features are cheap to read and expensive to compute). One thread per collocation row, 256
// threads per block, neurons streamed through shared memory in tiles of 256 (w, c, a: ≤ 10 KB),
// each thread summing its row over every neuron in neuron order (as the CPU does). Each block
// writes (Σe², Σb²) in double; a one-block finalize kernel sums the partials in block order, so
// the loss is deterministic without floating-point atomics.
//   napkin math per call, n rows, m neurons, d dims: n·m Gaussians of ≈ 3d + 12 FLOPs plus one
//   exp (≈ 20 FP64 instructions) → ≈ 35·n·m FLOPs; bytes: n·(d+2)·sizeof(T) in and out, the
//   parameters once per block. At m = 4096, n = 73728 (double): 1.1e10 FLOPs, ≈ 0.3 ms at the
//   H100's 34 TFLOP/s FP64 vector peak — compute-bound, as the paper found.
// Feature kernel: F (n × m, column-major) for the weight solves; grid (⌈n/128⌉, m), one entry per
//   thread so that every column store is coalesced. n·m Gaussians; writes n·m·sizeof(T) bytes
//   (2.4 GB at 4096/73728 in double: ≈ 0.8 ms at 3 TB/s, write-bound).
// Evaluate kernel: as the residual kernel, writing u and Δu.
#include <algorithm>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_reduce.cuh"
#include "kernels/cuda/launchers.hpp"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kRowThreads = 256;
constexpr int kNeuronTile = 256;
constexpr int kFeatureThreads = 128;
constexpr int kFinalizeThreads = 256;

// Stages neurons [k0, k0 + count) of theta into shared memory.
template <class T, int D>
__device__ void stage_neurons(const T* __restrict__ theta, int m, int k0, int count, T* s_w, T* s_c,
                              T* s_a) {
  for (int t = threadIdx.x; t < count; t += blockDim.x) {
    s_w[t] = theta[k0 + t];
    s_a[t] = theta[m * (D + 1) + k0 + t];
  }
  for (int t = threadIdx.x; t < count * D; t += blockDim.x) s_c[t] = theta[m + k0 * D + t];
}

template <class T, int D>
__global__ void __launch_bounds__(kRowThreads)
    residual_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ target,
                    const T* __restrict__ theta, int m, T* __restrict__ res,
                    double* __restrict__ partials) {
  __shared__ T s_w[kNeuronTile], s_c[kNeuronTile * D], s_a[kNeuronTile];
  __shared__ double scratch[32];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = row < rows;
  const bool interior = row < n_int;
  T xr[D];
  for (int j = 0; j < D; ++j) xr[j] = active ? x[std::size_t(row) * D + j] : T(0);
  T sum = T(0);
  for (int k0 = 0; k0 < m; k0 += kNeuronTile) {
    const int count = min(kNeuronTile, m - k0);
    __syncthreads();  // the previous tile is no longer read
    stage_neurons<T, D>(theta, m, k0, count, s_w, s_c, s_a);
    __syncthreads();
    if (active) {
      for (int k = 0; k < count; ++k) {
        T diff[D], phi, lap;
        const T r2 = squared_distance<D>(xr, &s_c[k * D], diff);
        gaussian_value_laplacian<D>(r2, s_a[k], phi, lap);
        sum += s_w[k] * (interior ? lap : phi);
      }
    }
  }
  double se = 0, sb = 0;
  if (active) {
    const T r = sum - target[row];
    res[row] = r;
    (interior ? se : sb) = double(r) * double(r);
  }
  se = block_sum(se, scratch);
  sb = block_sum(sb, scratch);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = se;
    partials[2 * blockIdx.x + 1] = sb;
  }
}

template <class T>
__global__ void __launch_bounds__(kRowThreads)
    loss_partials_kernel(int n_int, int rows, const T* __restrict__ res,
                         double* __restrict__ partials) {
  __shared__ double scratch[32];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  double se = 0, sb = 0;
  if (row < rows) (row < n_int ? se : sb) = double(res[row]) * double(res[row]);
  se = block_sum(se, scratch);
  sb = block_sum(sb, scratch);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = se;
    partials[2 * blockIdx.x + 1] = sb;
  }
}

__global__ void __launch_bounds__(kFinalizeThreads)
    loss_finalize_kernel(int n_int, int n_bnd, const double* __restrict__ partials, int blocks,
                         double penalty, DeviceScalars* scalars) {
  __shared__ double scratch[32];
  double se = 0, sb = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    se += partials[2 * b];
    sb += partials[2 * b + 1];
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

template <class T, int D>
__global__ void __launch_bounds__(kFeatureThreads)
    feature_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ theta, int m,
                   T* __restrict__ features) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int k = blockIdx.y;
  if (row >= rows) return;
  T xr[D], c[D];
  for (int j = 0; j < D; ++j) {
    xr[j] = x[std::size_t(row) * D + j];
    c[j] = theta[m + k * D + j];
  }
  T diff[D], phi, lap;
  const T r2 = squared_distance<D>(xr, c, diff);
  gaussian_value_laplacian<D>(r2, theta[m * (D + 1) + k], phi, lap);
  features[std::size_t(k) * rows + row] = row < n_int ? lap : phi;
}

template <class T, int D>
__global__ void __launch_bounds__(kRowThreads)
    evaluate_kernel(int n, const T* __restrict__ x, const T* __restrict__ theta, int m,
                    T* __restrict__ u, T* __restrict__ laplacian) {
  __shared__ T s_w[kNeuronTile], s_c[kNeuronTile * D], s_a[kNeuronTile];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = row < n;
  T xr[D];
  for (int j = 0; j < D; ++j) xr[j] = active ? x[std::size_t(row) * D + j] : T(0);
  T su = T(0), sl = T(0);
  for (int k0 = 0; k0 < m; k0 += kNeuronTile) {
    const int count = min(kNeuronTile, m - k0);
    __syncthreads();
    stage_neurons<T, D>(theta, m, k0, count, s_w, s_c, s_a);
    __syncthreads();
    if (active) {
      for (int k = 0; k < count; ++k) {
        T diff[D], phi, lap;
        const T r2 = squared_distance<D>(xr, &s_c[k * D], diff);
        gaussian_value_laplacian<D>(r2, s_a[k], phi, lap);
        su += s_w[k] * phi;
        sl += s_w[k] * lap;
      }
    }
  }
  if (active) {
    u[row] = su;
    laplacian[row] = sl;
  }
}

}  // namespace

int residual_blocks(int rows) { return std::max(1, (rows + kRowThreads - 1) / kRowThreads); }

template <class T, int D>
void launch_residuals(Stream stream, PointsView pts, const T* x, const T* target, const T* theta,
                      int m, T* res, double* partials) {
  residual_kernel<T, D><<<residual_blocks(pts.rows()), kRowThreads, 0, stream>>>(
      pts.n_int, pts.rows(), x, target, theta, m, res, partials);
  CUDA_CHECK_LAUNCH("residual_kernel");
}

template <class T>
void launch_loss_partials(Stream stream, PointsView pts, const T* res, double* partials) {
  loss_partials_kernel<T><<<residual_blocks(pts.rows()), kRowThreads, 0, stream>>>(
      pts.n_int, pts.rows(), res, partials);
  CUDA_CHECK_LAUNCH("loss_partials_kernel");
}

void launch_loss_finalize(Stream stream, PointsView pts, const double* partials, int blocks,
                          double penalty, DeviceScalars* scalars) {
  loss_finalize_kernel<<<1, kFinalizeThreads, 0, stream>>>(pts.n_int, pts.n_bnd, partials, blocks,
                                                           penalty, scalars);
  CUDA_CHECK_LAUNCH("loss_finalize_kernel");
}

template <class T, int D>
void launch_features(Stream stream, PointsView pts, const T* x, const T* theta, int m,
                     T* features) {
  if (pts.rows() == 0 || m == 0) return;
  const dim3 grid((pts.rows() + kFeatureThreads - 1) / kFeatureThreads, m);
  feature_kernel<T, D>
      <<<grid, kFeatureThreads, 0, stream>>>(pts.n_int, pts.rows(), x, theta, m, features);
  CUDA_CHECK_LAUNCH("feature_kernel");
}

template <class T, int D>
void launch_evaluate(Stream stream, int n, const T* x, const T* theta, int m, T* u, T* laplacian) {
  if (n == 0) return;
  evaluate_kernel<T, D><<<(n + kRowThreads - 1) / kRowThreads, kRowThreads, 0, stream>>>(
      n, x, theta, m, u, laplacian);
  CUDA_CHECK_LAUNCH("evaluate_kernel");
}

#define RBFPDE_INSTANTIATE(T, D)                                                                  \
  template void launch_residuals<T, D>(Stream, PointsView, const T*, const T*, const T*, int, T*, \
                                       double*);                                                  \
  template void launch_features<T, D>(Stream, PointsView, const T*, const T*, int, T*);           \
  template void launch_evaluate<T, D>(Stream, int, const T*, const T*, int, T*, T*);
RBFPDE_INSTANTIATE(float, 2)
RBFPDE_INSTANTIATE(float, 3)
RBFPDE_INSTANTIATE(double, 2)
RBFPDE_INSTANTIATE(double, 3)
#undef RBFPDE_INSTANTIATE
template void launch_loss_partials<float>(Stream, PointsView, const float*, double*);
template void launch_loss_partials<double>(Stream, PointsView, const double*, double*);

}  // namespace rbfpde::gpu
