// The CUDA MLP's general rows (docs/mathematics.md, "The MLP": e = a·Δₛu + b·∇u + c·u − f,
// r = α·u + β·∇u·n − p) against the CPU backend, whose rows are checked against finite
// differences in tests/mlp/test_mlp_general_rows.cpp.
// - CudaMlpGeneralEmulated: the tiled kernel's block code run on the host (emulate_mlp_pass; no
//   device needed): both block codes in double, tiles of 3, 8 and 16 points, 2D with the
//   Laplacian over both coordinates and over the first, 3D over the first two; boundary tiles with
//   and without flux points (value stream alone, or all streams), and the Σe², Σb² a run over
//   ranks sums (MlpPassArgs::sums); 1e-12 norm-wise.
// - CudaMlpGeneralRows (device; skipped without one): the backend's loss, gradient, residuals and
//   Δₛ evaluation, Adam through train_steps' graph, the switch between general and
//   Poisson/Dirichlet batches of one size (the graphs hold the pass's arguments), a batch large
//   enough for the point kernel (general rows run on the tiled one), and the refusals.
//   Against the CPU backend of the same precision: double 1e-12, float 1e-5 norm-wise.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../mlp/mlp_general_batch.hpp"
#include "../mlp/mlp_test_util.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "solver/config/config.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using gpu_test::relative_difference;

MlpOptions general_options(const MlpShape& shape, int space_dim) {
  MlpOptions o = mlp_options(shape, 7.0);
  o.laplacian_dims = space_dim;
  return o;
}

TEST(CudaMlpGeneralEmulated, MatchesTheCpuBackend) {
  // (dim, space_dim)
  for (auto [dim, space_dim] : {std::pair{2, 2}, std::pair{2, 1}, std::pair{3, 2}}) {
    for (const char* act : {"tanh", "sin", "sigmoid"}) {
      for (auto [points, grid, variant] :
           {std::tuple{3, 5, gpu::kMlpTiledFloat}, std::tuple{8, 2, gpu::kMlpTiledDouble},
            std::tuple{16, 3, gpu::kMlpTiledDouble}}) {
        SCOPED_TRACE(std::string(act) + " " + std::to_string(dim) + "D, Laplacian over " +
                     std::to_string(space_dim) + ", tiles of " + std::to_string(points) + ", " +
                     std::to_string(grid) + " blocks, variant " + std::to_string(variant));
        MlpShape shape;
        shape.dim = dim;
        shape.hidden = {37, 29};
        shape.activation = act;
        const MlpOptions opt = general_options(shape, space_dim);
        const std::vector<double> theta = random_mlp_parameters(shape, 3 + dim);
        // 150 boundary points: flux points among the first 96 only, so that later tiles carry
        // the value stream alone.
        const int n_int = 101, n_bnd = 150;
        const CollocationBatch batch = random_general_batch(dim, space_dim, n_int, n_bnd, 17);

        auto cpu = make_cpu_mlp_backend<double>(opt);
        cpu->set_parameters(theta);
        cpu->set_batch(batch);
        const LossParts l_cpu = cpu->loss_and_gradient();
        std::vector<double> g_cpu, e_cpu, b_cpu;
        cpu->gradient(g_cpu);
        cpu->residual_vectors(e_cpu, b_cpu);

        const gpu::MlpNetView<double> net = gpu::make_mlp_net_view<double>(opt);
        ASSERT_EQ(net.lap_dims, space_dim);
        const gpu::MlpTiling tiling =
            gpu::emulated_mlp_tiling(net, n_int, n_bnd, true, points, grid, variant);
        std::vector<double> e(n_int), b(n_bnd), partials(std::size_t(grid) * theta.size()),
            losses(3), sums(2, -1.0);
        gpu::MlpPassArgs<double> a;
        a.theta = theta.data();
        a.x_int = batch.interior.data();
        a.f = batch.f.data();
        a.n_int = n_int;
        a.x_bnd = batch.boundary.data();
        a.p = batch.p.data();
        a.n_bnd = n_bnd;
        a.inv_n = 1.0 / n_int;
        a.lam_k = 7.0 / n_bnd;
        a.penalty = 7.0;
        a.general = true;
        a.coef_a = batch.a.data();
        a.coef_b = batch.b.data();
        a.coef_c = batch.c.data();
        a.coef_alpha = batch.alpha.data();
        a.coef_beta = batch.beta.data();
        a.normals = batch.normals.data();
        a.e = e.data();
        a.b = b.data();
        a.partials = partials.data();
        a.losses = losses.data();
        a.sums = sums.data();
        gpu::emulate_mlp_pass(net, tiling, a);
        std::vector<double> g(theta.size(), 0.0);
        for (int blk = 0; blk < grid; ++blk)
          for (std::size_t k = 0; k < g.size(); ++k) g[k] += partials[blk * g.size() + k];
        EXPECT_GT(l_cpu.loss, 0.0);
        EXPECT_LE(relative_difference(losses[0], l_cpu.loss), 1e-12);
        EXPECT_LE(relative_difference(e, e_cpu), 1e-12);
        EXPECT_LE(relative_difference(b, b_cpu), 1e-12);
        EXPECT_LE(relative_difference(g, g_cpu), 1e-12);
        // Σe² and Σb², the sums a run over ranks adds up.
        double se = 0, sb = 0;
        for (double v : e_cpu) se += v * v;
        for (double v : b_cpu) sb += v * v;
        EXPECT_LE(relative_difference(sums[0], se), 1e-12);
        EXPECT_LE(relative_difference(sums[1], sb), 1e-12);

        // Evaluation: u, ∇u, Δₛu.
        const CollocationBatch pts = random_batch(dim, 57, 0, 99);
        std::vector<double> u_cpu, lap_cpu, grad_cpu;
        cpu->evaluate(pts.interior, u_cpu, lap_cpu);
        cpu->evaluate_gradient(pts.interior, grad_cpu);
        std::vector<double> u(57), grad(57 * dim), lap(57);
        gpu::MlpPassArgs<double> ev;
        ev.theta = theta.data();
        ev.x_int = pts.interior.data();
        ev.n_int = 57;
        ev.out_u = u.data();
        ev.out_grad = grad.data();
        ev.out_lap = lap.data();
        gpu::emulate_mlp_pass(
            net, gpu::emulated_mlp_tiling(net, 57, 0, false, points, grid, variant), ev);
        EXPECT_LE(relative_difference(u, u_cpu), 1e-12);
        EXPECT_LE(relative_difference(grad, grad_cpu), 1e-12);
        EXPECT_LE(relative_difference(lap, lap_cpu), 1e-12);
      }
    }
  }
}

