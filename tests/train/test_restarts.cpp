// Variable projection's restarts (docs/mathematics.md, "Restarts"): a stall or a plateau far
// above the loss floor relocates the least useful neurons to the largest residuals; a run that
// never stalls is untouched, and a resumed run continues across a restart to the same numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>

#include "solver/train/checkpoint.hpp"
#include "solver/train/neuron_relocation.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/rbf_trainer.hpp"
#include "solver/train/solve.hpp"
#include "tests/common/random_inputs.hpp"
#include "tests/common/resume_runs.hpp"
#include "tests/common/seed_problem.hpp"
#include "tests/common/summary_counts.hpp"

namespace rbfpde {
namespace {

using test_inputs::summary_count;
using test_inputs::with;

// The seed problem with a network too small for it, trained by variable projection on one fixed
// batch with no validation monitor: such a network stalls in a local minimum far above the loss
// floor.
Config stalling_config(int restarts, long max_cycles = 3000) {
  Config config;
  config.name = "stall";
  config.problem = test_inputs::seed_problem_spec();
  config.model.neurons = 6;
  config.training.method = "varpro";
  config.training.points_interior = 200;
  config.training.points_boundary = 60;
  config.training.resample_every = 0;
  config.training.max_cycles = max_cycles;
  config.training.tolerance = 0;
  config.training.restarts = restarts;
  return config;
}

struct StallRun {
  TrainOutcome outcome;
  TrainerState<double> state;
  double best_loss = std::numeric_limits<double>::infinity();  // over the reports
  std::vector<long> restart_cycles;
  std::vector<std::string> restart_notes;
};

// The CPU backend for `config` on `problem` (2D, double).
std::unique_ptr<RbfBackend<double>> cpu_backend(const Config& config, const Problem& problem) {
  BackendOptions opt;
  opt.dim = 2;
  opt.penalty = config.training.penalty;
  opt.min_width = minimum_width(problem.domain(), config.training);
  return make_cpu_backend<double>(opt);
}

// Trains `config` from its initial network; with stop_after ≥ 0 interrupted after that many
// cycles; with `resume_from`, continued from that state instead.
StallRun train_stalling(const Config& config, long stop_after = -1,
                        const TrainerState<double>* resume_from = nullptr) {
  const Problem problem = Problem::build(config.problem);
  auto backend = cpu_backend(config, problem);
  RbfTrainer<double> trainer(config, problem, *backend);
  StallRun run;
  RestartHooks hooks;
  hooks.restarted = [&](long cycle, const std::string& note) {
    run.restart_cycles.push_back(cycle);
    run.restart_notes.push_back(note);
  };
  trainer.set_restart_hooks(hooks);
  const ReportFn<double> report = [&](long, double, const LossParts& loss, RbfBackend<double>&,
                                      bool) {
    run.best_loss = std::min(run.best_loss, loss.loss);
    return true;
  };
  long polls = 0;
  StopFn stop;
  if (stop_after >= 0) stop = [&] { return ++polls > stop_after; };
  if (resume_from) {
    run.outcome = trainer.resume(*resume_from, report, stop);
  } else {
    Rng rng(config.training.seed);
    const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, rng);
    run.outcome = trainer.train(init.params, report, stop);
  }
  run.state = trainer.state();
  return run;
}

TEST(Restarts, AStallFarAboveTheFloorIsRelocatedAndTheLossImproves) {
  const StallRun plain = train_stalling(stalling_config(0));
  ASSERT_EQ(plain.outcome.stop_reason, "converged");
  EXPECT_EQ(plain.state.restarts, 0);
  const StallRun restarted = train_stalling(stalling_config(2));
  std::printf("6 neurons: stalled at loss %.3e (cycle %ld); with restarts at", plain.best_loss,
              plain.outcome.cycles);
  for (long c : restarted.restart_cycles) std::printf(" %ld", c);
  std::printf(", best loss %.3e (%ld cycles, %s)\n", restarted.best_loss, restarted.outcome.cycles,
              restarted.outcome.stop_reason.c_str());
  ASSERT_GE(restarted.restart_cycles.size(), 1u);
  EXPECT_EQ(restarted.state.restarts, int(restarted.restart_cycles.size()));
  // Each restart moves twice as many neurons as the one before (1, then 2 of 6).
  for (std::size_t i = 0; i < restarted.restart_notes.size(); ++i) {
    const std::string moved =
        " " + std::to_string(relocated_count(6, int(i))) + " of 6 neurons moved";
    EXPECT_NE(restarted.restart_notes[i].find(moved), std::string::npos)
        << restarted.restart_notes[i];
  }
  // The first restart is the stall of the plain run: the same trajectory up to there.
  EXPECT_EQ(restarted.restart_cycles[0], plain.outcome.cycles);
  EXPECT_LT(restarted.best_loss, 0.9 * plain.best_loss);
}

// Interrupted before, at and after its restart (cycle 1296 in the portable build; the cycle
// depends on the rounding of the build), written to a checkpoint, read back and resumed, the run
// ends with the parameters, restart count and restart cycles of the run never stopped.
TEST(Restarts, AResumedRunContinuesAcrossARestart) {
  const Config config = stalling_config(2, 1500);
  const StallRun full = train_stalling(config);
  ASSERT_EQ(full.restart_cycles.size(), 1u);
  const long restart = full.restart_cycles[0];
  ASSERT_GT(restart, 300);
  const std::filesystem::path path =
      std::filesystem::path(RBFPDE_TEST_TMP) / "restarts_resume" / "state.bin";
  for (long stop_after : {restart - 296, restart - 1, restart + 54}) {
    SCOPED_TRACE(stop_after);
    const StallRun part = train_stalling(config, stop_after);
    ASSERT_EQ(part.outcome.stop_reason, "interrupted");
    // Stopped at the stall itself (the poll after the restart's cycle), the run restarts first
    // and stops at the next poll.
    EXPECT_EQ(part.state.restarts, stop_after >= restart - 1 ? 1 : 0);
    Checkpoint<TrainerState<double>> ck = new_checkpoint<TrainerState<double>>(config);
    ck.state = part.state;
    write_checkpoint(path, ck);
    const auto read = read_checkpoint<TrainerState<double>>(path, config);
    EXPECT_EQ(read.state.restarts, part.state.restarts);
    const StallRun resumed = train_stalling(config, -1, &read.state);
    EXPECT_EQ(resumed.state.restarts, full.state.restarts);
    EXPECT_EQ(resumed.outcome.cycles, full.outcome.cycles);
    EXPECT_EQ(resumed.outcome.stop_reason, full.outcome.stop_reason);
    EXPECT_EQ(resumed.state.params.weights, full.state.params.weights);
    EXPECT_EQ(resumed.state.params.centres, full.state.params.centres);
    EXPECT_EQ(resumed.state.params.widths, full.state.params.widths);
    EXPECT_EQ(resumed.state.mu, full.state.mu);
    // The restart after the resume happens at the same cycle as in the run never stopped.
    std::vector<long> all = part.restart_cycles;
    all.insert(all.end(), resumed.restart_cycles.begin(), resumed.restart_cycles.end());
    EXPECT_EQ(all, full.restart_cycles);
  }
}

// At a report that does not stop the run, slow progress (the hook's validation loss ratio, NaN
// when progress is not slow) restarts while a restart is left and the ratio is above 100 times
// the loss floor (10⁻¹² in double); the run goes on to max_cycles.
TEST(Restarts, SlowProgressFarAboveTheFloorRestarts) {
  struct Case {
    double ratio;
    int restarts;
    std::vector<long> expected;  // restart cycles (reports every 10 cycles)
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Case& c : {Case{1e-3, 2, {10, 20}}, Case{1e-3, 0, {}}, Case{2e-12, 1, {10}},
                        Case{5e-13, 3, {}}, Case{nan, 3, {}}}) {
    SCOPED_TRACE(c.ratio);
    Config config = stalling_config(c.restarts, 40);
    config.output.report_every = 10;
    const Problem problem = Problem::build(config.problem);
    auto backend = cpu_backend(config, problem);
    RbfTrainer<double> trainer(config, problem, *backend);
    std::vector<long> restarts;
    RestartHooks hooks;
    hooks.restarted = [&](long cycle, const std::string&) { restarts.push_back(cycle); };
    hooks.slow_loss_ratio = [&] { return c.ratio; };
    trainer.set_restart_hooks(hooks);
    const ReportFn<double> report = [](long, double, const LossParts&, RbfBackend<double>&,
                                       bool) { return true; };
    Rng rng(config.training.seed);
    const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, rng);
    const TrainOutcome outcome = trainer.train(init.params, report, StopFn{});
    EXPECT_EQ(restarts, c.expected);
    EXPECT_EQ(trainer.state().restarts, int(c.expected.size()));
    EXPECT_EQ(outcome.stop_reason, "max_cycles");
    EXPECT_EQ(outcome.cycles, 40);
  }
}

