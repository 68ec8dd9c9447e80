// CudaRbfBackend's Levenberg–Marquardt: the Jacobian and its JᵀJ, JᵀR (lm_prepare), the damped
// trial step (lm_try, and the step on centres and widths that vp_try takes), the rejection, and
// run_graph, which captures and replays the CUDA graphs of lm_prepare and the trial steps.
#include "kernels/cuda/rbf/cuda_rbf_backend.cuh"

namespace rbfpde::cuda_detail {

template <class T, int D>
LossParts CudaRbfBackend<T, D>::lm_prepare() {
  const int n = pts_.rows();
  size_lm_buffers(n, m_ * (D + 2));
  run_graph({-1.0, double(n), double(m_), ptr_key(x_.data()), ptr_key(theta_.data()),
             ptr_key(jac_.data()), ptr_key(jtj_.data()), ptr_key(theta0_.data()),
             ptr_key(chunk_sums_.data())},
            [&] { enqueue_lm_prepare(); });
  lm_prepared_ = true;
  res_stale_ = false;
  return to_loss_parts(pinned_scalars_[0]);
}

template <class T, int D>
LossParts CudaRbfBackend<T, D>::lm_try(T mu) {
  if (!lm_prepared_) throw std::logic_error("lm_try called before lm_prepare");
  const int p = m_ * (D + 2);
  if (p == 0) return residuals();
  const bool accepted = try_step(-2.0, p, mu, 0, nullptr);
  res_stale_ = false;
  return accepted ? to_loss_parts(pinned_scalars_[0]) : rejected_step();
}

template <class T, int D>
void CudaRbfBackend<T, D>::lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const {
  // Column-major with the lower triangle from SYRK: the upper one is cleared to match the CPU.
  const std::size_t p = jtr_.size();
  jtj.assign(p * p, T(0));
  jtr.assign(p, T(0));
  if (p == 0) return;
  download(jtj, jtj_.data());
  download(jtr, jtr_.data());
  for (std::size_t j = 0; j < p; ++j)
    for (std::size_t i = 0; i < j; ++i) jtj[i + j * p] = T(0);
}

template <class T, int D>
void CudaRbfBackend<T, D>::lm_reject() {
  if (!lm_prepared_) throw std::logic_error("lm_reject called before lm_prepare");
  // Asynchronous: the next call that needs θ or the residuals finds them in stream order.
  if (theta_.size() > 0) device_copy(theta_.data(), theta0_.data(), theta_.size());
  invalidate_features();
  res_stale_ = true;
}

template <class T, int D>
template <class Enqueue>
void CudaRbfBackend<T, D>::run_graph(const std::vector<double>& operation_key,
                                     const Enqueue& enqueue) {
  const std::vector<double> key = with_coefficients(operation_key);
  cudaGraphExec_t exec = graphs_.find(key);
  if (!exec && graphs_usable_) {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    try {
      exec = gpu::capture_graph(stream_, cudaStreamCaptureModeRelaxed, [&] {
        enqueue();
        CUDA_CHECK(cudaMemcpyAsync(pinned_scalars_.data(), scalars_.data(), sizeof(DeviceScalars),
                                   cudaMemcpyDeviceToHost, stream_));
      });
      graphs_.insert(key, exec);
    } catch (const std::exception&) {
      exec = nullptr;
      graphs_usable_ = false;  // this library version cannot be captured: stop trying
      (void)cudaGetLastError();
    }
  }
  if (exec) {
    CUDA_CHECK(cudaGraphLaunch(exec, stream_));
  } else {
    enqueue();
    CUDA_CHECK(cudaMemcpyAsync(pinned_scalars_.data(), scalars_.data(), sizeof(DeviceScalars),
                               cudaMemcpyDeviceToHost, stream_));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_jacobian() {
  enqueue_residuals();
  gpu::launch_jacobian<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_,
                             jacobian_scale_interior(), jacobian_scale_boundary(), jac_.data(),
                             r_scaled_.data(), general_rows());
}

template <class T, int D>
void CudaRbfBackend<T, D>::size_lm_buffers(int n, int q) {
  jac_.resize(std::size_t(n) * m_ * (D + 2));
  r_scaled_.resize(n);
  jtj_.resize(std::size_t(q) * q);
  jtr_.resize(q);
  theta0_.resize(theta_.size());
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_lm_prepare() {
  const int p = m_ * (D + 2);
  const int n = pts_.rows();
  enqueue_jacobian();
  normal_equations(p, n, n > 0 && p > 0 ? jac_.data() : nullptr, n, r_scaled_.data());
  if (dist_ && p > 0) {
    // The whole p × p buffer: SYRK's lower triangle is what the LM system reads.
    gpu::allreduce_sum(*comm_, jtj_.data(), std::size_t(p) * p, stream_);
    gpu::allreduce_sum(*comm_, jtr_.data(), std::size_t(p), stream_);
  }
  enqueue_save_theta0();
}

template <class T, int D>
void CudaRbfBackend<T, D>::normal_equations(int p, int k, const T* b, int ldb, const T* z) {
  if (!b) {
    CUDA_CHECK(cudaMemsetAsync(jtj_.data(), 0, jtj_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(jtr_.data(), 0, jtr_.bytes(), stream_));
    return;
  }
  const T one = T(1), zero = T(0);
  CUBLAS_CHECK(gpu::blas::syrk_t_ld(cublas_, p, k, &one, b, ldb, &zero, jtj_.data(), p));
  CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, k, p, &one, b, ldb, z, &zero, jtr_.data()));
}

template <class T, int D>
bool CudaRbfBackend<T, D>::try_step(double tag, int p, T mu, int first, const T* scaling) {
  lm_a_.resize(std::size_t(p) * p);
  delta_.resize(p);
  lm_jdelta_.resize(p);
  lm_mu_.resize(1);
  int lwork = 0;
  CUSOLVER_CHECK(gpu::blas::potrf_buffer_size(cusolver_, p, lm_a_.data(), &lwork));
  work_.resize(std::max(lwork, 1));
  pinned_mu_[0] = mu;
  run_graph({tag, double(pts_.rows()), double(m_), ptr_key(x_.data()), ptr_key(theta_.data()),
             ptr_key(jtj_.data()), ptr_key(lm_a_.data()), ptr_key(work_.data()),
             ptr_key(delta_.data()), ptr_key(lm_jdelta_.data()),
             ptr_key(theta0_.data()), ptr_key(scaling ? scaling : chunk_sums_.data()),
             double(lwork)},
            [&] { enqueue_lm_try(p, lwork, first, scaling, scaling == nullptr); });
  invalidate_features();
  predicted_decrease_ = pinned_scalars_[0].predicted_decrease;
  return !pinned_scalars_[0].step_rejected;
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_lm_try(int p, int lwork, int first, const T* scaling,
                                          bool with_residuals) {
  // μ travels as a value in pinned memory, copied by the graph, so one graph serves every μ.
  CUDA_CHECK(cudaMemcpyAsync(lm_mu_.data(), pinned_mu_.data(), sizeof(T), cudaMemcpyHostToDevice,
                             stream_));
  gpu::launch_lm_system<T>(stream_, jtj_.data(), jtr_.data(), lm_a_.data(), delta_.data(), p,
                           lm_mu_.data(), scaling);
  CUSOLVER_CHECK(gpu::blas::potrf(cusolver_, p, lm_a_.data(), work_.data(), lwork, info_.data()));
  CUSOLVER_CHECK(gpu::blas::potrs(cusolver_, p, lm_a_.data(), delta_.data(), info_.data() + 1));
  gpu::launch_lm_apply<T>(stream_, theta0_.data(), delta_.data(), info_.data(), theta_.data(), m_,
                          D, first, min_width_, scalars_.data());
  // The decrease the linearised residuals predict for the step taken (widths clamped).
  const T one = T(1), zero = T(0);
  CUBLAS_CHECK(gpu::blas::symv_lower(cublas_, p, &one, jtj_.data(), delta_.data(), &zero,
                                     lm_jdelta_.data()));
  gpu::launch_linearised_decrease<T>(stream_, delta_.data(), jtr_.data(), lm_jdelta_.data(), p,
                                     scalars_.data());
  if (with_residuals) enqueue_residuals();
}

// The members defined above, for every (T, D) make_cuda_backend builds.
#define RBFPDE_INSTANTIATE(T, D) \
  template LossParts CudaRbfBackend<T, D>::lm_prepare(); \
  template LossParts CudaRbfBackend<T, D>::lm_try(T); \
  template void CudaRbfBackend<T, D>::lm_system(std::vector<T>&, std::vector<T>&) const; \
  template void CudaRbfBackend<T, D>::lm_reject(); \
  template void CudaRbfBackend<T, D>::enqueue_jacobian(); \
  template void CudaRbfBackend<T, D>::size_lm_buffers(int, int); \
  template void CudaRbfBackend<T, D>::enqueue_lm_prepare(); \
  template void CudaRbfBackend<T, D>::normal_equations(int, int, const T*, int, const T*); \
  template bool CudaRbfBackend<T, D>::try_step(double, int, T, int, const T*); \
  template void CudaRbfBackend<T, D>::enqueue_lm_try(int, int, int, const T*, bool);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::cuda_detail
