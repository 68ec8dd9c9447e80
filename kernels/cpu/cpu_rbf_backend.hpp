// CPU reference backend: Eigen for the dense algebra, OpenMP over points (residuals, features,
// Jacobian rows) or over neurons (gradients), never over a reduction whose order could change
// with the thread count — same seed, same numbers.
//
// A batch that is not Poisson/Dirichlet (CollocationBatch::poisson_dirichlet() false) takes the
// general rows of rbf_math.hpp everywhere — interior a·Δₛφ + b·∇φ + c·φ, boundary
// α·φ + β·∂φ/∂n, and their centre and width derivatives; a Poisson/Dirichlet batch takes the
// Poisson path, which forms Δφ and φ with no coefficient arrays.
//
// With several ranks (BackendOptions::comm), each holds its share of the points and the counts N
// and K are those of the union: every sum over points is a local sum all-reduced at the point
// where the single-process code has it, and the small solves run on every rank on identical
// inputs. Variable projection's QRs become tall-skinny ones: each rank factors its own rows and
// small blocks are gathered (docs/mathematics.md, "Over several ranks"). With one rank the
// code below is the single-process code, unchanged.
//
// Napkin math per gdcg cycle at (m neurons, n = N + K points, d = 2): the residual pass and the
// gradient pass each evaluate n·m Gaussians (~20 FLOPs + one exp each); assembling M and N
// another n·m; CG costs 4·n·m FLOPs per iteration (two GEMVs over the stored n × m features).
//
// Internal to kernels/cpu/: make_cpu_backend (cpu_backend.cpp) builds the class below. Each
// member too long for the class body is defined in one cpu_rbf_*.cpp file, which ends with an
// explicit instantiation definition of it for each (T, D) that make_cpu_backend builds (T double
// or float, D 2, 3 or 4); the members defined in the class body (the accessors, and the per-row
// helpers that every file's inner loops call) are instantiated where used.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <Eigen/QR>

#include "kernels/cpu/cpu_info.hpp"
#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/rbf_math.hpp"

namespace rbfpde::cpu_detail {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
// Column-major, for the factorisations (Householder QR and its Qᵀ, LM's Cholesky), which work on
// contiguous columns.
template <class T>
using ColMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using RowArray = Eigen::Array<T, 1, Eigen::Dynamic>;

// Below this many point-neuron pairs a loop runs on one thread: thread start-up and barriers
// would cost more than the work (the seed problem's 224 × 64 runs faster serially).
constexpr long kParallelWork = 200000;

// apply_qt and lower_gram split their products into blocks of this many columns, one block a
// task. A block's arithmetic does not depend on the number of threads, so neither do the results.
constexpr Eigen::Index kColumnBlock = 128;

// X ← QᵀX for the Householder factorisation qr (Q of qr.rows() rows), X's column blocks in
// parallel.
template <class QR, class M>
void apply_qt(const QR& qr, M& X) {
  const Eigen::Index blocks = (X.cols() + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(dynamic, 1) if(X.rows() * X.cols() > kParallelWork)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Eigen::Index c0 = b * kColumnBlock;
    auto block = X.middleCols(c0, std::min(kColumnBlock, X.cols() - c0));
    block.applyOnTheLeft(qr.householderQ().adjoint());
  }
}

// G = the lower triangle of BᵀB (p × p for p = B.cols(); zero above the diagonal), by blocks of
// B's columns in parallel: a rank update for each diagonal block, a product for each block below.
template <class MB, class MG>
void lower_gram(const MB& B, MG& G) {
  const Eigen::Index p = B.cols(), q = (p + kColumnBlock - 1) / kColumnBlock;
  G.setZero(p, p);
  std::vector<std::pair<Eigen::Index, Eigen::Index>> blocks;  // (row, column) block; the
  for (Eigen::Index i = 0; i < q; ++i)                         // full ones first
    for (Eigen::Index j = 0; j < i; ++j) blocks.emplace_back(i, j);
  for (Eigen::Index i = 0; i < q; ++i) blocks.emplace_back(i, i);
  const long tasks = long(blocks.size());
#pragma omp parallel for schedule(dynamic, 1) if(B.rows() * p > kParallelWork)
  for (long t = 0; t < tasks; ++t) {
    const auto [i, j] = blocks[std::size_t(t)];
    const Eigen::Index r0 = i * kColumnBlock, c0 = j * kColumnBlock;
    const Eigen::Index rn = std::min(kColumnBlock, p - r0), cn = std::min(kColumnBlock, p - c0);
    if (i == j)
      G.block(r0, r0, rn, rn).template selfadjointView<Eigen::Lower>().rankUpdate(
          B.middleCols(r0, rn).transpose());
    else
      G.block(r0, c0, rn, cn).noalias() = B.middleCols(r0, rn).transpose() * B.middleCols(c0, cn);
  }
}

// X ← X·R⁻¹ for R upper triangular, X's row blocks in parallel (each block's arithmetic is the
// same on any number of threads).
template <class MR, class M>
void solve_right_upper(const MR& R, M& X) {
  const Eigen::Index blocks = (X.rows() + 4 * kColumnBlock - 1) / (4 * kColumnBlock);
#pragma omp parallel for schedule(dynamic, 1) if(X.rows() * X.cols() > kParallelWork)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Eigen::Index r0 = b * 4 * kColumnBlock;
    auto block = X.middleRows(r0, std::min(4 * kColumnBlock, X.rows() - r0));
    R.template triangularView<Eigen::Upper>().template solveInPlace<Eigen::OnTheRight>(block);
  }
}

