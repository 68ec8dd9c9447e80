// Variable projection on the CUDA backend against the CPU reference, on random inputs whose sizes
// are not multiples of the kernels' block sizes (m = 37, 64, 129; N = 201, K = 53; 2D and 3D):
// the QR least-squares weights, the projected system (JᵀJ = BᵀB, JᵀR = Bᵀz) and one projected
// step. Both backends factor the same matrices by Householder QR (Eigen on the CPU, cuSOLVER's
// geqrf on the GPU: different blockings, so rounding differs at ε·cond(F)); the losses, which
// are backward stable, agree to 5e-8 (measured 1.1e-8 at m = 129 in 2D, where 129 Gaussians on
// 254 points are nearly rank-deficient), the projected system to 1e-5 (measured ≤ 1.6e-6).
// The look-ahead factorisation (BackendOptions::vp_lookahead) against none, on the GPU alone:
// Marquardt's loop with both gives the same bits. The preconditioned trial weights
// (BackendOptions::vp_preconditioned_trials) against the GPU's QR trials and the CPU's
// preconditioned ones; vp_prepare from a preconditioned trial's factor
// (BackendOptions::vp_factor_from_trial) against the GPU's QR vp_prepare.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/common/varpro_loop.hpp"
#include "tests/gpu/general_rows_support.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

constexpr double kLossTolerance = 5e-8;

struct Pair {
  std::unique_ptr<RbfBackend<double>> cpu, gpu;
  Pair(int dim, int m) {
    BackendOptions options;
    options.dim = dim;
    options.penalty = 100.0;
    options.min_width = 0.05;
    cpu = make_cpu_backend<double>(options);
    gpu = make_cuda_backend<double>(options);
    const CollocationBatch batch = random_batch(dim, kInterior, kBoundary, unsigned(7 * m + dim));
    const RbfParameters<double> params = random_parameters<double>(dim, m, unsigned(11 * m + dim));
    for (auto* be : {cpu.get(), gpu.get()}) {
      be->set_batch(batch);
      be->set_parameters(params);
    }
  }
};

TEST(CudaVarproParity, QrWeightsAndLoss) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims)
    for (int m : kNeuronCounts) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      Pair pair(dim, m);
      pair.cpu->solve_weights_qr();
      pair.gpu->solve_weights_qr();
      const LossParts l_cpu = pair.cpu->residuals(), l_gpu = pair.gpu->residuals();
      EXPECT_LE(relative_difference(l_gpu.loss, l_cpu.loss), kLossTolerance);
      std::vector<double> e_cpu, b_cpu, e_gpu, b_gpu;
      pair.cpu->residual_vectors(e_cpu, b_cpu);
      pair.gpu->residual_vectors(e_gpu, b_gpu);
      EXPECT_LE(relative_difference(e_gpu, e_cpu), 1e-6) << "interior residuals";
      EXPECT_LE(relative_difference(b_gpu, b_cpu), 1e-6) << "boundary residuals";
    }
}

TEST(CudaVarproParity, ProjectedSystemAndStep) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims)
    for (int m : kNeuronCounts) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      Pair pair(dim, m);
      pair.cpu->solve_weights_qr();
      pair.gpu->solve_weights_qr();
      const LossParts p_cpu = pair.cpu->vp_prepare(), p_gpu = pair.gpu->vp_prepare();
      EXPECT_LE(relative_difference(p_gpu.loss, p_cpu.loss), kLossTolerance);
      std::vector<double> jtj_cpu, jtr_cpu, jtj_gpu, jtr_gpu;
      pair.cpu->lm_system(jtj_cpu, jtr_cpu);
      pair.gpu->lm_system(jtj_gpu, jtr_gpu);
      ASSERT_EQ(jtr_cpu.size(), std::size_t(m * (dim + 1)));
      EXPECT_LE(relative_difference(jtr_gpu, jtr_cpu), 1e-5) << "JᵀR";
      EXPECT_LE(relative_difference(jtj_gpu, jtj_cpu), 1e-5) << "JᵀJ";
      // A strongly damped step is a scaled gradient step: the same on both backends.
      const LossParts s_cpu = pair.cpu->vp_try(1e3), s_gpu = pair.gpu->vp_try(1e3);
      EXPECT_LE(relative_difference(s_gpu.loss, s_cpu.loss), kLossTolerance);
      EXPECT_GT(pair.cpu->lm_predicted_decrease(), 0.0);
      // The predicted decrease comes from the step and the system, which agree to 1e-9 and 1e-5.
      EXPECT_LE(relative_difference(pair.gpu->lm_predicted_decrease(),
                                    pair.cpu->lm_predicted_decrease()),
                1e-5)
          << "predicted decrease";
      const RbfParameters<double> q_cpu = pair.cpu->parameters(), q_gpu = pair.gpu->parameters();
      EXPECT_LE(relative_difference(q_gpu.centres, q_cpu.centres), 1e-9) << "centres";
      EXPECT_LE(relative_difference(q_gpu.widths, q_cpu.widths), 1e-9) << "widths";
      // lm_reject returns both to the prepared state.
      pair.cpu->lm_reject();
      pair.gpu->lm_reject();
      EXPECT_LE(relative_difference(pair.gpu->residuals().loss, pair.cpu->residuals().loss),
                kLossTolerance);
    }
}

