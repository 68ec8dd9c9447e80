// The MLP's Gauss–Newton/LM path on the CPU backend: the Jacobian of the scaled residuals
// against finite differences and against the backward pass's gradient (JᵀR = ∂I/∂θ), and
// method lm solving the seed problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "kernels/mlp_backend.hpp"
#include "solver/train/solve.hpp"
#include "tests/mlp/mlp_test_util.hpp"

namespace rbfpde {
namespace {

TEST(MlpJacobian, MatchesFiniteDifferencesAndTheGradient) {
  for (int dim : {2, 3}) {
    SCOPED_TRACE(testing::Message() << "dim " << dim);
    MlpShape shape;
    shape.dim = dim;
    shape.hidden = {6, 5};
    shape.activation = "tanh";
    auto be = make_cpu_mlp_backend<double>(mlp_options(shape, 3.0));
    const std::vector<double> theta = random_mlp_parameters(shape, 7 + dim);
    be->set_batch(random_batch(dim, 13, 5, 3));
    expect_jacobian_consistent(*be, theta, 13, 5, 3.0);
  }
}

TEST(MlpLm, SeedProblemSmallNetwork) {
  // A 2-20-20-1 tanh network by Levenberg–Marquardt on one fixed batch of 600 + 120 points:
  // measured 2.9e-5 with 1000 + 200 points and 300 iterations (16 s on 2 cores); here 80
  // iterations, bound 1e-3.
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/mlp_lm_seed";
  std::filesystem::remove_all(dir);
  const Config config = load_config(
      std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_mlp.yaml",
      {"output.directory=" + dir, "compute.backend=cpu", "model.layers=[20, 20]",
       "training.method=lm", "training.points.interior=600", "training.points.boundary=120",
       "training.points.resample_every=0", "training.max_cycles=80", "training.lbfgs.iterations=0",
       "training.tolerance=0"});
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  const SolveResult r = solve(config, problem, options);
  std::printf("MLP 2-20-20-1, lm, 80 iterations: relative L2 %.3e (bound 1e-3), estimate %.3e\n",
              r.errors.rel_l2, r.error_estimate);
  EXPECT_EQ(r.exit_code, 0) << r.unsound;
  EXPECT_EQ(r.model, "mlp");
  EXPECT_LE(r.errors.rel_l2, 1e-3);
  EXPECT_LE(r.error_estimate, 10 * r.errors.rel_l2);
  EXPECT_GE(r.error_estimate, 0.1 * r.errors.rel_l2);
}

}  // namespace
}  // namespace rbfpde
