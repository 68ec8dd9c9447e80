// Variable projection on the CPU reference backend: the projected gradient against finite
// differences of the projected functional I(w*(c, a), c, a), the QR least-squares weights against
// the normal equations, the projected step's descent, the preconditioned trial weights against
// QR's, and the same bits on any thread count.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/common/random_inputs.hpp"
#include "tests/common/varpro_loop.hpp"

namespace rbfpde {
namespace {

using test_inputs::flatten;
using test_inputs::random_batch;
using test_inputs::random_parameters;
using test_inputs::smooth_case;
using test_inputs::SmoothCase;

struct VpCase {
  int dim;
  int neurons;
};

class VarproTest : public testing::TestWithParam<VpCase> {};

std::unique_ptr<RbfBackend<double>> backend_for(int dim, double penalty = 10.0,
                                                bool preconditioned_trials = false,
                                                bool factor_from_trial = true) {
  BackendOptions options;
  options.dim = dim;
  options.penalty = penalty;
  options.min_width = 1e-3;
  options.vp_preconditioned_trials = preconditioned_trials;
  options.vp_factor_from_trial = factor_from_trial;
  return make_cpu_backend<double>(options);
}

// The projected functional at (c, a): the loss after least-squares weights.
double projected_loss(RbfBackend<double>& be, const RbfParameters<double>& p) {
  be.set_parameters(p);
  be.solve_weights_qr();
  return be.residuals().loss;
}

TEST_P(VarproTest, GradientMatchesFiniteDifferences) {
  const VpCase c = GetParam();
  auto be = backend_for(c.dim);
  be->set_batch(random_batch(c.dim, 157, 41, 17));
  RbfParameters<double> p = random_parameters<double>(c.dim, c.neurons, 23);
  const double loss = projected_loss(*be, p);
  const LossParts prepared = be->vp_prepare();
  EXPECT_NEAR(prepared.loss, loss, 1e-14 * loss);
  std::vector<double> jtj, jtr;
  be->lm_system(jtj, jtr);
  const int m = c.neurons, pc = m * (c.dim + 1);
  ASSERT_EQ(int(jtr.size()), pc);
  ASSERT_EQ(int(jtj.size()), pc * pc);
  const RbfParameters<double> base = be->parameters();
  // JᵀR is ∂I/∂(c, a) of the projected functional (the weights' own derivative vanishes at
  // least-squares weights); central differences with h = 1e-6 are accurate to ~1e-9 relative.
  double max_err = 0, max_g = 0;
  for (int i = 0; i < pc; i += 3) {
    const double h = 1e-6;
    RbfParameters<double> plus = base, minus = base;
    double* vp = i < m * c.dim ? &plus.centres[i] : &plus.widths[i - m * c.dim];
    double* vm = i < m * c.dim ? &minus.centres[i] : &minus.widths[i - m * c.dim];
    *vp += h;
    *vm -= h;
    const double fd = (projected_loss(*be, plus) - projected_loss(*be, minus)) / (2 * h);
    max_err = std::max(max_err, std::abs(fd - jtr[i]));
    max_g = std::max(max_g, std::abs(jtr[i]));
  }
  EXPECT_GT(max_g, 0.0);
  EXPECT_LE(max_err, 1e-5 * max_g) << "max |fd − JᵀR| " << max_err << ", max |JᵀR| " << max_g;
  // JᵀJ = BᵀB is symmetric positive semi-definite: its diagonal is non-negative.
  for (int i = 0; i < pc; ++i) EXPECT_GE(jtj[i + std::size_t(i) * pc], 0.0);
}

TEST_P(VarproTest, QrWeightsMatchTheNormalEquationsWhenWellConditioned) {
  const VpCase c = GetParam();
  auto qr = backend_for(c.dim), ne = backend_for(c.dim);
  const CollocationBatch batch = random_batch(c.dim, 301, 77, 5);
  // Few, narrow, separated neurons: the normal equations are well conditioned.
  RbfParameters<double> p = random_parameters<double>(c.dim, 6, 9);
  for (double& a : p.widths) a *= 0.5;
  for (auto* be : {qr.get(), ne.get()}) {
    be->set_batch(batch);
    be->set_parameters(p);
  }
  qr->solve_weights_qr();
  ne->solve_weights_direct(0.0);
  const RbfParameters<double> wq = qr->parameters(), wn = ne->parameters();
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(wq.weights[k], wn.weights[k], 1e-8 * (1 + std::abs(wn.weights[k])));
  EXPECT_NEAR(qr->residuals().loss, ne->residuals().loss, 1e-12);
}

TEST_P(VarproTest, ProjectedStepDecreasesTheLossAndKeepsWidthsAboveTheFloor) {
  const VpCase c = GetParam();
  BackendOptions options;
  options.dim = c.dim;
  options.penalty = 10.0;
  options.min_width = 0.3;
  auto be = make_cpu_backend<double>(options);
  be->set_batch(random_batch(c.dim, 157, 41, 29));
  be->set_parameters(random_parameters<double>(c.dim, c.neurons, 31));
  be->solve_weights_qr();
  const LossParts before = be->vp_prepare();
  bool decreased = false;
  for (double mu = 1e-3; mu < 1e9 && !decreased; mu *= 10) {
    const LossParts after = be->vp_try(mu);
    decreased = after.loss < before.loss;
    if (!decreased) be->lm_reject();
  }
  EXPECT_TRUE(decreased);
  for (double a : be->parameters().widths) EXPECT_GE(a, 0.3);
  // The weights after the step are least-squares weights at the new centres and widths.
  const double loss = be->residuals().loss;
  be->solve_weights_qr();
  EXPECT_NEAR(be->residuals().loss, loss, 1e-12 * loss);
}

// The predicted decrease of a trial step δ (θ after the step minus θ before it) is the decrease
// of the linearised residuals' loss, −δᵀJᵀR − ½δᵀJᵀJδ with the system of lm_system, whatever μ
// (where no width was clamped, which would make θ − θ0 differ from δ): for LM's step on every
// parameter and for variable projection's on centres and widths. As μ grows the step shrinks and
// the actual decrease approaches the predicted one (gain ratio → 1, with an error O(|δ|)).
TEST_P(VarproTest, PredictedDecreaseIsTheLinearisedDecrease) {
  const VpCase c = GetParam();
  constexpr double kMinWidth = 1e-3;
  for (const bool vp : {false, true}) {
    SCOPED_TRACE(vp ? "varpro" : "lm");
    auto be = backend_for(c.dim);
    be->set_batch(random_batch(c.dim, 157, 41, 37));
    be->set_parameters(random_parameters<double>(c.dim, c.neurons, 41));
    be->solve_weights_qr();
    const LossParts before = vp ? be->vp_prepare() : be->lm_prepare();
    std::vector<double> jtj, jtr;
    be->lm_system(jtj, jtr);
    const std::size_t p = jtr.size();
    const std::vector<double> theta0 = flatten(be->parameters());
    int checked = 0;
    std::vector<double> gaps;
    for (double mu : {1e-2, 1.0, 1e2, 1e4, 1e6}) {
      SCOPED_TRACE(testing::Message() << "mu " << mu);
      const double actual = before.loss - (vp ? be->vp_try(mu) : be->lm_try(mu)).loss;
      const RbfParameters<double> after = be->parameters();
      const double predicted = be->lm_predicted_decrease();
      gaps.push_back(std::abs(actual / predicted - 1));
      be->lm_reject();
      if (*std::min_element(after.widths.begin(), after.widths.end()) <= kMinWidth) continue;
      EXPECT_GT(predicted, 0.0);
      // δ over the parameters the step moves: all of θ = [w | c | a] for LM, [c | a] for varpro.
      const std::vector<double> theta = flatten(after);
      const std::size_t first = theta.size() - p;
      std::vector<double> delta(p);
      for (std::size_t i = 0; i < p; ++i) delta[i] = theta[first + i] - theta0[first + i];
      double g = 0, h = 0;
      for (std::size_t i = 0; i < p; ++i) {
        g += delta[i] * jtr[i];
        // JᵀJ's lower triangle, column-major.
        for (std::size_t j = 0; j < p; ++j)
          h += delta[i] * jtj[std::max(i, j) + std::min(i, j) * p] * delta[j];
      }
      const double linearised = -g - 0.5 * h;
      EXPECT_NEAR(predicted, linearised, 1e-9 * std::abs(linearised));
      ++checked;
    }
    EXPECT_GE(checked, 3);
    EXPECT_LT(gaps.back(), gaps[gaps.size() - 2]);
    EXPECT_LT(gaps.back(), 1e-3) << "gain ratio at μ = 1e6";
  }
}

TEST(Varpro, TrialWeightsRuleRefusesFailuresLargeCorrectionsAndTies) {
  EXPECT_TRUE(vp_trial_weights_usable(true, 1e-12, 0.5, 1.0));
  EXPECT_TRUE(vp_trial_weights_usable(true, 1e-6, 2.0, 1.0));  // a clear rejection is usable
  EXPECT_FALSE(vp_trial_weights_usable(false, 1e-12, 0.5, 1.0));
  EXPECT_FALSE(vp_trial_weights_usable(true, 2e-6, 0.5, 1.0));
  EXPECT_FALSE(vp_trial_weights_usable(true, std::nan(""), 0.5, 1.0));
  EXPECT_FALSE(vp_trial_weights_usable(true, 1e-12, std::nan(""), 1.0));
  EXPECT_FALSE(vp_trial_weights_usable(true, 1e-12, HUGE_VAL, 1.0));
  EXPECT_FALSE(vp_trial_weights_usable(true, 1e-12, 1.0 - 5e-5, 1.0));  // within 1e-4: a tie
  EXPECT_FALSE(vp_trial_weights_usable(true, 1e-12, 1.0 + 5e-5, 1.0));
  EXPECT_TRUE(vp_trial_weights_usable(true, 1e-12, 1.0 - 2e-4, 1.0));
}

// The same trial steps with preconditioned trial weights and with QR's, from the same state: a
// trial that uses the preconditioned weights has QR's loss to 1e-9; one that falls back (the
// step of μ = 1e14, too small to change the loss by 1e-4, and the large steps whose features
// R no longer preconditions) is QR's to the bit.
TEST(Varpro, PreconditionedTrialWeightsMatchQr) {
  for (int dim : {2, 3}) {
    SCOPED_TRACE(testing::Message() << "dim " << dim);
    const SmoothCase c = smooth_case(dim, 700, 200, dim == 2 ? 6 : 3, 51);
    const CollocationBatch& batch = c.batch;
    const RbfParameters<double>& start = c.start;
    auto qr = backend_for(dim), pre = backend_for(dim, 10.0, true);
    for (auto* be : {qr.get(), pre.get()}) {
      be->set_batch(batch);
      be->set_parameters(start);
      be->solve_weights_qr();
    }
    for (double mu : {1e-2, 1.0, 1e2, 1e3, 1e14}) {
      SCOPED_TRACE(testing::Message() << "mu " << mu);
      const long used = pre->vp_trial_counts().preconditioned;
      ASSERT_EQ(qr->vp_prepare().loss, pre->vp_prepare().loss);
      const double l_qr = qr->vp_try(mu).loss, l_pre = pre->vp_try(mu).loss;
      if (pre->vp_trial_counts().preconditioned > used)
        EXPECT_LE(std::abs(l_pre - l_qr), 1e-9 * l_qr);
      else
        EXPECT_EQ(l_pre, l_qr);
      qr->lm_reject();
      pre->lm_reject();
    }
    const auto counts = pre->vp_trial_counts();
    EXPECT_GE(counts.preconditioned, 2);
    EXPECT_GE(counts.qr, 1);
    EXPECT_EQ(counts.preconditioned + counts.qr, 5);
    EXPECT_EQ(qr->vp_trial_counts().preconditioned, 0);
    EXPECT_EQ(qr->vp_trial_counts().qr, 5);
  }
}

// The gate on the trial's refinement correction (kernels/backend.hpp).
TEST(Varpro, TrialFactorUsableOnlyForASmallCorrection) {
  EXPECT_TRUE(vp_trial_factor_usable(0.0));
  EXPECT_TRUE(vp_trial_factor_usable(1e-10));
  EXPECT_FALSE(vp_trial_factor_usable(2e-10));
  EXPECT_FALSE(vp_trial_factor_usable(1e-7));
  EXPECT_FALSE(vp_trial_factor_usable(std::nan("")));
}

// vp_prepare after an accepted preconditioned trial, from the trial's factor (projection by two
// passes of G's normal equations, F's factor LᵀR), against a QR vp_prepare at the same
// parameters along Marquardt's loop (expect_factor_from_trial_like_qr).
TEST(Varpro, FactorFromTrialGivesQrsSystem) {
  for (int dim : {2, 3}) {
    SCOPED_TRACE(testing::Message() << "dim " << dim);
    const SmoothCase c =
        dim == 2 ? smooth_case(2, 700, 200, 6, 61) : smooth_case(3, 700, 200, 3, 53);
    auto pre = backend_for(dim, 10.0, true), ref = backend_for(dim, 10.0, true, false);
    for (auto* be : {pre.get(), ref.get()}) be->set_batch(c.batch);
    pre->set_parameters(c.start);
    pre->solve_weights_qr();
    test_inputs::expect_factor_from_trial_like_qr(*pre, *ref);
  }
}

// Marquardt's loop on one fixed batch with preconditioned trial weights against QR's
// (expect_preconditioned_loop_like_qr).
TEST(Varpro, PreconditionedTrialLoopDescendsLikeQr) {
  const SmoothCase c = smooth_case(2, 500, 120, 5, 61);
  test_inputs::expect_preconditioned_loop_like_qr([&](bool preconditioned) {
    auto be = backend_for(2, 10.0, preconditioned);
    be->set_batch(c.batch);
    be->set_parameters(c.start);
    be->solve_weights_qr();
    return be;
  });
}

// The QR factorisation, Qᵀ[J_ca | R] and JᵀJ run over fixed column blocks, one block a task: a
// system large enough to take that path gives the same bits on 1, 2 and 3 threads, and so do the
// preconditioned trial weights (A = F·R⁻¹ by row blocks, AᵀA by column blocks) and the system
// from the trial's factor (the projection by column blocks).
TEST(Varpro, ThreadCountDoesNotChangeTheNumbers) {
  const CollocationBatch batch = random_batch(2, 1500, 300, 41);
  const RbfParameters<double> start = random_parameters<double>(2, 150, 43);
  std::vector<double> losses;
  std::vector<std::vector<double>> jtjs, jtrs, widths, pre_weights, pre_jtjs, pre_jtrs;
  std::vector<double> pre_losses;
  const SmoothCase smooth = smooth_case(2, 1500, 300, 12, 47);
  const int max_threads = omp_get_max_threads();
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    auto be = backend_for(2);
    be->set_batch(batch);
    be->set_parameters(start);
    be->solve_weights_qr();
    losses.push_back(be->vp_prepare().loss);
    jtjs.emplace_back();
    jtrs.emplace_back();
    be->lm_system(jtjs.back(), jtrs.back());
    losses.push_back(be->vp_try(1e-2).loss);
    widths.push_back(be->parameters().widths);
    auto pre = backend_for(2, 10.0, true);
    pre->set_batch(smooth.batch);
    pre->set_parameters(smooth.start);
    pre->solve_weights_qr();
    pre->vp_prepare();
    pre_losses.push_back(pre->vp_try(1e-2).loss);
    pre_weights.push_back(pre->parameters().weights);
    EXPECT_EQ(pre->vp_trial_counts().preconditioned, 1);
    pre->vp_prepare();  // from the trial's factor
    EXPECT_EQ(pre->vp_trial_counts().factored_from_trial, 1);
    pre_jtjs.emplace_back();
    pre_jtrs.emplace_back();
    pre->lm_system(pre_jtjs.back(), pre_jtrs.back());
  }
  omp_set_num_threads(max_threads);
  for (std::size_t i = 1; i < jtjs.size(); ++i) {
    EXPECT_EQ(losses[2 * i], losses[0]);
    EXPECT_EQ(losses[2 * i + 1], losses[1]);
    EXPECT_EQ(jtjs[i], jtjs[0]);
    EXPECT_EQ(jtrs[i], jtrs[0]);
    EXPECT_EQ(widths[i], widths[0]);
    EXPECT_EQ(pre_losses[i], pre_losses[0]);
    EXPECT_EQ(pre_weights[i], pre_weights[0]);
    EXPECT_EQ(pre_jtjs[i], pre_jtjs[0]);
    EXPECT_EQ(pre_jtrs[i], pre_jtrs[0]);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, VarproTest,
                         testing::Values(VpCase{2, 5}, VpCase{2, 13}, VpCase{3, 7}),
                         [](const testing::TestParamInfo<VpCase>& info) {
                           return std::to_string(info.param.dim) + "d_" +
                                  std::to_string(info.param.neurons);
                         });

}  // namespace
}  // namespace rbfpde