// C ← (I − A·G⁻¹·Aᵀ)·C twice, for G = AᵀA factored by llt: the projection of C's columns onto
// the orthogonal complement of range(A), by two passes of the normal equations (the second
// removes what the first left of range(A)), C's column blocks in parallel.
template <class MA, class LLT, class M>
void project_out_range(const MA& A, const LLT& llt, M& C) {
  const Eigen::Index blocks = (C.cols() + kColumnBlock - 1) / kColumnBlock;
#pragma omp parallel for schedule(dynamic, 1) if(C.rows() * C.cols() > kParallelWork)
  for (Eigen::Index b = 0; b < blocks; ++b) {
    const Eigen::Index c0 = b * kColumnBlock;
    auto block = C.middleCols(c0, std::min(kColumnBlock, C.cols() - c0));
    for (int pass = 0; pass < 2; ++pass) {
      M x = A.transpose() * block;
      llt.solveInPlace(x);
      block.noalias() -= A * x;
    }
  }
}

template <class T>
double sum_squares(const Vector<T>& v) {
  double s = 0;
  for (Eigen::Index i = 0; i < v.size(); ++i) s += double(v[i]) * double(v[i]);
  return s;
}

template <class T, int D>
class CpuRbfBackend final : public RbfBackend<T> {
 public:
  explicit CpuRbfBackend(const BackendOptions& options)
      : penalty_(T(options.penalty)),
        min_width_(T(options.min_width)),
        eval_ds_(options.laplacian_dims > 0 ? options.laplacian_dims : D),
        preconditioned_trials_(options.vp_preconditioned_trials && std::is_same_v<T, double>),
        factor_from_trial_(options.vp_factor_from_trial),
        comm_(options.comm ? options.comm : serial_communicator()),
        dist_(comm_->size() > 1) {
    if (eval_ds_ > D) throw std::invalid_argument("laplacian_dims exceeds the dimension");
  }

  std::string name() const override { return "cpu"; }
  std::string device_name() const override { return cpu_model_name(); }

  void set_parameters(const RbfParameters<T>& params) override;
  RbfParameters<T> parameters() const override;
  void set_batch(const CollocationBatch& batch) override;
  CollocationBatch batch() const override;
  LossParts residuals() override;

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override {
    e.assign(e_.data(), e_.data() + e_.size());
    b.assign(b_.data(), b_.data() + b_.size());
  }

  LossParts gradient(RbfParameters<T>& grad) override;
  LossParts gd_steps(int steps, T learning_rate) override;
  CgResult solve_weights_cg(int max_iterations, T tolerance) override;
  void solve_weights_direct(T ridge) override;
  void solve_weights_qr() override;
  LossParts vp_prepare() override;
  LossParts lm_prepare() override;
  LossParts lm_try(T mu) override;
  LossParts vp_try(T mu) override;

  typename RbfBackend<T>::VpTrialCounts vp_trial_counts() const override { return trial_counts_; }

  double lm_predicted_decrease() const override { return predicted_decrease_; }

  void lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const override;
  void lm_reject() override;

