// Small kernels of the weight solves and of Levenberg–Marquardt: the scalar updates of CG kept on
// the device (no host round trip per iteration), the ridge rows of the QR weight solve, the LM
// damping and the guarded parameter updates after a factorisation.
// Launch shapes: one block for everything that reduces over a vector of m or m(d+2) entries
// (≤ 20480 at 4096 neurons in 3D: a 1024-thread block reads it in ~20 loads per thread, a few µs);
// a 2D grid for the O(m²) symmetrisation.
//   napkin math: cg_step touches 5 vectors of m entries (m = 1024: 40 KB, L2-resident, ~3 µs,
//   latency-bound).
#include <algorithm>
#include <cfloat>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/rbf/rbf_reduce.cuh"
#include "kernels/cuda/rbf/launchers.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kVectorThreads = 1024;
constexpr int kNormThreads = 256;

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

template <class T>
__global__ void upper_triangle_kernel(const T* __restrict__ src, int ld_src, T* __restrict__ dst,
                                      int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // row
  const int j = blockIdx.y * blockDim.y + threadIdx.y;  // column
  if (i < m && j < m)
    dst[i + std::size_t(j) * m] = i <= j ? src[i + std::size_t(j) * ld_src] : T(0);
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

// norms[k] = |column k| of a column-major rows × cols matrix (leading dimension lda): one block a
// column, the sum of squares in double.
template <class T>
__global__ void __launch_bounds__(kNormThreads)
    column_norms_kernel(const T* __restrict__ a, int rows, int lda, bool squared,
                        T* __restrict__ norms) {
  __shared__ double scratch[32];
  const T* col = a + std::size_t(blockIdx.x) * lda;
  double ss = 0;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) ss += double(col[i]) * double(col[i]);
  ss = block_sum(ss, scratch);
  if (threadIdx.x == 0) norms[blockIdx.x] = T(squared ? ss : sqrt(ss));
}

// The ridge rows of the weights' least-squares system: a's rows n … n+m−1 (leading dimension
// n + m) become relative·max_k norms[k]·I, and y's last m entries zero.
template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    qr_ridge_rows_kernel(T* __restrict__ a, T* __restrict__ y, int n, int m,
                         const T* __restrict__ norms, T relative) {
  __shared__ T scratch[32];
  T local_max = T(0);
  for (int k = threadIdx.x; k < m; k += blockDim.x) local_max = norms[k] > local_max ? norms[k] : local_max;
  const T ridge = relative * block_max(local_max, scratch);
  const std::size_t lda = std::size_t(n) + m;
  for (std::size_t e = threadIdx.x; e < std::size_t(m) * m; e += blockDim.x) {
    const int i = int(e % m), k = int(e / m);
    a[n + i + k * lda] = i == k ? ridge : T(0);
  }
  for (int k = threadIdx.x; k < m; k += blockDim.x) y[n + k] = T(0);
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
__global__ void __launch_bounds__(256)
    lm_system_kernel(const T* __restrict__ jtj, const T* __restrict__ jtr, T* __restrict__ a,
                     T* __restrict__ delta, int p, const T* __restrict__ mu_ptr,
                     const T* __restrict__ scaling) {
  __shared__ T scratch[32];
  // Marquardt's scaling: diag JᵀJ, or the given vector.
  const auto diag = [&](int i) { return scaling ? scaling[i] : jtj[i + std::size_t(i) * p]; };
  T local_max = diag(0);
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    const T v = diag(i);
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
    if (i == j) {
      const T d = diag(i);
      v += mu * (d < floor ? floor : d);
    }
    a[e] = v;
  }
  if (blockIdx.x == 0)
    for (int i = threadIdx.x; i < p; i += blockDim.x) delta[i] = -jtr[i];
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    lm_apply_kernel(const T* __restrict__ theta0, T* __restrict__ delta,
                    const int* __restrict__ info, T* __restrict__ theta, int m, int dim,
                    int first, T min_width, DeviceScalars* scalars) {
  const int p = m * (dim + 2);
  int bad = 0;
  for (int i = threadIdx.x; i < p - first; i += blockDim.x) bad |= !isfinite(delta[i]);
  const bool rejected = __syncthreads_or(bad) || *info != 0;
  const int width_begin = m * (dim + 1);
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    T v = rejected || i < first ? theta0[i] : theta0[i] + delta[i - first];
    if (i >= width_begin && v < min_width) v = min_width;
    theta[i] = v;
    if (i >= first) delta[i - first] = v - theta0[i];
  }
  if (threadIdx.x == 0) scalars->step_rejected = rejected ? 1 : 0;
}

