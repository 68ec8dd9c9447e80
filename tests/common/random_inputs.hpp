// Random batches and network parameters for backend tests: the same inputs for the CPU tests
// and for the GPU parity tests that compare against them.
#pragma once

#include <random>

#include "kernels/backend.hpp"

namespace rbfpde::test_inputs {

// Points uniform in [0, 1]^dim, targets uniform in [-0.5, 0.5], zero normals.
inline CollocationBatch random_batch(int dim, int n_int, int n_bnd, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  CollocationBatch b;
  b.dim = dim;
  for (int i = 0; i < n_int * dim; ++i) b.interior.push_back(u(rng));
  for (int i = 0; i < n_int; ++i) b.f.push_back(u(rng) - 0.5);
  for (int i = 0; i < n_bnd * dim; ++i) b.boundary.push_back(u(rng));
  for (int i = 0; i < n_bnd * dim; ++i) b.normals.push_back(0.0);
  for (int i = 0; i < n_bnd; ++i) b.p.push_back(u(rng) - 0.5);
  return b;
}

// Weights in [-0.5, 0.5], centres in [-0.1, 1.1]^dim, widths in [0.25, 0.55].
template <class T>
RbfParameters<T> random_parameters(int dim, int m, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  RbfParameters<T> p;
  p.dim = dim;
  for (int k = 0; k < m; ++k) p.weights.push_back(T(u(rng) - 0.5));
  for (int k = 0; k < m * dim; ++k) p.centres.push_back(T(1.2 * u(rng) - 0.1));
  for (int k = 0; k < m; ++k) p.widths.push_back(T(0.25 + 0.3 * u(rng)));
  return p;
}

}  // namespace rbfpde::test_inputs
