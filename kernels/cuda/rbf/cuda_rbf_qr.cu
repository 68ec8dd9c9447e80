// CudaRbfBackend's QR factorisations: on one GPU, the least-squares weight solve (Householder QR
// of the scaled features over the ridge rows, Qᵀy by ormqr, a triangular solve) and the
// factorisation steps that variable projection and its look-ahead share; over several ranks,
// TSQR (each rank factors its own rows, the R factors are gathered and factored again) for the
// weight solve and for variable projection's system (docs/mathematics.md, "Over several ranks").
#include "kernels/cuda/rbf/cuda_rbf_backend.cuh"

namespace rbfpde::cuda_detail {

template <class T, int D>
void CudaRbfBackend<T, D>::solve_weights_qr() {
  if (dist_) return solve_weights_tsqr();
  const int n = pts_.rows();
  if (m_ == 0) return;
  const int rows = n + m_;
  qr_features_.resize(std::size_t(n) * m_);
  qr_y_.resize(rows);
  gpu::launch_features<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                             std::sqrt(inv_n()), std::sqrt(lam_k()), qr_features_.data(),
                             qr_y_.data(), general_rows());
  factor_features_qr(qr_features_.data());
  apply_reflectors_t(qr_a_.data(), rows, m_, qr_y_.data(), 1);
  CUBLAS_CHECK(gpu::blas::trsv_upper(cublas_, m_, qr_a_.data(), rows, qr_y_.data()));
  accept_weights(qr_y_.data());
}

template <class T, int D>
void CudaRbfBackend<T, D>::factor_features_on(cudaStream_t stream, cusolverDnHandle_t solver,
                                              const T* features, DeviceBuffer<T>& a,
                                              DeviceBuffer<T>& tau, DeviceBuffer<T>& norms,
                                              DeviceBuffer<T>& y, DeviceBuffer<T>& work,
                                              int* info) {
  over_ridge_rows(stream, features, a, norms, y);
  geqrf_on(solver, a.data(), pts_.rows() + m_, pts_.rows() + m_, m_, tau, work, info);
}

template <class T, int D>
void CudaRbfBackend<T, D>::over_ridge_rows(cudaStream_t stream, const T* features,
                                           DeviceBuffer<T>& a, DeviceBuffer<T>& norms,
                                           DeviceBuffer<T>& y) {
  const int n = pts_.rows(), rows = n + m_;
  a.resize(std::size_t(rows) * m_);
  norms.resize(m_);
  y.resize(rows);
  if (n > 0) copy_block(a.data(), rows, features, n, n, m_, stream);
  gpu::launch_column_norms<T>(stream, a.data(), n, m_, rows, false, norms.data());
  gpu::launch_qr_ridge_rows<T>(stream, a.data(), y.data(), n, m_, norms.data(),
                               vp_qr_ridge<T>());
}

template <class T, int D>
void CudaRbfBackend<T, D>::apply_reflectors_t(const T* a, int rows, int k, T* c, int cols) {
  int lwork = 0;
  CUSOLVER_CHECK(gpu::blas::ormqr_t_buffer_size(cusolver_, rows, cols, k, a, rows,
                                                qr_tau_.data(), c, &lwork));
  work_.resize(std::max(lwork, 1));
  CUSOLVER_CHECK(gpu::blas::ormqr_t(cusolver_, rows, cols, k, a, rows, qr_tau_.data(), c,
                                    work_.data(), int(work_.size()), info_.data()));
}

template <class T, int D>
void CudaRbfBackend<T, D>::tsqr_r(T* a, int rows, int lda, int cols) {
  const std::size_t cc = std::size_t(cols) * cols;
  tsqr_local_.resize(cc);
  if (rows > 0) geqrf_in_place(a, rows, lda, cols);
  gpu::launch_upper_triangle<T>(stream_, a, lda, rows, cols, tsqr_local_.data());
  const int stack_rows = gather_stack(tsqr_local_.data(), cols, cols);
  geqrf_in_place(tsqr_stack_.data(), stack_rows, stack_rows, cols);
  tsqr_r_.resize(cc);
  gpu::launch_upper_triangle<T>(stream_, tsqr_stack_.data(), stack_rows, stack_rows, cols,
                                tsqr_r_.data());
}

