// Rules every trainer shares: timing, when a loss means divergence, and Levenberg–Marquardt's
// damping.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "kernels/backend.hpp"

namespace rbfpde::training_rules {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline bool finite(const LossParts& l) { return std::isfinite(l.loss); }

// A loss above kExplosionFactor × the initial one for kExplosionCycles cycles in a row is
// divergence. A single spike is not: on a fresh batch the loss of a network fitted to the last
// one can jump and recover.
constexpr double kExplosionFactor = 1e10;
constexpr int kExplosionCycles = 20;

// Counts consecutive exploded cycles in `count`; true once they are divergence.
inline bool exploded(double loss, double reference_loss, int& count) {
  count = loss > kExplosionFactor * reference_loss && loss > 1.0 ? count + 1 : 0;
  return count >= kExplosionCycles;
}

// Levenberg–Marquardt's damping μ never falls below a few ulps of the scalar (below that it no
// longer regularises anything) and never grows past kMaxDamping; reaching that on a fixed batch
// is a stall.
template <class T>
constexpr double min_damping() {
  return 5.0 * std::numeric_limits<T>::epsilon();
}
constexpr double kMaxDamping = 1e12;

// How μ moves between the trial steps of an iteration (training.lm.update; docs/mathematics.md,
// "Damping"), one rule an iteration:
// - kMarquardt: μ/10 after an accepted step, 10μ after a rejected one;
// - kBracket: μ/10 after a step accepted at the iteration's first try; μ kept after one accepted
//   after rejections (it then lies within a factor of the smallest μ that helps); after a
//   rejection μ grows by ν, ν = 2, 4, 8, … within the iteration;
// - kNielsen: from the gain ratio ρ = actual / predicted decrease of the accepted step,
//   μ·max(1/3, 1 − (2ρ − 1)³); after a rejection μ grows by ν, ν = 2, 4, 8, ….
class DampingRule {
 public:
  enum Kind { kMarquardt, kBracket, kNielsen };

  DampingRule(Kind kind, double min_mu) : kind_(kind), min_mu_(min_mu) {}

  // μ after an accepted step that lowered the loss by `actual_decrease` where the linearised
  // residuals predicted `predicted_decrease` (used by kNielsen only).
  double accepted(double mu, double actual_decrease, double predicted_decrease) const {
    double factor = 0.1;
    if (kind_ == kBracket && rejections_ > 0) factor = 1;
    if (kind_ == kNielsen) {
      const double rho = predicted_decrease > 0 ? actual_decrease / predicted_decrease : 0.0;
      const double t = 2 * rho - 1;
      factor = std::max(1.0 / 3.0, 1 - t * t * t);
    }
    return std::clamp(mu * factor, min_mu_, kMaxDamping);
  }

  double rejected(double mu) {
    ++rejections_;
    const double factor = kind_ == kMarquardt ? 10.0 : std::ldexp(1.0, rejections_);
    return std::min(mu * factor, kMaxDamping);
  }

 private:
  Kind kind_;
  double min_mu_;
  int rejections_ = 0;
};

// training.lm.update's value ("marquardt", "bracket" or "nielsen") as a DampingRule kind.
inline DampingRule::Kind damping_kind(const std::string& update) {
  if (update == "bracket") return DampingRule::kBracket;
  if (update == "nielsen") return DampingRule::kNielsen;
  return DampingRule::kMarquardt;
}

}  // namespace rbfpde::training_rules
