// Small helpers shared by the problem sources (host only): a point as text for messages, and the
// Monte Carlo count behind the measure of a domain known by its inside test.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "problems/random.hpp"

namespace rbfpde {

// "(x, y[, z …])" with 6 significant digits.
inline std::string point_text(const double* x, int dim) {
  std::string s = "(";
  char buf[32];
  for (int k = 0; k < dim; ++k) {
    std::snprintf(buf, sizeof buf, "%.6g", x[k]);
    s += (k ? ", " : "") + std::string(buf);
  }
  return s + ")";
}

// How many of `samples` uniform points of the box [lo, hi] (dim ≤ 3), drawn from `rng`,
// contains(x) holds for.
template <class Contains>
std::size_t count_inside(Rng& rng, std::size_t samples, const double* lo, const double* hi,
                         int dim, const Contains& contains) {
  std::size_t inside = 0;
  double x[3];
  for (std::size_t i = 0; i < samples; ++i) {
    for (int k = 0; k < dim; ++k) x[k] = uniform(rng, lo[k], hi[k]);
    inside += contains(x) ? 1 : 0;
  }
  return inside;
}

}  // namespace rbfpde
