// The CUDA backend: the RbfBackend interface on the device. Parameters θ = [w | c | a] and the
// collocation batch live in device memory for the backend's lifetime; the host sees them only in
// parameters(), residual_vectors(), evaluate() and the returned scalars (one small copy per call).
// The kernels are in residual_kernels.cu (fused residual, features, evaluate), gradient_kernel.cu,
// jacobian_kernel.cu and solver_kernels.cu; this file is the glue: buffers, cuBLAS/cuSOLVER calls
// and the order of operations, which follows the CPU reference (kernels/cpu/cpu_backend.cpp)
// method for method.
//
// Weight solves: A = MᵀM/N + λNᵀN/K is formed once per (centres, widths, batch) by two SYRKs
// over the stored features (n·m² FLOPs, tensor-core friendly), so that each CG iteration is an
// m × m GEMV instead of four n × m ones. Mathematically the CPU's operator; the rounding differs
// at the level of the unit roundoff times |M|².
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/launchers.hpp"

namespace rbfpde {
namespace {

using gpu::DeviceBuffer;
using gpu::DeviceScalars;
using gpu::PointsView;

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

// Restores host pointer mode on scope exit, also when a cuBLAS call throws.
class DevicePointerMode {
 public:
  explicit DevicePointerMode(cublasHandle_t handle) : handle_(handle) {
    CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_DEVICE));
  }
  ~DevicePointerMode() { cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST); }
  DevicePointerMode(const DevicePointerMode&) = delete;
  DevicePointerMode& operator=(const DevicePointerMode&) = delete;

 private:
  cublasHandle_t handle_;
};

