// The MLP's derivative streams and its hand-written backward pass against finite differences
// (docs/mathematics.md, "The MLP"): ∇u and Δu against differences of u in x, ∂I/∂θ against
// central differences of the loss in every parameter, and the activations' derivatives against
// their own.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "kernels/mlp_math.hpp"
#include "mlp_test_util.hpp"

namespace rbfpde {
namespace {

const char* const kActivations[] = {"tanh", "sin", "sigmoid"};

TEST(MlpMath, ActivationDerivativesMatchFiniteDifferences) {
  const double h = 1e-5;
  for (const char* name : kActivations) {
    const Activation a = parse_activation(name);
    for (double z : {-3.0, -0.7, 0.0, 0.4, 2.5}) {
      const ActivationTerms<double> t = activation_terms(a, z);
      const ActivationTerms<double> p = activation_terms(a, z + h);
      const ActivationTerms<double> m = activation_terms(a, z - h);
      EXPECT_NEAR(t.d1, (p.s - m.s) / (2 * h), 1e-9) << name << " z=" << z;
      EXPECT_NEAR(t.d2, (p.d1 - m.d1) / (2 * h), 1e-9) << name << " z=" << z;
      EXPECT_NEAR(t.d3, (p.d2 - m.d2) / (2 * h), 1e-9) << name << " z=" << z;
      double s = 0, d1 = 0;
      activation_value_slope(a, z, s, d1);
      EXPECT_EQ(s, t.s);
      EXPECT_EQ(d1, t.d1);
    }
  }
  // The sigmoid stays finite far out, where 1/(1 + e^−z) would compute Inf/Inf.
  EXPECT_EQ(activation_terms(Activation::kSigmoid, -800.0).s, 0.0);
  EXPECT_EQ(activation_terms(Activation::kSigmoid, 800.0).s, 1.0);
}

class InputDerivatives : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(InputDerivatives, GradientAndLaplacianMatchFiniteDifferences) {
  const int dim = std::get<0>(GetParam());
  MlpShape shape;
  shape.dim = dim;
  shape.hidden = {7, 6, 5};
  shape.activation = std::get<1>(GetParam());
  auto backend = make_cpu_mlp_backend<double>(mlp_options(shape, 1.0));
  backend->set_parameters(random_mlp_parameters(shape, 11 + dim));

  Rng rng(5);
  const int n = 9;
  std::vector<double> pts;
  for (int i = 0; i < n * dim; ++i) pts.push_back(uniform(rng, -1, 1));
  std::vector<double> u, lap, grad;
  backend->evaluate(pts, u, lap);
  backend->evaluate_gradient(pts, grad);
  ASSERT_EQ(grad.size(), std::size_t(n * dim));

