// The CUDA MLP backend against the CPU reference (kernels/cpu/mlp_cpu_backend.cpp) on random
// networks and batches whose sizes are not multiples of the kernels' tiles (N = 201, K = 53;
// widths 37, 50, 29), 2D and 3D, every activation; then determinism, the graph path
// (train_steps) with its early stops, the shared-memory limit's error, and the seed problem.
// Differences are norm-wise, ‖gpu − cpu‖ / ‖cpu‖. Tolerances:
// - double 1e-12: both backends run the same formulas (mlp_math.hpp) and differ in summation
//   order, FMA contraction and the activations' last bit;
// - float 1e-5: the CUDA float backend against the CPU double backend holding the same
//   (float-rounded) parameters, so that only the GPU's float rounding is measured.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "../mlp/mlp_test_util.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "solver/config/config.hpp"
#include "solver/train/solve_mlp.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using gpu_test::bitwise_equal;
using gpu_test::relative_difference;

template <class T>
constexpr double tolerance() {
  return sizeof(T) == sizeof(double) ? 1e-12 : 1e-5;
}

// The planner's choice, and each kernel forced (the tiled kernel on every network; the
// point kernel on the training passes of the networks it takes).
const gpu::MlpTuning kDefault{};
gpu::MlpTuning forced(gpu::MlpTuning::Kernel kernel) {
  gpu::MlpTuning t;
  t.kernel = kernel;
  return t;
}
const gpu::MlpTuning kTiled = forced(gpu::MlpTuning::Kernel::kTiled);
const gpu::MlpTuning kPoint = forced(gpu::MlpTuning::Kernel::kPoint);

MlpShape test_shape(int dim, const std::string& activation) {
  MlpShape shape;
  shape.dim = dim;
  shape.hidden = {37, 50, 29};
  shape.activation = activation;
  return shape;
}

template <class T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// One network on both backends: the CPU reference in double, the CUDA backend in T, both
// holding the T-rounded parameters.
template <class T>
struct Pair {
  std::unique_ptr<MlpBackend<double>> cpu;
  std::unique_ptr<MlpBackend<T>> gpu;
};

template <class T>
Pair<T> make_pair(const MlpShape& shape, unsigned long long seed, int n_int, int n_bnd,
                  const gpu::MlpTuning& tuning = kDefault) {
  const MlpOptions opt = mlp_options(shape, 7.0);
  Pair<T> p{make_cpu_mlp_backend<double>(opt), gpu::make_cuda_mlp_backend<T>(opt, tuning)};
  const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, seed));
  p.cpu->set_parameters(std::vector<double>(theta.begin(), theta.end()));
  p.gpu->set_parameters(theta);
  const CollocationBatch batch = random_batch(shape.dim, n_int, n_bnd, seed + 1);
  p.cpu->set_batch(batch);
  p.gpu->set_batch(batch);
  return p;
}

template <class T>
class CudaMlpParity : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(CudaMlpParity, Precisions);

