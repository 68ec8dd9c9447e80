// Interruption and resume: a run stopped after any cycle and resumed from its checkpoint ends
// with the same parameters and history as the run that was never stopped.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "problems/random.hpp"
#include "solver/config/config.hpp"
#include "solver/train/checkpoint.hpp"
#include "solver/train/solve.hpp"
#include "tests/common/resume_runs.hpp"
#include "tests/common/summary_counts.hpp"

namespace rbfpde {
namespace {

using namespace test_runs;

TEST(Checkpoint, GdcgResumesToTheUninterruptedResult) {
  // Stopped mid-way between reports and between resamples.
  check_resume_matches("poisson2d_seed", "gdcg",
                       {"training.max_cycles=120", "training.points.resample_every=7"}, 53);
}

TEST(Checkpoint, LmResumesToTheUninterruptedResult) {
  check_resume_matches("poisson2d_seed_lm", "lm", {"training.max_cycles=40"}, 17);
}

// The hybrid damping update's switch to Nielsen's rule is part of the state: stopped after the
// switch (at iteration 53 with 36 neurons, measured), the resumed run goes on with Nielsen's rule
// as the uninterrupted one does (with Marquardt's it would take different steps). The width is
// fixed: the width search's fit of cycle 0 can stay the best state of both runs (on some builds),
// and then the stopped run writes the finished one's model.
TEST(Checkpoint, HybridDampingResumesAfterItsSwitch) {
  const std::vector<std::string> extra = {"model.neurons=36", "training.max_cycles=70",
                                          "training.lm.update=hybrid", "training.restarts=0",
                                          "model.init.width=1.5"};
  check_resume_matches("poisson2d", "hybrid", extra, 60);
  const std::string summary = read_text(std::string(RBFPDE_TEST_TMP) +
                                        "/checkpoint_hybrid_full/summary.json");
  const long since = test_inputs::summary_count(summary, "damping_nielsen_since");
  std::printf("switched to Nielsen's rule at iteration %ld\n", since);
  EXPECT_GT(since, 0);
  EXPECT_LT(since, 60);
}

// The checkpoint of a poisson2d run made with the settings `extra`.
Checkpoint<TrainerState<double>> poisson2d_checkpoint(const RunFiles& r,
                                                      const std::vector<std::string>& extra) {
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d.yaml", extra);
  return read_checkpoint<TrainerState<double>>(r.dir + "/checkpoint/state.bin", config);
}

// The validation monitor's memory is part of the checkpoint: the seed problem's width-search fit
// (cycle 0, 5e-8) stays the best state for the few LM iterations that follow it, so the run
// stopped after cycle 5 (between reports) and resumed writes that fit, as the run never stopped
// does, and not the best of the reports after the resume.
TEST(Checkpoint, ResumeKeepsTheBestStateOfTheReportsBeforeTheStop) {
  const std::vector<std::string> extra = {"training.max_cycles=8", "training.restarts=0",
                                          "output.report_every=2"};
  const RunFiles full = run("poisson2d", "monitor_full", extra);
  ASSERT_EQ(full.result.best_cycle, 0) << "the width search's fit is expected to stay the best";
  const RunFiles part = run("poisson2d", "monitor_part", extra, 4);
  ASSERT_EQ(part.result.outcome.stop_reason, "interrupted");
  EXPECT_EQ(part.result.outcome.cycles, 5);
  // The monitor's state in the checkpoint is that of the regular reports (cycles 0, 2 and 4),
  // not of the stopped run's final report at cycle 5, where the validation loss has fallen by more
  // than 1 % (measured).
  const auto ck = poisson2d_checkpoint(part, extra);
  EXPECT_EQ(ck.monitor.best_cycle, 0);
  EXPECT_EQ(ck.monitor.improved_cycle, 4);
  const RunFiles resumed = run("poisson2d", "monitor_part", extra, -1, true);
  EXPECT_EQ(resumed.result.outcome.cycles, full.result.outcome.cycles);
  EXPECT_EQ(resumed.result.best_cycle, 0);
  EXPECT_TRUE(read_text(full.dir + "/model.yaml") == read_text(part.dir + "/model.yaml"));
  EXPECT_EQ(history_without_times(full.dir + "/history.csv"),
            history_without_times(part.dir + "/history.csv"));
  EXPECT_EQ(full.result.errors.rel_l2, resumed.result.errors.rel_l2);
  EXPECT_EQ(full.result.validation.loss, resumed.result.validation.loss);
}

// The RBF trainer also reports every output.snapshot_every cycles: a run stopped at such a cycle
// keeps that report in the checkpoint's monitor state, as the uninterrupted run observes it.
TEST(Checkpoint, AStopAtASnapshotCycleKeepsItsReport) {
  const std::vector<std::string> extra = {"training.max_cycles=8", "training.restarts=0",
                                          "output.report_every=2", "output.snapshot_every=5"};
  const RunFiles part = run("poisson2d", "monitor_snap", extra, 4);
  ASSERT_EQ(part.result.outcome.stop_reason, "interrupted");
  EXPECT_EQ(part.result.outcome.cycles, 5);
  // Cycle 5's validation loss is more than 1 % below cycle 4's (as in the test above).
  const auto ck = poisson2d_checkpoint(part, extra);
  EXPECT_EQ(ck.monitor.improved_cycle, 5);
  // Its history row is not kept: history rows come every output.report_every cycles.
  ASSERT_FALSE(ck.history.empty());
  EXPECT_EQ(ck.history.back().cycle, 4);
}

// The monitor's state is read back field for field, for the MLP's flat parameters too; a state
// with no best yet stores no parameters.
TEST(Checkpoint, MonitorStateIsReadBack) {
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d.yaml", {"model.type=mlp"});
  const std::filesystem::path path =
      std::filesystem::path(RBFPDE_TEST_TMP) / "checkpoint_monitor_state" / "state.bin";
  using State = MlpTrainerState<float>;
  Checkpoint<State> ck = new_checkpoint<State>(config);
  MonitorState<std::vector<float>>& m = ck.monitor;
  m.best = {1.5f, -2.25f, 3e-8f};
  m.best_cycle = 17;
  m.best_figures.rms_interior = 1e-3;
  m.best_figures.rms_boundary = 2e-5;
  m.best_figures.loss = 5e-7;
  m.best_figures.max_abs_u = 0.05;
  m.plateau_loss = 6e-7;
  m.improved_cycle = 12;
  m.slow_loss = 8e-7;
  m.slow_cycle = 9;
  m.slow = true;
  write_checkpoint(path, ck);
  const MonitorState<std::vector<float>> r = read_checkpoint<State>(path, config).monitor;
  EXPECT_EQ(r.best, m.best);
  EXPECT_EQ(r.best_cycle, 17);
  EXPECT_EQ(r.best_figures.rms_interior, 1e-3);
  EXPECT_EQ(r.best_figures.rms_boundary, 2e-5);
  EXPECT_EQ(r.best_figures.loss, 5e-7);
  EXPECT_EQ(r.best_figures.max_abs_u, 0.05);
  EXPECT_TRUE(r.best_figures.finite);
  EXPECT_EQ(r.plateau_loss, 6e-7);
  EXPECT_EQ(r.improved_cycle, 12);
  EXPECT_EQ(r.slow_loss, 8e-7);
  EXPECT_EQ(r.slow_cycle, 9);
  EXPECT_TRUE(r.slow);
  ck.monitor = MonitorState<std::vector<float>>{};
  write_checkpoint(path, ck);
  const MonitorState<std::vector<float>> none = read_checkpoint<State>(path, config).monitor;
  EXPECT_EQ(none.best_cycle, -1);
  EXPECT_TRUE(none.best.empty());
  EXPECT_TRUE(std::isinf(none.plateau_loss));
  EXPECT_FALSE(none.slow);
}

TEST(Checkpoint, FloatResumesToo) {
  check_resume_matches("poisson2d_seed_lm", "float",
                       {"training.max_cycles=30", "compute.precision=float"}, 11);
}

TEST(Checkpoint, ResumeContinuesWithMoreCycles) {
  const RunFiles full = run("poisson2d_seed_lm", "more_full", {"training.max_cycles=30"});
  run("poisson2d_seed_lm", "more_part", {"training.max_cycles=20"});
  const RunFiles more = run("poisson2d_seed_lm", "more_part", {"training.max_cycles=30"}, -1, true);
  EXPECT_EQ(more.result.outcome.cycles, 30);
  EXPECT_EQ(read_text(full.dir + "/model.yaml"), read_text(more.dir + "/model.yaml"));
}

TEST(Checkpoint, ResumeRefusesAChangedConfigOrMissingCheckpoint) {
  run("poisson2d_seed_lm", "changed", {"training.max_cycles=5"});
  try {
    run("poisson2d_seed_lm", "changed", {"training.max_cycles=5", "training.penalty=10"}, -1, true);
    FAIL() << "a changed penalty must not resume";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the config differs from the run that wrote"),
              std::string::npos)
        << e.what();
  }
  try {
    run("poisson2d_seed_lm", "changed", {"training.max_cycles=5", "compute.precision=float"}, -1,
        true);
    FAIL() << "a changed precision must not resume";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "compute.precision");
  }
  std::filesystem::remove_all(std::string(RBFPDE_TEST_TMP) + "/checkpoint_none");
  EXPECT_THROW(run("poisson2d_seed_lm", "none", {}, -1, true), InputError);
}

