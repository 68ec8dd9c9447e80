// Levenberg–Marquardt's damping update (training_rules.hpp DampingRule): Marquardt's fixed
// factors, the bracketing rule and Nielsen's gain-ratio rule, with their floor and ceiling.
#include <gtest/gtest.h>

#include "solver/train/training_rules.hpp"

namespace rbfpde::training_rules {
namespace {

TEST(DampingRule, MarquardtUsesFactorTen) {
  DampingRule rule(DampingRule::kMarquardt, 1e-15);
  EXPECT_DOUBLE_EQ(rule.accepted(1.0, 1.0, 2.0), 0.1);
  EXPECT_DOUBLE_EQ(rule.rejected(1.0), 10.0);
  EXPECT_DOUBLE_EQ(rule.rejected(10.0), 100.0);
  EXPECT_DOUBLE_EQ(rule.accepted(100.0, 1.0, 2.0), 10.0);
}

TEST(DampingRule, BracketShrinksAfterAFirstTrySuccessAndKeepsAMuFoundByRejections) {
  DampingRule first(DampingRule::kBracket, 1e-15);
  EXPECT_DOUBLE_EQ(first.accepted(1.0, 1.0, 0.0), 0.1);
  DampingRule later(DampingRule::kBracket, 1e-15);
  double mu = 1.0;
  mu = later.rejected(mu);
  EXPECT_DOUBLE_EQ(mu, 2.0);
  mu = later.rejected(mu);
  EXPECT_DOUBLE_EQ(mu, 8.0);
  mu = later.rejected(mu);
  EXPECT_DOUBLE_EQ(mu, 64.0);
  EXPECT_DOUBLE_EQ(later.accepted(mu, 1.0, 0.0), 64.0);
}

TEST(DampingRule, NielsenFollowsTheGainRatio) {
  const DampingRule rule(DampingRule::kNielsen, 1e-15);
  // ρ = 1 (and above): the model was exact, μ shrinks by the largest factor, 3.
  EXPECT_DOUBLE_EQ(rule.accepted(1.0, 2.0, 2.0), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(rule.accepted(1.0, 5.0, 2.0), 1.0 / 3.0);
  // ρ = ½: 1 − 0³ = 1, μ stays.
  EXPECT_DOUBLE_EQ(rule.accepted(1.0, 1.0, 2.0), 1.0);
  // ρ = ¾: 1 − ½³ = 7/8.
  EXPECT_DOUBLE_EQ(rule.accepted(1.0, 1.5, 2.0), 0.875);
  // ρ → 0: a step that barely helped doubles μ; so does one with no predicted decrease.
  EXPECT_NEAR(rule.accepted(1.0, 1e-12, 2.0), 2.0, 1e-11);
  EXPECT_DOUBLE_EQ(rule.accepted(1.0, 1.0, 0.0), 2.0);
  // Rejections: 2, 4, 8 … as for the bracketing rule.
  DampingRule growing(DampingRule::kNielsen, 1e-15);
  EXPECT_DOUBLE_EQ(growing.rejected(1.0), 2.0);
  EXPECT_DOUBLE_EQ(growing.rejected(2.0), 8.0);
}

TEST(DampingRule, StaysBetweenTheFloorAndTheCeiling) {
  for (const auto kind : {DampingRule::kMarquardt, DampingRule::kBracket, DampingRule::kNielsen}) {
    DampingRule rule(kind, 1e-15);
    EXPECT_DOUBLE_EQ(rule.accepted(2e-15, 1.0, 1.0), 1e-15);
    EXPECT_DOUBLE_EQ(rule.rejected(0.5 * kMaxDamping), kMaxDamping);
    EXPECT_DOUBLE_EQ(rule.rejected(kMaxDamping), kMaxDamping);
  }
  // A poor success cannot push μ past the ceiling either.
  const DampingRule rule(DampingRule::kNielsen, 1e-15);
  EXPECT_DOUBLE_EQ(rule.accepted(kMaxDamping, 1e-12, 1.0), kMaxDamping);
}

TEST(DampingRule, KindsByName) {
  EXPECT_EQ(damping_kind("marquardt"), DampingRule::kMarquardt);
  EXPECT_EQ(damping_kind("bracket"), DampingRule::kBracket);
  EXPECT_EQ(damping_kind("nielsen"), DampingRule::kNielsen);
}

}  // namespace
}  // namespace rbfpde::training_rules
