// General operators, Neumann/Robin conditions and space-time problems: the coefficients each
// batch carries, the row residuals of a manufactured solution, the space-time domain, and the
// problems refused up front.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "problems/problem.hpp"
#include "problems/space_time.hpp"

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

ExprSpec expr(const std::string& text, const std::string& key) {
  return ExprSpec{text, key, SourceLoc{"g.yaml", 4, 9}};
}

BoundarySpec entry(const std::string& type, const std::string& value, const std::string& where,
                   int index) {
  const std::string base = "problem.boundary[" + std::to_string(index) + "]";
  BoundarySpec b;
  b.type = type;
  b.value = expr(value, base + ".value");
  b.where = expr(where, base + ".where");
  b.loc = SourceLoc{"g.yaml", 10 + index, 7};
  return b;
}

ProblemSpec square_spec() {
  ProblemSpec s;
  s.dim = 2;
  s.domain.type = "rectangle";
  s.domain.min = {0, 0};
  s.domain.max = {1, 1};
  s.domain.loc = SourceLoc{"g.yaml", 2, 3};
  s.boundary_loc = SourceLoc{"g.yaml", 9, 3};
  s.f = expr("1", "problem.equation.f");
  return s;
}

// Linear in space-time with a reaction term and a Robin side (for fill_coefficients).
ProblemSpec heat_spec_for_fill() {
  ProblemSpec s = square_spec();
  s.dim = 3;
  s.time = TimeSpec{0, 1, SourceLoc{"g.yaml", 6, 9}};
  s.equation = "linear";
  s.a = expr("1 + t", "problem.equation.a");
  s.b = {expr("0", "problem.equation.b[0]"), expr("x", "problem.equation.b[1]"),
         expr("-1", "problem.equation.b[2]")};
  s.c = expr("y*t", "problem.equation.c");
  s.initial = expr("x", "problem.initial");
  BoundarySpec robin = entry("robin", "t", "x < 0.5", 0);
  robin.alpha = expr("1 + y", "problem.boundary[0].alpha");
  robin.beta = expr("t", "problem.boundary[0].beta");
  s.boundary = {robin, entry("dirichlet", "0", "1", 1)};
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

TEST(ProblemGeneral, PoissonDirichletBatchesCarryNoCoefficients) {
  ProblemSpec s = square_spec();
  s.boundary.push_back(entry("dirichlet", "x", "1", 0));
  const Problem p = Problem::build(s);
  EXPECT_TRUE(p.poisson_dirichlet());
  EXPECT_FALSE(p.uses_gradient());
  Rng rng(3);
  CollocationBatch b;
  p.sample(rng, 40, 20, b);
  EXPECT_TRUE(b.poisson_dirichlet());
  EXPECT_EQ(b.space_dim, 0);
  EXPECT_TRUE(b.a.empty() && b.b.empty() && b.c.empty() && b.alpha.empty() && b.beta.empty());
}

TEST(ProblemGeneral, HelmholtzFillsTheReactionTermOnly) {
  ProblemSpec s = square_spec();
  s.equation = "helmholtz";
  s.k = expr("4", "problem.equation.k");
  s.boundary.push_back(entry("dirichlet", "0", "1", 0));
  const Problem p = Problem::build(s);
  EXPECT_FALSE(p.poisson_dirichlet());
  Rng rng(3);
  CollocationBatch b;
  p.sample(rng, 30, 10, b);
  ASSERT_EQ(b.c.size(), 30u);
  for (double c : b.c) EXPECT_EQ(c, 16.0);
  EXPECT_TRUE(b.a.empty() && b.b.empty() && b.alpha.empty() && b.beta.empty());
}

TEST(ProblemGeneral, MixedConditionsGiveEachPointItsEntrysCoefficients) {
  ProblemSpec s = square_spec();
  s.boundary.push_back(entry("neumann", "2", "x > 1 - 1e-9", 0));
  BoundarySpec robin = entry("robin", "3", "y < 1e-9", 1);
  robin.alpha = expr("1 + x", "problem.boundary[1].alpha");
  robin.beta = expr("0.5", "problem.boundary[1].beta");
  s.boundary.push_back(robin);
  s.boundary.push_back(entry("dirichlet", "7", "1", 2));
  const Problem p = Problem::build(s);
  EXPECT_TRUE(p.uses_gradient());
  Rng rng(5);
  CollocationBatch b;
  p.sample(rng, 10, 400, b);
  ASSERT_EQ(b.alpha.size(), 400u);
  ASSERT_EQ(b.beta.size(), 400u);
  int counts[3] = {0, 0, 0};
  for (std::size_t j = 0; j < 400; ++j) {
    const double x = b.boundary[2 * j], y = b.boundary[2 * j + 1];
    if (x > 1 - 1e-9) {
      EXPECT_EQ(b.alpha[j], 0.0);
      EXPECT_EQ(b.beta[j], 1.0);
      EXPECT_EQ(b.p[j], 2.0);
      ++counts[0];
    } else if (y < 1e-9) {
      EXPECT_DOUBLE_EQ(b.alpha[j], 1 + x);
      EXPECT_EQ(b.beta[j], 0.5);
      EXPECT_EQ(b.p[j], 3.0);
      ++counts[1];
    } else {
      EXPECT_EQ(b.alpha[j], 1.0);
      EXPECT_EQ(b.beta[j], 0.0);
      EXPECT_EQ(b.p[j], 7.0);
      ++counts[2];
    }
  }
  // Each side is a quarter of the boundary.
  EXPECT_GT(counts[0], 60);
  EXPECT_GT(counts[1], 60);
  EXPECT_GT(counts[2], 150);
}

// u = sin(x)·cos(2y) + x·y solves a·Δu + b·∇u + c·u = f with the f computed here; its rows'
// residuals, from the exact u, ∇u and Δu, vanish at every interior and boundary point.
TEST(ProblemGeneral, ResidualsOfTheExactSolutionVanish) {
  ProblemSpec s = square_spec();
  s.equation = "linear";
  const std::string u = "(sin(x)*cos(2*y) + x*y)";
  const std::string ux = "(cos(x)*cos(2*y) + y)", uy = "(-2*sin(x)*sin(2*y) + x)";
  const std::string lap = "(-5*sin(x)*cos(2*y))";
  s.a = expr("1 + x*x", "problem.equation.a");
  s.b = {expr("y", "problem.equation.b[0]"), expr("-x", "problem.equation.b[1]")};
  s.c = expr("2 + sin(y)", "problem.equation.c");
  s.f = expr("(1 + x*x)*" + lap + " + y*" + ux + " - x*" + uy + " + (2 + sin(y))*" + u,
             "problem.equation.f");
  // ∂u/∂n on the sides: right +ux, left −ux, top +uy, bottom −uy.
  BoundarySpec right = entry("neumann", ux, "x > 1 - 1e-9", 0);
  BoundarySpec left = entry("robin", "2*" + u + " - 3*" + ux, "x < 1e-9", 1);
  left.alpha = expr("2", "problem.boundary[1].alpha");
  left.beta = expr("3", "problem.boundary[1].beta");
  s.boundary = {right, left, entry("dirichlet", u, "1", 2)};
  const Problem p = Problem::build(s);
  EXPECT_FALSE(p.poisson_dirichlet());
  EXPECT_TRUE(p.uses_gradient());

  Rng rng(11);
  CollocationBatch b;
  p.sample(rng, 60, 80, b);
  const Expression U(u, 2), UX(ux, 2), UY(uy, 2), LAP(lap, 2);
  const auto values = [&](const std::vector<double>& pts, std::vector<double>& uv,
                          std::vector<double>& grad, std::vector<double>& lv) {
    const std::size_t n = pts.size() / 2;
    uv.resize(n), grad.resize(2 * n), lv.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const double* x = &pts[2 * i];
      uv[i] = U(x), grad[2 * i] = UX(x), grad[2 * i + 1] = UY(x), lv[i] = LAP(x);
    }
  };
  std::vector<double> ui, gi, li, ub, gb, lb, e, r;
  values(b.interior, ui, gi, li);
  values(b.boundary, ub, gb, lb);
  batch_residuals(b, ui, gi, li, ub, gb, e, r);
  for (double v : e) EXPECT_NEAR(v, 0, 1e-12);
  for (double v : r) EXPECT_NEAR(v, 0, 1e-12);
  // The same rows from the problem's own coefficients.
  std::vector<double> e2(e.size()), r2(r.size());
  p.interior_residuals(b.interior.data(), e.size(), ui.data(), gi.data(), li.data(), e2.data());
  p.boundary_residuals(b.boundary.data(), b.normals.data(), r.size(), ub.data(), gb.data(),
                       r2.data());
  for (std::size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(e2[i], e[i], 1e-13);
  for (std::size_t j = 0; j < r.size(); ++j) EXPECT_NEAR(r2[j], r[j], 1e-13);
  // A wrong u is seen.
  for (double& v : ub) v += 0.1;
  batch_residuals(b, ui, gi, li, ub, gb, e, r);
  double worst = 0;
  for (double v : r) worst = std::max(worst, std::abs(v));
  EXPECT_GT(worst, 0.09);
}

// A batch restored from a checkpoint keeps its points and targets only: fill_coefficients gives
// back exactly the coefficients sample() drew.
TEST(ProblemGeneral, FillCoefficientsRestoresWhatSampleSet) {
  ProblemSpec s = heat_spec_for_fill();
  const Problem p = Problem::build(s);
  Rng rng(4);
  CollocationBatch b;
  p.sample(rng, 50, 300, b);
  CollocationBatch restored = b;
  restored.a.clear(), restored.b.clear(), restored.c.clear();
  restored.alpha.clear(), restored.beta.clear();
  restored.space_dim = 0;
  p.fill_coefficients(restored);
  EXPECT_EQ(restored.space_dim, b.space_dim);
  EXPECT_EQ(restored.a, b.a);
  EXPECT_EQ(restored.b, b.b);
  EXPECT_EQ(restored.c, b.c);
  EXPECT_EQ(restored.alpha, b.alpha);
  EXPECT_EQ(restored.beta, b.beta);
  EXPECT_FALSE(b.alpha.empty());
  EXPECT_FALSE(b.beta.empty());
  EXPECT_FALSE(b.c.empty());
}

TEST(ProblemGeneral, OnlyNeumannWithoutReactionIsRefused) {
  ProblemSpec s = square_spec();
  s.boundary.push_back(entry("neumann", "0", "x < 0.5", 0));
  BoundarySpec robin = entry("robin", "0", "1", 1);
  robin.alpha = expr("0", "problem.boundary[1].alpha");
  robin.beta = expr("1", "problem.boundary[1].beta");
  s.boundary.push_back(robin);
  const InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.boundary");
  EXPECT_EQ(e.loc().line, 9);
  EXPECT_NE(e.message().find("up to an added constant"), std::string::npos) << e.what();
  // A reaction term fixes the constant.
  s.equation = "helmholtz";
  s.k = expr("2", "problem.equation.k");
  EXPECT_NO_THROW(Problem::build(s));
  // So does a Robin entry with α ≠ 0 somewhere.
  s.equation = "poisson";
  s.boundary[1].alpha.text = "x";
  EXPECT_NO_THROW(Problem::build(s));
}

TEST(ProblemGeneral, RobinWithoutAlphaAndWrongBAreRefused) {
  ProblemSpec s = square_spec();
  s.boundary.push_back(entry("robin", "0", "1", 0));
  InputError e = build_error(s);
  EXPECT_EQ(e.key(), "problem.boundary[0].alpha");
  s.boundary[0].type = "dirichlet";
  s.equation = "linear";
  s.b = {expr("1", "problem.equation.b[0]")};
  e = build_error(s);
  EXPECT_EQ(e.key(), "problem.equation.b");
  EXPECT_NE(e.message().find("expected 2 expressions"), std::string::npos) << e.what();
  s.b.clear();
  s.equation = "heat";
  s.diffusivity = expr("1", "problem.equation.diffusivity");
  e = build_error(s);
  EXPECT_EQ(e.key(), "problem.equation.type");
  s.equation = "wave";
  e = build_error(s);
  EXPECT_EQ(e.key(), "problem.equation.type");
}

ProblemSpec heat_spec(double start, double end) {
  ProblemSpec s = square_spec();
  s.dim = 3;
  s.time = TimeSpec{start, end, SourceLoc{"g.yaml", 6, 9}};
  s.equation = "heat";
  s.diffusivity = expr("0.5", "problem.equation.diffusivity");
  s.f = expr("x*t", "problem.equation.f");
  s.initial = expr("sin(pi*x)*sin(pi*y)", "problem.initial");
  s.boundary.push_back(entry("dirichlet", "t", "1", 0));
  return s;
}

TEST(ProblemGeneral, HeatIsASpaceTimeRowWithAnInitialFace) {
  const Problem p = Problem::build(heat_spec(0.5, 2.5));
  EXPECT_EQ(p.dim(), 3);
  EXPECT_EQ(p.space_dim(), 2);
  EXPECT_TRUE(p.has_time());
  EXPECT_FALSE(p.poisson_dirichlet());
  Rng rng(9);
  CollocationBatch b;
  p.sample(rng, 200, 2000, b);
  EXPECT_EQ(b.dim, 3);
  EXPECT_EQ(b.space_dim, 2);
  EXPECT_EQ(b.laplacian_dims(), 2);
  ASSERT_EQ(b.a.size(), 200u);
  ASSERT_EQ(b.b.size(), 600u);
  EXPECT_TRUE(b.c.empty() && b.alpha.empty() && b.beta.empty());
  for (std::size_t i = 0; i < 200; ++i) {
    const double* x = &b.interior[3 * i];
    EXPECT_EQ(b.a[i], 0.5);
    EXPECT_EQ(b.b[3 * i], 0.0);
    EXPECT_EQ(b.b[3 * i + 1], 0.0);
    EXPECT_EQ(b.b[3 * i + 2], -1.0);
    EXPECT_DOUBLE_EQ(b.f[i], -x[0] * x[2]);  // the row's right side is −f
    EXPECT_GE(x[2], 0.5);
    EXPECT_LE(x[2], 2.5);
  }
  int initial = 0;
  for (std::size_t j = 0; j < 2000; ++j) {
    const double* x = &b.boundary[3 * j];
    const double* n = &b.normals[3 * j];
    if (n[2] == -1.0) {
      ++initial;
      EXPECT_EQ(x[2], 0.5);
      EXPECT_EQ(n[0], 0.0);
      EXPECT_EQ(n[1], 0.0);
      EXPECT_NEAR(b.p[j], std::sin(kPi * x[0]) * std::sin(kPi * x[1]), 1e-15);
    } else {
      EXPECT_EQ(n[2], 0.0);
      EXPECT_NEAR(std::hypot(n[0], n[1]), 1.0, 1e-15);
      EXPECT_EQ(b.p[j], x[2]);  // the lateral Dirichlet value t
    }
  }
  // The initial face is |Ω| / (|Ω| + |∂Ω|·T) = 1 / (1 + 4·2) of the boundary.
  EXPECT_NEAR(initial / 2000.0, 1.0 / 9.0, 0.025);
}

TEST(ProblemGeneral, TimeIsRefusedWhenEmptyOrWithoutInitialCondition) {
  InputError e = build_error(heat_spec(1, 1));
  EXPECT_EQ(e.key(), "problem.time");
  ProblemSpec s = heat_spec(0, 1);
  s.initial.reset();
  e = build_error(s);
  EXPECT_EQ(e.key(), "problem.initial");
  // t is a variable only with time.
  ProblemSpec p = square_spec();
  p.f = expr("t", "problem.equation.f");
  p.boundary.push_back(entry("dirichlet", "0", "1", 0));
  e = build_error(p);
  EXPECT_EQ(e.key(), "problem.equation.f");
}

TEST(SpaceTimeDomain, FollowsTheProduct) {
  const SpaceTimeDomain box(make_box({0, 0}, {2, 1}), -1, 3);
  EXPECT_EQ(box.dim(), 3);
  EXPECT_NEAR(box.space_boundary_measure(), 6.0, 0.03);
  EXPECT_DOUBLE_EQ(box.measure(), 8.0);
  double lo[3], hi[3];
  box.bounding_box(lo, hi);
  EXPECT_EQ(lo[2], -1.0);
  EXPECT_EQ(hi[2], 3.0);
  EXPECT_EQ(hi[0], 2.0);
  const double inside[3] = {0.5, 0.5, 2.9}, late[3] = {0.5, 0.5, 3.5}, beside[3] = {3, 0.5, 4};
  EXPECT_TRUE(box.contains(inside));
  EXPECT_FALSE(box.contains(late));
  EXPECT_NEAR(box.distance_to_boundary(inside), 0.1, 1e-12);
  EXPECT_NEAR(box.distance_to_boundary(late), 0.5, 1e-12);
  EXPECT_NEAR(box.distance_to_boundary(beside), std::hypot(1.0, 1.0), 1e-12);

  const SpaceTimeDomain disk(make_ball({0, 0}, 0.5), 0, 1);
  EXPECT_NEAR(disk.space_boundary_measure(), kPi, 1e-9);  // (x − c)·n = r exactly
  Rng rng(2);
  std::vector<double> pts(3 * 500), nrm(3 * 500);
  disk.sample_interior(rng, 500, pts.data());
  for (std::size_t i = 0; i < 500; ++i) EXPECT_TRUE(disk.contains(&pts[3 * i]));
  disk.sample_boundary(rng, 500, pts.data(), nrm.data());
  for (std::size_t i = 0; i < 500; ++i) {
    const double* x = &pts[3 * i];
    const double* n = &nrm[3 * i];
    EXPECT_TRUE(disk.contains(x));
    // A step along the outward normal leaves the domain.
    const double out[3] = {x[0] + 1e-6 * n[0], x[1] + 1e-6 * n[1], x[2] + 1e-6 * n[2]};
    EXPECT_FALSE(disk.contains(out));
  }
  EXPECT_THROW(SpaceTimeDomain(make_ball({0, 0}, 1), 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace rbfpde
