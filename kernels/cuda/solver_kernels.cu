// Small kernels of the weight solves and of Levenberg–Marquardt: the scalar updates of CG kept on
// the device (no host round trip per iteration), a whole-CG kernel for small m, the LM damping
// and the guarded parameter updates after a Cholesky solve.
// Launch shapes: one block for everything that reduces over a vector of m or m(d+2) entries
// (≤ 20480 at 4096 neurons in 3D: a 1024-thread block reads it in ~20 loads per thread, a few µs);
// a 2D grid for the O(m²) symmetrisation.
//   napkin math: cg_step touches 5 vectors of m entries (m = 1024: 40 KB, L2-resident, ~3 µs,
//   latency-bound); cg_single_block at m ≤ 128 holds A (≤ 128 KB in double) in shared memory and
//   does 2m² + 10m FLOPs per iteration on one SM (≈ 1 µs per iteration).
#include <algorithm>
#include <cfloat>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_reduce.cuh"
#include "kernels/cuda/launchers.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kVectorThreads = 1024;
constexpr int kSingleBlockThreads = 128;
constexpr int kSingleBlockMaxNeurons = 128;

template <class T>
struct Limits;
template <>
struct Limits<float> {
  static __device__ __forceinline__ float min_normal() { return FLT_MIN; }
};
template <>
struct Limits<double> {
  static __device__ __forceinline__ double min_normal() { return DBL_MIN; }
};

template <class T>
__global__ void symmetrize_lower_kernel(T* a, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // row
  const int j = blockIdx.y * blockDim.y + threadIdx.y;  // column
  if (i < m && j < m && i < j) a[i + std::size_t(j) * m] = a[j + std::size_t(i) * m];
}

// a = Σ_s partials[s] (lower triangle, slabs in order), then a's upper triangle = its lower.
template <class T>
__global__ void sum_slabs_symmetric_kernel(const T* __restrict__ partials, int slabs, T* a, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // row
  const int j = blockIdx.y * blockDim.y + threadIdx.y;  // column
  if (i >= m || j >= m || i < j) return;
  const std::size_t mm = std::size_t(m) * m, e = i + std::size_t(j) * m;
  T sum = T(0);
  for (int s = 0; s < slabs; ++s) sum += partials[s * mm + e];
  a[e] = sum;
  a[j + std::size_t(i) * m] = sum;
}

template <class T>
__global__ void add_to_diagonal_kernel(T* a, int m, T value) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) a[i + std::size_t(i) * m] += value;
}

