// CPU reference backend: Eigen for the dense algebra, OpenMP over points (residuals, features,
// Jacobian rows) or over neurons (gradients), never over a reduction whose order could change
// with the thread count — same seed, same numbers.
//
// A batch that is not Poisson/Dirichlet (CollocationBatch::poisson_dirichlet() false) takes the
// general rows of rbf_math.hpp everywhere — interior a·Δₛφ + b·∇φ + c·φ, boundary
// α·φ + β·∂φ/∂n, and their centre and width derivatives; the Poisson path is kept as it was,
// for its speed and its numbers.
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

namespace rbfpde {
namespace {

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

  void set_parameters(const RbfParameters<T>& params) override {
    if (params.dim != D) throw std::invalid_argument("parameters of the wrong dimension");
    const int m = params.neurons();
    if (int(params.centres.size()) != m * D || int(params.widths.size()) != m)
      throw std::invalid_argument("inconsistent parameter sizes");
    w_ = Eigen::Map<const Vector<T>>(params.weights.data(), m);
    c_ = Eigen::Map<const Vector<T>>(params.centres.data(), m * D);
    a_ = Eigen::Map<const Vector<T>>(params.widths.data(), m);
    invalidate_features();
  }

  RbfParameters<T> parameters() const override {
    RbfParameters<T> p;
    p.dim = D;
    p.weights.assign(w_.data(), w_.data() + w_.size());
    p.centres.assign(c_.data(), c_.data() + c_.size());
    p.widths.assign(a_.data(), a_.data() + a_.size());
    return p;
  }

  void set_batch(const CollocationBatch& batch) override {
    if (batch.dim != D) throw std::invalid_argument("batch of the wrong dimension");
    xi_ = Eigen::Map<const Vector<double>>(batch.interior.data(), batch.interior.size()).template cast<T>();
    xb_ = Eigen::Map<const Vector<double>>(batch.boundary.data(), batch.boundary.size()).template cast<T>();
    f_ = Eigen::Map<const Vector<double>>(batch.f.data(), batch.f.size()).template cast<T>();
    p_ = Eigen::Map<const Vector<double>>(batch.p.data(), batch.p.size()).template cast<T>();
    normals_ = batch.normals;
    general_ = !batch.poisson_dirichlet();
    ds_ = batch.laplacian_dims();
    space_dim_ = batch.space_dim;
    const auto to_t = [](const std::vector<double>& v) -> Vector<T> {
      return Eigen::Map<const Vector<double>>(v.data(), Eigen::Index(v.size())).template cast<T>();
    };
    op_a_ = to_t(batch.a);
    op_b_ = to_t(batch.b);
    op_c_ = to_t(batch.c);
    bc_alpha_ = to_t(batch.alpha);
    bc_beta_ = to_t(batch.beta);
    nrm_ = to_t(batch.normals);
    if ((op_a_.size() && op_a_.size() != f_.size()) ||
        (op_b_.size() && op_b_.size() != xi_.size()) ||
        (op_c_.size() && op_c_.size() != f_.size()) ||
        (bc_alpha_.size() && bc_alpha_.size() != p_.size()) ||
        (bc_beta_.size() && bc_beta_.size() != p_.size()) ||
        (bc_beta_.size() && nrm_.size() != xb_.size()))
      throw std::invalid_argument("batch coefficients of the wrong size");
    e_.resize(f_.size());
    b_.resize(p_.size());
    n_int_ = f_.size();
    n_bnd_ = p_.size();
    if (dist_) std::tie(n_int_, n_bnd_) = union_counts(*comm_, n_int_, n_bnd_);
    invalidate_features();
  }

  CollocationBatch batch() const override {
    CollocationBatch b;
    b.dim = D;
    b.interior.assign(xi_.data(), xi_.data() + xi_.size());
    b.boundary.assign(xb_.data(), xb_.data() + xb_.size());
    b.f.assign(f_.data(), f_.data() + f_.size());
    b.p.assign(p_.data(), p_.data() + p_.size());
    b.normals = normals_;
    b.space_dim = space_dim_;
    const auto to_d = [](const Vector<T>& v) {
      std::vector<double> out(std::size_t(v.size()));
      for (Eigen::Index i = 0; i < v.size(); ++i) out[std::size_t(i)] = double(v[i]);
      return out;
    };
    b.a = to_d(op_a_);
    b.b = to_d(op_b_);
    b.c = to_d(op_c_);
    b.alpha = to_d(bc_alpha_);
    b.beta = to_d(bc_beta_);
    return b;
  }

  LossParts residuals() override {
    if (general_) return general_residuals();
    const Eigen::Index n_int = f_.size();
    const NeuronTable nt = neuron_table();
    for_each_row([&](Eigen::Index row, bool interior, const T* x, PointTerms& pt) {
      if (interior)
        e_[row] = network_sum(x, true, nt, pt) - f_[row];
      else
        b_[row - n_int] = network_sum(x, false, nt, pt) - p_[row - n_int];
    });
    return loss_parts();
  }

