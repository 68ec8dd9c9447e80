// CudaRbfBackend's gradient and the methods of gdcg: GD steps on the centres and widths, the
// weight system A, s and its solves (CG, and the direct Cholesky solve), and the gdcg cycle as a
// CUDA graph.
//
// Weight solves: A = MᵀM/N + λNᵀN/K is formed once per (centres, widths, batch) — for m ≤ 128 by
// gram kernels that never store the features, above by ONE SYRK over the scaled features
// F' = diag(√(1/N), √(λ/K))·[M; N] (n·m² FLOPs, tensor-core DMMA) — so that each CG iteration is
// an m × m product instead of four n × m ones. CG runs in one kernel (cg_small: one block, A in
// registers; cg_grid: all SMs, one grid barrier per iteration), never returning to the host. The
// residuals at the new weights are recomputed lazily (residual_vectors), as nothing in a cycle
// reads them. Mathematically the CPU's operator; the rounding differs at the level of the unit
// roundoff times |M|².
//
// gdcg_cycle: draw (NVRTC sampler) + GD steps + assembly + CG + a copy of the loss into pinned
// memory are captured ONCE per (sizes, parameters, buffers) into a CUDA graph and replayed: one
// launch and one synchronisation per cycle. The batch index reaches the sampler through a
// pinned-memory copy node, so the graph is not re-instantiated per batch.
#include "kernels/cuda/rbf/cuda_rbf_backend.cuh"