// A batch's coefficients are stored as trained on and read back bit for bit: a batch drawn on the
// device carries the device's coefficients, which resume must not replace by the host's. Here the
// coefficients are perturbed so that refilling them from the problem would show.
TEST(Checkpoint, BatchCoefficientsAreKeptAsTrainedOn) {
  const Config config = load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/helmholtz_robin.yaml",
                                    {"model.neurons=9"});
  const Problem problem = Problem::build(config.problem);
  Rng rng(5);
  Checkpoint<TrainerState<double>> ck = new_checkpoint<TrainerState<double>>(config);
  problem.sample(rng, 40, 20, ck.state.batch);
  CollocationBatch& b = ck.state.batch;
  ASSERT_FALSE(b.c.empty());
  ASSERT_FALSE(b.beta.empty());
  for (double& v : b.c) v = std::nextafter(v, 1e300);
  for (double& v : b.beta) v = std::nextafter(v, -1e300);
  const std::filesystem::path path =
      std::filesystem::path(RBFPDE_TEST_TMP) / "checkpoint_coefficients" / "state.bin";
  write_checkpoint(path, ck);
  Checkpoint<TrainerState<double>> read = read_checkpoint<TrainerState<double>>(path, config);
  const CollocationBatch& r = read.state.batch;
  EXPECT_EQ(r.c, b.c);
  EXPECT_EQ(r.alpha, b.alpha);
  EXPECT_EQ(r.beta, b.beta);
  EXPECT_EQ(r.a, b.a);
  EXPECT_EQ(r.b, b.b);
  EXPECT_EQ(r.space_dim, b.space_dim);
  // A batch with coefficients keeps them; one without gets the problem's.
  CollocationBatch kept = r;
  problem.fill_missing_coefficients(kept);
  EXPECT_EQ(kept.c, b.c);
  CollocationBatch bare = r;
  bare.a.clear(), bare.b.clear(), bare.c.clear(), bare.alpha.clear(), bare.beta.clear();
  problem.fill_missing_coefficients(bare);
  ASSERT_EQ(bare.c.size(), b.c.size());
  EXPECT_NE(bare.c, b.c);
  EXPECT_EQ(bare.c[0], std::nextafter(b.c[0], -1e300));
}