  void residual_vectors(std::vector<T>& e, std::vector<T>& b) const override {
    e.assign(e_.data(), e_.data() + e_.size());
    b.assign(b_.data(), b_.data() + b_.size());
  }

  LossParts gradient(RbfParameters<T>& grad) override {
    const LossParts parts = residuals();
    Vector<T> gw, gc, ga;
    gradient_from_residuals(&gw, gc, ga);
    grad.dim = D;
    grad.weights.assign(gw.data(), gw.data() + gw.size());
    grad.centres.assign(gc.data(), gc.data() + gc.size());
    grad.widths.assign(ga.data(), ga.data() + ga.size());
    return parts;
  }

  LossParts gd_steps(int steps, T learning_rate) override {
    LossParts parts = residuals();
    Vector<T> gc, ga;
    for (int s = 0; s < steps; ++s) {
      if (s > 0) parts = residuals();
      gradient_from_residuals(nullptr, gc, ga);
      for (Eigen::Index k = 0; k < a_.size(); ++k) {
        T dc[D];
        T da;
        limited_gd_step<D>(&gc[k * D], ga[k], a_[k], learning_rate, dc, da);
        for (int j = 0; j < D; ++j) c_[k * D + j] -= dc[j];
        a_[k] -= da;
      }
      clamp_widths();
    }
    invalidate_features();
    return parts;
  }