  void evaluate(const std::vector<double>& points, std::vector<double>& u,
                std::vector<double>& laplacian) override;

 private:
  // The neurons as the per-point passes read them: each axis's centre coordinates contiguous,
  // so that r² of one point against every neuron is one vector expression, and the
  // neuron_constants of every width (rbf_math.hpp).
  struct NeuronTable {
    Eigen::Array<T, D, Eigen::Dynamic, Eigen::RowMajor> centres;
    RowArray<T> ia2;
    std::vector<NeuronConstants<T>> k;
  };

  // One point's terms against every neuron (point_terms).
  struct PointTerms {
    RowArray<T> r2, t, phi;
  };

  int neurons() const { return int(w_.size()); }

  // Σₖ wₖ·Δφₖ(x) (`laplacian`) or Σₖ wₖ·φₖ(x), summed in neuron order; pt is scratch.
  T network_sum(const T* x, bool laplacian, const NeuronTable& nt, PointTerms& pt) const;

  NeuronTable neuron_table() const {
    const int m = neurons();
    NeuronTable nt;
    nt.centres.resize(D, m);
    nt.ia2.resize(m);
    nt.k.resize(std::size_t(m));
    for (int k = 0; k < m; ++k) {
      for (int j = 0; j < D; ++j) nt.centres(j, k) = c_[k * D + j];
      nt.k[std::size_t(k)] = neuron_constants<D>(a_[k]);
      nt.ia2[k] = nt.k[std::size_t(k)].ia2;
    }
    return nt;
  }

  // One point against every neuron: r²ₖ, tₖ = r²ₖ/aₖ² and φₖ = exp(−tₖ), the exponentials
  // vectorised (Eigen's packet exp); φₖ is exactly 0 where exp(−tₖ) is below the smallest
  // normal T.
  static void point_terms(const T* x, const NeuronTable& nt, PointTerms& pt) {
    static const T cut = -std::log(std::numeric_limits<T>::min());
    pt.r2 = (x[0] - nt.centres.row(0)).square();
    for (int j = 1; j < D; ++j) pt.r2 += (x[j] - nt.centres.row(j)).square();
    pt.t = pt.r2 * nt.ia2;
    pt.phi = (-pt.t).exp();
    for (Eigen::Index k = 0; k < pt.t.size(); ++k)
      if (pt.t[k] > cut) pt.phi[k] = T(0);
  }

  // body(row, interior, x, pt) for every row of the batch (interior rows first, x the row's
  // point), the rows split over the OpenMP threads, each thread with its own scratch pt.
  template <class Body>
  void for_each_row(const Body& body) const {
    const Eigen::Index n_int = f_.size(), n = n_int + p_.size();
#pragma omp parallel if(n * neurons() > kParallelWork)
    {
      PointTerms pt;
#pragma omp for schedule(static)
      for (Eigen::Index row = 0; row < n; ++row) {
        const bool interior = row < n_int;
        body(row, interior, interior ? &xi_[row * D] : &xb_[(row - n_int) * D], pt);
      }
    }
  }

  // δ from (JᵀJ + μ·max(d, floor)) δ = −JᵀR, d = diag JᵀJ or the given scaling.
  Vector<T> lm_step(T mu, const Vector<T>* scaling = nullptr);

  // ½‖R‖² − ½‖R + Jδ‖² = −δᵀJᵀR − ½δᵀJᵀJδ for the step δ = θ − θ0 taken (widths clamped) on the
  // parameters of JᵀJ: all of θ (LM) or the centres and widths (variable projection).
  void set_predicted_decrease(bool centres_and_widths);

  // θ = θ0 + δ, widths clamped.
  void apply_step(const Vector<T>& delta);

  // F = [M/√N; √(λ/K)·N; δ·max_k|F_k|·I] and y = [f/√N; √(λ/K)·p; 0]: the scaled features over a
  // tiny ridge, so that a rank-deficient F still has a unique, finite least-squares solution and
  // a neuron whose features vanish on the points (one that moved far away) gets a weight near
  // zero instead of a huge one.
  void scaled_system(ColMatrix<T>& F, Vector<T>& y) const;

  // Sums over the ranks, in place (nothing with one rank).
  template <class V>
  void reduce(V& v) const {
    if (dist_) comm_->allreduce_sum(v.data(), std::size_t(v.size()));
  }