TYPED_TEST(CudaMlpParity, LossGradientResidualsAndEvaluation) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const double tol = tolerance<T>();
  for (int dim : {2, 3}) {
    for (const char* act : {"tanh", "sin", "sigmoid"}) {
      SCOPED_TRACE(std::string(act) + " " + std::to_string(dim) + "D");
      const MlpShape shape = test_shape(dim, act);
      Pair<T> p = make_pair<T>(shape, 11 + dim, 201, 53);

      const LossParts r_cpu = p.cpu->residuals(), r_gpu = p.gpu->residuals();
      EXPECT_LE(relative_difference(r_gpu.loss, r_cpu.loss), tol);
      const LossParts l_cpu = p.cpu->loss_and_gradient(), l_gpu = p.gpu->loss_and_gradient();
      EXPECT_LE(relative_difference(l_gpu.loss, l_cpu.loss), tol);
      EXPECT_LE(relative_difference(l_gpu.rms_interior, l_cpu.rms_interior), tol);
      EXPECT_LE(relative_difference(l_gpu.rms_boundary, l_cpu.rms_boundary), tol);
      EXPECT_GT(l_cpu.loss, 0.0);

      std::vector<double> g_cpu;
      std::vector<T> g_gpu;
      p.cpu->gradient(g_cpu);
      p.gpu->gradient(g_gpu);
      ASSERT_EQ(g_gpu.size(), shape.parameter_count());
      EXPECT_LE(relative_difference(g_gpu, g_cpu), tol);

      std::vector<double> e_cpu, b_cpu;
      std::vector<T> e_gpu, b_gpu;
      p.cpu->residual_vectors(e_cpu, b_cpu);
      p.gpu->residual_vectors(e_gpu, b_gpu);
      EXPECT_LE(relative_difference(e_gpu, e_cpu), tol);
      EXPECT_LE(relative_difference(b_gpu, b_cpu), tol);

      const CollocationBatch pts = random_batch(dim, 157, 0, 99);
      std::vector<double> u_cpu, lap_cpu, u_gpu, lap_gpu, grad_cpu, grad_gpu;
      p.cpu->evaluate(pts.interior, u_cpu, lap_cpu);
      p.gpu->evaluate(pts.interior, u_gpu, lap_gpu);
      EXPECT_LE(relative_difference(u_gpu, u_cpu), tol);
      EXPECT_LE(relative_difference(lap_gpu, lap_cpu), tol);
      p.cpu->evaluate_gradient(pts.interior, grad_cpu);
      p.gpu->evaluate_gradient(pts.interior, grad_gpu);
      ASSERT_EQ(grad_gpu.size(), std::size_t(157 * dim));
      EXPECT_LE(relative_difference(grad_gpu, grad_cpu), tol);
    }
  }
}

// loss_and_gradient_at (one synchronisation) gives the bits of set_parameters,
// loss_and_gradient and gradient called in turn, and zeroes the Adam moments as
// set_parameters does; the batch sizes take the point kernel and the tiled one.
TYPED_TEST(CudaMlpParity, LossAndGradientAtIsTheThreeCallsInOne) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  for (auto [n_int, n_bnd] : {std::pair{201, 53}, std::pair{16384, 1024}}) {
    SCOPED_TRACE(std::to_string(n_int) + " + " + std::to_string(n_bnd));
    Pair<T> p = make_pair<T>(shape, 41, n_int, n_bnd);
    const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 42));
    p.gpu->loss_and_gradient();
    p.gpu->adam_step(T(1e-3), T(0.9), T(0.999), T(1e-8), 1);  // moments now non-zero
    std::vector<T> g_at;
    const LossParts at = p.gpu->loss_and_gradient_at(theta, g_at);
    std::vector<T> m, v;
    p.gpu->adam_moments(m, v);
    EXPECT_TRUE(bitwise_equal(m, std::vector<T>(m.size(), T(0))));
    EXPECT_TRUE(bitwise_equal(v, std::vector<T>(v.size(), T(0))));
    p.gpu->set_parameters(theta);
    const LossParts three = p.gpu->loss_and_gradient();
    std::vector<T> g_three;
    p.gpu->gradient(g_three);
    EXPECT_EQ(at.loss, three.loss);
    EXPECT_EQ(at.rms_interior, three.rms_interior);
    EXPECT_EQ(at.rms_boundary, three.rms_boundary);
    EXPECT_TRUE(bitwise_equal(g_at, g_three));
    std::vector<T> g_last;
    p.gpu->gradient(g_last);  // the device gradient is the evaluation's
    EXPECT_TRUE(bitwise_equal(g_last, g_at));
  }
}

// The benchmark network (4 × 50 tanh) at a size with several tiles per block, on each kernel.
TYPED_TEST(CudaMlpParity, BenchmarkNetworkGradient) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  for (const gpu::MlpTuning& tuning : {kDefault, kTiled, kPoint}) {
    SCOPED_TRACE(int(tuning.kernel));
    Pair<T> p = make_pair<T>(shape, 5, 3001, 299, tuning);
    const LossParts l_cpu = p.cpu->loss_and_gradient(), l_gpu = p.gpu->loss_and_gradient();
    EXPECT_LE(relative_difference(l_gpu.loss, l_cpu.loss), tolerance<T>());
    std::vector<double> g_cpu;
    std::vector<T> g_gpu;
    p.cpu->gradient(g_cpu);
    p.gpu->gradient(g_gpu);
    EXPECT_LE(relative_difference(g_gpu, g_cpu), tolerance<T>());
  }
}

