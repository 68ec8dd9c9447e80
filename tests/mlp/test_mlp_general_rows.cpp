// The MLP's general rows (docs/mathematics.md, "The MLP"): interior e = a·Δₛu + b·∇u + c·u − f,
// boundary r = α·u + β·∇u·n − p, with per-point coefficients, on the CPU backend. The loss against
// the rows recomputed from evaluate()/evaluate_gradient(), ∂I/∂θ and the LM Jacobian against
// central differences, Δₛ over the first laplacian_dims coordinates against differences of u,
// and the Poisson/Dirichlet batch as the general one with its default coefficients.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/mlp/mlp_general_batch.hpp"
#include "tests/mlp/mlp_test_util.hpp"

namespace rbfpde {
namespace {

// (dim, space_dim, activation)
using Case = std::tuple<int, int, const char*>;

std::string case_name(const testing::TestParamInfo<Case>& info) {
  return std::to_string(std::get<0>(info.param)) + "d_space" +
         std::to_string(std::get<1>(info.param)) + "_" + std::get<2>(info.param);
}

MlpShape general_shape(int dim, const char* activation) {
  MlpShape shape;
  shape.dim = dim;
  shape.hidden = {5, 4};
  shape.activation = activation;
  return shape;
}

MlpOptions general_options(const MlpShape& shape, int space_dim, double penalty) {
  MlpOptions o = mlp_options(shape, penalty);
  o.laplacian_dims = space_dim;
  return o;
}

class GeneralRows : public ::testing::TestWithParam<Case> {};

TEST_P(GeneralRows, LaplacianActsOnTheFirstLaplacianDimsCoordinates) {
  const auto [dim, space_dim, activation] = GetParam();
  const MlpShape shape = general_shape(dim, activation);
  auto be = make_cpu_mlp_backend<double>(general_options(shape, space_dim, 1.0));
  be->set_parameters(random_mlp_parameters(shape, 31 + dim));
  Rng rng(9);
  const int n = 7;
  std::vector<double> pts;
  for (int i = 0; i < n * dim; ++i) pts.push_back(uniform(rng, -1, 1));
  std::vector<double> u, lap;
  be->evaluate(pts, u, lap);
  const double h = 1e-4;
  std::vector<double> shifted;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < dim; ++j)
      for (double s : {h, -h})
        for (int k = 0; k < dim; ++k) shifted.push_back(pts[i * dim + k] + (k == j ? s : 0.0));
  std::vector<double> us, unused;
  be->evaluate(shifted, us, unused);
  double max_lap = 0, max_rest = 0;
  for (int i = 0; i < n; ++i) {
    double fd_lap = 0, fd_rest = 0;
    for (int j = 0; j < dim; ++j) {
      const double second =
          (us[(i * dim + j) * 2] - 2 * u[i] + us[(i * dim + j) * 2 + 1]) / (h * h);
      (j < space_dim ? fd_lap : fd_rest) += second;
    }
    EXPECT_NEAR(lap[i], fd_lap, 1e-6 + 1e-5 * std::abs(fd_lap)) << "point " << i;
    max_lap = std::max(max_lap, std::abs(lap[i]));
    max_rest = std::max(max_rest, std::abs(fd_rest));
  }
  EXPECT_GT(max_lap, 1e-5);
  // With a coordinate left out, the full Laplacian differs: the test told them apart.
  if (space_dim < dim) {
    EXPECT_GT(max_rest, 1e-4);
  }
}

TEST_P(GeneralRows, LossIsTheGeneralFunctional) {
  const auto [dim, space_dim, activation] = GetParam();
  const MlpShape shape = general_shape(dim, activation);
  const double penalty = 7.0;
  auto be = make_cpu_mlp_backend<double>(general_options(shape, space_dim, penalty));
  be->set_parameters(random_mlp_parameters(shape, 4));
  const CollocationBatch batch = random_general_batch(dim, space_dim, 40, 30, 8);
  be->set_batch(batch);
  const LossParts parts = be->residuals();
  std::vector<double> e, r;
  be->residual_vectors(e, r);
  std::vector<double> want_e, want_r;
  general_rows_from_evaluate(*be, batch, want_e, want_r);
  ASSERT_EQ(e.size(), want_e.size());
  ASSERT_EQ(r.size(), want_r.size());
  double se = 0, sb = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    EXPECT_NEAR(e[i], want_e[i], 1e-12 * (1 + std::abs(want_e[i]))) << "interior " << i;
    se += want_e[i] * want_e[i];
  }
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_NEAR(r[i], want_r[i], 1e-12 * (1 + std::abs(want_r[i]))) << "boundary " << i;
    sb += want_r[i] * want_r[i];
  }
  EXPECT_NEAR(parts.loss, se / (2 * 40) + penalty * sb / (2 * 30), 1e-12 * parts.loss);
}

