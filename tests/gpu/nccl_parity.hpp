// The CUDA backend's distributed path against the single-GPU backend on the union of the ranks'
// points: the same operations on both, the same results to rounding. Shared by the one-rank
// tests (tests/gpu/cuda_nccl_test.cpp: NCCL of one rank, and host staging) and the multi-rank
// test (tests/mpi/test_gpu_ranks.cpp).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "tests/gpu/general_rows_support.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/mpi/share_batch.hpp"

namespace rbfpde::nccl_test {

using gpu_test::flatten;
using gpu_test::relative_difference;

struct ParityCase {
  int dim;
  int space_dim;  // 0: dim
  int m;
  bool general;  // general rows (general_batch) rather than Poisson/Dirichlet
};
// Poisson 2D with the one-block gram and CG (m ≤ 128), Poisson 3D with the features' SYRK and
// the grid CG (m > 128), general rows in 2D and in 3D with a 2D Laplacian (a problem with time).
inline constexpr ParityCase kParityCases[] = {
    {2, 0, 37, false}, {3, 0, 129, false}, {2, 0, 64, true}, {3, 2, 37, true}};
inline constexpr int kUnionInterior = 203;  // not a multiple of 2 or 3 ranks
inline constexpr int kUnionBoundary = 55;

// Every sum-carrying operation of the backend, on `comm`'s distributed backend with this rank's
// share and on a single-GPU backend with the whole batch. The tolerances: sums over points agree
// to rounding (the ranks' partial sums add in another order); the QR-based results (TSQR on the
// distributed path, one Householder QR on one GPU) to ε·cond(F), as in cuda_varpro_parity_test.
inline void expect_matches_one_gpu(const std::shared_ptr<Communicator>& comm, const ParityCase& c) {
  SCOPED_TRACE(testing::Message() << "communicator " << comm->name() << ", ranks " << comm->size()
                                  << ", dim " << c.dim << ", space_dim " << c.space_dim << ", m "
                                  << c.m << (c.general ? ", general rows" : ", Poisson"));
  BackendOptions options;
  options.dim = c.dim;
  options.penalty = 100.0;
  options.min_width = 0.05;
  options.laplacian_dims = c.space_dim;
  std::unique_ptr<RbfBackend<double>> one = make_cuda_backend<double>(options);
  options.comm = comm;
  std::unique_ptr<RbfBackend<double>> dist = make_cuda_backend<double>(options);
  const unsigned seed = unsigned(13 * c.m + c.dim);
  const CollocationBatch whole =
      c.general ? gpu_test::general_batch(c.dim, c.space_dim, kUnionInterior, kUnionBoundary, seed)
                : gpu_test::random_batch(c.dim, kUnionInterior, kUnionBoundary, seed);
  const CollocationBatch mine = share_batch(whole, comm->rank(), comm->size());
  const RbfParameters<double> params = gpu_test::random_parameters<double>(c.dim, c.m, seed + 1);
  one->set_batch(whole);
  dist->set_batch(mine);
  const auto restart = [&] {
    one->set_parameters(params);
    dist->set_parameters(params);
  };
  const auto expect_parameters = [&](double tol, const char* what) {
    EXPECT_LE(relative_difference(flatten(dist->parameters()), flatten(one->parameters())), tol)
        << what;
  };

  // The loss, and this rank's residuals: its slice of the union's.
  restart();
  EXPECT_LE(relative_difference(dist->residuals().loss, one->residuals().loss), 1e-12) << "loss";
  {
    std::vector<double> e1, b1, e2, b2;
    one->residual_vectors(e1, b1);
    dist->residual_vectors(e2, b2);
    const Share si = share_of(e1.size(), comm->rank(), comm->size());
    const Share sb = share_of(b1.size(), comm->rank(), comm->size());
    EXPECT_LE(relative_difference(e2, std::vector<double>(e1.begin() + long(si.offset),
                                                          e1.begin() + long(si.offset + si.count))),
              1e-12)
        << "interior residuals";
    EXPECT_LE(relative_difference(b2, std::vector<double>(b1.begin() + long(sb.offset),
                                                          b1.begin() + long(sb.offset + sb.count))),
              1e-12)
        << "boundary residuals";
  }

  // The full gradient.
  {
    RbfParameters<double> g1, g2;
    const LossParts l1 = one->gradient(g1), l2 = dist->gradient(g2);
    EXPECT_LE(relative_difference(l2.loss, l1.loss), 1e-12);
    EXPECT_LE(relative_difference(flatten(g2), flatten(g1)), 1e-10) << "gradient";
  }

  // Gradient steps on centres and widths, then a CG weight solve (one gdcg cycle's work).
  {
    const LossParts l1 = one->gd_steps(3, 0.05), l2 = dist->gd_steps(3, 0.05);
    EXPECT_LE(relative_difference(l2.loss, l1.loss), 1e-11) << "loss before the last GD step";
    expect_parameters(1e-10, "parameters after GD steps");
    const double before_cg = dist->residuals().loss;
    const CgResult r1 = one->solve_weights_cg(40, 1e-10), r2 = dist->solve_weights_cg(40, 1e-10);
    EXPECT_GT(r1.iterations, 0);
    EXPECT_GT(r2.iterations, 0);
    // 40 CG iterations on an ill-conditioned A do not converge, and CG's loss of orthogonality
    // amplifies the rounding of A's sums (added in another order over the ranks): the loss after
    // it agrees to 1e-2 relative, as between the CPU and GPU backends (CudaBackendParity.CgFew*,
    // measured up to 3e-3 between one GPU and 2 ranks on an H100).
    EXPECT_LE(relative_difference(dist->residuals().loss, one->residuals().loss), 1e-2)
        << "loss after CG";
    EXPECT_LT(dist->residuals().loss, before_cg) << "CG lowered the loss";
  }

  // The fused cycle (GD steps then CG), from the same start.
  {
    restart();
    typename RbfBackend<double>::GdcgCycle cycle;
    cycle.gd_steps = 2;
    cycle.learning_rate = 0.05;
    cycle.cg_iterations = 30;
    cycle.cg_tolerance = 1e-10;
    const LossParts l1 = one->gdcg_cycle(cycle), l2 = dist->gdcg_cycle(cycle);
    EXPECT_LE(relative_difference(l2.loss, l1.loss), 1e-11) << "gdcg_cycle loss";
    EXPECT_LE(relative_difference(dist->residuals().loss, one->residuals().loss), 1e-2)
        << "loss after gdcg_cycle";  // its CG, as above
  }

  // The direct weight solve.
  {
    restart();
    one->solve_weights_direct(1e-10);
    dist->solve_weights_direct(1e-10);
    EXPECT_LE(relative_difference(dist->residuals().loss, one->residuals().loss), 1e-6)
        << "loss after the direct solve";
  }

  // Levenberg–Marquardt: JᵀJ, JᵀR, a step and its rejection.
  {
    restart();
    const LossParts p1 = one->lm_prepare(), p2 = dist->lm_prepare();
    EXPECT_LE(relative_difference(p2.loss, p1.loss), 1e-12);
    std::vector<double> jtj1, jtr1, jtj2, jtr2;
    one->lm_system(jtj1, jtr1);
    dist->lm_system(jtj2, jtr2);
    ASSERT_EQ(jtr1.size(), std::size_t(c.m * (c.dim + 2)));
    EXPECT_LE(relative_difference(jtj2, jtj1), 1e-11) << "JᵀJ";
    EXPECT_LE(relative_difference(jtr2, jtr1), 1e-10) << "JᵀR";
    const LossParts s1 = one->lm_try(1e-1), s2 = dist->lm_try(1e-1);
    EXPECT_LE(relative_difference(s2.loss, s1.loss), 1e-6) << "loss after an LM step";
    one->lm_reject();
    dist->lm_reject();
    expect_parameters(0, "parameters after lm_reject");
  }

  // Variable projection: the QR weights (TSQR), the projected system and a damped step.
  {
    restart();
    one->solve_weights_qr();
    dist->solve_weights_qr();
    EXPECT_LE(relative_difference(dist->residuals().loss, one->residuals().loss), 1e-8)
        << "loss after the QR weight solve";
    const LossParts p1 = one->vp_prepare(), p2 = dist->vp_prepare();
    EXPECT_LE(relative_difference(p2.loss, p1.loss), 1e-8);
    std::vector<double> jtj1, jtr1, jtj2, jtr2;
    one->lm_system(jtj1, jtr1);
    dist->lm_system(jtj2, jtr2);
    ASSERT_EQ(jtr1.size(), std::size_t(c.m * (c.dim + 1)));
    EXPECT_LE(relative_difference(jtr2, jtr1), 1e-5) << "projected JᵀR";
    EXPECT_LE(relative_difference(jtj2, jtj1), 1e-5) << "projected JᵀJ";
    const LossParts s1 = one->vp_try(1e3), s2 = dist->vp_try(1e3);
    EXPECT_LE(relative_difference(s2.loss, s1.loss), 1e-8) << "loss after a projected step";
    // Centres and widths: the weights of a nearly rank-deficient F agree only to ε·cond(F).
    const RbfParameters<double> q1 = one->parameters(), q2 = dist->parameters();
    EXPECT_LE(relative_difference(q2.centres, q1.centres), 1e-6)
        << "centres after a projected step";
    EXPECT_LE(relative_difference(q2.widths, q1.widths), 1e-6) << "widths after a projected step";
  }

  // Every rank holds the same parameters, bit for bit (the small solves ran on identical inputs).
  {
    const std::vector<double> mine = flatten(dist->parameters());
    std::vector<double> all(mine.size() * std::size_t(comm->size()));
    comm->allgather(mine.data(), mine.size(), all.data());
    for (int r = 0; r < comm->size(); ++r)
      for (std::size_t i = 0; i < mine.size(); ++i)
        ASSERT_EQ(all[std::size_t(r) * mine.size() + i], mine[i])
            << "rank " << r << ", entry " << i;
  }
}

}  // namespace rbfpde::nccl_test
