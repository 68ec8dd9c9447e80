// Weight-solve kernels of the fused gdcg cycle: assembling A = MᵀM/N + λNᵀN/K and s for small m
// without storing the features, and CG with no host round trip at any m.
//
// gram_partial_kernel (m ≤ 128): grid of ≤ 64 blocks × 256 threads, each block a contiguous range
//   of rows. Per 32-row chunk it computes the scaled features F' (√(1/N)·Δφ or √(λ/K)·φ) into
//   shared memory, then every thread adds Σ_rows F'_ri F'_rj to the m²/256 entries of A it owns
//   and threads k < m add Σ F'_rk t'_r to s. Partial A and s per block go to a scratch array;
//   gram_reduce_kernel sums them in block order (deterministic, no atomics).
//   napkin math at (m, n) = (64, 524): 33 k Gaussians + n·m² = 2.1 M FMAs + 16 × 32 KB of
//   partials: a few µs, latency-bound. General rows (G = true): the features are formed by
//   general_rows.cuh, the row's coefficients read per entry (from L1: 32 rows per chunk).
// cg_small_kernel (m ≤ 128): one block of 8 threads per row (512 or 1024 threads), A held in
//   registers (m/8 entries per thread), d, r, w in shared memory; (A d)_i by 8-lane shuffles.
//   Per iteration 2m² + 10m FLOPs and 5 block barriers: ≈ 0.3 µs; 50 iterations ≈ 15 µs.
// cg_grid_kernel (128 < m ≤ kGridCgMaxNeurons): one kernel for the whole CG; G ≤ #SMs co-resident
//   blocks, block b owns rows [b·m/G, (b+1)·m/G) of A d (one warp per row, A read from L2/HBM,
//   the column of the symmetric A being its row), then one grid barrier per iteration, after
//   which EVERY block reads the whole A d and redoes the O(m) updates of w, r, d redundantly in
//   the same order (same bits in every block), so no second barrier is needed. A d is double
//   buffered so that a fast block's next product cannot overwrite what a slow one still reads.
//   napkin math per iteration: m² reads of A (m = 1024: 8 MB, L2-resident, ≈ 2 µs; m = 4096:
//   128 MB from HBM, ≈ 30 µs) plus one barrier (≈ 1 µs).
#include <algorithm>
#include <cfloat>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/rbf/general_rows.cuh"
#include "kernels/cuda/rbf/launchers.hpp"
#include "kernels/cuda/rbf/rbf_reduce.cuh"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kGramThreads = 256;
constexpr int kGramRows = 32;
constexpr int kGramMaxBlocks = 64;
constexpr int kGramMaxNeurons = 128;
constexpr int kGridCgThreads = 256;
constexpr int kGridCgMaxNeurons = 6144;

