// CudaRbfBackend's variable projection on one GPU: the projected system of centres and widths
// (vp_prepare, and its end, which vp_prepare_tsqr shares), the trials (vp_try) and their weights
// (preconditioned_weights, or the QR solve), the factor taken from an accepted preconditioned
// trial (project_out_range), and the look-ahead factorisation.
//
// Look-ahead (variable projection, one GPU, BackendOptions::vp_lookahead): an iteration with QR
// trials factors the scaled features three times, in vp_prepare and in the weight solve of each
// of its (about two) trial steps, and each geqrf is latency-bound (a few µs a column, the GPU
// mostly idle). So while a QR trial solves its weights on the main stream, a second stream
// computes the features of the trial's centres and widths as the Jacobian kernel does and
// factors them as vp_prepare would; when that trial is the one accepted, the next vp_prepare
// takes this factorisation instead of making its own. The same kernels and cuSOLVER calls on the
// same inputs: the same bits as without it, and one geqrf fewer on the path of an iteration.
// A preconditioned trial needs none: an accepted one leaves A = F·R⁻¹ and the Cholesky factor L
// of G = AᵀA, and the next vp_prepare takes F's factor LᵀR from them and projects [J_ca | R] by
// two passes of G's normal equations (GEMMs and potrs; BackendOptions::vp_factor_from_trial,
// docs/mathematics.md "The factor from the trial"), so the look-ahead runs beside a
// preconditioned trial only when it falls back to QR. With vp_factor_from_trial off it runs
// beside a preconditioned trial that the trainer expects to be accepted
// (vp_expect_accepted_trials: under Nielsen's damping rule, or a retry after a rejection).
#include "kernels/cuda/rbf/cuda_rbf_backend.cuh"