  // The upper-triangular R (cols × cols) of the QR factorisation of the rows of every rank's A
  // stacked in rank order (TSQR): each rank factors its rows, the R factors are gathered and
  // factored again. R is unique up to the signs of its rows, which nothing below depends on.
  Matrix<T> tsqr_r(const Matrix<T>& A) const;

  // This rank's rows of the scaled system [F | y] (scaled_system), the ridge rows on rank 0
  // alone, with the ridge scaled by the largest column norm over every rank's rows.
  Matrix<T> local_scaled_system();

  // solve_weights_qr over the ranks: R of [F | y] by TSQR, then R₁₁ w = r₁₂.
  void solve_weights_tsqr();

  // vp_prepare over the ranks (docs/mathematics.md, "Over several ranks"): each rank factors its
  // F_i = Q_i R_i (ridge rows on rank 0) and forms D_i = Q_iᵀ[J_ca | R]; D_i's rows k_i… (k_i =
  // min(rows_i, m)) add L_iᵀL_i to the Gram matrix G of [B | z], summed over the ranks; the
  // blocks [R_i | T_i] (T_i: D_i's first k_i rows, m rows each, zero-padded) are gathered and
  // stacked, the stacked R's factored and that Qᵀ applied to the stacked T's, whose rows m…
  // complete B. JᵀJ = BᵀB is G's leading block, JᵀR = Bᵀz its last row.
  LossParts vp_prepare_tsqr();

  // The trial's weights from the normal equations of A = F·R⁻¹ (F the scaled system over its
  // ridge rows at the trial's centres and widths, R vp_prepare's factor), which are well
  // conditioned while F stays close to the features R factors: G = AᵀA = LLᵀ, z = G⁻¹Aᵀy, one
  // step of iterative refinement z += G⁻¹Aᵀ(y − Az), w = R⁻¹z. Keeps w and returns true when
  // vp_trial_weights_usable accepts the result; otherwise restores the weights and returns false.
  bool preconditioned_weights();

