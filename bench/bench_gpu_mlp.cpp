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
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/mlp_kernels.hpp"
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
                                                  MlpShape& shape) {
  shape.input_min = {0.0, 0.0};
  shape.input_max = {1.0, 1.0};
  auto backend = make_cuda_mlp_backend<T>(mlp_backend_options(shape, 100.0));
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
void bench(const char* precision, const Problem& problem, int n_int, int n_bnd) {
  MlpShape shape;
  auto backend = benchmark_backend<T>(problem, n_int, n_bnd, shape);
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
      gpu::plan_mlp_tiling(gpu::make_mlp_net_view<T>(opt), n_int, n_bnd, true);
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
// `bench_gpu_mlp crossover`: variant 4 against the tiled kernels at batch sizes around the
// planner's switch (main).
// `bench_gpu_mlp quick`: the first table only (the defaults at both sizes).
// `bench_gpu_mlp tiles`: the tiled kernels' tile sizes forced, at small batches (main).
// `bench_gpu_mlp profile float|double`: five loss_and_gradient() calls at 16384 + 1024, the
// third with the pass kernel's phase timing on (printed), for a profiler (ncu -k
// regex:mlp_pass --launch-skip 2) to look at that one. Variant 4's phases need a build with
// -DRBFPDE_MLP_POINT_PHASES in CMAKE_CUDA_FLAGS (mlp_point_kernel.cu).
template <class T>
void profile_passes(const Problem& problem) {
  MlpShape shape;
  auto backend = benchmark_backend<T>(problem, 16384, 1024, shape);
  for (int i = 0; i < 2; ++i) backend->loss_and_gradient();
  gpu::set_mlp_phase_timing(true);
  backend->loss_and_gradient();
  const std::vector<unsigned long long> cycles = gpu::mlp_phase_cycles();
  gpu::set_mlp_phase_timing(false);
  for (int i = 0; i < 2; ++i) backend->loss_and_gradient();
  unsigned long long total = 0;
  for (unsigned long long c : cycles) total += c;
  // Variant 4's phases (slots 64 + phase, boundary tiles 80 + phase; mlp_point_kernel.cu).
  static const char* const point_phase[] = {"prologue (θ)",
                                            "forward, layer 1",
                                            "forward, layers 2…",
                                            "output and seeds",
                                            "∂I/∂w_out",
                                            "adjoint, X staged",
                                            "∂I/∂W (thread 0)",
                                            "X̄ = Wᵀ P̄",
                                            "∂I/∂W_1",
                                            "loss"};
  std::printf(
      "block 0 phase cycles (one pass; slots 32–63: boundary tiles; 64–: variant 4, 80–: its "
      "boundary tiles), total %llu\n",
      total);
  for (std::size_t k = 0; k < cycles.size(); ++k) {
    if (!cycles[k]) continue;
    const std::size_t p = k >= 64 ? (k - 64) % 16 : 0;
    std::printf("  phase %2zu: %10llu (%4.1f %%) %s\n", k, cycles[k], 100.0 * cycles[k] / total,
                k >= 64 && p < 10 ? point_phase[p] : "");
  }
}

// `bench_gpu_mlp timeline float|double [N K]`: variant 4's blocks on the clock, for a build with
// -DRBFPDE_MLP_POINT_TIMELINE in the CUDA flags (mlp_point_kernel.cu): a warm-up graph of 20
// training steps, then one with the stamps on; the last two passes' marks (entry, past the
// wait for the previous kernel, θ loaded, tiles done, loss started, exit) over the blocks, in µs
// from the first block's entry, and the gap from one pass's last exit to the next pass's first
// block past its wait (the reduction, Adam and the kernel boundaries).
template <class T>
void timeline(const Problem& problem, int n_int, int n_bnd) {
  constexpr std::size_t kBlocks = 512, kSlots = 2 * kBlocks * 8;
  constexpr int kStepsTl = 20;
  MlpShape shape;
  auto backend = benchmark_backend<T>(problem, n_int, n_bnd, shape);
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps(kStepsTl);
  std::vector<LossParts> losses;
  long t = 0;
  auto run = [&] {
    for (auto& s : steps) s = {T(1e-3), ++t};
    losses.clear();
    backend->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, losses);
  };
  run();
  gpu::set_mlp_phase_timing(true);
  run();
  const std::vector<unsigned long long> v = gpu::mlp_phase_cycles();
  gpu::set_mlp_phase_timing(false);
  if (v.size() < kSlots) {
    std::printf("no timeline: build mlp_point_kernel.cu with -DRBFPDE_MLP_POINT_TIMELINE\n");
    return;
  }
  const unsigned long long* tl = v.data() + (v.size() - kSlots);
  // Mark 7 of a block's slots: its step + 1 (low 32 bits) and its SM (high 32).
  auto step_of = [](const unsigned long long* base, std::size_t b) {
    return unsigned(base[8 * b + 7] & 0xffffffffu);
  };
  auto sm_of = [](const unsigned long long* base, std::size_t b) {
    return unsigned(base[8 * b + 7] >> 32);
  };
  const char* const names[] = {"entry", "past the wait", "θ loaded", "tile 1 done",
                               "tile 2 done", "loss started", "exit"};
  unsigned long long t0 = ~0ull;
  for (std::size_t b = 0; b < 2 * kBlocks; ++b)
    if (step_of(tl, b) == kStepsTl - 1) t0 = std::min(t0, tl[8 * b]);  // step 18's first entry
  std::printf("%s, %d + %d: µs from step %d's first block entry (min / median / max over blocks)\n",
              sizeof(T) == 4 ? "float" : "double", n_int, n_bnd, kStepsTl - 2);
  double last_exit = 0;
  for (int step = kStepsTl - 2; step < kStepsTl; ++step) {
    const unsigned long long* base = tl + std::size_t(step & 1) * kBlocks * 8;
    for (int m = 0; m < 7; ++m) {
      std::vector<double> x;
      for (std::size_t b = 0; b < kBlocks; ++b)
        if (step_of(base, b) == unsigned(step + 1) && base[8 * b + m] >= t0)
          x.push_back(1e-3 * double(base[8 * b + m] - t0));
      if (x.empty()) continue;
      std::sort(x.begin(), x.end());
      std::printf("  step %d %-14s %9.2f %9.2f %9.2f  (%zu blocks)\n", step, names[m], x.front(),
                  x[x.size() / 2], x.back(), x.size());
      if (m == 1 && step == kStepsTl - 1)
        std::printf("  gap: previous pass's last exit → first block past the wait: %.2f µs\n",
                    x.front() - last_exit);
      if (m == 6) last_exit = x.back();
    }
  }
  // The last pass's slowest blocks, with the blocks on the same SM.
  const unsigned long long* base = tl + std::size_t((kStepsTl - 1) & 1) * kBlocks * 8;
  std::vector<int> blocks;
  for (std::size_t b = 0; b < kBlocks; ++b)
    if (step_of(base, b) == unsigned(kStepsTl)) blocks.push_back(int(b));
  std::sort(blocks.begin(), blocks.end(),
            [&](int x, int y) { return base[8 * x + 6] > base[8 * y + 6]; });
  auto at = [&](int b, int m) {
    return base[8 * b + m] >= t0 ? 1e-3 * double(base[8 * b + m] - t0) : -1.0;
  };
  std::printf("  step %d, slowest blocks: block (SM) entry / θ / tiles done / exit; blocks on the SM\n",
              kStepsTl - 1);
  for (std::size_t i = 0; i < blocks.size() && i < 24; ++i) {
    const int b = blocks[i];
    const unsigned sm = sm_of(base, std::size_t(b));
    std::printf("   %4d (%3u) %7.1f %7.1f %7.1f %7.1f %7.1f;", b, sm, at(b, 0), at(b, 2), at(b, 3),
                at(b, 4), at(b, 6));
    for (int o : blocks)
      if (o != b && sm_of(base, std::size_t(o)) == sm)
        std::printf("  %d: %.1f %.1f %.1f %.1f %.1f", o, at(o, 0), at(o, 2), at(o, 3), at(o, 4),
                    at(o, 6));
    std::printf("\n");
  }
}

int main(int argc, char** argv) {
  if (!cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  const Problem problem = seed_problem();
  if (argc == 3 && std::string(argv[1]) == "profile") {
    if (std::string(argv[2]) == "double")
      profile_passes<double>(problem);
    else
      profile_passes<float>(problem);
    return 0;
  }
  if (argc >= 3 && std::string(argv[1]) == "timeline") {
    const int n = argc >= 5 ? std::atoi(argv[3]) : 16384, k = argc >= 5 ? std::atoi(argv[4]) : 1024;
    if (std::string(argv[2]) == "double")
      timeline<double>(problem, n, k);
    else
      timeline<float>(problem, n, k);
    return 0;
  }
  auto probe = make_cuda_mlp_backend<float>(MlpOptions{});
  std::printf("device: %s\n", probe->device_name().c_str());
  probe.reset();
  if (argc == 2 && std::string(argv[1]) == "tiles") {
    // The tiled kernels' tile size (mlp_kernels.cu's plan_mlp_tiling): float on variant 1 and
    // double on variant 2, each size forced (RBFPDE_MLP_TILE_POINTS: at most that many points),
    // then the planner's choice, at small batches.
    std::printf("%s", kForcedHeader);
    for (auto [n, k] : {std::pair{300, 30}, std::pair{1200, 120}, std::pair{2048, 128}}) {
      for (const char* p : {"16", "12", "10", "8", "6", "5", "4", "3", "2", "1", ""}) {
        if (p[0])
          setenv("RBFPDE_MLP_TILE_POINTS", p, 1);
        else
          unsetenv("RBFPDE_MLP_TILE_POINTS");
        setenv("RBFPDE_MLP_VARIANT", "1", 1);
        bench<float>("float", problem, n, k);
        setenv("RBFPDE_MLP_VARIANT", "2", 1);
        bench<double>("double", problem, n, k);
      }
    }
    unsetenv("RBFPDE_MLP_TILE_POINTS");
    unsetenv("RBFPDE_MLP_VARIANT");
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
    // Batch sizes around the planner's switch to variant 4 (kPtDefaultTilesPerSm in
    // mlp_point_kernel.cu): variant 4 against the tiled kernel the planner takes below it (1 in
    // float, 2 in double), each forced, then the default.
    std::printf("%s", kForcedHeader);
    for (auto [n, k] : {std::pair{2048, 128}, std::pair{4096, 256}, std::pair{6144, 384},
                        std::pair{8192, 512}, std::pair{12288, 768}}) {
      for (const char* v : {"4", "tiled", "default"}) {
        auto force = [&](const char* variant) {
          if (v[0] == 'd')
            unsetenv("RBFPDE_MLP_VARIANT");
          else
            setenv("RBFPDE_MLP_VARIANT", v[0] == '4' ? "4" : variant, 1);
        };
        force("1");
        bench<float>("float", problem, n, k);
        force("2");
        bench<double>("double", problem, n, k);
      }
    }
    unsetenv("RBFPDE_MLP_VARIANT");
    return 0;
  }
  std::printf(
      "| precision | points N + K | it/s (graph, 200 steps/sync) | it/s (sync per step) | "
      "TFLOP/s (graph) | variant / tile / grid | loss over the last repeat |\n"
      "|---|---|---|---|---|---|---|\n");
  for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
    bench<float>("float", problem, n, k);
    bench<double>("double", problem, n, k);
  }
  if (argc == 2 && std::string(argv[1]) == "quick") return 0;  // the default table only
  // Variant 4 (the default in float from a wave of tiles up) with one and two 32-point tiles
  // per block (two: float only).
  setenv("RBFPDE_MLP_VARIANT", "4", 1);
  for (const char* nt : {"1", "2"}) {
    std::printf(
        "\nvariant 4 with %s tile(s) of 32 points per block (RBFPDE_MLP_VARIANT=4, "
        "RBFPDE_MLP_POINT_TILES=%s)\n",
        nt, nt);
    setenv("RBFPDE_MLP_POINT_TILES", nt, 1);
    for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
      bench<float>("float", problem, n, k);
      bench<double>("double", problem, n, k);
    }
  }
  // Variant 4 in double: the hidden layers' forward GEMM on the FP64 FMA units against DMMA
  // (the default), around the planner's switch and at the benchmark's size.
  unsetenv("RBFPDE_MLP_POINT_TILES");
  for (const char* fwd : {"fma", "mma"}) {
    std::printf(
        "\nvariant 4, double, forward GEMM on the %s (RBFPDE_MLP_VARIANT=4, "
        "RBFPDE_MLP_POINT_FORWARD=%s)\n",
        fwd[0] == 'f' ? "FP64 FMA units" : "tensor cores (DMMA)", fwd);
    setenv("RBFPDE_MLP_POINT_FORWARD", fwd, 1);
    for (auto [n, k] : {std::pair{4096, 256}, std::pair{8192, 512}, std::pair{12288, 768},
                        std::pair{16384, 1024}})
      bench<double>("double", problem, n, k);
  }
  unsetenv("RBFPDE_MLP_POINT_FORWARD");
  // Every other kernel variant forced (3 is opt-in), and tiles smaller than the planner's
  // choice (mlp_kernels.cu), in the same run.
  for (const char* v : {"3", "2", "1", "0"}) {
    static const char* const what[] = {
        "SIMT, 4 × 4 micro-tiles, 256 threads", "SIMT, 2 × 4 micro-tiles, 512 threads",
        "tensor cores: DMMA / 3xTF32, 512 threads",
        "register-resident, DMMA, double only: float falls back to variant 1"};
    std::printf("\nvariant %s (%s; RBFPDE_MLP_VARIANT=%s)\n", v, what[v[0] - '0'], v);
    setenv("RBFPDE_MLP_VARIANT", v, 1);
    for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
      bench<float>("float", problem, n, k);
      bench<double>("double", problem, n, k);
    }
  }
  unsetenv("RBFPDE_MLP_VARIANT");
  for (const char* p : {"8"}) {
    std::printf("\nvariant 2, at most %s points per tile (RBFPDE_MLP_TILE_POINTS)\n", p);
    setenv("RBFPDE_MLP_VARIANT", "2", 1);
    setenv("RBFPDE_MLP_TILE_POINTS", p, 1);
    for (auto [n, k] : {std::pair{1200, 120}, std::pair{16384, 1024}}) {
      bench<float>("float", problem, n, k);
      bench<double>("double", problem, n, k);
    }
  }
  unsetenv("RBFPDE_MLP_TILE_POINTS");
  unsetenv("RBFPDE_MLP_VARIANT");
  return 0;
}
#endif