TEST(Checkpoint, TornCheckpointIsRefused) {
  const RunFiles r = run("poisson2d_seed_lm", "torn", {"training.max_cycles=3"});
  const std::string path = r.dir + "/checkpoint/state.bin";
  std::string bytes = read_text(path);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    run("poisson2d_seed_lm", "torn", {"training.max_cycles=3"}, -1, true);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("truncated or corrupt"), std::string::npos) << e.what();
  }
}

TEST(Divergence, AbsurdLearningRateIsContainedByTheStepLimit) {
  // Every GD step moves a centre or width by at most a quarter width, so even an absurd
  // learning rate leaves a finite network inside the domain's reach: no divergence. But two such
  // steps a cycle drive the network to spikes between the collocation points, or leave steps
  // that the limit cuts by far more than 1000 times (which of the two depends on the rounding of
  // the build; gdcg's width floor keeps every width above the narrow-neuron threshold), so the
  // final state is unsound: exit 3, the reason, and the outputs of the best sound state.
  using test_inputs::with;
  const std::vector<std::string> absurd = {"training.gd.learning_rate=1e30", "training.gd.steps=2"};
  const RunFiles r = run("poisson2d_seed", "absurd", with(absurd, "training.max_cycles=200"));
  EXPECT_FALSE(r.result.outcome.diverged) << r.result.outcome.divergence;
  EXPECT_EQ(r.result.outcome.stop_reason, "max_cycles");
  EXPECT_EQ(r.result.outcome.cycles, 200);
  EXPECT_EQ(r.result.exit_code, 3);
  const bool spikes =
      r.result.unsound.find("spikes between the collocation points") != std::string::npos;
  const bool rate = r.result.unsound.find("learning_rate") != std::string::npos;
  EXPECT_TRUE(spikes || rate) << r.result.unsound;
  if (spikes) {
    const std::string at_end = "(cycle 200)";
    ASSERT_GT(r.result.unsound.size(), at_end.size());
    EXPECT_EQ(r.result.unsound.substr(r.result.unsound.size() - at_end.size()), at_end);
  }
  // The outputs hold the report with the lowest validation loss: an early cycle, whose error is
  // that of a sound, partly trained network.
  const long best = r.result.best_cycle;
  ASSERT_GT(best, 0);
  ASSERT_LT(best, 200);
  EXPECT_TRUE(std::isfinite(r.result.errors.rel_l2));
  EXPECT_LT(r.result.errors.rel_l2, 0.1);
  EXPECT_GT(r.result.error_estimate, 0.0);
  EXPECT_LT(r.result.error_estimate, 10 * r.result.errors.rel_l2);
  const std::string summary = read_text(r.dir + "/summary.json");
  EXPECT_NE(summary.find("\"sound\": false"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"unsound\": \"" + r.result.unsound + "\""), std::string::npos);
  EXPECT_NE(summary.find("\"best_cycle\": " + std::to_string(best) + ","), std::string::npos);
  EXPECT_NE(summary.find("the outputs hold the best parameters found sound"), std::string::npos);
  // The state written is that of the best cycle: the same model as a run that stopped there. That
  // run's final state is sound, and the trainer names its learning rate instead.
  const RunFiles at_best = run("poisson2d_seed", "absurd_best",
                               with(absurd, "training.max_cycles=" + std::to_string(best)));
  EXPECT_EQ(at_best.result.exit_code, 3);
  EXPECT_EQ(at_best.result.unsound.rfind("training.gd.learning_rate 1.00e+30 is far too large", 0),
            0u)
      << at_best.result.unsound;
  EXPECT_EQ(at_best.result.best_cycle, best);
  EXPECT_EQ(read_text(r.dir + "/model.yaml"), read_text(at_best.dir + "/model.yaml"));
  EXPECT_EQ(r.result.errors.rel_l2, at_best.result.errors.rel_l2);
  // history.csv still records every report, the unsound ones included.
  const std::string history = read_text(r.dir + "/history.csv");
  EXPECT_EQ(std::count(history.begin(), history.end(), '\n'), 21);
}

