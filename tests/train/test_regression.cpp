// Regression against analytic solutions: every shipped config in configs/ solved end to end
// (config → problem → training → outputs) on the CPU, each to the error bound it must reach.
// The bounds are about 3× what was measured when they were set (see the note in each test), so
// a real regression fails and an unlucky change of rounding does not.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "solver/train/solve.hpp"

namespace rbfpde {
namespace {

SolveResult solve_config(const std::string& name, const std::vector<std::string>& extra = {}) {
  // One directory per test and run: ctest -j runs tests side by side.
  static int runs = 0;
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/regression_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                          std::to_string(runs++);
  std::filesystem::remove_all(dir);
  std::vector<std::string> overrides = {"output.directory=" + dir, "compute.backend=cpu"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/" + name + ".yaml", overrides);
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  const SolveResult r = solve(config, problem, options);
  std::printf("%s: %s, %ld cycles, %.2f s: relative L2 error %.3e, max error %.3e\n", name.c_str(),
              config.training.method.c_str(), r.outcome.cycles, r.outcome.seconds, r.errors.rel_l2,
              r.errors.max);
  return r;
}

void expect_bound(const std::string& name, double bound, const std::vector<std::string>& extra = {}) {
  std::printf("%s: bound relative L2 <= %.1e\n", name.c_str(), bound);
  const SolveResult r = solve_config(name, extra);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.outcome.diverged);
  EXPECT_LE(r.errors.rel_l2, bound) << name;
}

// The bounds for the seed problem.
TEST(Regression, SeedProblemLmTo1e4) { expect_bound("poisson2d_seed_lm", 1e-4); }   // measured 1.2e-5
TEST(Regression, SeedProblemGdcgTo1e2) { expect_bound("poisson2d_seed", 1e-2); }    // measured 1.3e-3
// Bounds we measured and state (configs/README.md lists them too).
TEST(Regression, LShapeLm) { expect_bound("lshape", 2e-6); }                        // measured 5.6e-7
TEST(Regression, DiskLm) { expect_bound("disk", 3e-5); }                            // measured 9.2e-6
TEST(Regression, Cube3dLm) { expect_bound("cube3d", 1e-2); }                        // measured 3.2e-3

TEST(Regression, FloatPrecisionSeedLm) {
  // Single precision loses the last digits of the LM normal equations; it still gets close.
  // The seed's 224 points and 300 iterations: with the config's 500 points float LM takes a
  // step near iteration 90 that fits the batch and wrecks the network (configs/README.md).
  expect_bound("poisson2d_seed_lm", 5e-4,
               {"compute.precision=float", "training.points.interior=176",
                "training.points.boundary=48", "training.max_cycles=300"});  // measured 9.9e-5
}

TEST(Regression, SameSeedSameResult) {
  const SolveResult a = solve_config("poisson2d_seed_lm", {"training.max_cycles=30"});
  const SolveResult b = solve_config("poisson2d_seed_lm", {"training.max_cycles=30"});
  EXPECT_EQ(a.errors.rel_l2, b.errors.rel_l2);
  EXPECT_EQ(a.outcome.loss.loss, b.outcome.loss.loss);
  const SolveResult c = solve_config("poisson2d_seed_lm", {"training.max_cycles=30", "training.seed=2"});
  EXPECT_NE(a.errors.rel_l2, c.errors.rel_l2);
}

}  // namespace
}  // namespace rbfpde