// −δᵀg − ½δᵀh over p entries, in double, into scalars->predicted_decrease (one block).
template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    linearised_decrease_kernel(const T* __restrict__ delta, const T* __restrict__ g,
                               const T* __restrict__ h, int p, DeviceScalars* scalars) {
  __shared__ double scratch[32];
  double sum = 0;
  for (int i = threadIdx.x; i < p; i += blockDim.x)
    sum -= double(delta[i]) * (double(g[i]) + 0.5 * double(h[i]));
  sum = block_sum(sum, scratch);
  if (threadIdx.x == 0) scalars->predicted_decrease = sum;
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

template <class T>
void launch_symmetrize_lower(Stream stream, T* a, int m) {
  if (m == 0) return;
  const dim3 block(32, 8);
  const dim3 grid((m + 31) / 32, (m + 7) / 8);
  symmetrize_lower_kernel<T><<<grid, block, 0, stream>>>(a, m);
  CUDA_CHECK_LAUNCH("symmetrize_lower_kernel");
}

template <class T>
void launch_upper_triangle(Stream stream, const T* src, int ld_src, T* dst, int m) {
  if (m == 0) return;
  const dim3 block(32, 8);
  const dim3 grid((m + 31) / 32, (m + 7) / 8);
  upper_triangle_kernel<T><<<grid, block, 0, stream>>>(src, ld_src, dst, m);
  CUDA_CHECK_LAUNCH("upper_triangle_kernel");
}

template <class T>
void launch_column_norms(Stream stream, const T* a, int rows, int cols, int lda, bool squared,
                         T* norms) {
  if (cols == 0) return;
  column_norms_kernel<T><<<cols, kNormThreads, 0, stream>>>(a, rows, lda, squared, norms);
  CUDA_CHECK_LAUNCH("column_norms_kernel");
}

template <class T>
void launch_qr_ridge_rows(Stream stream, T* a, T* y, int n, int m, const T* norms, T relative) {
  if (m == 0) return;
  qr_ridge_rows_kernel<T><<<1, kVectorThreads, 0, stream>>>(a, y, n, m, norms, relative);
  CUDA_CHECK_LAUNCH("qr_ridge_rows_kernel");
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
void launch_lm_system(Stream stream, const T* jtj, const T* jtr, T* a, T* delta, int p,
                      const T* mu, const T* scaling) {
  if (p == 0) return;
  const std::size_t pp = std::size_t(p) * p;
  const int blocks = int(std::min<std::size_t>((pp + 255) / 256, 264));
  lm_system_kernel<T><<<blocks, 256, 0, stream>>>(jtj, jtr, a, delta, p, mu, scaling);
  CUDA_CHECK_LAUNCH("lm_system_kernel");
}

template <class T>
void launch_lm_apply(Stream stream, const T* theta0, T* delta, const int* info, T* theta, int m,
                     int dim, int first, T min_width, DeviceScalars* scalars) {
  lm_apply_kernel<T>
      <<<1, kVectorThreads, 0, stream>>>(theta0, delta, info, theta, m, dim, first, min_width,
                                                    scalars);
  CUDA_CHECK_LAUNCH("lm_apply_kernel");
}

template <class T>
void launch_linearised_decrease(Stream stream, const T* delta, const T* g, const T* h, int p,
                                DeviceScalars* scalars) {
  linearised_decrease_kernel<T><<<1, kVectorThreads, 0, stream>>>(delta, g, h, p, scalars);
  CUDA_CHECK_LAUNCH("linearised_decrease_kernel");
}

template <class T>
void launch_accept_weights(Stream stream, const T* solution, const int* info, T* w, int m,
                           DeviceScalars* scalars) {
  accept_weights_kernel<T><<<1, kVectorThreads, 0, stream>>>(solution, info, w, m, scalars);
  CUDA_CHECK_LAUNCH("accept_weights_kernel");
}

#define RBFPDE_INSTANTIATE(T)                                                                     \
  template void launch_symmetrize_lower<T>(Stream, T*, int);                                      \
  template void launch_upper_triangle<T>(Stream, const T*, int, T*, int);                         \
  template void launch_add_to_diagonal<T>(Stream, T*, int, T);                                    \
  template void launch_sum_slabs_symmetric<T>(Stream, const T*, int, T*, int);                    \
  template void launch_cg_init<T>(Stream, const T*, const T*, T*, int, int, double, CgState*);    \
  template void launch_cg_step<T>(Stream, const T*, T*, T*, T*, int, int, CgState*);              \
  template void launch_lm_system<T>(Stream, const T*, const T*, T*, T*, int, const T*, const T*); \
  template void launch_column_norms<T>(Stream, const T*, int, int, int, bool, T*);                \
  template void launch_qr_ridge_rows<T>(Stream, T*, T*, int, int, const T*, T);                   \
  template void launch_lm_apply<T>(Stream, const T*, T*, const int*, T*, int, int, int, T,        \
                                   DeviceScalars*);                                               \
  template void launch_linearised_decrease<T>(Stream, const T*, const T*, const T*, int,          \
                                              DeviceScalars*);                                    \
  template void launch_accept_weights<T>(Stream, const T*, const int*, T*, int, DeviceScalars*);
RBFPDE_INSTANTIATE(float)
RBFPDE_INSTANTIATE(double)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::gpu
