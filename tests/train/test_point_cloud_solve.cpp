// A point-cloud domain that copies a disk (configs/disk_cloud.yaml: 4000 interior and 600 boundary
// points) solves the problem of configs/disk.yaml as well as the disk itself: the same small
// network and training budget on both, on the CPU, seeds 1–12, and the geometric mean of the
// cloud's relative L2 errors within a factor of 3 of the disk's. At this budget single seeds
// scatter by up to 100× (3e-6 to 3.5e-4), for the disk as for the cloud, and a change of rounding
// (another CPU, another compiler) redraws them: the log of a seed's cloud/disk ratio has a
// standard deviation of about 1.3, so over 4 seeds a factor of 3 was 1.7 standard deviations of
// the mean and failed on another machine; over 12 seeds it is about 3.
// Both errors are measured on the evaluation grid, clipped by each domain's own inside test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "solver/train/solve.hpp"

namespace rbfpde {
namespace {

// The budget: 36 neurons, 400 + 100 points, 40 varpro iterations (about 2 s a run).
const std::vector<std::string> kSmall = {"model.neurons=36", "training.points.interior=400",
                                         "training.points.boundary=100", "training.max_cycles=40",
                                         "compute.backend=cpu"};

SolveResult solve_small(const std::string& name, int seed) {
  const std::string dir =
      std::string(RBFPDE_TEST_TMP) + "/cloud_vs_disk_" + name + "_" + std::to_string(seed);
  std::filesystem::remove_all(dir);
  std::vector<std::string> overrides = kSmall;
  overrides.push_back("output.directory=" + dir);
  overrides.push_back("training.seed=" + std::to_string(seed));
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/" + name + ".yaml", overrides);
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  const SolveResult r = solve(config, problem, options);
  std::printf("%s, seed %d: %ld cycles, %.2f s: relative L2 error %.3e, max error %.3e\n",
              name.c_str(), seed, r.outcome.cycles, r.outcome.seconds, r.errors.rel_l2,
              r.errors.max);
  return r;
}

TEST(PointCloudSolve, DiskCloudMatchesTheDisk) {
  constexpr int kSeeds = 12;
  double log_disk = 0, log_cloud = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const SolveResult disk = solve_small("disk", seed);
    const SolveResult cloud = solve_small("disk_cloud", seed);
    ASSERT_EQ(disk.exit_code, 0);
    ASSERT_EQ(cloud.exit_code, 0);
    ASSERT_GT(disk.errors.rel_l2, 0);
    ASSERT_GT(cloud.errors.rel_l2, 0);
    EXPECT_LE(cloud.errors.rel_l2, 1e-3);
    log_disk += std::log(disk.errors.rel_l2) / kSeeds;
    log_cloud += std::log(cloud.errors.rel_l2) / kSeeds;
  }
  std::printf("geometric mean of the relative L2 errors: disk %.3e, cloud %.3e\n",
              std::exp(log_disk), std::exp(log_cloud));
  // Measured on the 2-core development machine: 2.66e-5 and 3.08e-5 (seeds 1–4 on the CI machine:
  // 5.43e-5 and 1.58e-5, a factor of 3.4).
  EXPECT_LE(log_cloud, log_disk + std::log(3.0));
  EXPECT_GE(log_cloud, log_disk - std::log(3.0));
}

}  // namespace
}  // namespace rbfpde