namespace rbfpde::cuda_detail {

namespace {

// cuBLAS workspace of each side stream's handle (SYRK needs little).
constexpr std::size_t kSideWorkspaceBytes = 4u << 20;
// Split-K assembly (see gram_from_features): the sizes where it pays.
constexpr int kSplitKMaxNeurons = 1536;
constexpr int kSplitKMinRows = 8192;

// How often the multi-kernel CG path asks the host whether it has converged: a sync costs about
// as much as a few iterations, so check rarely.
constexpr int kCgCheckEvery = 8;

gpu::CgState* cg_state(DeviceScalars* scalars) {
  return reinterpret_cast<gpu::CgState*>(reinterpret_cast<char*>(scalars) +
                                         offsetof(DeviceScalars, cg));
}
int* cg_done_flag(DeviceScalars* scalars) {
  return reinterpret_cast<int*>(reinterpret_cast<char*>(scalars) + offsetof(DeviceScalars, cg) +
                                offsetof(gpu::CgState, done));
}

}  // namespace

template <class T, int D>
LossParts CudaRbfBackend<T, D>::gdcg_cycle(const typename RbfBackend<T>::GdcgCycle& c) {
  if (c.draw) gpu::sampler_for(sampler_, "gdcg_cycle");
  if (dist_)
    return RbfBackend<T>::gdcg_cycle(c);  // the steps one by one, each summing over ranks
  if (c.draw) prepare_draw(c.n_interior, c.n_boundary);
  if (m_ == 0 || pts_.rows() == 0 ||
      (m_ > gpu::gram_max_neurons() && !gpu::cg_grid_supported(m_, sizeof(T))))
    return RbfBackend<T>::gdcg_cycle(c);
  prepare_solver_buffers();
  const std::vector<double> key = with_coefficients(cycle_key(c));
  cudaGraphExec_t exec = graphs_.find(key);
  if (!exec) exec = capture_cycle(c, key);
  pinned_index_[0] = c.batch_index;
  CUDA_CHECK(cudaGraphLaunch(exec, stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (c.draw) device_drawn_ = true;
  lm_prepared_ = false;
  invalidate_features();
  res_stale_ = true;
  return to_loss_parts(pinned_scalars_[0]);
}

template <class T, int D>
LossParts CudaRbfBackend<T, D>::gradient(RbfParameters<T>& grad) {
  enqueue_residuals();
  grad_.resize(theta_.size());
  gpu::launch_gradient<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_, inv_n(),
                             lam_k(), grad_.data(), false, T(0), min_width_, nullptr,
                             general_rows());
  if (dist_) gpu::allreduce_sum(*comm_, grad_.data(), grad_.size(), stream_);
  grad = download_theta(grad_);
  return to_loss_parts(read_scalars());
}

template <class T, int D>
CgResult CudaRbfBackend<T, D>::solve_weights_cg(int max_iterations, T tolerance) {
  CgResult result;
  if (m_ == 0) return result;
  prepare_solver_buffers();
  enqueue_solve_cg(max_iterations, tolerance);
  const DeviceScalars scalars = read_scalars();
  const double s_norm = scalars.cg.s_norm;
  result.iterations = scalars.cg.iterations;
  result.relative_residual = std::sqrt(scalars.cg.rr) / (s_norm > 0 ? s_norm : 1.0);
  return result;
}

template <class T, int D>
void CudaRbfBackend<T, D>::solve_weights_direct(T ridge) {
  if (m_ == 0) return;
  prepare_solver_buffers();
  assemble_system();
  const std::size_t mm = std::size_t(m_) * m_;
  factor_.resize(mm);
  solution_.resize(m_);
  device_copy(factor_.data(), a_sys_.data(), mm);
  device_copy(solution_.data(), s_.data(), m_);
  gpu::launch_add_to_diagonal<T>(stream_, factor_.data(), m_, ridge);
  cholesky_solve(factor_.data(), m_, solution_.data());
  accept_weights(solution_.data());
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_gd_steps(int steps, T learning_rate) {
  if (steps <= 0) {
    enqueue_residuals();
    return;
  }
  // Over ranks the step needs the gradient summed over the ranks, so it leaves the gradient
  // kernel; otherwise the gradient kernel applies it.
  if (dist_) grad_.resize(theta_.size());
  for (int s = 0; s < steps; ++s) {
    enqueue_residuals();
    gpu::launch_gradient<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_, inv_n(),
                               lam_k(), dist_ ? grad_.data() : nullptr, !dist_,
                               dist_ ? T(0) : learning_rate, min_width_, nullptr, general_rows());
    if (!dist_) continue;
    gpu::allreduce_sum(*comm_, grad_.data(), grad_.size(), stream_);
    gpu::launch_gd_apply<T, D>(stream_, grad_.data(), theta_.data(), m_, learning_rate,
                               min_width_);
  }
  invalidate_features();
  res_stale_ = true;
}

template <class T, int D>
void CudaRbfBackend<T, D>::prepare_solver_buffers() {
  const int n = pts_.rows();
  prepare_chunk_sums();
  a_sys_.resize(std::size_t(m_) * m_);
  s_.resize(m_);
  if (m_ <= gpu::gram_max_neurons()) {
    const int blocks = gpu::gram_blocks(n);
    gram_a_.resize(std::size_t(blocks) * m_ * m_);
    gram_s_.resize(std::size_t(blocks) * m_);
  } else {
    features_.resize(std::size_t(n) * m_);
    scaled_target_.resize(n);
    cg_ad_.resize(2 * std::size_t(m_));
  }
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_solve_cg(int max_iterations, T tolerance) {
  assemble_system();
  gpu::CgState* state = cg_state(scalars_.data());
  T* w = theta_.data();
  if (m_ <= gpu::gram_max_neurons()) {
    gpu::launch_cg_small<T>(stream_, a_sys_.data(), s_.data(), w, m_, max_iterations,
                            double(tolerance), state);
  } else if (gpu::cg_grid_supported(m_, sizeof(T))) {
    gpu::launch_cg_grid<T>(stream_, a_sys_.data(), s_.data(), w, cg_ad_.data(), m_,
                           max_iterations, double(tolerance), state, barrier_.data());
  } else {
    solve_cg_cublas(max_iterations, tolerance);
  }
  res_stale_ = true;
}

template <class T, int D>
void CudaRbfBackend<T, D>::solve_cg_cublas(int max_iterations, T tolerance) {
  gpu::CgState* state = cg_state(scalars_.data());
  T* w = theta_.data();
  cg_r_.resize(m_);
  cg_d_.resize(m_);
  cg_ad_.resize(2 * std::size_t(m_));
  const T* one = constants_.data();
  const T* zero = constants_.data() + 1;
  const T* minus_one = constants_.data() + 2;
  DevicePointerMode device_scalars(cublas_);
  device_copy(cg_r_.data(), s_.data(), m_);
  CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_N, m_, m_, minus_one, a_sys_.data(), m_, w, one,
                               cg_r_.data()));
  gpu::launch_cg_init<T>(stream_, s_.data(), cg_r_.data(), cg_d_.data(), m_, max_iterations,
                         double(tolerance), state);
  for (int it = 0; it < max_iterations; ++it) {
    if (it > 0 && it % kCgCheckEvery == 0) {
      int done = 0;
      CUDA_CHECK(cudaMemcpyAsync(&done, cg_done_flag(scalars_.data()), sizeof(int),
                                 cudaMemcpyDeviceToHost, stream_));
      CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (done) break;
    }
    CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_N, m_, m_, one, a_sys_.data(), m_,
                                 cg_d_.data(), zero, cg_ad_.data()));
    gpu::launch_cg_step<T>(stream_, cg_ad_.data(), w, cg_r_.data(), cg_d_.data(), m_,
                           max_iterations, state);
  }
}

