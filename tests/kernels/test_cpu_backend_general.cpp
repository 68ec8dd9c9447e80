// The CPU backend on general rows (a·Δₛu + b·∇u + c·u = f inside, α·u + β·∂u/∂n = p on the
// boundary): its residuals against u, ∇u, Δₛu from evaluate/evaluate_gradient, its gradient and
// its LM and variable-projection systems against finite differences of its own loss and
// residuals, and its three weight solves against each other.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "kernels/backend.hpp"
#include "tests/common/random_inputs.hpp"

namespace rbfpde {
namespace {

using test_inputs::random_batch;
using test_inputs::random_parameters;

// A random batch with every coefficient present and varying; with `time`, the last coordinate is
// t (the Laplacian over the others).
CollocationBatch general_batch(int dim, int n_int, int n_bnd, unsigned seed, bool time) {
  CollocationBatch b = random_batch(dim, n_int, n_bnd, seed);
  std::mt19937_64 rng(seed + 1000);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  b.space_dim = time ? dim - 1 : 0;
  for (int i = 0; i < n_int; ++i) b.a.push_back(1.5 + 0.5 * u(rng));
  for (int i = 0; i < n_int * dim; ++i) b.b.push_back(u(rng));
  for (int i = 0; i < n_int; ++i) b.c.push_back(2 * u(rng));
  for (int j = 0; j < n_bnd; ++j) {
    double n[3], norm = 0;
    for (int k = 0; k < dim; ++k) n[k] = u(rng), norm += n[k] * n[k];
    for (int k = 0; k < dim; ++k) b.normals[j * dim + k] = n[k] / std::sqrt(norm);
    b.alpha.push_back(u(rng) > 0 ? 1.0 : 0.3 * u(rng));
    b.beta.push_back(u(rng));
  }
  return b;
}

std::unique_ptr<RbfBackend<double>> backend(int dim, const CollocationBatch& batch,
                                            double penalty = 7.0) {
  BackendOptions opt;
  opt.dim = dim;
  opt.penalty = penalty;
  opt.min_width = 1e-3;
  opt.laplacian_dims = batch.laplacian_dims();
  auto be = make_cpu_backend<double>(opt);
  be->set_batch(batch);
  return be;
}

std::vector<double*> flat(RbfParameters<double>& p) {
  std::vector<double*> out;
  for (auto& v : p.weights) out.push_back(&v);
  for (auto& v : p.centres) out.push_back(&v);
  for (auto& v : p.widths) out.push_back(&v);
  return out;
}

struct Case {
  int dim;
  bool time;
};

class GeneralRows : public ::testing::TestWithParam<Case> {};

TEST_P(GeneralRows, ResidualsMatchTheRowsOfEvaluateAndGradient) {
  const auto [dim, time] = GetParam();
  const CollocationBatch batch = general_batch(dim, 41, 17, 3, time);
  ASSERT_FALSE(batch.poisson_dirichlet());
  auto be = backend(dim, batch);
  be->set_parameters(random_parameters<double>(dim, 11, 4));
  const LossParts parts = be->residuals();
  std::vector<double> e, b;
  be->residual_vectors(e, b);
  std::vector<double> ui, li, gi, ub, lb, gb, e_ref, b_ref;
  be->evaluate(batch.interior, ui, li);
  be->evaluate_gradient(batch.interior, gi);
  be->evaluate(batch.boundary, ub, lb);
  be->evaluate_gradient(batch.boundary, gb);
  batch_residuals(batch, ui, gi, li, ub, gb, e_ref, b_ref);
  double se = 0, sb = 0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    EXPECT_NEAR(e[i], e_ref[i], 1e-12 * (1 + std::abs(e_ref[i])));
    se += e[i] * e[i];
  }
  for (std::size_t j = 0; j < b.size(); ++j) {
    EXPECT_NEAR(b[j], b_ref[j], 1e-12 * (1 + std::abs(b_ref[j])));
    sb += b[j] * b[j];
  }
  EXPECT_NEAR(parts.loss, 0.5 * se / 41 + 0.5 * 7.0 * sb / 17, 1e-12 * parts.loss);
  // The general rows differ from the Poisson ones: the check above is not the Poisson path's.
  CollocationBatch plain = batch;
  plain.a.clear(), plain.b.clear(), plain.c.clear(), plain.alpha.clear(), plain.beta.clear();
  plain.space_dim = 0;
  auto be_plain = backend(dim, plain);
  be_plain->set_parameters(be->parameters());
  EXPECT_GT(std::abs(be_plain->residuals().loss - parts.loss), 1e-3 * parts.loss);
}

TEST_P(GeneralRows, GradientMatchesFiniteDifferences) {
  const auto [dim, time] = GetParam();
  auto be = backend(dim, general_batch(dim, 37, 13, 5, time));
  RbfParameters<double> p = random_parameters<double>(dim, 9, 6);
  be->set_parameters(p);
  RbfParameters<double> g;
  EXPECT_GT(be->gradient(g).loss, 0);
  auto qs = flat(p);
  auto gs = flat(g);
  const double h = 1e-6;
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double keep = *qs[i];
    *qs[i] = keep + h;
    be->set_parameters(p);
    const double lp = be->residuals().loss;
    *qs[i] = keep - h;
    be->set_parameters(p);
    const double lm = be->residuals().loss;
    *qs[i] = keep;
    const double fd = (lp - lm) / (2 * h);
    EXPECT_NEAR(*gs[i], fd, 1e-6 * (1 + std::abs(fd))) << "parameter " << i;
  }
}

