// Fused residual pass, loss reduction, feature assembly and evaluation: everything that sums
// w_k·φ_k or w_k·Δφ_k over the neurons at each point.
//
// Residual kernel: e = M w − f and b = N w − p without storing M or N (the paper's fusion: the
// features are cheap to read and expensive to compute). Grid (row tiles, neuron chunks): a block
// of 128 threads holds 4 rows per thread (register tiling: each neuron read from shared memory
// serves four rows, and four independent exp chains hide FP64 latency) and loops over a chunk of
// ≤ 256 neurons staged in shared memory as (c, 1/a², w, w/a²), so the pair loop has no division:
//   t = r²/a², e = exp(−t), interior: sum += (w/a²)·e·(4t − 2d), boundary: sum += w·e.
// With one chunk the block finishes the rows (res, per-block Σe², Σb² in double); with several
// (large m: more blocks than SMs even at moderate n), chunk sums go to a scratch array and a
// combine kernel adds them in chunk order — deterministic, no floating-point atomics. The last
// block to finish (a ticket counter) sums the loss partials in block order into the loss scalars,
// so no separate finalize launch is needed.
//   FLOPs counted per pair, as executed (an FMA as 2): d subtractions, r² (1 MUL + (d−1) FMAs),
//   t (1), exp (31: CUDA's double exp is 14 FMAs + 3 other FP64 operations in its PTX; an
//   FMA-only exp written here measured slower), (4t − 2d)·w/a² (FMA + MUL), the sum (FMA)
//   → 2D: 2 + 3 + 1 + 31 + 3 + 2 = 42 FLOPs, 3D: 45. Per-neuron invariants are not counted.
//   Bytes: n·(d+2)·sizeof(T) in and out plus the parameters per block: compute-bound (at m = 4096,
//   n = 73728: 12.7 GFLOP, 0.37 ms at the 34 TFLOP/s FP64 vector peak).
// Feature kernel: F' (n × m, column-major) scaled by √(1/N) (interior rows) or √(λ/K) (boundary
//   rows), so that A = F'ᵀF' is ONE SYRK, and t' = scaled targets (s = F'ᵀt'); grid (⌈n/128⌉, m),
//   one entry per thread so that every column store is coalesced. n·m Gaussians; writes
//   n·m·sizeof(T) bytes (2.4 GB at 4096/73728 in double: ≈ 0.5 ms at 4.8 TB/s, write-bound).
// Evaluate kernel: as the residual kernel, writing u and Δu (Δₛu when the Laplacian is over the
//   first space_dim < D coordinates); the gradient kernel likewise writes ∇u.
// General rows (GeneralRows given): the residual and feature kernels are instantiated with G =
//   true, each row's coefficients loaded once into registers and every pair formed by
//   general_rows.cuh (rbf_math's operator and boundary rows: a division and ≈ 10 + 4D more
//   FLOPs per pair than the Poisson form above, which stays as it is).
#include <algorithm>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/rbf/general_rows.cuh"
#include "kernels/cuda/rbf/launchers.hpp"
#include "kernels/cuda/rbf/rbf_reduce.cuh"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kRowThreads = 256;
constexpr int kNeuronTile = 256;
constexpr int kFeatureThreads = 128;
constexpr int kResThreads = 128;
constexpr int kResRowsPerThread = 4;
constexpr int kResTileRows = kResThreads * kResRowsPerThread;
constexpr int kResChunk = 256;
// Several neuron chunks only when one chunk per tile leaves SMs idle.
constexpr int kResMinBlocks = 264;
constexpr double kResSplitMinPairs = 1 << 20;
constexpr int kResSmallBlocks = 132;

// The evaluate kernels' neuron tile from k0 on: theta's weights, centres and widths of neurons
// [k0, k0 + count) into shared memory, between two barriers (every thread of the block calls
// it); returns count (≤ kNeuronTile).
template <class T, int D>
__device__ __forceinline__ int stage_neuron_tile(const T* __restrict__ theta, int m, int k0, T* s_w,
                                                 T* s_c, T* s_a) {
  const int count = min(kNeuronTile, m - k0);
  __syncthreads();
  for (int t = threadIdx.x; t < count; t += blockDim.x) {
    s_w[t] = theta[k0 + t];
    s_a[t] = theta[m * (D + 1) + k0 + t];
  }
  for (int t = threadIdx.x; t < count * D; t += blockDim.x) s_c[t] = theta[m + k0 * D + t];
  __syncthreads();
  return count;
}

