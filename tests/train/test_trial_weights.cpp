// Variable projection's trial weights through the whole solve (docs/mathematics.md, "Trial
// weights"): summary.json counts how the trial steps solved their weights; on the CPU `auto`
// takes QR, and `preconditioned` uses the preconditioned normal equations; with
// `prepare_factor: trial` iterations take the accepted trial's factor ("The factor from the
// trial").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "solver/train/solve.hpp"
#include "tests/common/resume_runs.hpp"
#include "tests/common/summary_counts.hpp"

namespace rbfpde {
namespace {

TEST(TrialWeights, SummaryCountsHowTheTrialsSolvedTheirWeights) {
  using namespace test_runs;
  using test_inputs::summary_count;
  using test_inputs::with;
  const std::vector<std::string> common = {"model.neurons=49", "training.max_cycles=30"};
  const RunFiles a = run("poisson2d", "trials_auto", common);
  const RunFiles b =
      run("poisson2d", "trials_preconditioned",
          with(common, "training.lm.trial_weights=preconditioned"));
  const std::string sa = read_text(a.dir + "/summary.json"), sb = read_text(b.dir + "/summary.json");
  EXPECT_EQ(summary_count(sa, "trials_preconditioned"), 0) << sa;
  EXPECT_GE(summary_count(sa, "trials_qr"), a.result.outcome.cycles) << sa;
  const long used = summary_count(sb, "trials_preconditioned");
  EXPECT_GT(used, 0) << sb;
  EXPECT_GE(used + summary_count(sb, "trials_qr"), b.result.outcome.cycles) << sb;
  EXPECT_EQ(summary_count(sb, "prepares_from_trial"), 0) << sb;
  // Both runs descend to the same order of error.
  EXPECT_LT(b.result.errors.rel_l2, 10 * a.result.errors.rel_l2 + 1e-12);
}

TEST(TrialWeights, PrepareFactorTrialTakesTheTrialsFactor) {
  using namespace test_runs;
  using test_inputs::summary_count;
  using test_inputs::with;
  const std::vector<std::string> common = {"model.neurons=49", "training.max_cycles=30",
                                           "training.lm.trial_weights=preconditioned"};
  const RunFiles qr = run("poisson2d", "prepare_qr", common);
  const RunFiles trial =
      run("poisson2d", "prepare_trial", with(common, "training.lm.prepare_factor=trial"));
  const std::string s = read_text(trial.dir + "/summary.json");
  const long from_trial = summary_count(s, "prepares_from_trial");
  EXPECT_GT(from_trial, 0) << s;
  EXPECT_LE(from_trial, summary_count(s, "trials_preconditioned")) << s;
  EXPECT_LT(trial.result.errors.rel_l2, 10 * qr.result.errors.rel_l2 + 1e-12);
}

}  // namespace
}  // namespace rbfpde
