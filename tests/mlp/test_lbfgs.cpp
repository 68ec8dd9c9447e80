// The L-BFGS minimiser alone (solver/train/lbfgs.hpp), on functions whose minimum is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "problems/random.hpp"
#include "solver/train/lbfgs.hpp"

namespace rbfpde {
namespace {

// The chained Rosenbrock function Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)², minimum 0 at (1, …, 1).
double rosenbrock(const std::vector<double>& x, std::vector<double>& g) {
  double f = 0;
  g.assign(x.size(), 0.0);
  for (std::size_t i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    f += 100 * a * a + b * b;
    g[i] += -400 * a * x[i] - 2 * b;
    g[i + 1] += 200 * a;
  }
  return f;
}

// The classic start (−1.2, 1, −1.2, 1, …).
std::vector<double> rosenbrock_start(int n) {
  std::vector<double> x(n);
  for (int i = 0; i < n; ++i) x[i] = i % 2 == 0 ? -1.2 : 1.0;
  return x;
}

double max_distance(const std::vector<double>& x, const std::vector<double>& y) {
  double d = 0;
  for (std::size_t i = 0; i < x.size(); ++i) d = std::max(d, std::fabs(x[i] - y[i]));
  return d;
}

TEST(Lbfgs, Rosenbrock2dReachesTheMinimum) {
  const LbfgsResult r = lbfgs_minimize(rosenbrock, rosenbrock_start(2), 200, 1e-12);
  EXPECT_EQ(r.stop, "gradient");
  EXPECT_LE(r.iterations, 80);  // measured 47
  EXPECT_LT(max_distance(r.x, {1, 1}), 1e-8);
  EXPECT_LT(r.loss, 1e-16);
}

TEST(Lbfgs, Rosenbrock20dReachesTheMinimum) {
  const LbfgsResult r = lbfgs_minimize(rosenbrock, rosenbrock_start(20), 400, 1e-12);
  EXPECT_EQ(r.stop, "gradient");
  EXPECT_LE(r.iterations, 250);  // measured 163
  EXPECT_LT(max_distance(r.x, std::vector<double>(20, 1.0)), 1e-8);
}

// ½ (x − x*)ᵀ A (x − x*) with A = Qᵀ diag(1 … 10) Q, Q a random rotation: condition number 10,
// eigenvalues spread evenly so that no clustering helps.
struct Quadratic {
  int n;
  std::vector<double> a, x_star;

  explicit Quadratic(int size) : n(size), a(std::size_t(size) * size, 0.0), x_star(size) {
    Rng rng(7);
    std::vector<std::vector<double>> q(n, std::vector<double>(n));
    for (int i = 0; i < n; ++i) {  // Gram–Schmidt on random rows
      for (double& v : q[i]) v = uniform(rng, -1, 1);
      for (int k = 0; k < i; ++k) {
        double d = 0;
        for (int j = 0; j < n; ++j) d += q[i][j] * q[k][j];
        for (int j = 0; j < n; ++j) q[i][j] -= d * q[k][j];
      }
      double norm = 0;
      for (double v : q[i]) norm += v * v;
      for (double& v : q[i]) v /= std::sqrt(norm);
    }
    for (int k = 0; k < n; ++k) {
      const double lambda = 1 + 9.0 * k / (n - 1);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) a[i * n + j] += lambda * q[k][i] * q[k][j];
    }
    for (double& v : x_star) v = uniform(rng, -1, 1);
  }

  double operator()(const std::vector<double>& x, std::vector<double>& g) const {
    double f = 0;
    g.assign(n, 0.0);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) g[i] += a[i * n + j] * (x[j] - x_star[j]);
      f += 0.5 * (x[i] - x_star[i]) * g[i];
    }
    return f;
  }
};