TEST_P(GeneralRows, GradientMatchesCentralDifferencesOfTheLoss) {
  const auto [dim, space_dim, activation] = GetParam();
  const MlpShape shape = general_shape(dim, activation);
  const double penalty = 3.0;
  auto be = make_cpu_mlp_backend<double>(general_options(shape, space_dim, penalty));
  const std::vector<double> theta = random_mlp_parameters(shape, 21 + dim);
  // More points than one block holds: the boundary's first block mixes Dirichlet, Neumann and
  // Robin points (value and gradient streams), its second is Dirichlet only (value stream).
  be->set_batch(random_general_batch(dim, space_dim, 150, 150, 3));
  be->set_parameters(theta);
  be->loss_and_gradient();
  std::vector<double> g;
  be->gradient(g);
  ASSERT_EQ(g.size(), theta.size());
  const double h = 1e-6;
  double max_g = 0;
  for (std::size_t k = 0; k < theta.size(); ++k) {
    std::vector<double> t = theta;
    t[k] = theta[k] + h;
    be->set_parameters(t);
    const double lp = be->residuals().loss;
    t[k] = theta[k] - h;
    be->set_parameters(t);
    const double lm = be->residuals().loss;
    const double fd = (lp - lm) / (2 * h);
    EXPECT_NEAR(g[k], fd, 1e-7 + 1e-6 * std::abs(fd)) << "parameter " << k;
    max_g = std::max(max_g, std::abs(g[k]));
  }
  EXPECT_GT(max_g, 1e-2);
}

TEST_P(GeneralRows, JacobianMatchesFiniteDifferencesAndTheGradient) {
  const auto [dim, space_dim, activation] = GetParam();
  const MlpShape shape = general_shape(dim, activation);
  const double penalty = 3.0;
  auto be = make_cpu_mlp_backend<double>(general_options(shape, space_dim, penalty));
  const std::vector<double> theta = random_mlp_parameters(shape, 7 + dim);
  const int n_int = 13, n_bnd = 12;
  be->set_batch(random_general_batch(dim, space_dim, n_int, n_bnd, 5));
  expect_jacobian_consistent(*be, theta, n_int, n_bnd, penalty);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GeneralRows,
                         ::testing::Values(Case{2, 2, "tanh"}, Case{2, 2, "sin"},
                                           Case{2, 1, "tanh"}, Case{3, 2, "tanh"},
                                           Case{3, 2, "sigmoid"}, Case{3, 3, "sin"}),
                         case_name);

TEST(GeneralRows, DefaultCoefficientsGiveThePoissonDirichletRows) {
  // The same batch with its defaults spelled out (a = 1, b = 0, c = 0, α = 1, β = 0) runs the
  // general code and must give the Poisson/Dirichlet numbers.
  for (int dim : {2, 3}) {
    const MlpShape shape = general_shape(dim, "tanh");
    auto be = make_cpu_mlp_backend<double>(mlp_options(shape, 5.0));
    be->set_parameters(random_mlp_parameters(shape, 40 + dim));
    CollocationBatch batch = random_batch(dim, 120, 100, 12);
    ASSERT_TRUE(batch.poisson_dirichlet());
    be->set_batch(batch);
    const LossParts plain = be->loss_and_gradient();
    std::vector<double> g_plain, jac_plain, r_plain;
    be->gradient(g_plain);
    be->jacobian(jac_plain, r_plain);
    batch.a.assign(batch.n_interior(), 1.0);
    batch.b.assign(batch.n_interior() * dim, 0.0);
    batch.c.assign(batch.n_interior(), 0.0);
    batch.alpha.assign(batch.n_boundary(), 1.0);
    batch.beta.assign(batch.n_boundary(), 0.0);
    ASSERT_FALSE(batch.poisson_dirichlet());
    be->set_batch(batch);
    const LossParts general = be->loss_and_gradient();
    std::vector<double> g, jac, r;
    be->gradient(g);
    be->jacobian(jac, r);
    EXPECT_NEAR(general.loss, plain.loss, 1e-14 * plain.loss);
    ASSERT_EQ(g.size(), g_plain.size());
    for (std::size_t k = 0; k < g.size(); ++k)
      EXPECT_NEAR(g[k], g_plain[k], 1e-14 * (1 + std::abs(g_plain[k]))) << k;
    ASSERT_EQ(jac.size(), jac_plain.size());
    for (std::size_t k = 0; k < jac.size(); ++k)
      EXPECT_NEAR(jac[k], jac_plain[k], 1e-14 * (1 + std::abs(jac_plain[k]))) << k;
  }
}

