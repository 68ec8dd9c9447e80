// Runs of a shipped config through solve() for the checkpoint tests of both models: stopped after
// a number of cycles as SIGINT would stop them, resumed from their checkpoint, and compared with
// the run that was never stopped.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "solver/train/solve.hpp"

namespace rbfpde::test_runs {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// history.csv without the seconds column, which differs between runs by nature.
inline std::string history_without_times(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line, out;
  while (std::getline(in, line)) {
    const auto a = line.find(','), b = line.find(',', a + 1);
    out += line.substr(0, a) + line.substr(b) + "\n";
  }
  return out;
}

struct RunFiles {
  SolveResult result;
  std::string dir;
};

// configs/<config_name>.yaml with `extra` overrides, on `backend`, into
// RBFPDE_TEST_TMP/checkpoint_<tag> (emptied first unless resuming). With stop_after ≥ 0 the
// run is interrupted at the poll after that many: after stop_after + 1 cycles where the backend
// polls after every cycle (the CPU; the CUDA MLP backend polls after each chunk of steps).
inline RunFiles run(const std::string& config_name, const std::string& tag,
                    std::vector<std::string> extra, long stop_after = -1, bool resume = false,
                    const std::string& backend = "cpu") {
  RunFiles r;
  r.dir = std::string(RBFPDE_TEST_TMP) + "/checkpoint_" + tag;
  if (!resume) std::filesystem::remove_all(r.dir);
  extra.push_back("output.directory=" + r.dir);
  extra.push_back("compute.backend=" + backend);
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/" + config_name + ".yaml", extra);
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  options.resume = resume;
  long polls = 0;
  if (stop_after >= 0) options.should_stop = [&] { return ++polls > stop_after; };
  r.result = solve(config, problem, options);
  return r;
}

// A run stopped after stop_after + 1 cycles and resumed ends with the model, history, cycle
// count and error of the run never stopped. `tag` names the output directories: tests may run
// in parallel (ctest -j).
inline void check_resume_matches(const std::string& config_name, const std::string& tag,
                                 const std::vector<std::string>& extra, long stop_after,
                                 const std::string& backend = "cpu") {
  const RunFiles full = run(config_name, tag + "_full", extra, -1, false, backend);
  const RunFiles part = run(config_name, tag + "_part", extra, stop_after, false, backend);
  ASSERT_EQ(part.result.outcome.stop_reason, "interrupted");
  if (backend == "cpu") {
    EXPECT_EQ(part.result.outcome.cycles, stop_after + 1);
  }
  EXPECT_LT(part.result.outcome.cycles, full.result.outcome.cycles);
  EXPECT_TRUE(std::filesystem::exists(part.dir + "/checkpoint/state.bin"));
  EXPECT_TRUE(std::filesystem::exists(part.dir + "/model.yaml"));
  EXPECT_NE(read_text(full.dir + "/model.yaml"), read_text(part.dir + "/model.yaml"));
  const RunFiles resumed = run(config_name, tag + "_part", extra, -1, true, backend);
  EXPECT_EQ(resumed.result.backend, backend);
  EXPECT_EQ(resumed.result.outcome.stop_reason, full.result.outcome.stop_reason);
  EXPECT_EQ(resumed.result.outcome.cycles, full.result.outcome.cycles);
  EXPECT_EQ(read_text(full.dir + "/model.yaml"), read_text(part.dir + "/model.yaml"));
  EXPECT_EQ(history_without_times(full.dir + "/history.csv"),
            history_without_times(part.dir + "/history.csv"));
  EXPECT_EQ(full.result.errors.rel_l2, resumed.result.errors.rel_l2);
  EXPECT_EQ(full.result.outcome.loss.loss, resumed.result.outcome.loss.loss);
}

}  // namespace rbfpde::test_runs