// A run that never stalls nor plateaus follows the same trajectory with restarts allowed or not:
// the same history and error through the whole solve, validation monitor included.
TEST(Restarts, ARunThatNeverStallsIsUnchanged) {
  using namespace test_runs;
  const std::vector<std::string> common = {"model.neurons=49", "training.max_cycles=60"};
  const std::vector<std::string> off = with(common, "training.restarts=0"),
                                 on = with(common, "training.restarts=3");
  const RunFiles a = run("poisson2d", "restarts_off", off);
  const RunFiles b = run("poisson2d", "restarts_on", on);
  EXPECT_EQ(a.result.outcome.stop_reason, "max_cycles");
  EXPECT_EQ(b.result.outcome.stop_reason, "max_cycles");
  EXPECT_EQ(history_without_times(a.dir + "/history.csv"),
            history_without_times(b.dir + "/history.csv"));
  EXPECT_EQ(a.result.errors.rel_l2, b.result.errors.rel_l2);
  EXPECT_EQ(a.result.outcome.loss.loss, b.result.outcome.loss.loss);
  EXPECT_EQ(summary_count(read_text(b.dir + "/summary.json"), "restarts"), 0);
}

// Through the whole solve, the validation monitor's plateau is answered by restarts, counted in
// summary.json, and the model written is validated better than without them.
TEST(Restarts, APlateauIsRelocatedAndTheValidationLossImproves) {
  using namespace test_runs;
  // A fixed initial width: the width search's fit (a candidate for the model written) is not
  // what this test compares.
  const std::vector<std::string> common = {"model.neurons=9", "training.max_cycles=1000",
                                           "training.patience=50", "model.init.width=1.5"};
  const std::vector<std::string> off = with(common, "training.restarts=0"),
                                 on = with(common, "training.restarts=3");
  const RunFiles a = run("poisson2d", "plateau_off", off);
  const RunFiles b = run("poisson2d", "plateau_on", on);
  std::printf("9 neurons: validation loss %.3e without restarts (%ld cycles), %.3e with (%ld)\n",
              a.result.validation.loss, a.result.outcome.cycles, b.result.validation.loss,
              b.result.outcome.cycles);
  EXPECT_EQ(a.result.outcome.stop_reason, "plateau");
  EXPECT_LT(b.result.validation.loss, 0.5 * a.result.validation.loss);
  EXPECT_LT(b.result.errors.rel_l2, a.result.errors.rel_l2);
  EXPECT_EQ(summary_count(read_text(a.dir + "/summary.json"), "restarts"), 0);
  EXPECT_EQ(summary_count(read_text(b.dir + "/summary.json"), "restarts"), 3);
}

