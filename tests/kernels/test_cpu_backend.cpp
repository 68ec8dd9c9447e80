// The CPU backend against independent dense references: the gradient of I against finite
// differences, CG against a direct solve, the LM step against a Jacobian built by differences.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/backend.hpp"
#include "tests/common/random_inputs.hpp"

namespace rbfpde {
namespace {

using test_inputs::random_batch;
using test_inputs::random_parameters;

std::vector<double*> flat(RbfParameters<double>& p) {
  std::vector<double*> out;
  for (auto& v : p.weights) out.push_back(&v);
  for (auto& v : p.centres) out.push_back(&v);
  for (auto& v : p.widths) out.push_back(&v);
  return out;
}

void check_gradient(int dim) {
  BackendOptions opt;
  opt.dim = dim;
  opt.penalty = 7.0;
  auto be = make_cpu_backend<double>(opt);
  be->set_batch(random_batch(dim, 37, 13, 3));
  RbfParameters<double> p = random_parameters<double>(dim, 9, 5);
  be->set_parameters(p);
  RbfParameters<double> g;
  const double loss = be->gradient(g).loss;
  EXPECT_GT(loss, 0);
  RbfParameters<double> q = p, gq = g;
  auto qs = flat(q);
  auto gs = flat(gq);
  const double h = 1e-6;
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double keep = *qs[i];
    *qs[i] = keep + h;
    be->set_parameters(q);
    const double lp = be->residuals().loss;
    *qs[i] = keep - h;
    be->set_parameters(q);
    const double lm = be->residuals().loss;
    *qs[i] = keep;
    const double fd = (lp - lm) / (2 * h);
    EXPECT_NEAR(*gs[i], fd, 1e-6 * (1 + std::abs(fd))) << "parameter " << i;
  }
}

TEST(CpuBackend, GradientMatchesFiniteDifferences2D) { check_gradient(2); }
TEST(CpuBackend, GradientMatchesFiniteDifferences3D) { check_gradient(3); }

TEST(CpuBackend, ResidualsMatchEvaluate) {
  BackendOptions opt;
  auto be = make_cpu_backend<double>(opt);
  CollocationBatch batch = random_batch(2, 41, 17, 8);
  be->set_batch(batch);
  be->set_parameters(random_parameters<double>(2, 13, 9));
  const LossParts parts = be->residuals();
  std::vector<double> e, b, u, lap;
  be->residual_vectors(e, b);
  be->evaluate(batch.interior, u, lap);
  double se = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    EXPECT_NEAR(e[i], lap[i] - batch.f[i], 1e-13);
    se += e[i] * e[i];
  }
  be->evaluate(batch.boundary, u, lap);
  double sb = 0;
  for (std::size_t j = 0; j < b.size(); ++j) {
    EXPECT_NEAR(b[j], u[j] - batch.p[j], 1e-13);
    sb += b[j] * b[j];
  }
  EXPECT_NEAR(parts.loss, 0.5 * se / 41 + 0.5 * 100 * sb / 17, 1e-12);
  EXPECT_NEAR(parts.rms_interior, std::sqrt(se / 41), 1e-13);
}

// Features built independently through evaluate() on unit weights, one neuron at a time.
void dense_features(RbfBackend<double>& be, const RbfParameters<double>& p, const CollocationBatch& batch,
                    Eigen::MatrixXd& M, Eigen::MatrixXd& N) {
  const int m = p.neurons();
  M.resize(batch.n_interior(), m);
  N.resize(batch.n_boundary(), m);
  for (int k = 0; k < m; ++k) {
    RbfParameters<double> one;
    one.dim = p.dim;
    one.weights = {1.0};
    one.centres.assign(p.centres.begin() + k * p.dim, p.centres.begin() + (k + 1) * p.dim);
    one.widths = {p.widths[k]};
    be.set_parameters(one);
    std::vector<double> u, lap;
    be.evaluate(batch.interior, u, lap);
    for (std::size_t i = 0; i < u.size(); ++i) M(i, k) = lap[i];
    be.evaluate(batch.boundary, u, lap);
    for (std::size_t i = 0; i < u.size(); ++i) N(i, k) = u[i];
  }
  be.set_parameters(p);
}

