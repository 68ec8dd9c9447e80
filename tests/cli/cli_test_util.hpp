// Helpers for the end-to-end tests of the rbfpde binary: run it in a fresh working directory with
// stdout, stderr and the exit status captured separately, and look at the files it leaves.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace rbfpde::cli_test {

namespace fs = std::filesystem;

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// A fresh, empty directory under RBFPDE_TEST_TMP named after the running test; removed when the
// test passes, kept for inspection when it fails.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "." + info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    path_ = fs::path(RBFPDE_TEST_TMP) / name;
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    if (!::testing::Test::HasFailure()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  fs::path path_;
};

struct RunResult {
  int exit_code = -1;  // the exit status, or 128 + signal
  std::string out, err;
};

// Starts RBFPDE_BINARY with `args` in the working directory `cwd`; stdin is /dev/null, stdout
// and stderr go to the given files. Returns the child's pid.
inline pid_t spawn_rbfpde(const std::vector<std::string>& args, const fs::path& cwd,
                          const fs::path& out_path, const fs::path& err_path) {
  std::vector<std::string> argv_storage;
  argv_storage.push_back(RBFPDE_BINARY);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 ||
        ::dup2(err, 2) < 0 || ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits for `pid`: its exit status, or 128 + the signal that ended it.
inline int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Runs RBFPDE_BINARY with `args` in the working directory `cwd`; stdin is /dev/null, stdout and
// stderr go to files outside `cwd` (so they are not terminals and do not show up in its listing).
inline RunResult run_rbfpde(const std::vector<std::string>& args, const fs::path& cwd) {
  static int counter = 0;
  const fs::path capture = fs::path(RBFPDE_TEST_TMP) / "capture";
  fs::create_directories(capture);
  const std::string stem = std::to_string(::getpid()) + "." + std::to_string(counter++);
  const fs::path out_path = capture / (stem + ".out"), err_path = capture / (stem + ".err");
  const int code = wait_exit(spawn_rbfpde(args, cwd, out_path, err_path));
  RunResult r;
  r.exit_code = code;
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  fs::remove(out_path);
  fs::remove(err_path);
  return r;
}

// A fixture whose suite shares one CPU solve, `rbfpde solve c.yaml --backend cpu -q ARGS...` with
// c.yaml = Run::config() and ARGS = Run::arguments(), in run_dir(): one directory per process
// (Run::kName + "SuiteRun.<pid>"), since ctest -j runs the suite's tests in parallel processes and
// a directory removed under another's run fails the set-up (which gtest reports as skipped tests).
// The directory is removed after the suite unless a test failed.
template <class Run>
class SharedRunTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_dir() = fs::path(RBFPDE_TEST_TMP) /
                (std::string(Run::kName) + "SuiteRun." + std::to_string(::getpid()));
    fs::remove_all(run_dir());
    fs::create_directories(run_dir());
    write_text(run_dir() / "c.yaml", Run::config());
    std::vector<std::string> args = {"solve", "c.yaml", "--backend", "cpu", "-q"};
    const std::vector<std::string> extra = Run::arguments();
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = run_rbfpde(args, run_dir());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    if (!::testing::UnitTest::GetInstance()->Failed()) {
      std::error_code ec;
      fs::remove_all(run_dir(), ec);
    }
  }
  static fs::path& run_dir() {
    static fs::path dir;
    return dir;
  }
};

// Every file under `root` (relative path → content); directories appear with content "<dir>".
inline std::map<std::string, std::string> tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(entry.path(), root).string();
    files[rel] = entry.is_directory() ? "<dir>" : read_text(entry.path());
  }
  return files;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A tiny valid problem: the seed's Poisson problem on [0,1]², written to finish in milliseconds.
// Tests derive their configs from it with replace_once(). Trained by gdcg: its quarter-width step
// limit keeps the 16 neurons' widths sound on 40 + 16 points, so a run exits 0 however long it
// goes (lm on so few points collapses neurons to the width floor, an unsound result: exit 3).
inline const char* const kTinyConfig =
    "name: tiny\n"                                        // 1
    "problem:\n"                                          // 2
    "  domain:\n"                                         // 3
    "    type: rectangle\n"                               // 4
    "    min: [0, 0]\n"                                   // 5
    "    max: [1, 1]\n"                                   // 6
    "  equation:\n"                                       // 7
    "    type: poisson\n"                                 // 8
    "    f: \"sin(pi*x)*sin(pi*y)\"\n"                    // 9
    "  boundary:\n"                                       // 10
    "    - type: dirichlet\n"                             // 11
    "      value: \"0\"\n"                                // 12
    "  exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"\n"        // 13
    "model:\n"                                            // 14
    "  type: rbf\n"                                       // 15
    "  neurons: 16\n"                                     // 16
    "training:\n"                                         // 17
    "  method: gdcg\n"                                    // 18
    "  points: { interior: 40, boundary: 16 }\n"          // 19
    "  max_cycles: 3\n"                                   // 20
    "output:\n"                                           // 21
    "  directory: out\n";                                 // 22

// `text` with the first occurrence of `from` replaced by `to`; throws when `from` is absent, so
// that a typo in a test's mutation cannot silently leave the config valid.
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::invalid_argument("not in the config: " + from);
  return text.replace(at, from.size(), to);
}

// kTinyConfig's network swapped for a 2-16-16-1 MLP trained by Adam.
inline std::string tiny_mlp_config() {
  return replace_once(replace_once(kTinyConfig, "  type: rbf\n  neurons: 16\n",
                                   "  type: mlp\n  layers: [16, 16]\n"),
                      "method: gdcg", "method: adam");
}

// The number after "key": in a JSON text (first occurrence); NaN when absent or not a number.
inline double json_number(const std::string& json, const std::string& key) {
  const std::string pattern = "\"" + key + "\":";
  const std::size_t at = json.find(pattern);
  if (at == std::string::npos) return std::nan("");
  const char* begin = json.c_str() + at + pattern.size();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  return end == begin ? std::nan("") : v;
}

// The raw value text after "key": up to the next ',' or newline (first occurrence).
inline std::string json_raw(const std::string& json, const std::string& key) {
  const std::string pattern = "\"" + key + "\":";
  const std::size_t at = json.find(pattern);
  if (at == std::string::npos) return "";
  std::size_t begin = at + pattern.size();
  while (begin < json.size() && json[begin] == ' ') ++begin;
  std::size_t end = json.find_first_of(",\n}", begin);
  return json.substr(begin, end - begin);
}

}  // namespace rbfpde::cli_test