template <class T, int D>
std::vector<double> CudaRbfBackend<T, D>::cycle_key(
    const typename RbfBackend<T>::GdcgCycle& c) const {
  return {double(c.draw),
          double(c.draw ? c.seed : 0),
          double(pts_.n_int),
          double(pts_.n_bnd),
          double(c.gd_steps),
          double(c.learning_rate),
          double(c.cg_iterations),
          double(c.cg_tolerance),
          double(m_),
          ptr_key(sampler_.get()),
          ptr_key(x_.data()),
          ptr_key(target_.data()),
          ptr_key(res_.data()),
          ptr_key(normals_.data()),
          ptr_key(partials_.data()),
          ptr_key(chunk_sums_.data()),
          ptr_key(theta_.data()),
          ptr_key(features_.data()),
          ptr_key(scaled_target_.data()),
          ptr_key(a_sys_.data()),
          ptr_key(s_.data()),
          ptr_key(gram_a_.data()),
          ptr_key(gram_s_.data()),
          ptr_key(cg_ad_.data()),
          ptr_key(slab_partials_.data())};
}

template <class T, int D>
cudaGraphExec_t CudaRbfBackend<T, D>::capture_cycle(const typename RbfBackend<T>::GdcgCycle& c,
                                                    const std::vector<double>& key) {
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  cudaGraphExec_t exec = gpu::capture_graph(stream_, cudaStreamCaptureModeRelaxed, [&] {
    if (c.draw) {
      CUDA_CHECK(cudaMemcpyAsync(sampler_->batch_index(), pinned_index_.data(),
                                 sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream_));
      enqueue_draw(c.seed);
    }
    enqueue_gd_steps(c.gd_steps, c.learning_rate);
    // The loss before the CG (the CG writes its own scalars after it in the same struct).
    CUDA_CHECK(cudaMemcpyAsync(pinned_scalars_.data(), scalars_.data(), sizeof(DeviceScalars),
                               cudaMemcpyDeviceToHost, stream_));
    enqueue_solve_cg(c.cg_iterations, c.cg_tolerance);
  });
  graphs_.insert(key, exec);
  return exec;
}

template <class T, int D>
void CudaRbfBackend<T, D>::assemble_system() {
  if (system_valid_) return;
  const int n = pts_.rows();
  const T scale_interior = std::sqrt(inv_n()), scale_boundary = std::sqrt(lam_k());
  if (m_ <= gpu::gram_max_neurons()) {
    gpu::launch_gram<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                           scale_interior, scale_boundary, gram_a_.data(), gram_s_.data(),
                           a_sys_.data(), s_.data(), general_rows());
  } else {
    gpu::launch_features<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                               scale_interior, scale_boundary, features_.data(),
                               scaled_target_.data(), general_rows());
    const T one = T(1), zero = T(0);
    if (n > 0) {
      CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, n, m_, &one, features_.data(), n,
                                   scaled_target_.data(), &zero, s_.data()));
      gram_from_features(n);
    } else {
      CUDA_CHECK(cudaMemsetAsync(a_sys_.data(), 0, a_sys_.bytes(), stream_));
      CUDA_CHECK(cudaMemsetAsync(s_.data(), 0, s_.bytes(), stream_));
    }
  }
  if (dist_ && m_ > 0) {
    gpu::allreduce_sum(*comm_, a_sys_.data(), std::size_t(m_) * m_, stream_);
    gpu::allreduce_sum(*comm_, s_.data(), std::size_t(m_), stream_);
  }
  features_valid_ = true;
  system_valid_ = true;
}