template <class T, int D>
class CudaRbfBackend final : public RbfBackend<T> {
 public:
  explicit CudaRbfBackend(const BackendOptions& options)
      : penalty_(T(options.penalty)), min_width_(T(options.min_width)) {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    device_name_ = prop.name;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cublas_));
    CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    CUSOLVER_CHECK(cusolverDnCreate(&cusolver_));
    CUSOLVER_CHECK(cusolverDnSetStream(cusolver_, stream_));
    scalars_.resize(1);
    info_.resize(2);
    constants_.resize(3);
    const T host_constants[3] = {T(1), T(0), T(-1)};
    CUDA_CHECK(cudaMemcpyAsync(constants_.data(), host_constants, sizeof(host_constants),
                               cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaMemsetAsync(scalars_.data(), 0, sizeof(DeviceScalars), stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ~CudaRbfBackend() override {
    // Destructors log instead of throwing.
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

  std::string name() const override { return "cuda"; }
  std::string device_name() const override { return device_name_; }

  void set_parameters(const RbfParameters<T>& params) override {
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
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  RbfParameters<T> parameters() const override {
    std::vector<T> theta(theta_.size());
    download(theta, theta_.data());
    RbfParameters<T> p;
    p.dim = D;
    p.weights.assign(theta.begin(), theta.begin() + m_);
    p.centres.assign(theta.begin() + m_, theta.begin() + std::size_t(m_) * (D + 1));
    p.widths.assign(theta.begin() + std::size_t(m_) * (D + 1), theta.end());
    return p;
  }

  void set_batch(const CollocationBatch& batch) override {
    if (batch.dim != D) throw std::invalid_argument("batch of the wrong dimension");
    const std::size_t n_int = batch.f.size(), n_bnd = batch.p.size();
    if (batch.interior.size() != n_int * D || batch.boundary.size() != n_bnd * D)
      throw std::invalid_argument("inconsistent batch sizes");
    if (n_int + n_bnd > std::size_t(std::numeric_limits<int>::max() / 4))
      throw std::invalid_argument("collocation batch too large for the CUDA backend");
    pts_.n_int = int(n_int);
    pts_.n_bnd = int(n_bnd);
    const std::size_t n = n_int + n_bnd;
    std::vector<T> x(n * D), target(n);
    for (std::size_t i = 0; i < n_int * D; ++i) x[i] = T(batch.interior[i]);
    for (std::size_t i = 0; i < n_bnd * D; ++i) x[n_int * D + i] = T(batch.boundary[i]);
    for (std::size_t i = 0; i < n_int; ++i) target[i] = T(batch.f[i]);
    for (std::size_t i = 0; i < n_bnd; ++i) target[n_int + i] = T(batch.p[i]);
    x_.resize(x.size());
    target_.resize(n);
    res_.resize(n);
    partials_.resize(2 * std::size_t(gpu::residual_blocks(int(n))));
    upload(x_.data(), x);
    upload(target_.data(), target);
    if (n > 0) CUDA_CHECK(cudaMemsetAsync(res_.data(), 0, n * sizeof(T), stream_));
    lm_prepared_ = false;
    invalidate_features();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    host_batch_ = batch;
  }

  // A batch drawn on the device is copied back here when asked for; one set from the host is
  // returned as given.
  CollocationBatch batch() const override { return host_batch_; }

  LossParts residuals() override {
    enqueue_residuals();
    return to_loss_parts(read_scalars());
  }

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override {
    std::vector<T> all(res_.size());
    download(all, res_.data());
    e.assign(all.begin(), all.begin() + pts_.n_int);
    b.assign(all.begin() + pts_.n_int, all.end());
  }

  LossParts gradient(RbfParameters<T>& grad) override {
    enqueue_residuals();
    grad_.resize(theta_.size());
    gpu::launch_gradient<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_, inv_n(),
                               lam_k(), grad_.data(), false, T(0), min_width_);
    std::vector<T> g(grad_.size());
    download(g, grad_.data());
    grad.dim = D;
    grad.weights.assign(g.begin(), g.begin() + m_);
    grad.centres.assign(g.begin() + m_, g.begin() + std::size_t(m_) * (D + 1));
    grad.widths.assign(g.begin() + std::size_t(m_) * (D + 1), g.end());
    return to_loss_parts(read_scalars());
  }

  LossParts gd_steps(int steps, T learning_rate) override {
    enqueue_residuals();
    for (int s = 0; s < steps; ++s) {
      if (s > 0) enqueue_residuals();
      gpu::launch_gradient<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_, inv_n(),
                                 lam_k(), nullptr, true, learning_rate, min_width_);
    }
    invalidate_features();
    return to_loss_parts(read_scalars());
  }

  CgResult solve_weights_cg(int max_iterations, T tolerance) override {
    CgResult result;
    if (m_ == 0) return result;
    assemble_system();
    gpu::CgState* state = cg_state(scalars_.data());
    T* w = theta_.data();
    if (m_ <= gpu::cg_single_block_max_neurons()) {
      gpu::launch_cg_single_block<T>(stream_, a_sys_.data(), s_.data(), w, m_, max_iterations,
                                     double(tolerance), state);
    } else {
      cg_r_.resize(m_);
      cg_d_.resize(m_);
      cg_ad_.resize(m_);
      const T* one = constants_.data();
      const T* zero = constants_.data() + 1;
      const T* minus_one = constants_.data() + 2;
      DevicePointerMode device_scalars(cublas_);
      CUDA_CHECK(cudaMemcpyAsync(cg_r_.data(), s_.data(), m_ * sizeof(T), cudaMemcpyDeviceToDevice,
                                 stream_));
      CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_N, m_, m_, minus_one, a_sys_.data(), m_, w,
                                   one, cg_r_.data()));
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
    residuals_from_features();
    const DeviceScalars scalars = read_scalars();
    const double s_norm = scalars.cg.s_norm;
    result.iterations = scalars.cg.iterations;
    result.relative_residual = std::sqrt(scalars.cg.rr) / (s_norm > 0 ? s_norm : 1.0);
    return result;
  }

  void solve_weights_direct(T ridge) override {
    if (m_ == 0) return;
    assemble_system();
    const std::size_t mm = std::size_t(m_) * m_;
    factor_.resize(mm);
    solution_.resize(m_);
    CUDA_CHECK(cudaMemcpyAsync(factor_.data(), a_sys_.data(), mm * sizeof(T),
                               cudaMemcpyDeviceToDevice, stream_));
    CUDA_CHECK(cudaMemcpyAsync(solution_.data(), s_.data(), m_ * sizeof(T),
                               cudaMemcpyDeviceToDevice, stream_));
    gpu::launch_add_to_diagonal<T>(stream_, factor_.data(), m_, ridge);
    cholesky_solve(factor_.data(), m_, solution_.data());
    // The CPU keeps the old weights when its solve is not finite; here also when Cholesky fails.
    gpu::launch_accept_weights<T>(stream_, solution_.data(), info_.data(), theta_.data(), m_,
                                  scalars_.data());
    residuals_from_features();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  LossParts lm_prepare() override {
    enqueue_residuals();
    const int p = m_ * (D + 2);
    const int n = pts_.rows();
    jac_.resize(std::size_t(n) * p);
    r_scaled_.resize(n);
    const T scale_interior = T(1) / std::sqrt(T(std::max(pts_.n_int, 1)));
    const T scale_boundary = std::sqrt(penalty_ / T(std::max(pts_.n_bnd, 1)));
    gpu::launch_jacobian<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_,
                               scale_interior, scale_boundary, jac_.data(), r_scaled_.data());
    jtj_.resize(std::size_t(p) * p);
    jtr_.resize(p);
    CUDA_CHECK(cudaMemsetAsync(jtj_.data(), 0, jtj_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(jtr_.data(), 0, jtr_.bytes(), stream_));
    if (n > 0 && p > 0) {
      const T one = T(1), zero = T(0);
      CUBLAS_CHECK(gpu::blas::syrk_t(cublas_, p, n, &one, jac_.data(), n, &zero, jtj_.data()));
      CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, n, p, &one, jac_.data(), n,
                                   r_scaled_.data(), &zero, jtr_.data()));
    }
    theta0_.resize(theta_.size());
    if (theta_.size() > 0)
      CUDA_CHECK(cudaMemcpyAsync(theta0_.data(), theta_.data(), theta_.bytes(),
                                 cudaMemcpyDeviceToDevice, stream_));
    lm_prepared_ = true;
    return to_loss_parts(read_scalars());
  }

  LossParts lm_try(T mu) override {
    if (!lm_prepared_) throw std::logic_error("lm_try called before lm_prepare");
    const int p = m_ * (D + 2);
    if (p == 0) return residuals();
    lm_a_.resize(std::size_t(p) * p);
    delta_.resize(p);
    CUDA_CHECK(cudaMemcpyAsync(lm_a_.data(), jtj_.data(), jtj_.bytes(), cudaMemcpyDeviceToDevice,
                               stream_));
    gpu::launch_lm_damp<T>(stream_, jtj_.data(), lm_a_.data(), p, mu);
    gpu::launch_negate<T>(stream_, jtr_.data(), delta_.data(), p);
    cholesky_solve(lm_a_.data(), p, delta_.data());
    gpu::launch_lm_apply<T>(stream_, theta0_.data(), delta_.data(), info_.data(), theta_.data(), m_,
                            D, min_width_, scalars_.data());
    invalidate_features();
    enqueue_residuals();
    const DeviceScalars scalars = read_scalars();
    if (scalars.step_rejected) {
      LossParts bad;
      bad.loss = bad.rms_interior = bad.rms_boundary = std::numeric_limits<double>::infinity();
      return bad;
    }
    return to_loss_parts(scalars);
  }

  void lm_reject() override {
    if (!lm_prepared_) throw std::logic_error("lm_reject called before lm_prepare");
    if (theta_.size() > 0)
      CUDA_CHECK(cudaMemcpyAsync(theta_.data(), theta0_.data(), theta_.bytes(),
                                 cudaMemcpyDeviceToDevice, stream_));
    invalidate_features();
    enqueue_residuals();
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void evaluate(const std::vector<double>& points, std::vector<double>& u,
                std::vector<double>& laplacian) override {
    const std::size_t n = points.size() / D;
    u.assign(n, 0.0);
    laplacian.assign(n, 0.0);
    if (n == 0) return;
    if (n > std::size_t(std::numeric_limits<int>::max() / 4))
      throw std::invalid_argument("too many evaluation points for one CUDA call");
    std::vector<T> x(n * D);
    for (std::size_t i = 0; i < n * D; ++i) x[i] = T(points[i]);
    eval_x_.resize(x.size());
    eval_u_.resize(n);
    eval_lap_.resize(n);
    upload(eval_x_.data(), x);
    gpu::launch_evaluate<T, D>(stream_, int(n), eval_x_.data(), theta_.data(), m_, eval_u_.data(),
                               eval_lap_.data());
    std::vector<T> hu(n), hl(n);
    download(hu, eval_u_.data());
    download(hl, eval_lap_.data());
    for (std::size_t i = 0; i < n; ++i) {
      u[i] = double(hu[i]);
      laplacian[i] = double(hl[i]);
    }
  }

 private:
  T inv_n() const { return T(1) / T(std::max(pts_.n_int, 1)); }
  T lam_k() const { return penalty_ / T(std::max(pts_.n_bnd, 1)); }

  void invalidate_features() {
    features_valid_ = false;
    system_valid_ = false;
  }

  void upload(T* dst, const std::vector<T>& src) {
    if (!src.empty())
      CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T), cudaMemcpyHostToDevice,
                                 stream_));
  }
  void download(std::vector<T>& dst, const T* src) const {
    if (!dst.empty())
      CUDA_CHECK(cudaMemcpyAsync(dst.data(), src, dst.size() * sizeof(T), cudaMemcpyDeviceToHost,
                                 stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // e, b and the loss parts at the current θ, left on the device.
  void enqueue_residuals() {
    gpu::launch_residuals<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                                res_.data(), partials_.data());
    gpu::launch_loss_finalize(stream_, pts_, partials_.data(), gpu::residual_blocks(pts_.rows()),
                              double(penalty_), scalars_.data());
  }

  DeviceScalars read_scalars() {
    DeviceScalars host;
    CUDA_CHECK(cudaMemcpyAsync(&host, scalars_.data(), sizeof(DeviceScalars),
                               cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
    return host;
  }

  static LossParts to_loss_parts(const DeviceScalars& s) {
    LossParts parts;
    parts.loss = s.loss;
    parts.rms_interior = s.rms_interior;
    parts.rms_boundary = s.rms_boundary;
    return parts;
  }

  // F (n × m) and the normal equations A = MᵀM/N + λNᵀN/K (full, symmetric), s = Mᵀf/N + λNᵀp/K.
  void assemble_system() {
    const int n = pts_.rows();
    if (!features_valid_) {
      features_.resize(std::size_t(n) * m_);
      gpu::launch_features<T, D>(stream_, pts_, x_.data(), theta_.data(), m_, features_.data());
      features_valid_ = true;
      system_valid_ = false;
    }
    if (system_valid_) return;
    a_sys_.resize(std::size_t(m_) * m_);
    s_.resize(m_);
    CUDA_CHECK(cudaMemsetAsync(a_sys_.data(), 0, a_sys_.bytes(), stream_));
    CUDA_CHECK(cudaMemsetAsync(s_.data(), 0, s_.bytes(), stream_));
    const T one = T(1), scale_interior = inv_n(), scale_boundary = lam_k();
    const T* m_rows = features_.data();
    const T* n_rows = features_.data() + pts_.n_int;
    if (pts_.n_int > 0) {
      CUBLAS_CHECK(gpu::blas::syrk_t(cublas_, m_, pts_.n_int, &scale_interior, m_rows, n, &one,
                                     a_sys_.data()));
      CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, pts_.n_int, m_, &scale_interior, m_rows, n,
                                   target_.data(), &one, s_.data()));
    }
    if (pts_.n_bnd > 0) {
      CUBLAS_CHECK(gpu::blas::syrk_t(cublas_, m_, pts_.n_bnd, &scale_boundary, n_rows, n, &one,
                                     a_sys_.data()));
      CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, pts_.n_bnd, m_, &scale_boundary, n_rows, n,
                                   target_.data() + pts_.n_int, &one, s_.data()));
    }
    gpu::launch_symmetrize_lower<T>(stream_, a_sys_.data(), m_);
    system_valid_ = true;
  }

  // res = F w − target from the stored features (the CPU's residuals_from_features).
  void residuals_from_features() {
    const int n = pts_.rows();
    if (n == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(res_.data(), target_.data(), n * sizeof(T), cudaMemcpyDeviceToDevice,
                               stream_));
    const T one = T(1), minus_one = T(-1);
    CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_N, n, m_, &one, features_.data(), n,
                                 theta_.data(), &minus_one, res_.data()));
  }

  // Cholesky of the lower triangle of `a` (overwritten) and solve in place; info_[0] holds
  // potrf's status, which the kernels that follow check on the device.
  void cholesky_solve(T* a, int p, T* rhs) {
    int lwork = 0;
    CUSOLVER_CHECK(gpu::blas::potrf_buffer_size(cusolver_, p, a, &lwork));
    work_.resize(std::max(lwork, 1));
    CUSOLVER_CHECK(gpu::blas::potrf(cusolver_, p, a, work_.data(), lwork, info_.data()));
    CUSOLVER_CHECK(gpu::blas::potrs(cusolver_, p, a, rhs, info_.data() + 1));
  }

  T penalty_, min_width_;
  std::string device_name_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;

  CollocationBatch host_batch_;
  int m_ = 0;
  PointsView pts_;
  bool features_valid_ = false, system_valid_ = false, lm_prepared_ = false;

  DeviceBuffer<T> theta_, theta0_, grad_;
  DeviceBuffer<T> x_, target_, res_;
  DeviceBuffer<double> partials_;
  DeviceBuffer<DeviceScalars> scalars_;
  DeviceBuffer<int> info_;
  DeviceBuffer<T> constants_;  // 1, 0, −1 for cuBLAS in device pointer mode
  DeviceBuffer<T> features_, a_sys_, s_, factor_, solution_, work_;
  DeviceBuffer<T> cg_r_, cg_d_, cg_ad_;
  DeviceBuffer<T> jac_, r_scaled_, jtj_, jtr_, lm_a_, delta_;
  DeviceBuffer<T> eval_x_, eval_u_, eval_lap_;
};

}  // namespace

bool cuda_device_available() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

template <class T>
std::unique_ptr<RbfBackend<T>> make_cuda_backend(const BackendOptions& options) {
  if (!cuda_device_available())
    throw std::runtime_error("the CUDA backend was requested but no CUDA device is present");
  if (options.dim == 2) return std::make_unique<CudaRbfBackend<T, 2>>(options);
  if (options.dim == 3) return std::make_unique<CudaRbfBackend<T, 3>>(options);
  throw std::invalid_argument("the CUDA backend supports 2 or 3 dimensions, got " +
                              std::to_string(options.dim));
}

template std::unique_ptr<RbfBackend<double>> make_cuda_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cuda_backend<float>(const BackendOptions&);

}  // namespace rbfpde
