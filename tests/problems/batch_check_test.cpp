// check_batch_finite: a batch whose values were computed elsewhere than by the host's expressions
// (as a device sampler computes them) is refused at the first value that is not finite, naming
// the key and text of the expression it came from and the point; a finite batch passes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "problems/expression_check.hpp"
#include "problems/problem.hpp"

namespace rbfpde {
namespace {

ExprSpec expr(const std::string& text, const std::string& key) {
  return ExprSpec{text, key, SourceLoc{"b.yaml", 5, 7}};
}

BoundarySpec entry(const std::string& type, const std::string& value, const std::string& where,
                   int index) {
  const std::string base = "problem.boundary[" + std::to_string(index) + "]";
  BoundarySpec b;
  b.type = type;
  b.value = expr(value, base + ".value");
  b.where = expr(where, base + ".where");
  b.loc = SourceLoc{"b.yaml", 10 + index, 7};
  return b;
}

// The unit square, a linear operator with expressions for a, b and c, a Robin entry on x > 0.5
// and a Dirichlet entry elsewhere.
ProblemSpec linear_spec() {
  ProblemSpec s;
  s.dim = 2;
  s.domain.type = "rectangle";
  s.domain.min = {0, 0};
  s.domain.max = {1, 1};
  s.domain.loc = SourceLoc{"b.yaml", 2, 3};
  s.boundary_loc = SourceLoc{"b.yaml", 9, 3};
  s.equation = "linear";
  s.equation_loc = SourceLoc{"b.yaml", 3, 3};
  s.f = expr("acos(x)", "problem.equation.f");
  s.a = expr("1 + x", "problem.equation.a");
  s.b = {expr("y", "problem.equation.b[0]"), expr("x*y", "problem.equation.b[1]")};
  s.c = expr("-y", "problem.equation.c");
  BoundarySpec robin = entry("robin", "log(1 + y)", "x > 0.5", 0);
  robin.alpha = expr("1 + y", "problem.boundary[0].alpha");
  robin.beta = expr("2", "problem.boundary[0].beta");
  s.boundary = {robin, entry("dirichlet", "sqrt(x)", "1", 1)};
  return s;
}

struct Fixture {
  ProblemSpec spec = linear_spec();
  Problem problem = Problem::build(spec);
  CollocationBatch batch;
  Fixture() {
    Rng rng(11);
    problem.sample(rng, 30, 12, batch);
  }
};

// The InputError check_batch_finite throws, or a failure when it throws none.
InputError batch_error(const Fixture& f) {
  try {
    check_batch_finite(f.spec, f.problem, f.batch);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("none");
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(BatchCheck, FiniteBatchPasses) {
  Fixture f;
  ASSERT_FALSE(f.batch.a.empty());
  ASSERT_FALSE(f.batch.b.empty());
  ASSERT_FALSE(f.batch.alpha.empty());
  EXPECT_NO_THROW(check_batch_finite(f.spec, f.problem, f.batch));
}

TEST(BatchCheck, NanTargetNamesTheEquationsKeyAndThePoint) {
  Fixture f;
  f.batch.interior[2 * 7] = 0.25;
  f.batch.interior[2 * 7 + 1] = 0.5;
  f.batch.f[7] = kNan;
  const InputError e = batch_error(f);
  EXPECT_EQ(e.key(), "problem.equation.f");
  EXPECT_EQ(e.loc().line, 5);
  EXPECT_NE(e.message().find("\"acos(x)\" = nan"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("(0.25, 0.5)"), std::string::npos) << e.message();
}

TEST(BatchCheck, NonFiniteCoefficientNamesItsKey) {
  {
    Fixture f;
    f.batch.c[3] = kNan;
    EXPECT_EQ(batch_error(f).key(), "problem.equation.c");
  }
  {
    Fixture f;
    f.batch.a[0] = std::numeric_limits<double>::infinity();
    const InputError e = batch_error(f);
    EXPECT_EQ(e.key(), "problem.equation.a");
    EXPECT_NE(e.message().find("= inf"), std::string::npos) << e.message();
  }
  {
    Fixture f;
    f.batch.b[2 * 4 + 1] = kNan;  // point 4, the y component
    EXPECT_EQ(batch_error(f).key(), "problem.equation.b[1]");
  }
}

TEST(BatchCheck, NanBoundaryValueNamesTheEntryThatApplies) {
  // A point on x = 1 takes the Robin entry, one on x = 0 the Dirichlet entry.
  for (const auto& [x, key] : {std::pair<double, std::string>{1.0, "problem.boundary[0].value"},
                               std::pair<double, std::string>{0.0, "problem.boundary[1].value"}}) {
    Fixture f;
    f.batch.boundary[2 * 5] = x;
    f.batch.boundary[2 * 5 + 1] = 0.0;
    f.batch.p[5] = kNan;
    const InputError e = batch_error(f);
    EXPECT_EQ(e.key(), key);
  }
  Fixture f;
  f.batch.boundary[0] = 1.0;
  f.batch.boundary[1] = 0.75;
  f.batch.alpha[0] = kNan;
  EXPECT_EQ(batch_error(f).key(), "problem.boundary[0].alpha");
}

}  // namespace
}  // namespace rbfpde
