// CpuRbfBackend's variable projection on one rank: the projected system of centres and widths
// (vp_prepare) and its trials (vp_try).
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde::cpu_detail {

template <class T, int D>
LossParts CpuRbfBackend<T, D>::vp_prepare() {
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

template <class T, int D>
LossParts CpuRbfBackend<T, D>::vp_try(T mu) {
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

// This file's members for each (T, D) of make_cpu_backend.
template LossParts CpuRbfBackend<double, 2>::vp_prepare();
template LossParts CpuRbfBackend<double, 2>::vp_try(double);

template LossParts CpuRbfBackend<double, 3>::vp_prepare();
template LossParts CpuRbfBackend<double, 3>::vp_try(double);

template LossParts CpuRbfBackend<double, 4>::vp_prepare();
template LossParts CpuRbfBackend<double, 4>::vp_try(double);

template LossParts CpuRbfBackend<float, 2>::vp_prepare();
template LossParts CpuRbfBackend<float, 2>::vp_try(float);

template LossParts CpuRbfBackend<float, 3>::vp_prepare();
template LossParts CpuRbfBackend<float, 3>::vp_try(float);

template LossParts CpuRbfBackend<float, 4>::vp_prepare();
template LossParts CpuRbfBackend<float, 4>::vp_try(float);

}  // namespace rbfpde::cpu_detail