// Adam in T on both sides: CPU<T> against CUDA<T>, step by step and through train_steps (one
// CUDA graph), with a decaying learning rate.
template <class T>
void expect_adam_parity(const MlpShape& shape, bool graph,
                        const gpu::MlpTuning& tuning = kDefault) {
  const int dim = shape.dim;
  const MlpOptions opt = mlp_options(shape, 7.0);
  auto cpu = make_cpu_mlp_backend<T>(opt);
  auto gpu = gpu::make_cuda_mlp_backend<T>(opt, tuning);
  const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 3));
  cpu->set_parameters(theta);
  gpu->set_parameters(theta);
  const CollocationBatch batch = random_batch(dim, 201, 53, 4);
  cpu->set_batch(batch);
  gpu->set_batch(batch);
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps;
  for (long t = 1; t <= 6; ++t) steps.push_back({T(1e-3 * std::pow(0.9, double(t))), t});
  std::vector<LossParts> l_cpu, l_gpu;
  cpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_cpu);
  if (graph) {
    gpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_gpu);
  } else {
    for (const auto& s : steps) {
      l_gpu.push_back(gpu->loss_and_gradient());
      gpu->adam_step(s.learning_rate, T(0.9), T(0.999), T(1e-8), s.t);
    }
  }
  ASSERT_EQ(l_gpu.size(), steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    EXPECT_LE(relative_difference(l_gpu[i].loss, l_cpu[i].loss), tolerance<T>()) << i;
  EXPECT_LE(relative_difference(gpu->parameters(), cpu->parameters()), tolerance<T>());
  EXPECT_GT(relative_difference(gpu->parameters(), theta), 1e-5);  // it moved
}

TYPED_TEST(CudaMlpParity, AdamSteps) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : {2, 3}) expect_adam_parity<TypeParam>(test_shape(dim, "tanh"), false);
}

TYPED_TEST(CudaMlpParity, TrainStepsGraph) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : {2, 3}) expect_adam_parity<TypeParam>(test_shape(dim, "tanh"), true);
}

// The early stops of train_steps, as the default (CPU) implementation: below stop_below after
// the first step (its update applied), a non-finite loss at once (no update).
template <class T>
void expect_early_stops(const MlpShape& shape, const gpu::MlpTuning& tuning = kDefault) {
  const MlpOptions opt = mlp_options(shape, 7.0);
  auto cpu = make_cpu_mlp_backend<T>(opt);
  auto gpu = gpu::make_cuda_mlp_backend<T>(opt, tuning);
  const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 8));
  const CollocationBatch batch = random_batch(2, 201, 53, 9);
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps;
  for (long t = 1; t <= 5; ++t) steps.push_back({T(1e-3), t});
  for (MlpBackend<T>* be : {static_cast<MlpBackend<T>*>(cpu.get()), gpu.get()}) {
    be->set_parameters(theta);
    be->set_batch(batch);
  }
  std::vector<LossParts> l_cpu, l_gpu;
  cpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 1e300, l_cpu);
  gpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 1e300, l_gpu);
  ASSERT_EQ(l_cpu.size(), 1u);
  ASSERT_EQ(l_gpu.size(), 1u);
  EXPECT_LE(relative_difference(gpu->parameters(), cpu->parameters()), tolerance<T>());
  EXPECT_GT(relative_difference(gpu->parameters(), theta), 1e-6);

  std::vector<T> bad = theta;
  bad[3] = std::numeric_limits<T>::quiet_NaN();
  gpu->set_parameters(bad);
  l_gpu.clear();
  gpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_gpu);
  ASSERT_EQ(l_gpu.size(), 1u);
  EXPECT_FALSE(std::isfinite(l_gpu[0].loss));
  // The next chunk runs again from the start.
  gpu->set_parameters(theta);
  l_gpu.clear();
  gpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_gpu);
  EXPECT_EQ(l_gpu.size(), steps.size());
  EXPECT_TRUE(std::isfinite(l_gpu.back().loss));
}

TYPED_TEST(CudaMlpParity, TrainStepsStopEarly) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  expect_early_stops<TypeParam>(test_shape(2, "tanh"));
}