  // Shifted copies of every point: ±h e_j, evaluated in one call.
  const double h = 1e-4;
  std::vector<double> shifted;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < dim; ++j)
      for (double s : {h, -h}) {
        for (int k = 0; k < dim; ++k) shifted.push_back(pts[i * dim + k] + (k == j ? s : 0.0));
      }
  std::vector<double> us, laps;
  backend->evaluate(shifted, us, laps);
  double max_grad = 0, max_lap = 0;
  for (int i = 0; i < n; ++i) {
    double fd_lap = 0;
    for (int j = 0; j < dim; ++j) {
      const double up = us[(i * dim + j) * 2], um = us[(i * dim + j) * 2 + 1];
      const double fd_grad = (up - um) / (2 * h);
      EXPECT_NEAR(grad[i * dim + j], fd_grad, 1e-8 + 1e-7 * std::abs(fd_grad))
          << "point " << i << " direction " << j;
      fd_lap += (up - 2 * u[i] + um) / (h * h);
      max_grad = std::max(max_grad, std::abs(grad[i * dim + j]));
    }
    EXPECT_NEAR(lap[i], fd_lap, 1e-6 + 1e-5 * std::abs(fd_lap)) << "point " << i;
    max_lap = std::max(max_lap, std::abs(lap[i]));
  }
  // The network is not trivially flat: the comparisons above compared real numbers (sigmoid
  // networks are the flattest, σ' ≤ 1/4 per layer).
  std::printf("%dD %s: max |grad u| %.3e, max |lap u| %.3e\n", dim, shape.activation.c_str(),
              max_grad, max_lap);
  EXPECT_GT(max_grad, 1e-3);
  EXPECT_GT(max_lap, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(DimsAndActivations, InputDerivatives,
                         ::testing::Combine(::testing::Values(2, 3),
                                            ::testing::Values("tanh", "sin", "sigmoid")));

class ParameterGradient : public ::testing::TestWithParam<std::tuple<int, const char*>> {};

TEST_P(ParameterGradient, MatchesCentralDifferencesOfTheLoss) {
  const int dim = std::get<0>(GetParam());
  MlpShape shape;
  shape.dim = dim;
  shape.hidden = {5, 4};
  shape.activation = std::get<1>(GetParam());
  const double penalty = 3.0;
  auto backend = make_cpu_mlp_backend<double>(mlp_options(shape, penalty));
  const std::vector<double> theta = random_mlp_parameters(shape, 21 + dim);
  ASSERT_EQ(theta.size(), shape.parameter_count());
  // More points than one block holds, so that the blocks' sums are tested too.
  backend->set_batch(random_batch(dim, 150, 110, 3));
  backend->set_parameters(theta);
  const LossParts parts = backend->loss_and_gradient();
  std::vector<double> g;
  backend->gradient(g);
  ASSERT_EQ(g.size(), theta.size());
  EXPECT_NEAR(parts.loss,
              0.5 * parts.rms_interior * parts.rms_interior +
                  0.5 * penalty * parts.rms_boundary * parts.rms_boundary,
              1e-12 * parts.loss);

  const double h = 1e-6;
  double max_g = 0;
  for (std::size_t k = 0; k < theta.size(); ++k) {
    std::vector<double> t = theta;
    t[k] = theta[k] + h;
    backend->set_parameters(t);
    const double lp = backend->residuals().loss;
    t[k] = theta[k] - h;
    backend->set_parameters(t);
    const double lm = backend->residuals().loss;
    const double fd = (lp - lm) / (2 * h);
    EXPECT_NEAR(g[k], fd, 1e-7 + 1e-6 * std::abs(fd)) << "parameter " << k;
    max_g = std::max(max_g, std::abs(g[k]));
  }
  EXPECT_GT(max_g, 1e-2);
}

INSTANTIATE_TEST_SUITE_P(DimsAndActivations, ParameterGradient,
                         ::testing::Combine(::testing::Values(2, 3),
                                            ::testing::Values("tanh", "sin", "sigmoid")));

TEST(MlpBackend, LossIsTheRbfFunctional) {
  // I = 1/(2N) Σ (Δu − f)² + λ/(2K) Σ (u − p)², recomputed here from evaluate().
  MlpShape shape;
  shape.hidden = {6, 6};
  auto backend = make_cpu_mlp_backend<double>(mlp_options(shape, 7.0));
  backend->set_parameters(random_mlp_parameters(shape, 4));
  const CollocationBatch batch = random_batch(2, 30, 20, 8);
  backend->set_batch(batch);
  const LossParts parts = backend->residuals();
  std::vector<double> u, lap;
  backend->evaluate(batch.interior, u, lap);
  double se = 0;
  for (std::size_t i = 0; i < u.size(); ++i) se += (lap[i] - batch.f[i]) * (lap[i] - batch.f[i]);
  backend->evaluate(batch.boundary, u, lap);
  double sb = 0;
  for (std::size_t i = 0; i < u.size(); ++i) sb += (u[i] - batch.p[i]) * (u[i] - batch.p[i]);
  EXPECT_NEAR(parts.loss, se / (2 * 30) + 7.0 * sb / (2 * 20), 1e-13);
  std::vector<double> e, b;
  backend->residual_vectors(e, b);
  ASSERT_EQ(e.size(), 30u);
  ASSERT_EQ(b.size(), 20u);
  EXPECT_NEAR(b[3], u[3] - batch.p[3], 1e-15);
}

}  // namespace
}  // namespace rbfpde
