// The one random engine of the project: same seed → same numbers on every platform we build on.
#pragma once

#include <cstdint>
#include <random>

namespace rbfpde {

using Rng = std::mt19937_64;

// Uniform in [0, 1) with 53 random bits (std::uniform_real_distribution is implementation-defined).
inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
inline double uniform(Rng& rng, double lo, double hi) { return lo + (hi - lo) * uniform01(rng); }

}  // namespace rbfpde