  CgResult solve_weights_cg(int max_iterations, T tolerance) override {
    assemble_features();
    const T inv_n = T(1) / T(std::max<Eigen::Index>(n_int_, 1));
    const T lam_k = penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1));
    auto apply = [&](const Vector<T>& v) -> Vector<T> {
      Vector<T> out = (M_.transpose() * (M_ * v)) * inv_n;
      out.noalias() += (N_.transpose() * (N_ * v)) * lam_k;
      reduce(out);
      return out;
    };
    Vector<T> s = M_.transpose() * f_ * inv_n + N_.transpose() * p_ * lam_k;
    reduce(s);
    const double s_norm = std::sqrt(sum_squares(s));
    Vector<T> r = s - apply(w_);
    Vector<T> d = r;
    double rr = sum_squares(r);
    CgResult result;
    const double stop = double(tolerance) * (s_norm > 0 ? s_norm : 1.0);
    int it = 0;
    for (; it < max_iterations && std::sqrt(rr) > stop; ++it) {
      const Vector<T> ad = apply(d);
      const double dad = double(d.dot(ad));
      if (!(dad > 0)) break;  // breakdown: A is only semi-definite along d
      const T alpha = T(rr / dad);
      w_ += alpha * d;
      r -= alpha * ad;
      const double rr_new = sum_squares(r);
      d = r + T(rr_new / rr) * d;
      rr = rr_new;
    }
    result.iterations = it;
    result.relative_residual = std::sqrt(rr) / (s_norm > 0 ? s_norm : 1.0);
    residuals_from_features();
    return result;
  }

  void solve_weights_direct(T ridge) override {
    assemble_features();
    const T inv_n = T(1) / T(std::max<Eigen::Index>(n_int_, 1));
    const T lam_k = penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1));
    const int m = neurons();
    Matrix<T> A = Matrix<T>::Zero(m, m);
    A.template selfadjointView<Eigen::Lower>().rankUpdate(M_.transpose(), inv_n);
    A.template selfadjointView<Eigen::Lower>().rankUpdate(N_.transpose(), lam_k);
    Vector<T> s = M_.transpose() * f_ * inv_n + N_.transpose() * p_ * lam_k;
    reduce(A);
    reduce(s);
    A.diagonal().array() += ridge;
    Eigen::LDLT<Matrix<T>, Eigen::Lower> ldlt(A);
    Vector<T> w = ldlt.solve(s);
    if (w.allFinite()) w_ = w;
    residuals_from_features();
  }

  void solve_weights_qr() override {
    if (dist_) {
      solve_weights_tsqr();
      return;
    }
    Vector<T> w = factored_features().solve(qr_y_);
    if (w.allFinite()) w_ = w;
    residuals_from_features();
  }

  LossParts vp_prepare() override {
    if (dist_) return vp_prepare_tsqr();
    const LossParts parts = residuals();
    const int m = neurons();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size(), n = n_int + n_bnd;
    const Eigen::Index cols = Eigen::Index(m) * (D + 1);
    // C = [J_ca | R] over the ridge rows (zero there): the Jacobian of the scaled residuals with
    // respect to centres and widths at fixed weights, and the residuals themselves.
    ColMatrix<T>& C = vp_c_;
    C.setZero(n + m, cols + 1);
    const auto [si, sb] = row_scales();
    const NeuronTable nt = neuron_table();
    for_each_row([&](Eigen::Index row, bool interior, const T* x, PointTerms& pt) {
      const T scale = interior ? si : sb;
      C(row, cols) = scale * (interior ? e_[row] : b_[row - n_int]);
      if (general_) {
        const RowCoefficients rc = row_coefficients(row);
        for (int k = 0; k < m; ++k) {
          const RowTerms<D, T> t = general_terms(rc, k);
          for (int j = 0; j < D; ++j) C(row, k * D + j) = scale * w_[k] * t.dc[j];
          C(row, Eigen::Index(m) * D + k) = scale * w_[k] * t.da;
        }
        return;
      }
      point_terms(x, nt, pt);
      for (int k = 0; k < m; ++k) {
        const NeuronTerms<T> t = gaussian_terms_given_phi<D>(pt.r2[k], pt.t[k], pt.phi[k], nt.k[k]);
        const T dc = interior ? t.lap_dc : t.phi_dc;
        const T da = interior ? t.lap_da : t.phi_da;
        for (int j = 0; j < D; ++j) C(row, k * D + j) = scale * w_[k] * dc * (x[j] - c_[k * D + j]);
        C(row, Eigen::Index(m) * D + k) = scale * w_[k] * da;
      }
    });
    // Qᵀ·C with F = QR: rows m… of QᵀJ_ca are the projected Jacobian P⊥J_ca in the basis of the
    // orthogonal complement of F's columns, and rows m… of QᵀR the projected residuals.
    // Marquardt's scaling uses the unprojected columns: a direction whose Jacobian column lies
    // almost in range(F) is damped by its full size, not by its tiny projected one.
    damping_diag_ = C.leftCols(cols).colwise().squaredNorm().transpose();
    // B: the rows of C from `first` on, once C is projected.
    Eigen::Index first = m;
    if (trial_factor_valid_ && m > 0 && n > 0) {
      // The accepted trial's factor (docs/mathematics.md, "The factor from the trial"): A = F·R⁻¹
      // in qr_f_, G = AᵀA = LLᵀ in vp_llt_. C is projected onto the complement of range(F) in
      // all n + m rows (the same BᵀB and Bᵀz as the QR basis's rows m…), and F's factor is LᵀR.
      project_out_range(qr_f_, vp_llt_, C);
      first = 0;
      vp_r_ = ColMatrix<T>(vp_llt_.matrixU() * vp_r_);
      ++trial_counts_.factored_from_trial;
    } else {
      apply_qt(factored_features(), C);
      if (preconditioned_trials_ && m > 0 && n > 0)
        vp_r_ = factored_features().matrixQR().topRows(m).template triangularView<Eigen::Upper>();
      else
        vp_r_.resize(0, 0);
    }
    const auto rows = C.bottomRows(C.rows() - first);
    lower_gram(rows.leftCols(cols), JtJ_);
    JtR_ = rows.leftCols(cols).transpose() * rows.col(cols);
    trial_factor_valid_ = false;
    theta0_w_ = w_;
    theta0_c_ = c_;
    theta0_a_ = a_;
    vp_loss_ = parts.loss;
    return parts;
  }

  LossParts lm_prepare() override {
    const LossParts parts = residuals();
    const int m = neurons();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
    const Eigen::Index cols = Eigen::Index(m) * (D + 2);
    J_.resize(n_int + n_bnd, cols);
    R_.resize(n_int + n_bnd);
    const auto [si, sb] = row_scales();
    const NeuronTable nt = neuron_table();
    for_each_row([&](Eigen::Index row, bool interior, const T* x, PointTerms& pt) {
      const T scale = interior ? si : sb;
      R_[row] = scale * (interior ? e_[row] : b_[row - n_int]);
      T* jr = &J_(row, 0);
      if (general_) {
        const RowCoefficients rc = row_coefficients(row);
        for (int k = 0; k < m; ++k) {
          const RowTerms<D, T> t = general_terms(rc, k);
          jr[k] = scale * t.value;
          for (int j = 0; j < D; ++j) jr[m + k * D + j] = scale * w_[k] * t.dc[j];
          jr[m + m * D + k] = scale * w_[k] * t.da;
        }
        return;
      }
      point_terms(x, nt, pt);
      for (int k = 0; k < m; ++k) {
        const NeuronTerms<T> t = gaussian_terms_given_phi<D>(pt.r2[k], pt.t[k], pt.phi[k], nt.k[k]);
        const T val = interior ? t.lap : t.phi;
        const T dc = interior ? t.lap_dc : t.phi_dc;
        const T da = interior ? t.lap_da : t.phi_da;
        jr[k] = scale * val;
        for (int j = 0; j < D; ++j) jr[m + k * D + j] = scale * w_[k] * dc * (x[j] - c_[k * D + j]);
        jr[m + m * D + k] = scale * w_[k] * da;
      }
    });
    lower_gram(J_, JtJ_);
    JtR_ = J_.transpose() * R_;
    reduce(JtJ_);
    reduce(JtR_);
    theta0_w_ = w_;
    theta0_c_ = c_;
    theta0_a_ = a_;
    return parts;
  }

  LossParts lm_try(T mu) override {
    const Vector<T> delta = lm_step(mu);
    apply_step(delta);
    if (!delta.allFinite()) return infinite_loss();
    set_predicted_decrease(false);
    return residuals();
  }

  LossParts vp_try(T mu) override {
    // JᵀJ and JᵀR of vp_prepare hold the projected system of centres and widths alone.
    const Vector<T> delta = lm_step(mu, &damping_diag_);
    const int m = neurons();
    w_ = theta0_w_;
    c_ = theta0_c_ + delta.segment(0, Eigen::Index(m) * D);
    a_ = theta0_a_ + delta.segment(Eigen::Index(m) * D, m);
    clamp_widths();
    invalidate_features();
    if (!delta.allFinite()) return infinite_loss();
    set_predicted_decrease(true);
    if (preconditioned_weights()) {
      ++trial_counts_.preconditioned;
      trial_factor_valid_ = factor_from_trial_ && vp_trial_factor_usable(vp_correction_);
    } else {
      ++trial_counts_.qr;
      solve_weights_qr();
    }
    return loss_parts();
  }

  typename RbfBackend<T>::VpTrialCounts vp_trial_counts() const override { return trial_counts_; }

  double lm_predicted_decrease() const override { return predicted_decrease_; }

  void lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const override {
    const Eigen::Index p = JtJ_.rows();
    jtj.assign(std::size_t(p * p), T(0));
    for (Eigen::Index j = 0; j < p; ++j)
      for (Eigen::Index i = j; i < p; ++i) jtj[std::size_t(i + j * p)] = JtJ_(i, j);
    jtr.assign(JtR_.data(), JtR_.data() + JtR_.size());
  }

  void lm_reject() override {
    w_ = theta0_w_;
    c_ = theta0_c_;
    a_ = theta0_a_;
    invalidate_features();
    residuals();
  }

  void evaluate(const std::vector<double>& points, std::vector<double>& u,
                std::vector<double>& laplacian) override {
    const Eigen::Index n = Eigen::Index(points.size() / D);
    const int m = neurons();
    u.resize(n);
    laplacian.resize(n);
    const NeuronTable nt = neuron_table();
#pragma omp parallel if (n * m > kParallelWork)
    {
      PointTerms pt;
#pragma omp for schedule(static)
      for (Eigen::Index i = 0; i < n; ++i) {
        T x[D];
        for (int j = 0; j < D; ++j) x[j] = T(points[i * D + j]);
        T su = T(0), sl = T(0);
        if (eval_ds_ < D) {
          // Δₛ over the first eval_ds_ coordinates: the general interior row with a = 1, b = c = 0.
          for (int k = 0; k < m; ++k) {
            T diff[D];
            const T r2 = squared_distance<D>(x, &c_[k * D], diff);
            su += w_[k] * rbf_exp(-r2 / (a_[k] * a_[k]));
            sl += w_[k] * operator_row_value<D>(diff, r2, a_[k], eval_ds_, T(1),
                                                static_cast<const T*>(nullptr), T(0));
          }
          u[i] = double(su);
          laplacian[i] = double(sl);
          continue;
        }
        point_terms(x, nt, pt);
        for (int k = 0; k < m; ++k) {
          su += w_[k] * pt.phi[k];
          sl += w_[k] * gaussian_laplacian_given_phi<D>(pt.t[k], nt.ia2[k], pt.phi[k]);
        }
        u[i] = double(su);
        laplacian[i] = double(sl);
      }
    }
  }

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
  T network_sum(const T* x, bool laplacian, const NeuronTable& nt, PointTerms& pt) const {
    point_terms(x, nt, pt);
    T sum = T(0);
    for (int k = 0; k < neurons(); ++k)
      sum += w_[k] * (laplacian ? gaussian_laplacian_given_phi<D>(pt.t[k], nt.ia2[k], pt.phi[k])
                                : pt.phi[k]);
    return sum;
  }

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
  Vector<T> lm_step(T mu, const Vector<T>* scaling = nullptr) {
    const Eigen::Index cols = JtJ_.rows();
    ColMatrix<T>& A = lm_a_;
    A = JtJ_;
    const Vector<T> d = scaling ? *scaling : Vector<T>(JtJ_.diagonal());
    // Marquardt's scaling, floored so that a column that vanished (a neuron far from every
    // point) still gets damped.
    const T floor = std::max(d.maxCoeff() * T(1e-12), std::numeric_limits<T>::min());
    for (Eigen::Index i = 0; i < cols; ++i) A(i, i) += mu * std::max(d[i], floor);
    lm_llt_.compute(A);
    if (lm_llt_.info() == Eigen::Success) return -lm_llt_.solve(JtR_);
    return -A.template selfadjointView<Eigen::Lower>().ldlt().solve(JtR_);
  }

  // ½‖R‖² − ½‖R + Jδ‖² = −δᵀJᵀR − ½δᵀJᵀJδ for the step δ = θ − θ0 taken (widths clamped) on the
  // parameters of JᵀJ: all of θ (LM) or the centres and widths (variable projection).
  void set_predicted_decrease(bool centres_and_widths) {
    const Eigen::Index m = neurons(), first = centres_and_widths ? 0 : m;
    Vector<T> step(JtR_.size());
    if (!centres_and_widths) step.head(m) = w_ - theta0_w_;
    step.segment(first, m * D) = c_ - theta0_c_;
    step.segment(first + m * D, m) = a_ - theta0_a_;
    const Vector<T> h = JtJ_.template selfadjointView<Eigen::Lower>() * step;
    predicted_decrease_ = -double(step.dot(JtR_)) - 0.5 * double(step.dot(h));
  }

  // θ = θ0 + δ, widths clamped.
  void apply_step(const Vector<T>& delta) {
    const int m = neurons();
    w_ = theta0_w_ + delta.segment(0, m);
    c_ = theta0_c_ + delta.segment(m, Eigen::Index(m) * D);
    a_ = theta0_a_ + delta.segment(Eigen::Index(m) * (D + 1), m);
    clamp_widths();
    invalidate_features();
  }

  // F = [M/√N; √(λ/K)·N; δ·max_k|F_k|·I] and y = [f/√N; √(λ/K)·p; 0]: the scaled features over a
  // tiny ridge, so that a rank-deficient F still has a unique, finite least-squares solution and
  // a neuron whose features vanish on the points (one that moved far away) gets a weight near
  // zero instead of a huge one.
  void scaled_system(ColMatrix<T>& F, Vector<T>& y) const {
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
    const int m = neurons();
    const auto [si, sb] = row_scales();
    F.resize(n_int + n_bnd + m, m);
    y = Vector<T>::Zero(n_int + n_bnd + m);
    F.topRows(n_int) = M_ * si;
    F.middleRows(n_int, n_bnd) = N_ * sb;
    F.bottomRows(m).setZero();
    T max_norm = T(0);
    for (int k = 0; k < m; ++k) max_norm = std::max(max_norm, F.col(k).head(n_int + n_bnd).norm());
    for (int k = 0; k < m; ++k) F(n_int + n_bnd + k, k) = vp_qr_ridge<T>() * max_norm;
    y.head(n_int) = f_ * si;
    y.segment(n_int, n_bnd) = p_ * sb;
  }

  // Sums over the ranks, in place (nothing with one rank).
  template <class V>
  void reduce(V& v) const {
    if (dist_) comm_->allreduce_sum(v.data(), std::size_t(v.size()));
  }

  // The upper-triangular R (cols × cols) of the QR factorisation of the rows of every rank's A
  // stacked in rank order (TSQR): each rank factors its rows, the R factors are gathered and
  // factored again. R is unique up to the signs of its rows, which nothing below depends on.
  Matrix<T> tsqr_r(const Matrix<T>& A) const {
    const Eigen::Index cols = A.cols();
    const auto local_r = [cols](const Matrix<T>& X) {
      Matrix<T> R = Matrix<T>::Zero(cols, cols);
      const Eigen::Index k = std::min(X.rows(), cols);
      if (k == 0) return R;
      Eigen::HouseholderQR<Matrix<T>> qr(X);
      R.topRows(k) = qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
      return R;
    };
    const Matrix<T> R = local_r(A);
    Matrix<T> stacked(cols * comm_->size(), cols);
    comm_->allgather(R.data(), std::size_t(cols * cols), stacked.data());
    return local_r(stacked);
  }

  // This rank's rows of the scaled system [F | y] (scaled_system), the ridge rows on rank 0
  // alone, with the ridge scaled by the largest column norm over every rank's rows.
  Matrix<T> local_scaled_system() {
    assemble_features();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
    const int m = neurons();
    const auto [si, sb] = row_scales();
    const Eigen::Index ridge_rows = comm_->rank() == 0 ? m : 0;
    Matrix<T> A = Matrix<T>::Zero(n_int + n_bnd + ridge_rows, m + 1);
    A.topLeftCorner(n_int, m) = M_ * si;
    A.block(n_int, 0, n_bnd, m) = N_ * sb;
    A.col(m).head(n_int) = f_ * si;
    A.col(m).segment(n_int, n_bnd) = p_ * sb;
    Vector<T> norms2 = A.topLeftCorner(n_int + n_bnd, m).colwise().squaredNorm().transpose();
    reduce(norms2);
    const T max_norm = m > 0 ? std::sqrt(norms2.maxCoeff()) : T(0);
    for (Eigen::Index k = 0; k < ridge_rows; ++k) A(n_int + n_bnd + k, k) = vp_qr_ridge<T>() * max_norm;
    return A;
  }

  // solve_weights_qr over the ranks: R of [F | y] by TSQR, then R₁₁ w = r₁₂.
  void solve_weights_tsqr() {
    const int m = neurons();
    const Matrix<T> R = tsqr_r(local_scaled_system());
    Vector<T> w = R.topLeftCorner(m, m).template triangularView<Eigen::Upper>().solve(
        Vector<T>(R.col(m).head(m)));
    if (w.allFinite()) w_ = w;
    residuals_from_features();
  }

  // vp_prepare over the ranks (docs/mathematics.md, "Over several ranks"): each rank factors its
  // F_i = Q_i R_i (ridge rows on rank 0) and forms D_i = Q_iᵀ[J_ca | R]; D_i's rows k_i… (k_i =
  // min(rows_i, m)) add L_iᵀL_i to the Gram matrix G of [B | z], summed over the ranks; the
  // blocks [R_i | T_i] (T_i: D_i's first k_i rows, m rows each, zero-padded) are gathered and
  // stacked, the stacked R's factored and that Qᵀ applied to the stacked T's, whose rows m…
  // complete B. JᵀJ = BᵀB is G's leading block, JᵀR = Bᵀz its last row.
  LossParts vp_prepare_tsqr() {
    const LossParts parts = residuals();
    const int m = neurons();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size(), n = n_int + n_bnd;
    const Eigen::Index cols = Eigen::Index(m) * (D + 1);
    Matrix<T> F = local_scaled_system();
    Matrix<T> A = Matrix<T>::Zero(F.rows(), m + cols + 1);
    A.leftCols(m) = F.leftCols(m);
    const auto [si, sb] = row_scales();
#pragma omp parallel for schedule(static) if(n * m > kParallelWork)
    for (Eigen::Index row = 0; row < n; ++row) {
      const bool interior = row < n_int;
      const T scale = interior ? si : sb;
      A(row, m + cols) = scale * (interior ? e_[row] : b_[row - n_int]);
      const RowCoefficients rc = row_coefficients(row);
      for (int k = 0; k < m; ++k) {
        RowTerms<D, T> t;
        if (general_) {
          t = general_terms(rc, k);
        } else {
          T diff[D];
          const T r2 = squared_distance<D>(rc.x, &c_[k * D], diff);
          const NeuronTerms<T> g = gaussian_terms<D>(r2, a_[k]);
          const T dc = interior ? g.lap_dc : g.phi_dc;
          for (int j = 0; j < D; ++j) t.dc[j] = dc * diff[j];
          t.da = interior ? g.lap_da : g.phi_da;
        }
        for (int j = 0; j < D; ++j) A(row, m + k * D + j) = scale * w_[k] * t.dc[j];
        A(row, m + Eigen::Index(m) * D + k) = scale * w_[k] * t.da;
      }
    }
    damping_diag_ = A.block(0, m, n, cols).colwise().squaredNorm().transpose();
    reduce(damping_diag_);
    const Eigen::Index rows = A.rows(), k = std::min<Eigen::Index>(rows, m), g = cols + 1;
    const Eigen::Index ranks = comm_->size(), stack_rows = Eigen::Index(m) * ranks;
    // The lower triangle of G, zero above it on every rank: summed whole.
    Matrix<T> G = Matrix<T>::Zero(g, g);
    Matrix<T> top = Matrix<T>::Zero(m, m + g);
    if (rows > 0 && m > 0) {
      const Eigen::HouseholderQR<Matrix<T>> qr(A.leftCols(m));
      Matrix<T> D_i = A.rightCols(g);
      D_i.applyOnTheLeft(qr.householderQ().adjoint());
      top.topLeftCorner(k, m) = qr.matrixQR().topRows(k).template triangularView<Eigen::Upper>();
      top.block(0, m, k, g) = D_i.topRows(k);
      if (rows > k)
        G.template selfadjointView<Eigen::Lower>().rankUpdate(D_i.bottomRows(rows - k).transpose());
    }
    reduce(G);
    // Row-major: the ranks' blocks gathered one after another are their vertical stack.
    Matrix<T> stack(stack_rows, m + g);
    comm_->allgather(top.data(), std::size_t(top.size()), stack.data());
    if (m > 0) {
      const Eigen::HouseholderQR<Matrix<T>> sqr(stack.leftCols(m));
      Matrix<T> U = stack.rightCols(g);
      U.applyOnTheLeft(sqr.householderQ().adjoint());
      if (stack_rows > m)
        G.template selfadjointView<Eigen::Lower>().rankUpdate(
            U.bottomRows(stack_rows - m).transpose());
    }
    JtJ_ = G.topLeftCorner(cols, cols).template triangularView<Eigen::Lower>();
    JtR_ = G.row(cols).head(cols).transpose();
    theta0_w_ = w_;
    theta0_c_ = c_;
    theta0_a_ = a_;
    return parts;
  }

  // The trial's weights from the normal equations of A = F·R⁻¹ (F the scaled system over its
  // ridge rows at the trial's centres and widths, R vp_prepare's factor), which are well
  // conditioned while F stays close to the features R factors: G = AᵀA = LLᵀ, z = G⁻¹Aᵀy, one
  // step of iterative refinement z += G⁻¹Aᵀ(y − Az), w = R⁻¹z. Keeps w and returns true when
  // vp_trial_weights_usable accepts the result; otherwise restores the weights and returns false.
  bool preconditioned_weights() {
    if (vp_r_.size() == 0 || dist_) return false;
    assemble_features();
    qr_valid_ = false;
    scaled_system(qr_f_, qr_y_);  // A in place of F; factored_features() rebuilds F if needed
    solve_right_upper(vp_r_, qr_f_);
    const ColMatrix<T>& A = qr_f_;
    lower_gram(A, vp_gram_);
    vp_llt_.compute(vp_gram_);
    if (vp_llt_.info() != Eigen::Success) return false;
    Vector<T> z = vp_llt_.solve(A.transpose() * qr_y_);
    const Vector<T> dz = vp_llt_.solve(A.transpose() * (qr_y_ - A * z));
    z += dz;
    const double correction = std::sqrt(sum_squares(dz) / sum_squares(z));
    vp_correction_ = correction;
    const Vector<T> w_before = w_;
    w_ = vp_r_.template triangularView<Eigen::Upper>().solve(z);
    residuals_from_features();
    if (vp_trial_weights_usable(true, correction, loss_parts().loss, vp_loss_)) return true;
    w_ = w_before;
    return false;
  }

  // The row scales of R = [e/√N; √(λ/K)·b].
  std::pair<T, T> row_scales() const {
    return {T(1) / std::sqrt(T(std::max<Eigen::Index>(n_int_, 1))),
            std::sqrt(penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1)))};
  }

  // The QR factorisation of scaled_system's F (and its y in qr_y_) at the current centres and
  // widths: computed once per (centres, widths, batch), shared by solve_weights_qr and
  // vp_prepare (an accepted step's weight solve is the next iteration's factorisation).
  const Eigen::HouseholderQR<ColMatrix<T>>& factored_features() {
    assemble_features();
    if (!qr_valid_) {
      scaled_system(qr_f_, qr_y_);
      qr_.compute(qr_f_);
      qr_valid_ = true;
    }
    return qr_;
  }

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

  LossParts loss_parts() const {
    const double n = double(std::max<Eigen::Index>(n_int_, 1));
    const double k = double(std::max<Eigen::Index>(n_bnd_, 1));
    double sums[2] = {sum_squares(e_), sum_squares(b_)};
    if (dist_) comm_->allreduce_sum(sums, 2);
    const double se = sums[0], sb = sums[1];
    LossParts parts;
    parts.loss = 0.5 * se / n + 0.5 * double(penalty_) * sb / k;
    parts.rms_interior = std::sqrt(se / n);
    parts.rms_boundary = std::sqrt(sb / k);
    return parts;
  }

  void clamp_widths() {
    for (Eigen::Index k = 0; k < a_.size(); ++k) {
      // NaN stays NaN so that divergence is detected rather than hidden by the clamp.
      if (a_[k] < min_width_) a_[k] = min_width_;
    }
  }

  // ∂I/∂w, ∂I/∂c, ∂I/∂a from the current e and b, one neuron per iteration so that every
  // sum over points runs in a fixed order.
  void gradient_from_residuals(Vector<T>* gw, Vector<T>& gc, Vector<T>& ga) const {
    const int m = neurons();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
    const T inv_n = T(1) / T(std::max<Eigen::Index>(n_int_, 1));
    const T lam_k = penalty_ / T(std::max<Eigen::Index>(n_bnd_, 1));
    if (gw) gw->resize(m);
    gc.resize(Eigen::Index(m) * D);
    ga.resize(m);
#pragma omp parallel for schedule(dynamic, 4) if((n_int + n_bnd) * m > kParallelWork)
    for (int k = 0; k < m; ++k) {
      const T* c = &c_[k * D];
      T sw_i = T(0), sa_i = T(0), sc_i[D] = {}, sw_b = T(0), sa_b = T(0), sc_b[D] = {};
      if (general_) {
        for (Eigen::Index row = 0; row < n_int + n_bnd; ++row) {
          const RowTerms<D, T> t = general_terms(row_coefficients(row), k);
          const bool interior = row < n_int;
          const T r = interior ? e_[row] : b_[row - n_int];
          T& sw = interior ? sw_i : sw_b;
          T& sa = interior ? sa_i : sa_b;
          T* sc = interior ? sc_i : sc_b;
          sw += r * t.value;
          sa += r * t.da;
          for (int j = 0; j < D; ++j) sc[j] += r * t.dc[j];
        }
        const T w = w_[k];
        if (gw) (*gw)[k] = sw_i * inv_n + sw_b * lam_k;
        ga[k] = w * (sa_i * inv_n + sa_b * lam_k);
        for (int j = 0; j < D; ++j) gc[k * D + j] = w * (sc_i[j] * inv_n + sc_b[j] * lam_k);
        continue;
      }
      for (Eigen::Index i = 0; i < n_int; ++i) {
        T diff[D];
        const T r2 = squared_distance<D>(&xi_[i * D], c, diff);
        const NeuronTerms<T> t = gaussian_terms<D>(r2, a_[k]);
        const T e = e_[i];
        sw_i += e * t.lap;
        sa_i += e * t.lap_da;
        for (int j = 0; j < D; ++j) sc_i[j] += e * t.lap_dc * diff[j];
      }
      for (Eigen::Index i = 0; i < n_bnd; ++i) {
        T diff[D];
        const T r2 = squared_distance<D>(&xb_[i * D], c, diff);
        const NeuronTerms<T> t = gaussian_terms<D>(r2, a_[k]);
        const T b = b_[i];
        sw_b += b * t.phi;
        sa_b += b * t.phi_da;
        for (int j = 0; j < D; ++j) sc_b[j] += b * t.phi_dc * diff[j];
      }
      const T w = w_[k];
      if (gw) (*gw)[k] = sw_i * inv_n + sw_b * lam_k;
      ga[k] = w * (sa_i * inv_n + sa_b * lam_k);
      for (int j = 0; j < D; ++j) gc[k * D + j] = w * (sc_i[j] * inv_n + sc_b[j] * lam_k);
    }
    if (gw) reduce(*gw);
    reduce(gc);
    reduce(ga);
  }

  // M (N × m) of Δφ_k(x_i) and N (K × m) of φ_k(x_j) at the current centres and widths.
  void assemble_features() {
    if (features_valid_) return;
    const int m = neurons();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
    M_.resize(n_int, m);
    N_.resize(n_bnd, m);
    const NeuronTable nt = neuron_table();
    for_each_row([&](Eigen::Index row, bool interior, const T* x, PointTerms& pt) {
      T* out = interior ? &M_(row, 0) : &N_(row - n_int, 0);
      if (general_) {
        const RowCoefficients rc = row_coefficients(row);
        for (int k = 0; k < m; ++k) out[k] = general_value(rc, k);
        return;
      }
      point_terms(x, nt, pt);
      for (int k = 0; k < m; ++k)
        out[k] = interior ? gaussian_laplacian_given_phi<D>(pt.t[k], nt.ia2[k], pt.phi[k])
                          : pt.phi[k];
    });
    features_valid_ = true;
  }

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

  LossParts general_residuals() {
    const int m = neurons();
    const Eigen::Index n_int = f_.size(), n_bnd = p_.size();
#pragma omp parallel for schedule(static) if ((n_int + n_bnd) * m > kParallelWork)
    for (Eigen::Index row = 0; row < n_int + n_bnd; ++row) {
      const RowCoefficients rc = row_coefficients(row);
      T sum = T(0);
      for (int k = 0; k < m; ++k) sum += w_[k] * general_value(rc, k);
      if (rc.interior)
        e_[row] = sum - f_[row];
      else
        b_[row - n_int] = sum - p_[row - n_int];
    }
    return loss_parts();
  }

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

}  // namespace

template <class T>
std::unique_ptr<RbfBackend<T>> make_cpu_backend(const BackendOptions& options) {
  if (options.dim == 2) return std::make_unique<CpuRbfBackend<T, 2>>(options);
  if (options.dim == 3) return std::make_unique<CpuRbfBackend<T, 3>>(options);
  if (options.dim == 4) return std::make_unique<CpuRbfBackend<T, 4>>(options);  // 3D and time
  throw std::invalid_argument("the CPU backend supports 2, 3 or 4 dimensions, got " +
                              std::to_string(options.dim));
}

template std::unique_ptr<RbfBackend<double>> make_cpu_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> make_cpu_backend<float>(const BackendOptions&);

}  // namespace rbfpde
