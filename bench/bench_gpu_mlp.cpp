// Training iterations per second of the CUDA MLP backend (kernels/cuda/mlp_*.cu) on the
// benchmark network 2-50-50-50-50-1 tanh, float and double, at 1200 + 120 and 16384 + 1024
// points of the seed problem (a fixed batch, as bench/jax_mlp.py's default), λ = 100, Adam 1e-3.
// One iteration = loss + gradient + Adam update.
//   graph    = train_steps(200): 200 steps captured as one CUDA graph, one host sync (what the
//              trainer runs between reports);
//   stepwise = 200 × (loss_and_gradient() + adam_step()), a host sync per step.
// Wall clock, median of 7 repeats after a warm-up repeat (which also captures the graph).
// Napkin: ≈ 6·P·((d+2)·N + K) FLOPs per step (forward GEMMs 2·P per column, backward twice
// that; P = 7851): 0.23 GFLOP at 1200 + 120, 3.1 GFLOP at 16384 + 1024.
#if !defined(RBFPDE_HAVE_CUDA_MLP)
#include <cstdio>
int main() {
  std::printf("built without the CUDA MLP backend: nothing to time\n");
  return 0;
}
#else
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/mlp_backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"
#include "solver/train/mlp_model.hpp"

namespace {

using namespace rbfpde;

constexpr int kSteps = 200, kRepeats = 7;

// The header of the tables with a variant or tile size forced (bench's rows).
constexpr const char* kForcedHeader =
    "| precision | points N + K | it/s | it/s (sync per step) | TFLOP/s | variant / tile / grid | "
    "loss |\n|---|---|---|---|---|---|---|\n";

Problem seed_problem() {
  ProblemSpec spec;
  spec.dim = 2;
  spec.domain.type = "rectangle";
  spec.domain.min = {0.0, 0.0};
  spec.domain.max = {1.0, 1.0};
  spec.f.text = "sin(pi*x)*sin(pi*y)";
  spec.f.key = "problem.equation.f";
  BoundarySpec b;
  b.value.text = "0";
  spec.boundary.push_back(b);
  return Problem::build(spec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return 0.5 * (v[(v.size() - 1) / 2] + v[v.size() / 2]);
}

// Iterations per second of body() (which runs kSteps steps), median over kRepeats.
double iterations_per_second(const std::function<void()>& body) {
  body();  // warm-up
  std::vector<double> rate;
  for (int r = 0; r < kRepeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rate.push_back(kSteps / s);
  }
  return median(rate);
}

// The benchmark network (2-50-50-50-50-1 tanh on the unit square, Glorot weights from seed 7)
// on the CUDA backend, with a batch of n_int + n_bnd seed-problem points drawn from seed 1.
template <class T>
std::unique_ptr<MlpBackend<T> > benchmark_backend(const Problem& problem, int n_int, int n_bnd,
                                                  MlpShape& shape,
                                                  const gpu::MlpTuning& tuning = {}) {
  shape.input_min = {0.0, 0.0};
  shape.input_max = {1.0, 1.0};
  auto backend = gpu::make_cuda_mlp_backend<T>(mlp_backend_options(shape, 100.0), tuning);
  Rng init(7);
  const std::vector<double> theta = initial_mlp_parameters(shape, init);
  backend->set_parameters(std::vector<T>(theta.begin(), theta.end()));
  Rng rng(1);
  CollocationBatch batch;
  problem.sample(rng, std::size_t(n_int), std::size_t(n_bnd), batch);
  backend->set_batch(batch);
  return backend;
}

template <class T>
void bench(const char* precision, const Problem& problem, int n_int, int n_bnd,
           const gpu::MlpTuning& tuning = {}) {
  MlpShape shape;
  auto backend = benchmark_backend<T>(problem, n_int, n_bnd, shape, tuning);
  const MlpOptions opt = mlp_backend_options(shape, 100.0);

  long t = 0;
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps(kSteps);
  std::vector<LossParts> losses;
  const double graph = iterations_per_second([&] {
    for (auto& s : steps) s = {T(1e-3), ++t};
    losses.clear();
    backend->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, losses);
  });
  const double first_loss = losses.front().loss, last_loss = losses.back().loss;
  const double stepwise = iterations_per_second([&] {
    for (int i = 0; i < kSteps; ++i) {
      backend->loss_and_gradient();
      backend->adam_step(T(1e-3), T(0.9), T(0.999), T(1e-8), ++t);
    }
  });
  const double flops = 6.0 * double(shape.parameter_count()) * (4.0 * n_int + n_bnd);
  const gpu::MlpTiling tiling =
      gpu::plan_mlp_tiling(gpu::make_mlp_net_view<T>(opt), n_int, n_bnd, true, tuning);
  std::printf("| %s | %d + %d | %.0f | %.0f | %.1f | %d / %d pts / %d blocks | %.3g → %.3g |\n",
              precision, n_int, n_bnd, graph, stepwise, graph * flops * 1e-12, tiling.variant,
              tiling.points, tiling.grid, first_loss, last_loss);
}

// A fresh batch every step (training.points.resample_every 1), three ways: none (the fixed
// batch, as above), drawn on the device inside the graph (train_steps with every step drawing:
// what the trainer does on the CUDA backend), and sampled on the host, uploaded and stepped one
// step per sync (what it did before the MLP backend drew its own batches).
template <class T>
void draws(const char* precision, const Problem& problem, int n_int, int n_bnd) {
  MlpShape shape;
  auto backend = benchmark_backend<T>(problem, n_int, n_bnd, shape);
  backend->set_problem(problem);
  long t = 0;
  std::uint64_t index = 0;
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps(kSteps);
  std::vector<LossParts> losses;
  auto run = [&](bool draw) {
    return iterations_per_second([&] {
      for (auto& s : steps) {
        s = {T(1e-3), ++t};
        ++index;
        if (draw) s.drawing(1, index, std::size_t(n_int), std::size_t(n_bnd));
      }
      losses.clear();
      backend->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, losses);
    });
  };
  const double fixed = run(false), device = run(true);
  Rng rng(2);
  CollocationBatch batch;
  const double host = iterations_per_second([&] {
    for (int i = 0; i < kSteps; ++i) {
      problem.sample(rng, std::size_t(n_int), std::size_t(n_bnd), batch);
      backend->set_batch(batch);
      losses.clear();
      backend->train_steps({{T(1e-3), ++t}}, T(0.9), T(0.999), T(1e-8), 0.0, losses);
    }
  });
  std::printf("| %s | %d + %d | %.0f | %.0f | %.0f |\n", precision, n_int, n_bnd, fixed, device,
              host);
}

}  // namespace

