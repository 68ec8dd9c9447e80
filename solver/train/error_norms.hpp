// Error norms of a computed field against the exact one, over the same points.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

namespace rbfpde {

struct ErrorNorms {
  double rel_l2 = std::numeric_limits<double>::quiet_NaN();  // ‖u − u*‖₂ / ‖u*‖₂
  double max = std::numeric_limits<double>::quiet_NaN();     // max |u − u*|
  double rmse = std::numeric_limits<double>::quiet_NaN();    // sqrt(mean (u − u*)²)
};

inline ErrorNorms compute_errors(const std::vector<double>& u, const std::vector<double>& exact) {
  ErrorNorms out;
  if (u.empty() || u.size() != exact.size()) return out;
  double diff2 = 0, ref2 = 0, mx = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double d = u[i] - exact[i];
    diff2 += d * d;
    ref2 += exact[i] * exact[i];
    mx = std::max(mx, std::abs(d));
    if (!std::isfinite(d)) mx = d;
  }
  out.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  out.max = mx;
  out.rmse = std::sqrt(diff2 / double(u.size()));
  return out;
}

}  // namespace rbfpde
