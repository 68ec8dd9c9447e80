// The shipped configs state correct problems: each builds into a Problem (expressions parse,
// domains are valid, the boundary is covered), and where an exact solution is given, f = Δu holds
// (second differences of `exact` at points inside the domain).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/config/config_test_util.hpp"

namespace rbfpde {
namespace {

using testing::shipped_config;

double laplacian_fd(const Expression& u, const double* x, int dim) {
  const double h = 1e-4;
  double sum = 0;
  for (int i = 0; i < dim; ++i) {
    double plus[3] = {x[0], x[1], dim == 3 ? x[2] : 0};
    double minus[3] = {x[0], x[1], dim == 3 ? x[2] : 0};
    plus[i] += h;
    minus[i] -= h;
    sum += (u(plus) - 2 * u(x) + u(minus)) / (h * h);
  }
  return sum;
}

TEST(ShippedConfigs, ExactSolutionsSatisfyTheEquation) {
  for (const char* file : {"poisson2d_seed.yaml", "poisson2d_seed_lm.yaml", "lshape.yaml",
                           "disk.yaml", "cube3d.yaml"}) {
    SCOPED_TRACE(file);
    const Config config = load_config(shipped_config(file));
    const Problem problem = Problem::build(config.problem);
    ASSERT_EQ(problem.dim(), config.problem.dim);
    ASSERT_TRUE(problem.has_exact());
    Rng rng(7);
    CollocationBatch batch;
    problem.sample(rng, 50, 20, batch);
    const int dim = problem.dim();
    for (std::size_t i = 0; i < batch.n_interior(); ++i) {
      const double* x = batch.interior.data() + i * dim;
      // Second differences lose ~8 digits: 1e-5 relative to the scale of f is a real check.
      EXPECT_NEAR(laplacian_fd(problem.exact(), x, dim), batch.f[i],
                  1e-5 * (1 + std::abs(batch.f[i])));
    }
    for (std::size_t j = 0; j < batch.n_boundary(); ++j) {
      const double* x = batch.boundary.data() + j * dim;
      EXPECT_NEAR(problem.exact()(x), batch.p[j], 1e-12);  // Dirichlet data = exact solution
    }
  }
}

}  // namespace
}  // namespace rbfpde