  // The row scales of R = [e/√N; √(λ/K)·b].
  std::pair<T, T> row_scales() const {
    return {T(1) / std::sqrt(T(std::max<Eigen::Index>(n_int_, 1))),
            std::sqrt(penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1)))};
  }

  // The QR factorisation of scaled_system's F (and its y in qr_y_) at the current centres and
  // widths: computed once per (centres, widths, batch), shared by solve_weights_qr and
  // vp_prepare (an accepted step's weight solve is the next iteration's factorisation).
  const Eigen::HouseholderQR<ColMatrix<T>>& factored_features();

  void invalidate_features() {
    features_valid_ = false;
    qr_valid_ = false;
    trial_factor_valid_ = false;
  }

  static LossParts infinite_loss() {
    LossParts bad;
    bad.loss = bad.rms_interior = bad.rms_boundary = std::numeric_limits<double>::infinity();
    return bad;
  }

  LossParts loss_parts() const;

  void clamp_widths() {
    for (Eigen::Index k = 0; k < a_.size(); ++k) {
      // NaN stays NaN so that divergence is detected rather than hidden by the clamp.
      if (a_[k] < min_width_) a_[k] = min_width_;
    }
  }

  // ∂I/∂w, ∂I/∂c, ∂I/∂a from the current e and b, one neuron per iteration so that every
  // sum over points runs in a fixed order.
  void gradient_from_residuals(Vector<T>* gw, Vector<T>& gc, Vector<T>& ga) const;

  // M (N × m) of Δφ_k(x_i) and N (K × m) of φ_k(x_j) at the current centres and widths.
  void assemble_features();

  // The coefficients of one row of the general system (interior rows first, then boundary rows).
  struct RowCoefficients {
    bool interior;
    const T* x;
    T A, C;         // interior: a, c
    const T* B;     // interior: b (null: zero)
    T alpha, beta;  // boundary
    const T* n;     // boundary: the outward normal (null when β is zero everywhere)
  };

  RowCoefficients row_coefficients(Eigen::Index row) const {
    const Eigen::Index n_int = f_.size();
    RowCoefficients rc{};
    rc.interior = row < n_int;
    if (rc.interior) {
      rc.x = &xi_[row * D];
      rc.A = op_a_.size() ? op_a_[row] : T(1);
      rc.C = op_c_.size() ? op_c_[row] : T(0);
      rc.B = op_b_.size() ? &op_b_[row * D] : nullptr;
    } else {
      const Eigen::Index j = row - n_int;
      rc.x = &xb_[j * D];
      rc.alpha = bc_alpha_.size() ? bc_alpha_[j] : T(1);
      rc.beta = bc_beta_.size() ? bc_beta_[j] : T(0);
      rc.n = bc_beta_.size() ? &nrm_[j * D] : nullptr;
    }
    return rc;
  }

  // The row's feature of neuron k: a·Δₛφ_k + b·∇φ_k + c·φ_k or α·φ_k + β·∂φ_k/∂n.
  T general_value(const RowCoefficients& rc, int k) const {
    T diff[D];
    const T r2 = squared_distance<D>(rc.x, &c_[k * D], diff);
    return rc.interior ? operator_row_value<D>(diff, r2, a_[k], ds_, rc.A, rc.B, rc.C)
                       : boundary_row_value<D>(diff, r2, a_[k], rc.n, rc.alpha, rc.beta);
  }

  // The feature and its derivatives with respect to neuron k's centre and width.
  RowTerms<D, T> general_terms(const RowCoefficients& rc, int k) const {
    T diff[D];
    const T r2 = squared_distance<D>(rc.x, &c_[k * D], diff);
    return rc.interior ? operator_row_terms<D>(diff, r2, a_[k], ds_, rc.A, rc.B, rc.C)
                       : boundary_row_terms<D>(diff, r2, a_[k], rc.n, rc.alpha, rc.beta);
  }

  LossParts general_residuals();

  void residuals_from_features() {
    e_ = M_ * w_ - f_;
    b_ = N_ * w_ - p_;
  }

  T penalty_, min_width_;
  Vector<T> w_, c_, a_;
  // The union's interior and boundary counts N and K (the local ones with one rank).
  Eigen::Index n_int_ = 0, n_bnd_ = 0;
  Vector<T> xi_, xb_, f_, p_, e_, b_;
  std::vector<double> normals_;
  // The general rows' coefficients (empty: their defaults), CollocationBatch.
  bool general_ = false;
  int ds_ = D;         // the batch's Laplacian coordinates
  int space_dim_ = 0;  // the batch's space_dim, as given
  int eval_ds_ = D;    // evaluate()'s Laplacian coordinates (BackendOptions::laplacian_dims)
  Vector<T> op_a_, op_b_, op_c_, bc_alpha_, bc_beta_, nrm_;
  Matrix<T> M_, N_;
  bool features_valid_ = false;
  Matrix<T> J_, JtJ_;
  Vector<T> R_, JtR_, theta0_w_, theta0_c_, theta0_a_;
  double predicted_decrease_ = 0;  // the last lm_try's or vp_try's (set_predicted_decrease)
  Vector<T> damping_diag_;  // vp_prepare: Marquardt's scaling of the centres and widths
  // lm_step's damped system and its factorisation, kept to reuse their storage.
  ColMatrix<T> lm_a_;
  Eigen::LLT<ColMatrix<T>, Eigen::Lower> lm_llt_;
  ColMatrix<T> vp_c_;  // vp_prepare's Qᵀ[J_ca | R]
  // vp_prepare's R (m × m, upper) and loss for the preconditioned trials (empty: off), and the
  // trials' Gram matrix.
  const bool preconditioned_trials_;
  ColMatrix<T> vp_r_, vp_gram_;
  // The last preconditioned trial's factor of G = AᵀA (A = F·R⁻¹ in qr_f_) and refinement
  // correction; trial_factor_valid_ while they belong to the current parameters and batch and
  // the next vp_prepare may take them (BackendOptions::vp_factor_from_trial).
  const bool factor_from_trial_;
  Eigen::LLT<ColMatrix<T>, Eigen::Lower> vp_llt_;
  double vp_correction_ = 0;
  bool trial_factor_valid_ = false;
  double vp_loss_ = 0;
  typename RbfBackend<T>::VpTrialCounts trial_counts_;
  ColMatrix<T> qr_f_;  // factored_features: F
  Eigen::HouseholderQR<ColMatrix<T>> qr_;
  Vector<T> qr_y_;
  bool qr_valid_ = false;
  std::shared_ptr<Communicator> comm_;
  bool dist_ = false;  // more than one rank
};

}  // namespace rbfpde::cpu_detail
