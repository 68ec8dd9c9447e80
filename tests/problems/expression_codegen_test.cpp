// expression_to_c must mean what muParser means. Two proofs: the interpreter of the same syntax
// tree (evaluate_ast) agrees with Expression at random points, and the printed C, compiled by the
// system compiler, agrees with Expression at fixed points.
#include "problems/expression_codegen.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "problems/expression.hpp"
#include "problems/random.hpp"

namespace rbfpde {
namespace {

struct Case {
  std::string text;
  int dim;
};

// Every operator, function, constant, and the precedence and associativity cases checked against
// muParser 2.3.3 (see expression_codegen.hpp). Arguments are kept inside each function's domain
// for most points of [-2, 2]^dim, so that most comparisons are on finite values.
const std::vector<Case> kCases = {
    // arithmetic, literals, constants
    {"x + y", 2},
    {"x - y - 0.75", 2},
    {"x * y / 3 / 7", 2},
    {"2 - 3 - x", 2},
    {"1e-3 * x + .5 - 1.", 2},
    {"2.5E+1 * y - 3e-1", 2},
    {"pi * x + _pi * y - _e", 2},
    {"x + y * z - z / (x + 3)", 3},
    // powers: right-associative, above signs
    {"x^2", 2},
    {"2^3^2 + x", 2},
    {"(x^2)^3 - x^2^3", 2},
    {"-2^2 + x", 2},
    {"-x^2", 2},
    {"2^-1 + x", 2},
    {"2^-1^2 + y", 2},
    {"2^-x*3", 2},
    {"2^-x^2", 2},
    {"-2^x^-1", 2},
    {"abs(x)^1.5 + abs(y)^-0.5", 2},
    {"2^+y", 2},
    // signs
    {"-x + y", 2},
    {"+x - -y", 2},
    {"x--2", 2},
    {"2*-x + 3/-y", 2},
    {"-(-x)", 2},
    {"-(x + y) * 2", 2},
    {"1 + -x^2 * 3", 2},
    // comparisons and logic (1 or 0)
    {"x < y", 2},
    {"x > y", 2},
    {"x <= 0", 2},
    {"y >= 0", 2},
    {"rint(x) == rint(y)", 2},
    {"rint(x) != 0", 2},
    {"x < y == 0", 2},
    {"x > 0 > -1", 2},
    {"1 + x < 2 * y", 2},
    {"x > 0 && y > 0", 2},
    {"x > 0 || y > 0", 2},
    {"x > 1 || y > 0 && x < 0", 2},
    {"x && y", 2},
    {"(x > 0) * 2 + (y < 0)", 2},
    // if-then-else: lowest, right-associative
    {"x > 0 ? x : -x", 2},
    {"x > 0 ? 1 : y > 0 ? 2 : 3", 2},
    {"x > 0 ? y > 0 ? 1 : 2 : 3", 2},
    {"x < 0 ? 2 : 3 + 10", 2},
    {"x > 0 || y > 0 ? x : y", 2},
    {"(x > 0 ? 2 : 3) * y", 2},
    {"min(x > 0 ? 2 : 3, y)", 2},
    // functions
    {"sin(x) + cos(y) + tan(x / 2)", 2},
    {"asin(x / 2) + acos(y / 2) + atan(x * y)", 2},
    {"atan2(y, x)", 2},
    {"sinh(x) + cosh(y) + tanh(x * y)", 2},
    {"asinh(x) + acosh(1 + y^2) + atanh(x / 3)", 2},
    {"exp(x) + sqrt(abs(y))", 2},
    {"log(1 + x^2)", 2},
    {"ln(1 + y^2) - log(2)", 2},
    {"log2(abs(x) + 0.1) + log10(abs(y) + 0.1)", 2},
    {"log(x)", 2},
    {"abs(x - y)", 2},
    {"sign(x) + sign(rint(y))", 2},
    {"rint(3 * x) + rint(2.5) + rint(-2.5) + rint(0.49999999999999994)", 2},
    {"min(x)", 2},
    {"min(x, y)", 2},
    {"min(x, y, 0.5, -z)", 3},
    {"max(x, y, 0.25)", 2},
    {"sum(x)", 2},
    {"sum(x, y, 1, 2)", 2},
    {"avg(x, y, 4)", 2},
    {"sum(0.1, 0.2, 0.3) - 0.6 + x", 2},
    {"sin(pi*x)*sin(pi*y)*sin(pi*z)", 3},
    {"((x))", 2},
    {"sqrt(x^2 + y^2 + z^2) < 1", 3},
};

const double kRelTol = 1e-13;

// Relative agreement; muParser's result sets the scale (exact zeros must be reproduced exactly).
void expect_same(double got, double want, const std::string& what) {
  EXPECT_LE(std::abs(got - want), kRelTol * std::abs(want))
      << what << ": got " << got << ", muParser " << want;
}

// Each expression at 50 random points of [-2, 2]^dim (plus a few on the axes, where sign, rint
// and comparisons change): evaluate_ast == Expression wherever muParser's result is finite.
void check_against_muparser(const std::string& text, int dim, unsigned seed) {
  SCOPED_TRACE(text);
  Expression reference(text, dim);
  Rng rng(seed);
  std::vector<std::vector<double>> points = {{0, 0, 0}, {1, -1, 0.5}, {-0.5, 0, 2}};
  for (int i = 0; i < 50; ++i) {
    points.push_back({uniform(rng, -2, 2), uniform(rng, -2, 2), uniform(rng, -2, 2)});
  }
  int finite = 0;
  for (const auto& p : points) {
    const double want = reference(p.data());
    if (!std::isfinite(want)) continue;
    ++finite;
    expect_same(codegen::evaluate_ast(text, dim, p.data()), want,
                text + " at (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " +
                    std::to_string(p[2]) + ")");
  }
  // log(x) is finite on half of the points; every other case on (nearly) all.
  EXPECT_GE(finite, 20);
}

TEST(ExpressionCodegen, AstAgreesWithMuparser) {
  ASSERT_GE(kCases.size(), 40u);
  unsigned seed = 1;
  for (const Case& c : kCases) check_against_muparser(c.text, c.dim, seed++);
}

// The expressions of the shipped configs (f, value, where, exact), read from the files so that a
// config added later is covered too.
std::vector<std::string> config_expressions() {
  std::vector<std::string> out;
  const std::regex key(R"re(^\s*(f|value|where|exact)\s*:\s*"([^"]*)")re");
  for (const auto& entry : std::filesystem::directory_iterator(RBFPDE_SOURCE_DIR "/configs")) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (!std::regex_search(line, m, key)) continue;
      // Expressions of space-time problems (with t) are evaluated on the host only: a problem
      // with time is never drawn by the device sampler.
      try {
        Expression(m[2], 3);
      } catch (const ExpressionError&) {
        continue;
      }
      out.push_back(m[2]);
    }
  }
  return out;
}

// 2 when the text is a valid 2D expression, else 3 (the cube config uses z).
int dim_of(const std::string& text) {
  try {
    Expression(text, 2);
    return 2;
  } catch (const ExpressionError&) {
    return 3;
  }
}

TEST(ExpressionCodegen, ConfigExpressionsAgreeWithMuparser) {
  const auto texts = config_expressions();
  ASSERT_GE(texts.size(), 10u) << "configs/*.yaml not found or changed format";
  unsigned seed = 100;
  for (const std::string& t : texts) {
    check_against_muparser(t, dim_of(t), seed++);
    EXPECT_NO_THROW(expression_to_c(t, dim_of(t))) << t;
  }
}

TEST(ExpressionCodegen, PinnedTranslations) {
  EXPECT_EQ(expression_to_c("x^2", 2), "pow(x, 2.0)");
  EXPECT_EQ(expression_to_c("-x^2", 2), "(-pow(x, 2.0))");
  EXPECT_EQ(expression_to_c("2^3^2", 2), "pow(2.0, pow(3.0, 2.0))");
  EXPECT_EQ(expression_to_c("2^-1^2", 2), "pow(2.0, (-pow(1.0, 2.0)))");
  EXPECT_EQ(expression_to_c("1/2", 2), "(1.0 / 2.0)");
  EXPECT_EQ(expression_to_c("x - y - z", 3), "((x - y) - z)");
  EXPECT_EQ(expression_to_c("x--2", 2), "(x - (-2.0))");
  EXPECT_EQ(expression_to_c("+x", 2), "x");
  EXPECT_EQ(expression_to_c("1e-3 + .5", 2), "(0.001 + 0.5)");
  EXPECT_EQ(expression_to_c("pi", 2), "3.1415926535897931");
  EXPECT_EQ(expression_to_c("_e", 2), "2.7182818284590451");
  EXPECT_EQ(expression_to_c("ln(x) + log(y)", 2), "(log(x) + log(y))");
  EXPECT_EQ(expression_to_c("abs(x)", 2), "fabs(x)");
  EXPECT_EQ(expression_to_c("rint(x)", 2), "floor((x + 0.5))");
  EXPECT_EQ(expression_to_c("sign(x)", 2), "((double)((x > 0.0) - (x < 0.0)))");
  EXPECT_EQ(expression_to_c("min(x, y, 1)", 2), "fmin(fmin(x, y), 1.0)");
  EXPECT_EQ(expression_to_c("max(x)", 2), "x");
  EXPECT_EQ(expression_to_c("avg(x, y)", 2), "((x + y) / 2.0)");
  EXPECT_EQ(expression_to_c("x < y", 2), "((x < y) ? 1.0 : 0.0)");
  EXPECT_EQ(expression_to_c("x && y", 2), "(((x != 0.0) && (y != 0.0)) ? 1.0 : 0.0)");
  EXPECT_EQ(expression_to_c("x ? 1 : 2", 2), "((x != 0.0) ? 1.0 : 2.0)");
  EXPECT_EQ(expression_to_c("atan2(y, x)", 2), "atan2(y, x)");
}

std::string error_of(const std::string& text, int dim) {
  try {
    expression_to_c(text, dim);
  } catch (const ExpressionError& e) {
    return e.what();
  }
  return "";
}

TEST(ExpressionCodegen, RejectsWhatItCannotTranslate) {
  EXPECT_NE(error_of("foo(x)", 2).find("foo"), std::string::npos) << error_of("foo(x)", 2);
  EXPECT_NE(error_of("floor(x)", 2).find("floor"), std::string::npos);
  EXPECT_NE(error_of("z + 1", 2).find("'z'"), std::string::npos) << error_of("z + 1", 2);
  EXPECT_NE(error_of("x + q", 3).find("'q'"), std::string::npos);
  for (const char* bad : {"x +", "(x", "x)", "sin(x", "--x", "2^--2", "1 ? 2", "x = 1", "1, 2",
                          "2 x", "", "max()", "sin(x, y)", "x % 2", "1e"}) {
    EXPECT_THROW(expression_to_c(bad, 2), ExpressionError) << bad;
    EXPECT_THROW(codegen::evaluate_ast(bad, 2, std::vector<double>{0, 0}.data()), ExpressionError)
        << bad;
  }
}

// ---------------------------------------------------------------------------------------------
// The printed C compiles and computes the same values.

std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

TEST(ExpressionCodegen, GeneratedCCompilesAndAgrees) {
  if (std::system("c++ --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "no c++ compiler";
  // About twenty texts that together use every construct, plus the configs' expressions.
  std::vector<Case> cases = {
      {"x^2 + 2^3^2 - -2^2", 2},
      {"2^-x^2 + 2^-y*3 - x--2", 2},
      {"1/2 + x/3/7", 2},
      {"1e-3 * x + .5 + 2.5E+1 * y", 2},
      {"pi * x + _pi * y - _e", 2},
      {"x < y", 2},
      {"x > 0 && y > 0 || x < -1", 2},
      {"x <= y == 0", 2},
      {"x >= 0 != (y >= 0)", 2},
      {"x > 0 ? 1 : y > 0 ? 2 : 3", 2},
      {"x > 0 ? y > 0 ? 1 : 2 : 3 + 10", 2},
      {"sin(x) + cos(y) + tan(x / 2) + asin(x / 2) + acos(y / 2) + atan(x)", 2},
      {"atan2(y, x) + sinh(x) + cosh(y) + tanh(x)", 2},
      {"asinh(x) + acosh(1 + y^2) + atanh(x / 3)", 2},
      {"exp(x) + sqrt(abs(y)) + ln(1 + x^2) + log(2 + y) + log2(3) + log10(5)", 2},
      {"sign(x) + sign(0) + rint(x * 3) + rint(2.5) + rint(-2.5)", 2},
      {"min(x, y, 0.5) + max(x) + sum(x, y, 1) + avg(x, y, 4)", 2},
      {"sin(pi*x)*sin(pi*y)*sin(pi*z) + z^3", 3},
      {"min(x, z) > 0 ? sqrt(x*z) : -z", 3},
      {"-(-x) + +y - abs(-z)", 3},
  };
  for (const std::string& t : config_expressions()) cases.push_back({t, dim_of(t)});
  const std::vector<std::array<double, 3>> points = {
      {0.3, -0.7, 1.1}, {-1.25, 0.5, 0.2}, {1.5, 1.5, -0.4}, {0, 0.25, 0.75}, {-0.2, -1.9, 0}};

  const std::filesystem::path dir = std::filesystem::path(RBFPDE_TEST_TMP) / "codegen_compile";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    // <math.h> declares the same double functions in the global namespace that CUDA device code
    // has; nothing else is included, so the text cannot lean on anything NVRTC lacks.
    std::ofstream src(dir / "generated.cpp");
    src << "#include <math.h>\n#include <stdio.h>\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      src << "static double f" << i << "(double x, double y, double z) {\n"
          << "  (void)x; (void)y; (void)z;\n"
          << "  return " << expression_to_c(cases[i].text, cases[i].dim) << ";\n}\n";
    }
    src << "int main() {\n  static const double p[][3] = {";
    for (const auto& p : points) src << "{" << p[0] << ", " << p[1] << ", " << p[2] << "}, ";
    src << "};\n  for (int k = 0; k < " << points.size() << "; ++k) {\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
      src << "    printf(\"%.17g\\n\", f" << i << "(p[k][0], p[k][1], p[k][2]));\n";
    }
    src << "  }\n  return 0;\n}\n";
  }
  // No FMA contraction and no fast-math: the compiled code must round like the interpreter.
  const std::string compile = "c++ -std=c++17 -O1 -ffp-contract=off -Wall -Wextra -Werror -o " +
                              shell_quote((dir / "generated").string()) + " " +
                              shell_quote((dir / "generated.cpp").string()) + " -lm 2> " +
                              shell_quote((dir / "compile.log").string());
  ASSERT_EQ(std::system(compile.c_str()), 0)
      << "generated C does not compile; see " << (dir / "compile.log");
  const std::string run = shell_quote((dir / "generated").string()) + " > " +
                          shell_quote((dir / "values.txt").string());
  ASSERT_EQ(std::system(run.c_str()), 0);

  std::ifstream values(dir / "values.txt");
  for (const auto& p : points) {
    for (const Case& c : cases) {
      std::string line;
      ASSERT_TRUE(std::getline(values, line)) << "too few values";
      const double got = std::strtod(line.c_str(), nullptr);
      const double want = Expression(c.text, c.dim)(p.data());
      if (!std::isfinite(want)) continue;
      expect_same(got, want,
                  c.text + " compiled, at (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) +
                      ", " + std::to_string(p[2]) + ")");
    }
  }
}

}  // namespace
}  // namespace rbfpde