template <class T>
constexpr double tolerance() {
  return sizeof(T) == sizeof(double) ? 1e-12 : 1e-5;
}

template <class T>
std::vector<T> cast(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// The same network and batch on the CPU backend and the CUDA one, both in T; loss, gradient and
// residuals compared.
template <class T>
void expect_pass_parity(MlpBackend<T>& cpu, MlpBackend<T>& gpu) {
  const double tol = tolerance<T>();
  const LossParts r_cpu = cpu.residuals(), r_gpu = gpu.residuals();
  EXPECT_LE(relative_difference(r_gpu.loss, r_cpu.loss), tol);
  const LossParts l_cpu = cpu.loss_and_gradient(), l_gpu = gpu.loss_and_gradient();
  EXPECT_GT(l_cpu.loss, 0.0);
  EXPECT_LE(relative_difference(l_gpu.loss, l_cpu.loss), tol);
  EXPECT_LE(relative_difference(l_gpu.rms_interior, l_cpu.rms_interior), tol);
  EXPECT_LE(relative_difference(l_gpu.rms_boundary, l_cpu.rms_boundary), tol);
  std::vector<T> g_cpu, g_gpu, e_cpu, b_cpu, e_gpu, b_gpu;
  cpu.gradient(g_cpu);
  gpu.gradient(g_gpu);
  EXPECT_LE(relative_difference(g_gpu, g_cpu), tol);
  cpu.residual_vectors(e_cpu, b_cpu);
  gpu.residual_vectors(e_gpu, b_gpu);
  EXPECT_LE(relative_difference(e_gpu, e_cpu), tol);
  EXPECT_LE(relative_difference(b_gpu, b_cpu), tol);
}

template <class T>
class CudaMlpGeneralRows : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(CudaMlpGeneralRows, Precisions);

TYPED_TEST(CudaMlpGeneralRows, LossGradientResidualsAndEvaluation) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (auto [dim, space_dim] : {std::pair{2, 2}, std::pair{2, 1}, std::pair{3, 2}}) {
    for (const char* act : {"tanh", "sin"}) {
      SCOPED_TRACE(std::string(act) + " " + std::to_string(dim) + "D over " +
                   std::to_string(space_dim));
      MlpShape shape;
      shape.dim = dim;
      shape.hidden = {37, 50, 29};
      shape.activation = act;
      const MlpOptions opt = general_options(shape, space_dim);
      auto cpu = make_cpu_mlp_backend<T>(opt);
      auto gpu = gpu::make_cuda_mlp_backend<T>(opt, gpu::MlpTuning{});
      const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 11 + dim));
      cpu->set_parameters(theta);
      gpu->set_parameters(theta);
      const CollocationBatch batch = random_general_batch(dim, space_dim, 201, 153, 5);
      cpu->set_batch(batch);
      gpu->set_batch(batch);
      expect_pass_parity<T>(*cpu, *gpu);

      const CollocationBatch pts = random_batch(dim, 157, 0, 99);
      std::vector<double> u_cpu, lap_cpu, u_gpu, lap_gpu, grad_cpu, grad_gpu;
      cpu->evaluate(pts.interior, u_cpu, lap_cpu);
      gpu->evaluate(pts.interior, u_gpu, lap_gpu);
      EXPECT_LE(relative_difference(u_gpu, u_cpu), tolerance<T>());
      EXPECT_LE(relative_difference(lap_gpu, lap_cpu), tolerance<T>());
      cpu->evaluate_gradient(pts.interior, grad_cpu);
      gpu->evaluate_gradient(pts.interior, grad_gpu);
      EXPECT_LE(relative_difference(grad_gpu, grad_cpu), tolerance<T>());
    }
  }
}

