// Shared helpers of the GPU tests: random batches and parameters, norm-wise relative
// differences, and the skip when no device is present.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/common/random_inputs.hpp"

#define RBFPDE_REQUIRE_CUDA_DEVICE()                                                             \
  do {                                                                                           \
    if (!::rbfpde::cuda_device_available()) GTEST_SKIP() << "no CUDA device: skipping GPU test"; \
  } while (0)

namespace rbfpde::gpu_test {

using test_inputs::random_batch;
using test_inputs::random_parameters;

// Sizes that are not multiples of any block size used by the kernels (32, 128, 256, 1024).
inline constexpr int kInterior = 201;
inline constexpr int kBoundary = 53;
inline constexpr int kNeuronCounts[] = {37, 64, 129};
inline constexpr int kDims[] = {2, 3};

using test_inputs::flatten;

// ‖a − b‖ / ‖b‖ (‖a − b‖ when b = 0); infinite when the sizes differ or a value is not finite.
template <class A, class B>
double relative_difference(const std::vector<A>& a, const std::vector<B>& b) {
  if (a.size() != b.size()) return INFINITY;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - double(b[i]);
    num += d * d;
    den += double(b[i]) * double(b[i]);
  }
  if (!std::isfinite(num)) return INFINITY;
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

inline double relative_difference(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return a == b ? 0.0 : INFINITY;
  return b != 0 ? std::abs(a - b) / std::abs(b) : std::abs(a);
}

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

inline bool bitwise_equal(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

}  // namespace rbfpde::gpu_test
