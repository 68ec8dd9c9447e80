// CpuRbfBackend's QR solves over several ranks (TSQR): the weights and variable projection's
// projected system, each rank factoring its own rows.
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde::cpu_detail {

template <class T, int D>
Matrix<T> CpuRbfBackend<T, D>::tsqr_r(const Matrix<T>& A) const {
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

template <class T, int D>
Matrix<T> CpuRbfBackend<T, D>::local_scaled_system() {
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

template <class T, int D>
void CpuRbfBackend<T, D>::solve_weights_tsqr() {
  const int m = neurons();
  const Matrix<T> R = tsqr_r(local_scaled_system());
  Vector<T> w = R.topLeftCorner(m, m).template triangularView<Eigen::Upper>().solve(
      Vector<T>(R.col(m).head(m)));
  if (w.allFinite()) w_ = w;
  residuals_from_features();
}

template <class T, int D>
LossParts CpuRbfBackend<T, D>::vp_prepare_tsqr() {
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

// This file's members for each (T, D) of make_cpu_backend.
template Matrix<double> CpuRbfBackend<double, 2>::tsqr_r(const Matrix<double>&) const;
template Matrix<double> CpuRbfBackend<double, 2>::local_scaled_system();
template void CpuRbfBackend<double, 2>::solve_weights_tsqr();
template LossParts CpuRbfBackend<double, 2>::vp_prepare_tsqr();

template Matrix<double> CpuRbfBackend<double, 3>::tsqr_r(const Matrix<double>&) const;
template Matrix<double> CpuRbfBackend<double, 3>::local_scaled_system();
template void CpuRbfBackend<double, 3>::solve_weights_tsqr();
template LossParts CpuRbfBackend<double, 3>::vp_prepare_tsqr();

template Matrix<double> CpuRbfBackend<double, 4>::tsqr_r(const Matrix<double>&) const;
template Matrix<double> CpuRbfBackend<double, 4>::local_scaled_system();
template void CpuRbfBackend<double, 4>::solve_weights_tsqr();
template LossParts CpuRbfBackend<double, 4>::vp_prepare_tsqr();

template Matrix<float> CpuRbfBackend<float, 2>::tsqr_r(const Matrix<float>&) const;
template Matrix<float> CpuRbfBackend<float, 2>::local_scaled_system();
template void CpuRbfBackend<float, 2>::solve_weights_tsqr();
template LossParts CpuRbfBackend<float, 2>::vp_prepare_tsqr();

template Matrix<float> CpuRbfBackend<float, 3>::tsqr_r(const Matrix<float>&) const;
template Matrix<float> CpuRbfBackend<float, 3>::local_scaled_system();
template void CpuRbfBackend<float, 3>::solve_weights_tsqr();
template LossParts CpuRbfBackend<float, 3>::vp_prepare_tsqr();

template Matrix<float> CpuRbfBackend<float, 4>::tsqr_r(const Matrix<float>&) const;
template Matrix<float> CpuRbfBackend<float, 4>::local_scaled_system();
template void CpuRbfBackend<float, 4>::solve_weights_tsqr();
template LossParts CpuRbfBackend<float, 4>::vp_prepare_tsqr();

}  // namespace rbfpde::cpu_detail