// The CPU's CG, step for step: warm start from w, stop when |r| ≤ tol·|s|, break on dᵀAd ≤ 0.
// Sums of squares and dᵀAd in double, as the CPU's sum_squares.
template <class T>
__global__ void __launch_bounds__(kSingleBlockThreads)
    cg_single_block_kernel(const T* __restrict__ a_global, const T* __restrict__ s,
                           T* __restrict__ w_global, int m, int max_iterations, double tol,
                           CgState* state) {
  extern __shared__ unsigned char smem_raw[];
  T* a = reinterpret_cast<T*>(smem_raw);
  T* w = a + std::size_t(m) * m;
  T* r = w + m;
  T* d = r + m;
  T* ad = d + m;
  __shared__ double scratch[32];
  const int tid = threadIdx.x, nt = blockDim.x;
  for (int t = tid; t < m * m; t += nt) a[t] = a_global[t];
  for (int i = tid; i < m; i += nt) w[i] = w_global[i];
  __syncthreads();
  double ss = 0, rr = 0;
  for (int i = tid; i < m; i += nt) {
    T aw = T(0);
    for (int j = 0; j < m; ++j) aw += a[i + j * m] * w[j];
    r[i] = s[i] - aw;
    d[i] = r[i];
    ss += double(s[i]) * double(s[i]);
    rr += double(r[i]) * double(r[i]);
  }
  ss = block_sum(ss, scratch);
  rr = block_sum(rr, scratch);
  const double s_norm = sqrt(ss);
  const double stop = tol * (s_norm > 0 ? s_norm : 1.0);
  int it = 0;
  for (; it < max_iterations && sqrt(rr) > stop; ++it) {
    __syncthreads();  // d is complete
    double dad = 0;
    for (int i = tid; i < m; i += nt) {
      T v = T(0);
      for (int j = 0; j < m; ++j) v += a[i + j * m] * d[j];
      ad[i] = v;
      dad += double(d[i]) * double(v);
    }
    dad = block_sum(dad, scratch);
    if (!(dad > 0)) break;  // breakdown: A is only semi-definite along d
    const T alpha = T(rr / dad);
    const double rr_new = cg_step_update(alpha, w, r, d, ad, m, scratch);
    const T beta = T(rr_new / rr);
    __syncthreads();  // every thread has finished reading d in its matrix-vector product
    for (int i = tid; i < m; i += nt) d[i] = r[i] + beta * d[i];
    rr = rr_new;
  }
  for (int i = tid; i < m; i += nt) w_global[i] = w[i];
  if (tid == 0) {
    state->rr = rr;
    state->s_norm = s_norm;
    state->stop = stop;
    state->iterations = it;
    state->done = 1;
  }
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    cg_init_kernel(const T* __restrict__ s, const T* __restrict__ r, T* __restrict__ d, int m,
                   int max_iterations, double tol, CgState* state) {
  __shared__ double scratch[32];
  double ss = 0, rr = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) {
    ss += double(s[i]) * double(s[i]);
    rr += double(r[i]) * double(r[i]);
    d[i] = r[i];
  }
  ss = block_sum(ss, scratch);
  rr = block_sum(rr, scratch);
  if (threadIdx.x == 0) {
    const double s_norm = sqrt(ss);
    const double stop = tol * (s_norm > 0 ? s_norm : 1.0);
    state->rr = rr;
    state->s_norm = s_norm;
    state->stop = stop;
    state->iterations = 0;
    state->done = (max_iterations <= 0 || !(sqrt(rr) > stop)) ? 1 : 0;
  }
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    cg_step_kernel(const T* __restrict__ ad, T* __restrict__ w, T* __restrict__ r,
                   T* __restrict__ d, int m, int max_iterations, CgState* state) {
  __shared__ double scratch[32];
  if (state->done) return;  // uniform across the block
  const double rr = state->rr, stop = state->stop;
  const int iterations = state->iterations;
  double dad = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) dad += double(d[i]) * double(ad[i]);
  dad = block_sum(dad, scratch);
  if (!(dad > 0)) {
    if (threadIdx.x == 0) state->done = 1;
    return;
  }
  const T alpha = T(rr / dad);
  const double rr_new = cg_step_update(alpha, w, r, d, ad, m, scratch);
  const T beta = T(rr_new / rr);
  for (int i = threadIdx.x; i < m; i += blockDim.x) d[i] = r[i] + beta * d[i];
  if (threadIdx.x == 0) {
    state->rr = rr_new;
    state->iterations = iterations + 1;
    state->done = (iterations + 1 >= max_iterations || !(sqrt(rr_new) > stop)) ? 1 : 0;
  }
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    lm_damp_kernel(const T* __restrict__ jtj, T* __restrict__ a, int p, T mu) {
  __shared__ T scratch[32];
  T local_max = jtj[0];
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    const T v = jtj[i + std::size_t(i) * p];
    local_max = v > local_max ? v : local_max;
  }
  const T max_diag = block_max(local_max, scratch);
  const T scaled = max_diag * T(1e-12);
  const T floor =
      scaled < Limits<T>::min_normal() ? Limits<T>::min_normal() : scaled;  // std::max order
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    const T v = jtj[i + std::size_t(i) * p];
    a[i + std::size_t(i) * p] += mu * (v < floor ? floor : v);
  }
}

