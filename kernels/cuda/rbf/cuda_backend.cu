// The CUDA backend: the RbfBackend interface on the device. Parameters θ = [w | c | a] and the
// collocation batch live in device memory for the backend's lifetime; the host sees them only in
// parameters(), residual_vectors(), evaluate() and the returned scalars (one small copy per call).
// The kernels are in residual_kernels.cu (fused residual, features, evaluate), gradient_kernel.cu,
// jacobian_kernel.cu and solver_kernels.cu; this file is the glue: buffers, cuBLAS/cuSOLVER calls
// and the order of operations, which follows the CPU reference (kernels/cpu/cpu_backend.cpp)
// method for method.
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
//
// General rows (a batch that is not Poisson/Dirichlet, see problems/problem.hpp): the batch's
// non-empty coefficient arrays live on the device next to the points, and every launcher is handed
// their GeneralRows, which selects the kernels' general instantiation; a Poisson/Dirichlet batch
// hands none and runs the Poisson kernels. The dimension D is 2, 3 or 4 (3D and time).
//
// Ranks (BackendOptions::comm, docs/architecture.md "Distributed runs"): when the communicator
// is distributed() each rank holds its share of the points, every scale uses the union's counts
// N and K, and every sum over points is summed over the ranks where the CPU backend sums it —
// the loss's Σe² and Σb², the gradient, the weight system A and s, LM's JᵀJ and JᵀR — by
// gpu::allreduce_sum (NCCL on the stream, or staged through host memory); variable projection
// and the QR weight solve use TSQR as the CPU backend does (local geqrf, R factors gathered on the
// host, geqrf of the stack). That path waits for each sum and so runs without CUDA graphs; with
// a communicator that is not distributed (one process) the code is the single-GPU code.
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
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/common/blas.hpp"
#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/common/device_buffer.hpp"
#include "kernels/cuda/common/device_comm.hpp"
#include "kernels/cuda/common/device_sampler.hpp"
#include "kernels/cuda/common/graph_cache.hpp"
#include "kernels/cuda/common/pinned.hpp"
#include "kernels/cuda/rbf/launchers.hpp"
#include "kernels/cuda/rbf/rank_kernels.hpp"

namespace rbfpde {
namespace {

using gpu::DeviceBuffer;
using gpu::DeviceScalars;
using gpu::PointsView;

// cuBLAS workspace for graph capture (cuBLAS must not allocate while a stream is captured); the
// size NVIDIA recommends for Hopper.
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;
// Split-K assembly (see gram_from_features): slabs, and the sizes where it pays.
constexpr int kSlabs = 8;
// cuBLAS workspace of each side stream's handle (SYRK needs little).
constexpr std::size_t kSideWorkspaceBytes = 4u << 20;
constexpr int kSplitKMaxNeurons = 1536;
constexpr int kSplitKMinRows = 8192;
// Graphs kept per backend: a trainer alternates at most between a drawing and a non-drawing cycle.
constexpr std::size_t kMaxGraphs = 8;

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

