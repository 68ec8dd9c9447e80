// Shared pieces of the tests of the MLP's general rows (CPU tests and the CUDA parity tests):
// random batches with every coefficient set, and the rows recomputed from a backend's
// evaluate()/evaluate_gradient().
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/mlp_backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"

namespace rbfpde {

// Random points in [-1, 1]^d with random targets, non-constant coefficients a ∈ [0.5, 1.5],
// b, c ∈ [−1, 1], and boundary rows cycling through Dirichlet (α ≠ 0, β = 0), Neumann (α = 0,
// β ≠ 0) and Robin (both) over the first 96 boundary points, Dirichlet after them; random unit
// normals. The Laplacian acts on the first space_dim coordinates.
inline CollocationBatch random_general_batch(int dim, int space_dim, int n_interior, int n_boundary,
                                             unsigned long long seed) {
  Rng rng(seed);
  CollocationBatch b;
  b.dim = dim;
  b.space_dim = space_dim;
  for (int i = 0; i < n_interior * dim; ++i) b.interior.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_interior; ++i) b.f.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_interior; ++i) b.a.push_back(uniform(rng, 0.5, 1.5));
  for (int i = 0; i < n_interior * dim; ++i) b.b.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_interior; ++i) b.c.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_boundary * dim; ++i) b.boundary.push_back(uniform(rng, -1, 1));
  for (int i = 0; i < n_boundary; ++i) {
    double len = 0;
    std::vector<double> n(dim);
    while (len < 1e-3) {
      len = 0;
      for (double& v : n) {
        v = uniform(rng, -1, 1);
        len += v * v;
      }
      len = std::sqrt(len);
    }
    for (double v : n) b.normals.push_back(v / len);
    b.p.push_back(uniform(rng, -1, 1));
    const int kind = i < 96 ? i % 3 : 0;
    b.alpha.push_back(kind == 1 ? 0.0 : uniform(rng, 0.5, 1.5));
    b.beta.push_back(kind == 0 ? 0.0 : uniform(rng, 0.5, 1.5));
  }
  return b;
}

// The rows e = a·Δₛu + b·∇u + c·u − f and r = α·u + β·∇u·n − p from the backend's evaluate() and
// evaluate_gradient() (the forward streams alone; no residual code of the backend).
template <class T>
void general_rows_from_evaluate(MlpBackend<T>& be, const CollocationBatch& batch,
                                std::vector<double>& e, std::vector<double>& r) {
  const int d = batch.dim;
  std::vector<double> u, lap, grad;
  be.evaluate(batch.interior, u, lap);
  be.evaluate_gradient(batch.interior, grad);
  e.assign(batch.n_interior(), 0.0);
  for (std::size_t i = 0; i < e.size(); ++i) {
    double v = (batch.a.empty() ? 1.0 : batch.a[i]) * lap[i];
    if (!batch.b.empty())
      for (int j = 0; j < d; ++j) v += batch.b[i * d + j] * grad[i * d + j];
    if (!batch.c.empty()) v += batch.c[i] * u[i];
    e[i] = v - batch.f[i];
  }
  be.evaluate(batch.boundary, u, lap);
  be.evaluate_gradient(batch.boundary, grad);
  r.assign(batch.n_boundary(), 0.0);
  for (std::size_t i = 0; i < r.size(); ++i) {
    double v = (batch.alpha.empty() ? 1.0 : batch.alpha[i]) * u[i];
    const double beta = batch.beta.empty() ? 0.0 : batch.beta[i];
    if (beta != 0)
      for (int j = 0; j < d; ++j) v += beta * grad[i * d + j] * batch.normals[i * d + j];
    r[i] = v - batch.p[i];
  }
}

}  // namespace rbfpde