// Called by every block after thread 0 wrote its partials: the last block to arrive sums all
// partials in block order into the loss scalars (deterministic) and resets the counter, so that
// no separate finalize launch is needed.
__device__ void finalize_in_last_block(const double* partials, int n_int, int n_bnd,
                                       double penalty, DeviceScalars* scalars, unsigned* counter,
                                       double* scratch) {
  __shared__ bool last;
  const unsigned blocks = gridDim.x * gridDim.y;
  if (threadIdx.x == 0) {
    __threadfence();  // this block's partials before its ticket
    last = atomicAdd(counter, 1u) == blocks - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  reduce_loss_partials(partials, blocks, n_int, n_bnd, penalty, scalars, scratch);
  if (threadIdx.x == 0) *counter = 0u;
}

// Reduces this block's (Σe², Σb²) into its partials; with `scalars`, the last block to finish
// turns all partials into the loss.
__device__ void write_block_partials(double se, double sb, double* partials, int n_int, int rows,
                                     double penalty, DeviceScalars* scalars, unsigned* counter,
                                     double* scratch) {
  se = block_sum(se, scratch);
  sb = block_sum(sb, scratch);
  if (threadIdx.x == 0) {
    partials[2 * blockIdx.x] = se;
    partials[2 * blockIdx.x + 1] = sb;
  }
  if (scalars) finalize_in_last_block(partials, n_int, rows - n_int, penalty, scalars, counter, scratch);
}

// G: general rows (general_rows.cuh); s_wia2 then holds the width a instead of w/a².
template <class T, int D, int R, bool G>
__global__ void __launch_bounds__(kResThreads)
    residual_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ target,
                    const T* __restrict__ theta, int m, int chunk, T* __restrict__ res,
                    T* __restrict__ chunk_sums, double* __restrict__ partials, double penalty,
                    DeviceScalars* scalars, unsigned* counter, GeneralRows<T> general) {
  __shared__ T s_c[kResChunk * D], s_ia2[kResChunk], s_w[kResChunk], s_wia2[kResChunk];
  __shared__ double scratch[32];
  const int k0 = blockIdx.y * chunk;
  const int count = max(0, min(chunk, m - k0));
  for (int t = threadIdx.x; t < count; t += blockDim.x) {
    const T a = theta[m * (D + 1) + k0 + t];
    const T ia2 = T(1) / (a * a);
    const T w = theta[k0 + t];
    s_ia2[t] = ia2;
    s_w[t] = w;
    s_wia2[t] = G ? a : w * ia2;
  }
  for (int t = threadIdx.x; t < count * D; t += blockDim.x) s_c[t] = theta[m + k0 * D + t];
  __syncthreads();
  int row[R];
  bool active[R], interior[R];
  T xr[R][D], sum[R];
  RowCoefficients<T, D> coef[G ? R : 1];
#pragma unroll
  for (int q = 0; q < R; ++q) {
    row[q] = blockIdx.x * (kResThreads * R) + q * kResThreads + threadIdx.x;
    active[q] = row[q] < rows;
    interior[q] = row[q] < n_int;
    sum[q] = T(0);
#pragma unroll
    for (int j = 0; j < D; ++j) xr[q][j] = active[q] ? x[std::size_t(row[q]) * D + j] : T(0);
    if constexpr (G) {
      if (active[q]) coef[q] = load_row_coefficients<T, D>(general, row[q], n_int);
    }
  }
  const int ds = laplacian_dims<D>(general);
  for (int k = 0; k < count; ++k) {
    T c[D];
#pragma unroll
    for (int j = 0; j < D; ++j) c[j] = s_c[k * D + j];
    const T ia2 = s_ia2[k], w = s_w[k], wia2 = s_wia2[k];
#pragma unroll
    for (int q = 0; q < R; ++q) {
      if constexpr (G) {
        T diff[D];
        const T r2 = squared_distance<D>(xr[q], c, diff);
        sum[q] += w * row_value<T, D>(coef[q], ds, diff, r2, wia2);
      } else {
        T r2 = T(0);
#pragma unroll
        for (int j = 0; j < D; ++j) {
          const T dj = xr[q][j] - c[j];
          r2 += dj * dj;
        }
        const T t = r2 * ia2;
        const T e = rbf_exp(-t);
        const T coef_q = interior[q] ? wia2 * (T(4) * t - T(2 * D)) : w;
        sum[q] += coef_q * e;
      }
    }
  }
  if (gridDim.y > 1) {
#pragma unroll
    for (int q = 0; q < R; ++q)
      if (active[q]) chunk_sums[std::size_t(blockIdx.y) * rows + row[q]] = sum[q];
    return;
  }
  double se = 0, sb = 0;
#pragma unroll
  for (int q = 0; q < R; ++q) {
    if (!active[q]) continue;
    const T r = sum[q] - target[row[q]];
    res[row[q]] = r;
    (interior[q] ? se : sb) += double(r) * double(r);
  }
  write_block_partials(se, sb, partials, n_int, rows, penalty, scalars, counter, scratch);
}

