// Random batches and network parameters for backend tests, and a smooth problem with a lattice
// start: the same inputs for the CPU tests and for the GPU parity tests that compare against them.
#pragma once

#include <cmath>
#include <random>
#include <vector>

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

// θ = [w | c | a] as one vector, in the backends' order.
template <class T>
std::vector<double> flatten(const RbfParameters<T>& p) {
  std::vector<double> out;
  for (T v : p.weights) out.push_back(double(v));
  for (T v : p.centres) out.push_back(double(v));
  for (T v : p.widths) out.push_back(double(v));
  return out;
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

// Δu = f on the unit box with u = Π sin(πxᵢ) (zero on the boundary): `n_int` interior and
// `n_bnd` boundary points drawn uniformly, and a lattice of k^dim neurons at the cell centres,
// widths 1.5 cells, weights zero — the kind of start the solver makes.
struct SmoothCase {
  CollocationBatch batch;
  RbfParameters<double> start;
};
inline SmoothCase smooth_case(int dim, int n_int, int n_bnd, int k, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  SmoothCase c;
  c.batch.dim = dim;
  for (int i = 0; i < n_int; ++i) {
    double prod = 1;
    for (int j = 0; j < dim; ++j) {
      const double x = u(rng);
      c.batch.interior.push_back(x);
      prod *= std::sin(M_PI * x);
    }
    c.batch.f.push_back(-dim * M_PI * M_PI * prod);
  }
  for (int i = 0; i < n_bnd; ++i) {
    const int face = int(u(rng) * 2 * dim) % (2 * dim);
    for (int j = 0; j < dim; ++j) {
      c.batch.boundary.push_back(j == face / 2 ? double(face % 2) : u(rng));
      c.batch.normals.push_back(j == face / 2 ? (face % 2 ? 1.0 : -1.0) : 0.0);
    }
    c.batch.p.push_back(0.0);
  }
  c.start.dim = dim;
  int cells = 1;
  for (int j = 0; j < dim; ++j) cells *= k;
  for (int cell = 0; cell < cells; ++cell) {
    int rest = cell;
    for (int j = 0; j < dim; ++j, rest /= k) c.start.centres.push_back((rest % k + 0.5) / k);
    c.start.weights.push_back(0.0);
    c.start.widths.push_back(1.5 / k);
  }
  return c;
}

}  // namespace rbfpde::test_inputs