TEST(CpuBackend, CgMatchesDirectSolve) {
  BackendOptions opt;
  opt.penalty = 10;
  auto be = make_cpu_backend<double>(opt);
  CollocationBatch batch = random_batch(2, 200, 60, 21);
  be->set_batch(batch);
  RbfParameters<double> p = random_parameters<double>(2, 6, 22);
  p.widths.assign(6, 0.3);
  Eigen::MatrixXd M, N;
  dense_features(*be, p, batch, M, N);
  const Eigen::Map<const Eigen::VectorXd> f(batch.f.data(), batch.f.size());
  const Eigen::Map<const Eigen::VectorXd> pv(batch.p.data(), batch.p.size());
  const Eigen::MatrixXd A = M.transpose() * M / 200.0 + 10.0 * N.transpose() * N / 60.0;
  const Eigen::VectorXd s = M.transpose() * f / 200.0 + 10.0 * N.transpose() * pv / 60.0;
  const Eigen::VectorXd w_ref = A.colPivHouseholderQr().solve(s);

  const CgResult cg = be->solve_weights_cg(200, 1e-13);
  EXPECT_LE(cg.relative_residual, 1e-13);
  const RbfParameters<double> got = be->parameters();
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(got.weights[k], w_ref[k], 1e-8 * (1 + std::abs(w_ref[k])));

  be->set_parameters(p);
  be->solve_weights_direct(0.0);
  const RbfParameters<double> direct = be->parameters();
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(direct.weights[k], w_ref[k], 1e-8 * (1 + std::abs(w_ref[k])));
  // The solve leaves the residuals at the new weights.
  std::vector<double> e, b;
  be->residual_vectors(e, b);
  const Eigen::VectorXd e_ref = M * w_ref - f;
  for (int i = 0; i < 200; ++i) EXPECT_NEAR(e[i], e_ref[i], 1e-8);
}

TEST(CpuBackend, CgWarmStartFromSolutionStopsAtOnce) {
  BackendOptions opt;
  auto be = make_cpu_backend<double>(opt);
  be->set_batch(random_batch(2, 50, 20, 4));
  RbfParameters<double> p = random_parameters<double>(2, 5, 6);
  be->set_parameters(p);
  be->solve_weights_cg(500, 1e-14);
  const CgResult again = be->solve_weights_cg(500, 1e-6);
  EXPECT_EQ(again.iterations, 0);
}

void check_lm_step(int dim) {
  BackendOptions opt;
  opt.dim = dim;
  opt.penalty = 5;
  auto be = make_cpu_backend<double>(opt);
  const int n_int = 23, n_bnd = 11, m = 4;
  be->set_batch(random_batch(dim, n_int, n_bnd, 31));
  RbfParameters<double> p = random_parameters<double>(dim, m, 32);
  be->set_parameters(p);
  // Residual vector R(θ) = [e/√N; √(λ/K) b] and its Jacobian by central differences.
  auto residual_vector = [&](const RbfParameters<double>& q) {
    be->set_parameters(q);
    be->residuals();
    std::vector<double> e, b;
    be->residual_vectors(e, b);
    Eigen::VectorXd R(n_int + n_bnd);
    for (int i = 0; i < n_int; ++i) R[i] = e[i] / std::sqrt(double(n_int));
    for (int j = 0; j < n_bnd; ++j) R[n_int + j] = std::sqrt(5.0 / n_bnd) * b[j];
    return R;
  };
  const Eigen::VectorXd R0 = residual_vector(p);
  RbfParameters<double> q = p;
  auto qs = flat(q);
  Eigen::MatrixXd J(n_int + n_bnd, qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double keep = *qs[i], h = 1e-6;
    *qs[i] = keep + h;
    const Eigen::VectorXd rp = residual_vector(q);
    *qs[i] = keep - h;
    const Eigen::VectorXd rm = residual_vector(q);
    *qs[i] = keep;
    J.col(i) = (rp - rm) / (2 * h);
  }
  const double mu = 0.1;
  Eigen::MatrixXd A = J.transpose() * J;
  A.diagonal() += mu * A.diagonal();
  const Eigen::VectorXd delta = A.ldlt().solve(-J.transpose() * R0);

  be->set_parameters(p);
  const LossParts before = be->lm_prepare();
  EXPECT_NEAR(before.loss, 0.5 * R0.squaredNorm(), 1e-12);
  const LossParts after = be->lm_try(mu);
  RbfParameters<double> got = be->parameters();
  auto gs = flat(got);
  RbfParameters<double> p0 = p;
  auto ps = flat(p0);
  for (std::size_t i = 0; i < gs.size(); ++i)
    EXPECT_NEAR(*gs[i] - *ps[i], delta[i], 1e-5 * (1 + std::abs(delta[i]))) << "component " << i;
  EXPECT_NEAR(after.loss, 0.5 * residual_vector(got).squaredNorm(), 1e-12);
  be->set_parameters(p);
  be->lm_prepare();
  be->lm_try(mu);
  be->lm_reject();
  RbfParameters<double> back = be->parameters();
  EXPECT_EQ(back.weights, p.weights);
  EXPECT_EQ(back.centres, p.centres);
  EXPECT_EQ(back.widths, p.widths);
}