// `bench_gpu_mlp draws`: a fresh batch every step, drawn on the device or on the host, against
// the fixed batch (draws above).
// `bench_gpu_mlp crossover`: the point kernel against the tiled kernel at batch sizes around the
// planner's switch (main).
// `bench_gpu_mlp quick`: the first table only (the defaults at both sizes).
// `bench_gpu_mlp tiles`: the tiled kernel's tile sizes forced, at small batches (main).
// `bench_gpu_mlp nopdl`: the first table without the programmatic dependent launch.
// `bench_gpu_mlp profile float|double [tiled|point]`: five loss_and_gradient() calls at
// 16384 + 1024, for a profiler (ncu -k regex:'mlp_(pass|point)_kernel' --launch-skip 2
// --launch-count 1) to look at the third.
template <class T>
void profile_passes(const Problem& problem, const gpu::MlpTuning& tuning) {
  MlpShape shape;
  auto backend = benchmark_backend<T>(problem, 16384, 1024, shape, tuning);
  for (int i = 0; i < 5; ++i) backend->loss_and_gradient();
}

gpu::MlpTuning with_kernel(gpu::MlpTuning::Kernel kernel) {
  gpu::MlpTuning t;
  t.kernel = kernel;
  return t;
}

int main(int argc, char** argv) {
  if (!cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  const Problem problem = seed_problem();
  if (argc >= 3 && std::string(argv[1]) == "profile") {
    const std::string kernel = argc >= 4 ? argv[3] : "";
    const gpu::MlpTuning tuning = with_kernel(kernel == "tiled"   ? gpu::MlpTuning::Kernel::kTiled
                                              : kernel == "point" ? gpu::MlpTuning::Kernel::kPoint
                                                                  : gpu::MlpTuning::Kernel::kAuto);
    if (std::string(argv[2]) == "double")
      profile_passes<double>(problem, tuning);
    else
      profile_passes<float>(problem, tuning);
    return 0;
  }
  auto probe = make_cuda_mlp_backend<float>(MlpOptions{});
  std::printf("device: %s\n", probe->device_name().c_str());
  probe.reset();
  if (argc == 2 && std::string(argv[1]) == "tiles") {
    // The tiled kernel's tile size (mlp_plan.hpp's choose_tile_points), each size forced (at
    // most that many points), then the planner's choice, at small batches.
    std::printf("%s", kForcedHeader);
    for (auto [n, k] : {std::pair{300, 30}, std::pair{1200, 120}, std::pair{2048, 128}}) {
      for (int p : {16, 12, 10, 8, 6, 5, 4, 3, 2, 1, 0}) {
        gpu::MlpTuning tuning = with_kernel(gpu::MlpTuning::Kernel::kTiled);
        tuning.tile_points = p;
        bench<float>("float", problem, n, k, tuning);
        bench<double>("double", problem, n, k, tuning);
      }
    }
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "draws") {
    std::printf(
        "| precision | points N + K | it/s, fixed batch | it/s, drawn on the device every step | "
        "it/s, sampled on the host every step |\n|---|---|---|---|---|\n");
    for (auto [n, k] : {std::pair{176, 48}, std::pair{1000, 200}, std::pair{1200, 120},
                        std::pair{4000, 400}, std::pair{16384, 1024}}) {
      draws<float>("float", problem, n, k);
      draws<double>("double", problem, n, k);
    }
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "crossover") {
    // Batch sizes around the planner's switch to the point kernel (mlp_plan.hpp's
    // kPtDefaultTilesPerSm): the point kernel against the tiled kernel, each forced, then the
    // default.
    std::printf("%s", kForcedHeader);
    for (auto [n, k] : {std::pair{2048, 128}, std::pair{4096, 256}, std::pair{6144, 384},
                        std::pair{8192, 512}, std::pair{12288, 768}}) {
      for (auto kernel : {gpu::MlpTuning::Kernel::kPoint, gpu::MlpTuning::Kernel::kTiled,
                          gpu::MlpTuning::Kernel::kAuto}) {
        bench<float>("float", problem, n, k, with_kernel(kernel));
        bench<double>("double", problem, n, k, with_kernel(kernel));
      }
    }
    return 0;
  }
  gpu::MlpTuning defaults;
  defaults.pdl = !(argc == 2 && std::string(argv[1]) == "nopdl");
  std::printf(
      "| precision | points N + K | it/s (graph, 200 steps/sync) | it/s (sync per step) | "
      "TFLOP/s (graph) | variant / tile / grid | loss over the last repeat |\n"
      "|---|---|---|---|---|---|---|\n");
  for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
    bench<float>("float", problem, n, k, defaults);
    bench<double>("double", problem, n, k, defaults);
  }
  if (argc == 2) return 0;  // quick, nopdl: the default table only
  // The point kernel with one and two 32-point tiles per block (two: float only), and the tiled
  // kernel, each forced, at both sizes.
  for (int nt : {1, 2}) {
    std::printf("\npoint kernel, %d tile(s) of 32 points per block\n", nt);
    gpu::MlpTuning tuning = with_kernel(gpu::MlpTuning::Kernel::kPoint);
    tuning.point_tiles = nt;
    for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
      bench<float>("float", problem, n, k, tuning);
      if (nt == 1) bench<double>("double", problem, n, k, tuning);
    }
  }
  std::printf("\ntiled kernel (SIMT in float, DMMA in double)\n");
  for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
    bench<float>("float", problem, n, k, with_kernel(gpu::MlpTuning::Kernel::kTiled));
    bench<double>("double", problem, n, k, with_kernel(gpu::MlpTuning::Kernel::kTiled));
  }
  return 0;
}
#endif