template <class T, int D>
void CudaRbfBackend<T, D>::gram_from_features(int n) {
  const T one = T(1), zero = T(0);
  const bool split_k = m_ <= kSplitKMaxNeurons && n >= kSplitKMinRows;
  if (!split_k) {
    CUBLAS_CHECK(
        gpu::blas::syrk_t(cublas_, m_, n, &one, features_.data(), n, &zero, a_sys_.data()));
    gpu::launch_symmetrize_lower<T>(stream_, a_sys_.data(), m_);
    return;
  }
  ensure_side_streams();
  const std::size_t mm = std::size_t(m_) * m_;
  slab_partials_.resize(kSlabs * mm);
  CUDA_CHECK(cudaEventRecord(fork_, stream_));
  const int per = (n + kSlabs - 1) / kSlabs;
  for (int s = 0; s < kSlabs; ++s) {
    const int r0 = std::min(n, s * per), rows = std::min(n, r0 + per) - r0;
    CUDA_CHECK(cudaStreamWaitEvent(side_streams_[s], fork_, 0));
    if (rows > 0) {
      CUBLAS_CHECK(gpu::blas::syrk_t_ld(side_cublas_[s], m_, rows, &one, features_.data() + r0, n,
                                        &zero, slab_partials_.data() + s * mm, m_));
    } else {
      CUDA_CHECK(
          cudaMemsetAsync(slab_partials_.data() + s * mm, 0, mm * sizeof(T), side_streams_[s]));
    }
    CUDA_CHECK(cudaEventRecord(joins_[s], side_streams_[s]));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, joins_[s], 0));
  }
  gpu::launch_sum_slabs_symmetric<T>(stream_, slab_partials_.data(), kSlabs, a_sys_.data(), m_);
}

template <class T, int D>
void CudaRbfBackend<T, D>::ensure_side_streams() {
  if (side_streams_[0]) return;
  side_workspace_.resize(kSlabs * kSideWorkspaceBytes);
  for (int s = 0; s < kSlabs; ++s) {
    CUDA_CHECK(cudaStreamCreateWithFlags(&side_streams_[s], cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&side_cublas_[s]));
    CUBLAS_CHECK(cublasSetStream(side_cublas_[s], side_streams_[s]));
    CUBLAS_CHECK(cublasSetWorkspace(
        side_cublas_[s], side_workspace_.data() + s * kSideWorkspaceBytes, kSideWorkspaceBytes));
    CUDA_CHECK(cudaEventCreateWithFlags(&joins_[s], cudaEventDisableTiming));
  }
  CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
}

template <class T, int D>
void CudaRbfBackend<T, D>::cholesky_solve(T* a, int p, T* rhs) {
  int lwork = 0;
  CUSOLVER_CHECK(gpu::blas::potrf_buffer_size(cusolver_, p, a, &lwork));
  work_.resize(std::max(lwork, 1));
  CUSOLVER_CHECK(gpu::blas::potrf(cusolver_, p, a, work_.data(), lwork, info_.data()));
  CUSOLVER_CHECK(gpu::blas::potrs(cusolver_, p, a, rhs, info_.data() + 1));
}

// The members defined above, for every (T, D) make_cuda_backend builds.
#define RBFPDE_INSTANTIATE(T, D) \
  template LossParts CudaRbfBackend<T, D>::gdcg_cycle(const RbfBackend<T>::GdcgCycle&); \
  template LossParts CudaRbfBackend<T, D>::gradient(RbfParameters<T>&); \
  template CgResult CudaRbfBackend<T, D>::solve_weights_cg(int, T); \
  template void CudaRbfBackend<T, D>::solve_weights_direct(T); \
  template void CudaRbfBackend<T, D>::enqueue_gd_steps(int, T); \
  template void CudaRbfBackend<T, D>::prepare_solver_buffers(); \
  template void CudaRbfBackend<T, D>::enqueue_solve_cg(int, T); \
  template void CudaRbfBackend<T, D>::solve_cg_cublas(int, T); \
  template std::vector<double> CudaRbfBackend<T, D>::cycle_key( const RbfBackend<T>::GdcgCycle&) const; \
  template cudaGraphExec_t CudaRbfBackend<T, D>::capture_cycle( const RbfBackend<T>::GdcgCycle&, const std::vector<double>&); \
  template void CudaRbfBackend<T, D>::assemble_system(); \
  template void CudaRbfBackend<T, D>::gram_from_features(int); \
  template void CudaRbfBackend<T, D>::ensure_side_streams(); \
  template void CudaRbfBackend<T, D>::cholesky_solve(T*, int, T*);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::cuda_detail