TEST(CpuBackend, LmStepMatchesDenseReference2D) { check_lm_step(2); }
TEST(CpuBackend, LmStepMatchesDenseReference3D) { check_lm_step(3); }

TEST(CpuBackend, GdStepMovesAlongNegativeGradientAndClampsWidths) {
  BackendOptions opt;
  opt.min_width = 0.2;
  auto be = make_cpu_backend<double>(opt);
  be->set_batch(random_batch(2, 30, 12, 41));
  RbfParameters<double> p = random_parameters<double>(2, 7, 42);
  be->set_parameters(p);
  RbfParameters<double> g;
  be->gradient(g);
  const double eta = 1e-3;
  be->gd_steps(1, eta);
  const RbfParameters<double> q = be->parameters();
  // η∇I, each neuron's centre step shortened to a quarter of its width, its width step too.
  for (std::size_t k = 0; k < p.widths.size(); ++k) {
    const double limit = 0.25 * p.widths[k];
    const double sx = eta * g.centres[2 * k], sy = eta * g.centres[2 * k + 1];
    const double scale = std::min(1.0, limit / std::hypot(sx, sy));
    EXPECT_NEAR(q.centres[2 * k], p.centres[2 * k] - scale * sx, 1e-14);
    EXPECT_NEAR(q.centres[2 * k + 1], p.centres[2 * k + 1] - scale * sy, 1e-14);
    const double sa = std::clamp(eta * g.widths[k], -limit, limit);
    EXPECT_NEAR(q.widths[k], std::max(0.2, p.widths[k] - sa), 1e-14);
  }
  EXPECT_EQ(q.weights, p.weights);
  be->set_parameters(p);
  be->gd_steps(1, 1e6);  // an absurd step drives widths to the clamp, never below
  for (double a : be->parameters().widths) EXPECT_GE(a, 0.2);
}

TEST(CpuBackend, FloatMatchesDouble) {
  BackendOptions opt;
  auto bd = make_cpu_backend<double>(opt);
  auto bf = make_cpu_backend<float>(opt);
  CollocationBatch batch = random_batch(2, 33, 15, 51);
  bd->set_batch(batch);
  bf->set_batch(batch);
  bd->set_parameters(random_parameters<double>(2, 11, 52));
  bf->set_parameters(random_parameters<float>(2, 11, 52));
  RbfParameters<double> gd;
  RbfParameters<float> gf;
  const double ld = bd->gradient(gd).loss;
  const double lf = bf->gradient(gf).loss;
  EXPECT_NEAR(lf, ld, 1e-4 * ld);
  for (std::size_t i = 0; i < gd.centres.size(); ++i)
    EXPECT_NEAR(gf.centres[i], gd.centres[i], 1e-3 * (1 + std::abs(gd.centres[i])));
}

TEST(CpuBackend, SameInputsSameNumbers) {
  BackendOptions opt;
  RbfParameters<double> first;
  for (int run = 0; run < 2; ++run) {
    auto be = make_cpu_backend<double>(opt);
    be->set_batch(random_batch(2, 300, 40, 61));
    be->set_parameters(random_parameters<double>(2, 64, 62));
    be->gd_steps(2, 1e-3);
    be->solve_weights_cg(50, 1e-14);
    be->lm_prepare();
    be->lm_try(1e-2);
    if (run == 0) {
      first = be->parameters();
    } else {
      EXPECT_EQ(be->parameters().weights, first.weights);
      EXPECT_EQ(be->parameters().centres, first.centres);
    }
  }
}

}  // namespace
}  // namespace rbfpde
