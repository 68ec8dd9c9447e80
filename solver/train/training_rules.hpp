// Rules every trainer shares: timing, and when a loss means divergence.
#pragma once

#include <chrono>
#include <cmath>

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

}  // namespace rbfpde::training_rules
