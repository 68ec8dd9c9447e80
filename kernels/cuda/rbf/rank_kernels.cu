// The distributed path's small kernels (rank_kernels.hpp). Launch shapes: the loss kernels one
// block of 256 threads (2 doubles per residual block read, a few µs, latency-bound); the GD step
// one thread per neuron (m·(D+1) values read and written); the triangle copy one thread per entry
// of the cols × cols output (cols² values written).
#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/rbf/rank_kernels.hpp"
#include "kernels/cuda/rbf/rbf_reduce.cuh"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void loss_sums_kernel(const double* __restrict__ partials, int blocks,
                                 double* __restrict__ sums) {
  __shared__ double scratch[32];
  double se = 0, sb = 0;
  for (int b = threadIdx.x; b < blocks; b += blockDim.x) {
    se += partials[2 * b];
    sb += partials[2 * b + 1];
  }
  se = block_sum(se, scratch);
  sb = block_sum(sb, scratch);
  if (threadIdx.x == 0) {
    sums[0] = se;
    sums[1] = sb;
  }
}

__global__ void loss_from_sums_kernel(const double* __restrict__ sums, int n_int, int n_bnd,
                                      double penalty, DeviceScalars* scalars) {
  __shared__ double scratch[32];
  reduce_loss_partials(sums, 1u, n_int, n_bnd, penalty, scalars, scratch);
}

template <class T, int D>
__global__ void gd_apply_kernel(const T* __restrict__ grad, T* __restrict__ theta, int m,
                                T learning_rate, T min_width) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
  T gc[D], dc[D], da;
  for (int j = 0; j < D; ++j) gc[j] = grad[m + k * D + j];
  const T a = theta[m * (D + 1) + k];
  limited_gd_step<D>(gc, grad[m * (D + 1) + k], a, learning_rate, dc, da);
  for (int j = 0; j < D; ++j) theta[m + k * D + j] -= dc[j];
  T a_new = a - da;
  if (a_new < min_width) a_new = min_width;  // a comparison, not fmax: NaN stays NaN
  theta[m * (D + 1) + k] = a_new;
}

template <class T>
__global__ void upper_triangle_kernel(const T* __restrict__ a, int lda, int rows, int cols,
                                      T* __restrict__ r) {
  const long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (e >= (long long)cols * cols) return;
  const int i = int(e % cols), j = int(e / cols);
  r[e] = (i <= j && i < rows) ? a[i + (long long)j * lda] : T(0);
}

}  // namespace

void launch_loss_sums(Stream stream, const double* partials, int blocks, double* sums) {
  loss_sums_kernel<<<1, kThreads, 0, stream>>>(partials, blocks, sums);
  CUDA_CHECK_LAUNCH("loss_sums_kernel");
}

void launch_loss_from_sums(Stream stream, const double* sums, int n_int, int n_bnd, double penalty,
                           DeviceScalars* scalars) {
  loss_from_sums_kernel<<<1, kThreads, 0, stream>>>(sums, n_int, n_bnd, penalty, scalars);
  CUDA_CHECK_LAUNCH("loss_from_sums_kernel");
}

template <class T, int D>
void launch_gd_apply(Stream stream, const T* grad, T* theta, int m, T learning_rate, T min_width) {
  if (m == 0) return;
  gd_apply_kernel<T, D><<<(m + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      grad, theta, m, learning_rate, min_width);
  CUDA_CHECK_LAUNCH("gd_apply_kernel");
}

template <class T>
void launch_upper_triangle(Stream stream, const T* a, int lda, int rows, int cols, T* r) {
  const long long entries = (long long)cols * cols;
  if (entries == 0) return;
  upper_triangle_kernel<T><<<unsigned((entries + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      a, lda, rows, cols, r);
  CUDA_CHECK_LAUNCH("upper_triangle_kernel");
}

#define RBFPDE_INSTANTIATE(T, D) \
  template void launch_gd_apply<T, D>(Stream, const T*, T*, int, T, T);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE
template void launch_upper_triangle<float>(Stream, const float*, int, int, int, float*);
template void launch_upper_triangle<double>(Stream, const double*, int, int, int, double*);

}  // namespace rbfpde::gpu
