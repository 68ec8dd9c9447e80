// CpuRbfBackend's least-squares weights on one rank: the scaled system [F | y] over its ridge
// rows, its Householder QR (kept for vp_prepare) and the weights from it, or from the normal
// equations preconditioned by vp_prepare's R (variable projection's trials).
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde::cpu_detail {

template <class T, int D>
void CpuRbfBackend<T, D>::solve_weights_qr() {
  if (dist_) {
    solve_weights_tsqr();
    return;
  }
  Vector<T> w = factored_features().solve(qr_y_);
  if (w.allFinite()) w_ = w;
  residuals_from_features();
}

template <class T, int D>
void CpuRbfBackend<T, D>::scaled_system(ColMatrix<T>& F, Vector<T>& y) const {
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

template <class T, int D>
bool CpuRbfBackend<T, D>::preconditioned_weights() {
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

template <class T, int D>
const Eigen::HouseholderQR<ColMatrix<T>>& CpuRbfBackend<T, D>::factored_features() {
  assemble_features();
  if (!qr_valid_) {
    scaled_system(qr_f_, qr_y_);
    qr_.compute(qr_f_);
    qr_valid_ = true;
  }
  return qr_;
}

// This file's members for each (T, D) of make_cpu_backend.
template void CpuRbfBackend<double, 2>::solve_weights_qr();
template void CpuRbfBackend<double, 2>::scaled_system(ColMatrix<double>&, Vector<double>&) const;
template bool CpuRbfBackend<double, 2>::preconditioned_weights();
template const Eigen::HouseholderQR<ColMatrix<double>>&
CpuRbfBackend<double, 2>::factored_features();

template void CpuRbfBackend<double, 3>::solve_weights_qr();
template void CpuRbfBackend<double, 3>::scaled_system(ColMatrix<double>&, Vector<double>&) const;
template bool CpuRbfBackend<double, 3>::preconditioned_weights();
template const Eigen::HouseholderQR<ColMatrix<double>>&
CpuRbfBackend<double, 3>::factored_features();

template void CpuRbfBackend<double, 4>::solve_weights_qr();
template void CpuRbfBackend<double, 4>::scaled_system(ColMatrix<double>&, Vector<double>&) const;
template bool CpuRbfBackend<double, 4>::preconditioned_weights();
template const Eigen::HouseholderQR<ColMatrix<double>>&
CpuRbfBackend<double, 4>::factored_features();

template void CpuRbfBackend<float, 2>::solve_weights_qr();
template void CpuRbfBackend<float, 2>::scaled_system(ColMatrix<float>&, Vector<float>&) const;
template bool CpuRbfBackend<float, 2>::preconditioned_weights();
template const Eigen::HouseholderQR<ColMatrix<float>>& CpuRbfBackend<float, 2>::factored_features();

template void CpuRbfBackend<float, 3>::solve_weights_qr();
template void CpuRbfBackend<float, 3>::scaled_system(ColMatrix<float>&, Vector<float>&) const;
template bool CpuRbfBackend<float, 3>::preconditioned_weights();
template const Eigen::HouseholderQR<ColMatrix<float>>& CpuRbfBackend<float, 3>::factored_features();

template void CpuRbfBackend<float, 4>::solve_weights_qr();
template void CpuRbfBackend<float, 4>::scaled_system(ColMatrix<float>&, Vector<float>&) const;
template bool CpuRbfBackend<float, 4>::preconditioned_weights();
template const Eigen::HouseholderQR<ColMatrix<float>>& CpuRbfBackend<float, 4>::factored_features();

}  // namespace rbfpde::cpu_detail
