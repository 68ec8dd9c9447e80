// CudaRbfBackend's state on the device: construction (the stream and the cuBLAS and cuSOLVER
// handles) and destruction, the parameters and the batch in and out (uploaded from the host, or
// drawn on the device by the NVRTC sampler) with the general rows' coefficients, the buffers a
// batch needs, the residual passes that leave e, b and the loss on the device, and evaluate().
#include "kernels/cuda/rbf/cuda_rbf_backend.cuh"

namespace rbfpde::cuda_detail {

namespace {

// cuBLAS workspace for graph capture (cuBLAS must not allocate while a stream is captured); the
// size NVIDIA recommends for Hopper.
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

}  // namespace

template <class T, int D>
CudaRbfBackend<T, D>::CudaRbfBackend(const BackendOptions& options)
    : lookahead_(options.vp_lookahead),
      preconditioned_(options.vp_preconditioned_trials && std::is_same_v<T, double>),
      factor_from_trial_(options.vp_factor_from_trial),
      penalty_(T(options.penalty)),
      min_width_(T(options.min_width)),
      laplacian_dims_(
          options.laplacian_dims > 0 && options.laplacian_dims < D ? options.laplacian_dims : D),
      comm_(options.comm ? options.comm : serial_communicator()),
      dist_(comm_->distributed()) {
  // The distributed path synchronises at every sum, which a CUDA graph cannot capture.
  if (dist_) graphs_usable_ = false;
  if (dist_) loss_sums_.resize(2);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  device_name_ = prop.name;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&cublas_));
  CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  cublas_workspace_.resize(kCublasWorkspaceBytes);
  CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_.data(), kCublasWorkspaceBytes));
  CUSOLVER_CHECK(cusolverDnCreate(&cusolver_));
  CUSOLVER_CHECK(cusolverDnSetStream(cusolver_, stream_));
  scalars_.resize(1);
  info_.resize(2);
  constants_.resize(3);
  const T host_constants[3] = {T(1), T(0), T(-1)};
  CUDA_CHECK(cudaMemcpyAsync(constants_.data(), host_constants, sizeof(host_constants),
                             cudaMemcpyHostToDevice, stream_));
  CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, sizeof(DeviceScalars), stream_));
  barrier_.resize(2);
  CUDA_CHECK(cudaMemsetAsync(barrier_.data(), 0, barrier_.bytes(), stream_));
  residual_counter_.resize(1);
  CUDA_CHECK(cudaMemsetAsync(residual_counter_.data(), 0, residual_counter_.bytes(), stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T, int D>
CudaRbfBackend<T, D>::~CudaRbfBackend() {
  // Destructors log instead of throwing.
  drop_graphs();
  for (int s = 0; s < kSlabs; ++s) {
    if (side_cublas_[s]) cublasDestroy(side_cublas_[s]);
    if (side_streams_[s]) cudaStreamDestroy(side_streams_[s]);
    if (joins_[s]) cudaEventDestroy(joins_[s]);
  }
  if (fork_) cudaEventDestroy(fork_);
  if (ahead_.solver) cusolverDnDestroy(ahead_.solver);
  if (ahead_.stream) cudaStreamDestroy(ahead_.stream);
  if (ahead_.fork) cudaEventDestroy(ahead_.fork);
  if (ahead_.join) cudaEventDestroy(ahead_.join);
  if (cusolver_ && cusolverDnDestroy(cusolver_) != CUSOLVER_STATUS_SUCCESS)
    std::fprintf(stderr, "rbfpde: cusolverDnDestroy failed\n");
  if (cublas_ && cublasDestroy(cublas_) != CUBLAS_STATUS_SUCCESS)
    std::fprintf(stderr, "rbfpde: cublasDestroy failed\n");
  if (stream_) {
    const cudaError_t status = cudaStreamDestroy(stream_);
    if (status != cudaSuccess)
      std::fprintf(stderr, "rbfpde: cudaStreamDestroy failed: %s\n", cudaGetErrorString(status));
  }
}

template <class T, int D>
void CudaRbfBackend<T, D>::set_parameters(const RbfParameters<T>& params) {
  if (params.dim != D) throw std::invalid_argument("parameters of the wrong dimension");
  const int m = params.neurons();
  if (int(params.centres.size()) != m * D || int(params.widths.size()) != m)
    throw std::invalid_argument("inconsistent parameter sizes");
  if (m > 65535) throw std::invalid_argument("the CUDA backend supports at most 65535 neurons");
  std::vector<T> theta;
  theta.reserve(params.size());
  theta.insert(theta.end(), params.weights.begin(), params.weights.end());
  theta.insert(theta.end(), params.centres.begin(), params.centres.end());
  theta.insert(theta.end(), params.widths.begin(), params.widths.end());
  if (m != m_) lm_prepared_ = false;
  m_ = m;
  theta_.resize(theta.size());
  upload(theta_.data(), theta);
  invalidate_features();
  prepare_chunk_sums();
  res_stale_ = true;
  CUDA_CHECK(cudaStreamSynchronize(stream_));
}

template <class T, int D>
void CudaRbfBackend<T, D>::set_batch(const CollocationBatch& batch) {
  if (batch.dim != D) throw std::invalid_argument("batch of the wrong dimension");
  const std::size_t n_int = batch.f.size(), n_bnd = batch.p.size();
  if (batch.interior.size() != n_int * D || batch.boundary.size() != n_bnd * D)
    throw std::invalid_argument("inconsistent batch sizes");
  auto check = [](const std::vector<double>& v, std::size_t size, const char* what) {
    if (!v.empty() && v.size() != size)
      throw std::invalid_argument(std::string("inconsistent batch sizes: ") + what);
  };
  check(batch.a, n_int, "a");
  check(batch.b, n_int * D, "b");
  check(batch.c, n_int, "c");
  check(batch.alpha, n_bnd, "alpha");
  check(batch.beta, n_bnd, "beta");
  if (batch.space_dim < 0 || batch.space_dim > D)
    throw std::invalid_argument("batch space_dim out of range");
  prepare_batch_buffers(n_int, n_bnd);
  const std::size_t n = n_int + n_bnd;
  std::vector<T> x(n * D), target(n), normals(n_bnd * D, T(0));
  for (std::size_t i = 0; i < n_int * D; ++i) x[i] = T(batch.interior[i]);
  for (std::size_t i = 0; i < n_bnd * D; ++i) x[n_int * D + i] = T(batch.boundary[i]);
  for (std::size_t i = 0; i < n_int; ++i) target[i] = T(batch.f[i]);
  for (std::size_t i = 0; i < n_bnd; ++i) target[n_int + i] = T(batch.p[i]);
  if (batch.normals.size() == n_bnd * D)
    for (std::size_t i = 0; i < n_bnd * D; ++i) normals[i] = T(batch.normals[i]);
  upload(x_.data(), x);
  upload(target_.data(), target);
  upload(normals_.data(), normals);
  set_coefficients(batch);
  if (n > 0) CUDA_CHECK(cudaMemsetAsync(res_.data(), 0, n * sizeof(T), stream_));
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  host_batch_ = batch;
  device_drawn_ = false;
}

template <class T, int D>
void CudaRbfBackend<T, D>::set_problem_operator(const Problem& problem,
                                                const gpu::OperatorText& op) {
  if (problem.dim() != D) throw std::invalid_argument("problem of the wrong dimension");
  sampler_.reset();
  drop_graphs();
  sampler_ = std::make_unique<gpu::DeviceSampler>(problem, op, sizeof(T) == sizeof(double));
}

template <class T, int D>
void CudaRbfBackend<T, D>::draw_batch(std::uint64_t seed, std::uint64_t index,
                                      std::size_t n_interior, std::size_t n_boundary) {
  gpu::sampler_for(sampler_, "draw_batch").set_batch_index(stream_, index);
  prepare_draw(n_interior, n_boundary);
  enqueue_draw(seed);
}

template <class T, int D>
CollocationBatch CudaRbfBackend<T, D>::batch() const {
  if (!device_drawn_) return host_batch_;
  const std::size_t n_int = std::size_t(pts_.n_int), n_bnd = std::size_t(pts_.n_bnd);
  std::vector<T> x((n_int + n_bnd) * D), target(n_int + n_bnd), normals(n_bnd * D);
  download(x, x_.data());
  download(target, target_.data());
  download(normals, normals_.data());
  CollocationBatch b;
  b.dim = D;
  b.interior.assign(x.begin(), x.begin() + n_int * D);
  b.boundary.assign(x.begin() + n_int * D, x.end());
  b.f.assign(target.begin(), target.begin() + n_int);
  b.p.assign(target.begin() + n_int, target.end());
  b.normals.assign(normals.begin(), normals.end());
  if (general_) {
    b.space_dim = space_dim_ == D ? 0 : space_dim_;
    download_coefficient(b.a, has_a_, coef_a_, n_int);
    download_coefficient(b.b, has_b_, coef_b_, n_int * D);
    download_coefficient(b.c, has_c_, coef_c_, n_int);
    download_coefficient(b.alpha, has_alpha_, coef_alpha_, n_bnd);
    download_coefficient(b.beta, has_beta_, coef_beta_, n_bnd);
  }
  return b;
}

template <class T, int D>
void CudaRbfBackend<T, D>::residual_vectors(std::vector<T>& e, std::vector<T>& b) const {
  // Residuals left stale by a weight solve are recomputed here (the only reader of them).
  // Over ranks this rank's residuals alone, without the loss's sum: no collective, so that one
  // rank may call it.
  if (res_stale_ && dist_)
    const_cast<CudaRbfBackend*>(this)->enqueue_local_residuals();
  else if (res_stale_)
    const_cast<CudaRbfBackend*>(this)->enqueue_residuals();
  std::vector<T> all(res_.size());
  download(all, res_.data());
  e.assign(all.begin(), all.begin() + pts_.n_int);
  b.assign(all.begin() + pts_.n_int, all.end());
}

template <class T, int D>
void CudaRbfBackend<T, D>::evaluate(const std::vector<double>& points, std::vector<double>& u,
                                    std::vector<double>& laplacian) {
  const std::size_t n = points.size() / D;
  u.assign(n, 0.0);
  laplacian.assign(n, 0.0);
  if (n == 0) return;
  upload_eval_points(points, n);
  eval_u_.resize(n);
  eval_lap_.resize(n);
  gpu::launch_evaluate<T, D>(stream_, int(n), eval_x_.data(), theta_.data(), m_, eval_u_.data(),
                             eval_lap_.data(), laplacian_dims_);
  std::vector<T> hu(n), hl(n);
  download(hu, eval_u_.data());
  download(hl, eval_lap_.data());
  for (std::size_t i = 0; i < n; ++i) {
    u[i] = double(hu[i]);
    laplacian[i] = double(hl[i]);
  }
}

template <class T, int D>
void CudaRbfBackend<T, D>::evaluate_gradient(const std::vector<double>& points,
                                             std::vector<double>& gradient) {
  const std::size_t n = points.size() / D;
  gradient.assign(n * D, 0.0);
  if (n == 0) return;
  upload_eval_points(points, n);
  eval_grad_.resize(n * D);
  gpu::launch_evaluate_gradient<T, D>(stream_, int(n), eval_x_.data(), theta_.data(), m_,
                                      eval_grad_.data());
  std::vector<T> g(n * D);
  download(g, eval_grad_.data());
  for (std::size_t i = 0; i < n * D; ++i) gradient[i] = double(g[i]);
}

template <class T, int D>
RbfParameters<T> CudaRbfBackend<T, D>::download_theta(const DeviceBuffer<T>& buffer) const {
  std::vector<T> theta(buffer.size());
  download(theta, buffer.data());
  RbfParameters<T> p;
  p.dim = D;
  p.weights.assign(theta.begin(), theta.begin() + m_);
  p.centres.assign(theta.begin() + m_, theta.begin() + std::size_t(m_) * (D + 1));
  p.widths.assign(theta.begin() + std::size_t(m_) * (D + 1), theta.end());
  return p;
}

template <class T, int D>
void CudaRbfBackend<T, D>::upload_eval_points(const std::vector<double>& points, std::size_t n) {
  if (n > std::size_t(std::numeric_limits<int>::max() / 4))
    throw std::invalid_argument("too many evaluation points for one CUDA call");
  eval_x_.resize(n * D);
  upload(eval_x_.data(), std::vector<T>(points.begin(), points.begin() + n * D));  // staged
}

template <class T, int D>
const gpu::GeneralRows<T>* CudaRbfBackend<T, D>::general_rows() const {
  if (!general_) return nullptr;
  general_rows_.a = has_a_ ? coef_a_.data() : nullptr;
  general_rows_.b = has_b_ ? coef_b_.data() : nullptr;
  general_rows_.c = has_c_ ? coef_c_.data() : nullptr;
  general_rows_.alpha = has_alpha_ ? coef_alpha_.data() : nullptr;
  general_rows_.beta = has_beta_ ? coef_beta_.data() : nullptr;
  general_rows_.normals = normals_.data();
  general_rows_.space_dim = space_dim_;
  return &general_rows_;
}

template <class T, int D>
std::vector<double> CudaRbfBackend<T, D>::coefficient_key() const {
  const gpu::GeneralRows<T>* g = general_rows();
  if (!g) return {0.0};
  return {1.0,           double(space_dim_), ptr_key(g->a),    ptr_key(g->b),
          ptr_key(g->c), ptr_key(g->alpha),  ptr_key(g->beta), ptr_key(g->normals)};
}

template <class T, int D>
void CudaRbfBackend<T, D>::set_coefficients(const CollocationBatch& batch) {
  general_ = !batch.poisson_dirichlet();
  space_dim_ = batch.laplacian_dims();
  auto put = [&](DeviceBuffer<T>& buffer, const std::vector<double>& v) {
    if (!general_ || v.empty()) return false;
    buffer.resize(v.size());
    upload(buffer.data(), std::vector<T>(v.begin(), v.end()));  // staged before it returns
    return true;
  };
  has_a_ = put(coef_a_, batch.a);
  has_b_ = put(coef_b_, batch.b);
  has_c_ = put(coef_c_, batch.c);
  has_alpha_ = put(coef_alpha_, batch.alpha);
  has_beta_ = put(coef_beta_, batch.beta);
}

template <class T, int D>
void CudaRbfBackend<T, D>::download_coefficient(std::vector<double>& out, bool present,
                                                const DeviceBuffer<T>& buffer,
                                                std::size_t size) const {
  out.clear();
  if (!present || size == 0) return;
  std::vector<T> host(size);
  download(host, buffer.data());
  out.assign(host.begin(), host.end());
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_residuals() {
  if (dist_) {
    enqueue_local_residuals();
    gpu::launch_loss_sums(stream_, partials_.data(), gpu::residual_blocks(pts_.rows()),
                          loss_sums_.data());
    gpu::allreduce_sum(*comm_, loss_sums_.data(), 2, stream_);
    gpu::launch_loss_from_sums(stream_, loss_sums_.data(), interior_rows(), boundary_rows(),
                               double(penalty_), scalars_.data());
    return;
  }
  gpu::LossFinalize loss;
  loss.penalty = double(penalty_);
  loss.scalars = scalars_.data();
  gpu::launch_residuals<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                              res_.data(), chunk_sums_.data(), partials_.data(), &loss,
                              residual_counter_.data(), general_rows());
  res_stale_ = false;
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_local_residuals() {
  CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream_));
  gpu::launch_residuals<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                              res_.data(), chunk_sums_.data(), partials_.data(), nullptr, nullptr,
                              general_rows());
  res_stale_ = false;
}

