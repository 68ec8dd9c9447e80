// Times the CUDA backend: one gdcg cycle (set_batch of a fresh host batch, gd_steps(1),
// solve_weights_cg(50, 0)) and each backend operation on its own, at the seed's sizes and at
// large ones, in double and float, 2D and 3D. Every operation ends with a host synchronisation
// (it returns scalars or copies), so a wall-clock interval is what a trainer sees: the kernels
// plus launch and copy latency. Median of 20 runs after 3 warm-up runs. Prints a markdown table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"

namespace {

using namespace rbfpde;

CollocationBatch random_batch(int dim, int n_int, int n_bnd, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  CollocationBatch b;
  b.dim = dim;
  b.interior.resize(std::size_t(n_int) * dim);
  b.boundary.resize(std::size_t(n_bnd) * dim);
  b.normals.assign(std::size_t(n_bnd) * dim, 0.0);
  for (double& v : b.interior) v = u(rng);
  for (double& v : b.boundary) v = u(rng);
  for (int i = 0; i < n_int; ++i) b.f.push_back(u(rng) - 0.5);
  for (int i = 0; i < n_bnd; ++i) b.p.push_back(0.0);
  return b;
}

template <class T>
RbfParameters<T> grid_parameters(int dim, int m, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  RbfParameters<T> p;
  p.dim = dim;
  const double spacing = std::pow(1.0 / m, 1.0 / dim);
  for (int k = 0; k < m; ++k) p.weights.push_back(T(0.01 * (u(rng) - 0.5)));
  for (int k = 0; k < m * dim; ++k) p.centres.push_back(T(u(rng)));
  for (int k = 0; k < m; ++k) p.widths.push_back(T(1.5 * spacing));
  return p;
}

double median_ms(const std::function<void()>& setup, const std::function<void()>& body,
                 int runs = 20, int warmup = 3) {
  std::vector<double> times;
  for (int r = 0; r < warmup + runs; ++r) {
    setup();
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= warmup) times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return 0.5 * (times[(runs - 1) / 2] + times[runs / 2]);
}

template <class T>
void bench(int dim, int m, int n, std::string& device) {
  const int n_bnd = std::max(1, int(std::lround(n * 48.0 / 224.0)));
  const int n_int = n - n_bnd;
  BackendOptions options;
  options.dim = dim;
  auto be = make_cuda_backend<T>(options);
  device = be->device_name();
  const CollocationBatch batches[2] = {random_batch(dim, n_int, n_bnd, 1),
                                       random_batch(dim, n_int, n_bnd, 2)};
  const RbfParameters<T> params = grid_parameters<T>(dim, m, 3);
  int which = 0;
  auto reset = [&] {
    be->set_parameters(params);
    be->set_batch(batches[which]);
  };
  auto nothing = [] {};
  const double cycle = median_ms(reset, [&] {
    which ^= 1;
    be->set_batch(batches[which]);
    be->gd_steps(1, T(1e-3));
    be->solve_weights_cg(50, T(0));
  });
  const double t_batch = median_ms(nothing, [&] {
    which ^= 1;
    be->set_batch(batches[which]);
  });
  const double t_res = median_ms(reset, [&] { be->residuals(); });
  const double t_gd = median_ms(reset, [&] { be->gd_steps(1, T(1e-3)); });
  // First solve after new centres: features + SYRK + 50 CG iterations.
  const double t_cg = median_ms(reset, [&] { be->solve_weights_cg(50, T(0)); });
  const double t_direct = median_ms(reset, [&] { be->solve_weights_direct(T(1e-8)); });
  double t_lm_prepare = -1, t_lm_try = -1;
  if (m <= 1024) {
    t_lm_prepare = median_ms(
        reset, [&] { be->lm_prepare(); }, 10, 2);
    t_lm_try = median_ms([&] { be->lm_reject(); }, [&] { be->lm_try(T(1e-2)); }, 10, 2);
  }
  std::vector<double> points(std::size_t(n) * dim), u, lap;
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = std::fmod(0.618034 * double(i), 1.0);
  const double t_eval = median_ms(nothing, [&] { be->evaluate(points, u, lap); });
  auto fmt = [](double v) {
    char buf[32];
    if (v < 0) return std::string("–");
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return std::string(buf);
  };
  std::printf("| %dD | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", dim,
              sizeof(T) == 8 ? "double" : "float", m, n, fmt(cycle).c_str(), fmt(t_batch).c_str(),
              fmt(t_res).c_str(), fmt(t_gd).c_str(), fmt(t_cg).c_str(), fmt(t_direct).c_str(),
              fmt(t_lm_prepare).c_str(), fmt(t_lm_try).c_str(), fmt(t_eval).c_str());
  std::fflush(stdout);
}

}  // namespace

int main() {
  if (!rbfpde::cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  const int sizes[][2] = {{64, 224}, {64, 524}, {1024, 18432}, {4096, 73728}};
  std::string device;
  {
    auto probe = rbfpde::make_cuda_backend<double>(rbfpde::BackendOptions{});
    device = probe->device_name();
  }
  std::printf(
      "## CUDA backend timings on %s (ms, median of 20 after warm-up; wall clock per call)\n\n",
      device.c_str());
  std::printf(
      "| dim | precision | m | n | gdcg cycle | set_batch | residuals | gd_steps(1) | cg(50) | "
      "direct | "
      "lm_prepare | lm_try | evaluate(n) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int dim : {2, 3})
    for (const auto& s : sizes) {
      bench<double>(dim, s[0], s[1], device);
      bench<float>(dim, s[0], s[1], device);
    }
  return 0;
}