TEST(Divergence, OverflowingLossStopsWithOutputs) {
  // A penalty of 1e300 makes the loss overflow to infinity: divergence at once, outputs still
  // written from the initial network. Where the rounding of the build makes the first weight
  // solve underflow instead (-march=native, say), the network is zero to rounding and its loss
  // finite: the run ends unsound. Exit 3 either way, never a result that looks like success.
  const RunFiles r = run("poisson2d_seed", "overflow", {"training.penalty=1e300"});
  EXPECT_EQ(r.result.exit_code, 3);
  const std::string summary = read_text(r.dir + "/summary.json");
  if (r.result.outcome.diverged) {
    EXPECT_EQ(r.result.outcome.stop_reason, "diverged");
    EXPECT_NE(r.result.outcome.divergence.find("not finite"), std::string::npos)
        << r.result.outcome.divergence;
    EXPECT_NE(summary.find("\"diverged\": true"), std::string::npos);
  } else {
    EXPECT_NE(r.result.unsound.find("is that of the zero function"), std::string::npos)
        << r.result.unsound;
    EXPECT_NE(summary.find("\"sound\": false"), std::string::npos);
  }
  // No report's state was sound, so the outputs hold the final parameters, and the note says so
  // instead of naming a best sound state.
  EXPECT_EQ(r.result.best_cycle, -1);
  EXPECT_EQ(outputs_held(r.result), "the final parameters: no report found a sound state");
  EXPECT_NE(summary.find("\"best_cycle\": -1,"), std::string::npos) << summary;
  EXPECT_NE(summary.find("the outputs hold the final parameters: no report found a sound state"),
            std::string::npos)
      << summary;
  std::vector<std::string> files = {"model.yaml", "summary.json", "history.csv"};
  if (vtk_available()) files.push_back("solution.vtu");
  for (const auto& f : files) EXPECT_TRUE(std::filesystem::exists(r.dir + "/" + f)) << f;
}

