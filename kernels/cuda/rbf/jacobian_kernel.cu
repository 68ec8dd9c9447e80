// The Levenberg–Marquardt Jacobian J = ∂R/∂θ of R = [e/√N ; √(λ/K)·b], column order as the CPU:
// w_k (m columns), c_k (m·d, row-major), a_k (m); and R itself.
// Launch: grid (⌈n/128⌉, m), one thread per (row, neuron) writing that neuron's d + 2 entries of
// the row, so every column store is coalesced across the warp (J is column-major, ld n, for
// cuBLAS SYRK/GEMV).
//   napkin math per call: n·m Gaussians with derivatives (≈ 50 FLOPs + exp) and n·m(d+2)·sizeof(T)
//   bytes written: at m = 1024, n = 18432, d = 2, double: 0.6 GB, ≈ 0.2 ms at 3 TB/s (write-bound).
// General rows (G = true): the row's value and derivatives from general_rows.cuh.
// Without r_scaled only the m weight columns (the scaled features, which read neither the weights
// nor the residuals) are written, by the same instructions as in a whole Jacobian: the look-ahead
// factorisation of variable projection (cuda_rbf_varpro.cu) relies on their bits being the same.
#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/rbf/general_rows.cuh"
#include "kernels/cuda/rbf/launchers.hpp"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kJacobianThreads = 128;

template <class T, int D, bool G>
__global__ void __launch_bounds__(kJacobianThreads)
    jacobian_kernel(int n_int, int rows, const T* __restrict__ x, const T* __restrict__ res,
                    const T* __restrict__ theta, int m, T scale_interior, T scale_boundary,
                    T* __restrict__ jac, T* __restrict__ r_scaled, GeneralRows<T> general) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  const int k = blockIdx.y;
  if (row >= rows) return;
  const bool interior = row < n_int;
  const T scale = interior ? scale_interior : scale_boundary;
  T xr[D], c[D], diff[D];
  for (int j = 0; j < D; ++j) {
    xr[j] = x[std::size_t(row) * D + j];
    c[j] = theta[m + k * D + j];
  }
  const T r2 = squared_distance<D>(xr, c, diff);
  if constexpr (G) {
    const RowCoefficients<T, D> coef = load_row_coefficients<T, D>(general, row, n_int);
    const RowTerms<D, T> t =
        row_terms<T, D>(coef, laplacian_dims<D>(general), diff, r2, theta[m * (D + 1) + k]);
    const std::size_t ld = std::size_t(rows);
    jac[std::size_t(k) * ld + row] = scale * t.value;
    if (!r_scaled) return;
    const T w = theta[k];
    for (int j = 0; j < D; ++j)
      jac[(std::size_t(m) + std::size_t(k) * D + j) * ld + row] = scale * w * t.dc[j];
    jac[(std::size_t(m) * (D + 1) + k) * ld + row] = scale * w * t.da;
  } else {
    const NeuronTerms<T> t = gaussian_terms<D>(r2, theta[m * (D + 1) + k]);
    const T val = interior ? t.lap : t.phi;
    const T dc = interior ? t.lap_dc : t.phi_dc;
    const T da = interior ? t.lap_da : t.phi_da;
    const std::size_t ld = std::size_t(rows);
    jac[std::size_t(k) * ld + row] = scale * val;
    if (!r_scaled) return;
    const T w = theta[k];
    for (int j = 0; j < D; ++j)
      jac[(std::size_t(m) + std::size_t(k) * D + j) * ld + row] = scale * w * dc * diff[j];
    jac[(std::size_t(m) * (D + 1) + k) * ld + row] = scale * w * da;
  }
  if (k == 0) r_scaled[row] = scale * res[row];
}

}  // namespace

template <class T, int D>
void launch_jacobian(Stream stream, PointsView pts, const T* x, const T* res, const T* theta, int m,
                     T scale_interior, T scale_boundary, T* jacobian, T* r_scaled,
                     const GeneralRows<T>* general) {
  if (pts.rows() == 0 || m == 0) return;
  const dim3 grid((pts.rows() + kJacobianThreads - 1) / kJacobianThreads, m);
  const auto kernel = general ? jacobian_kernel<T, D, true> : jacobian_kernel<T, D, false>;
  kernel<<<grid, kJacobianThreads, 0, stream>>>(pts.n_int, pts.rows(), x, res, theta, m,
                                                scale_interior, scale_boundary, jacobian, r_scaled,
                                                general ? *general : GeneralRows<T>{});
  CUDA_CHECK_LAUNCH("jacobian_kernel");
}

#define RBFPDE_INSTANTIATE(T, D)                                                                   \
  template void launch_jacobian<T, D>(Stream, PointsView, const T*, const T*, const T*, int, T, T, \
                                      T*, T*, const GeneralRows<T>*);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::gpu
