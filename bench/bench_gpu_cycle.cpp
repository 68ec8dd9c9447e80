// Times the CUDA backend with CUDA events (GPU time on the backend's stream) and wall clock (what a
// trainer sees: the GPU time plus launch and the one synchronisation per call), median of 30 runs
// after 5 warm-up runs, in double and float, 2D and 3D, at the seed's sizes and at large ones.
//
// cycle  = gdcg_cycle: a fresh batch drawn on the device (NVRTC sampler), 1 GD step on centres
//          and widths, 50 CG iterations on the weights (tolerance 0: always 50) — one CUDA graph.
// kernels, each launched on its own through the launchers (kernels/cuda/rbf/launchers.hpp) on the
//          backend's own buffers' sizes: draw (sampler), residual (fused pass + loss), gradient
//          (+ GD step), assembly (gram kernels for m ≤ 128; features + SYRK + GEMV above: timed
//          through solve_weights_cg(0)), CG (50 iterations, one kernel).
// cpu    = the CPU backend's cycle at the two small sizes (host sampling + set_batch + gd_steps +
//          50 CG iterations), wall clock.
// FLOPs counted per point–neuron pair, as executed (stated in the kernel files): residual 2D 42 /
// 3D 45, gradient 2D 59 / 3D 64 (an FMA as 2; CUDA's double exp 31 = 14 FMAs + 3). SYRK: n·m²
// (the symmetric half of 2·n·m²).
// Napkin floor per cycle: residual + gradient FLOPs at the FP64 (FP32) vector peak, SYRK at the
// FP64 tensor (FP32 vector) peak, feature writes and 50 reads of A at HBM bandwidth (L2, 10 TB/s,
// when A fits in 40 MB), and for launch-bound sizes 7 dependent kernels × 2 µs + 50 CG iterations
// × 0.3 µs (one block, 5 barriers each).
#if !defined(RBFPDE_HAVE_CUDA_BACKEND)
#include <cstdio>
int main() {
  std::printf("built without the CUDA backend: nothing to time\n");
  return 0;
}
#else
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/rbf/launchers.hpp"
#include "problems/problem.hpp"