TEST(Divergence, NonFiniteRightHandSideIsBadInputBeforeTraining) {
  // log of a negative number: f is NaN wherever it is evaluated, an input error found before
  // training starts and before anything is written (rather than a first loss that is NaN).
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/checkpoint_nan";
  try {
    run("poisson2d_seed_lm", "nan", {"problem.equation.f=log(x-2)"});
    FAIL() << "a NaN right-hand side was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "problem.equation.f");
    EXPECT_NE(e.message().find("\"log(x-2)\" = nan at ("), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace rbfpde

namespace rbfpde {
namespace {

TEST(InitFrom, TrainingContinuesFromAModelFile) {
  const RunFiles a = run("poisson2d_seed_lm", "init_a", {"training.max_cycles=40"});
  const RunFiles fresh = run("poisson2d_seed_lm", "init_fresh", {"training.max_cycles=1"});
  const RunFiles b = run("poisson2d_seed_lm", "init_b",
                         {"training.max_cycles=1", "model.init.from=" + a.dir + "/model.yaml"});
  // One iteration from the trained centres stays near the trained error, far below a fresh
  // network's after one iteration.
  EXPECT_LT(b.result.errors.rel_l2, 3 * a.result.errors.rel_l2);
  EXPECT_LT(b.result.errors.rel_l2, 0.1 * fresh.result.errors.rel_l2);
}

TEST(InitFrom, AWrongModelFileIsBadInput) {
  const RunFiles a = run("poisson2d_seed_lm", "init_c", {"training.max_cycles=2"});
  try {
    run("poisson2d_seed_lm", "init_d",
        {"model.neurons=16", "model.init.from=" + a.dir + "/model.yaml"});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "model.init.from");
    EXPECT_NE(std::string(e.what()).find("expected 16 neurons (model.neurons), found 64"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(run("poisson2d_seed_lm", "init_e", {"model.init.from=/nonexistent/model.yaml"}),
               InputError);
  EXPECT_FALSE(std::filesystem::exists(std::string(RBFPDE_TEST_TMP) + "/checkpoint_init_e"));
}

}  // namespace
}  // namespace rbfpde