// R(θ) = [e/√N; √(λ/K)·b].
Eigen::VectorXd residual_vector(RbfBackend<double>& be, const RbfParameters<double>& q,
                                double penalty) {
  be.set_parameters(q);
  be.residuals();
  std::vector<double> e, b;
  be.residual_vectors(e, b);
  Eigen::VectorXd R(e.size() + b.size());
  for (std::size_t i = 0; i < e.size(); ++i) R[i] = e[i] / std::sqrt(double(e.size()));
  for (std::size_t j = 0; j < b.size(); ++j)
    R[e.size() + j] = std::sqrt(penalty / double(b.size())) * b[j];
  return R;
}

TEST_P(GeneralRows, LmSystemMatchesTheFiniteDifferenceJacobian) {
  const auto [dim, time] = GetParam();
  const double penalty = 5;
  auto be = backend(dim, general_batch(dim, 23, 11, 31, time), penalty);
  RbfParameters<double> p = random_parameters<double>(dim, 4, 32);
  const Eigen::VectorXd R0 = residual_vector(*be, p, penalty);
  RbfParameters<double> q = p;
  auto qs = flat(q);
  Eigen::MatrixXd J(R0.size(), qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    const double keep = *qs[i], h = 1e-6;
    *qs[i] = keep + h;
    const Eigen::VectorXd rp = residual_vector(*be, q, penalty);
    *qs[i] = keep - h;
    const Eigen::VectorXd rm = residual_vector(*be, q, penalty);
    *qs[i] = keep;
    J.col(i) = (rp - rm) / (2 * h);
  }
  be->set_parameters(p);
  const LossParts before = be->lm_prepare();
  EXPECT_NEAR(before.loss, 0.5 * R0.squaredNorm(), 1e-12);
  std::vector<double> jtj, jtr;
  be->lm_system(jtj, jtr);
  const Eigen::Index n = J.cols();
  ASSERT_EQ(Eigen::Index(jtr.size()), n);
  const Eigen::MatrixXd JtJ = J.transpose() * J;
  const Eigen::VectorXd JtR = J.transpose() * R0;
  const double scale_j = JtJ.cwiseAbs().maxCoeff(), scale_r = JtR.cwiseAbs().maxCoeff();
  for (Eigen::Index i = 0; i < n; ++i) {
    EXPECT_NEAR(jtr[i], JtR[i], 1e-6 * scale_r) << "JᵀR " << i;
    for (Eigen::Index j = 0; j <= i; ++j)
      EXPECT_NEAR(jtj[std::size_t(i + j * n)], JtJ(i, j), 1e-6 * scale_j) << i << ", " << j;
  }
}

