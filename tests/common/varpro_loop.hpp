// Marquardt's loop of the trainer on one fixed batch, for the backend tests of preconditioned
// trial weights: the CPU tests and the GPU tests make the same comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "kernels/backend.hpp"

namespace rbfpde::test_inputs {

// `iterations` iterations of variable projection from the backend's state, μ from 1e-2, at most
// 12 trials an iteration, Marquardt's ×10 / ÷10 rule; returns the last accepted trial's loss.
inline double marquardt_loop(RbfBackend<double>& be, int iterations) {
  double mu = 1e-2, loss = be.residuals().loss;
  for (int it = 0; it < iterations; ++it) {
    const double before = be.vp_prepare().loss;
    for (int attempt = 0; attempt < 12; ++attempt) {
      const double after = be.vp_try(mu).loss;
      if (after < before) {
        mu = std::max(mu * 0.1, 1e-15);
        loss = after;
        break;
      }
      be.lm_reject();
      mu = std::min(mu * 10, 1e12);
    }
  }
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

}  // namespace rbfpde::test_inputs