template <class T>
__global__ void __launch_bounds__(256)
    lm_system_kernel(const T* __restrict__ jtj, const T* __restrict__ jtr, T* __restrict__ a,
                     T* __restrict__ delta, int p, const T* __restrict__ mu_ptr) {
  __shared__ T scratch[32];
  T local_max = jtj[0];
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    const T v = jtj[i + std::size_t(i) * p];
    local_max = v > local_max ? v : local_max;
  }
  const T max_diag = block_max(local_max, scratch);
  const T scaled = max_diag * T(1e-12);
  const T floor = scaled < Limits<T>::min_normal() ? Limits<T>::min_normal() : scaled;
  const T mu = *mu_ptr;
  const std::size_t pp = std::size_t(p) * p;
  for (std::size_t e = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; e < pp;
       e += std::size_t(gridDim.x) * blockDim.x) {
    const int i = int(e % p), j = int(e / p);
    T v = jtj[e];
    if (i == j) v += mu * (v < floor ? floor : v);
    a[e] = v;
  }
  if (blockIdx.x == 0)
    for (int i = threadIdx.x; i < p; i += blockDim.x) delta[i] = -jtr[i];
}

template <class T>
__global__ void negate_kernel(const T* __restrict__ in, T* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = -in[i];
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    lm_apply_kernel(const T* __restrict__ theta0, const T* __restrict__ delta,
                    const int* __restrict__ info, T* __restrict__ theta, int m, int dim,
                    T min_width, DeviceScalars* scalars) {
  const int p = m * (dim + 2);
  int bad = 0;
  for (int i = threadIdx.x; i < p; i += blockDim.x) bad |= !isfinite(delta[i]);
  const bool rejected = __syncthreads_or(bad) || *info != 0;
  const int width_begin = m * (dim + 1);
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    T v = rejected ? theta0[i] : theta0[i] + delta[i];
    if (i >= width_begin && v < min_width) v = min_width;
    theta[i] = v;
  }
  if (threadIdx.x == 0) scalars->step_rejected = rejected ? 1 : 0;
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    accept_weights_kernel(const T* __restrict__ solution, const int* __restrict__ info,
                          T* __restrict__ w, int m, DeviceScalars* scalars) {
  int bad = 0;
  for (int i = threadIdx.x; i < m; i += blockDim.x) bad |= !isfinite(solution[i]);
  const bool rejected = __syncthreads_or(bad) || *info != 0;
  if (!rejected)
    for (int i = threadIdx.x; i < m; i += blockDim.x) w[i] = solution[i];
  if (threadIdx.x == 0) scalars->step_rejected = rejected ? 1 : 0;
}

}  // namespace

int cg_single_block_max_neurons() { return kSingleBlockMaxNeurons; }

template <class T>
void launch_symmetrize_lower(Stream stream, T* a, int m) {
  if (m == 0) return;
  const dim3 block(32, 8);
  const dim3 grid((m + 31) / 32, (m + 7) / 8);
  symmetrize_lower_kernel<T><<<grid, block, 0, stream>>>(a, m);
  CUDA_CHECK_LAUNCH("symmetrize_lower_kernel");
}

template <class T>
void launch_sum_slabs_symmetric(Stream stream, const T* partials, int slabs, T* a, int m) {
  if (m == 0) return;
  const dim3 block(32, 8);
  const dim3 grid((m + 31) / 32, (m + 7) / 8);
  sum_slabs_symmetric_kernel<T><<<grid, block, 0, stream>>>(partials, slabs, a, m);
  CUDA_CHECK_LAUNCH("sum_slabs_symmetric_kernel");
}

template <class T>
void launch_add_to_diagonal(Stream stream, T* a, int m, T value) {
  if (m == 0) return;
  add_to_diagonal_kernel<T><<<(m + 255) / 256, 256, 0, stream>>>(a, m, value);
  CUDA_CHECK_LAUNCH("add_to_diagonal_kernel");
}