namespace rbfpde::cuda_detail {

template <class T, int D>
LossParts CudaRbfBackend<T, D>::vp_prepare() {
  if (dist_) return vp_prepare_tsqr();
  // The accepted preconditioned trial's factorisation replaces the QR (see the head of this
  // file).
  const bool from_trial = trial_factor_valid_;
  trial_factor_valid_ = false;
  const int n = pts_.rows(), pc = m_ * (D + 1), rows = n + m_;
  size_lm_buffers(n, pc);
  vp_diag_.resize(pc);
  vp_c_.resize(std::size_t(rows) * (pc + 1));
  qr_y_.resize(rows);
  enqueue_jacobian();
  if (m_ > 0 && n > 0) {
    if (from_trial) {
      ahead_.valid = false;     // (none is made beside a preconditioned trial)
    } else if (ahead_.valid) {  // the accepted trial's look-ahead factorisation: its QR
      std::swap(qr_a_, ahead_.a);
      std::swap(qr_tau_, ahead_.tau);
      ahead_.valid = false;
    } else {
      factor_features_qr(jac_.data());
    }
    copy_block(vp_c_.data(), rows, jac_.data() + std::size_t(n) * m_, n, n, pc);
    device_copy(vp_c_.data() + std::size_t(rows) * pc, r_scaled_.data(), n);
    CUDA_CHECK(cudaMemset2DAsync(vp_c_.data() + n, std::size_t(rows) * sizeof(T), 0,
                                 std::size_t(m_) * sizeof(T), pc + 1, stream_));
    // Marquardt's scaling from the unprojected columns (as the CPU backend).
    gpu::launch_column_norms<T>(stream_, vp_c_.data(), n, pc, rows, true, vp_diag_.data());
    LossParts parts;
    if (from_trial) {
      // B: C projected onto the complement of range(F) in all rows; F's factor LᵀR (in place,
      // R's lower part zero).
      project_out_range(vp_c_.data(), rows, pc + 1);
      CUBLAS_CHECK(
          gpu::blas::trmm_left_lower_t(cublas_, m_, m_, pc_.gram.data(), m_, vp_r_.data(), m_));
      ++trial_counts_.factored_from_trial;
      parts = finish_vp_prepare(rows, vp_c_.data(), rows, vp_c_.data() + std::size_t(rows) * pc);
    } else {
      apply_reflectors_t(qr_a_.data(), rows, m_, vp_c_.data(), pc + 1);
      // R for the preconditioned trials.
      vp_r_valid_ = preconditioned_;
      if (vp_r_valid_) {
        vp_r_.resize(std::size_t(m_) * m_);
        gpu::launch_upper_triangle<T>(stream_, qr_a_.data(), rows, vp_r_.data(), m_);
      }
      const T* b = vp_c_.data() + m_;
      parts = finish_vp_prepare(n, b, rows, b + std::size_t(rows) * pc);
    }
    vp_loss_ = parts.loss;
    return parts;
  }
  vp_r_valid_ = false;
  return finish_vp_prepare(0, nullptr, 0, nullptr);
}

template <class T, int D>
LossParts CudaRbfBackend<T, D>::vp_try(T mu) {
  if (!lm_prepared_) throw std::logic_error("vp_try called before vp_prepare");
  const int pc = m_ * (D + 1);
  if (pc == 0) return residuals();
  // The step on centres and widths (without residuals) is one graph; the weight solve that
  // follows has its own calls, beside the look-ahead factorisation on its own stream.
  if (!try_step(-3.0, pc, mu, m_, vp_diag_.data())) return rejected_step();
  const bool precondition = vp_r_valid_ && !dist_;
  const bool may_look_ahead = lookahead_ && !dist_ && pts_.rows() > 0;
  // Beside a preconditioned trial only without the factor from the trial, which replaces it.
  bool ahead = may_look_ahead && (!precondition || (expect_accepted_ && !factor_from_trial_));
  if (ahead) enqueue_lookahead();
  LossParts parts;
  const bool preconditioned = precondition && preconditioned_weights(parts);
  if (preconditioned) {
    ++trial_counts_.preconditioned;
    trial_factor_valid_ = factor_from_trial_ && vp_trial_factor_usable(pc_.correction);
  } else {
    if (may_look_ahead && !ahead && factor_from_trial_) {  // a fallback to QR
      enqueue_lookahead();
      ahead = true;
    }
    ++trial_counts_.qr;
    solve_weights_qr();
  }
  if (ahead) {
    CUDA_CHECK(cudaStreamWaitEvent(stream_, ahead_.join, 0));
    ahead_.valid = true;
  }
  return preconditioned ? parts : residuals();
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_lookahead() {
  if (!ahead_.stream) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&ahead_.stream, cudaStreamNonBlocking));
    CUSOLVER_CHECK(cusolverDnCreate(&ahead_.solver));
    CUSOLVER_CHECK(cusolverDnSetStream(ahead_.solver, ahead_.stream));
    CUDA_CHECK(cudaEventCreateWithFlags(&ahead_.fork, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventCreateWithFlags(&ahead_.join, cudaEventDisableTiming));
  }
  ahead_.features.resize(std::size_t(pts_.rows()) * m_);
  ahead_.info.resize(1);
  CUDA_CHECK(cudaEventRecord(ahead_.fork, stream_));
  CUDA_CHECK(cudaStreamWaitEvent(ahead_.stream, ahead_.fork, 0));
  gpu::launch_jacobian<T, D>(ahead_.stream, pts_, x_.data(), nullptr, theta_.data(), m_,
                             jacobian_scale_interior(), jacobian_scale_boundary(),
                             ahead_.features.data(), nullptr, general_rows());
  factor_features_on(ahead_.stream, ahead_.solver, ahead_.features.data(), ahead_.a, ahead_.tau,
                     ahead_.norms, ahead_.y, ahead_.work, ahead_.info.data());
  CUDA_CHECK(cudaEventRecord(ahead_.join, ahead_.stream));
}

