// Shared pieces of the MLP tests: random networks and batches, the seed problem, and the check of
// a backend's Jacobian.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/mlp_backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"
#include "solver/train/mlp_model.hpp"

namespace rbfpde {

// Glorot weights plus non-zero biases, so that every bias path is exercised too.
inline std::vector<double> random_mlp_parameters(const MlpShape& shape, unsigned long long seed) {
  Rng rng(seed);
  std::vector<double> theta = initial_mlp_parameters(shape, rng);
  const std::vector<int> s = shape.sizes();
  std::size_t off = 0;
  for (std::size_t l = 1; l < s.size(); ++l) {
    off += std::size_t(s[l]) * s[l - 1];
    for (int r = 0; r < s[l]; ++r) theta[off++] = uniform(rng, -0.5, 0.5);
  }
  return theta;
}

// A batch of random points in [-1, 1]^d with random targets.
inline CollocationBatch random_batch(int dim, int n_interior, int n_boundary,
                                     unsigned long long seed) {
  Rng rng(seed);
  CollocationBatch b;
  b.dim = dim;
  for (int i = 0; i < n_interior * dim; ++i) b.interior.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_interior; ++i) b.f.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_boundary * dim; ++i) b.boundary.push_back(uniform(rng, -1, 1));
  b.normals.assign(b.boundary.size(), 0.0);
  for (int i = 0; i < n_boundary; ++i) b.p.push_back(uniform(rng, -1, 1));
  return b;
}

// With an input map that scales each axis differently, so that its chain-rule factors in the
// derivative streams are tested too.
inline MlpOptions mlp_options(const MlpShape& shape, double penalty) {
  MlpShape mapped = shape;
  mapped.input_min.clear();
  mapped.input_max.clear();
  for (int j = 0; j < shape.dim; ++j) {
    mapped.input_min.push_back(-1.0 + 0.25 * j);
    mapped.input_max.push_back(0.5 + 0.75 * j);
  }
  return mlp_backend_options(mapped, penalty);
}

// The Jacobian of the scaled residuals R = [e/√N ; √(penalty/K)·b] at θ (the batch set on `be`,
// with N interior and K boundary points): jacobian()'s R is residual_vectors' to 1e-14 relative,
// J matches central differences of R within 1e-7 of its largest entry, and JᵀR is the gradient
// of I = ½|R|² that the backward pass accumulates.
inline void expect_jacobian_consistent(MlpBackend<double>& be, const std::vector<double>& theta,
                                       int n_int, int n_bnd, double penalty) {
  be.set_parameters(theta);
  std::vector<double> jac, r;
  be.jacobian(jac, r);
  const std::size_t n = r.size(), p = theta.size();
  ASSERT_EQ(n, std::size_t(n_int + n_bnd));
  ASSERT_EQ(jac.size(), n * p);
  const double si = 1 / std::sqrt(double(n_int)), sb = std::sqrt(penalty / n_bnd);
  auto scaled = [&](const std::vector<double>& t) {
    be.set_parameters(t);
    be.residuals();
    std::vector<double> e, b, out;
    be.residual_vectors(e, b);
    for (double v : e) out.push_back(si * v);
    for (double v : b) out.push_back(sb * v);
    return out;
  };
  const std::vector<double> r0 = scaled(theta);
  for (std::size_t q = 0; q < n; ++q) EXPECT_NEAR(r[q], r0[q], 1e-14 * (1 + std::abs(r0[q])));
  const double h = 1e-6;
  double max_err = 0, max_j = 0;
  for (std::size_t k = 0; k < p; ++k) {
    std::vector<double> tp = theta, tm = theta;
    tp[k] += h;
    tm[k] -= h;
    const std::vector<double> rp = scaled(tp), rm = scaled(tm);
    for (std::size_t q = 0; q < n; ++q) {
      max_err = std::max(max_err, std::abs((rp[q] - rm[q]) / (2 * h) - jac[q * p + k]));
      max_j = std::max(max_j, std::abs(jac[q * p + k]));
    }
  }
  EXPECT_GT(max_j, 0.0);
  EXPECT_LE(max_err, 1e-7 * max_j) << "max |fd − J| " << max_err;

  be.set_parameters(theta);
  be.loss_and_gradient();
  std::vector<double> g;
  be.gradient(g);
  for (std::size_t k = 0; k < p; ++k) {
    double jtr = 0;
    for (std::size_t q = 0; q < n; ++q) jtr += jac[q * p + k] * r[q];
    EXPECT_NEAR(jtr, g[k], 1e-12 * (1 + std::abs(g[k])));
  }
}

}  // namespace rbfpde
