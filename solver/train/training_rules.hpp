// Rules every trainer shares: timing, when a loss means divergence, and Levenberg–Marquardt's
// damping.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "kernels/backend.hpp"

namespace rbfpde::training_rules {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline bool finite(const LossParts& l) { return std::isfinite(l.loss); }

// Checks a batch that a backend drew and evaluated itself (its targets and coefficients); throws
// InputError on a value that is not finite. Trainers call it on each such batch they see on the
// host and on the current batch before they call a non-finite loss divergence, so that an
// expression that is NaN at a device-drawn point is bad input, not divergence.
using BatchCheck = std::function<void(const CollocationBatch&)>;

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

// What the hybrid update (below) carries from one iteration to the next; part of the trainer's
// state and of its checkpoint.
struct DampingHistory {
  int alternations = 0;    // consecutive iterations whose first try failed and second succeeded
  long nielsen_since = 0;  // the iteration that switched the hybrid to Nielsen's rule; 0 before
  bool nielsen() const { return nielsen_since > 0; }
};

// How μ moves between the trial steps of an iteration (training.lm.update; docs/mathematics.md,
// "Damping"), one rule an iteration:
// - kMarquardt: μ/10 after an accepted step, 10μ after a rejected one;
// - kBracket: μ/10 after a step accepted at the iteration's first try; μ kept after one accepted
//   after rejections (it then lies within a factor of the smallest μ that helps); after a
//   rejection μ grows by ν, ν = 2, 4, 8, … within the iteration;
// - kNielsen: from the gain ratio ρ = actual / predicted decrease of the accepted step,
//   μ·max(1/3, 1 − (2ρ − 1)³); after a rejection μ grows by ν, ν = 2, 4, 8, …;
// - kHybrid: Marquardt's rule until it has alternated (first try rejected, second accepted) in
//   kHybridAlternations consecutive iterations, then Nielsen's. Its DampingHistory says which.
class DampingRule {
 public:
  enum Kind { kMarquardt, kBracket, kNielsen, kHybrid };
  static constexpr int kHybridAlternations = 10;

  // `history` carries the hybrid rule's switch between iterations; the other rules count
  // alternations in it too but never switch. Without one, the rule keeps its own. `iteration`
  // (≥ 1) numbers this iteration for the history's record of the switch.
  DampingRule(Kind kind, double min_mu, DampingHistory* history = nullptr, long iteration = 1)
      : min_mu_(min_mu),
        hybrid_(kind == kHybrid),
        iteration_(iteration),
        history_(history ? history : &own_history_) {
    kind_ = !hybrid_ ? kind : history_->nielsen() ? kNielsen : kMarquardt;
  }
  DampingRule(const DampingRule&) = delete;
  DampingRule& operator=(const DampingRule&) = delete;

  // The rule this iteration follows (a hybrid one's current phase).
  Kind kind() const { return kind_; }

  // Whether the next trial step is likely to be accepted: every trial under Nielsen's rule (about
  // one an iteration), and a retry after a rejection (Marquardt's μ alternates between a value
  // that fails and one ten times larger that works). The trainer passes it to the backend
  // (RbfBackend::vp_expect_accepted_trials); it changes no result.
  bool likely_accepted() const { return kind_ == kNielsen || rejections_ > 0; }

  // μ after an accepted step that lowered the loss by `actual_decrease` where the linearised
  // residuals predicted `predicted_decrease` (used by kNielsen only).
  double accepted(double mu, double actual_decrease, double predicted_decrease) {
    history_->alternations = rejections_ == 1 ? history_->alternations + 1 : 0;
    if (hybrid_ && !history_->nielsen() && history_->alternations >= kHybridAlternations)
      history_->nielsen_since = iteration_;
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
    // Two rejections (or an iteration that accepts nothing) end a run of alternations.
    if (rejections_ > 1) history_->alternations = 0;
    const double factor = kind_ == kMarquardt ? 10.0 : std::ldexp(1.0, rejections_);
    return std::min(mu * factor, kMaxDamping);
  }

 private:
  Kind kind_;
  double min_mu_;
  bool hybrid_;
  long iteration_;
  int rejections_ = 0;
  DampingHistory own_history_;
  DampingHistory* history_;
};

// training.lm.update's value ("marquardt", "bracket", "nielsen" or "hybrid") as a DampingRule
// kind.
inline DampingRule::Kind damping_kind(const std::string& update) {
  if (update == "bracket") return DampingRule::kBracket;
  if (update == "nielsen") return DampingRule::kNielsen;
  if (update == "hybrid") return DampingRule::kHybrid;
  return DampingRule::kMarquardt;
}

}  // namespace rbfpde::training_rules