// Same inputs, same bits: the partial gradients are summed in a fixed order, no float atomics.
TYPED_TEST(CudaMlpParity, SameInputsSameBits) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  const MlpOptions opt = mlp_options(shape, 100.0);
  const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 21));
  const CollocationBatch batch = random_batch(2, 4097, 513, 22);
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps;
  for (long t = 1; t <= 20; ++t) steps.push_back({T(1e-3), t});
  std::vector<std::vector<T>> params, grads;
  std::vector<std::vector<LossParts>> losses;
  for (int run = 0; run < 2; ++run) {
    auto gpu = make_cuda_mlp_backend<T>(opt);
    gpu->set_parameters(theta);
    gpu->set_batch(batch);
    std::vector<LossParts> l;
    gpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l);
    l.push_back(gpu->loss_and_gradient());
    std::vector<T> g;
    gpu->gradient(g);
    params.push_back(gpu->parameters());
    grads.push_back(g);
    losses.push_back(l);
  }
  EXPECT_TRUE(bitwise_equal(params[0], params[1]));
  EXPECT_TRUE(bitwise_equal(grads[0], grads[1]));
  ASSERT_EQ(losses[0].size(), losses[1].size());
  for (std::size_t i = 0; i < losses[0].size(); ++i)
    EXPECT_TRUE(bitwise_equal(losses[0][i].loss, losses[1][i].loss)) << i;
}

// Every kernel and launcher once on a tiny network (what the sanitizers run): the residual
// pass, the training pass and its reduction, Adam alone, a 3-step graph, evaluation.
TEST(CudaMlpBackend, TinyNetworkEveryKernel) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  shape.hidden = {7, 5};
  const MlpOptions opt = mlp_options(shape, 3.0);
  auto cpu = make_cpu_mlp_backend<double>(opt);
  auto gpu = make_cuda_mlp_backend<double>(opt);
  const std::vector<double> theta = random_mlp_parameters(shape, 31);
  const CollocationBatch batch = random_batch(2, 13, 5, 32);
  for (MlpBackend<double>* be : {cpu.get(), gpu.get()}) {
    be->set_parameters(theta);
    be->set_batch(batch);
  }
  EXPECT_LE(relative_difference(gpu->residuals().loss, cpu->residuals().loss), 1e-12);
  EXPECT_LE(relative_difference(gpu->loss_and_gradient().loss, cpu->loss_and_gradient().loss),
            1e-12);
  for (MlpBackend<double>* be : {cpu.get(), gpu.get()}) be->adam_step(0.01, 0.9, 0.999, 1e-8, 1);
  std::vector<MlpBackend<double>::AdamStepArgs> steps = {{0.01, 2}, {0.005, 3}, {0.0025, 4}};
  std::vector<LossParts> l_cpu, l_gpu;
  cpu->train_steps(steps, 0.9, 0.999, 1e-8, 0.0, l_cpu);
  gpu->train_steps(steps, 0.9, 0.999, 1e-8, 0.0, l_gpu);
  ASSERT_EQ(l_gpu.size(), 3u);
  EXPECT_LE(relative_difference(l_gpu[2].loss, l_cpu[2].loss), 1e-12);
  EXPECT_LE(relative_difference(gpu->parameters(), cpu->parameters()), 1e-12);
  const CollocationBatch pts = random_batch(2, 9, 0, 33);
  std::vector<double> u_cpu, lap_cpu, u_gpu, lap_gpu, g_cpu, g_gpu;
  cpu->evaluate(pts.interior, u_cpu, lap_cpu);
  gpu->evaluate(pts.interior, u_gpu, lap_gpu);
  cpu->evaluate_gradient(pts.interior, g_cpu);
  gpu->evaluate_gradient(pts.interior, g_gpu);
  EXPECT_LE(relative_difference(u_gpu, u_cpu), 1e-12);
  EXPECT_LE(relative_difference(lap_gpu, lap_cpu), 1e-12);
  EXPECT_LE(relative_difference(g_gpu, g_cpu), 1e-12);
}

TEST(CudaMlpBackend, TooWideANetworkSaysWhy) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  shape.hidden = {400, 400, 400};
  auto gpu = make_cuda_mlp_backend<double>(mlp_options(shape, 1.0));
  try {
    gpu->set_batch(random_batch(2, 10, 5, 1));
    FAIL() << "expected a shared-memory error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << e.what();
  }
}