template <class T, int D>
void CudaRbfBackend<T, D>::prepare_draw(std::size_t n_int, std::size_t n_bnd) {
  prepare_batch_buffers(n_int, n_bnd);
  general_ = sampler_->general();
  space_dim_ = sampler_->space_dim();
  has_a_ = has_b_ = has_c_ = has_alpha_ = has_beta_ = general_;
  if (general_) {
    coef_a_.resize(n_int);
    coef_b_.resize(n_int * D);
    coef_c_.resize(n_int);
    coef_alpha_.resize(n_bnd);
    coef_beta_.resize(n_bnd);
  }
}

template <class T, int D>
void CudaRbfBackend<T, D>::enqueue_draw(std::uint64_t seed) {
  gpu::SampledCoefficients coefficients;
  coefficients.a = coef_a_.data();
  coefficients.b = coef_b_.data();
  coefficients.c = coef_c_.data();
  coefficients.alpha = coef_alpha_.data();
  coefficients.beta = coef_beta_.data();
  sampler_->launch(stream_, sampler_->batch_index(), seed, pts_.n_int, pts_.n_bnd, x_.data(),
                   target_.data(), normals_.data(), nullptr, 0, &coefficients);
  device_drawn_ = true;
  lm_prepared_ = false;
  invalidate_features();
  res_stale_ = true;
}