// res = Σ_chunks chunk_sums − target (chunk order), and the per-block loss partials. Blocks of
// kResTileRows threads, one row each, so the partials line up with residual_kernel's tiles.
template <class T>
__global__ void __launch_bounds__(kResTileRows)
    residual_combine_kernel(int n_int, int rows, int chunks, const T* __restrict__ chunk_sums,
                            const T* __restrict__ target, T* __restrict__ res,
                            double* __restrict__ partials, double penalty, DeviceScalars* scalars,
                            unsigned* counter) {
  __shared__ double scratch[32];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  double se = 0, sb = 0;
  if (row < rows) {
    T sum = T(0);
    for (int c = 0; c < chunks; ++c) sum += chunk_sums[std::size_t(c) * rows + row];
    const T r = sum - target[row];
    res[row] = r;
    (row < n_int ? se : sb) = double(r) * double(r);
  }
  write_block_partials(se, sb, partials, n_int, rows, penalty, scalars, counter, scratch);
}

template <class T, int D, bool G>
__global__ void __launch_bounds__(kFeatureThreads)
    feature_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ target,
                   const T* __restrict__ theta, int m, T scale_interior, T scale_boundary,
                   T* __restrict__ features, T* __restrict__ scaled_target,
                   GeneralRows<T> general) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int k = blockIdx.y;
  if (row >= rows) return;
  T xr[D], c[D];
  for (int j = 0; j < D; ++j) {
    xr[j] = x[std::size_t(row) * D + j];
    c[j] = theta[m + k * D + j];
  }
  const T a = theta[m * (D + 1) + k];
  T diff[D];
  const T r2 = squared_distance<D>(xr, c, diff);
  if constexpr (G) {
    const RowCoefficients<T, D> coef = load_row_coefficients<T, D>(general, row, n_int);
    const T value = row_value<T, D>(coef, laplacian_dims<D>(general), diff, r2, a);
    const T scale = row < n_int ? scale_interior : scale_boundary;
    features[std::size_t(k) * rows + row] = scale * value;
    if (k == 0) scaled_target[row] = scale * target[row];
  } else {
    T phi, lap;
    gaussian_value_laplacian_from_inverse<D>(r2, T(1) / (a * a), phi, lap);
    const bool interior = row < n_int;
    const T scale = interior ? scale_interior : scale_boundary;
    features[std::size_t(k) * rows + row] = scale * (interior ? lap : phi);
    if (k == 0) scaled_target[row] = scale * target[row];
  }
}

// G: Δₛ over the first ds < D coordinates (operator_row_value with A = 1, B = 0, C = 0).
template <class T, int D, bool G>
__global__ void __launch_bounds__(kRowThreads)
    evaluate_kernel(int n, const T* __restrict__ x, const T* __restrict__ theta, int m,
                    T* __restrict__ u, T* __restrict__ laplacian, int ds) {
  __shared__ T s_w[kNeuronTile], s_c[kNeuronTile * D], s_a[kNeuronTile];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = row < n;
  T xr[D];
  for (int j = 0; j < D; ++j) xr[j] = active ? x[std::size_t(row) * D + j] : T(0);
  T su = T(0), sl = T(0);
  for (int k0 = 0; k0 < m; k0 += kNeuronTile) {
    const int count = stage_neuron_tile<T, D>(theta, m, k0, s_w, s_c, s_a);
    if (active)
      for (int k = 0; k < count; ++k) {
        T diff[D], phi, lap;
        const T r2 = squared_distance<D>(xr, &s_c[k * D], diff);
        gaussian_value_laplacian<D>(r2, s_a[k], phi, lap);
        if constexpr (G)
          lap = operator_row_value<D>(diff, r2, s_a[k], ds, T(1), (const T*)nullptr, T(0));
        su += s_w[k] * phi;
        sl += s_w[k] * lap;
      }
  }
  if (active) {
    u[row] = su;
    laplacian[row] = sl;
  }
}