TEST(Lbfgs, ConvexQuadraticConvergesInAboutNIterations) {
  // With exact line searches (L-)BFGS would end in n iterations; the Armijo search takes the
  // unit step whenever it is good enough, which costs a few iterations more (measured: n = 10
  // in 16, n = 20 in 22).
  for (int n : {10, 20}) {
    SCOPED_TRACE(n);
    const Quadratic quad(n);
    LbfgsOptions options;
    options.history = n;
    std::vector<double> g0;
    quad(std::vector<double>(n, 0.0), g0);
    double g0_norm = 0;
    for (double v : g0) g0_norm += v * v;
    const LbfgsResult r =
        lbfgs_minimize(quad, std::vector<double>(n, 0.0), 1000, 1e-8 * std::sqrt(g0_norm), options);
    EXPECT_EQ(r.stop, "gradient");
    EXPECT_LE(r.iterations, n + 8);
    EXPECT_LE(r.evaluations, r.iterations + 5);  // the unit step is nearly always accepted
    EXPECT_LT(max_distance(r.x, quad.x_star), 1e-6);
  }
}

TEST(Lbfgs, StepsBackFromNonFiniteTrialsAndStallsWhenNothingDecreases) {
  // 10 x², undefined (NaN) left of −0.5: from x = 0.3 the first step along −g has unit length
  // and lands at −0.7, where the search must halve its way back.
  long nan_trials = 0;
  const LbfgsObjective f = [&](const std::vector<double>& x, std::vector<double>& g) {
    g.assign(1, 20 * x[0]);
    if (x[0] < -0.5) ++nan_trials;
    return x[0] < -0.5 ? std::nan("") : 10 * x[0] * x[0];
  };
  const LbfgsResult r = lbfgs_minimize(f, {0.3}, 100, 1e-10);
  EXPECT_EQ(r.stop, "gradient");
  EXPECT_EQ(nan_trials, 1);
  EXPECT_NEAR(r.x[0], 0.0, 1e-11);

  // A function no step can decrease (its gradient lies): a stall, with x left where it was.
  const LbfgsObjective liar = [](const std::vector<double>& x, std::vector<double>& g) {
    g.assign(1, 1.0);
    return x[0] * x[0];
  };
  Lbfgs stuck(liar, {0.0});
  EXPECT_EQ(stuck.iterate(), Lbfgs::Status::stalled);
  EXPECT_EQ(stuck.x()[0], 0.0);
  EXPECT_EQ(stuck.evaluations(), 1 + 21);  // the start, then step 1 and its 20 halvings

  const LbfgsObjective nan = [](const std::vector<double>&, std::vector<double>& g) {
    g.assign(1, 0.0);
    return std::nan("");
  };
  EXPECT_EQ(lbfgs_minimize(nan, {1.0}, 10, 0).stop, "non_finite");
}

TEST(Lbfgs, KeepsAtMostHistoryPairs) {
  LbfgsOptions options;
  options.history = 3;
  Lbfgs solver(rosenbrock, rosenbrock_start(6), options);
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(solver.iterate(), Lbfgs::Status::ok);
    EXPECT_LE(solver.pairs(), 3u);
  }
  EXPECT_EQ(solver.pairs(), 3u);
}

TEST(Lbfgs, ContinuesFromItsStateToTheSameSteps) {
  LbfgsOptions options;
  options.history = 4;
  Lbfgs straight(rosenbrock, rosenbrock_start(6), options);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(straight.iterate(), Lbfgs::Status::ok);
  Lbfgs resumed(rosenbrock, straight.state(), options);
  EXPECT_EQ(resumed.evaluations(), straight.evaluations());  // resuming evaluates nothing
  ASSERT_EQ(resumed.pairs(), 4u);
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(straight.iterate(), Lbfgs::Status::ok);
    ASSERT_EQ(resumed.iterate(), Lbfgs::Status::ok);
  }
  EXPECT_EQ(resumed.x(), straight.x());
  EXPECT_EQ(resumed.loss(), straight.loss());
  EXPECT_EQ(resumed.evaluations(), straight.evaluations());
}

}  // namespace
}  // namespace rbfpde