// G: general rows; s_ia2 then holds the width a instead of 1/a².
template <class T, int D, int EPT, bool G>
__global__ void __launch_bounds__(kGramThreads)
    gram_partial_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ target,
                        const T* __restrict__ theta, int m, T scale_interior, T scale_boundary,
                        int rows_per_block, T* __restrict__ a_partials, T* __restrict__ s_partials,
                        GeneralRows<T> general) {
  __shared__ T f[kGramRows][kGramMaxNeurons];
  __shared__ T st[kGramRows];
  __shared__ T s_c[kGramMaxNeurons * D], s_ia2[kGramMaxNeurons];
  const int tid = threadIdx.x;
  for (int k = tid; k < m; k += kGramThreads) {
    const T a = theta[m * (D + 1) + k];
    s_ia2[k] = G ? a : T(1) / (a * a);
    for (int j = 0; j < D; ++j) s_c[k * D + j] = theta[m + k * D + j];
  }
  T acc[EPT];
#pragma unroll
  for (int u = 0; u < EPT; ++u) acc[u] = T(0);
  T s_acc = T(0);
  const int r0 = blockIdx.x * rows_per_block;
  const int r1 = min(rows, r0 + rows_per_block);
  const int mm = m * m;
  for (int c0 = r0; c0 < r1; c0 += kGramRows) {
    __syncthreads();  // the previous chunk is no longer read (and the neurons are staged)
    for (int e = tid; e < kGramRows * m; e += kGramThreads) {
      const int p = e / m, k = e - p * m;
      const int row = c0 + p;
      T v = T(0);
      if (row < r1) {
        if constexpr (G) {
          T xr[D], diff[D];
          for (int j = 0; j < D; ++j) xr[j] = x[std::size_t(row) * D + j];
          const T r2 = squared_distance<D>(xr, &s_c[k * D], diff);
          const RowCoefficients<T, D> coef = load_row_coefficients<T, D>(general, row, n_int);
          v = (row < n_int ? scale_interior : scale_boundary) *
              row_value<T, D>(coef, laplacian_dims<D>(general), diff, r2, s_ia2[k]);
        } else {
          T r2 = T(0);
          for (int j = 0; j < D; ++j) {
            const T dj = x[std::size_t(row) * D + j] - s_c[k * D + j];
            r2 += dj * dj;
          }
          T phi, lap;
          gaussian_value_laplacian_from_inverse<D>(r2, s_ia2[k], phi, lap);
          v = row < n_int ? scale_interior * lap : scale_boundary * phi;
        }
      }
      f[p][k] = v;
    }
    for (int p = tid; p < kGramRows; p += kGramThreads) {
      const int row = c0 + p;
      st[p] = row < r1 ? (row < n_int ? scale_interior : scale_boundary) * target[row] : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < EPT; ++u) {
      const int e = tid + u * kGramThreads;
      if (e < mm) {
        const int j = e / m, i = e - j * m;
        T sum = acc[u];
        for (int p = 0; p < kGramRows; ++p) sum += f[p][i] * f[p][j];
        acc[u] = sum;
      }
    }
    if (tid < m)
      for (int p = 0; p < kGramRows; ++p) s_acc += f[p][tid] * st[p];
  }
  T* out = a_partials + std::size_t(blockIdx.x) * mm;
#pragma unroll
  for (int u = 0; u < EPT; ++u) {
    const int e = tid + u * kGramThreads;
    if (e < mm) out[e] = acc[u];
  }
  if (tid < m) s_partials[std::size_t(blockIdx.x) * m + tid] = s_acc;
}

template <class T>
__global__ void gram_reduce_kernel(int m, int blocks, const T* __restrict__ a_partials,
                                   const T* __restrict__ s_partials, T* __restrict__ a,
                                   T* __restrict__ s) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  const int mm = m * m;
  if (e < mm) {
    T sum = T(0);
    for (int b = 0; b < blocks; ++b) sum += a_partials[std::size_t(b) * mm + e];
    a[e] = sum;
  } else if (e < mm + m) {
    const int i = e - mm;
    T sum = T(0);
    for (int b = 0; b < blocks; ++b) sum += s_partials[std::size_t(b) * m + i];
    s[i] = sum;
  }
}

// Sum over the block of one value per thread, returned to every thread, with ONE barrier: warps
// reduce by shuffles, lane 0 writes its warp's total to `slot` (alternate two slots between
// consecutive calls so that no barrier is needed before the write), every thread adds the WARPS
// totals in warp order. Same inputs → same bits.
template <int WARPS>
__device__ __forceinline__ double block_sum_one_barrier(double v, double* slot) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) slot[threadIdx.x >> 5] = v;
  __syncthreads();
  double total = 0;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) total += slot[w];
  return total;
}

// The end state of a CG run for the host, written by one thread.
__device__ __forceinline__ void store_cg_state(CgState* state, double rr, double s_norm,
                                               double stop, int iterations) {
  state->rr = rr;
  state->s_norm = s_norm;
  state->stop = stop;
  state->iterations = iterations;
  state->done = 1;
}