// ∇u = Σ w_k ∇φ_k (gaussian_gradient), one point per thread, neurons staged as in evaluate.
template <class T, int D>
__global__ void __launch_bounds__(kRowThreads)
    evaluate_gradient_kernel(int n, const T* __restrict__ x, const T* __restrict__ theta, int m,
                             T* __restrict__ gradient) {
  __shared__ T s_w[kNeuronTile], s_c[kNeuronTile * D], s_a[kNeuronTile];
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const bool active = row < n;
  T xr[D], g[D];
  for (int j = 0; j < D; ++j) {
    xr[j] = active ? x[std::size_t(row) * D + j] : T(0);
    g[j] = T(0);
  }
  for (int k0 = 0; k0 < m; k0 += kNeuronTile) {
    const int count = stage_neuron_tile<T, D>(theta, m, k0, s_w, s_c, s_a);
    if (active)
      for (int k = 0; k < count; ++k) {
        T diff[D], gk[D];
        const T r2 = squared_distance<D>(xr, &s_c[k * D], diff);
        gaussian_gradient<D>(diff, r2, s_a[k], gk);
        for (int j = 0; j < D; ++j) g[j] += s_w[k] * gk[j];
      }
  }
  if (active)
    for (int j = 0; j < D; ++j) gradient[std::size_t(row) * D + j] = g[j];
}

}  // namespace

// Small passes (< kResSplitMinPairs point–neuron pairs) are latency-bound: one row per thread
// and chunks of ≥ 8 neurons, so that ~a block per SM works on them; large ones take four rows per
// thread (register tiling) and chunks only where the row tiles alone leave SMs idle.
bool residual_small(int rows, int m) { return double(rows) * m < kResSplitMinPairs; }
int residual_tiles(int rows, int r) {
  return std::max(1, (rows + kResThreads * r - 1) / (kResThreads * r));
}

// Upper bound of the blocks writing loss partials (one row per thread).
int residual_blocks(int rows) { return residual_tiles(rows, 1); }

// Neurons per block.
int residual_chunk(int rows, int m) {
  if (m <= 0) return 1;
  if (residual_small(rows, m)) {
    const int tiles = residual_tiles(rows, 1);
    const int chunks = std::max(1, std::min((kResSmallBlocks + tiles - 1) / tiles, (m + 7) / 8));
    return (m + chunks - 1) / chunks;
  }
  const int tiles = residual_tiles(rows, kResRowsPerThread);
  int chunks = std::max(1, (m + kResChunk - 1) / kResChunk);
  if (tiles * chunks < kResMinBlocks)
    chunks = std::max(chunks, std::min((kResMinBlocks + tiles - 1) / tiles, (m + 31) / 32));
  return std::max(1, (m + chunks - 1) / chunks);
}

template <class T, int D, bool G>
void launch_residual_kernel(bool small, dim3 grid, Stream stream, PointsView pts, const T* x,
                            const T* target, const T* theta, int m, int chunk, T* res,
                            T* chunk_sums, double* partials, double penalty, DeviceScalars* scalars,
                            unsigned* counter, const GeneralRows<T>& general) {
  const auto kernel =
      small ? residual_kernel<T, D, 1, G> : residual_kernel<T, D, kResRowsPerThread, G>;
  kernel<<<grid, kResThreads, 0, stream>>>(pts.n_int, pts.rows(), x, target, theta, m, chunk, res,
                                           chunk_sums, partials, penalty, scalars, counter,
                                           general);
  CUDA_CHECK_LAUNCH("residual_kernel");
}

