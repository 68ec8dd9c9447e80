// CpuRbfBackend's passes over the collocation rows: the parameters and the batch in and out,
// the residuals and the loss, the features M and N, and evaluate().
#include "kernels/cpu/cpu_rbf_backend.hpp"

namespace rbfpde::cpu_detail {

template <class T, int D>
void CpuRbfBackend<T, D>::set_parameters(const RbfParameters<T>& params) {
  if (params.dim != D) throw std::invalid_argument("parameters of the wrong dimension");
  const int m = params.neurons();
  if (int(params.centres.size()) != m * D || int(params.widths.size()) != m)
    throw std::invalid_argument("inconsistent parameter sizes");
  w_ = Eigen::Map<const Vector<T>>(params.weights.data(), m);
  c_ = Eigen::Map<const Vector<T>>(params.centres.data(), m * D);
  a_ = Eigen::Map<const Vector<T>>(params.widths.data(), m);
  invalidate_features();
}

template <class T, int D>
RbfParameters<T> CpuRbfBackend<T, D>::parameters() const {
  RbfParameters<T> p;
  p.dim = D;
  p.weights.assign(w_.data(), w_.data() + w_.size());
  p.centres.assign(c_.data(), c_.data() + c_.size());
  p.widths.assign(a_.data(), a_.data() + a_.size());
  return p;
}

template <class T, int D>
void CpuRbfBackend<T, D>::set_batch(const CollocationBatch& batch) {
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

template <class T, int D>
CollocationBatch CpuRbfBackend<T, D>::batch() const {
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

template <class T, int D>
LossParts CpuRbfBackend<T, D>::residuals() {
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

template <class T, int D>
void CpuRbfBackend<T, D>::evaluate(const std::vector<double>& points, std::vector<double>& u,
                                   std::vector<double>& laplacian) {
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

template <class T, int D>
T CpuRbfBackend<T, D>::network_sum(const T* x, bool laplacian, const NeuronTable& nt,
                                   PointTerms& pt) const {
  point_terms(x, nt, pt);
  T sum = T(0);
  for (int k = 0; k < neurons(); ++k)
    sum += w_[k] * (laplacian ? gaussian_laplacian_given_phi<D>(pt.t[k], nt.ia2[k], pt.phi[k])
                              : pt.phi[k]);
  return sum;
}

template <class T, int D>
LossParts CpuRbfBackend<T, D>::loss_parts() const {
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

template <class T, int D>
void CpuRbfBackend<T, D>::assemble_features() {
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

template <class T, int D>
LossParts CpuRbfBackend<T, D>::general_residuals() {
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

// This file's members for each (T, D) of make_cpu_backend.
template void CpuRbfBackend<double, 2>::set_parameters(const RbfParameters<double>&);
template RbfParameters<double> CpuRbfBackend<double, 2>::parameters() const;
template void CpuRbfBackend<double, 2>::set_batch(const CollocationBatch&);
template CollocationBatch CpuRbfBackend<double, 2>::batch() const;
template LossParts CpuRbfBackend<double, 2>::residuals();
template void CpuRbfBackend<double, 2>::evaluate(const std::vector<double>&, std::vector<double>&,
                                                 std::vector<double>&);
template double CpuRbfBackend<double, 2>::network_sum(const double*, bool, const NeuronTable&,
                                                      PointTerms&) const;
template LossParts CpuRbfBackend<double, 2>::loss_parts() const;
template void CpuRbfBackend<double, 2>::assemble_features();
template LossParts CpuRbfBackend<double, 2>::general_residuals();

template void CpuRbfBackend<double, 3>::set_parameters(const RbfParameters<double>&);
template RbfParameters<double> CpuRbfBackend<double, 3>::parameters() const;
template void CpuRbfBackend<double, 3>::set_batch(const CollocationBatch&);
template CollocationBatch CpuRbfBackend<double, 3>::batch() const;
template LossParts CpuRbfBackend<double, 3>::residuals();
template void CpuRbfBackend<double, 3>::evaluate(const std::vector<double>&, std::vector<double>&,
                                                 std::vector<double>&);
template double CpuRbfBackend<double, 3>::network_sum(const double*, bool, const NeuronTable&,
                                                      PointTerms&) const;
template LossParts CpuRbfBackend<double, 3>::loss_parts() const;
template void CpuRbfBackend<double, 3>::assemble_features();
template LossParts CpuRbfBackend<double, 3>::general_residuals();

template void CpuRbfBackend<double, 4>::set_parameters(const RbfParameters<double>&);
template RbfParameters<double> CpuRbfBackend<double, 4>::parameters() const;
template void CpuRbfBackend<double, 4>::set_batch(const CollocationBatch&);
template CollocationBatch CpuRbfBackend<double, 4>::batch() const;
template LossParts CpuRbfBackend<double, 4>::residuals();
template void CpuRbfBackend<double, 4>::evaluate(const std::vector<double>&, std::vector<double>&,
                                                 std::vector<double>&);
template double CpuRbfBackend<double, 4>::network_sum(const double*, bool, const NeuronTable&,
                                                      PointTerms&) const;
template LossParts CpuRbfBackend<double, 4>::loss_parts() const;
template void CpuRbfBackend<double, 4>::assemble_features();
template LossParts CpuRbfBackend<double, 4>::general_residuals();

template void CpuRbfBackend<float, 2>::set_parameters(const RbfParameters<float>&);
template RbfParameters<float> CpuRbfBackend<float, 2>::parameters() const;
template void CpuRbfBackend<float, 2>::set_batch(const CollocationBatch&);
template CollocationBatch CpuRbfBackend<float, 2>::batch() const;
template LossParts CpuRbfBackend<float, 2>::residuals();
template void CpuRbfBackend<float, 2>::evaluate(const std::vector<double>&, std::vector<double>&,
                                                std::vector<double>&);
template float CpuRbfBackend<float, 2>::network_sum(const float*, bool, const NeuronTable&,
                                                    PointTerms&) const;
template LossParts CpuRbfBackend<float, 2>::loss_parts() const;
template void CpuRbfBackend<float, 2>::assemble_features();
template LossParts CpuRbfBackend<float, 2>::general_residuals();

template void CpuRbfBackend<float, 3>::set_parameters(const RbfParameters<float>&);
template RbfParameters<float> CpuRbfBackend<float, 3>::parameters() const;
template void CpuRbfBackend<float, 3>::set_batch(const CollocationBatch&);
template CollocationBatch CpuRbfBackend<float, 3>::batch() const;
template LossParts CpuRbfBackend<float, 3>::residuals();
template void CpuRbfBackend<float, 3>::evaluate(const std::vector<double>&, std::vector<double>&,
                                                std::vector<double>&);
template float CpuRbfBackend<float, 3>::network_sum(const float*, bool, const NeuronTable&,
                                                    PointTerms&) const;
template LossParts CpuRbfBackend<float, 3>::loss_parts() const;
template void CpuRbfBackend<float, 3>::assemble_features();
template LossParts CpuRbfBackend<float, 3>::general_residuals();

template void CpuRbfBackend<float, 4>::set_parameters(const RbfParameters<float>&);
template RbfParameters<float> CpuRbfBackend<float, 4>::parameters() const;
template void CpuRbfBackend<float, 4>::set_batch(const CollocationBatch&);
template CollocationBatch CpuRbfBackend<float, 4>::batch() const;
template LossParts CpuRbfBackend<float, 4>::residuals();
template void CpuRbfBackend<float, 4>::evaluate(const std::vector<double>&, std::vector<double>&,
                                                std::vector<double>&);
template float CpuRbfBackend<float, 4>::network_sum(const float*, bool, const NeuronTable&,
                                                    PointTerms&) const;
template LossParts CpuRbfBackend<float, 4>::loss_parts() const;
template void CpuRbfBackend<float, 4>::assemble_features();
template LossParts CpuRbfBackend<float, 4>::general_residuals();

}  // namespace rbfpde::cpu_detail