TEST(GeneralRows, FloatGradientFollowsTheDoubleOne) {
  const MlpShape shape = general_shape(3, "tanh");
  const MlpOptions o = general_options(shape, 2, 3.0);
  auto bd = make_cpu_mlp_backend<double>(o);
  auto bf = make_cpu_mlp_backend<float>(o);
  const std::vector<double> theta = random_mlp_parameters(shape, 77);
  const CollocationBatch batch = random_general_batch(3, 2, 100, 60, 2);
  bd->set_parameters(theta);
  bf->set_parameters(convert_mlp_parameters<float>(theta));
  bd->set_batch(batch);
  bf->set_batch(batch);
  const LossParts ld = bd->loss_and_gradient(), lf = bf->loss_and_gradient();
  std::vector<double> gd;
  std::vector<float> gf;
  bd->gradient(gd);
  bf->gradient(gf);
  EXPECT_NEAR(lf.loss, ld.loss, 1e-5 * ld.loss);
  double gmax = 0;
  for (double v : gd) gmax = std::max(gmax, std::abs(v));
  for (std::size_t k = 0; k < gd.size(); ++k) EXPECT_NEAR(gf[k], gd[k], 1e-4 * gmax) << k;
}

TEST(GeneralRows, InconsistentBatchesAreRefused) {
  const MlpShape shape = general_shape(3, "tanh");
  auto be = make_cpu_mlp_backend<double>(general_options(shape, 2, 1.0));
  CollocationBatch batch = random_general_batch(3, 2, 10, 8, 1);
  EXPECT_NO_THROW(be->set_batch(batch));
  CollocationBatch other = batch;
  other.space_dim = 0;  // the Laplacian over all three coordinates: not the backend's
  EXPECT_THROW(be->set_batch(other), std::invalid_argument);
  other = batch;
  other.c.pop_back();
  EXPECT_THROW(be->set_batch(other), std::invalid_argument);
  other = batch;
  other.b.resize(10);
  EXPECT_THROW(be->set_batch(other), std::invalid_argument);
  other = batch;
  other.normals.clear();  // β ≠ 0 somewhere: the normals are needed
  EXPECT_THROW(be->set_batch(other), std::invalid_argument);
  MlpOptions too_many = general_options(shape, 4, 1.0);
  EXPECT_THROW(make_cpu_mlp_backend<double>(too_many), std::invalid_argument);
}

