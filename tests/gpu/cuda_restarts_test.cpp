// Variable projection's restarts on the CUDA backend (docs/mathematics.md, "Restarts"): the
// relocation runs on the host through parameters(), residual_vectors(), batch(), set_parameters()
// and solve_weights_qr(), so a stall and a plateau are answered on the GPU as on the CPU (the
// CPU's are tested in tests/train/test_restarts.cpp). The trajectories differ by rounding, so
// the tests compare each GPU run with restarts against the same GPU run without them.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "solver/config/config.hpp"
#include "solver/train/solve.hpp"
#include "tests/common/summary_counts.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using test_inputs::summary_count;
using test_inputs::with;

struct GpuRun {
  SolveResult result;
  std::string summary;
};

GpuRun solve_cuda(const std::string& tag, std::vector<std::string> sets) {
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/restarts_" + tag;
  std::filesystem::remove_all(dir);
  sets.push_back("output.directory=" + dir);
  sets.push_back("compute.backend=cuda");
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d.yaml", sets);
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  GpuRun run;
  run.result = solve(config, problem, options);
  std::ifstream in(dir + "/summary.json");
  std::stringstream ss;
  ss << in.rdbuf();
  run.summary = ss.str();
  std::printf("%s: %s after %ld cycles, validation loss %.3e, relative L2 %.3e\n", tag.c_str(),
              run.result.outcome.stop_reason.c_str(), run.result.outcome.cycles,
              run.result.validation.loss, run.result.errors.rel_l2);
  return run;
}

// Six neurons on 200 + 60 fixed points with no plateau rule: variable projection stalls in a
// local minimum far above the loss floor (on the CPU at iteration 1296).
TEST(CudaRestarts, AStallIsRelocatedAndTheValidationLossImproves) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const std::vector<std::string> common = {"model.neurons=6", "training.points.interior=200",
                                           "training.points.boundary=60", "training.patience=0",
                                           "training.max_cycles=3000"};
  const std::vector<std::string> off = with(common, "training.restarts=0"),
                                 on = with(common, "training.restarts=2");
  const GpuRun a = solve_cuda("stall_off", off);
  const GpuRun b = solve_cuda("stall_on", on);
  ASSERT_EQ(a.result.outcome.stop_reason, "converged");
  EXPECT_GE(summary_count(b.summary, "restarts"), 1) << b.summary;
  EXPECT_GT(b.result.outcome.cycles, a.result.outcome.cycles);
  EXPECT_LT(b.result.validation.loss, 0.9 * a.result.validation.loss);
}

// Nine neurons with the default plateau rule: every restart answers a plateau, and the model
// written is validated better than without restarts.
TEST(CudaRestarts, APlateauIsRelocatedAndTheValidationLossImproves) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  // A fixed initial width: the width search's fit (a candidate for the model written) is not
  // what this test compares.
  const std::vector<std::string> common = {"model.neurons=9", "training.max_cycles=1000",
                                           "training.patience=50", "model.init.width=1.5"};
  const std::vector<std::string> off = with(common, "training.restarts=0"),
                                 on = with(common, "training.restarts=3");
  const GpuRun a = solve_cuda("plateau_off", off);
  const GpuRun b = solve_cuda("plateau_on", on);
  EXPECT_EQ(a.result.outcome.stop_reason, "plateau");
  EXPECT_EQ(summary_count(b.summary, "restarts"), 3) << b.summary;
  EXPECT_LT(b.result.validation.loss, 0.5 * a.result.validation.loss);
  EXPECT_EQ(b.result.exit_code, 0) << b.result.unsound;
}

}  // namespace
}  // namespace rbfpde
