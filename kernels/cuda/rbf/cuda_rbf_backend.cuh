// The CUDA backend: the RbfBackend interface on the device. Parameters θ = [w | c | a] and the
// collocation batch live in device memory for the backend's lifetime; the host sees them only in
// parameters(), residual_vectors(), evaluate() and the returned scalars (one small copy per call).
// The kernels are in residual_kernels.cu (fused residual, features, evaluate), gradient_kernel.cu,
// jacobian_kernel.cu and solver_kernels.cu; the class below is the glue: buffers, cuBLAS/cuSOLVER
// calls and the order of operations, which follows the CPU reference (kernels/cpu/cpu_rbf_*.cpp)
// method for method.
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
// Internal to kernels/cuda/rbf/: make_cuda_backend (cuda_backend.cu) builds the class below. Each
// member too long for the class body is defined in one cuda_rbf_*.cu file, which ends with an
// explicit instantiation definition of it for each (T, D) that make_cuda_backend builds (T double
// or float, D 2, 3 or 4): cuda_rbf_state.cu (construction, buffers, the batch and the parameters,
// the residual passes, evaluation), cuda_rbf_gdcg.cu (gradient, GD steps, the weight system and
// its CG and direct solves, the gdcg cycle's CUDA graph), cuda_rbf_lm.cu (Levenberg–Marquardt and
// its graphs), cuda_rbf_varpro.cu (variable projection on one GPU: its system, the trials and
// their weights, the look-ahead), cuda_rbf_qr.cu (the QR weight solve and its factorisations, and
// TSQR over ranks). The members defined in the class body (accessors, and the small copies and
// conversions every file uses) are instantiated where used.
#pragma once

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

namespace rbfpde::cuda_detail {

using gpu::DeviceBuffer;
using gpu::DeviceScalars;
using gpu::PointsView;

// Split-K assembly (see gram_from_features): slabs.
constexpr int kSlabs = 8;
// Graphs kept per backend: a trainer alternates at most between a drawing and a non-drawing cycle.
constexpr std::size_t kMaxGraphs = 8;

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
  explicit CudaRbfBackend(const BackendOptions& options);

  ~CudaRbfBackend() override;

  std::string name() const override { return "cuda"; }
  gpu::Stream stream() const { return stream_; }
  std::string device_name() const override { return device_name_; }

  void set_parameters(const RbfParameters<T>& params) override;

  RbfParameters<T> parameters() const override { return download_theta(theta_); }

  void set_batch(const CollocationBatch& batch) override;

  bool draws_batches() const override { return sampler_ != nullptr; }

  void set_problem(const Problem& problem) override {
    set_problem_operator(problem, gpu::operator_text(problem));
  }

  // set_problem with the operator given as text: the sampler writes its coefficients.
  void set_problem_operator(const Problem& problem, const gpu::OperatorText& op);

  void draw_batch(std::uint64_t seed, std::uint64_t index, std::size_t n_interior,
                  std::size_t n_boundary) override;

  // A batch drawn on the device is copied back here; one set from the host is returned as given.
  CollocationBatch batch() const override;

  LossParts gdcg_cycle(const typename RbfBackend<T>::GdcgCycle& c) override;

  LossParts residuals() override {
    enqueue_residuals();
    return to_loss_parts(read_scalars());
  }

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override;

  LossParts gradient(RbfParameters<T>& grad) override;

  LossParts gd_steps(int steps, T learning_rate) override {
    enqueue_gd_steps(steps, learning_rate);
    return to_loss_parts(read_scalars());
  }

  CgResult solve_weights_cg(int max_iterations, T tolerance) override;

  void solve_weights_direct(T ridge) override;

  // Least squares by Householder QR of the scaled features over the ridge rows: features (n × m)
  // copied under a leading dimension of n + m, geqrf, Qᵀy by ormqr, R w = (Qᵀy)[0, m) by trsv.
  void solve_weights_qr() override;

  // Variable projection's system (see backend.hpp): J from the Jacobian kernel, its weight columns
  // (the scaled features) factored by QR over the ridge rows, C = [J_ca | R] over zero ridge rows
  // multiplied by Qᵀ, then JᵀJ = BᵀB and JᵀR = Bᵀz from C's rows m… by SYRK and GEMV.
  LossParts vp_prepare() override;

