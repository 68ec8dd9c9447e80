#include "problems/problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

ExprSpec expr(const std::string& text, const std::string& key, int line = 3, int column = 7) {
  return ExprSpec{text, key, SourceLoc{"x.yaml", line, column}};
}

BoundarySpec dirichlet(const std::string& value, const std::string& where, int index) {
  const std::string base = "problem.boundary[" + std::to_string(index) + "]";
  BoundarySpec b;
  b.value = expr(value, base + ".value", 10 + index, 14);
  b.where = expr(where, base + ".where", 11 + index, 14);
  return b;
}

// The seed problem: unit square, f = sin(πx)sin(πy), p = 0.
ProblemSpec seed_spec() {
  ProblemSpec s;
  s.dim = 2;
  s.domain.type = "rectangle";
  s.domain.min = {0, 0};
  s.domain.max = {1, 1};
  s.domain.loc = SourceLoc{"x.yaml", 2, 3};
  s.f = expr("sin(pi*x)*sin(pi*y)", "problem.equation.f");
  s.boundary.push_back(dirichlet("0", "1", 0));
  s.exact = expr("-sin(pi*x)*sin(pi*y)/(2*pi^2)", "problem.exact", 16, 8);
  return s;
}

InputError build_error(const ProblemSpec& spec) {
  try {
    Problem::build(spec);
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected InputError";
  return InputError("none");
}

TEST(Problem, BuildsSeedProblemAndSamplesTargets) {
  const Problem problem = Problem::build(seed_spec());
  EXPECT_EQ(problem.dim(), 2);
  EXPECT_EQ(problem.domain().type(), "rectangle");
  ASSERT_TRUE(problem.has_exact());
  ASSERT_EQ(problem.boundary().size(), 1u);
  EXPECT_TRUE(problem.boundary()[0].everywhere);

  Rng rng(1);
  CollocationBatch batch;
  problem.sample(rng, 176, 48, batch);
  EXPECT_EQ(batch.dim, 2);
  ASSERT_EQ(batch.n_interior(), 176u);
  ASSERT_EQ(batch.n_boundary(), 48u);
  ASSERT_EQ(batch.interior.size(), 2u * 176);
  ASSERT_EQ(batch.normals.size(), 2u * 48);
  for (std::size_t i = 0; i < batch.n_interior(); ++i) {
    const double x = batch.interior[2 * i], y = batch.interior[2 * i + 1];
    EXPECT_NEAR(batch.f[i], std::sin(kPi * x) * std::sin(kPi * y), 1e-14);
  }
  for (std::size_t j = 0; j < batch.n_boundary(); ++j) EXPECT_EQ(batch.p[j], 0.0);
  const double centre[2] = {0.5, 0.5};
  EXPECT_NEAR(problem.exact()(centre), -1 / (2 * kPi * kPi), 1e-15);
}

TEST(Problem, SameSeedSameBatchAndCopiesWork) {
  const Problem problem = Problem::build(seed_spec());
  const Problem copy = problem;
  Rng a(5), b(5);
  CollocationBatch ba, bb;
  problem.sample(a, 50, 20, ba);
  copy.sample(b, 50, 20, bb);
  EXPECT_EQ(ba.interior, bb.interior);
  EXPECT_EQ(ba.f, bb.f);
  EXPECT_EQ(ba.boundary, bb.boundary);
  EXPECT_EQ(ba.normals, bb.normals);
}

TEST(Problem, FirstMatchingBoundaryEntryApplies) {
  ProblemSpec s = seed_spec();
  s.boundary.clear();
  s.boundary.push_back(dirichlet("1 + y", "x < 1e-12", 0));  // left side
  s.boundary.push_back(dirichlet("2*x", "", 1));             // the rest
  const Problem problem = Problem::build(s);
  EXPECT_FALSE(problem.boundary()[0].everywhere);
  EXPECT_TRUE(problem.boundary()[1].everywhere);
  const double left[2] = {0, 0.5}, bottom[2] = {0.5, 0};
  EXPECT_EQ(problem.boundary_entry(left), 0);
  EXPECT_EQ(problem.boundary_entry(bottom), 1);

  Rng rng(2);
  CollocationBatch batch;
  problem.sample(rng, 10, 400, batch);
  std::size_t on_left = 0;
  for (std::size_t j = 0; j < batch.n_boundary(); ++j) {
    const double x = batch.boundary[2 * j], y = batch.boundary[2 * j + 1];
    if (x == 0) {
      ++on_left;
      EXPECT_DOUBLE_EQ(batch.p[j], 1 + y);
    } else {
      EXPECT_DOUBLE_EQ(batch.p[j], 2 * x);
    }
  }
  EXPECT_GT(on_left, 50u);
}

TEST(Problem, BadExpressionNamesFileLineColumnAndKey) {
  ProblemSpec s = seed_spec();
  s.f = expr("sin(pi*x) + q", "problem.equation.f", 3, 7);
  const InputError e = build_error(s);
  const std::string what = e.what();
  EXPECT_EQ(what.rfind("x.yaml:3:7: problem.equation.f: invalid expression \"sin(pi*x) + q\": ", 0),
            0u)
      << what;
  EXPECT_NE(what.find("unknown variable 'q'"), std::string::npos) << what;
  EXPECT_EQ(e.key(), "problem.equation.f");
  EXPECT_EQ(e.loc().line, 3);
}

TEST(Problem, BadBoundaryValueAndExactAreReported) {
  ProblemSpec s = seed_spec();
  s.boundary[0].value.text = "x +";
  EXPECT_EQ(build_error(s).key(), "problem.boundary[0].value");
  s = seed_spec();
  s.exact->text = "";
  EXPECT_NE(
      std::string(build_error(s).what()).find("problem.exact: invalid expression \"\": empty"),
      std::string::npos);
}

TEST(Problem, WhereMatchingNoPointIsAnError) {
  ProblemSpec s = seed_spec();
  s.boundary.insert(s.boundary.begin(), dirichlet("1", "x > 2", 0));
  s.boundary[1].value.key = "problem.boundary[1].value";
  const InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.boundary[0].where");
  EXPECT_EQ(e.loc().line, 11);
  EXPECT_NE(std::string(e.what()).find("holds at no boundary point"), std::string::npos);
}

TEST(Problem, UncoveredBoundaryIsAnError) {
  ProblemSpec s = seed_spec();
  s.boundary = {dirichlet("0", "y < 1e-12", 0)};
  const InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.boundary[0].where");
  EXPECT_NE(e.message().find("no boundary entry applies at ("), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("add an entry without 'where'"), std::string::npos);
}

TEST(Problem, NoBoundaryEntriesIsAnError) {
  ProblemSpec s = seed_spec();
  s.boundary.clear();
  const InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.boundary");
  EXPECT_EQ(e.message(), "expected at least one boundary condition");
}

TEST(Problem, UnsupportedTypesAreErrors) {
  ProblemSpec s = seed_spec();
  s.boundary[0].type = "periodic";
  const InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.boundary[0].type");
  EXPECT_NE(e.message().find("'periodic'"), std::string::npos);
  EXPECT_NE(e.message().find("expected dirichlet, neumann or robin"), std::string::npos);

  s = seed_spec();
  s.equation = "wave";
  EXPECT_NE(build_error(s).message().find("expected poisson, helmholtz, heat or linear"),
            std::string::npos);
}

TEST(Problem, DomainErrorsCarryDomainKey) {
  ProblemSpec s = seed_spec();
  s.domain.max = {1, -1};
  InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.domain");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_NE(e.message().find("min must be less than max"), std::string::npos) << e.what();

  s = seed_spec();
  s.domain.type = "box";  // 3D type in a 2D problem
  s.domain.min = {0, 0, 0};
  s.domain.max = {1, 1, 1};
  EXPECT_NE(build_error(s).message().find("3D domain"), std::string::npos);

  s = seed_spec();
  s.domain.type = "sphere";
  EXPECT_NE(build_error(s).message().find("unknown domain type 'sphere'"), std::string::npos);

  s = seed_spec();
  s.domain.type = "polygon";
  s.domain.vertices = {{0, 0}, {1, 1}, {1, 0}, {0, 1}};
  EXPECT_NE(build_error(s).message().find("self-intersecting"), std::string::npos);
}

TEST(Problem, ThreeDimensionalBall) {
  ProblemSpec s;
  s.dim = 3;
  s.domain.type = "ball";
  s.domain.centre = {0, 0, 0};
  s.domain.radius = 1;
  s.f = expr("x*y*z", "problem.equation.f");
  s.boundary.push_back(dirichlet("z", "", 0));
  const Problem problem = Problem::build(s);
  Rng rng(4);
  CollocationBatch batch;
  problem.sample(rng, 30, 30, batch);
  EXPECT_EQ(batch.dim, 3);
  for (std::size_t i = 0; i < 30; ++i) {
    const double* x = &batch.interior[3 * i];
    EXPECT_DOUBLE_EQ(batch.f[i], x[0] * x[1] * x[2]);
    EXPECT_DOUBLE_EQ(batch.p[i], batch.boundary[3 * i + 2]);
  }
}

}  // namespace
}  // namespace rbfpde
