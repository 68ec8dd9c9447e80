// The MLP end to end: configs/poisson2d_seed_mlp.yaml through solve_mlp (files, error bound,
// determinism), and `rbfpde compare` through run_compare.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "solver/train/compare.hpp"
#include "solver/train/mlp_model.hpp"
#include "solver/train/solve_mlp.hpp"

namespace rbfpde {
namespace {

namespace fs = std::filesystem;

const std::string kTmp = RBFPDE_TEST_TMP;

// Each test its own directory: ctest -j runs tests side by side.
std::filesystem::path compare_dir() {
  return std::filesystem::path(kTmp) /
         (std::string("compare_") +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

// The seed config cut to 1000 of its 2000 Adam steps and 1000 of its 2500 L-BFGS iterations, to
// keep the test under a minute on two cores: measured 3.8e-3 in 46 s (the full config: 7.2e-4);
// the bound is about 3× that.

SolveResult solve_seed_mlp(const std::string& tag, const std::vector<std::string>& extra) {
  const std::string dir = kTmp + "/mlp_" + tag;
  fs::remove_all(dir);
  // Without the config's L-BFGS stage unless a test asks for it (a later --set wins): the
  // short runs below count Adam steps.
  std::vector<std::string> overrides = {"output.directory=" + dir, "training.lbfgs.iterations=0"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_mlp.yaml", overrides);
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  const SolveResult r = solve_mlp(config, problem, options, "cpu");
  std::printf("poisson2d_seed_mlp [%s]: %ld cycles, %.2f s: relative L2 error %.3e, max %.3e\n",
              tag.c_str(), r.outcome.cycles, r.outcome.seconds, r.errors.rel_l2, r.errors.max);
  return r;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(MlpSolve, SeedProblemReachesItsBound) {
  const SolveResult r =
      solve_seed_mlp("seed", {"training.max_cycles=1000", "training.lbfgs.iterations=1000"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_FALSE(r.outcome.diverged);
  EXPECT_EQ(r.model, "mlp");
  EXPECT_EQ(r.parameters, 7851);
  EXPECT_LE(r.errors.rel_l2, 0.012);  // measured 3.8e-3
}

TEST(MlpSolve, WritesTheOutputsAndAReadableModel) {
  const SolveResult r = solve_seed_mlp(
      "files", {"training.max_cycles=30", "output.report_every=10", "output.resolution=[21,21]"});
  const fs::path dir = r.directory;
  for (const char* f : {"history.csv", "summary.json", "model.yaml"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  const std::string summary = read_text(dir / "summary.json");
  EXPECT_NE(summary.find("\"model\": \"mlp\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"activation\": \"tanh\""), std::string::npos);
  const MlpModel model = read_mlp_model_yaml(dir / "model.yaml");
  EXPECT_EQ(model.shape.hidden, (std::vector<int>{50, 50, 50, 50}));
  ASSERT_EQ(model.parameters.size(), 7851u);
  // The file's network gives the run's final error on the grid.
  auto backend = make_cpu_mlp_backend<double>(mlp_backend_options(model.shape, 100));
  backend->set_parameters(model.parameters);
  std::vector<double> pts, exact, u, lap;
  for (int j = 0; j <= 20; ++j)
    for (int i = 0; i <= 20; ++i) {
      const double x = i / 20.0, y = j / 20.0;
      pts.insert(pts.end(), {x, y});
      exact.push_back(-std::sin(M_PI * x) * std::sin(M_PI * y) / (2 * M_PI * M_PI));
    }
  backend->evaluate(pts, u, lap);
  EXPECT_NEAR(compute_errors(u, exact).rel_l2, r.errors.rel_l2, 1e-12);
  // History: the header, the reports at cycles 10 and 20, the final one at 30.
  const std::string history = read_text(dir / "history.csv");
  EXPECT_EQ(std::count(history.begin(), history.end(), '\n'), 1 + 3);
  EXPECT_NE(history.find("\n30,"), std::string::npos);
}

TEST(MlpSolve, SameSeedSameNumbersInFloatAndDouble) {
  for (const char* precision : {"double", "float"}) {
    const std::vector<std::string> o = {"training.max_cycles=40", "output.resolution=[21,21]",
                                        std::string("compute.precision=") + precision};
    const SolveResult a = solve_seed_mlp("same_a", o);
    const SolveResult b = solve_seed_mlp("same_b", o);
    EXPECT_EQ(a.errors.rel_l2, b.errors.rel_l2) << precision;
    EXPECT_EQ(a.outcome.loss.loss, b.outcome.loss.loss) << precision;
    std::vector<std::string> o2 = o;
    o2.push_back("training.seed=2");
    const SolveResult c = solve_seed_mlp("same_c", o2);
    EXPECT_NE(a.errors.rel_l2, c.errors.rel_l2) << precision;
  }
}

TEST(MlpSolve, DivergenceStopsAndKeepsTheLastFiniteNetwork) {
  // A learning rate of 1e30 throws the parameters out by 1e30 at the first step; with no report
  // before, the initial network is the last sound one and is what the outputs hold.
  const SolveResult r =
      solve_seed_mlp("diverge", {"training.max_cycles=50", "training.adam.learning_rate=1e30",
                                 "output.resolution=[11,11]", "output.report_every=1000"});
  EXPECT_TRUE(r.outcome.diverged);
  EXPECT_EQ(r.outcome.stop_reason, "diverged");
  EXPECT_FALSE(r.outcome.divergence.empty());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_LT(r.outcome.cycles, 50);
  // The initial network, rebuilt here as solve_mlp builds it, on the same 11 × 11 grid.
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_mlp.yaml", {});
  const Problem problem = Problem::build(config.problem);
  const MlpShape shape = mlp_shape(config.model, problem.domain());
  Rng init_rng(config.training.seed ^ 0x9e3779b97f4a7c15ULL);
  auto backend = make_cpu_mlp_backend<double>(mlp_backend_options(shape, 100));
  backend->set_parameters(initial_mlp_parameters(shape, init_rng));
  std::vector<double> pts, exact, u, lap;
  for (int j = 0; j <= 10; ++j)
    for (int i = 0; i <= 10; ++i) {
      pts.insert(pts.end(), {i / 10.0, j / 10.0});
      exact.push_back(problem.exact()(&pts[pts.size() - 2]));
    }
  backend->evaluate(pts, u, lap);
  EXPECT_NEAR(r.errors.rel_l2, compute_errors(u, exact).rel_l2, 1e-12);
}

TEST(MlpSolve, LbfgsStageImprovesOnAdamAlone) {
  // Equal Adam steps (1000, on the config's fresh batch every 1000 steps, here 500 + 100
  // points), then 300 L-BFGS iterations on one batch of the same size. Measured: Adam alone
  // 9.5e-2, with L-BFGS 2.1e-2 (≈ 11 s and 4 s on two shared cores).
  const std::vector<std::string> common = {
      "training.max_cycles=1000", "training.points.interior=500", "training.points.boundary=100",
      "output.resolution=[51,51]"};
  std::vector<std::string> with = common;
  with.push_back("training.lbfgs.iterations=300");
  const SolveResult adam = solve_seed_mlp("adam_only", common);
  const SolveResult both = solve_seed_mlp("adam_lbfgs", with);
  EXPECT_EQ(adam.outcome.cycles, 1000);
  EXPECT_EQ(adam.outcome.times.lbfgs, 0.0);
  EXPECT_FALSE(both.outcome.diverged);
  EXPECT_EQ(both.exit_code, 0);
  // Every iteration ran, or the line search ran out of decrease on the way.
  EXPECT_TRUE(both.outcome.stop_reason == "max_cycles" ||
              both.outcome.stop_reason == "lbfgs_stalled")
      << both.outcome.stop_reason;
  EXPECT_GT(both.outcome.cycles, 1000);
  EXPECT_LE(both.outcome.cycles, 1300);
  EXPECT_GT(both.outcome.times.lbfgs, 0.0);
  EXPECT_LT(both.outcome.loss.loss, adam.outcome.loss.loss);
  EXPECT_LT(both.errors.rel_l2, 0.5 * adam.errors.rel_l2);
  // History: the rows continue past the Adam steps, one per report_every (100) cycles.
  const std::string history = read_text(fs::path(both.directory) / "history.csv");
  EXPECT_NE(history.find("\n1000,"), std::string::npos);
  EXPECT_NE(history.find("\n1100,"), std::string::npos);
  const std::string summary = read_text(fs::path(both.directory) / "summary.json");
  EXPECT_NE(summary.find("\"lbfgs\": "), std::string::npos);
}

TEST(MlpSolve, LbfgsStageIsSkippedAfterDivergence) {
  const SolveResult r = solve_seed_mlp(
      "lbfgs_diverge", {"training.max_cycles=50", "training.adam.learning_rate=1e30",
                        "training.lbfgs.iterations=50", "output.resolution=[11,11]"});
  EXPECT_TRUE(r.outcome.diverged);
  EXPECT_LT(r.outcome.cycles, 50);
  EXPECT_EQ(r.outcome.times.lbfgs, 0.0);
}

TEST(MlpSolve, LbfgsStageRunsInFloat) {
  // The float backend: parameters and gradients are converted to double for the minimiser.
  const SolveResult r = solve_seed_mlp(
      "lbfgs_float",
      {"training.max_cycles=20", "training.lbfgs.iterations=20", "compute.precision=float",
       "output.resolution=[11,11]", "training.points.interior=100", "training.points.boundary=40"});
  EXPECT_FALSE(r.outcome.diverged);
  EXPECT_GT(r.outcome.cycles, 20);
  EXPECT_TRUE(std::isfinite(r.outcome.loss.loss));
}

// A config of the seed problem in the test's directory; model and training_extra (more keys of
// the training map, e.g. ", lbfgs: {iterations: 5}") as YAML flow text.
std::string write_config(const std::string& name, const std::string& method, long cycles,
                         const std::string& model = "{type: rbf, neurons: 16}",
                         const std::string& training_extra = "") {
  const fs::path path = compare_dir() / (name + ".yaml");
  fs::create_directories(path.parent_path());
  std::ofstream out(path);
  out << "name: " << name << "\n"
      << "problem:\n  domain: {type: rectangle, min: [0, 0], max: [1, 1]}\n"
      << "  equation: {type: poisson, f: \"sin(pi*x)*sin(pi*y)\"}\n"
      << "  boundary: [{type: dirichlet, value: \"0\"}]\n"
      << "  exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"\n"
      << "model: " << model << "\n"
      << "training: {method: " << method << ", max_cycles: " << cycles << training_extra << "}\n"
      << "compute: {backend: cpu}\n"
      << "output: {directory: " << (compare_dir() / "out" / name).string()
      << ", resolution: [21, 21]}\n";
  return path.string();
}

TEST(Compare, RunsEveryConfigAndWritesOneTableAndCsv) {
  fs::remove_all(compare_dir());
  const std::string a = write_config("tiny_gdcg", "gdcg", 20);
  const std::string b = write_config("tiny_lm", "lm", 10);
  SolveOptions options;
  options.quiet = true;
  std::ostringstream table;
  const int code = run_compare({a, b}, {}, options, table);
  EXPECT_EQ(code, 0);
  const fs::path csv = compare_dir() / "out" / "comparison_tiny_gdcg_vs_tiny_lm.csv";
  ASSERT_TRUE(fs::exists(csv));
  const std::string text = read_text(csv);
  std::printf("%s%s", table.str().c_str(), text.c_str());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);  // header + two rows
  EXPECT_EQ(text.rfind("name,model,method,parameters,", 0), 0u);
  EXPECT_NE(text.find("\ntiny_gdcg,rbf,gdcg,64,cpu,"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntiny_lm,rbf,lm,64,cpu,"), std::string::npos) << text;
  const std::string t = table.str();
  EXPECT_NE(t.find("rel. L2 error"), std::string::npos);
  EXPECT_NE(t.find("tiny_gdcg"), std::string::npos);
  EXPECT_NE(t.find("tiny_lm"), std::string::npos);
  EXPECT_NE(t.find(csv.string()), std::string::npos);
}

// The comparison the command is for: an RBF network against an MLP on the same problem. The
// MLP row names its L-BFGS stage and counts its parameters (2-8-8-1: 24 + 72 + 9).
TEST(Compare, RbfAgainstMlpOnTheSameProblem) {
  fs::remove_all(compare_dir());
  const std::string a = write_config("tiny_lm", "lm", 10);
  const std::string b = write_config("tiny_mlp", "adam", 20, "{type: mlp, layers: [8, 8]}",
                                     ", lbfgs: {iterations: 5}");
  SolveOptions options;
  options.quiet = true;
  std::ostringstream table;
  EXPECT_EQ(run_compare({a, b}, {}, options, table), 0);
  const std::string text = read_text(compare_dir() / "out" / "comparison_tiny_lm_vs_tiny_mlp.csv");
  std::printf("%s%s", table.str().c_str(), text.c_str());
  EXPECT_NE(text.find("\ntiny_lm,rbf,lm,64,cpu,"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntiny_mlp,mlp,adam+lbfgs,105,cpu,"), std::string::npos) << text;
  EXPECT_NE(table.str().find("adam+lbfgs"), std::string::npos);
  // Both runs wrote their own outputs.
  for (const char* name : {"tiny_lm", "tiny_mlp"})
    EXPECT_TRUE(fs::exists(compare_dir() / "out" / name / "summary.json")) << name;
}

TEST(Compare, ChecksEveryConfigBeforeRunningAny) {
  fs::remove_all(compare_dir());
  const std::string a = write_config("first", "gdcg", 5);
  const std::string bad = (compare_dir() / "bad.yaml").string();
  std::ofstream(bad) << "name: bad\nmodel: {neurons: -3}\n";
  SolveOptions options;
  options.quiet = true;
  std::ostringstream table;
  EXPECT_THROW(run_compare({a, bad}, {}, options, table), InputError);
  EXPECT_FALSE(fs::exists(compare_dir() / "out" / "first"));
  // Two runs into one directory would overwrite each other: refused too.
  EXPECT_THROW(run_compare({a, a}, {}, options, table), InputError);
  EXPECT_THROW(run_compare({a}, {}, options, table), InputError);
  // The second run's output directory is a file: refused before the first run.
  const std::string blocked = write_config("blocked", "lm", 5);
  fs::create_directories(compare_dir() / "out");
  std::ofstream(compare_dir() / "out" / "blocked") << "a file in the way\n";
  ASSERT_TRUE(fs::is_regular_file(compare_dir() / "out" / "blocked"));
  try {
    run_compare({a, blocked}, {}, options, table);
    ADD_FAILURE() << "a file in the way of output.directory was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("output.directory: cannot create the directory"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("is not a directory"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(compare_dir() / "out" / "first"));
  EXPECT_TRUE(table.str().empty());
}

}  // namespace
}  // namespace rbfpde