// The CPU's CG, step for step: warm start from w, stop when |r| ≤ tol·|s|, break on dᵀAd ≤ 0.
// Sums of squares and dᵀAd in double. MP = rows padded (64 or 128), G threads per row (G = 2 for
// 64 rows, 4 for 128: 128 or 512 threads, 32 entries of A per thread in registers). Three
// barriers per iteration: two one-barrier reductions and the one that publishes d.
template <class T, int MP, int G>
__global__ void __launch_bounds__(MP * G)
    cg_small_kernel(const T* __restrict__ a_global, const T* __restrict__ s, T* __restrict__ w_global,
                    int m, int max_iterations, double tol, CgState* state) {
  constexpr int V = MP / G, WARPS = MP * G / 32;
  __shared__ T sd[MP], sr[MP], sw[MP];
  __shared__ double slots[4][WARPS];
  const int tid = threadIdx.x, row = tid / G, lane = tid % G;
  const bool owner = lane == 0 && row < m;
  T a[V];
#pragma unroll
  for (int v = 0; v < V; ++v) {
    const int col = lane + G * v;
    a[v] = (row < m && col < m) ? a_global[col + std::size_t(row) * m] : T(0);  // A symmetric
  }
  if (lane == 0) {
    sw[row] = row < m ? w_global[row] : T(0);
    sd[row] = T(0);
    sr[row] = T(0);
  }
  __syncthreads();
  // (A·vec)_row in every lane of the row's group; 4 independent chains for FP64 latency.
  auto apply = [&](const T* vec) {
    T part[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
    for (int q = 0; q < V; ++q) part[q & 3] += a[q] * vec[lane + G * q];
    T v = (part[0] + part[1]) + (part[2] + part[3]);
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
  };
  const T aw = apply(sw);
  double ss = 0, rr = 0;
  if (owner) {
    const T r = s[row] - aw;
    sr[row] = r;
    sd[row] = r;
    ss = double(s[row]) * double(s[row]);
    rr = double(r) * double(r);
  }
  ss = block_sum_one_barrier<WARPS>(ss, slots[0]);
  rr = block_sum_one_barrier<WARPS>(rr, slots[1]);
  const double s_norm = sqrt(ss);
  const double stop = tol * (s_norm > 0 ? s_norm : 1.0);
  int it = 0;
  for (; it < max_iterations && sqrt(rr) > stop; ++it) {
    // d is complete: published by the barrier that ended the previous reduction (the updates of
    // d below happen before the next reduction's barrier).
    const T ad = apply(sd);
    double dad = owner ? double(sd[row]) * double(ad) : 0.0;
    dad = block_sum_one_barrier<WARPS>(dad, slots[2]);  // also ends every read of d above
    if (!(dad > 0)) break;  // breakdown: A is only semi-definite along d
    const T alpha = T(rr / dad);
    double rr_new = 0;
    T r_new = T(0);
    if (owner) {
      sw[row] += alpha * sd[row];
      r_new = sr[row] - alpha * ad;
      sr[row] = r_new;
      rr_new = double(r_new) * double(r_new);
    }
    rr_new = block_sum_one_barrier<WARPS>(rr_new, slots[3]);
    const T beta = T(rr_new / rr);
    if (owner) sd[row] = r_new + beta * sd[row];
    rr = rr_new;
    // Slots 2 and 3 are read after their barriers and rewritten only in the next iteration,
    // after at least one further barrier; d's new values are read after the next barrier.
    __syncthreads();
  }
  __syncthreads();
  if (owner) w_global[row] = sw[row];
  if (tid == 0) store_cg_state(state, rr, s_norm, stop, it);
}

// Grid-wide barrier for co-resident blocks: count arrivals, the last one resets the count and
// advances the generation the others spin on.
__device__ void grid_barrier(unsigned* count, volatile unsigned* generation) {
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned gen = *generation;
    __threadfence();
    if (atomicAdd(count, 1u) == gridDim.x - 1) {
      atomicExch(count, 0u);
      __threadfence();
      atomicAdd(const_cast<unsigned*>(generation), 1u);
    } else {
      while (*generation == gen) {
      }
    }
    __threadfence();
  }
  __syncthreads();
}

// Block's rows of out = A·vec (A symmetric m × m: row i = column i, contiguous), one warp per
// row, four independent accumulators per lane so that four loads are in flight. `rows` holds the
// block's rows [r0, r1) (ld m) in shared memory when they fit, else null (read from L2/HBM).
template <class T>
__device__ void product_rows(const T* __restrict__ a, const T* rows, const T* vec, int m, int r0,
                             int r1, T* out) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int i = r0 + warp; i < r1; i += warps) {
    const T* col = rows ? rows + std::size_t(i - r0) * m : a + std::size_t(i) * m;
    // Eight loads in flight per lane: from HBM (m = 4096: 128 MB per product) latency × bandwidth
    // needs several MB in flight across the GPU.
    T p[8] = {T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0)};
    int j = lane;
    for (; j + 224 < m; j += 256) {
      T c[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) c[u] = col[j + 32 * u];
#pragma unroll
      for (int u = 0; u < 8; ++u) p[u] += c[u] * vec[j + 32 * u];
    }
    for (; j < m; j += 32) p[0] += col[j] * vec[j];
    T v = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    v = warp_sum(v);
    if (lane == 0) out[i] = v;
  }
}

