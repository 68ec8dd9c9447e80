// The pictures a run and a comparison leave behind (docs/outputs.md, "Pictures"), and the key
// and flag that turn them off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.hpp"

namespace rbfpde::cli_test {
namespace {

const std::vector<std::string> kRunPictures = {"convergence.png", "solution.png", "error.png"};

bool is_png(const std::string& bytes) {
  return bytes.size() > 33 && bytes.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0 &&
         bytes.compare(12, 4, "IHDR") == 0;
}

std::uint32_t png_width(const std::string& bytes) {
  std::uint32_t w = 0;
  for (int i = 16; i < 20; ++i) w = (w << 8) | std::uint8_t(bytes[i]);
  return w;
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> pngs_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".png") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string small(const std::string& config) {
  return replace_once(config, "  directory: out\n", "  directory: out\n  resolution: [31, 31]\n");
}

// The tiny problem in 3D: the unit ball, u = x² + y² + z² − 1.
std::string tiny_ball_config() {
  std::string c = kTinyConfig;
  c = replace_once(c, "    type: rectangle\n    min: [0, 0]\n    max: [1, 1]\n",
                   "    type: ball\n    centre: [0, 0, 0]\n    radius: 1\n");
  c = replace_once(c, "f: \"sin(pi*x)*sin(pi*y)\"", "f: \"6\"");
  c = replace_once(c, "exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"", "exact: \"x^2+y^2+z^2-1\"");
  c = replace_once(c, "neurons: 16", "neurons: 27");
  return replace_once(c, "  directory: out\n", "  directory: out\n  resolution: [13, 13, 13]\n");
}

// The tiny MLP under another name, writing into outmlp.
std::string tiny_mlp() {
  return replace_once(replace_once(small(tiny_mlp_config()), "name: tiny", "name: tinymlp"),
                      "directory: out\n", "directory: outmlp\n");
}

#ifdef RBFPDE_HAVE_PLPLOT

TEST(CliPictures, SolveDrawsPicturesThatChangeWithTheResult) {
  TempDir dir;
  write_text(dir / "a.yaml", small(kTinyConfig));
  write_text(dir / "b.yaml", replace_once(small(kTinyConfig), "f: \"sin(pi*x)*sin(pi*y)\"",
                                          "f: \"2*sin(pi*x)*sin(pi*y)\""));
  const RunResult a =
      run_rbfpde({"solve", "a.yaml", "-q", "--set", "output.directory=a"}, dir.path());
  const RunResult b =
      run_rbfpde({"solve", "b.yaml", "-q", "--set", "output.directory=b"}, dir.path());
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.err, "");
  for (const std::string& name : kRunPictures) {
    const std::string pa = read_text(dir / "a" / name), pb = read_text(dir / "b" / name);
    EXPECT_TRUE(is_png(pa)) << name;
    EXPECT_TRUE(is_png(pb)) << name;
    EXPECT_NE(std::hash<std::string>()(pa), std::hash<std::string>()(pb))
        << name << " is the same for two runs with different results";
  }
  for (const std::string& name : files_in(dir / "a")) EXPECT_NE(name.front(), '.') << name;
}

TEST(CliPictures, BallDrawsThreeSlicesSideBySide) {
  TempDir dir;
  write_text(dir / "c.yaml", tiny_ball_config());
  const RunResult r = run_rbfpde({"solve", "c.yaml", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(pngs_in(dir / "out"),
            (std::vector<std::string>{"convergence.png", "error.png", "solution.png"}));
  const std::string solution = read_text(dir / "out/solution.png");
  ASSERT_TRUE(is_png(solution));
  EXPECT_EQ(png_width(solution), 620u * 3 + 160) << "three panels";
}

TEST(CliPictures, CompareDrawsTheRunsAgainstTime) {
  TempDir dir;
  write_text(dir / "rbf.yaml", small(kTinyConfig));
  write_text(dir / "mlp.yaml", tiny_mlp());
  const RunResult r = run_rbfpde(
      {"compare", "rbf.yaml", "mlp.yaml", "-q", "--set", "output.directory=runs/x"}, dir.path());
  // Both runs would write into runs/x: the config's error, nothing written.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  const RunResult c = run_rbfpde({"compare", "rbf.yaml", "mlp.yaml", "-q"}, dir.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("comparison picture: ./comparison_tiny_vs_tinymlp.png"), std::string::npos)
      << c.out;
  EXPECT_TRUE(is_png(read_text(dir / "comparison_tiny_vs_tinymlp.png")));
}

#else

TEST(CliPictures, BuildWithoutPlplotSaysSoAndDrawsNothing) {
  TempDir dir;
  write_text(dir / "c.yaml", small(kTinyConfig));
  const RunResult r = run_rbfpde({"solve", "c.yaml"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: pictures not written: this build has no PLplot"), std::string::npos)
      << r.err;
  EXPECT_TRUE(pngs_in(dir / "out").empty());
}

#endif

TEST(CliPictures, KeyAndFlagTurnThemOff) {
  TempDir dir;
  write_text(dir / "c.yaml", small(kTinyConfig) + "  pictures: false\n");
  const RunResult key = run_rbfpde({"solve", "c.yaml", "-q"}, dir.path());
  ASSERT_EQ(key.exit_code, 0) << key.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "out/summary.json"));
  EXPECT_TRUE(pngs_in(dir / "out").empty());

  write_text(dir / "d.yaml", small(kTinyConfig));
  const RunResult flag =
      run_rbfpde({"solve", "d.yaml", "--no-pictures", "--set", "output.directory=d"}, dir.path());
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "d/summary.json"));
  EXPECT_TRUE(pngs_in(dir / "d").empty());
  EXPECT_EQ(flag.err.find("pictures"), std::string::npos) << "no note when they are turned off";

  write_text(dir / "m.yaml", tiny_mlp());
  const RunResult cmp =
      run_rbfpde({"compare", "d.yaml", "m.yaml", "-q", "--no-pictures"}, dir.path());
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "comparison_tiny_vs_tinymlp.csv"));
  EXPECT_TRUE(pngs_in(dir.path()).empty());
  EXPECT_TRUE(pngs_in(dir / "out").empty());

  // `rbfpde check` shows the key.
  const RunResult check = run_rbfpde({"check", "c.yaml"}, dir.path());
  EXPECT_NE(check.out.find("pictures: false"), std::string::npos) << check.out;
}

TEST(CliPictures, ResumeMayTurnThemOff) {
  TempDir dir;
  write_text(dir / "c.yaml", small(kTinyConfig));
  const RunResult first = run_rbfpde({"solve", "c.yaml", "-q"}, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  fs::remove(dir / "out/convergence.png");
  const RunResult resumed = run_rbfpde(
      {"solve", "c.yaml", "-q", "--resume", "--no-pictures", "--set", "training.max_cycles=6"},
      dir.path());
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_FALSE(fs::exists(dir / "out/convergence.png"));
}

TEST(CliPictures, BadValueIsOneLineNamingTheKey) {
  TempDir dir;
  write_text(dir / "c.yaml", small(kTinyConfig) + "  pictures: maybe\n");
  const RunResult r = run_rbfpde({"solve", "c.yaml"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("c.yaml:24:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("output.pictures"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("true, false"), std::string::npos) << r.err;
  EXPECT_EQ(files_in(dir.path()), (std::vector<std::string>{"c.yaml"}));
}

}  // namespace
}  // namespace rbfpde::cli_test