// Marquardt's loop as the trainer runs it (μ ÷ 10 after a success, × 10 after a failure), on two
// CUDA backends that differ only in the look-ahead: every loss, projected system and the final
// parameters are equal to the bit. Both kinds of trial occur (a rejected step drops the
// look-ahead, an accepted one hands it to the next vp_prepare). With `preconditioned`, both take
// preconditioned trial weights and the second is told to expect accepted trials, which puts the
// look-ahead beside every trial, preconditioned or fallen back to QR.
void expect_lookahead_bits(int dim, const CollocationBatch& batch,
                           const RbfParameters<double>& start, bool preconditioned = false) {
  std::unique_ptr<RbfBackend<double>> be[2];
  for (int i = 0; i < 2; ++i) {
    BackendOptions options;
    options.dim = dim;
    options.penalty = 100.0;
    options.min_width = 0.05;
    options.vp_lookahead = i == 1;
    options.vp_preconditioned_trials = preconditioned;
    be[i] = make_cuda_backend<double>(options);
    be[i]->vp_expect_accepted_trials(preconditioned && i == 1);
    be[i]->set_batch(batch);
    be[i]->set_parameters(start);
    be[i]->solve_weights_qr();
  }
  double mu = 1e-6;
  int accepted = 0, rejected = 0;
  for (int it = 0; it < 12; ++it) {
    const LossParts before = be[0]->vp_prepare();
    EXPECT_EQ(be[1]->vp_prepare().loss, before.loss) << "iteration " << it;
    std::vector<double> jtj[2], jtr[2];
    for (int i = 0; i < 2; ++i) be[i]->lm_system(jtj[i], jtr[i]);
    EXPECT_EQ(jtj[1], jtj[0]) << "JᵀJ, iteration " << it;
    EXPECT_EQ(jtr[1], jtr[0]) << "JᵀR, iteration " << it;
    for (int attempt = 0; attempt < 12; ++attempt) {
      const LossParts after = be[0]->vp_try(mu);
      EXPECT_EQ(be[1]->vp_try(mu).loss, after.loss) << "iteration " << it << ", μ " << mu;
      // Every third iteration's first trial is rejected whatever its loss (a rejection after a
      // finished weight solve: the look-ahead done and dropped).
      const bool forced = it % 3 == 2 && attempt == 0;
      if (!forced && std::isfinite(after.loss) && after.loss < before.loss) {
        ++accepted;
        mu = std::max(mu * 0.1, 1e-15);
        break;
      }
      ++rejected;
      for (auto& b : be) b->lm_reject();
      mu *= 10;
    }
  }
  EXPECT_GT(accepted, 6);
  EXPECT_GT(rejected, 3);
  if (preconditioned) {
    EXPECT_GT(be[1]->vp_trial_counts().preconditioned, 0);
  }
  const RbfParameters<double> p0 = be[0]->parameters(), p1 = be[1]->parameters();
  EXPECT_EQ(p1.weights, p0.weights);
  EXPECT_EQ(p1.centres, p0.centres);
  EXPECT_EQ(p1.widths, p0.widths);
}

TEST(CudaVarproLookahead, SameBitsAsWithout) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims)
    for (int m : {37, 64}) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      expect_lookahead_bits(dim, random_batch(dim, kInterior, kBoundary, unsigned(5 * m + dim)),
                            random_parameters<double>(dim, m, unsigned(13 * m + dim)));
    }
}

TEST(CudaVarproLookahead, SameBitsBesidePreconditionedTrials) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims) {
    SCOPED_TRACE(testing::Message() << "dim " << dim);
    const test_inputs::SmoothCase c = test_inputs::smooth_case(dim, 700, 200, dim == 2 ? 6 : 3, 52);
    expect_lookahead_bits(dim, c.batch, c.start, true);
  }
}

TEST(CudaVarproLookahead, SameBitsAsWithoutOnGeneralRows) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (const GeneralCase& c : kGeneralCases) {
    SCOPED_TRACE(testing::Message() << "dim " << c.dim << ", space_dim " << c.space_dim << ", m "
                                    << c.m);
    expect_lookahead_bits(c.dim,
                          general_batch(c.dim, c.space_dim, kInterior, kBoundary, unsigned(c.m)),
                          random_parameters<double>(c.dim, c.m, unsigned(13 * c.m + c.dim)));
  }
}