template <class T>
__global__ void __launch_bounds__(kGridCgThreads)
    cg_grid_kernel(const T* __restrict__ a, const T* __restrict__ s, T* __restrict__ w_global,
                   T* ad_buffers, int m, int max_iterations, double tol, CgState* state,
                   unsigned* barrier, bool cache_rows) {
  extern __shared__ unsigned char smem_raw[];
  T* w = reinterpret_cast<T*>(smem_raw);
  T* r = w + m;
  T* d = r + m;
  T* ad = d + m;
  T* rows = cache_rows ? ad + m : nullptr;
  __shared__ double scratch[32];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int per = (m + gridDim.x - 1) / gridDim.x;
  const int r0 = min(m, blockIdx.x * per), r1 = min(m, r0 + per);
  unsigned* count = barrier;
  volatile unsigned* generation = barrier + 1;
  for (int i = tid; i < m; i += nt) w[i] = w_global[i];
  if (rows)
    for (std::size_t e = tid; e < std::size_t(r1 - r0) * m; e += nt)
      rows[e] = a[std::size_t(r0) * m + e];
  __syncthreads();
  product_rows(a, rows, w, m, r0, r1, ad_buffers);
  grid_barrier(count, generation);
  double ss = 0, rr = 0;
  for (int i = tid; i < m; i += nt) {
    const T ri = s[i] - __ldcg(&ad_buffers[i]);  // L2: written by other SMs
    r[i] = ri;
    d[i] = ri;
    ss += double(s[i]) * double(s[i]);
    rr += double(ri) * double(ri);
  }
  ss = block_sum(ss, scratch);
  rr = block_sum(rr, scratch);
  const double s_norm = sqrt(ss);
  const double stop = tol * (s_norm > 0 ? s_norm : 1.0);
  int it = 0;
  for (; it < max_iterations && sqrt(rr) > stop; ++it) {
    T* ad_global = ad_buffers + std::size_t(m) * ((it + 1) & 1);
    __syncthreads();  // d is complete
    product_rows(a, rows, d, m, r0, r1, ad_global);
    grid_barrier(count, generation);
    double dad = 0;
    for (int i = tid; i < m; i += nt) {
      const T v = __ldcg(&ad_global[i]);
      ad[i] = v;
      dad += double(d[i]) * double(v);
    }
    dad = block_sum(dad, scratch);
    if (!(dad > 0)) break;  // the same decision in every block: same data, same order
    const T alpha = T(rr / dad);
    const double rr_new = cg_step_update(alpha, w, r, d, ad, m, scratch);
    const T beta = T(rr_new / rr);
    for (int i = tid; i < m; i += nt) d[i] = r[i] + beta * d[i];
    rr = rr_new;
  }
  __syncthreads();
  for (int i = r0 + tid; i < r1; i += nt) w_global[i] = w[i];
  if (blockIdx.x == 0 && tid == 0) store_cg_state(state, rr, s_norm, stop, it);
}

int multiprocessors() {
  static int count = [] {
    int device = 0, value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, cudaDevAttrMultiProcessorCount, device));
    return value;
  }();
  return count;
}

}  // namespace

int gram_max_neurons() { return kGramMaxNeurons; }

int gram_blocks(int rows) {
  return std::max(1, std::min(kGramMaxBlocks, (rows + kGramRows - 1) / kGramRows));
}

