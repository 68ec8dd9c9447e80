// The CUDA MLP backend's distributed path against the single-GPU CUDA MLP backend on the union of
// the ranks' points: the same operations on both, the same results to rounding (the ranks' sums
// add in another order). Shared by the one-rank tests (tests/gpu/cuda_nccl_test.cpp: NCCL of one
// rank, and host staging) and the multi-rank test (tests/mpi/test_gpu_ranks.cpp).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/mlp/mlp_general_batch.hpp"
#include "tests/mlp/mlp_test_util.hpp"
#include "tests/mpi/share_batch.hpp"

namespace rbfpde::mlp_nccl_test {

using gpu_test::relative_difference;

struct MlpParityCase {
  int dim;
  int space_dim;  // 0: dim
  bool general;   // general rows (random_general_batch) rather than Poisson/Dirichlet
};
// Poisson 2D, general rows in 2D and in 3D with a 2D Laplacian (a problem with time).
inline constexpr MlpParityCase kMlpParityCases[] = {{2, 0, false}, {2, 0, true}, {3, 2, true}};
inline constexpr int kUnionInterior = 203;  // not a multiple of 2 or 3 ranks
inline constexpr int kUnionBoundary = 55;
inline constexpr double kPenalty = 7.0;

// Makes a CUDA MLP backend in double (make_cuda_mlp_backend, or one with forced tuning).
using MlpBackendFactory = std::function<std::unique_ptr<MlpBackend<double>>(const MlpOptions&)>;

inline std::vector<double> slice(const std::vector<double>& all, const Share& s) {
  return std::vector<double>(all.begin() + long(s.offset), all.begin() + long(s.offset + s.count));
}

// Every operation of the backend that sums over points, on `comm`'s distributed backend with
// this rank's share and on a single-GPU backend with the whole batch (both made by `make`, the
// single-GPU one without a communicator), in double.
inline void expect_mlp_matches_one_gpu(const std::shared_ptr<Communicator>& comm,
                                       const MlpParityCase& c, const MlpBackendFactory& make) {
  SCOPED_TRACE(testing::Message() << "MLP, communicator " << comm->name() << ", ranks "
                                  << comm->size() << ", dim " << c.dim << ", space_dim "
                                  << c.space_dim << (c.general ? ", general rows" : ", Poisson"));
  MlpShape shape;
  shape.dim = c.dim;
  shape.hidden = {24, 24};
  shape.activation = "tanh";
  MlpOptions options = mlp_options(shape, kPenalty);
  options.laplacian_dims = c.space_dim;
  std::unique_ptr<MlpBackend<double>> one = make(options);
  options.comm = comm;
  std::unique_ptr<MlpBackend<double>> dist = make(options);
  ASSERT_TRUE(comm->distributed());
  EXPECT_EQ(dist->steps_per_sync(), 1) << "the distributed path runs step by step";
  EXPECT_FALSE(dist->draws_batches());

  const unsigned seed = unsigned(31 * c.dim + c.space_dim + (c.general ? 7 : 0));
  const CollocationBatch whole =
      c.general ? random_general_batch(c.dim, c.space_dim, kUnionInterior, kUnionBoundary, seed)
                : rbfpde::random_batch(c.dim, kUnionInterior, kUnionBoundary, seed);
  const CollocationBatch mine = share_batch(whole, comm->rank(), comm->size());
  one->set_batch(whole);
  dist->set_batch(mine);
  const std::vector<double> theta = random_mlp_parameters(shape, seed + 1);
  const auto restart = [&] {
    one->set_parameters(theta);
    dist->set_parameters(theta);
  };
  const auto expect_loss = [](const LossParts& d, const LossParts& o, double tol,
                              const char* what) {
    EXPECT_GT(o.loss, 0.0) << what;
    EXPECT_LE(relative_difference(d.loss, o.loss), tol) << what << ": loss";
    EXPECT_LE(relative_difference(d.rms_interior, o.rms_interior), tol) << what << ": interior";
    EXPECT_LE(relative_difference(d.rms_boundary, o.rms_boundary), tol) << what << ": boundary";
  };
  const auto expect_parameters = [&](double tol, const char* what) {
    EXPECT_LE(relative_difference(dist->parameters(), one->parameters()), tol) << what;
  };

  // The loss, and this rank's residuals: its slice of the union's.
  restart();
  expect_loss(dist->residuals(), one->residuals(), 1e-12, "residuals()");
  {
    std::vector<double> e1, b1, e2, b2;
    one->residual_vectors(e1, b1);
    dist->residual_vectors(e2, b2);
    const Share si = share_of(e1.size(), comm->rank(), comm->size());
    const Share sb = share_of(b1.size(), comm->rank(), comm->size());
    EXPECT_LE(relative_difference(e2, slice(e1, si)), 1e-12) << "interior residuals";
    EXPECT_LE(relative_difference(b2, slice(b1, sb)), 1e-12) << "boundary residuals";
  }

  // The loss and the gradient.
  {
    expect_loss(dist->loss_and_gradient(), one->loss_and_gradient(), 1e-12, "loss_and_gradient()");
    std::vector<double> g1, g2;
    one->gradient(g1);
    dist->gradient(g2);
    EXPECT_GT(relative_difference(g1, std::vector<double>(g1.size(), 0.0)), 0.0);
    EXPECT_LE(relative_difference(g2, g1), 1e-10) << "gradient";
  }

  // An L-BFGS evaluation at other parameters.
  {
    std::vector<double> theta2 = theta;
    for (std::size_t i = 0; i < theta2.size(); ++i) theta2[i] += 1e-2 * double(int(i % 7) - 3);
    std::vector<double> g1, g2;
    const LossParts l1 = one->loss_and_gradient_at(theta2, g1);
    const LossParts l2 = dist->loss_and_gradient_at(theta2, g2);
    expect_loss(l2, l1, 1e-12, "loss_and_gradient_at()");
    EXPECT_LE(relative_difference(g2, g1), 1e-10) << "loss_and_gradient_at()'s gradient";
  }

  // Adam steps one by one: loss and gradient, then the update from the summed gradient.
  {
    restart();
    for (long t = 1; t <= 3; ++t) {
      expect_loss(dist->loss_and_gradient(), one->loss_and_gradient(), 1e-11, "Adam step's loss");
      one->adam_step(1e-2, 0.9, 0.999, 1e-8, t);
      dist->adam_step(1e-2, 0.9, 0.999, 1e-8, t);
    }
    expect_parameters(1e-10, "parameters after 3 Adam steps");
    std::vector<double> m1, v1, m2, v2;
    one->adam_moments(m1, v1);
    dist->adam_moments(m2, v2);
    EXPECT_LE(relative_difference(m2, m1), 1e-10) << "Adam's first moments";
    EXPECT_LE(relative_difference(v2, v1), 1e-10) << "Adam's second moments";
  }

  // train_steps: one CUDA graph on one GPU, step by step on the distributed path.
  using Step = MlpBackend<double>::AdamStepArgs;
  {
    restart();
    std::vector<Step> steps;
    for (long t = 1; t <= 6; ++t) steps.push_back(Step{1e-2 / double(t), t});
    std::vector<LossParts> l1, l2;
    one->train_steps(steps, 0.9, 0.999, 1e-8, 0.0, l1);
    dist->train_steps(steps, 0.9, 0.999, 1e-8, 0.0, l2);
    ASSERT_EQ(l1.size(), steps.size());
    ASSERT_EQ(l2.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i)
      expect_loss(l2[i], l1[i], 1e-10, "train_steps' loss");
    expect_parameters(1e-10, "parameters after train_steps");
  }
  // … and its early stop: below stop_below after the first step, which keeps its update.
  {
    restart();
    const std::vector<Step> steps = {Step{1e-2, 1}, Step{1e-2, 2}, Step{1e-2, 3}};
    std::vector<LossParts> l1, l2;
    one->train_steps(steps, 0.9, 0.999, 1e-8, 1e300, l1);
    dist->train_steps(steps, 0.9, 0.999, 1e-8, 1e300, l2);
    ASSERT_EQ(l1.size(), 1u);
    ASSERT_EQ(l2.size(), 1u);
    expect_loss(l2[0], l1[0], 1e-12, "the stopping step's loss");
    EXPECT_GT(relative_difference(one->parameters(), theta), 0.0) << "the step was applied";
    expect_parameters(1e-10, "parameters after an early stop");
  }

  // Every rank holds the same parameters, bit for bit (the same summed gradient on every rank).
  expect_identical_on_every_rank(*comm, dist->parameters());
}

}  // namespace rbfpde::mlp_nccl_test