  ~CudaRbfBackend() override {
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

  std::string name() const override { return "cuda"; }
  gpu::Stream stream() const { return stream_; }
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
    prepare_chunk_sums();
    res_stale_ = true;
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  RbfParameters<T> parameters() const override { return download_theta(theta_); }

  void set_batch(const CollocationBatch& batch) override {
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

  bool draws_batches() const override { return sampler_ != nullptr; }

  void set_problem(const Problem& problem) override {
    set_problem_operator(problem, gpu::operator_text(problem));
  }

  // set_problem with the operator given as text: the sampler writes its coefficients.
  void set_problem_operator(const Problem& problem, const gpu::OperatorText& op) {
    if (problem.dim() != D) throw std::invalid_argument("problem of the wrong dimension");
    sampler_.reset();
    drop_graphs();
    sampler_ = std::make_unique<gpu::DeviceSampler>(problem, op, sizeof(T) == sizeof(double));
  }

  void draw_batch(std::uint64_t seed, std::uint64_t index, std::size_t n_interior,
                  std::size_t n_boundary) override {
    gpu::sampler_for(sampler_, "draw_batch").set_batch_index(stream_, index);
    prepare_draw(n_interior, n_boundary);
    enqueue_draw(seed);
  }

  // A batch drawn on the device is copied back here; one set from the host is returned as given.
  CollocationBatch batch() const override {
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

  LossParts gdcg_cycle(const typename RbfBackend<T>::GdcgCycle& c) override {
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

  LossParts residuals() override {
    enqueue_residuals();
    return to_loss_parts(read_scalars());
  }

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override {
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

  LossParts gradient(RbfParameters<T>& grad) override {
    enqueue_residuals();
    grad_.resize(theta_.size());
    gpu::launch_gradient<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_, inv_n(),
                               lam_k(), grad_.data(), false, T(0), min_width_, nullptr,
                               general_rows());
    if (dist_) gpu::allreduce_sum(*comm_, grad_.data(), grad_.size(), stream_);
    grad = download_theta(grad_);
    return to_loss_parts(read_scalars());
  }

  LossParts gd_steps(int steps, T learning_rate) override {
    enqueue_gd_steps(steps, learning_rate);
    return to_loss_parts(read_scalars());
  }

  CgResult solve_weights_cg(int max_iterations, T tolerance) override {
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

  void solve_weights_direct(T ridge) override {
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

  // Least squares by Householder QR of the scaled features over the ridge rows: features (n × m)
  // copied under a leading dimension of n + m, geqrf, Qᵀy by ormqr, R w = (Qᵀy)[0, m) by trsv.
  void solve_weights_qr() override {
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

  // Variable projection's system (see backend.hpp): J from the Jacobian kernel, its weight columns
  // (the scaled features) factored by QR over the ridge rows, C = [J_ca | R] over zero ridge rows
  // multiplied by Qᵀ, then JᵀJ = BᵀB and JᵀR = Bᵀz from C's rows m… by SYRK and GEMV.
  LossParts vp_prepare() override {
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

  // LM: lm_prepare and lm_try each replay a CUDA graph (one launch, one synchronisation) once
  // captured for the current sizes; where capture fails (a library call that cannot be
  // captured), the same work is enqueued directly.
  LossParts lm_prepare() override {
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

  LossParts lm_try(T mu) override {
    if (!lm_prepared_) throw std::logic_error("lm_try called before lm_prepare");
    const int p = m_ * (D + 2);
    if (p == 0) return residuals();
    const bool accepted = try_step(-2.0, p, mu, 0, nullptr);
    res_stale_ = false;
    return accepted ? to_loss_parts(pinned_scalars_[0]) : rejected_step();
  }

  LossParts vp_try(T mu) override {
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

  void vp_expect_accepted_trials(bool likely) override { expect_accepted_ = likely; }

  typename RbfBackend<T>::VpTrialCounts vp_trial_counts() const override { return trial_counts_; }

  double lm_predicted_decrease() const override { return predicted_decrease_; }

  void lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const override {
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

  void lm_reject() override {
    if (!lm_prepared_) throw std::logic_error("lm_reject called before lm_prepare");
    // Asynchronous: the next call that needs θ or the residuals finds them in stream order.
    if (theta_.size() > 0) device_copy(theta_.data(), theta0_.data(), theta_.size());
    invalidate_features();
    res_stale_ = true;
  }

  void evaluate(const std::vector<double>& points, std::vector<double>& u,
                std::vector<double>& laplacian) override {
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

  void evaluate_gradient(const std::vector<double>& points,
                         std::vector<double>& gradient) override {
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

 private:
  // A device buffer laid out as θ = [w | c | a] as parameters.
  RbfParameters<T> download_theta(const DeviceBuffer<T>& buffer) const {
    std::vector<T> theta(buffer.size());
    download(theta, buffer.data());
    RbfParameters<T> p;
    p.dim = D;
    p.weights.assign(theta.begin(), theta.begin() + m_);
    p.centres.assign(theta.begin() + m_, theta.begin() + std::size_t(m_) * (D + 1));
    p.widths.assign(theta.begin() + std::size_t(m_) * (D + 1), theta.end());
    return p;
  }

  // The n points (n × D) of an evaluation into eval_x_.
  void upload_eval_points(const std::vector<double>& points, std::size_t n) {
    if (n > std::size_t(std::numeric_limits<int>::max() / 4))
      throw std::invalid_argument("too many evaluation points for one CUDA call");
    eval_x_.resize(n * D);
    upload(eval_x_.data(), std::vector<T>(points.begin(), points.begin() + n * D));  // staged
  }

  // The interior and boundary counts N and K of the scales: the union's over ranks.
  int interior_rows() const { return dist_ ? n_int_all_ : pts_.n_int; }
  int boundary_rows() const { return dist_ ? n_bnd_all_ : pts_.n_bnd; }
  T inv_n() const { return T(1) / T(std::max(interior_rows(), 1)); }
  T lam_k() const { return penalty_ / T(std::max(boundary_rows(), 1)); }

  // The coefficients handed to every launcher: null for a Poisson/Dirichlet batch (the Poisson
  // kernels), else the device arrays (null where the batch's array is empty: its default).
  const gpu::GeneralRows<T>* general_rows() const {
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

  // What a captured graph's kernels depend on beyond the points: which instantiation (Poisson or
  // general) and the coefficient arrays.
  std::vector<double> coefficient_key() const {
    const gpu::GeneralRows<T>* g = general_rows();
    if (!g) return {0.0};
    return {1.0,           double(space_dim_), ptr_key(g->a),    ptr_key(g->b),
            ptr_key(g->c), ptr_key(g->alpha),  ptr_key(g->beta), ptr_key(g->normals)};
  }
  std::vector<double> with_coefficients(std::vector<double> key) const {
    const std::vector<double> extra = coefficient_key();
    key.insert(key.end(), extra.begin(), extra.end());
    return key;
  }

  // Uploads the batch's non-empty coefficient arrays and selects the general rows unless the
  // batch is Poisson/Dirichlet.
  void set_coefficients(const CollocationBatch& batch) {
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

  void download_coefficient(std::vector<double>& out, bool present, const DeviceBuffer<T>& buffer,
                            std::size_t size) const {
    out.clear();
    if (!present || size == 0) return;
    std::vector<T> host(size);
    download(host, buffer.data());
    out.assign(host.begin(), host.end());
  }

  void invalidate_features() {
    features_valid_ = false;
    system_valid_ = false;
    ahead_.valid = false;
    trial_factor_valid_ = false;
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
  void device_copy(T* dst, const T* src, std::size_t count) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
  }
  // dst = src for a rows × cols column-major block (device; leading dimensions ld_dst, ld_src), on
  // `stream` (null: the backend's).
  void copy_block(T* dst, int ld_dst, const T* src, int ld_src, int rows, int cols,
                  cudaStream_t stream = nullptr) {
    CUDA_CHECK(cudaMemcpy2DAsync(dst, std::size_t(ld_dst) * sizeof(T), src,
                                 std::size_t(ld_src) * sizeof(T), std::size_t(rows) * sizeof(T),
                                 cols, cudaMemcpyDeviceToDevice, stream ? stream : stream_));
  }

  // The weights w become θ's unless w is not finite or info_ flags a failed factorisation (the
  // CPU keeps the old weights when its solve is not finite); complete on return.
  void accept_weights(const T* w) {
    gpu::launch_accept_weights<T>(stream_, w, info_.data(), theta_.data(), m_, scalars_.data());
    res_stale_ = true;
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // e, b and the loss parts at the current θ, left on the device.
  void enqueue_residuals() {
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

  // e and b at the current θ and this rank's per-block (Σe², Σb²) partials, without the loss.
  // The partials are cleared first: the pass writes as many as its grid has blocks, at most
  // residual_blocks(rows), and launch_loss_sums adds all of those (zeros change no sum).
  void enqueue_local_residuals() {
    CUDA_CHECK(cudaMemsetAsync(partials_.data(), 0, partials_.bytes(), stream_));
    gpu::launch_residuals<T, D>(stream_, pts_, x_.data(), target_.data(), theta_.data(), m_,
                                res_.data(), chunk_sums_.data(), partials_.data(), nullptr, nullptr,
                                general_rows());
    res_stale_ = false;
  }

  // `steps` GD steps; the loss before the last one ends in scalars_ (the residual pass's last
  // block writes it).
  void enqueue_gd_steps(int steps, T learning_rate) {
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

  // Sizes the buffers of a drawn batch and takes the sampler's kind of rows (Poisson/Dirichlet, or
  // general with every coefficient array written by the sampler).
  void prepare_draw(std::size_t n_int, std::size_t n_bnd) {
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

  void enqueue_draw(std::uint64_t seed) {
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

  // Sizes every buffer a batch of n_int + n_bnd rows needs (allocating only when growing).
  void prepare_batch_buffers(std::size_t n_int, std::size_t n_bnd) {
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

  void prepare_chunk_sums() {
    const int chunks = gpu::residual_chunk_count(pts_.rows(), m_);
    chunk_sums_.resize(chunks > 1 ? std::size_t(chunks) * pts_.rows() : 1);
  }

  // Sizes what the weight solves need for the current m and batch.
  void prepare_solver_buffers() {
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

  // CG on the weights, entirely on the device (no host synchronisation: graph-capturable when m
  // fits the one-kernel solvers).
  void enqueue_solve_cg(int max_iterations, T tolerance) {
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

  // Very large m: the CG's vector updates as kernels between cuBLAS GEMVs, checking convergence
  // on the host every kCgCheckEvery iterations.
  void solve_cg_cublas(int max_iterations, T tolerance) {
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

  // The shapes and buffers a captured cycle depends on.
  std::vector<double> cycle_key(const typename RbfBackend<T>::GdcgCycle& c) const {
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

  cudaGraphExec_t capture_cycle(const typename RbfBackend<T>::GdcgCycle& c,
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

  static double ptr_key(const void* p) { return double(reinterpret_cast<std::uintptr_t>(p)); }

  // Replays the graph cached under `key`, capturing `enqueue` first if there is none; enqueues
  // directly when capture is not possible. Ends with the device scalars in pinned memory and the
  // stream synchronised.
  template <class Enqueue>
  void run_graph(const std::vector<double>& operation_key, const Enqueue& enqueue) {
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

  // The residuals, then J (n × m(d+2), column-major) and the scaled residuals R of the current θ.
  void enqueue_jacobian() {
    enqueue_residuals();
    gpu::launch_jacobian<T, D>(stream_, pts_, x_.data(), res_.data(), theta_.data(), m_,
                               jacobian_scale_interior(), jacobian_scale_boundary(), jac_.data(),
                               r_scaled_.data(), general_rows());
  }
  T jacobian_scale_interior() const { return T(1) / std::sqrt(T(std::max(interior_rows(), 1))); }
  T jacobian_scale_boundary() const {
    return std::sqrt(penalty_ / T(std::max(boundary_rows(), 1)));
  }

  // The look-ahead (see the head of this file), after a trial step's graph: on ahead_.stream,
  // the features of θ's centres and widths as the Jacobian kernel writes them, factored as
  // factor_features_qr does; ahead_.join marks the end.
  void enqueue_lookahead() {
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

  // θ0 = θ: the state lm_reject returns to.
  void enqueue_save_theta0() {
    if (theta_.size() > 0) device_copy(theta0_.data(), theta_.data(), theta_.size());
  }

  // J and R of n rows, JᵀJ and JᵀR of q parameters, and θ0.
  void size_lm_buffers(int n, int q) {
    jac_.resize(std::size_t(n) * m_ * (D + 2));
    r_scaled_.resize(n);
    jtj_.resize(std::size_t(q) * q);
    jtr_.resize(q);
    theta0_.resize(theta_.size());
  }

  void enqueue_lm_prepare() {
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

  // JᵀJ (lower triangle) = BᵀB and JᵀR = Bᵀz of p parameters for B (k × p, leading dimension
  // ldb) and z (k entries), or zeros without B. beta = 0: neither needs clearing first.
  void normal_equations(int p, int k, const T* b, int ldb, const T* z) {
    if (!b) {
      CUDA_CHECK(cudaMemsetAsync(jtj_.data(), 0, jtj_.bytes(), stream_));
      CUDA_CHECK(cudaMemsetAsync(jtr_.data(), 0, jtr_.bytes(), stream_));
      return;
    }
    const T one = T(1), zero = T(0);
    CUBLAS_CHECK(gpu::blas::syrk_t_ld(cublas_, p, k, &one, b, ldb, &zero, jtj_.data(), p));
    CUBLAS_CHECK(gpu::blas::gemv(cublas_, CUBLAS_OP_T, k, p, &one, b, ldb, z, &zero, jtr_.data()));
  }

  // A damped step on the p parameters from `first` on (enqueue_lm_try), μ staged in pinned
  // memory, as the graph tagged `tag`: LM's without `scaling` (then with the residuals after
  // it), variable projection's with it. False when the step was rejected.
  bool try_step(double tag, int p, T mu, int first, const T* scaling) {
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

  // The loss of a step whose factorisation failed or whose δ was not finite.
  static LossParts rejected_step() {
    LossParts bad;
    bad.loss = bad.rms_interior = bad.rms_boundary = std::numeric_limits<double>::infinity();
    return bad;
  }

  // The LM step θ[first…] = θ0[first…] + δ for the p parameters from `first` on (0 for LM, m for
  // variable projection's centres and widths), Marquardt's scaling diag JᵀJ or `scaling`.
  void enqueue_lm_try(int p, int lwork, int first, const T* scaling, bool with_residuals) {
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

  void drop_graphs() { graphs_.clear(); }

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

  // The normal equations A = MᵀM/N + λNᵀN/K (full, symmetric) and s = Mᵀf/N + λNᵀp/K.
  void assemble_system() {
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

  // A = F'ᵀF' from the stored features, the one O(n·m²) step of a cycle. At moderate m (≈ 1024)
  // one SYRK has too few output tiles to fill the GPU, so the rows are split into kSlabs slabs
  // whose SYRKs run concurrently on side streams (split-K; a graph captures the fork and join)
  // and are summed (double at (1024, 18432): 0.81 → 0.59 ms). At large m one SYRK fills the GPU
  // (two diagonal SYRKs and a DGEMM were slower).
  void gram_from_features(int n) {
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

  void ensure_side_streams() {
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

  // qr_a_ = [features (n × m, leading dimension n); δ·max_k|F_k|·I] factored by geqrf (R in its
  // upper triangle, the reflectors below, their scalars in qr_tau_).
  void factor_features_qr(const T* features) {
    factor_features_on(stream_, cusolver_, features, qr_a_, qr_tau_, qr_norms_, qr_y_, work_,
                       info_.data());
  }
  // The same into the buffers given, on `stream` with the cuSOLVER handle bound to it.
  void factor_features_on(cudaStream_t stream, cusolverDnHandle_t solver, const T* features,
                          DeviceBuffer<T>& a, DeviceBuffer<T>& tau, DeviceBuffer<T>& norms,
                          DeviceBuffer<T>& y, DeviceBuffer<T>& work, int* info) {
    over_ridge_rows(stream, features, a, norms, y);
    geqrf_on(solver, a.data(), pts_.rows() + m_, pts_.rows() + m_, m_, tau, work, info);
  }
  // a (n + m rows × m) = the features (n × m) over the ridge rows, y's ridge rows zero.
  void over_ridge_rows(cudaStream_t stream, const T* features, DeviceBuffer<T>& a,
                       DeviceBuffer<T>& norms, DeviceBuffer<T>& y) {
    const int n = pts_.rows(), rows = n + m_;
    a.resize(std::size_t(rows) * m_);
    norms.resize(m_);
    y.resize(rows);
    if (n > 0) copy_block(a.data(), rows, features, n, n, m_, stream);
    gpu::launch_column_norms<T>(stream, a.data(), n, m_, rows, false, norms.data());
    gpu::launch_qr_ridge_rows<T>(stream, a.data(), y.data(), n, m_, norms.data(),
                                 vp_qr_ridge<T>());
  }

  // The CPU backend's preconditioned_weights (docs/mathematics.md, "Trial weights"): A = F·R⁻¹
  // for the trial's features over the ridge rows and vp_prepare's R (TRSM), G = AᵀA (SYRK) = LLᵀ
  // (potrf), z = G⁻¹Aᵀy, one refinement step z += G⁻¹Aᵀ(y − Az), w = R⁻¹z (trsv), the residuals
  // at w. When vp_trial_weights_usable accepts, θ keeps w and `parts` holds the loss; otherwise
  // θ's weights return to θ0's and the caller solves by QR.
  bool preconditioned_weights(LossParts& parts) {
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

  // c (rows × cols, leading dimension rows) ← (I − A·G⁻¹·Aᵀ)·c twice, with the last
  // preconditioned trial's A (pc_.a) and G's Cholesky factor (pc_.gram): c projected onto the
  // complement of range(A) by two passes of the normal equations (the CPU backend's
  // project_out_range).
  void project_out_range(T* c, int rows, int cols) {
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

  // c (rows × cols, leading dimension rows) = Qᵀ c, Q the product of the k reflectors that
  // geqrf_in_place left in a (leading dimension rows) and qr_tau_.
  void apply_reflectors_t(const T* a, int rows, int k, T* c, int cols) {
    int lwork = 0;
    CUSOLVER_CHECK(gpu::blas::ormqr_t_buffer_size(cusolver_, rows, cols, k, a, rows,
                                                  qr_tau_.data(), c, &lwork));
    work_.resize(std::max(lwork, 1));
    CUSOLVER_CHECK(gpu::blas::ormqr_t(cusolver_, rows, cols, k, a, rows, qr_tau_.data(), c,
                                      work_.data(), int(work_.size()), info_.data()));
  }

  // TSQR (the CPU backend's tsqr_r): `a` (rows × cols, column-major, leading dimension lda;
  // overwritten) is this rank's block of rows; tsqr_r_ becomes the cols × cols R (zeros below
  // its diagonal) of the QR factorisation of every rank's block stacked in rank order. Every
  // rank factors the same stack of the R factors (cols² values per rank), so R is the same on
  // every rank. geqrf's status ends in info_[0].
  void tsqr_r(T* a, int rows, int lda, int cols) {
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

  // tsqr_stack_ ((ranks·rows) × cols, column-major) = every rank's `block` (rows × cols,
  // column-major, leading dimension rows), rank r's at rows [r·rows, (r+1)·rows), gathered in
  // device memory (gpu::allgather: NCCL, or staged through the host); returns ranks·rows.
  int gather_stack(const T* block, int rows, int cols) {
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

  void geqrf_in_place(T* a, int rows, int lda, int cols) {
    geqrf_on(cusolver_, a, rows, lda, cols, qr_tau_, work_, info_.data());
  }
  void geqrf_on(cusolverDnHandle_t solver, T* a, int rows, int lda, int cols, DeviceBuffer<T>& tau,
                DeviceBuffer<T>& work, int* info) {
    tau.resize(std::max(std::min(rows, cols), 1));
    int lwork = 0;
    CUSOLVER_CHECK(gpu::blas::geqrf_buffer_size(solver, rows, cols, a, lda, &lwork));
    work.resize(std::max(lwork, 1));
    CUSOLVER_CHECK(gpu::blas::geqrf(solver, rows, cols, a, lda, tau.data(), work.data(),
                                    int(work.size()), info));
  }

  // The ridge rows of the distributed least-squares systems: on rank 0, rows [n, n + m) of `a`
  // (leading dimension lda, `cols` columns) become vp_qr_ridge·max_k |F_k|·I over the first m
  // columns and zero in the others, |F_k| the norm of feature column k over every rank's rows
  // (this rank's F: n × m at leading dimension ld_features). The other ranks have no ridge rows.
  void set_ridge_rows(T* a, int n, int lda, int cols, const T* features, int ld_features) {
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

  int ridge_rows() const { return comm_->rank() == 0 ? m_ : 0; }

  // solve_weights_qr over the ranks: R of [F | y] (ridge rows on rank 0) by TSQR, R₁₁ w = r₁₂.
  void solve_weights_tsqr() {
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

  // vp_prepare over the ranks (docs/mathematics.md, "Over several ranks"). Each rank
  // factors its scaled features F_i = Q_i R_i (ridge rows on rank 0) and forms D_i = Q_iᵀ C_i,
  // C_i = [J_ca | R] (zero ridge rows), as one GPU does with its whole batch. D_i's rows k_i… (k_i
  // = min(rows_i, m)) lie in the complement of range(F): they add L_iᵀL_i to the Gram matrix G of
  // [B | z], summed over the ranks. Its first k_i rows T_i go with R_i to every rank, which
  // stacks the ranks' [R_i | T_i] (m rows each, zero below row k_i), factors the stacked R's and
  // applies that Qᵀ to the stacked T's: rows m… of the result are the rest of [B | z]. JᵀJ = BᵀB
  // is G's leading pc × pc block, JᵀR = Bᵀz its last row. A rank's own work is one GPU's on its
  // share; the sums are G ((pc + 1)² values) and the gathered [R_i | T_i] (m·(m + pc + 1) values
  // a rank). Marquardt's scaling: the squared norms of J_ca's columns summed over the ranks.
  LossParts vp_prepare_tsqr() {
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

  // The end of vp_prepare: JᵀJ = BᵀB and JᵀR = Bᵀz for B (k × pc, leading dimension ldb) and z
  // (k entries), or zeros with everything else when there is no B; then θ0 = θ and the loss.
  LossParts finish_vp_prepare(int k, const T* b, int ldb, const T* z) {
    normal_equations(m_ * (D + 1), k, b, ldb, z);
    if (!b) CUDA_CHECK(cudaMemsetAsync(vp_diag_.data(), 0, vp_diag_.bytes(), stream_));
    return end_prepare();
  }

  // θ0 = θ for lm_reject, and the loss of vp_prepare.
  LossParts end_prepare() {
    enqueue_save_theta0();
    lm_prepared_ = true;
    res_stale_ = false;
    return to_loss_parts(read_scalars());
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

  bool lookahead_;  // BackendOptions::vp_lookahead
  bool preconditioned_;  // BackendOptions::vp_preconditioned_trials, in double
  bool factor_from_trial_;  // BackendOptions::vp_factor_from_trial
  // The last preconditioned trial's A and factor of G (pc_) belong to θ and the batch, and the
  // next vp_prepare may take them (vp_trial_factor_usable).
  bool trial_factor_valid_ = false;
  bool expect_accepted_ = false;  // vp_expect_accepted_trials
  // vp_prepare's R (m × m, ld m; valid after a single-GPU vp_prepare with preconditioned_) and
  // loss, and preconditioned_weights' buffers: A, G and its factor, z, its correction, y − Az,
  // |dz| and |z|, potrf's and potrs's status.
  bool vp_r_valid_ = false;
  DeviceBuffer<T> vp_r_;
  double vp_loss_ = 0;
  typename RbfBackend<T>::VpTrialCounts trial_counts_;
  // project_out_range's G⁻¹Aᵀc (x) and the last refinement correction |dz|/|z|.
  struct {
    DeviceBuffer<T> a, gram, z, dz, r, norms, x;
    DeviceBuffer<int> info;
    double correction = 0;
  } pc_;
  T penalty_, min_width_;
  int laplacian_dims_;  // of evaluate
  std::shared_ptr<Communicator> comm_;
  bool dist_ = false;                  // comm_->distributed(): the sums over ranks below are on
  int n_int_all_ = 0, n_bnd_all_ = 0;  // the union's counts N and K (with dist_)
  DeviceBuffer<double> loss_sums_;     // Σe², Σb² summed over the ranks
  // TSQR's blocks, this rank's R, every rank's R side by side, their stack, the stack's R.
  DeviceBuffer<T> tsqr_a_, tsqr_local_, tsqr_gather_, tsqr_stack_, tsqr_r_;
  DeviceBuffer<T> vp_gram_, vp_top_;  // vp_prepare over the ranks: G and this rank's [R_i | T_i]
  std::string device_name_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;

  CollocationBatch host_batch_;
  bool general_ = false;  // the batch is not Poisson/Dirichlet
  int space_dim_ = D;
  bool has_a_ = false, has_b_ = false, has_c_ = false, has_alpha_ = false, has_beta_ = false;
  mutable gpu::GeneralRows<T> general_rows_;
  DeviceBuffer<T> coef_a_, coef_b_, coef_c_, coef_alpha_, coef_beta_;
  int m_ = 0;
  PointsView pts_;
  bool features_valid_ = false, system_valid_ = false, lm_prepared_ = false;
  bool device_drawn_ = false;
  bool res_stale_ = false;  // res_ predates the last change of θ or batch
  std::unique_ptr<gpu::DeviceSampler> sampler_;
  gpu::GraphCache<std::vector<double>> graphs_{kMaxGraphs};
  cudaStream_t side_streams_[kSlabs] = {};
  cublasHandle_t side_cublas_[kSlabs] = {};
  cudaEvent_t joins_[kSlabs] = {};
  cudaEvent_t fork_ = nullptr;
  DeviceBuffer<unsigned char> side_workspace_;
  DeviceBuffer<T> slab_partials_;
  gpu::PinnedBuffer<std::uint64_t> pinned_index_{1};
  gpu::PinnedBuffer<DeviceScalars> pinned_scalars_{1};
  gpu::PinnedBuffer<T> pinned_mu_{1};
  bool graphs_usable_ = true;

  DeviceBuffer<T> theta_, theta0_, grad_;
  DeviceBuffer<T> x_, target_, res_, normals_, chunk_sums_;
  DeviceBuffer<unsigned> barrier_, residual_counter_;
  DeviceBuffer<T> lm_mu_;
  DeviceBuffer<unsigned char> cublas_workspace_;
  DeviceBuffer<T> gram_a_, gram_s_, scaled_target_;
  DeviceBuffer<double> partials_;
  DeviceBuffer<DeviceScalars> scalars_;
  DeviceBuffer<int> info_;
  DeviceBuffer<T> constants_;  // 1, 0, −1 for cuBLAS in device pointer mode
  DeviceBuffer<T> features_, a_sys_, s_, factor_, solution_, work_;
  DeviceBuffer<T> cg_r_, cg_d_, cg_ad_;
  DeviceBuffer<T> jac_, r_scaled_, jtj_, jtr_, lm_a_, delta_;
  DeviceBuffer<T> lm_jdelta_;       // JᵀJ times the last try's step
  double predicted_decrease_ = 0;  // the last try's (lm_predicted_decrease)
  DeviceBuffer<T> qr_features_, qr_a_, qr_y_, qr_tau_, qr_norms_;  // solve_weights_qr
  DeviceBuffer<T> vp_c_, vp_diag_;  // vp_prepare: Qᵀ[J_ca | R], Marquardt's scaling
  // The look-ahead factorisation: its stream, handle and events, the features and their QR
  // (a, tau as qr_a_, qr_tau_), valid while θ's centres and widths and the batch are the ones
  // factored.
  struct Lookahead {
    cudaStream_t stream = nullptr;
    cusolverDnHandle_t solver = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    DeviceBuffer<T> features, a, tau, norms, y, work;
    DeviceBuffer<int> info;
    bool valid = false;
  } ahead_;
  DeviceBuffer<T> eval_x_, eval_u_, eval_lap_, eval_grad_;
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
  if (options.dim == 4) return std::make_unique<CudaRbfBackend<T, 4>>(options);
  throw std::invalid_argument("the CUDA backend supports 2, 3 or 4 dimensions, got " +
                              std::to_string(options.dim));
}

namespace gpu {
namespace {
// f(b) for `backend` as the CudaRbfBackend of its dimension; `caller` throws for another backend.
template <class T, class F>
auto with_cuda_backend(RbfBackend<T>& backend, const char* caller, F f) {
  if (auto* b = dynamic_cast<CudaRbfBackend<T, 2>*>(&backend)) return f(*b);
  if (auto* b = dynamic_cast<CudaRbfBackend<T, 3>*>(&backend)) return f(*b);
  if (auto* b = dynamic_cast<CudaRbfBackend<T, 4>*>(&backend)) return f(*b);
  throw std::invalid_argument(std::string(caller) + ": not a CUDA backend");
}
template <class T>
Stream stream_of(RbfBackend<T>& backend) {
  return with_cuda_backend(backend, "backend_stream", [](auto& b) { return b.stream(); });
}
template <class T>
void set_problem_operator_of(RbfBackend<T>& backend, const Problem& problem,
                             const OperatorText& op) {
  with_cuda_backend(backend, "set_problem_operator",
                    [&](auto& b) { b.set_problem_operator(problem, op); });
}
}  // namespace
Stream backend_stream(RbfBackend<double>& backend) { return stream_of(backend); }
Stream backend_stream(RbfBackend<float>& backend) { return stream_of(backend); }
void set_problem_operator(RbfBackend<double>& backend, const Problem& problem,
                          const OperatorText& op) {
  set_problem_operator_of(backend, problem, op);
}
void set_problem_operator(RbfBackend<float>& backend, const Problem& problem,
                          const OperatorText& op) {
  set_problem_operator_of(backend, problem, op);
}
}  // namespace gpu

template std::unique_ptr<RbfBackend<double>> make_cuda_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cuda_backend<float>(const BackendOptions&);

}  // namespace rbfpde