TEST_P(GeneralRows, VarproGradientMatchesFiniteDifferencesOfTheProjectedLoss) {
  const auto [dim, time] = GetParam();
  auto be = backend(dim, general_batch(dim, 157, 41, 17, time), 10.0);
  const auto projected_loss = [&](const RbfParameters<double>& q) {
    be->set_parameters(q);
    be->solve_weights_qr();
    return be->residuals().loss;
  };
  const int m = 7;
  const double loss = projected_loss(random_parameters<double>(dim, m, 23));
  EXPECT_NEAR(be->vp_prepare().loss, loss, 1e-14 * loss);
  std::vector<double> jtj, jtr;
  be->lm_system(jtj, jtr);
  const int pc = m * (dim + 1);
  ASSERT_EQ(int(jtr.size()), pc);
  const RbfParameters<double> base = be->parameters();
  double max_err = 0, max_g = 0;
  for (int i = 0; i < pc; ++i) {
    const double h = 1e-6;
    RbfParameters<double> plus = base, minus = base;
    double* vp = i < m * dim ? &plus.centres[i] : &plus.widths[i - m * dim];
    double* vm = i < m * dim ? &minus.centres[i] : &minus.widths[i - m * dim];
    *vp += h;
    *vm -= h;
    const double fd = (projected_loss(plus) - projected_loss(minus)) / (2 * h);
    max_err = std::max(max_err, std::abs(fd - jtr[i]));
    max_g = std::max(max_g, std::abs(jtr[i]));
  }
  EXPECT_GT(max_g, 0.0);
  EXPECT_LE(max_err, 1e-5 * max_g) << "max |fd − JᵀR| " << max_err << ", max |JᵀR| " << max_g;
}

TEST_P(GeneralRows, WeightSolvesAgree) {
  const auto [dim, time] = GetParam();
  const CollocationBatch batch = general_batch(dim, 301, 77, 5, time);
  RbfParameters<double> p = random_parameters<double>(dim, 6, 9);
  for (double& a : p.widths) a *= 0.5;
  auto qr = backend(dim, batch, 10), direct = backend(dim, batch, 10), cg = backend(dim, batch, 10);
  for (auto* be : {qr.get(), direct.get(), cg.get()}) be->set_parameters(p);
  qr->solve_weights_qr();
  direct->solve_weights_direct(0.0);
  const CgResult r = cg->solve_weights_cg(500, 1e-14);
  EXPECT_LE(r.relative_residual, 1e-10);
  const RbfParameters<double> wq = qr->parameters(), wd = direct->parameters(),
                              wc = cg->parameters();
  for (int k = 0; k < 6; ++k) {
    EXPECT_NEAR(wq.weights[k], wd.weights[k], 1e-7 * (1 + std::abs(wd.weights[k])));
    EXPECT_NEAR(wc.weights[k], wd.weights[k], 1e-7 * (1 + std::abs(wd.weights[k])));
  }
  // Least-squares weights: the gradient with respect to the weights vanishes.
  RbfParameters<double> g;
  qr->gradient(g);
  for (double gw : g.weights) EXPECT_NEAR(gw, 0.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Shapes, GeneralRows,
                         ::testing::Values(Case{2, false}, Case{3, false}, Case{3, true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::to_string(info.param.dim) + "d" +
                                  (info.param.time ? "_time" : "");
                         });

TEST(GeneralRows, EvaluateGivesTheSpatialLaplacian) {
  BackendOptions opt;
  opt.dim = 3;
  opt.laplacian_dims = 2;
  auto be = make_cpu_backend<double>(opt);
  RbfParameters<double> p = random_parameters<double>(3, 5, 2);
  be->set_parameters(p);
  const std::vector<double> x = {0.3, 0.4, 0.6, 0.9, 0.1, 0.2};
  std::vector<double> u, lap;
  be->evaluate(x, u, lap);
  const double h = 1e-4;
  for (int i = 0; i < 2; ++i) {
    double fd = 0;
    for (int k = 0; k < 2; ++k) {  // x and y only: not t
      std::vector<double> plus(x.begin() + 3 * i, x.begin() + 3 * i + 3), minus = plus;
      plus[k] += h;
      minus[k] -= h;
      std::vector<double> up, um, l2;
      be->evaluate(plus, up, l2);
      be->evaluate(minus, um, l2);
      fd += (up[0] - 2 * u[i] + um[0]) / (h * h);
    }
    EXPECT_NEAR(lap[i], fd, 1e-5 * (1 + std::abs(fd)));
  }
}

}  // namespace
}  // namespace rbfpde