// A manufactured solution through the general rows alone: u = sin(1.3x + 0.4)·cos(0.9y) on
// [−1, 1]² with a = 1 + 0.3x, b = (0.5, −0.4y), c = 2 + 0.5y (a reaction term of Helmholtz's sign),
// a Neumann side (x = 1), a Robin side (x = −1, α = 1, β = 0.5) and Dirichlet sides (y = ±1).
// Levenberg–Marquardt on the backend's Jacobian (the loop of method lm, written out) must find u:
// measured relative L2 error 9.9e-5 over 1000 random points after 80 iterations (2-12-12-1
// tanh, 300 + 120 points, about 2 s of CPU); bound 1e-3.
TEST(GeneralRows, LevenbergMarquardtSolvesAManufacturedMixedProblem) {
  auto exact = [](double x, double y, double* grad, double* lap) {
    const double s = std::sin(1.3 * x + 0.4), co = std::cos(1.3 * x + 0.4);
    const double cy = std::cos(0.9 * y), sy = std::sin(0.9 * y);
    if (grad) {
      grad[0] = 1.3 * co * cy;
      grad[1] = -0.9 * s * sy;
    }
    if (lap) *lap = -(1.3 * 1.3 + 0.9 * 0.9) * s * cy;
    return s * cy;
  };
  Rng rng(2024);
  CollocationBatch batch;
  batch.dim = 2;
  for (int i = 0; i < 300; ++i) {
    const double x = uniform(rng, -1, 1), y = uniform(rng, -1, 1);
    double g[2], lap;
    const double u = exact(x, y, g, &lap);
    const double a = 1 + 0.3 * x, bx = 0.5, by = -0.4 * y, c = 2 + 0.5 * y;
    batch.interior.insert(batch.interior.end(), {x, y});
    batch.a.push_back(a);
    batch.b.insert(batch.b.end(), {bx, by});
    batch.c.push_back(c);
    batch.f.push_back(a * lap + bx * g[0] + by * g[1] + c * u);
  }
  for (int side = 0; side < 4; ++side) {
    for (int i = 0; i < 30; ++i) {
      const double t = uniform(rng, -1, 1);
      const double x = side == 0 ? 1 : side == 1 ? -1 : t;
      const double y = side == 2 ? 1 : side == 3 ? -1 : t;
      const double n[2] = {side == 0   ? 1.0
                           : side == 1 ? -1.0
                                       : 0.0,
                           side == 2   ? 1.0
                           : side == 3 ? -1.0
                                       : 0.0};
      const double alpha = side == 0 ? 0.0 : 1.0, beta = side == 0 ? 1.0 : side == 1 ? 0.5 : 0.0;
      double g[2];
      const double u = exact(x, y, g, nullptr);
      batch.boundary.insert(batch.boundary.end(), {x, y});
      batch.normals.insert(batch.normals.end(), {n[0], n[1]});
      batch.alpha.push_back(alpha);
      batch.beta.push_back(beta);
      batch.p.push_back(alpha * u + beta * (g[0] * n[0] + g[1] * n[1]));
    }
  }
  MlpShape shape;
  shape.dim = 2;
  shape.hidden = {12, 12};
  auto be = make_cpu_mlp_backend<double>(mlp_options(shape, 10.0));
  Rng init(7);
  std::vector<double> theta = initial_mlp_parameters(shape, init);
  be->set_parameters(theta);
  be->set_batch(batch);
  const std::size_t p = theta.size();
  double loss = be->residuals().loss, mu = 1e-2;
  for (int it = 0; it < 80; ++it) {
    std::vector<double> jac, r;
    be->jacobian(jac, r);
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
        J(jac.data(), Eigen::Index(r.size()), Eigen::Index(p));
    const Eigen::MatrixXd jtj = J.transpose() * J;
    const Eigen::VectorXd jtr =
        J.transpose() * Eigen::Map<const Eigen::VectorXd>(r.data(), r.size());
    for (int tries = 0; tries < 12; ++tries) {
      Eigen::MatrixXd m = jtj;
      m.diagonal() += mu * jtj.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd step = m.ldlt().solve(-jtr);
      std::vector<double> trial = theta;
      for (std::size_t k = 0; k < p; ++k) trial[k] += step[Eigen::Index(k)];
      be->set_parameters(trial);
      const double l = be->residuals().loss;
      if (l < loss) {
        theta = trial;
        loss = l;
        mu = std::max(mu / 10, 1e-12);
        break;
      }
      mu *= 10;
      be->set_parameters(theta);
    }
  }
  be->set_parameters(theta);
  std::vector<double> pts, u, lap;
  for (int i = 0; i < 2000; ++i) pts.push_back(uniform(rng, -1, 1));
  be->evaluate(pts, u, lap);
  double se = 0, su = 0;
  for (int i = 0; i < 1000; ++i) {
    const double want = exact(pts[2 * i], pts[2 * i + 1], nullptr, nullptr);
    se += (u[i] - want) * (u[i] - want);
    su += want * want;
  }
  const double rel = std::sqrt(se / su);
  std::printf("MLP 2-12-12-1, general rows, 80 LM iterations: loss %.3e, relative L2 %.3e\n", loss,
              rel);
  EXPECT_LE(rel, 1e-3);
}

}  // namespace
}  // namespace rbfpde
