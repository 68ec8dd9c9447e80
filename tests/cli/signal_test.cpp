// SIGINT and SIGTERM during `rbfpde solve` (RBF network and MLP): the current cycle finishes,
// every output and a checkpoint are written, the exit code is 128 + signal, and `--resume`
// continues to the same parameters as a run that was never interrupted.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "cli_test_util.hpp"

namespace rbfpde {
namespace {

using namespace rbfpde::cli_test;

// Interrupts a long run of `base` (kTinyConfig or a variant) once training is under way, then
// resumes it and compares with a run that was never interrupted. The model written is the best
// sound state seen at a report, and a resumed run judges only the reports after its resume (the
// checkpoint does not hold the monitor's best state), so the runs report at their end only
// (report_every beyond any cycle count): both write their final state, which must agree.
void interrupt_and_resume(int sig, const std::string& base = kTinyConfig) {
  TempDir tmp;
  const bool mlp = base.find("type: mlp") != std::string::npos;
  const long max_cycles = 100000000;
  const std::string config =
      replace_once(replace_once(base, "max_cycles: 3", "max_cycles: " + std::to_string(max_cycles)),
                   "directory: out", "directory: run\n  report_every: 2000000000");
  write_text(tmp / "c.yaml", config);
  const fs::path err_path = tmp / "stderr.txt";
  const pid_t pid = spawn_rbfpde({"solve", "c.yaml"}, tmp.path(), "/dev/null", err_path);
  // Wait for the output directory, created as training begins.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(tmp / "run") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(pid, sig);
  EXPECT_EQ(wait_exit(pid), 128 + sig);
  const std::string err = read_text(err_path);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex("interrupted at cycle ([0-9]+)"))) << err;
  const long cycle = std::stol(m[1]);
  ASSERT_GT(cycle, 0);
  ASSERT_LT(cycle, max_cycles);
  for (const char* f : {"solution.vtu", "centres.vtp", "collocation.vtp", "history.csv",
                        "summary.json", "model.yaml", "checkpoint/state.bin"})
    if (!(mlp && std::string(f) == "centres.vtp")) {  // an MLP has no centres
      EXPECT_TRUE(fs::exists(tmp / "run" / f)) << f;
    }
  const std::string interrupted = read_text(tmp / "run" / "summary.json");
  EXPECT_NE(interrupted.find("\"stop_reason\": \"interrupted\""), std::string::npos);
  EXPECT_EQ(json_raw(interrupted, "sound"), "true") << interrupted;
  EXPECT_EQ(json_number(interrupted, "best_cycle"), cycle) << interrupted;
  // The progress line of the one report: the interrupted cycle.
  EXPECT_NE(err.find("cycle " + std::to_string(cycle) + "/" + std::to_string(max_cycles) +
                     "  loss "),
            std::string::npos)
      << err;

  const std::string until = "training.max_cycles=" + std::to_string(cycle + 25);
  const RunResult resumed =
      run_rbfpde({"solve", "c.yaml", "--resume", "--quiet", "--set", until}, tmp.path());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  const RunResult straight = run_rbfpde(
      {"solve", "c.yaml", "--quiet", "--set", until, "--set", "output.directory=straight"},
      tmp.path());
  EXPECT_EQ(straight.exit_code, 0) << straight.err;
  EXPECT_EQ(read_text(tmp / "run" / "model.yaml"), read_text(tmp / "straight" / "model.yaml"));
  const std::string a = read_text(tmp / "run" / "summary.json"),
                    b = read_text(tmp / "straight" / "summary.json");
  EXPECT_EQ(json_number(a, "best_cycle"), cycle + 25) << a;
  EXPECT_EQ(json_number(b, "best_cycle"), cycle + 25) << b;
  EXPECT_EQ(json_number(a, "relative_l2_error"), json_number(b, "relative_l2_error"));
  EXPECT_EQ(json_number(a, "error_estimate"), json_number(b, "error_estimate"));
  // The history of the resumed run is that of the straight run (the row of the report at the
  // interruption is not carried over): one row, at cycle + 25, with the same values but time.
  auto without_seconds = [](const std::string& csv) {
    std::string out;
    for (const std::string& line : lines_of(csv)) {
      const auto first = line.find(','), second = line.find(',', first + 1);
      out += line.substr(0, first) + line.substr(second) + "\n";
    }
    return out;
  };
  const std::string history = read_text(tmp / "run" / "history.csv");
  EXPECT_EQ(lines_of(history).size(), 2u) << history;
  EXPECT_EQ(lines_of(history).back().rfind(std::to_string(cycle + 25) + ",", 0), 0u) << history;
  EXPECT_EQ(without_seconds(history), without_seconds(read_text(tmp / "straight" / "history.csv")));
}

TEST(CliSignals, SigintWritesEverythingAndResumesToTheSameResult) { interrupt_and_resume(SIGINT); }
TEST(CliSignals, SigtermWritesEverythingAndResumesToTheSameResult) {
  interrupt_and_resume(SIGTERM);
}
TEST(CliSignals, SigintDuringAnMlpSolveResumesToTheSameResult) {
  interrupt_and_resume(SIGINT, tiny_mlp_config());
}

}  // namespace
}  // namespace rbfpde