// |F_k|² is twice the loss of the network of neuron k alone, with weight 1, on the batch with
// zero targets: the backend's own rows, general ones included.
TEST(NeuronRelocation, FeatureColumnsMatchTheBackendsRows) {
  for (bool general : {false, true}) {
    SCOPED_TRACE(general);
    CollocationBatch batch = test_inputs::random_batch(2, 37, 11, 5);
    std::fill(batch.f.begin(), batch.f.end(), 0.0);
    std::fill(batch.p.begin(), batch.p.end(), 0.0);
    if (general) {
      batch.a.assign(37, 0.7);
      batch.c.assign(37, -2.0);
      batch.b.assign(74, 0.3);
      batch.alpha.assign(11, 0.5);
      batch.beta.assign(11, 1.5);
      for (std::size_t j = 0; j < 11; ++j) batch.normals[2 * j + (j % 2)] = 1.0;
    }
    const RbfParameters<double> p = test_inputs::random_parameters<double>(2, 5, 9);
    const std::vector<double> squares = feature_column_squares(p, batch, 100.0, 37, 11);
    BackendOptions opt;
    opt.dim = 2;
    opt.penalty = 100;
    opt.min_width = 0;
    auto backend = make_cpu_backend<double>(opt);
    backend->set_batch(batch);
    for (int k = 0; k < p.neurons(); ++k) {
      RbfParameters<double> one;
      one.dim = 2;
      one.weights = {1.0};
      one.centres = {p.centres[2 * k], p.centres[2 * k + 1]};
      one.widths = {p.widths[k]};
      backend->set_parameters(one);
      EXPECT_NEAR(squares[k], 2 * backend->residuals().loss, 1e-12 * squares[k]) << k;
    }
  }
}