// configs/poisson2d_seed_mlp.yaml cut to 2500 steps, as tests/mlp/test_mlp_solve.cpp does on the
// CPU (measured there: 5.2e-2; bound 0.15), through solve_mlp on the CUDA backend.
TEST(CudaMlpBackend, SeedProblemReachesTheCpuBound) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  ASSERT_TRUE(cuda_mlp_backend_built());
  for (const char* precision : {"double", "float"}) {
    const std::string dir = std::string(RBFPDE_TEST_TMP) + "/mlp_cuda_seed_" + precision;
    const Config config =
        load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_mlp.yaml",
                    {"output.directory=" + dir, "training.max_cycles=2500",
                     "training.lbfgs.iterations=0",  // Adam alone, as the CPU bound was set
                     std::string("compute.precision=") + precision});
    const Problem problem = Problem::build(config.problem);
    SolveOptions options;
    options.quiet = true;
    const SolveResult r = solve_mlp(config, problem, options, "cuda");
    std::printf("poisson2d_seed_mlp cuda %s: %ld cycles, %.2f s: relative L2 error %.3e\n",
                precision, r.outcome.cycles, r.outcome.seconds, r.errors.rel_l2);
    EXPECT_EQ(r.backend, "cuda");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_FALSE(r.outcome.diverged);
    EXPECT_EQ(r.outcome.cycles, 2500);
    EXPECT_LE(r.errors.rel_l2, 0.15);
  }
}

}  // namespace
}  // namespace rbfpde

namespace rbfpde {
namespace {

struct PointCase {
  std::vector<int> hidden;
  const char* act;
  int n_int, n_bnd;
};

// Each case with one and two 32-point tiles per block against the CPU backend, and twice;
// grid ≥ 1 caps the blocks.
template <class T>
void check_point_pass(const std::vector<PointCase>& cases, int grid = 0) {
  const double tol = tolerance<T>();
  for (int tiles : {1, 2}) {
    gpu::MlpTuning tuning = kPoint;
    tuning.point_tiles = tiles;
    tuning.point_grid = grid;
    for (const PointCase& k : cases) {
      SCOPED_TRACE(std::string(k.act) + ", " + std::to_string(k.hidden.size()) + " × " +
                   std::to_string(k.hidden[0]) + ", " + std::to_string(k.n_int) + " + " +
                   std::to_string(k.n_bnd) + ", tiles " + std::to_string(tiles));
      MlpShape shape;
      shape.hidden = k.hidden;
      shape.activation = k.act;
      const gpu::MlpNetView<T> net = gpu::make_mlp_net_view<T>(mlp_options(shape, 7.0));
      if (tiles == 2 && (sizeof(T) == sizeof(double) || k.hidden[0] > 50)) {
        // Two tiles a block: float only, widths ≤ 50.
        EXPECT_THROW(gpu::plan_mlp_tiling(net, k.n_int, k.n_bnd, true, tuning),
                     std::invalid_argument);
        continue;
      }
      const gpu::MlpTiling plan = gpu::plan_mlp_tiling(net, k.n_int, k.n_bnd, true, tuning);
      ASSERT_EQ(plan.variant, gpu::kMlpPoint);
      EXPECT_EQ(plan.points, 32 * tiles);
      if (grid >= 1) {
        EXPECT_LE(plan.grid, grid);
      }
      // Features a thread owns: 5, or 10 in double past width 60.
      EXPECT_EQ(plan.features, sizeof(T) == sizeof(double) && k.hidden[0] > 60 ? 10 : 5);
      Pair<T> p = make_pair<T>(shape, 31, k.n_int, k.n_bnd, tuning);
      const LossParts r_cpu = p.cpu->residuals(), r_gpu = p.gpu->residuals();
      EXPECT_LE(relative_difference(r_gpu.loss, r_cpu.loss), tol);
      const LossParts l_cpu = p.cpu->loss_and_gradient(), l_gpu = p.gpu->loss_and_gradient();
      EXPECT_LE(relative_difference(l_gpu.loss, l_cpu.loss), tol);
      EXPECT_LE(relative_difference(l_gpu.rms_interior, l_cpu.rms_interior), tol);
      EXPECT_LE(relative_difference(l_gpu.rms_boundary, l_cpu.rms_boundary), tol);
      std::vector<double> g_cpu, e_cpu, b_cpu;
      std::vector<T> g_gpu, e_gpu, b_gpu;
      p.cpu->gradient(g_cpu);
      p.gpu->gradient(g_gpu);
      EXPECT_LE(relative_difference(g_gpu, g_cpu), tol);
      p.cpu->residual_vectors(e_cpu, b_cpu);
      p.gpu->residual_vectors(e_gpu, b_gpu);
      EXPECT_LE(relative_difference(e_gpu, e_cpu), tol);
      EXPECT_LE(relative_difference(b_gpu, b_cpu), tol);
      p.gpu->loss_and_gradient();
      std::vector<T> g_again;
      p.gpu->gradient(g_again);
      EXPECT_TRUE(bitwise_equal(g_again, g_gpu));
    }
  }
}

template <class T>
class CudaMlpPointPass : public ::testing::Test {};
TYPED_TEST_SUITE(CudaMlpPointPass, Precisions);

// Small enough for compute-sanitizer (tools/gpu-mlp-check.sh): one to thirteen feature groups,
// partial tiles, packed boundary tiles; in double both kernels (5 features a thread up to width
// 60, 10 above).
TYPED_TEST(CudaMlpPointPass, SmallNetworks) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const std::vector<PointCase> cases{
      PointCase{{13, 13, 13}, "sigmoid", 77, 9}, PointCase{{64, 64}, "sin", 40, 53},
      PointCase{{60, 60}, "tanh", 35, 11},       PointCase{{61, 61}, "tanh", 35, 11},
      PointCase{{7, 7}, "tanh", 33, 2},          PointCase{{9, 9}, "tanh", 100, 600}};
  check_point_pass<TypeParam>(cases);
  // On three blocks: blocks of several tiles, and (last case: 4 interior and 5 boundary tiles of
  // 32 points) more boundary tiles than blocks (kernels/mlp_tile_schedule.hpp).
  check_point_pass<TypeParam>(cases, 3);
}

// Adam through train_steps (one CUDA graph: the pass, the reduction and Adam per step) and step
// by step against the CPU backend, and its early stops, on the point-stationary pass.
TYPED_TEST(CudaMlpPointPass, TrainStepsGraphAndEarlyStops) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  shape.hidden = {50, 50, 50};
  const gpu::MlpNetView<TypeParam> net = gpu::make_mlp_net_view<TypeParam>(mlp_options(shape, 7.0));
  ASSERT_EQ(gpu::plan_mlp_tiling(net, 201, 53, true, kPoint).variant, gpu::kMlpPoint);
  for (bool graph : {false, true}) expect_adam_parity<TypeParam>(shape, graph, kPoint);
  expect_early_stops<TypeParam>(shape, kPoint);
}

