#include "problems/expression.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string error_of(const std::string& text, int dim) {
  try {
    Expression e(text, dim);
  } catch (const ExpressionError& e) {
    return e.what();
  }
  return "";
}

TEST(Expression, EvaluatesSeedSourceWithPi) {
  Expression f("sin(pi*x)*sin(pi*y)", 2);
  const double p[2] = {0.25, 0.5};
  EXPECT_NEAR(f(p), std::sin(kPi * 0.25) * 1.0, 1e-15);
  EXPECT_FALSE(f.is_constant());
  EXPECT_EQ(f.dim(), 2);
  EXPECT_EQ(f.text(), "sin(pi*x)*sin(pi*y)");
}

TEST(Expression, BuiltinConstants) {
  Expression e("_pi + _e - pi", 2);
  const double p[3] = {0, 0, 0};  // room for the 3D expression below
  EXPECT_NEAR(e(p), std::exp(1.0), 1e-15);
  EXPECT_TRUE(e.is_constant());
  // Debian's muParser 2.3.3 ships _pi truncated to 12 decimals; ours is full precision.
  EXPECT_EQ(Expression("_pi", 2)(p), kPi);
  EXPECT_EQ(Expression("pi", 3)(p), kPi);
}

TEST(Expression, ThreeDimensionsUseZ) {
  Expression e("x + 10*y + 100*z^2", 3);
  const double p[3] = {1, 2, 3};
  EXPECT_DOUBLE_EQ(e(p), 1 + 20 + 900);
}

TEST(Expression, BulkMatchesPointwise) {
  Expression e("exp(-x*x) * cos(y) + max(x, y)", 2);
  const double pts[6] = {0, 0, 1, 2, -0.5, 0.25};
  double out[3];
  e.evaluate(pts, 3, out);
  for (int i = 0; i < 3; ++i) {
    const double x = pts[2 * i], y = pts[2 * i + 1];
    EXPECT_DOUBLE_EQ(out[i], std::exp(-x * x) * std::cos(y) + std::max(x, y));
  }
}

TEST(Expression, ConstantDetection) {
  EXPECT_TRUE(Expression("2*pi", 2).is_constant());
  EXPECT_TRUE(Expression("0", 3).is_constant());
  EXPECT_FALSE(Expression("0*y", 2).is_constant());
}

TEST(Expression, DefaultIsEmptyZero) {
  Expression e;
  EXPECT_TRUE(e.empty());
  EXPECT_TRUE(e.is_constant());
  const double p[2] = {3, 4};
  EXPECT_EQ(e(p), 0.0);
  double out[2] = {7, 7};
  e.evaluate(p, 1, out);
  EXPECT_EQ(out[0], 0.0);
}

TEST(Expression, NonFiniteValueIsNotACompileError) {
  Expression e("1/x", 2);
  const double p[2] = {0, 1};
  EXPECT_TRUE(std::isinf(e(p)));
}

TEST(Expression, UnknownVariableIsNamed) {
  const std::string msg = error_of("sin(pi*x) + q", 2);
  EXPECT_NE(msg.find("unknown variable 'q'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("position 12"), std::string::npos) << msg;
}

TEST(Expression, ZIsUnknownIn2D) {
  const std::string msg = error_of("x + z", 2);
  EXPECT_NE(msg.find("unknown variable 'z'"), std::string::npos) << msg;
  EXPECT_NO_THROW(Expression("x + z", 3));
}

TEST(Expression, SyntaxErrorThrows) {
  const std::string msg = error_of("x + ", 2);
  EXPECT_EQ(msg.rfind("syntax error:", 0), 0u) << msg;
  EXPECT_NE(error_of("2*(x", 2).find("syntax error"), std::string::npos);
  EXPECT_NE(error_of("x $ 2", 2).find("syntax error"), std::string::npos);
}

TEST(Expression, UnknownFunctionIsNamed) {
  const std::string msg = error_of("1 + foo(x)", 2);
  EXPECT_NE(msg.find("unknown function 'foo'"), std::string::npos) << msg;
}

TEST(Expression, EmptyTextIsAnError) {
  EXPECT_EQ(error_of("", 2), "empty expression");
  EXPECT_EQ(error_of("   ", 2), "empty expression");
}

TEST(Expression, AssignmentIsRejectedComparisonAccepted) {
  EXPECT_NE(error_of("x = 0", 2).find("use '=='"), std::string::npos);
  EXPECT_NE(error_of("x += 1", 2).find("assignment"), std::string::npos);
  Expression e("(x == 0) + (y <= 1) + (y >= 3) + (x != 2)", 2);
  const double p[2] = {0, 1};
  EXPECT_EQ(e(p), 3.0);
}

TEST(Expression, SeveralCommaSeparatedExpressionsAreRejected) {
  EXPECT_NE(error_of("x, y", 2).find("expected one expression"), std::string::npos);
}

TEST(Expression, BadDimensionIsRejected) {
  EXPECT_THROW(Expression("x", 1), ExpressionError);
  EXPECT_THROW(Expression("x", 4), ExpressionError);
}

TEST(Expression, CopiesEvaluateTheSameFormula) {
  Expression a("x*y", 2);
  Expression b = a;
  const double p[2] = {3, 5};
  EXPECT_EQ(b(p), 15.0);
  EXPECT_EQ(b.text(), "x*y");
}

}  // namespace
}  // namespace rbfpde