template <class T, int D>
int CudaRbfBackend<T, D>::gather_stack(const T* block, int rows, int cols) {
  const int ranks = comm_->size(), stack_rows = ranks * rows;
  const std::size_t size = std::size_t(rows) * cols;
  tsqr_gather_.resize(size * std::size_t(ranks));
  gpu::allgather(*comm_, block, size, tsqr_gather_.data(), stream_);
  tsqr_stack_.resize(std::size_t(stack_rows) * cols);
  for (int r = 0; r < ranks; ++r)
    copy_block(tsqr_stack_.data() + std::size_t(r) * rows, stack_rows,
               tsqr_gather_.data() + r * size, rows, rows, cols);
  return stack_rows;
}

template <class T, int D>
void CudaRbfBackend<T, D>::geqrf_on(cusolverDnHandle_t solver, T* a, int rows, int lda, int cols,
                                    DeviceBuffer<T>& tau, DeviceBuffer<T>& work, int* info) {
  tau.resize(std::max(std::min(rows, cols), 1));
  int lwork = 0;
  CUSOLVER_CHECK(gpu::blas::geqrf_buffer_size(solver, rows, cols, a, lda, &lwork));
  work.resize(std::max(lwork, 1));
  CUSOLVER_CHECK(gpu::blas::geqrf(solver, rows, cols, a, lda, tau.data(), work.data(),
                                  int(work.size()), info));
}