std::unique_ptr<RbfBackend<double>> smooth_backend(bool gpu, int dim, bool preconditioned,
                                                   const test_inputs::SmoothCase& c,
                                                   bool factor_from_trial = true) {
  BackendOptions options;
  options.dim = dim;
  options.penalty = 10.0;
  options.min_width = 1e-3;
  options.vp_preconditioned_trials = preconditioned;
  options.vp_factor_from_trial = factor_from_trial;
  auto be = gpu ? make_cuda_backend<double>(options) : make_cpu_backend<double>(options);
  be->set_batch(c.batch);
  be->set_parameters(c.start);
  be->solve_weights_qr();
  return be;
}

// The trial steps of the CPU test Varpro.PreconditionedTrialWeightsMatchQr on the GPU: a trial
// that uses the preconditioned weights has the GPU's QR loss to 1e-9 and the CPU's preconditioned
// loss to kLossTolerance; one that falls back is the GPU's QR trial to the bit; the GPU uses them
// on the same trials as the CPU (none of these is near the rule's thresholds).
TEST(CudaVarproPreconditioned, MatchesQrAndTheCpu) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims) {
    SCOPED_TRACE(testing::Message() << "dim " << dim);
    const test_inputs::SmoothCase c = test_inputs::smooth_case(dim, 700, 200, dim == 2 ? 6 : 3, 51);
    auto gpu_qr = smooth_backend(true, dim, false, c), gpu_pre = smooth_backend(true, dim, true, c),
         cpu_pre = smooth_backend(false, dim, true, c);
    for (double mu : {1e-2, 1.0, 1e2, 1e3, 1e14}) {
      SCOPED_TRACE(testing::Message() << "mu " << mu);
      const long gpu_used = gpu_pre->vp_trial_counts().preconditioned;
      const long cpu_used = cpu_pre->vp_trial_counts().preconditioned;
      const double before = gpu_pre->vp_prepare().loss;
      EXPECT_EQ(gpu_qr->vp_prepare().loss, before);
      EXPECT_LE(relative_difference(cpu_pre->vp_prepare().loss, before), kLossTolerance);
      const double l_qr = gpu_qr->vp_try(mu).loss, l_pre = gpu_pre->vp_try(mu).loss;
      const double l_cpu = cpu_pre->vp_try(mu).loss;
      const bool used = gpu_pre->vp_trial_counts().preconditioned > gpu_used;
      EXPECT_EQ(used, cpu_pre->vp_trial_counts().preconditioned > cpu_used);
      if (used)
        EXPECT_LE(relative_difference(l_pre, l_qr), 1e-9);
      else
        EXPECT_EQ(l_pre, l_qr);
      EXPECT_LE(relative_difference(l_pre, l_cpu), kLossTolerance);
      for (auto* be : {gpu_qr.get(), gpu_pre.get(), cpu_pre.get()}) be->lm_reject();
    }
    const auto counts = gpu_pre->vp_trial_counts();
    EXPECT_GE(counts.preconditioned, 2);
    EXPECT_GE(counts.qr, 1);
    EXPECT_EQ(gpu_qr->vp_trial_counts().preconditioned, 0);
  }
}

// The CPU test Varpro.PreconditionedTrialLoopDescendsLikeQr on the GPU.
TEST(CudaVarproPreconditioned, LoopDescendsLikeQr) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const test_inputs::SmoothCase c = test_inputs::smooth_case(2, 500, 120, 5, 61);
  test_inputs::expect_preconditioned_loop_like_qr(
      [&](bool preconditioned) { return smooth_backend(true, 2, preconditioned, c); });
}

// The CPU test Varpro.FactorFromTrialGivesQrsSystem on the GPU: vp_prepare from an accepted
// preconditioned trial's factor (GEMMs, potrs, TRMM) against the GPU's QR vp_prepare at the same
// parameters (expect_factor_from_trial_like_qr), in 2D and 3D.
TEST(CudaVarproPreconditioned, FactorFromTrialGivesQrsSystem) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims) {
    SCOPED_TRACE(testing::Message() << "dim " << dim);
    const test_inputs::SmoothCase c = dim == 2 ? test_inputs::smooth_case(2, 700, 200, 6, 61)
                                               : test_inputs::smooth_case(3, 700, 200, 3, 53);
    auto pre = smooth_backend(true, dim, true, c), ref = smooth_backend(true, dim, true, c, false);
    test_inputs::expect_factor_from_trial_like_qr(*pre, *ref);
  }
}

}  // namespace
}  // namespace rbfpde