  // LM: lm_prepare and lm_try each replay a CUDA graph (one launch, one synchronisation) once
  // captured for the current sizes; where capture fails (a library call that cannot be
  // captured), the same work is enqueued directly.
  LossParts lm_prepare() override;

  LossParts lm_try(T mu) override;

  LossParts vp_try(T mu) override;

  void vp_expect_accepted_trials(bool likely) override { expect_accepted_ = likely; }

  typename RbfBackend<T>::VpTrialCounts vp_trial_counts() const override { return trial_counts_; }

  double lm_predicted_decrease() const override { return predicted_decrease_; }

  void lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const override;

  void lm_reject() override;

  void evaluate(const std::vector<double>& points, std::vector<double>& u,
                std::vector<double>& laplacian) override;

  void evaluate_gradient(const std::vector<double>& points,
                         std::vector<double>& gradient) override;

 private:
  // A device buffer laid out as θ = [w | c | a] as parameters.
  RbfParameters<T> download_theta(const DeviceBuffer<T>& buffer) const;

  // The n points (n × D) of an evaluation into eval_x_.
  void upload_eval_points(const std::vector<double>& points, std::size_t n);

  // The interior and boundary counts N and K of the scales: the union's over ranks.
  int interior_rows() const { return dist_ ? n_int_all_ : pts_.n_int; }
  int boundary_rows() const { return dist_ ? n_bnd_all_ : pts_.n_bnd; }
  T inv_n() const { return T(1) / T(std::max(interior_rows(), 1)); }
  T lam_k() const { return penalty_ / T(std::max(boundary_rows(), 1)); }

  // The coefficients handed to every launcher: null for a Poisson/Dirichlet batch (the Poisson
  // kernels), else the device arrays (null where the batch's array is empty: its default).
  const gpu::GeneralRows<T>* general_rows() const;

  // What a captured graph's kernels depend on beyond the points: which instantiation (Poisson or
  // general) and the coefficient arrays.
  std::vector<double> coefficient_key() const;
  std::vector<double> with_coefficients(std::vector<double> key) const {
    const std::vector<double> extra = coefficient_key();
    key.insert(key.end(), extra.begin(), extra.end());
    return key;
  }

  // Uploads the batch's non-empty coefficient arrays and selects the general rows unless the
  // batch is Poisson/Dirichlet.
  void set_coefficients(const CollocationBatch& batch);

  void download_coefficient(std::vector<double>& out, bool present, const DeviceBuffer<T>& buffer,
                            std::size_t size) const;

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
  void enqueue_residuals();

  // e and b at the current θ and this rank's per-block (Σe², Σb²) partials, without the loss.
  // The partials are cleared first: the pass writes as many as its grid has blocks, at most
  // residual_blocks(rows), and launch_loss_sums adds all of those (zeros change no sum).
  void enqueue_local_residuals();

  // `steps` GD steps; the loss before the last one ends in scalars_ (the residual pass's last
  // block writes it).
  void enqueue_gd_steps(int steps, T learning_rate);

  // Sizes the buffers of a drawn batch and takes the sampler's kind of rows (Poisson/Dirichlet, or
  // general with every coefficient array written by the sampler).
  void prepare_draw(std::size_t n_int, std::size_t n_bnd);

  void enqueue_draw(std::uint64_t seed);

  // Sizes every buffer a batch of n_int + n_bnd rows needs (allocating only when growing).
  void prepare_batch_buffers(std::size_t n_int, std::size_t n_bnd);

  void prepare_chunk_sums() {
    const int chunks = gpu::residual_chunk_count(pts_.rows(), m_);
    chunk_sums_.resize(chunks > 1 ? std::size_t(chunks) * pts_.rows() : 1);
  }

  // Sizes what the weight solves need for the current m and batch.
  void prepare_solver_buffers();

  // CG on the weights, entirely on the device (no host synchronisation: graph-capturable when m
  // fits the one-kernel solvers).
  void enqueue_solve_cg(int max_iterations, T tolerance);

  // Very large m: the CG's vector updates as kernels between cuBLAS GEMVs, checking convergence
  // on the host every kCgCheckEvery iterations.
  void solve_cg_cublas(int max_iterations, T tolerance);