template <class T, int D>
void CudaRbfBackend<T, D>::set_ridge_rows(T* a, int n, int lda, int cols, const T* features,
                                          int ld_features) {
  qr_norms_.resize(m_);
  gpu::launch_column_norms<T>(stream_, features, n, m_, ld_features, true, qr_norms_.data());
  gpu::allreduce_sum(*comm_, qr_norms_.data(), std::size_t(m_), stream_);
  if (comm_->rank() != 0) return;
  std::vector<T> norms2(m_);
  download(norms2, qr_norms_.data());
  T max2 = T(0);
  for (T v : norms2) max2 = std::max(max2, v);
  const T ridge = vp_qr_ridge<T>() * std::sqrt(max2);
  std::vector<T> block(std::size_t(m_) * cols, T(0));
  for (int k = 0; k < m_; ++k) block[std::size_t(k) * m_ + k] = ridge;
  CUDA_CHECK(cudaMemcpy2DAsync(a + n, std::size_t(lda) * sizeof(T), block.data(),
                               std::size_t(m_) * sizeof(T), std::size_t(m_) * sizeof(T), cols,
                               cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T, int D>
void CudaRbfBackend<T, D>::solve_weights_tsqr() {
  const int n = pts_.rows();
  if (m_ == 0) return;
  const int rows = n + ridge_rows(), cols = m_ + 1;
  qr_features_.resize(std::size_t(n) * m_);
  qr_y_.resize(std::max(n, 1));
  tsqr_a_.resize(std::size_t(rows) * cols);
  if (n > 0) {
    gpu::launch_features<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                               std::sqrt(inv_n()), std::sqrt(lam_k()), qr_features_.data(),
                               qr_y_.data(), general_rows());
    copy_block(tsqr_a_.data(), rows, qr_features_.data(), n, n, m_);
    device_copy(tsqr_a_.data() + std::size_t(rows) * m_, qr_y_.data(), n);
  }
  set_ridge_rows(tsqr_a_.data(), n, rows, cols, qr_features_.data(), n);
  tsqr_r(tsqr_a_.data(), rows, rows, cols);
  solution_.resize(m_);
  device_copy(solution_.data(), tsqr_r_.data() + std::size_t(cols) * m_, m_);
  CUBLAS_CHECK(gpu::blas::trsv_upper(cublas_, m_, tsqr_r_.data(), cols, solution_.data()));
  accept_weights(solution_.data());
}

template <class T, int D>
LossParts CudaRbfBackend<T, D>::vp_prepare_tsqr() {
  const int n = pts_.rows(), pc = m_ * (D + 1), g = pc + 1;
  const int rows = n + ridge_rows(), k = std::min(rows, m_);
  size_lm_buffers(n, pc);
  vp_diag_.resize(pc);
  enqueue_jacobian();
  if (m_ == 0) return finish_vp_prepare(0, nullptr, 0, nullptr);
  const T one = T(1), zero = T(0);
  qr_a_.resize(std::size_t(std::max(rows, 1)) * m_);
  vp_c_.resize(std::size_t(std::max(rows, 1)) * g);
  if (n > 0) {
    copy_block(qr_a_.data(), rows, jac_.data(), n, n, m_);
    copy_block(vp_c_.data(), rows, jac_.data() + std::size_t(n) * m_, n, n, pc);
    device_copy(vp_c_.data() + std::size_t(rows) * pc, r_scaled_.data(), n);
  }
  set_ridge_rows(qr_a_.data(), n, rows, m_, jac_.data(), n);
  if (rows > n)
    CUDA_CHECK(cudaMemset2DAsync(vp_c_.data() + n, std::size_t(rows) * sizeof(T), 0,
                                 std::size_t(rows - n) * sizeof(T), g, stream_));
  gpu::launch_column_norms<T>(stream_, jac_.data() + std::size_t(n) * m_, n, pc, n, true,
                              vp_diag_.data());
  gpu::allreduce_sum(*comm_, vp_diag_.data(), std::size_t(pc), stream_);

  // This rank's D_i = Q_iᵀ C_i and G = Σ L_iᵀL_i.
  vp_gram_.resize(std::size_t(g) * g);
  if (rows > 0) {
    geqrf_in_place(qr_a_.data(), rows, rows, m_);
    apply_reflectors_t(qr_a_.data(), rows, k, vp_c_.data(), g);
  }
  // Zero first: SYRK writes the lower triangle only, and the whole of G is summed.
  CUDA_CHECK(cudaMemsetAsync(vp_gram_.data(), 0, vp_gram_.bytes(), stream_));
  if (rows > k)
    CUBLAS_CHECK(gpu::blas::syrk_t_ld(cublas_, g, rows - k, &one, vp_c_.data() + k, rows, &zero,
                                      vp_gram_.data(), g));
  gpu::allreduce_sum(*comm_, vp_gram_.data(), vp_gram_.size(), stream_);

  // [R_i | T_i] (m × (m + g), zero below row k) from every rank, stacked: (ranks·m) × (m + g).
  const int w = m_ + g;
  vp_top_.resize(std::size_t(m_) * w);
  gpu::launch_upper_triangle<T>(stream_, qr_a_.data(), rows, rows, m_, vp_top_.data());
  T* top_t = vp_top_.data() + std::size_t(m_) * m_;
  CUDA_CHECK(cudaMemsetAsync(top_t, 0, std::size_t(m_) * g * sizeof(T), stream_));
  if (k > 0) copy_block(top_t, m_, vp_c_.data(), rows, k, g);
  const int stack_rows = gather_stack(vp_top_.data(), m_, w);
  T* stack_t = tsqr_stack_.data() + std::size_t(stack_rows) * m_;
  geqrf_in_place(tsqr_stack_.data(), stack_rows, stack_rows, m_);
  apply_reflectors_t(tsqr_stack_.data(), stack_rows, m_, stack_t, g);
  if (stack_rows > m_)
    CUBLAS_CHECK(gpu::blas::syrk_t_ld(cublas_, g, stack_rows - m_, &one, stack_t + m_, stack_rows,
                                      &one, vp_gram_.data(), g));
  // JᵀJ: G's leading pc × pc block; JᵀR: G's last row (its lower triangle).
  copy_block(jtj_.data(), pc, vp_gram_.data(), g, pc, pc);
  copy_block(jtr_.data(), 1, vp_gram_.data() + pc, g, 1, pc);
  return end_prepare();
}

// The members defined above, for every (T, D) make_cuda_backend builds.
#define RBFPDE_INSTANTIATE(T, D) \
  template void CudaRbfBackend<T, D>::solve_weights_qr(); \
  template void CudaRbfBackend<T, D>::factor_features_on( cudaStream_t, cusolverDnHandle_t, const T*, DeviceBuffer<T>&, DeviceBuffer<T>&, DeviceBuffer<T>&, DeviceBuffer<T>&, DeviceBuffer<T>&, int*); \
  template void CudaRbfBackend<T, D>::over_ridge_rows(cudaStream_t, const T*, DeviceBuffer<T>&, DeviceBuffer<T>&, DeviceBuffer<T>&); \
  template void CudaRbfBackend<T, D>::apply_reflectors_t(const T*, int, int, T*, int); \
  template void CudaRbfBackend<T, D>::tsqr_r(T*, int, int, int); \
  template int CudaRbfBackend<T, D>::gather_stack(const T*, int, int); \
  template void CudaRbfBackend<T, D>::geqrf_on(cusolverDnHandle_t, T*, int, int, int, DeviceBuffer<T>&, DeviceBuffer<T>&, int*); \
  template void CudaRbfBackend<T, D>::set_ridge_rows(T*, int, int, int, const T*, int); \
  template void CudaRbfBackend<T, D>::solve_weights_tsqr(); \
  template LossParts CudaRbfBackend<T, D>::vp_prepare_tsqr();
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::cuda_detail