// Adam through one graph, then a Poisson/Dirichlet batch of the same sizes and a general one
// again: each chunk's graph runs the rows of the batch it was given.
TYPED_TEST(CudaMlpGeneralRows, TrainStepsAcrossBatchKinds) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  shape.dim = 3;
  shape.hidden = {37, 29};
  const MlpOptions opt = mlp_options(shape, 7.0);
  auto cpu = make_cpu_mlp_backend<T>(opt);
  auto gpu = gpu::make_cuda_mlp_backend<T>(opt, gpu::MlpTuning{});
  const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 3));
  cpu->set_parameters(theta);
  gpu->set_parameters(theta);
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps;
  for (long t = 1; t <= 5; ++t) steps.push_back({T(1e-3 * std::pow(0.9, double(t))), t});
  const CollocationBatch general = random_general_batch(3, 3, 201, 53, 4);
  const CollocationBatch plain = random_batch(3, 201, 53, 6);
  for (const CollocationBatch* batch : {&general, &plain, &general}) {
    cpu->set_batch(*batch);
    gpu->set_batch(*batch);
    std::vector<LossParts> l_cpu, l_gpu;
    cpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_cpu);
    gpu->train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_gpu);
    ASSERT_EQ(l_gpu.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i)
      EXPECT_LE(relative_difference(l_gpu[i].loss, l_cpu[i].loss), tolerance<T>()) << i;
    EXPECT_LE(relative_difference(gpu->parameters(), cpu->parameters()), tolerance<T>());
  }
  EXPECT_GT(relative_difference(gpu->parameters(), theta), 1e-5);  // it moved
}

// A 2D batch the planner gives the point kernel when its rows are Poisson/Dirichlet runs its
// general rows on the tiled kernel; forcing the point kernel on them is refused.
TYPED_TEST(CudaMlpGeneralRows, LargeBatchesRunOnTheTiledKernel) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;  // 2-50-50-50-50-1
  const MlpOptions opt = mlp_options(shape, 7.0);
  ASSERT_EQ(gpu::plan_mlp_tiling(gpu::make_mlp_net_view<T>(opt), 16384, 1024, true).variant,
            gpu::kMlpPoint);
  auto cpu = make_cpu_mlp_backend<T>(opt);
  auto gpu = gpu::make_cuda_mlp_backend<T>(opt, gpu::MlpTuning{});
  const std::vector<T> theta = cast<T>(random_mlp_parameters(shape, 8));
  cpu->set_parameters(theta);
  gpu->set_parameters(theta);
  const CollocationBatch batch = random_general_batch(2, 2, 16384, 1024, 9);
  cpu->set_batch(batch);
  gpu->set_batch(batch);
  expect_pass_parity<T>(*cpu, *gpu);

  gpu::MlpTuning point;
  point.kernel = gpu::MlpTuning::Kernel::kPoint;
  auto forced = gpu::make_cuda_mlp_backend<T>(opt, point);
  forced->set_parameters(theta);
  EXPECT_THROW(forced->set_batch(batch), std::invalid_argument);
  EXPECT_NO_THROW(forced->set_batch(random_batch(2, 16384, 1024, 9)));
}

TYPED_TEST(CudaMlpGeneralRows, RefusesWhatItCannotRun) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  shape.hidden = {8, 8};
  auto gpu = gpu::make_cuda_mlp_backend<T>(general_options(shape, 1), gpu::MlpTuning{});
  CollocationBatch batch = random_general_batch(2, 1, 20, 10, 1);
  EXPECT_NO_THROW(gpu->set_batch(batch));
  batch.space_dim = 0;  // the Laplacian over both coordinates: not the backend's
  EXPECT_THROW(gpu->set_batch(batch), std::invalid_argument);
  batch = random_general_batch(2, 1, 20, 10, 1);
  batch.c.pop_back();
  EXPECT_THROW(gpu->set_batch(batch), std::invalid_argument);
  // The device sampler draws Poisson/Dirichlet rows only: with a Laplacian over one of two
  // coordinates, the batches are drawn on the host.
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed_mlp.yaml", {});
  const Problem problem = Problem::build(config.problem);
  EXPECT_THROW(gpu->set_problem(problem), std::runtime_error);
  EXPECT_FALSE(gpu->draws_batches());
}

}  // namespace
}  // namespace rbfpde