  // The shapes and buffers a captured cycle depends on.
  std::vector<double> cycle_key(const typename RbfBackend<T>::GdcgCycle& c) const;

  cudaGraphExec_t capture_cycle(const typename RbfBackend<T>::GdcgCycle& c,
                                const std::vector<double>& key);

  static double ptr_key(const void* p) { return double(reinterpret_cast<std::uintptr_t>(p)); }

  // Replays the graph cached under `key`, capturing `enqueue` first if there is none; enqueues
  // directly when capture is not possible. Ends with the device scalars in pinned memory and the
  // stream synchronised.
  template <class Enqueue>
  void run_graph(const std::vector<double>& operation_key, const Enqueue& enqueue);

  // The residuals, then J (n × m(d+2), column-major) and the scaled residuals R of the current θ.
  void enqueue_jacobian();
  T jacobian_scale_interior() const { return T(1) / std::sqrt(T(std::max(interior_rows(), 1))); }
  T jacobian_scale_boundary() const {
    return std::sqrt(penalty_ / T(std::max(boundary_rows(), 1)));
  }

  // The look-ahead (see cuda_rbf_varpro.cu), after a trial step's graph: on ahead_.stream,
  // the features of θ's centres and widths as the Jacobian kernel writes them, factored as
  // factor_features_qr does; ahead_.join marks the end.
  void enqueue_lookahead();

  // θ0 = θ: the state lm_reject returns to.
  void enqueue_save_theta0() {
    if (theta_.size() > 0) device_copy(theta0_.data(), theta_.data(), theta_.size());
  }

  // J and R of n rows, JᵀJ and JᵀR of q parameters, and θ0.
  void size_lm_buffers(int n, int q);

  void enqueue_lm_prepare();

  // JᵀJ (lower triangle) = BᵀB and JᵀR = Bᵀz of p parameters for B (k × p, leading dimension
  // ldb) and z (k entries), or zeros without B. beta = 0: neither needs clearing first.
  void normal_equations(int p, int k, const T* b, int ldb, const T* z);

  // A damped step on the p parameters from `first` on (enqueue_lm_try), μ staged in pinned
  // memory, as the graph tagged `tag`: LM's without `scaling` (then with the residuals after
  // it), variable projection's with it. False when the step was rejected.
  bool try_step(double tag, int p, T mu, int first, const T* scaling);

  // The loss of a step whose factorisation failed or whose δ was not finite.
  static LossParts rejected_step() {
    LossParts bad;
    bad.loss = bad.rms_interior = bad.rms_boundary = std::numeric_limits<double>::infinity();
    return bad;
  }

  // The LM step θ[first…] = θ0[first…] + δ for the p parameters from `first` on (0 for LM, m for
  // variable projection's centres and widths), Marquardt's scaling diag JᵀJ or `scaling`.
  void enqueue_lm_try(int p, int lwork, int first, const T* scaling, bool with_residuals);

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
  void assemble_system();

  // A = F'ᵀF' from the stored features, the one O(n·m²) step of a cycle. At moderate m (≈ 1024)
  // one SYRK has too few output tiles to fill the GPU, so the rows are split into kSlabs slabs
  // whose SYRKs run concurrently on side streams (split-K; a graph captures the fork and join)
  // and are summed (double at (1024, 18432): 0.81 → 0.59 ms). At large m one SYRK fills the GPU
  // (two diagonal SYRKs and a DGEMM were slower).
  void gram_from_features(int n);

  void ensure_side_streams();

  // qr_a_ = [features (n × m, leading dimension n); δ·max_k|F_k|·I] factored by geqrf (R in its
  // upper triangle, the reflectors below, their scalars in qr_tau_).
  void factor_features_qr(const T* features) {
    factor_features_on(stream_, cusolver_, features, qr_a_, qr_tau_, qr_norms_, qr_y_, work_,
                       info_.data());
  }
  // The same into the buffers given, on `stream` with the cuSOLVER handle bound to it.
  void factor_features_on(cudaStream_t stream, cusolverDnHandle_t solver, const T* features,
                          DeviceBuffer<T>& a, DeviceBuffer<T>& tau, DeviceBuffer<T>& norms,
                          DeviceBuffer<T>& y, DeviceBuffer<T>& work, int* info);
  // a (n + m rows × m) = the features (n × m) over the ridge rows, y's ridge rows zero.
  void over_ridge_rows(cudaStream_t stream, const T* features, DeviceBuffer<T>& a,
                       DeviceBuffer<T>& norms, DeviceBuffer<T>& y);

