#include "solver/train/memory_check.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "problems/errors.hpp"

namespace rbfpde {
namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

}  // namespace

std::size_t estimate_cpu_bytes(const Config& config, int dim) {
  const double scalar = config.compute.precision == "float" ? 4 : 8;
  const double n = double(config.training.points_interior) + config.training.points_boundary;
  double grid = 1;
  for (int r : config.output.resolution) grid *= r;
  if (config.model.type != "rbf") return std::size_t(grid * 8 * 8);
  const double m = config.model.neurons;
  const double p = m * (dim + 2);
  double bytes = n * m * scalar;  // M and N
  bytes += m * m * scalar * 2;    // the direct solve's normal matrix and its factor
  if (config.training.method == "lm") bytes += n * p * scalar + 3 * p * p * scalar;  // J, JᵀJ, A, LLT
  bytes += grid * 8 * 8;          // evaluation grid, exact solution and the output arrays
  return std::size_t(bytes);
}

std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) {
      std::istringstream ss(line.substr(13));
      std::size_t kib = 0;
      ss >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

void check_host_memory(const Config& config, int dim) {
  const std::size_t need = estimate_cpu_bytes(config, dim);
  const std::size_t have = host_available_bytes();
  if (have == 0 || need <= have) return;
  const std::string what = config.training.method == "lm" ? "the Jacobian and features of "
                                                          : "the features of ";
  throw InputError(SourceLoc{config.file, 0, 0}, "model.neurons",
                   "the CPU backend needs about " + gib(double(need)) + " for " + what +
                       std::to_string(config.model.neurons) + " neurons × " +
                       std::to_string(config.training.points_interior +
                                      config.training.points_boundary) +
                       " points, but the host has " + gib(double(have)) +
                       " available; use fewer neurons or points");
}

}  // namespace rbfpde
