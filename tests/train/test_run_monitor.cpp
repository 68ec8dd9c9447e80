// RunMonitor (solver/train/validation.hpp): the plateau rule (training.patience counts cycles, so
// the same run stops at the same cycle whether reports come every cycle or every ten), and the
// zero-function check.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "solver/train/validation.hpp"
#include "tests/common/seed_problem.hpp"

namespace rbfpde {
namespace {

// The seed problem with a small validation set, no tolerance and the given patience.
Config monitor_config(int patience) {
  Config config;
  config.name = "monitor";
  config.problem = test_inputs::seed_problem_spec();
  config.training.points_interior = 50;
  config.training.points_boundary = 20;
  config.training.patience = patience;
  config.training.tolerance = 0;
  return config;
}

// A sound report at `cycle` with validation and training loss `loss` (residuals 1e-3 both).
void observe_loss(RunMonitor<std::vector<double>>& monitor, long cycle, double loss) {
  const std::vector<double> grid_u(10, 0.01);
  ValidationFigures v;
  v.rms_interior = 1e-3;
  v.rms_boundary = 1e-3;
  v.loss = loss;
  v.max_abs_u = 0.01;
  LossParts train;
  train.rms_interior = 1e-3;
  train.rms_boundary = 1e-3;
  train.loss = loss;
  monitor.observe(cycle, train, v, grid_u, "", {});
}

// The cycle at which a run whose validation loss improves by 10 % per cycle up to cycle 30 and
// then stays flat stops, with reports every `report_every` cycles.
long plateau_cycle(int report_every, int patience) {
  const Config config = monitor_config(patience);
  const Problem problem = Problem::build(config.problem);
  ValidationSet validation(config, problem);
  RunMonitor<std::vector<double>> monitor(config, problem, validation);
  for (long cycle = report_every; cycle <= 1000; cycle += report_every) {
    const long improving = cycle < 30 ? cycle : 30;
    observe_loss(monitor, cycle, std::pow(0.9, double(improving)));
    if (monitor.should_stop()) {
      EXPECT_EQ(monitor.verdict().stop_reason, "plateau");
      return cycle;
    }
  }
  return -1;
}

TEST(RunMonitor, PatienceCountsCyclesNotReports) {
  // The last improvement is at cycle 30: the run stops at the first report ≥ 30 + 50.
  EXPECT_EQ(plateau_cycle(1, 50), 80);
  EXPECT_EQ(plateau_cycle(5, 50), 80);
  EXPECT_EQ(plateau_cycle(10, 50), 80);
  // Reports at 28 and 35 both improve (the loss falls until cycle 30): 91 is the first ≥ 35 + 50.
  EXPECT_EQ(plateau_cycle(7, 50), 91);
  EXPECT_EQ(plateau_cycle(10, 0), -1);  // patience 0: never
}

// Slow progress: the validation loss falling 0.1 % a cycle (1 % every ten cycles, so no plateau)
// takes 106 cycles to fall by 10 %; with patience 50, progress is slow from cycle 51 (the first
// report is the reference) until that improvement at cycle 107, and again from 157. A restart counts
// the patience afresh. Falling 1 % a cycle, progress is never slow.
TEST(RunMonitor, SlowProgressIsUnderTenPercentInPatienceCycles) {
  const Config config = monitor_config(50);
  const Problem problem = Problem::build(config.problem);
  ValidationSet validation(config, problem);
  for (double rate : {0.999, 0.99}) {
    SCOPED_TRACE(rate);
    for (long restart_at : {-1L, 120L}) {
      SCOPED_TRACE(restart_at);
      RunMonitor<std::vector<double>> monitor(config, problem, validation);
      std::vector<long> slow;
      for (long cycle = 1; cycle <= 170; ++cycle) {
        observe_loss(monitor, cycle, std::pow(rate, double(cycle - 1)));
        if (cycle == restart_at) monitor.restarted(cycle);
        if (monitor.slow()) slow.push_back(cycle);
        EXPECT_FALSE(monitor.should_stop()) << cycle;
      }
      if (rate == 0.99) {
        EXPECT_TRUE(slow.empty());
        continue;
      }
      std::vector<long> expected;
      for (long c = 51; c <= 106; ++c) expected.push_back(c);
      // After a restart at 120 the patience counts from there: slow again from 170.
      for (long c = restart_at < 0 ? 157 : 170; c <= 170; ++c) expected.push_back(c);
      EXPECT_EQ(slow, expected);
    }
  }
}

// A network that is zero to rounding (weights of 1e-293, say) has the validation loss of the zero
// function, ½ RMS f² + ½ λ RMS p²: unsound, and never the best state. Half that loss is sound.
TEST(RunMonitor, TheZeroFunctionIsUnsound) {
  Config config;
  config.name = "monitor";
  config.problem = test_inputs::seed_problem_spec();
  config.training.points_interior = 50;
  config.training.points_boundary = 20;
  const Problem problem = Problem::build(config.problem);
  ValidationSet validation(config, problem);
  RunMonitor<std::vector<double>> monitor(config, problem, validation);
  ASSERT_GT(monitor.data_loss(), 0.0);
  const std::vector<double> grid_u(10, 1e-293);
  ValidationFigures v;
  v.max_abs_u = 1e-293;
  v.rms_interior = std::sqrt(2 * monitor.data_loss());  // p = 0 on the seed problem's boundary
  v.rms_boundary = 0;
  v.loss = monitor.data_loss();
  LossParts train;
  train.rms_interior = v.rms_interior;
  train.loss = v.loss;
  const std::string why = monitor.observe(10, train, v, grid_u, "", {});
  EXPECT_NE(why.find("is that of the zero function"), std::string::npos) << why;
  EXPECT_NE(why.find("(cycle 10)"), std::string::npos) << why;
  EXPECT_FALSE(monitor.has_best());
  v.loss = 0.5 * monitor.data_loss();
  v.max_abs_u = 0.01;
  const std::vector<double> trained_u(10, 0.01);
  EXPECT_EQ(monitor.observe(20, train, v, trained_u, "", {}), "");
  EXPECT_TRUE(monitor.has_best());
  EXPECT_EQ(monitor.verdict().best_cycle, 20);
}

}  // namespace
}  // namespace rbfpde
