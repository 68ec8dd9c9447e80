// A run too large for the host is refused before it starts, naming the memory asked for and
// the memory available.
#include <gtest/gtest.h>

#include <filesystem>

#include "solver/train/memory_check.hpp"
#include "solver/train/solve.hpp"

namespace rbfpde {
namespace {

Config seed_config(const std::vector<std::string>& overrides) {
  return load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_lm.yaml", overrides);
}

TEST(MemoryCheck, EstimateCountsFeaturesAndJacobian) {
  const Config c = seed_config({"model.neurons=1000", "training.points.interior=9000",
                                "training.points.boundary=1000", "output.resolution=[10, 10]"});
  const double p = 1000.0 * 4;
  const double expected = 10000.0 * 1000 * 8 + 1000.0 * 1000 * 8 * 2 + 10000.0 * p * 8 +
                          3 * p * p * 8 + 100.0 * 64;
  EXPECT_NEAR(double(estimate_cpu_bytes(c, 2)), expected, 1.0);
  EXPECT_GT(host_available_bytes(), 0u);
}

TEST(MemoryCheck, TooLargeARunIsRefusedBeforeAnythingIsWritten) {
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/too_large";
  std::filesystem::remove_all(dir);
  // 200000 neurons × 2e6 points in double: 3.2 TB of features alone.
  const Config c = seed_config({"model.neurons=200000", "training.points.interior=2000000",
                                "output.directory=" + dir, "compute.backend=cpu"});
  const Problem problem = Problem::build(c.problem);
  SolveOptions options;
  options.quiet = true;
  try {
    solve(c, problem, options);
    FAIL() << "expected the run to be refused";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("needs about"), std::string::npos) << what;
    EXPECT_NE(what.find("GiB available"), std::string::npos) << what;
    EXPECT_EQ(e.key(), "model.neurons");
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace
}  // namespace rbfpde