  // The CPU backend's preconditioned_weights (docs/mathematics.md, "Trial weights"): A = F·R⁻¹
  // for the trial's features over the ridge rows and vp_prepare's R (TRSM), G = AᵀA (SYRK) = LLᵀ
  // (potrf), z = G⁻¹Aᵀy, one refinement step z += G⁻¹Aᵀ(y − Az), w = R⁻¹z (trsv), the residuals
  // at w. When vp_trial_weights_usable accepts, θ keeps w and `parts` holds the loss; otherwise
  // θ's weights return to θ0's and the caller solves by QR.
  bool preconditioned_weights(LossParts& parts);

  // c (rows × cols, leading dimension rows) ← (I − A·G⁻¹·Aᵀ)·c twice, with the last
  // preconditioned trial's A (pc_.a) and G's Cholesky factor (pc_.gram): c projected onto the
  // complement of range(A) by two passes of the normal equations (the CPU backend's
  // project_out_range).
  void project_out_range(T* c, int rows, int cols);

  // c (rows × cols, leading dimension rows) = Qᵀ c, Q the product of the k reflectors that
  // geqrf_in_place left in a (leading dimension rows) and qr_tau_.
  void apply_reflectors_t(const T* a, int rows, int k, T* c, int cols);

  // TSQR (the CPU backend's tsqr_r): `a` (rows × cols, column-major, leading dimension lda;
  // overwritten) is this rank's block of rows; tsqr_r_ becomes the cols × cols R (zeros below
  // its diagonal) of the QR factorisation of every rank's block stacked in rank order. Every
  // rank factors the same stack of the R factors (cols² values per rank), so R is the same on
  // every rank. geqrf's status ends in info_[0].
  void tsqr_r(T* a, int rows, int lda, int cols);

  // tsqr_stack_ ((ranks·rows) × cols, column-major) = every rank's `block` (rows × cols,
  // column-major, leading dimension rows), rank r's at rows [r·rows, (r+1)·rows), gathered in
  // device memory (gpu::allgather: NCCL, or staged through the host); returns ranks·rows.
  int gather_stack(const T* block, int rows, int cols);

  void geqrf_in_place(T* a, int rows, int lda, int cols) {
    geqrf_on(cusolver_, a, rows, lda, cols, qr_tau_, work_, info_.data());
  }
  void geqrf_on(cusolverDnHandle_t solver, T* a, int rows, int lda, int cols, DeviceBuffer<T>& tau,
                DeviceBuffer<T>& work, int* info);

  // The ridge rows of the distributed least-squares systems: on rank 0, rows [n, n + m) of `a`
  // (leading dimension lda, `cols` columns) become vp_qr_ridge·max_k |F_k|·I over the first m
  // columns and zero in the others, |F_k| the norm of feature column k over every rank's rows
  // (this rank's F: n × m at leading dimension ld_features). The other ranks have no ridge rows.
  void set_ridge_rows(T* a, int n, int lda, int cols, const T* features, int ld_features);

  int ridge_rows() const { return comm_->rank() == 0 ? m_ : 0; }

  // solve_weights_qr over the ranks: R of [F | y] (ridge rows on rank 0) by TSQR, R₁₁ w = r₁₂.
  void solve_weights_tsqr();

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
  LossParts vp_prepare_tsqr();

  // The end of vp_prepare: JᵀJ = BᵀB and JᵀR = Bᵀz for B (k × pc, leading dimension ldb) and z
  // (k entries), or zeros with everything else when there is no B; then θ0 = θ and the loss.
  LossParts finish_vp_prepare(int k, const T* b, int ldb, const T* z);

  // θ0 = θ for lm_reject, and the loss of vp_prepare.
  LossParts end_prepare();

  // Cholesky of the lower triangle of `a` (overwritten) and solve in place; info_[0] holds
  // potrf's status, which the kernels that follow check on the device.
  void cholesky_solve(T* a, int p, T* rhs);

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

}  // namespace rbfpde::cuda_detail