template <class T, int D>
void launch_gram(Stream stream, PointsView pts, const T* x, const T* target, const T* theta, int m,
                 T scale_interior, T scale_boundary, T* a_partials, T* s_partials, T* a, T* s,
                 const GeneralRows<T>* general) {
  if (m > kGramMaxNeurons) throw std::logic_error("launch_gram: too many neurons");
  if (m == 0) return;
  const int rows = pts.rows();
  const int blocks = gram_blocks(rows);
  const int per = std::max(1, (rows + blocks - 1) / blocks);
  const bool wide = m * m > 16 * kGramThreads;
  const auto kernel =
      general
          ? (wide ? gram_partial_kernel<T, D, 64, true> : gram_partial_kernel<T, D, 16, true>)
          : (wide ? gram_partial_kernel<T, D, 64, false> : gram_partial_kernel<T, D, 16, false>);
  kernel<<<blocks, kGramThreads, 0, stream>>>(pts.n_int, rows, x, target, theta, m, scale_interior,
                                              scale_boundary, per, a_partials, s_partials,
                                              general ? *general : GeneralRows<T>{});
  CUDA_CHECK_LAUNCH("gram_partial_kernel");
  const int entries = m * m + m;
  gram_reduce_kernel<T><<<(entries + 255) / 256, 256, 0, stream>>>(m, blocks, a_partials,
                                                                  s_partials, a, s);
  CUDA_CHECK_LAUNCH("gram_reduce_kernel");
}

template <class T>
void launch_cg_small(Stream stream, const T* a, const T* s, T* w, int m, int max_iterations,
                     double tol, CgState* state) {
  if (m <= 64) {
    cg_small_kernel<T, 64, 2><<<1, 64 * 2, 0, stream>>>(a, s, w, m, max_iterations, tol, state);
  } else if (m <= 128) {
    cg_small_kernel<T, 128, 4><<<1, 128 * 4, 0, stream>>>(a, s, w, m, max_iterations, tol, state);
  } else {
    throw std::logic_error("cg_small: too many neurons");
  }
  CUDA_CHECK_LAUNCH("cg_small_kernel");
}

bool cg_grid_supported(int m, std::size_t scalar_size) {
  return m > 0 && m <= kGridCgMaxNeurons && 4 * std::size_t(m) * scalar_size <= 200 * 1024;
}

template <class T>
void launch_cg_grid(Stream stream, const T* a, const T* s, T* w, T* ad_buffers, int m,
                    int max_iterations, double tol, CgState* state, unsigned* barrier) {
  if (!cg_grid_supported(m, sizeof(T))) throw std::logic_error("cg_grid: unsupported size");
  // Rows of A cached in shared memory when a block's share fits (m ≤ ~1500 in double): A is then
  // read from L2 once per solve instead of once per iteration.
  const int blocks = std::max(1, std::min(multiprocessors(), (m + 7) / 8));
  const int per = (m + blocks - 1) / blocks;
  const std::size_t vectors = 4 * std::size_t(m) * sizeof(T);
  const std::size_t cached = vectors + std::size_t(per) * m * sizeof(T);
  const bool cache_rows = cached <= 200 * 1024;
  const std::size_t smem = cache_rows ? cached : vectors;
  CUDA_CHECK(cudaFuncSetAttribute(cg_grid_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(smem)));
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cg_grid_kernel<T>,
                                                           kGridCgThreads, smem));
  if (per_sm < 1) throw std::runtime_error("cg_grid: the kernel does not fit on an SM");
  // Co-residency of every block is what makes the spin barrier safe: at most one block per SM
  // (blocks ≤ #SMs, each fitting on one), and no more blocks than rows to share (8 warps a block).
  cg_grid_kernel<T><<<blocks, kGridCgThreads, smem, stream>>>(a, s, w, ad_buffers, m,
                                                              max_iterations, tol, state, barrier,
                                                              cache_rows);
  CUDA_CHECK_LAUNCH("cg_grid_kernel");
}

#define RBFPDE_INSTANTIATE(T, D)                                                                   \
  template void launch_gram<T, D>(Stream, PointsView, const T*, const T*, const T*, int, T, T, T*, \
                                  T*, T*, T*, const GeneralRows<T>*);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE
template void launch_cg_small<float>(Stream, const float*, const float*, float*, int, int, double,
                                     CgState*);
template void launch_cg_small<double>(Stream, const double*, const double*, double*, int, int,
                                      double, CgState*);
template void launch_cg_grid<float>(Stream, const float*, const float*, float*, float*, int, int,
                                    double, CgState*, unsigned*);
template void launch_cg_grid<double>(Stream, const double*, const double*, double*, double*, int,
                                     int, double, CgState*, unsigned*);

}  // namespace rbfpde::gpu
