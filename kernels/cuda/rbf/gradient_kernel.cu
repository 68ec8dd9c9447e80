// Gradient of I = 1/(2N) Σe² + λ/(2K) Σb² with respect to every neuron's weight, centre and width,
// from residuals already in memory, and optionally the gradient-descent step on c and a.
//   ∂I/∂w_k = Σ e_i Δφ_k(x_i)/N + λ Σ b_j φ_k(x_j)/K
//   ∂I/∂c_k = w_k (Σ e_i ∂Δφ_k/∂c /N + λ Σ b_j ∂φ_k/∂c /K), ∂I/∂a_k likewise with ∂/∂a.
// Launch: one block of 256 threads per NB neurons (NB = 4 when there are enough neurons to fill the
// GPU, else 1): the threads stride over the rows, each point read once serves NB neurons held in
// registers (register tiling: NB× less L2 traffic for the points and residuals), each thread keeps
// NB·2(d+2) partial sums, reduced once per block (warp shuffles, then the warps in order: fixed
// tree, no atomics). Block b alone reads and writes its neurons, so the step is applied in place.
// Everything that depends on a alone is computed once per neuron (neuron_constants), not per pair.
// Optionally block 0 also finalises the loss from the residual kernel's per-block partials (saves a
// launch per cycle).
//   FLOPs counted per pair, as executed (an FMA as 2, CUDA's double exp 31 = 14 FMAs + 3; the
//   per-neuron constants not counted): diff and r² 2d − 1 + d, t 1, exp 31, g (FMA) 2, Δφ 1,
//   ∂φ/∂c and ∂Δφ/∂c 3, ∂φ/∂a 2, ∂Δφ/∂a 5, accumulation 2 + 2 + 1 + 2d
//   → 2D: 5 + 1 + 31 + 2 + 1 + 3 + 2 + 5 + 9 = 59 FLOPs, 3D: 64. Reads
//   n·(d+1)·sizeof(T) bytes per block from L2 (the batch, ≤ 2.4 MB at 73728 rows in 2D double,
//   stays resident). At m = 4096, n = 73728: 18 GFLOP, ≈ 0.55 ms at the FP64 vector peak.
// General rows (G = true): each row's coefficients are loaded once per row and serve the NB
//   neurons; every pair's feature and derivatives come from general_rows.cuh (operator_row_terms
//   or boundary_row_terms: a division and ≈ 30 + 8D FLOPs more than the Poisson pair), the sums
//   and the step exactly as above.
#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/rbf/general_rows.cuh"
#include "kernels/cuda/rbf/launchers.hpp"
#include "kernels/cuda/rbf/rbf_reduce.cuh"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kGradientThreads = 256;
constexpr int kGradientWarps = kGradientThreads / 32;

