// The CPU RBF backend over several ranks against one process on the union of the ranks' points:
// loss, gradient, and one step of each method (gdcg's GD and CG, the direct solve, LM, variable
// projection with its TSQR) agree to rounding (the MLP's: test_mpi_mlp.cpp). The union batch is
// built explicitly: every rank holds it whole for the single-process reference and slices its
// own share from it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "tests/common/random_inputs.hpp"
#include "tests/mpi/share_batch.hpp"

namespace rbfpde {
namespace {

struct Case {
  int dim;
  bool general;  // Helmholtz-like interior rows and Robin boundary rows
};

class MpiBackend : public testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    const Case c = GetParam();
    comm = world_communicator();
    union_batch = test_inputs::random_batch(c.dim, 157, 43, 5);
    if (c.general) {
      std::mt19937_64 rng(11);
      std::uniform_real_distribution<double> u(0.5, 1.5);
      for (std::size_t i = 0; i < union_batch.n_interior(); ++i) union_batch.c.push_back(u(rng));
      for (std::size_t j = 0; j < union_batch.n_boundary(); ++j) {
        union_batch.alpha.push_back(u(rng));
        union_batch.beta.push_back(u(rng) - 1.0);
      }
      for (double& n : union_batch.normals) n = u(rng) - 1.0;
    }
    params = test_inputs::random_parameters<double>(c.dim, 12, 7);
    BackendOptions opt;
    opt.dim = c.dim;
    opt.penalty = 10;
    opt.min_width = 1e-3;
    single = make_cpu_backend<double>(opt);
    opt.comm = comm;
    ranked = make_cpu_backend<double>(opt);
    single->set_batch(union_batch);
    ranked->set_batch(share_batch(union_batch, comm->rank(), comm->size()));
    single->set_parameters(params);
    ranked->set_parameters(params);
  }

  static void expect_close(const std::vector<double>& a, const std::vector<double>& b, double rel,
                           const char* what) {
    expect_close_to_union(a, b, rel, what);
  }
  static void expect_same_parameters(const RbfParameters<double>& a, const RbfParameters<double>& b,
                                     double rel) {
    expect_close(a.weights, b.weights, rel, "weights");
    expect_close(a.centres, b.centres, rel, "centres");
    expect_close(a.widths, b.widths, rel, "widths");
  }
  static void expect_same_loss(const LossParts& a, const LossParts& b, double rel) {
    EXPECT_NEAR(a.loss, b.loss, rel * a.loss);
    EXPECT_NEAR(a.rms_interior, b.rms_interior, rel * a.rms_interior);
    EXPECT_NEAR(a.rms_boundary, b.rms_boundary, rel * a.rms_boundary);
  }

  std::shared_ptr<Communicator> comm;
  CollocationBatch union_batch;
  RbfParameters<double> params;
  std::unique_ptr<RbfBackend<double>> single, ranked;
};

TEST_P(MpiBackend, LossAndGradientMatchTheUnion) {
  expect_same_loss(single->residuals(), ranked->residuals(), 1e-13);
  RbfParameters<double> g1, g2;
  expect_same_loss(single->gradient(g1), ranked->gradient(g2), 1e-13);
  expect_same_parameters(g1, g2, 1e-12);
}

TEST_P(MpiBackend, GdStepMatchesTheUnion) {
  expect_same_loss(single->gd_steps(2, 0.05), ranked->gd_steps(2, 0.05), 1e-13);
  expect_same_parameters(single->parameters(), ranked->parameters(), 1e-12);
}

TEST_P(MpiBackend, CgAndDirectWeightsMatchTheUnion) {
  const CgResult a = single->solve_weights_cg(8, 0.0), b = ranked->solve_weights_cg(8, 0.0);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_NEAR(a.relative_residual, b.relative_residual, 1e-8 * a.relative_residual + 1e-15);
  expect_same_parameters(single->parameters(), ranked->parameters(), 1e-9);
  expect_same_loss(single->residuals(), ranked->residuals(), 1e-10);
  single->solve_weights_direct(1e-8);
  ranked->solve_weights_direct(1e-8);
  expect_same_parameters(single->parameters(), ranked->parameters(), 1e-8);
  expect_same_loss(single->residuals(), ranked->residuals(), 1e-9);
}

TEST_P(MpiBackend, LmSystemAndStepMatchTheUnion) {
  expect_same_loss(single->lm_prepare(), ranked->lm_prepare(), 1e-13);
  std::vector<double> j1, r1, j2, r2;
  single->lm_system(j1, r1);
  ranked->lm_system(j2, r2);
  expect_close(j1, j2, 1e-12, "JᵀJ");
  expect_close(r1, r2, 1e-12, "JᵀR");
  expect_same_loss(single->lm_try(1e-2), ranked->lm_try(1e-2), 1e-9);
  expect_same_parameters(single->parameters(), ranked->parameters(), 1e-9);
  single->lm_reject();
  ranked->lm_reject();
  expect_same_parameters(single->parameters(), ranked->parameters(), 0.0);
}

TEST_P(MpiBackend, VarproMatchesTheUnion) {
  single->solve_weights_qr();
  ranked->solve_weights_qr();
  expect_same_parameters(single->parameters(), ranked->parameters(), 1e-9);
  expect_same_loss(single->vp_prepare(), ranked->vp_prepare(), 1e-10);
  std::vector<double> j1, r1, j2, r2;
  single->lm_system(j1, r1);
  ranked->lm_system(j2, r2);
  expect_close(j1, j2, 1e-9, "BᵀB");
  expect_close(r1, r2, 1e-8, "Bᵀz");
  expect_same_loss(single->vp_try(1e-3), ranked->vp_try(1e-3), 1e-8);
  expect_same_parameters(single->parameters(), ranked->parameters(), 1e-7);
}

TEST_P(MpiBackend, ParametersStayIdenticalOnEveryRank) {
  ranked->solve_weights_qr();
  ranked->vp_prepare();
  ranked->vp_try(1e-3);
  ranked->gd_steps(1, 0.05);
  ranked->solve_weights_cg(5, 0.0);
  const RbfParameters<double> p = ranked->parameters();
  std::vector<double> flat(p.weights);
  flat.insert(flat.end(), p.centres.begin(), p.centres.end());
  flat.insert(flat.end(), p.widths.begin(), p.widths.end());
  expect_identical_on_every_rank(*comm, flat);
}

INSTANTIATE_TEST_SUITE_P(Cases, MpiBackend,
                         testing::Values(Case{2, false}, Case{3, false}, Case{2, true}),
                         [](const testing::TestParamInfo<Case>& i) {
                           return std::to_string(i.param.dim) + "d" +
                                  (i.param.general ? "_general" : "_poisson");
                         });

TEST(MpiBackendFloat, LossAndGradientMatchTheUnion) {
  auto comm = world_communicator();
  const CollocationBatch all = test_inputs::random_batch(2, 101, 31, 3);
  BackendOptions opt;
  opt.dim = 2;
  opt.penalty = 10;
  auto single = make_cpu_backend<float>(opt);
  opt.comm = comm;
  auto ranked = make_cpu_backend<float>(opt);
  single->set_batch(all);
  ranked->set_batch(share_batch(all, comm->rank(), comm->size()));
  const auto p = test_inputs::random_parameters<float>(2, 8, 4);
  single->set_parameters(p);
  ranked->set_parameters(p);
  single->solve_weights_qr();
  ranked->solve_weights_qr();
  const LossParts a = single->residuals(), b = ranked->residuals();
  EXPECT_NEAR(a.loss, b.loss, 1e-3 * a.loss);
}

}  // namespace
}  // namespace rbfpde