namespace {

using namespace rbfpde;

#define BENCH_CHECK(expr)                                                                    \
  do {                                                                                       \
    const cudaError_t status_ = (expr);                                                      \
    if (status_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr,                     \
                   cudaGetErrorString(status_));                                             \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

constexpr int kRuns = 30, kWarmup = 5;

struct Peaks {
  double fp64 = 34e12, fp64_tensor = 67e12, fp32 = 67e12, hbm = 3.35e12, l2 = 10e12;
};

Problem seed_problem(int dim) {
  ProblemSpec spec;
  spec.dim = dim;
  spec.domain.type = dim == 2 ? "rectangle" : "box";
  spec.domain.min.assign(dim, 0.0);
  spec.domain.max.assign(dim, 1.0);
  spec.f.text = dim == 2 ? "sin(pi*x)*sin(pi*y)" : "-3*pi^2*sin(pi*x)*sin(pi*y)*sin(pi*z)";
  spec.f.key = "problem.equation.f";
  BoundarySpec b;
  b.value.text = "0";
  spec.boundary.push_back(b);
  return Problem::build(spec);
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? -1 : 0.5 * (v[(n - 1) / 2] + v[n / 2]);
}

struct Timing {
  double gpu_ms = -1, wall_ms = -1;
};

// body() enqueues on `stream` (and may synchronise); GPU time between events around it.
Timing time_on(gpu::Stream stream, const std::function<void()>& setup,
               const std::function<void()>& body, int runs = kRuns, int warmup = kWarmup) {
  cudaEvent_t e0, e1;
  BENCH_CHECK(cudaEventCreate(&e0));
  BENCH_CHECK(cudaEventCreate(&e1));
  std::vector<double> gpu, wall;
  for (int r = 0; r < warmup + runs; ++r) {
    setup();
    BENCH_CHECK(cudaStreamSynchronize(stream));
    const auto t0 = std::chrono::steady_clock::now();
    BENCH_CHECK(cudaEventRecord(e0, stream));
    body();
    BENCH_CHECK(cudaEventRecord(e1, stream));
    BENCH_CHECK(cudaEventSynchronize(e1));
    const auto t1 = std::chrono::steady_clock::now();
    float ms = 0;
    BENCH_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= warmup) {
      gpu.push_back(ms);
      wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  BENCH_CHECK(cudaEventDestroy(e0));
  BENCH_CHECK(cudaEventDestroy(e1));
  return {median(gpu), median(wall)};
}

double wall_ms(const std::function<void()>& setup, const std::function<void()>& body, int runs,
               int warmup) {
  std::vector<double> t;
  for (int r = 0; r < warmup + runs; ++r) {
    setup();
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= warmup) t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return median(t);
}

std::string fmt(double v, const char* f = "%.3f") {
  if (v < 0) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// Device buffers for the launchers.
template <class V>
struct Buf {
  V* p = nullptr;
  explicit Buf(std::size_t n) { BENCH_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(V))); }
  ~Buf() { cudaFree(p); }
};

template <class T>
void bench(int dim, int m, int n, const Peaks& peaks, bool with_cpu) {
  const int n_bnd = std::max(1, int(std::lround(n * 48.0 / 224.0)));
  const int n_int = n - n_bnd;
  const bool dbl = sizeof(T) == 8;
  BackendOptions options;
  options.dim = dim;
  const Problem problem = seed_problem(dim);
  auto be = make_cuda_backend<T>(options);
  be->set_problem(problem);
  gpu::Stream stream = gpu::backend_stream(*be);
  const RbfParameters<T> params = grid_parameters<T>(dim, m, 3);
  be->set_parameters(params);
  be->draw_batch(1, 0, n_int, n_bnd);
  std::uint64_t index = 1;
  typename RbfBackend<T>::GdcgCycle c;
  c.draw = true;
  c.seed = 1;
  c.n_interior = n_int;
  c.n_boundary = n_bnd;
  c.gd_steps = 1;
  c.learning_rate = T(1e-3);
  c.cg_iterations = 50;
  c.cg_tolerance = T(0);
  auto reset = [&] { be->set_parameters(params); };
  const Timing cycle = time_on(stream, reset, [&] {
    c.batch_index = index++;
    be->gdcg_cycle(c);
  });

  // Kernels on their own, on buffers of the same sizes.
  const gpu::PointsView pts{n_int, n_bnd};
  const int chunks = gpu::residual_chunk_count(n, m);
  Buf<T> x(std::size_t(n) * dim), target(n), res(n), chunk_sums(std::size_t(chunks) * n);
  Buf<T> theta(std::size_t(m) * (dim + 2)), a(std::size_t(m) * m), s(m), ad(2 * std::size_t(m));
  Buf<double> partials(2 * std::size_t(gpu::residual_blocks(n)));
  Buf<gpu::DeviceScalars> scalars(1);
  Buf<unsigned> barrier(2);
  BENCH_CHECK(cudaMemset(barrier.p, 0, 2 * sizeof(unsigned)));
  {
    const CollocationBatch b = be->batch();
    std::vector<T> hx(std::size_t(n) * dim), ht(n), th;
    for (std::size_t i = 0; i < b.interior.size(); ++i) hx[i] = T(b.interior[i]);
    for (std::size_t i = 0; i < b.boundary.size(); ++i) hx[b.interior.size() + i] = T(b.boundary[i]);
    for (int i = 0; i < n_int; ++i) ht[i] = T(b.f[i]);
    for (int i = 0; i < n_bnd; ++i) ht[n_int + i] = T(b.p[i]);
    th.insert(th.end(), params.weights.begin(), params.weights.end());
    th.insert(th.end(), params.centres.begin(), params.centres.end());
    th.insert(th.end(), params.widths.begin(), params.widths.end());
    BENCH_CHECK(cudaMemcpy(x.p, hx.data(), hx.size() * sizeof(T), cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(target.p, ht.data(), ht.size() * sizeof(T), cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(theta.p, th.data(), th.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  auto nothing = [] {};
  const Timing t_draw = time_on(stream, nothing, [&] { be->draw_batch(1, index++, n_int, n_bnd); });
  Timing t_residual, t_gradient;
  const double pair = double(n) * m;
  auto run_residual = [&] {
    if (dim == 2)
      gpu::launch_residuals<T, 2>(stream, pts, x.p, target.p, theta.p, m, res.p, chunk_sums.p,
                                  partials.p);
    else
      gpu::launch_residuals<T, 3>(stream, pts, x.p, target.p, theta.p, m, res.p, chunk_sums.p,
                                  partials.p);
  };
  t_residual = time_on(stream, nothing, run_residual);
  // The gradient without the step (grad written elsewhere) so that every run sees the same θ.
  Buf<T> grad(std::size_t(m) * (dim + 2));
  const T inv_n = T(1) / T(n_int), lam_k = T(100) / T(n_bnd);
  t_gradient = time_on(stream, nothing, [&] {
    if (dim == 2)
      gpu::launch_gradient<T, 2>(stream, pts, x.p, res.p, theta.p, m, inv_n, lam_k, grad.p, false,
                                 T(0), T(1e-4));
    else
      gpu::launch_gradient<T, 3>(stream, pts, x.p, res.p, theta.p, m, inv_n, lam_k, grad.p, false,
                                 T(0), T(1e-4));
  });
  // Assembly: the backend's own path (gram kernels or features + SYRK + GEMV + symmetrise) plus
  // a CG of 0 iterations, through the public call after a change of θ.
  const Timing t_assembly = time_on(stream, reset, [&] { be->solve_weights_cg(0, T(0)); });
  // CG: 50 iterations on the assembled system, one kernel.
  be->solve_weights_cg(0, T(0));
  Buf<T> w(m);
  BENCH_CHECK(cudaMemcpy(w.p, theta.p, m * sizeof(T), cudaMemcpyDeviceToDevice));
  {
    // An SPD system as ill-conditioned as the cycle's (a Gaussian kernel matrix), so that CG runs
    // all 50 iterations instead of converging early (the iterations run are printed).
    std::vector<T> ha(std::size_t(m) * m), hs(m, T(1));
    const double len = 0.05 * m;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        ha[std::size_t(i) * m + j] =
            T(std::exp(-double(i - j) * double(i - j) / (len * len)) + (i == j ? 1e-3 : 0.0));
    BENCH_CHECK(cudaMemcpy(a.p, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    BENCH_CHECK(cudaMemcpy(s.p, hs.data(), hs.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  gpu::CgState* state = reinterpret_cast<gpu::CgState*>(reinterpret_cast<char*>(scalars.p) +
                                                        offsetof(gpu::DeviceScalars, cg));
  Timing t_cg;
  if (m <= gpu::gram_max_neurons())
    t_cg = time_on(stream, nothing,
                   [&] { gpu::launch_cg_small<T>(stream, a.p, s.p, w.p, m, 50, 0.0, state); });
  else if (gpu::cg_grid_supported(m, sizeof(T)))
    t_cg = time_on(stream, nothing, [&] {
      gpu::launch_cg_grid<T>(stream, a.p, s.p, w.p, ad.p, m, 50, 0.0, state, barrier.p);
    });

  int cg_iterations = -1;
  {
    gpu::DeviceScalars host{};
    BENCH_CHECK(cudaMemcpy(&host, scalars.p, sizeof host, cudaMemcpyDeviceToHost));
    cg_iterations = host.cg.iterations;
  }
  double t_cpu = -1;
  if (with_cpu) {
    auto cpu = make_cpu_backend<T>(options);
    Rng rng(1);
    CollocationBatch hb;
    cpu->set_parameters(params);
    t_cpu = wall_ms([&] { cpu->set_parameters(params); },
                    [&] {
                      problem.sample(rng, n_int, n_bnd, hb);
                      cpu->set_batch(hb);
                      cpu->gd_steps(1, T(1e-3));
                      cpu->solve_weights_cg(50, T(0));
                    },
                    20, 3);
  }

  // FLOP/s of the fused kernels, and the napkin floor of the cycle.
  const double res_flops = pair * (dim == 2 ? 42 : 45), grad_flops = pair * (dim == 2 ? 59 : 64);
  const double vec_peak = dbl ? peaks.fp64 : peaks.fp32;
  const double mat_peak = dbl ? peaks.fp64_tensor : peaks.fp32;
  const double res_tf = res_flops / (t_residual.gpu_ms * 1e-3) / 1e12;
  const double grad_tf = grad_flops / (t_gradient.gpu_ms * 1e-3) / 1e12;
  const double a_bytes = double(m) * m * sizeof(T);
  double floor_s = (res_flops + grad_flops) / vec_peak;
  if (m > gpu::gram_max_neurons()) {
    floor_s += double(n) * m * m / mat_peak + double(n) * m * sizeof(T) / peaks.hbm;
    floor_s += 50 * a_bytes / (a_bytes < 40e6 ? peaks.l2 : peaks.hbm) + 50 * 1e-6;
  } else {
    floor_s += 2.0 * n * m * m / vec_peak;
  }
  const double launch_floor = 7 * 2e-6 + 50 * 0.3e-6;
  floor_s = std::max(floor_s, launch_floor);
  std::printf(
      "| %dD | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s [%d] | %s (%s%%) | %s "
      "(%s%%) |\n",
      dim, dbl ? "double" : "float", m, n, fmt(cycle.gpu_ms).c_str(), fmt(cycle.wall_ms).c_str(),
      fmt(floor_s * 1e3).c_str(), fmt(t_cpu).c_str(), fmt(t_draw.gpu_ms).c_str(),
      fmt(t_residual.gpu_ms).c_str(), fmt(t_gradient.gpu_ms).c_str(),
      fmt(t_assembly.gpu_ms).c_str(), fmt(t_cg.gpu_ms).c_str(), cg_iterations,
      fmt(res_tf, "%.2f").c_str(),
      fmt(100 * res_tf * 1e12 / vec_peak, "%.0f").c_str(), fmt(grad_tf, "%.2f").c_str(),
      fmt(100 * grad_tf * 1e12 / vec_peak, "%.0f").c_str());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (!rbfpde::cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  const int sizes[][2] = {{64, 224}, {64, 524}, {1024, 18432}, {4096, 73728}};
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  Peaks peaks;
  if (std::string(prop.name).find("H200") != std::string::npos) peaks.hbm = 4.8e12;
  const int only_dim = argc > 1 ? std::atoi(argv[1]) : 0;
  std::printf(
      "## CUDA backend on %s (%d SMs): ms, median of %d after %d warm-up runs\n\n"
      "cycle = device draw + 1 GD step + 50 CG iterations (one CUDA graph); gpu = CUDA events on "
      "the backend's stream, wall = per call incl. launch and sync; floor = napkin math; cpu = "
      "CPU backend cycle (host batch), wall. Kernels: GPU time each. FLOP/s: residual 42/45, "
      "gradient 59/64 FLOPs per pair (2D/3D, as executed, FMA = 2), %% of the %s vector peak.\n\n",
      prop.name, prop.multiProcessorCount, kRuns, kWarmup, "FP64 34 / FP32 67 TFLOP/s");
  std::printf(
      "| dim | precision | m | n | cycle gpu | cycle wall | floor | cpu cycle | draw | residual | "
      "gradient | assembly | cg [iterations] | residual TFLOP/s | gradient TFLOP/s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int dim : {2, 3}) {
    if (only_dim && dim != only_dim) continue;
    for (const auto& s : sizes) {
      const bool small = s[1] < 1000;
      bench<double>(dim, s[0], s[1], peaks, small);
      bench<float>(dim, s[0], s[1], peaks, small);
    }
  }
  return 0;
}
#endif  // RBFPDE_HAVE_CUDA_BACKEND