template <class T, int D, int NB, bool G>
__global__ void __launch_bounds__(kGradientThreads)
    gradient_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ res,
                    T* __restrict__ theta, int m, T inv_n, T lam_k, T* __restrict__ grad,
                    bool apply_step, T learning_rate, T min_width, const double* loss_partials,
                    int loss_blocks, double penalty, DeviceScalars* scalars,
                    GeneralRows<T> general) {
  constexpr int V = 2 * (D + 2);  // per neuron: interior (w, a, c[D]) then boundary (w, a, c[D])
  __shared__ T reduce[kGradientWarps][NB * V];
  __shared__ T totals[NB * V];
  __shared__ double scratch[32];
  if (scalars != nullptr && blockIdx.x == 0)
    reduce_loss_partials(loss_partials, unsigned(loss_blocks), n_int, rows - n_int, penalty, scalars,
                         scratch);
  const int k0 = blockIdx.x * NB;
  T c[NB][D], acc[NB][V], width[NB];
  NeuronConstants<T> nk[NB];
#pragma unroll
  for (int q = 0; q < NB; ++q) {
    const int k = min(k0 + q, m - 1);  // a padding neuron repeats the last one; never written
#pragma unroll
    for (int j = 0; j < D; ++j) c[q][j] = theta[m + k * D + j];
    width[q] = theta[m * (D + 1) + k];
    nk[q] = neuron_constants<D>(width[q]);
#pragma unroll
    for (int v = 0; v < V; ++v) acc[q][v] = T(0);
  }
  const int ds = laplacian_dims<D>(general);
  for (int row = threadIdx.x; row < rows; row += kGradientThreads) {
    T xr[D];
#pragma unroll
    for (int j = 0; j < D; ++j) xr[j] = x[std::size_t(row) * D + j];
    const T r = res[row];
    const bool interior = row < n_int;
    if constexpr (G) {
      const RowCoefficients<T, D> coef = load_row_coefficients<T, D>(general, row, n_int);
#pragma unroll
      for (int q = 0; q < NB; ++q) {
        T diff[D];
        const T r2 = squared_distance<D>(xr, c[q], diff);
        const RowTerms<D, T> t = row_terms<T, D>(coef, ds, diff, r2, width[q]);
        if (interior) {
          acc[q][0] += r * t.value;
          acc[q][1] += r * t.da;
#pragma unroll
          for (int j = 0; j < D; ++j) acc[q][2 + j] += r * t.dc[j];
        } else {
          acc[q][D + 2] += r * t.value;
          acc[q][D + 3] += r * t.da;
#pragma unroll
          for (int j = 0; j < D; ++j) acc[q][D + 4 + j] += r * t.dc[j];
        }
      }
    } else {
#pragma unroll
      for (int q = 0; q < NB; ++q) {
        T diff[D];
        const T r2 = squared_distance<D>(xr, c[q], diff);
        const NeuronTerms<T> t = gaussian_terms_from_constants<D>(r2, nk[q]);
        if (interior) {
          acc[q][0] += r * t.lap;
          acc[q][1] += r * t.lap_da;
          const T rdc = r * t.lap_dc;
#pragma unroll
          for (int j = 0; j < D; ++j) acc[q][2 + j] += rdc * diff[j];
        } else {
          acc[q][D + 2] += r * t.phi;
          acc[q][D + 3] += r * t.phi_da;
          const T rdc = r * t.phi_dc;
#pragma unroll
          for (int j = 0; j < D; ++j) acc[q][D + 4 + j] += rdc * diff[j];
        }
      }
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int q = 0; q < NB; ++q)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      const T s = warp_sum(acc[q][v]);
      if (lane == 0) reduce[warp][q * V + v] = s;
    }
  __syncthreads();
  if (threadIdx.x < NB * V) {
    T s = T(0);
    for (int w = 0; w < kGradientWarps; ++w) s += reduce[w][threadIdx.x];
    totals[threadIdx.x] = s;
  }
  __syncthreads();
  if (threadIdx.x >= NB) return;
  const int q = threadIdx.x, k = k0 + q;
  if (k >= m) return;
  const T* sum = &totals[q * V];
  const T w = theta[k];
  const T a = theta[m * (D + 1) + k];
  const T gw = sum[0] * inv_n + sum[D + 2] * lam_k;
  const T ga = w * (sum[1] * inv_n + sum[D + 3] * lam_k);
  T gc[D];
  for (int j = 0; j < D; ++j) gc[j] = w * (sum[2 + j] * inv_n + sum[D + 4 + j] * lam_k);
  if (grad) {
    grad[k] = gw;
    for (int j = 0; j < D; ++j) grad[m + k * D + j] = gc[j];
    grad[m * (D + 1) + k] = ga;
  }
  if (apply_step) {
    T dc[D], da;
    limited_gd_step<D>(gc, ga, a, learning_rate, dc, da);  // the CPU backend's step, exactly
    for (int j = 0; j < D; ++j) theta[m + k * D + j] = c[q][j] - dc[j];
    T a_new = a - da;
    if (a_new < min_width) a_new = min_width;  // a comparison, not fmax: NaN stays NaN
    theta[m * (D + 1) + k] = a_new;
  }
}

}  // namespace

// Neurons per block: 4 once that still gives about two blocks per SM of a large GPU.
constexpr int kWideMinNeurons = 1024;

template <class T, int D>
void launch_gradient(Stream stream, PointsView pts, const T* x, const T* res, T* theta, int m,
                     T inv_n, T lam_k, T* grad, bool apply_step, T learning_rate, T min_width,
                     const LossFinalize* loss, const GeneralRows<T>* general) {
  if (m == 0) return;
  const double* partials = loss ? loss->partials : nullptr;
  const int blocks = loss ? loss->blocks : 0;
  const double penalty = loss ? loss->penalty : 0.0;
  DeviceScalars* scalars = loss ? loss->scalars : nullptr;
  const bool wide = m >= kWideMinNeurons;
  const int nb = wide ? 4 : 1;
  const auto kernel =
      general ? (wide ? gradient_kernel<T, D, 4, true> : gradient_kernel<T, D, 1, true>)
              : (wide ? gradient_kernel<T, D, 4, false> : gradient_kernel<T, D, 1, false>);
  kernel<<<(m + nb - 1) / nb, kGradientThreads, 0, stream>>>(
      pts.n_int, pts.rows(), x, res, theta, m, inv_n, lam_k, grad, apply_step, learning_rate,
      min_width, partials, blocks, penalty, scalars, general ? *general : GeneralRows<T>{});
  CUDA_CHECK_LAUNCH("gradient_kernel");
}

#define RBFPDE_INSTANTIATE(T, D)                                                                 \
  template void launch_gradient<T, D>(Stream, PointsView, const T*, const T*, T*, int, T, T, T*, \
                                      bool, T, T, const LossFinalize*, const GeneralRows<T>*);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::gpu