TYPED_TEST(CudaMlpPointPass, MatchesTheCpuBackendAndRepeatsBitForBit) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_point_pass<T>(
      {PointCase{{50, 50, 50, 50}, "tanh", 3001, 299}, PointCase{{64, 64}, "sin", 201, 53},
       PointCase{{50}, "tanh", 1200, 120}, PointCase{{24, 24, 24, 24, 24}, "tanh", 40, 7},
       PointCase{{41, 41}, "sigmoid", 300, 130}, PointCase{{20, 20, 20}, "tanh", 20000, 1500},
       PointCase{{50, 50, 50, 50}, "tanh", 9000, 1100}});
  {
    // The last case has more tiles than resident blocks on GPUs of up to 148 SMs (291 tiles;
    // 2 blocks an SM in float, 1 in double): blocks take two or more tiles, and the boundary
    // tiles go to those with fewer interior tiles (kernels/mlp_tile_schedule.hpp).
    MlpShape bench;
    const gpu::MlpTiling plan = gpu::plan_mlp_tiling(
        gpu::make_mlp_net_view<T>(mlp_options(bench, 7.0)), 9000, 1100, true, kPoint);
    ASSERT_EQ(plan.variant, gpu::kMlpPoint);
    if (gpu::mlp_device_sms() <= 148) {
      EXPECT_LT(plan.grid, plan.tiles_interior + plan.tiles_boundary);
    }
  }
  // Not taken: unequal widths, 3D, wider than 64, not even when asked for.
  MlpShape wide;
  wide.hidden = {65, 65};
  for (const MlpShape& other : {test_shape(2, "tanh"), test_shape(3, "tanh"), wide}) {
    const gpu::MlpNetView<T> net = gpu::make_mlp_net_view<T>(mlp_options(other, 7.0));
    EXPECT_EQ(gpu::plan_mlp_tiling(net, 16384, 1024, true).variant, gpu::kMlpTiled<T>);
    EXPECT_THROW(gpu::plan_mlp_tiling(net, 16384, 1024, true, kPoint), std::invalid_argument);
  }
  // By default: batches past the measured crossover (float about 0.4 tiles an SM, double 0.65);
  // not small batches or passes without the gradient. The choices around the crossover hold
  // for GPUs of 112 to 148 SMs (H100 PCIe 114, H100 SXM and H200 132): 1200 + 120 is 39 tiles,
  // 2048 + 128 is 65, 4096 + 256 is 130, 6144 + 384 is 195.
  MlpShape bench;
  const gpu::MlpNetView<T> net = gpu::make_mlp_net_view<T>(mlp_options(bench, 7.0));
  EXPECT_EQ(gpu::plan_mlp_tiling(net, 16384, 1024, true).variant, gpu::kMlpPoint);
  EXPECT_EQ(gpu::plan_mlp_tiling(net, 16384, 1024, true).features, 5);
  const bool is_double = sizeof(T) == sizeof(double);
  const int sms = gpu::mlp_device_sms();
  if (sms >= 112 && sms <= 148) {
    EXPECT_NE(gpu::plan_mlp_tiling(net, 1200, 120, true).variant, gpu::kMlpPoint);
    EXPECT_EQ(gpu::plan_mlp_tiling(net, 2048, 128, true).variant,
              is_double ? gpu::kMlpTiledDouble : gpu::kMlpPoint);
    EXPECT_EQ(gpu::plan_mlp_tiling(net, 4096, 256, true).variant, gpu::kMlpPoint);
    EXPECT_EQ(gpu::plan_mlp_tiling(net, 6144, 384, true).variant, gpu::kMlpPoint);
    // The reduction launches early (programmatic dependent launch) after a pass whose blocks
    // take one tile each (4096 + 256: 130 tiles), not after one of more tiles than blocks.
    const gpu::MlpTiling one = gpu::plan_mlp_tiling(net, 4096, 256, true);
    const gpu::MlpTiling more = gpu::plan_mlp_tiling(net, 16384, 1024, true);
    EXPECT_EQ(one.grid, one.tiles_interior + one.tiles_boundary);
    EXPECT_EQ(one.overlap_reduce, one.overlap);
    EXPECT_LT(more.grid, more.tiles_interior + more.tiles_boundary);
    EXPECT_FALSE(more.overlap_reduce);
    // The tiled kernels' tile size: of the sizes with the fewest waves of blocks (one block an
    // SM here), about the smallest. 1200 + 120: float one wave of 9 to 12 points; double, which
    // fits at most 8, two waves of 5 or 6. 300 + 30: one wave of 3 points.
    const gpu::MlpTiling mid = gpu::plan_mlp_tiling(net, 1200, 120, true);
    EXPECT_EQ(mid.variant, gpu::kMlpTiled<T>);
    EXPECT_GE(mid.points, is_double ? 5 : 9);
    EXPECT_LE(mid.points, is_double ? 6 : 12);
    if (!is_double) {
      EXPECT_EQ(mid.grid, mid.tiles_interior + mid.tiles_boundary);
    }
    const gpu::MlpTiling small = gpu::plan_mlp_tiling(net, 300, 30, true);
    EXPECT_EQ(small.points, 3);
    EXPECT_EQ(small.grid, 110);
  }
  EXPECT_NE(gpu::plan_mlp_tiling(net, 300, 30, true).variant, gpu::kMlpPoint);
  EXPECT_NE(gpu::plan_mlp_tiling(net, 16384, 1024, false).variant, gpu::kMlpPoint);
  EXPECT_EQ(gpu::plan_mlp_tiling(net, 1200, 120, true, kPoint).variant, gpu::kMlpPoint);
  EXPECT_EQ(gpu::plan_mlp_tiling(net, 16384, 1024, true, kTiled).variant, gpu::kMlpTiled<T>);
  // Evaluation passes stay on the tiled kernel.
  EXPECT_EQ(gpu::plan_mlp_tiling(net, 16384, 0, false, kPoint).variant, gpu::kMlpTiled<T>);
}

}  // namespace
}  // namespace rbfpde
