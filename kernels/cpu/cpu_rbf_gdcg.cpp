// CpuRbfBackend's gradient and the methods of gdcg: gradient-descent steps on the centres and
// widths, and the weight solves by conjugate gradients and by the normal equations (LDLT).
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde::cpu_detail {

template <class T, int D>
LossParts CpuRbfBackend<T, D>::gradient(RbfParameters<T>& grad) {
  const LossParts parts = residuals();
  Vector<T> gw, gc, ga;
  gradient_from_residuals(&gw, gc, ga);
  grad.dim = D;
  grad.weights.assign(gw.data(), gw.data() + gw.size());
  grad.centres.assign(gc.data(), gc.data() + gc.size());
  grad.widths.assign(ga.data(), ga.data() + ga.size());
  return parts;
}

template <class T, int D>
LossParts CpuRbfBackend<T, D>::gd_steps(int steps, T learning_rate) {
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

template <class T, int D>
CgResult CpuRbfBackend<T, D>::solve_weights_cg(int max_iterations, T tolerance) {
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

template <class T, int D>
void CpuRbfBackend<T, D>::solve_weights_direct(T ridge) {
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

template <class T, int D>
void CpuRbfBackend<T, D>::gradient_from_residuals(Vector<T>* gw, Vector<T>& gc,
                                                  Vector<T>& ga) const {
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

// This file's members for each (T, D) of make_cpu_backend.
template LossParts CpuRbfBackend<double, 2>::gradient(RbfParameters<double>&);
template LossParts CpuRbfBackend<double, 2>::gd_steps(int, double);
template CgResult CpuRbfBackend<double, 2>::solve_weights_cg(int, double);
template void CpuRbfBackend<double, 2>::solve_weights_direct(double);
template void CpuRbfBackend<double, 2>::gradient_from_residuals(Vector<double>*, Vector<double>&,
                                                                Vector<double>&) const;

template LossParts CpuRbfBackend<double, 3>::gradient(RbfParameters<double>&);
template LossParts CpuRbfBackend<double, 3>::gd_steps(int, double);
template CgResult CpuRbfBackend<double, 3>::solve_weights_cg(int, double);
template void CpuRbfBackend<double, 3>::solve_weights_direct(double);
template void CpuRbfBackend<double, 3>::gradient_from_residuals(Vector<double>*, Vector<double>&,
                                                                Vector<double>&) const;

template LossParts CpuRbfBackend<double, 4>::gradient(RbfParameters<double>&);
template LossParts CpuRbfBackend<double, 4>::gd_steps(int, double);
template CgResult CpuRbfBackend<double, 4>::solve_weights_cg(int, double);
template void CpuRbfBackend<double, 4>::solve_weights_direct(double);
template void CpuRbfBackend<double, 4>::gradient_from_residuals(Vector<double>*, Vector<double>&,
                                                                Vector<double>&) const;

template LossParts CpuRbfBackend<float, 2>::gradient(RbfParameters<float>&);
template LossParts CpuRbfBackend<float, 2>::gd_steps(int, float);
template CgResult CpuRbfBackend<float, 2>::solve_weights_cg(int, float);
template void CpuRbfBackend<float, 2>::solve_weights_direct(float);
template void CpuRbfBackend<float, 2>::gradient_from_residuals(Vector<float>*, Vector<float>&,
                                                               Vector<float>&) const;

template LossParts CpuRbfBackend<float, 3>::gradient(RbfParameters<float>&);
template LossParts CpuRbfBackend<float, 3>::gd_steps(int, float);
template CgResult CpuRbfBackend<float, 3>::solve_weights_cg(int, float);
template void CpuRbfBackend<float, 3>::solve_weights_direct(float);
template void CpuRbfBackend<float, 3>::gradient_from_residuals(Vector<float>*, Vector<float>&,
                                                               Vector<float>&) const;

template LossParts CpuRbfBackend<float, 4>::gradient(RbfParameters<float>&);
template LossParts CpuRbfBackend<float, 4>::gd_steps(int, float);
template CgResult CpuRbfBackend<float, 4>::solve_weights_cg(int, float);
template void CpuRbfBackend<float, 4>::solve_weights_direct(float);
template void CpuRbfBackend<float, 4>::gradient_from_residuals(Vector<float>*, Vector<float>&,
                                                               Vector<float>&) const;

}  // namespace rbfpde::cpu_detail
