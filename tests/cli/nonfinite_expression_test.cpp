// Expressions that are NaN or ±Inf where the run evaluates them are the input's error: exit code 2,
// one line naming the key, the expression and a point where it fails, and nothing written.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.hpp"

namespace rbfpde::cli_test {
namespace {

struct Failure {
  std::string key, text, value;
  std::vector<double> point;
};

// Runs `solve c.yaml` on `yaml` and checks exit code 2, one stderr line of the form
// "error: c.yaml:L:C: KEY: expected an expression finite everywhere in the domain, found
// "TEXT" = VALUE at (x, y)", no stdout and no trace on disk; returns the parts of the line.
Failure expect_nonfinite_error(const std::string& yaml, const std::string& location,
                               const std::string& key) {
  TempDir dir;
  write_text(dir / "c.yaml", yaml);
  const auto before = tree(dir.path());
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu"}, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out")) << "the output directory was created";
  EXPECT_EQ(tree(dir.path()), before);
  static const std::regex line(
      "error: (c\\.yaml:[0-9]+:[0-9]+): ([a-z.\\[\\]0-9]+): expected an expression finite "
      "everywhere in the domain, found \"(.*)\" = (nan|inf|-inf) at \\(([-0-9.e]+), "
      "([-0-9.e]+)\\)\n");
  std::smatch m;
  Failure f;
  if (!std::regex_match(r.err, m, line)) {
    ADD_FAILURE() << "unexpected message: " << r.err;
    return f;
  }
  EXPECT_EQ(m[1].str(), location);
  EXPECT_EQ(m[2].str(), key);
  f.key = m[2];
  f.text = m[3];
  f.value = m[4];
  f.point = {std::strtod(m[5].str().c_str(), nullptr), std::strtod(m[6].str().c_str(), nullptr)};
  return f;
}

TEST(NonFiniteExpression, SourceTermNamesKeyExpressionAndAFailingPoint) {
  const std::string yaml =
      replace_once(kTinyConfig, "f: \"sin(pi*x)*sin(pi*y)\"", "f: \"sqrt(x - 0.5)\"");
  const Failure f = expect_nonfinite_error(yaml, "c.yaml:9:8", "problem.equation.f");
  EXPECT_EQ(f.text, "sqrt(x - 0.5)");
  EXPECT_EQ(f.value, "nan");
  ASSERT_EQ(f.point.size(), 2u);
  // The point printed is one where the expression really fails, inside the domain.
  EXPECT_LT(f.point[0], 0.5);
  EXPECT_GE(f.point[0], 0.0);
  EXPECT_GE(f.point[1], 0.0);
  EXPECT_LE(f.point[1], 1.0);
}

TEST(NonFiniteExpression, BoundaryValue) {
  const std::string yaml = replace_once(kTinyConfig, "value: \"0\"", "value: \"log(x)\"");
  const Failure f = expect_nonfinite_error(yaml, "c.yaml:12:14", "problem.boundary[0].value");
  EXPECT_EQ(f.text, "log(x)");
  EXPECT_EQ(f.value, "-inf");
  ASSERT_EQ(f.point.size(), 2u);
  EXPECT_EQ(f.point[0], 0.0);
}

TEST(NonFiniteExpression, ExactSolution) {
  const std::string yaml =
      replace_once(kTinyConfig, "exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"", "exact: \"1/(y - 1)\"");
  const Failure f = expect_nonfinite_error(yaml, "c.yaml:13:10", "problem.exact");
  EXPECT_EQ(f.text, "1/(y - 1)");
  EXPECT_EQ(f.value.find("inf") != std::string::npos, true) << f.value;
  ASSERT_EQ(f.point.size(), 2u);
  EXPECT_EQ(f.point[1], 1.0);
}

TEST(NonFiniteExpression, MlpRunsAreCheckedToo) {
  const std::string yaml =
      replace_once(tiny_mlp_config(), "f: \"sin(pi*x)*sin(pi*y)\"", "f: \"1/(x - x)\"");
  const Failure f = expect_nonfinite_error(yaml, "c.yaml:9:8", "problem.equation.f");
  EXPECT_EQ(f.text, "1/(x - x)");
}

// A boundary value is checked only where its entry applies: sqrt(x - 0.5) under
// `where: x > 0.5` is finite wherever it is used, and the run trains.
TEST(NonFiniteExpression, BoundaryValueOutsideItsWhereIsNotAnError) {
  const std::string yaml =
      replace_once(kTinyConfig, "    - type: dirichlet\n      value: \"0\"\n",
                   "    - type: dirichlet\n      value: \"sqrt(x - 0.5) * 0\"\n"
                   "      where: \"x > 0.5\"\n"
                   "    - type: dirichlet\n      value: \"0\"\n");
  TempDir dir;
  write_text(dir / "c.yaml", yaml);
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "--quiet"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "out/summary.json"));
}

TEST(NonFiniteExpression, InteriorCoefficient) {
  // A linear operator's reaction coefficient c = log(x − 0.5) is NaN on half the square.
  const std::string yaml = replace_once(
      kTinyConfig, "    type: poisson\n",
      "    type: linear\n    c: \"log(x - 0.5)\"\n");
  const Failure f = expect_nonfinite_error(yaml, "c.yaml:9:8", "problem.equation.c");
  EXPECT_EQ(f.text, "log(x - 0.5)");
  ASSERT_EQ(f.point.size(), 2u);
  EXPECT_LE(f.point[0], 0.5);
}

TEST(NonFiniteExpression, RobinCoefficient) {
  const std::string yaml = replace_once(
      kTinyConfig, "    - type: dirichlet\n      value: \"0\"\n",
      "    - type: robin\n      alpha: \"1/x\"\n      value: \"0\"\n");
  const Failure f = expect_nonfinite_error(yaml, "c.yaml:12:14", "problem.boundary[0].alpha");
  EXPECT_EQ(f.text, "1/x");
  ASSERT_EQ(f.point.size(), 2u);
  EXPECT_EQ(f.point[0], 0.0);
}

}  // namespace
}  // namespace rbfpde::cli_test
