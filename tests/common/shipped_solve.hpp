// A shipped config (configs/NAME.yaml) with overrides, solved quietly on the CPU backend into a
// directory of its own under RBFPDE_TEST_TMP: PREFIX_TEST_RUN, one per test and run, since ctest
// -j runs tests side by side.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "solver/train/solve.hpp"

namespace rbfpde {

struct ShippedSolve {
  Config config;
  SolveResult result;
};

inline ShippedSolve solve_shipped(const std::string& prefix, const std::string& name,
                                  const std::vector<std::string>& extra) {
  static int runs = 0;
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/" + prefix + "_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                          std::to_string(runs++);
  std::filesystem::remove_all(dir);
  std::vector<std::string> overrides = {"output.directory=" + dir, "compute.backend=cpu"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  ShippedSolve run;
  run.config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/" + name + ".yaml", overrides);
  const Problem problem = Problem::build(run.config.problem);
  SolveOptions options;
  options.quiet = true;
  run.result = solve(run.config, problem, options);
  return run;
}

}  // namespace rbfpde