TEST(NeuronRelocation, LeastUsefulAndTargetsAreChosenByTheirRules) {
  // Usefulness |w|·|F|: 2·1, 0.5·4, 3·0.1, 0 → neurons 3, 2, then 0 and 1 tied (lower first).
  EXPECT_EQ(least_useful_neurons({2, 0.5, 3, 0}, {1, 16, 0.01, 5}, 3), (std::vector<int>{3, 2, 0}));
  // 5 % of the network at the first restart, twice the previous count at each later one, at most
  // half the network.
  EXPECT_EQ(relocated_count(6, 0), 1);
  EXPECT_EQ(relocated_count(6, 1), 2);
  EXPECT_EQ(relocated_count(6, 2), 3);
  EXPECT_EQ(relocated_count(196, 0), 10);
  EXPECT_EQ(relocated_count(196, 1), 20);
  EXPECT_EQ(relocated_count(196, 2), 40);
  EXPECT_EQ(relocated_count(196, 3), 80);
  EXPECT_EQ(relocated_count(196, 4), 98);
  EXPECT_EQ(relocated_count(196, 60), 98);
  EXPECT_EQ(relocated_count(1, 3), 1);
  // Candidates (score, x, y); −1 rows are padding.
  const std::vector<double> candidates = {0.5, 0.0, 0.0, 0.9, 0.5, 0.5, 0.8, 0.52, 0.5,
                                          -1,  0.0, 0.0, 0.7, 0.9, 0.1, 0.1, 0.3,  0.3};
  // Largest first, 0.52 too close to 0.5 at separation 0.1.
  EXPECT_EQ(choose_targets(candidates, 2, 3, 0.1),
            (std::vector<double>{0.5, 0.5, 0.9, 0.1, 0.0, 0.0}));
  EXPECT_EQ(choose_targets(candidates, 2, 2, 0.01), (std::vector<double>{0.5, 0.5, 0.52, 0.5}));
  // residual_peaks: scaled |e|/√N and √(λ/K)|b|, largest first, padded.
  CollocationBatch batch;
  batch.dim = 2;
  batch.interior = {0.1, 0.1, 0.2, 0.2};
  batch.f = {0, 0};
  batch.boundary = {0.0, 0.5};
  batch.p = {0};
  const std::vector<double> rows = residual_peaks(batch, {1.0, -4.0}, {0.1}, 100, 4, 25, 4);
  EXPECT_EQ(rows, (std::vector<double>{2.0, 0.2, 0.2, 0.5, 0.1, 0.1, 0.2, 0.0, 0.5, -1, 0, 0}));
}

}  // namespace
}  // namespace rbfpde
