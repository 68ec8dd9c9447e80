// Shared pieces of the MLP tests: random networks and batches, and the seed problem.
#pragma once

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

}  // namespace rbfpde