template <class T, int D>
void CudaRbfBackend<T, D>::prepare_batch_buffers(std::size_t n_int, std::size_t n_bnd) {
  gpu::DeviceSampler::check_rows(n_int, n_bnd);
  pts_.n_int = int(n_int);
  pts_.n_bnd = int(n_bnd);
  const std::size_t n = n_int + n_bnd;
  x_.resize(n * D);
  target_.resize(n);
  res_.resize(n);
  normals_.resize(n_bnd * D);
  partials_.resize(2 * std::size_t(gpu::residual_blocks(int(n))));
  prepare_chunk_sums();
  lm_prepared_ = false;
  invalidate_features();
  if (dist_) std::tie(n_int_all_, n_bnd_all_) = union_counts(*comm_, pts_.n_int, pts_.n_bnd);
}

// The members defined above, for every (T, D) make_cuda_backend builds.
#define RBFPDE_INSTANTIATE(T, D) \
  template CudaRbfBackend<T, D>::CudaRbfBackend(const BackendOptions&); \
  template CudaRbfBackend<T, D>::~CudaRbfBackend(); \
  template void CudaRbfBackend<T, D>::set_parameters(const RbfParameters<T>&); \
  template void CudaRbfBackend<T, D>::set_batch(const CollocationBatch&); \
  template void CudaRbfBackend<T, D>::set_problem_operator(const Problem&, const gpu::OperatorText&); \
  template void CudaRbfBackend<T, D>::draw_batch(std::uint64_t, std::uint64_t, std::size_t, std::size_t); \
  template CollocationBatch CudaRbfBackend<T, D>::batch() const; \
  template void CudaRbfBackend<T, D>::residual_vectors(std::vector<T>&, std::vector<T>&) const; \
  template void CudaRbfBackend<T, D>::evaluate(const std::vector<double>&, std::vector<double>&, std::vector<double>&); \
  template void CudaRbfBackend<T, D>::evaluate_gradient(const std::vector<double>&, std::vector<double>&); \
  template RbfParameters<T> CudaRbfBackend<T, D>::download_theta( const DeviceBuffer<T>&) const; \
  template void CudaRbfBackend<T, D>::upload_eval_points(const std::vector<double>&, std::size_t); \
  template const gpu::GeneralRows<T>* CudaRbfBackend<T, D>::general_rows() const; \
  template std::vector<double> CudaRbfBackend<T, D>::coefficient_key() const; \
  template void CudaRbfBackend<T, D>::set_coefficients(const CollocationBatch&); \
  template void CudaRbfBackend<T, D>::download_coefficient(std::vector<double>&, bool, const DeviceBuffer<T>&, std::size_t) const; \
  template void CudaRbfBackend<T, D>::enqueue_residuals(); \
  template void CudaRbfBackend<T, D>::enqueue_local_residuals(); \
  template void CudaRbfBackend<T, D>::prepare_draw(std::size_t, std::size_t); \
  template void CudaRbfBackend<T, D>::enqueue_draw(std::uint64_t); \
  template void CudaRbfBackend<T, D>::prepare_batch_buffers(std::size_t, std::size_t);
RBFPDE_FOR_EACH_T_D(RBFPDE_INSTANTIATE)
#undef RBFPDE_INSTANTIATE

}  // namespace rbfpde::cuda_detail
