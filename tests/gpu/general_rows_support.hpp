// Random collocation batches with general rows (a·Δₛu + b·∇u + c·u = f inside, α·u + β·∂u/∂n = p
// on the boundary) for the GPU tests, and a plain host evaluation of their rows straight from
// kernels/rbf_math.hpp, independent of both backends.
#pragma once

#include <cmath>
#include <random>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/rbf_math.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde::gpu_test {

// The cases every general test runs: 2D with all coefficients, 3D, and 3D whose Laplacian is over
// the first two coordinates (a 2D problem with time), at neuron counts that take each kernel
// variant (one-block CG and gram ≤ 128, the cuBLAS paths above).
struct GeneralCase {
  int dim;
  int space_dim;  // 0: dim
  int m;
};
inline constexpr GeneralCase kGeneralCases[] = {
    {2, 0, 37}, {2, 0, 129}, {3, 0, 64}, {3, 2, 37}, {3, 2, 129}};

// A random batch with non-constant a ∈ [0.5, 1.5], b ∈ [−1, 1]^d, c ∈ [−2, 0.5], unit normals and
// boundary rows in turn Dirichlet (α = 1, β = 0), Neumann (α = 0, β = 1) and Robin (α ∈ [0.5,
// 1.5], β ∈ [0.2, 1]).
inline CollocationBatch general_batch(int dim, int space_dim, int n_int, int n_bnd, unsigned seed) {
  CollocationBatch b = random_batch(dim, n_int, n_bnd, seed);
  b.space_dim = space_dim;
  std::mt19937_64 rng(seed + 1000);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int i = 0; i < n_int; ++i) {
    b.a.push_back(0.5 + u(rng));
    for (int j = 0; j < dim; ++j) b.b.push_back(2 * u(rng) - 1);
    b.c.push_back(-2 + 2.5 * u(rng));
  }
  for (int i = 0; i < n_bnd; ++i) {
    double norm = 0;
    for (int j = 0; j < dim; ++j) {
      const double v = g(rng);
      b.normals[std::size_t(i) * dim + j] = v;
      norm += v * v;
    }
    for (int j = 0; j < dim; ++j) b.normals[std::size_t(i) * dim + j] /= std::sqrt(norm);
    switch (i % 3) {
      case 0:
        b.alpha.push_back(1), b.beta.push_back(0);
        break;
      case 1:
        b.alpha.push_back(0), b.beta.push_back(1);
        break;
      default:
        b.alpha.push_back(0.5 + u(rng)), b.beta.push_back(0.2 + 0.8 * u(rng));
        break;
    }
  }
  return b;
}

// The rows of a batch evaluated on the host in double: the features F (rows × m, row-major,
// unscaled) and the Jacobian of R = [e/√N; √(λ/K)·b] (rows × m(d+2), row-major, parameter order
// w, c, a), from operator_row_terms / boundary_row_terms.
struct HostRows {
  int dim = 2, m = 0, n_int = 0, n_bnd = 0;
  std::vector<double> features, jacobian, residuals, scaled_residuals;
  double loss = 0;
  int rows() const { return n_int + n_bnd; }
  int parameters() const { return m * (dim + 2); }
};

template <int D>
HostRows host_rows_d(const CollocationBatch& batch, const RbfParameters<double>& p,
                     double penalty) {
  HostRows h;
  h.dim = D;
  h.m = p.neurons();
  h.n_int = int(batch.n_interior());
  h.n_bnd = int(batch.n_boundary());
  const int m = h.m, n = h.rows(), cols = h.parameters();
  const int ds = batch.laplacian_dims();
  const double si = 1 / std::sqrt(double(std::max(h.n_int, 1)));
  const double sb = std::sqrt(penalty / double(std::max(h.n_bnd, 1)));
  h.features.assign(std::size_t(n) * m, 0.0);
  h.jacobian.assign(std::size_t(n) * cols, 0.0);
  h.residuals.assign(n, 0.0);
  h.scaled_residuals.assign(n, 0.0);
  double se = 0, sbnd = 0;
  for (int row = 0; row < n; ++row) {
    const bool interior = row < h.n_int;
    const int j = interior ? row : row - h.n_int;
    const double* x =
        interior ? &batch.interior[std::size_t(j) * D] : &batch.boundary[std::size_t(j) * D];
    const double scale = interior ? si : sb;
    double sum = 0;
    for (int k = 0; k < m; ++k) {
      double diff[D];
      const double r2 = squared_distance<D>(x, &p.centres[std::size_t(k) * D], diff);
      RowTerms<D, double> t;
      if (interior) {
        const double A = batch.a.empty() ? 1.0 : batch.a[j];
        const double C = batch.c.empty() ? 0.0 : batch.c[j];
        const double* B = batch.b.empty() ? nullptr : &batch.b[std::size_t(j) * D];
        t = operator_row_terms<D>(diff, r2, p.widths[k], ds, A, B, C);
      } else {
        const double alpha = batch.alpha.empty() ? 1.0 : batch.alpha[j];
        const double beta = batch.beta.empty() ? 0.0 : batch.beta[j];
        t = boundary_row_terms<D>(diff, r2, p.widths[k], &batch.normals[std::size_t(j) * D], alpha,
                                  beta);
      }
      h.features[std::size_t(row) * m + k] = t.value;
      sum += p.weights[k] * t.value;
      double* jr = &h.jacobian[std::size_t(row) * cols];
      jr[k] = scale * t.value;
      for (int q = 0; q < D; ++q) jr[m + k * D + q] = scale * p.weights[k] * t.dc[q];
      jr[m * (D + 1) + k] = scale * p.weights[k] * t.da;
    }
    const double r = sum - (interior ? batch.f[j] : batch.p[j]);
    h.residuals[row] = r;
    h.scaled_residuals[row] = scale * r;
    (interior ? se : sbnd) += r * r;
  }
  h.loss = 0.5 * se / std::max(h.n_int, 1) + 0.5 * penalty * sbnd / std::max(h.n_bnd, 1);
  return h;
}

inline HostRows host_rows(const CollocationBatch& batch, const RbfParameters<double>& p,
                          double penalty) {
  switch (batch.dim) {
    case 2:
      return host_rows_d<2>(batch, p, penalty);
    case 3:
      return host_rows_d<3>(batch, p, penalty);
    default:
      return host_rows_d<4>(batch, p, penalty);
  }
}

// Jᵀv for the host Jacobian (cols entries).
inline std::vector<double> jacobian_transpose_times(const HostRows& h,
                                                    const std::vector<double>& v) {
  const int cols = h.parameters();
  std::vector<double> out(cols, 0.0);
  for (int row = 0; row < h.rows(); ++row)
    for (int c = 0; c < cols; ++c) out[c] += h.jacobian[std::size_t(row) * cols + c] * v[row];
  return out;
}

// JᵀJ (cols × cols, column-major, lower triangle; the upper one zero as lm_system returns it).
inline std::vector<double> jacobian_gram_lower(const HostRows& h) {
  const int cols = h.parameters();
  std::vector<double> out(std::size_t(cols) * cols, 0.0);
  for (int j = 0; j < cols; ++j)
    for (int i = j; i < cols; ++i) {
      double s = 0;
      for (int row = 0; row < h.rows(); ++row)
        s += h.jacobian[std::size_t(row) * cols + i] * h.jacobian[std::size_t(row) * cols + j];
      out[std::size_t(i) + std::size_t(j) * cols] = s;
    }
  return out;
}

}  // namespace rbfpde::gpu_test
