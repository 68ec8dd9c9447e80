// The CPU MLP backend over several ranks against one process on the union of the ranks' points:
// the loss, the gradient and an Adam step, LM's normal equations (JᵀJ and JᵀR summed over the
// ranks' rows) and L-BFGS iterations driven by the summed loss and gradient agree to rounding, and
// the parameters are identical on every rank. The batch has general rows (a Helmholtz-like c·u
// in the interior, Robin rows α·u + β·∂u/∂n on the boundary), so every stream is summed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"
#include "solver/train/lbfgs.hpp"
#include "tests/common/random_inputs.hpp"
#include "tests/mpi/share_batch.hpp"

namespace rbfpde {
namespace {

class MpiMlp : public testing::Test {
 protected:
  void SetUp() override {
    comm = world_communicator();
    CollocationBatch all = test_inputs::random_batch(2, 83, 31, 17);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0.5, 1.5);
    for (std::size_t i = 0; i < all.n_interior(); ++i) all.c.push_back(u(rng));
    for (std::size_t j = 0; j < all.n_boundary(); ++j) {
      all.alpha.push_back(u(rng));
      all.beta.push_back(u(rng) - 1.0);
    }
    for (double& n : all.normals) n = u(rng) - 1.0;
    MlpOptions opt;
    opt.dim = 2;
    opt.layers = {8, 8};
    opt.penalty = 10;
    single = make_cpu_mlp_backend<double>(opt);
    opt.comm = comm;
    ranked = make_cpu_mlp_backend<double>(opt);
    single->set_batch(all);
    ranked->set_batch(share_batch(all, comm->rank(), comm->size()));
    theta = single->parameters();
    std::normal_distribution<double> g(0.0, 0.5);
    for (double& t : theta) t = g(rng);
    single->set_parameters(theta);
    ranked->set_parameters(theta);
  }

  std::shared_ptr<Communicator> comm;
  std::vector<double> theta;
  std::unique_ptr<MlpBackend<double>> single, ranked;
};

TEST_F(MpiMlp, LossGradientAndAdamStepMatchTheUnion) {
  const LossParts a = single->loss_and_gradient(), b = ranked->loss_and_gradient();
  EXPECT_NEAR(a.loss, b.loss, 1e-13 * a.loss);
  EXPECT_NEAR(a.rms_interior, b.rms_interior, 1e-13 * a.rms_interior);
  EXPECT_NEAR(a.rms_boundary, b.rms_boundary, 1e-13 * a.rms_boundary);
  std::vector<double> ga, gb;
  single->gradient(ga);
  ranked->gradient(gb);
  expect_close_to_union(ga, gb, 1e-12, "gradient");
  single->adam_step(1e-2, 0.9, 0.999, 1e-8, 1);
  ranked->adam_step(1e-2, 0.9, 0.999, 1e-8, 1);
  expect_close_to_union(single->parameters(), ranked->parameters(), 1e-12, "parameters");
  expect_identical_on_every_rank(*comm, ranked->parameters());
}

TEST_F(MpiMlp, LmNormalEquationsMatchTheUnion) {
  std::vector<double> jtj_a, jtr_a, jtj_b, jtr_b;
  single->normal_equations(jtj_a, jtr_a);
  ranked->normal_equations(jtj_b, jtr_b);
  const std::size_t np = theta.size();
  ASSERT_EQ(jtj_a.size(), np * np);
  ASSERT_EQ(jtj_b.size(), np * np);
  // The lower triangle is the system's (the upper one is not formed).
  std::vector<double> low_a, low_b;
  for (std::size_t i = 0; i < np; ++i)
    for (std::size_t k = 0; k <= i; ++k) {
      low_a.push_back(jtj_a[i * np + k]);
      low_b.push_back(jtj_b[i * np + k]);
    }
  expect_close_to_union(low_a, low_b, 1e-12, "JᵀJ");
  expect_close_to_union(jtr_a, jtr_b, 1e-12, "JᵀR");
  expect_identical_on_every_rank(*comm, low_b);
  expect_identical_on_every_rank(*comm, jtr_b);
  // JᵀR is the gradient of I = ½|R|² (R scaled by the union's N and K): the single process's
  // gradient ties the Jacobian's scaling to the loss it minimises.
  single->loss_and_gradient();
  std::vector<double> g;
  single->gradient(g);
  expect_close_to_union(g, jtr_b, 1e-12, "JᵀR against ∂I/∂θ");
}

TEST_F(MpiMlp, LbfgsIterationsMatchTheUnion) {
  const auto objective_of = [](MlpBackend<double>& backend) {
    return LbfgsObjective([&backend](const std::vector<double>& x, std::vector<double>& g) {
      return backend.loss_and_gradient_at(x, g).loss;
    });
  };
  Lbfgs a(objective_of(*single), theta), b(objective_of(*ranked), theta);
  const double initial = a.loss();
  EXPECT_NEAR(initial, b.loss(), 1e-13 * initial);
  for (int it = 0; it < 6; ++it) {
    ASSERT_EQ(a.iterate(), Lbfgs::Status::ok) << "iteration " << it;
    ASSERT_EQ(b.iterate(), Lbfgs::Status::ok) << "iteration " << it;
  }
  EXPECT_LT(a.loss(), initial);
  EXPECT_EQ(a.evaluations(), b.evaluations());
  EXPECT_NEAR(a.loss(), b.loss(), 1e-10 * a.loss());
  expect_close_to_union(a.x(), b.x(), 1e-10, "L-BFGS iterate");
  expect_identical_on_every_rank(*comm, b.x());
}

}  // namespace
}  // namespace rbfpde