template <class T, int D>
bool CudaRbfBackend<T, D>::preconditioned_weights(LossParts& parts) {
  const int n = pts_.rows(), rows = n + m_;
  qr_features_.resize(std::size_t(n) * m_);
  qr_y_.resize(rows);
  gpu::launch_features<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                             std::sqrt(inv_n()), std::sqrt(lam_k()), qr_features_.data(),
                             qr_y_.data(), general_rows());
  over_ridge_rows(stream_, qr_features_.data(), pc_.a, qr_norms_, qr_y_);
  T* a = pc_.a.data();
  pc_.gram.resize(std::size_t(m_) * m_);
  pc_.z.resize(m_);
  pc_.dz.resize(m_);
  pc_.r.resize(rows);
  pc_.norms.resize(2);
  pc_.info.resize(2);
  const T one = 1, zero = 0, minus_one = -1;
  CUBLAS_CHECK(gpu::blas::trsm_right_upper(cublas_, rows, m_, vp_r_.data(), m_, a, rows));
  CUBLAS_CHECK(gpu::blas::syrk_t(cublas_, m_, rows, &one, a, rows, &zero, pc_.gram.data()));
  int lwork = 0;
  CUSOLVER_CHECK(gpu::blas::potrf_buffer_size(cusolver_, m_, pc_.gram.data(), &lwork));
  work_.resize(std::max(lwork, 1));
  CUSOLVER_CHECK(gpu::blas::potrf(cusolver_, m_, pc_.gram.data(), work_.data(), lwork,
                                  pc_.info.data()));
  auto solve = [&](const T* rhs, T* x) {  // x = G⁻¹Aᵀ·rhs
    CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, rows, m_, &one, a, rows, rhs, &zero, x));
    CUSOLVER_CHECK(gpu::blas::potrs(cusolver_, m_, pc_.gram.data(), x, pc_.info.data() + 1));
  };
  solve(qr_y_.data(), pc_.z.data());
  device_copy(pc_.r.data(), qr_y_.data(), rows);
  CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_N, rows, m_, &minus_one, a, rows,
                               pc_.z.data(), &one, pc_.r.data()));
  solve(pc_.r.data(), pc_.dz.data());
  CUBLAS_CHECK(gpu::blas::axpy(cublas_, m_, &one, pc_.dz.data(), pc_.z.data()));
  {
    DevicePointerMode device_results(cublas_);
    CUBLAS_CHECK(gpu::blas::nrm2(cublas_, m_, pc_.dz.data(), pc_.norms.data()));
    CUBLAS_CHECK(gpu::blas::nrm2(cublas_, m_, pc_.z.data(), pc_.norms.data() + 1));
  }
  CUBLAS_CHECK(gpu::blas::trsv_upper(cublas_, m_, vp_r_.data(), m_, pc_.z.data()));
  gpu::launch_accept_weights<T>(stream_, pc_.z.data(), pc_.info.data(), theta_.data(), m_,
                                scalars_.data());
  enqueue_residuals();
  parts = to_loss_parts(read_scalars());
  int info = 0;
  CUDA_CHECK(cudaMemcpyAsync(&info, pc_.info.data(), sizeof(int), cudaMemcpyDeviceToHost,
                             stream_));
  std::vector<T> norms(2);
  download(norms, pc_.norms.data());  // synchronises
  const double correction = double(norms[0]) / double(norms[1]);
  pc_.correction = correction;
  if (vp_trial_weights_usable(info == 0, correction, parts.loss, vp_loss_)) return true;
  device_copy(theta_.data(), theta0_.data(), m_);
  res_stale_ = true;
  return false;
}

template <class T, int D>
void CudaRbfBackend<T, D>::project_out_range(T* c, int rows, int cols) {
  pc_.x.resize(std::size_t(m_) * cols);
  const T one = 1, zero = 0, minus_one = -1;
  for (int pass = 0; pass < 2; ++pass) {
    CUBLAS_CHECK(gpu::blas::gemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, m_, cols, rows, &one,
                                 pc_.a.data(), rows, c, rows, &zero, pc_.x.data(), m_));
    CUSOLVER_CHECK(gpu::blas::potrs_columns(cusolver_, m_, cols, pc_.gram.data(), pc_.x.data(),
                                            m_, pc_.info.data() + 1));
    CUBLAS_CHECK(gpu::blas::gemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, rows, cols, m_, &minus_one,
                                 pc_.a.data(), rows, pc_.x.data(), m_, &one, c, rows));
  }
}

template <class T, int D>
LossParts CudaRbfBackend<T, D>::finish_vp_prepare(int k, const T* b, int ldb, const T* z) {
  normal_equations(m_ * (D + 1), k, b, ldb, z);
  if (!b) CUDA_CHECK(cudaMemsetAsync(vp_diag_.data(), 0, vp_diag_.bytes(), stream_));
  return end_prepare();
}

template <class T, int D>
LossParts CudaRbfBackend<T, D>::end_prepare() {
  enqueue_save_theta0();
  lm_prepared_ = true;
  res_stale_ = false;
  return to_loss_parts(read_scalars());
}

// The members defined above, for every (T, D) make_cuda_backend builds.
#define RBFPDE_INSTANTIATE(T, D) \
  template LossParts CudaRbfBackend<T, D>::vp_prepare(); \
  template LossParts CudaRbfBackend<T, D>::vp_try(T); \
  template void CudaRbfBackend<T, D>::enqueue_lookahead(); \
  template bool CudaRbfBackend<T, D>::preconditioned_weights(LossParts&); \
  template void CudaRbfBackend<T, D>::project_out_range(T*, int, int); \
  template LossParts CudaRbfBackend<T, D>::finish_vp_prepare(int, const T*, int, const T*); \
  template LossParts CudaRbfBackend<T, D>::end_prepare();
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::cuda_detail
