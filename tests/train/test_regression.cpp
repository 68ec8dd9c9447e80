// Regression against analytic solutions: the shipped 2D configs solved end to end (config →
// problem → training → outputs) on the CPU, each to the error bound it must reach — the
// problem-only configs for training seeds 1–3, with 100 neurons, at most 400 iterations and
// a patience of 50 (the defaults' 196 neurons and 1000 iterations cost minutes per run on a
// 2-core machine; the GPU test runs the defaults). (The 3D configs run on the GPU:
// tests/gpu/cuda_regression_test.cpp.) Sweeps over seeds 1–20 are bench/seed_sweep.py's, with
// their tables in bench/RESULTS.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "solver/train/solve.hpp"
#include "tests/common/resume_runs.hpp"
#include "tests/common/shipped_solve.hpp"
#include "tests/common/summary_counts.hpp"

namespace rbfpde {
namespace {

SolveResult solve_config(const std::string& name, const std::vector<std::string>& extra = {}) {
  const ShippedSolve run = solve_shipped("regression", name, extra);
  const Config& config = run.config;
  const SolveResult& r = run.result;
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

// A shipped config that gives only the problem, solved with the default method (variable
// projection) and the defaults that scale from 100 neurons (400 iterations, patience 50), for
// training seeds 1–3: every seed must reach `bound`, and the residual-based error estimate must
// lie within 10× of the true relative L2 error. The bounds
// hold the worst seed measured (bench/RESULTS.md, "Accuracy over training seeds") with a margin;
// the target of 1e-7 is printed beside them.
void expect_every_seed(const std::string& name, double bound) {
  std::printf("%s: every seed 1-3 must reach relative L2 <= %.1e (target 1e-7); estimate "
              "within 10x\n",
              name.c_str(), bound);
  double worst = 0;
  for (int seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(testing::Message() << name << ", seed " << seed);
    const SolveResult r =
        solve_config(name, {"training.seed=" + std::to_string(seed), "model.neurons=100",
                            "training.max_cycles=400", "training.patience=50"});
    std::printf("  seed %d: relative L2 %.3e, estimate %.3e, %ld cycles (%s)\n", seed,
                r.errors.rel_l2, r.error_estimate, r.outcome.cycles, r.outcome.stop_reason.c_str());
    EXPECT_EQ(r.exit_code, 0) << r.unsound;
    EXPECT_LE(r.errors.rel_l2, bound);
    EXPECT_GE(r.error_estimate, 0.1 * r.errors.rel_l2);
    EXPECT_LE(r.error_estimate, 10 * r.errors.rel_l2);
    worst = std::max(worst, r.errors.rel_l2);
  }
  std::printf("%s: worst seed %.3e (bound %.1e)\n", name.c_str(), worst, bound);
}

// Measured on the CPU with 100 neurons, seeds 1–5: poisson2d 1.7e-8 … 1.5e-6 (seed 5).
TEST(Regression, SeedProblemEverySeed) { expect_every_seed("poisson2d", 3e-6); }
TEST(Regression, LShapeEverySeed) { expect_every_seed("lshape", 1e-6); }
TEST(Regression, DiskEverySeed) { expect_every_seed("disk", 1e-6); }
TEST(Regression, PeakEverySeed) { expect_every_seed("peak", 1e-6); }

// The L-shape at the defaults (196 neurons), seed 17: on the 2-core CPU the run falls into a local
// minimum at 1.4e-6 that restarts of 10 neurons each do not leave (three or six of them); the
// third restart, escalated to 40 neurons, leaves it (measured 1.9e-10 after 144 iterations).
TEST(Regression, LShapeSeed17LeavesItsLocalMinimum) {
  std::printf("lshape, defaults, seed 17: bound relative L2 <= 1e-7\n");
  const SolveResult r = solve_config("lshape", {"training.seed=17"});
  const std::string summary = test_runs::read_text(r.directory + "/summary.json");
  std::printf("  relative L2 %.3e after %ld cycles (%s), %ld restarts\n", r.errors.rel_l2,
              r.outcome.cycles, r.outcome.stop_reason.c_str(),
              test_inputs::summary_count(summary, "restarts"));
  EXPECT_EQ(r.exit_code, 0) << r.unsound;
  EXPECT_LE(r.errors.rel_l2, 1e-7);
}

// The seed's scheme and plain LM keep their bounds (measured: gdcg 1.3e-3, lm 1.2e-5).
TEST(Regression, SeedProblemLmTo1e4) { expect_bound("poisson2d_seed_lm", 1e-4); }
TEST(Regression, SeedProblemGdcgTo1e2) { expect_bound("poisson2d_seed", 1e-2); }

// Single precision with the default method (variable projection), 100 neurons as above, seeds
// 1–3: float's QR stops it near 1e-5 (measured: median 1.06e-5, worst 1.09e-4 with the native
// build of the 2-core machine; 8.0e-6 and 2.45e-4 with -march=x86-64-v3; the worst seed stops as
// converged after 21–63 iterations, over seeds 1–5). Every seed must exit 0 with an estimate
// within 10×.
TEST(Regression, FloatPrecisionDefaultMethod) {
  constexpr double kMedianBound = 1e-4, kWorstBound = 1e-3;
  std::printf("poisson2d, float: median of seeds 1-3 <= %.1e, every seed <= %.1e\n", kMedianBound,
              kWorstBound);
  std::vector<double> errors;
  for (int seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const SolveResult r = solve_config(
        "poisson2d", {"compute.precision=float", "model.neurons=100", "training.max_cycles=400",
                      "training.patience=50", "training.seed=" + std::to_string(seed)});
    std::printf("  seed %d: exit %d, relative L2 %.3e, estimate %.3e, %ld cycles (%s)\n", seed,
                r.exit_code, r.errors.rel_l2, r.error_estimate, r.outcome.cycles,
                r.outcome.stop_reason.c_str());
    EXPECT_EQ(r.exit_code, 0) << r.unsound;
    EXPECT_LE(r.errors.rel_l2, kWorstBound);
    EXPECT_GE(r.error_estimate, 0.1 * r.errors.rel_l2);
    EXPECT_LE(r.error_estimate, 10 * r.errors.rel_l2);
    errors.push_back(r.errors.rel_l2);
  }
  std::sort(errors.begin(), errors.end());
  std::printf("poisson2d, float: median %.3e (bound %.1e)\n", errors[1], kMedianBound);
  EXPECT_LE(errors[1], kMedianBound);
}

// The seed's LM in single precision, with its fresh batch every iteration (the seed's 224
// points, 300 iterations): chaotic. Seeds 1–10 end anywhere from 2e-5 to 2e-1 and the spread
// moves with the build (median of seeds 1–5: 1.7e-4 native, 1.75e-3 with -march=x86-64-v3), so no
// accuracy is bounded here. What must hold on every seed is honesty: exit 0 with an estimate
// within 10× of the true error (measured 1.1–3.6×), or exit 3 with its reason, never divergence
// or a garbage field.
TEST(Regression, FloatPrecisionSeedLmIsHonest) {
  std::printf(
      "poisson2d_seed_lm, float, seeds 1-3: exit 0 with an estimate within 10x, or exit 3 "
      "with a reason\n");
  for (int seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const SolveResult r = solve_config(
        "poisson2d_seed_lm", {"compute.precision=float", "training.points.interior=176",
                              "training.points.boundary=48", "training.max_cycles=300",
                              "training.seed=" + std::to_string(seed)});
    std::printf("  seed %d: exit %d, relative L2 %.3e, estimate %.3e %s\n", seed, r.exit_code,
                r.errors.rel_l2, r.error_estimate, r.unsound.c_str());
    EXPECT_FALSE(r.outcome.diverged);
    EXPECT_LT(r.errors.rel_l2, 1.0);
    if (r.exit_code == 3) {
      EXPECT_FALSE(r.unsound.empty());
    } else {
      EXPECT_EQ(r.exit_code, 0);
      EXPECT_GE(r.error_estimate, 0.1 * r.errors.rel_l2);
      EXPECT_LE(r.error_estimate, 10 * r.errors.rel_l2);
    }
  }
}

TEST(Regression, SameSeedSameResult) {
  const SolveResult a = solve_config("poisson2d", {"training.max_cycles=20"});
  const SolveResult b = solve_config("poisson2d", {"training.max_cycles=20"});
  EXPECT_EQ(a.errors.rel_l2, b.errors.rel_l2);
  EXPECT_EQ(a.outcome.loss.loss, b.outcome.loss.loss);
  const SolveResult c = solve_config("poisson2d", {"training.max_cycles=20", "training.seed=2"});
  EXPECT_NE(a.errors.rel_l2, c.errors.rel_l2);
}

// A learning rate far too large (a typo: 1e8). Without the GD step limit it fitted the
// collocation points with spikes between them (a relative L2 error of 1e29, exit 0). With the
// limit every step is a quarter of its neuron's width in the gradient's direction: a random walk.
// Its end is unsound by a state check (collapsed neurons, spikes on the grid) on some seeds; on
// the others the trainer names the learning rate: some neuron's gradient step is over 1000 times
// the limit at the end (measured 3e7 to 4e8; at most 0.19 at the seed config's rate of 30). Every
// seed 1–10 exits 3 with its reason and writes the best sound state, a partly trained network.
TEST(Regression, AbsurdLearningRateExitsUnsound) {
  std::printf(
      "poisson2d_seed, learning rate 1e8: every seed 1-10 exits 3, the best sound state "
      "written\n");
  int named = 0;
  for (int seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const SolveResult r =
        solve_config("poisson2d_seed", {"training.gd.learning_rate=1e8", "training.max_cycles=300",
                                        "training.seed=" + std::to_string(seed)});
    std::printf(
        "  seed %d: exit %d (%s); relative L2 of the state written %.3e (cycle %ld), "
        "estimate %.3e\n",
        seed, r.exit_code, r.unsound.c_str(), r.errors.rel_l2, r.best_cycle, r.error_estimate);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_FALSE(r.outcome.diverged);
    EXPECT_FALSE(r.unsound.empty());
    if (r.unsound.rfind("training.gd.learning_rate 1.00e+08 is far too large", 0) == 0) ++named;
    // The best sound state: a report before the end, finite, its error under 1.
    EXPECT_GE(r.best_cycle, 0);
    EXPECT_LT(r.best_cycle, 300);
    EXPECT_LT(r.errors.rel_l2, 1.0);
    EXPECT_TRUE(std::isfinite(r.error_estimate));
    const std::string summary = test_runs::read_text(r.directory + "/summary.json");
    EXPECT_NE(summary.find("\"sound\": false"), std::string::npos);
    EXPECT_TRUE(std::filesystem::exists(r.directory + "/model.yaml"));
  }
  std::printf("learning rate 1e8: %d of 10 seeds named the learning rate\n", named);
  EXPECT_GT(named, 0);
}

// The seed config's own rate leaves every neuron's final step within the limit: no seed is
// called unsound for it (seeds 1-10 measured at most 0.19 times the limit after 300 cycles).
TEST(Regression, SeedRateIsNotCalledAbsurd) {
  for (int seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const SolveResult r = solve_config(
        "poisson2d_seed", {"training.max_cycles=300", "training.seed=" + std::to_string(seed)});
    EXPECT_EQ(r.exit_code, 0) << r.unsound;
  }
}

}  // namespace
}  // namespace rbfpde
