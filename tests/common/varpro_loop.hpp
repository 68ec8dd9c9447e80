// Marquardt's loop of the trainer on one fixed batch, for the backend tests of preconditioned
// trial weights: the CPU tests and the GPU tests make the same comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"

namespace rbfpde::test_inputs {

// The trials of one iteration after vp_prepare (whose loss is `before`): at most 12, Marquardt's
// ×10 / ÷10 rule on μ; an accepted trial's loss goes to `loss`.
inline void marquardt_trials(RbfBackend<double>& be, double before, double& mu, double& loss) {
  for (int attempt = 0; attempt < 12; ++attempt) {
    const double after = be.vp_try(mu).loss;
    if (after < before) {
      mu = std::max(mu * 0.1, 1e-15);
      loss = after;
      return;
    }
    be.lm_reject();
    mu = std::min(mu * 10, 1e12);
  }
}

// `iterations` iterations of variable projection from the backend's state, μ from 1e-2
// (marquardt_trials); returns the last accepted trial's loss.
inline double marquardt_loop(RbfBackend<double>& be, int iterations) {
  double mu = 1e-2, loss = be.residuals().loss;
  for (int it = 0; it < iterations; ++it) marquardt_trials(be, be.vp_prepare().loss, mu, loss);
  return loss;
}

// 40 iterations from the same state with QR trials and with preconditioned ones (`make(true)`
// gives a backend with vp_preconditioned_trials, set up and with least-squares weights): most
// trials use the preconditioned weights, and the final loss is QR's to 1 % (measured: the same
// to 6 digits on the CPU; the trajectories may part at rounding level) and below 5 % of the
// start's.
inline void expect_preconditioned_loop_like_qr(
    const std::function<std::unique_ptr<RbfBackend<double>>(bool)>& make) {
  auto qr = make(false), pre = make(true);
  const double initial = qr->residuals().loss;
  const double loss_qr = marquardt_loop(*qr, 40), loss_pre = marquardt_loop(*pre, 40);
  const auto counts = pre->vp_trial_counts();
  EXPECT_GT(counts.preconditioned, counts.qr) << counts.preconditioned << " / " << counts.qr;
  EXPECT_LE(std::abs(loss_pre - loss_qr), 1e-2 * loss_qr)
      << "preconditioned " << loss_pre << ", QR " << loss_qr;
  EXPECT_LT(loss_pre, 0.05 * initial);
}

// 30 iterations of Marquardt's loop on `pre` (preconditioned trials with the factor from the
// trial, least-squares weights), with `ref` (the same batch, the factor from the trial off) set to
// pre's parameters and prepared by QR before each of pre's vp_prepare calls: where pre takes the
// trial's factor, its BᵀB and Bᵀz agree with ref's to 1e-10 of their largest entries (measured on
// the CPU: 5e-15 and 1.1e-13), and the loss is ref's to the bit; at least half the iterations take
// the trial's factor, and the loss ends below 5 % of the start's.
inline void expect_factor_from_trial_like_qr(RbfBackend<double>& pre, RbfBackend<double>& ref) {
  constexpr int kIterations = 30;
  double mu = 1e-2;
  const double initial = pre.residuals().loss;
  double loss = initial;
  for (int it = 0; it < kIterations; ++it) {
    SCOPED_TRACE(testing::Message() << "iteration " << it);
    ref.set_parameters(pre.parameters());
    const long from_trial = pre.vp_trial_counts().factored_from_trial;
    const double before = pre.vp_prepare().loss;
    ASSERT_EQ(ref.vp_prepare().loss, before);
    if (pre.vp_trial_counts().factored_from_trial > from_trial) {
      std::vector<double> jtj, jtr, jtj_ref, jtr_ref;
      pre.lm_system(jtj, jtr);
      ref.lm_system(jtj_ref, jtr_ref);
      const int p = int(jtr.size());
      ASSERT_EQ(int(jtr_ref.size()), p);
      double scale_j = 0, scale_r = 0, err_j = 0, err_r = 0;
      for (int j = 0; j < p; ++j) {
        scale_r = std::max(scale_r, std::abs(jtr_ref[j]));
        err_r = std::max(err_r, std::abs(jtr[j] - jtr_ref[j]));
        for (int i = j; i < p; ++i) {  // the lower triangle
          const std::size_t e = i + std::size_t(j) * p;
          scale_j = std::max(scale_j, std::abs(jtj_ref[e]));
          err_j = std::max(err_j, std::abs(jtj[e] - jtj_ref[e]));
        }
      }
      EXPECT_LE(err_j, 1e-10 * scale_j) << "|ΔJᵀJ| " << err_j << " of " << scale_j;
      EXPECT_LE(err_r, 1e-10 * scale_r) << "|ΔJᵀR| " << err_r << " of " << scale_r;
    }
    marquardt_trials(pre, before, mu, loss);
  }
  const auto counts = pre.vp_trial_counts();
  EXPECT_GE(counts.factored_from_trial, kIterations / 2)
      << counts.preconditioned << " preconditioned trials, " << counts.qr << " QR";
  EXPECT_EQ(ref.vp_trial_counts().factored_from_trial, 0);
  EXPECT_LT(loss, 0.05 * initial);
}

}  // namespace rbfpde::test_inputs
