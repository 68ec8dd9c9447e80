// The wall-clock timing the benchmark programs share.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace rbfpde::bench {

// The median wall-clock milliseconds of `runs` calls, after `warmup` calls that are not timed.
inline double median_ms(const std::function<void()>& call, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    call();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace rbfpde::bench
