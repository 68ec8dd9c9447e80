// CpuRbfBackend's Levenberg–Marquardt: the Jacobian of every parameter and its JᵀJ, JᵀR, the
// trial and its rejection, and the damped step and predicted decrease that vp_try shares.
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde::cpu_detail {

template <class T, int D>
LossParts CpuRbfBackend<T, D>::lm_prepare() {
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

template <class T, int D>
LossParts CpuRbfBackend<T, D>::lm_try(T mu) {
  const Vector<T> delta = lm_step(mu);
  apply_step(delta);
  if (!delta.allFinite()) return infinite_loss();
  set_predicted_decrease(false);
  return residuals();
}

template <class T, int D>
void CpuRbfBackend<T, D>::lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const {
  const Eigen::Index p = JtJ_.rows();
  jtj.assign(std::size_t(p * p), T(0));
  for (Eigen::Index j = 0; j < p; ++j)
    for (Eigen::Index i = j; i < p; ++i) jtj[std::size_t(i + j * p)] = JtJ_(i, j);
  jtr.assign(JtR_.data(), JtR_.data() + JtR_.size());
}

template <class T, int D>
void CpuRbfBackend<T, D>::lm_reject() {
  w_ = theta0_w_;
  c_ = theta0_c_;
  a_ = theta0_a_;
  invalidate_features();
  residuals();
}

template <class T, int D>
Vector<T> CpuRbfBackend<T, D>::lm_step(T mu, const Vector<T>* scaling) {
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

template <class T, int D>
void CpuRbfBackend<T, D>::set_predicted_decrease(bool centres_and_widths) {
  const Eigen::Index m = neurons(), first = centres_and_widths ? 0 : m;
  Vector<T> step(JtR_.size());
  if (!centres_and_widths) step.head(m) = w_ - theta0_w_;
  step.segment(first, m * D) = c_ - theta0_c_;
  step.segment(first + m * D, m) = a_ - theta0_a_;
  const Vector<T> h = JtJ_.template selfadjointView<Eigen::Lower>() * step;
  predicted_decrease_ = -double(step.dot(JtR_)) - 0.5 * double(step.dot(h));
}

template <class T, int D>
void CpuRbfBackend<T, D>::apply_step(const Vector<T>& delta) {
  const int m = neurons();
  w_ = theta0_w_ + delta.segment(0, m);
  c_ = theta0_c_ + delta.segment(m, Eigen::Index(m) * D);
  a_ = theta0_a_ + delta.segment(Eigen::Index(m) * (D + 1), m);
  clamp_widths();
  invalidate_features();
}

// This file's members for each (T, D) of make_cpu_backend.
template LossParts CpuRbfBackend<double, 2>::lm_prepare();
template LossParts CpuRbfBackend<double, 2>::lm_try(double);
template void CpuRbfBackend<double, 2>::lm_system(std::vector<double>&, std::vector<double>&) const;
template void CpuRbfBackend<double, 2>::lm_reject();
template Vector<double> CpuRbfBackend<double, 2>::lm_step(double, const Vector<double>*);
template void CpuRbfBackend<double, 2>::set_predicted_decrease(bool);
template void CpuRbfBackend<double, 2>::apply_step(const Vector<double>&);

template LossParts CpuRbfBackend<double, 3>::lm_prepare();
template LossParts CpuRbfBackend<double, 3>::lm_try(double);
template void CpuRbfBackend<double, 3>::lm_system(std::vector<double>&, std::vector<double>&) const;
template void CpuRbfBackend<double, 3>::lm_reject();
template Vector<double> CpuRbfBackend<double, 3>::lm_step(double, const Vector<double>*);
template void CpuRbfBackend<double, 3>::set_predicted_decrease(bool);
template void CpuRbfBackend<double, 3>::apply_step(const Vector<double>&);

template LossParts CpuRbfBackend<double, 4>::lm_prepare();
template LossParts CpuRbfBackend<double, 4>::lm_try(double);
template void CpuRbfBackend<double, 4>::lm_system(std::vector<double>&, std::vector<double>&) const;
template void CpuRbfBackend<double, 4>::lm_reject();
template Vector<double> CpuRbfBackend<double, 4>::lm_step(double, const Vector<double>*);
template void CpuRbfBackend<double, 4>::set_predicted_decrease(bool);
template void CpuRbfBackend<double, 4>::apply_step(const Vector<double>&);

template LossParts CpuRbfBackend<float, 2>::lm_prepare();
template LossParts CpuRbfBackend<float, 2>::lm_try(float);
template void CpuRbfBackend<float, 2>::lm_system(std::vector<float>&, std::vector<float>&) const;
template void CpuRbfBackend<float, 2>::lm_reject();
template Vector<float> CpuRbfBackend<float, 2>::lm_step(float, const Vector<float>*);
template void CpuRbfBackend<float, 2>::set_predicted_decrease(bool);
template void CpuRbfBackend<float, 2>::apply_step(const Vector<float>&);

template LossParts CpuRbfBackend<float, 3>::lm_prepare();
template LossParts CpuRbfBackend<float, 3>::lm_try(float);
template void CpuRbfBackend<float, 3>::lm_system(std::vector<float>&, std::vector<float>&) const;
template void CpuRbfBackend<float, 3>::lm_reject();
template Vector<float> CpuRbfBackend<float, 3>::lm_step(float, const Vector<float>*);
template void CpuRbfBackend<float, 3>::set_predicted_decrease(bool);
template void CpuRbfBackend<float, 3>::apply_step(const Vector<float>&);

template LossParts CpuRbfBackend<float, 4>::lm_prepare();
template LossParts CpuRbfBackend<float, 4>::lm_try(float);
template void CpuRbfBackend<float, 4>::lm_system(std::vector<float>&, std::vector<float>&) const;
template void CpuRbfBackend<float, 4>::lm_reject();
template Vector<float> CpuRbfBackend<float, 4>::lm_step(float, const Vector<float>*);
template void CpuRbfBackend<float, 4>::set_predicted_decrease(bool);
template void CpuRbfBackend<float, 4>::apply_step(const Vector<float>&);

}  // namespace rbfpde::cpu_detail