template <class T>
void launch_cg_single_block(Stream stream, const T* a, const T* s, T* w, int m, int max_iterations,
                            double tol, CgState* state) {
  if (m > kSingleBlockMaxNeurons) throw std::logic_error("cg_single_block: too many neurons");
  const std::size_t smem = (std::size_t(m) * m + 4 * std::size_t(m)) * sizeof(T);
  CUDA_CHECK(cudaFuncSetAttribute(cg_single_block_kernel<T>,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cg_single_block_kernel<T>
      <<<1, kSingleBlockThreads, smem, stream>>>(a, s, w, m, max_iterations, tol, state);
  CUDA_CHECK_LAUNCH("cg_single_block_kernel");
}

template <class T>
void launch_cg_init(Stream stream, const T* s, const T* r, T* d, int m, int max_iterations,
                    double tol, CgState* state) {
  cg_init_kernel<T><<<1, kVectorThreads, 0, stream>>>(s, r, d, m, max_iterations, tol, state);
  CUDA_CHECK_LAUNCH("cg_init_kernel");
}

template <class T>
void launch_cg_step(Stream stream, const T* ad, T* w, T* r, T* d, int m, int max_iterations,
                    CgState* state) {
  cg_step_kernel<T><<<1, kVectorThreads, 0, stream>>>(ad, w, r, d, m, max_iterations, state);
  CUDA_CHECK_LAUNCH("cg_step_kernel");
}

template <class T>
void launch_lm_damp(Stream stream, const T* jtj, T* a, int p, T mu) {
  lm_damp_kernel<T><<<1, kVectorThreads, 0, stream>>>(jtj, a, p, mu);
  CUDA_CHECK_LAUNCH("lm_damp_kernel");
}

template <class T>
void launch_lm_system(Stream stream, const T* jtj, const T* jtr, T* a, T* delta, int p,
                      const T* mu) {
  if (p == 0) return;
  const std::size_t pp = std::size_t(p) * p;
  const int blocks = int(std::min<std::size_t>((pp + 255) / 256, 264));
  lm_system_kernel<T><<<blocks, 256, 0, stream>>>(jtj, jtr, a, delta, p, mu);
  CUDA_CHECK_LAUNCH("lm_system_kernel");
}

template <class T>
void launch_negate(Stream stream, const T* in, T* out, int n) {
  if (n == 0) return;
  negate_kernel<T><<<(n + 255) / 256, 256, 0, stream>>>(in, out, n);
  CUDA_CHECK_LAUNCH("negate_kernel");
}

template <class T>
void launch_lm_apply(Stream stream, const T* theta0, const T* delta, const int* info, T* theta,
                     int m, int dim, T min_width, DeviceScalars* scalars) {
  lm_apply_kernel<T>
      <<<1, kVectorThreads, 0, stream>>>(theta0, delta, info, theta, m, dim, min_width, scalars);
  CUDA_CHECK_LAUNCH("lm_apply_kernel");
}

template <class T>
void launch_accept_weights(Stream stream, const T* solution, const int* info, T* w, int m,
                           DeviceScalars* scalars) {
  accept_weights_kernel<T><<<1, kVectorThreads, 0, stream>>>(solution, info, w, m, scalars);
  CUDA_CHECK_LAUNCH("accept_weights_kernel");
}

#define RBFPDE_INSTANTIATE(T)                                                                  \
  template void launch_symmetrize_lower<T>(Stream, T*, int);                                   \
  template void launch_add_to_diagonal<T>(Stream, T*, int, T);                                 \
  template void launch_sum_slabs_symmetric<T>(Stream, const T*, int, T*, int);                 \
  template void launch_cg_single_block<T>(Stream, const T*, const T*, T*, int, int, double,    \
                                          CgState*);                                           \
  template void launch_cg_init<T>(Stream, const T*, const T*, T*, int, int, double, CgState*); \
  template void launch_cg_step<T>(Stream, const T*, T*, T*, T*, int, int, CgState*);           \
  template void launch_lm_damp<T>(Stream, const T*, T*, int, T);                               \
  template void launch_negate<T>(Stream, const T*, T*, int);                                   \
  template void launch_lm_system<T>(Stream, const T*, const T*, T*, T*, int, const T*);        \
  template void launch_lm_apply<T>(Stream, const T*, const T*, const int*, T*, int, int, T,    \
                                   DeviceScalars*);                                            \
  template void launch_accept_weights<T>(Stream, const T*, const int*, T*, int, DeviceScalars*);
RBFPDE_INSTANTIATE(float)
RBFPDE_INSTANTIATE(double)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::gpu