template <class T, int D>
void launch_residuals(Stream stream, PointsView pts, const T* x, const T* target, const T* theta,
                      int m, T* res, T* chunk_sums, double* partials, const LossFinalize* loss,
                      unsigned* counter, const GeneralRows<T>* general) {
  const int rows = pts.rows();
  const bool small = residual_small(rows, m);
  const int tiles = residual_tiles(rows, small ? 1 : kResRowsPerThread);
  const int chunk = residual_chunk(rows, m);
  const int chunks = m > 0 ? (m + chunk - 1) / chunk : 1;
  DeviceScalars* scalars = loss ? loss->scalars : nullptr;
  const double penalty = loss ? loss->penalty : 0.0;
  DeviceScalars* direct = chunks > 1 ? nullptr : scalars;
  const dim3 grid(tiles, chunks);
  const auto launch =
      general ? launch_residual_kernel<T, D, true> : launch_residual_kernel<T, D, false>;
  launch(small, grid, stream, pts, x, target, theta, m, chunk, res, chunk_sums, partials, penalty,
         direct, counter, general ? *general : GeneralRows<T>{});
  if (chunks > 1) {
    const int combine_blocks = (rows + kResTileRows - 1) / kResTileRows;
    residual_combine_kernel<T><<<std::max(1, combine_blocks), kResTileRows, 0, stream>>>(
        pts.n_int, rows, chunks, chunk_sums, target, res, partials, penalty, scalars, counter);
    CUDA_CHECK_LAUNCH("residual_combine_kernel");
  }
}

int residual_chunk_count(int rows, int m) {
  const int chunk = residual_chunk(rows, m);
  return m > 0 ? (m + chunk - 1) / chunk : 1;
}

template <class T, int D>
void launch_features(Stream stream, PointsView pts, const T* x, const T* target, const T* theta,
                     int m, T scale_interior, T scale_boundary, T* features, T* scaled_target,
                     const GeneralRows<T>* general) {
  if (pts.rows() == 0 || m == 0) return;
  const dim3 grid((pts.rows() + kFeatureThreads - 1) / kFeatureThreads, m);
  const auto kernel = general ? feature_kernel<T, D, true> : feature_kernel<T, D, false>;
  kernel<<<grid, kFeatureThreads, 0, stream>>>(
      pts.n_int, pts.rows(), x, target, theta, m, scale_interior, scale_boundary, features,
      scaled_target, general ? *general : GeneralRows<T>{});
  CUDA_CHECK_LAUNCH("feature_kernel");
}

template <class T, int D>
void launch_evaluate(Stream stream, int n, const T* x, const T* theta, int m, T* u, T* laplacian,
                     int space_dim) {
  if (n == 0) return;
  const bool spatial = space_dim > 0 && space_dim < D;  // Δₛ over fewer than D coordinates
  const auto kernel = spatial ? evaluate_kernel<T, D, true> : evaluate_kernel<T, D, false>;
  kernel<<<(n + kRowThreads - 1) / kRowThreads, kRowThreads, 0, stream>>>(
      n, x, theta, m, u, laplacian, spatial ? space_dim : D);
  CUDA_CHECK_LAUNCH("evaluate_kernel");
}

template <class T, int D>
void launch_evaluate_gradient(Stream stream, int n, const T* x, const T* theta, int m,
                              T* gradient) {
  if (n == 0) return;
  evaluate_gradient_kernel<T, D>
      <<<(n + kRowThreads - 1) / kRowThreads, kRowThreads, 0, stream>>>(n, x, theta, m, gradient);
  CUDA_CHECK_LAUNCH("evaluate_gradient_kernel");
}

#define RBFPDE_INSTANTIATE(T, D)                                                                   \
  template void launch_residuals<T, D>(Stream, PointsView, const T*, const T*, const T*, int, T*,  \
                                       T*, double*, const LossFinalize*, unsigned*,                \
                                       const GeneralRows<T>*);                                     \
  template void launch_features<T, D>(Stream, PointsView, const T*, const T*, const T*, int, T, T, \
                                      T*, T*, const GeneralRows<T>*);                              \
  template void launch_evaluate<T, D>(Stream, int, const T*, const T*, int, T*, T*, int);          \
  template void launch_evaluate_gradient<T, D>(Stream, int, const T*, const T*, int, T*);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::gpu
