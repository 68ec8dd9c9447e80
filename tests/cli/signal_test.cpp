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

// Interrupts a long run of `base` (kTinyConfig or a variant) once it has reported, then resumes
// it and compares with a run that was never interrupted.
void interrupt_and_resume(int sig, const std::string& base = kTinyConfig) {
  TempDir tmp;
  const bool mlp = base.find("type: mlp") != std::string::npos;
  const long max_cycles = 100000000;
  const std::string config =
      replace_once(replace_once(base, "max_cycles: 3", "max_cycles: " + std::to_string(max_cycles)),
                   "directory: out", "directory: run");
  write_text(tmp / "c.yaml", config);
  const fs::path err_path = tmp / "stderr.txt";
  const pid_t pid = spawn_rbfpde({"solve", "c.yaml"}, tmp.path(), "/dev/null", err_path);
  // Wait for the first progress line: training is under way.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto progress = [&] { return fs::exists(err_path) ? read_text(err_path) : std::string(); };
  while (progress().find("cycle ") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline)
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
  EXPECT_NE(read_text(tmp / "run" / "summary.json").find("\"stop_reason\": \"interrupted\""),
            std::string::npos);

  const std::string until = "training.max_cycles=" + std::to_string(cycle + 25);
  const RunResult resumed =
      run_rbfpde({"solve", "c.yaml", "--resume", "--quiet", "--set", until}, tmp.path());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  const RunResult straight = run_rbfpde(
      {"solve", "c.yaml", "--quiet", "--set", until, "--set", "output.directory=straight"},
      tmp.path());
  EXPECT_EQ(straight.exit_code, 0) << straight.err;
  EXPECT_EQ(read_text(tmp / "run" / "model.yaml"), read_text(tmp / "straight" / "model.yaml"));
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
