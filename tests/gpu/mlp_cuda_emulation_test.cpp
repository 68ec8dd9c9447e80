// The CUDA MLP pass kernel's block code (kernels/cuda/mlp/mlp_pass_block.cuh), run on the host by
// emulate_mlp_pass as blocks of one thread, against the CPU backend: the tile layouts, the three
// forward streams, the backward pass and the per-block partial gradients, with no device
// needed (these run wherever the CUDA build does, CI included). Tiles of 3 and 8 points (201 and
// 53 points are multiples of neither; 16 for the tensor-core kernel's two-n-tile items), 2, 3 and
// 5 blocks, both block codes (float's 2 × 4 SIMT micro-tiles and double's tensor-core
// fragments, emulated lane by lane), both run in double; 2D and 3D; every activation; 1e-12
// norm-wise (the same formulas, other summation orders).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "../mlp/mlp_test_util.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using gpu_test::relative_difference;

TEST(CudaMlpEmulatedPass, MatchesTheCpuBackend) {
  for (int dim : {2, 3}) {
    for (const char* act : {"tanh", "sin", "sigmoid"}) {
      for (auto [points, grid, variant] :
           {std::tuple{3, 5, gpu::kMlpTiledFloat}, std::tuple{8, 2, gpu::kMlpTiledFloat},
            std::tuple{3, 5, gpu::kMlpTiledDouble}, std::tuple{8, 2, gpu::kMlpTiledDouble},
            std::tuple{16, 3, gpu::kMlpTiledDouble}}) {
        SCOPED_TRACE(std::string(act) + " " + std::to_string(dim) + "D, tiles of " +
                     std::to_string(points) + ", " + std::to_string(grid) + " blocks, variant " +
                     std::to_string(variant));
        MlpShape shape;
        shape.dim = dim;
        shape.hidden = {37, 50, 29};
        shape.activation = act;
        const MlpOptions opt = mlp_options(shape, 7.0);
        const std::vector<double> theta = random_mlp_parameters(shape, 3 + dim);
        const CollocationBatch batch = random_batch(dim, 201, 53, 17);

        auto cpu = make_cpu_mlp_backend<double>(opt);
        cpu->set_parameters(theta);
        cpu->set_batch(batch);
        const LossParts l_cpu = cpu->loss_and_gradient();
        std::vector<double> g_cpu, e_cpu, b_cpu;
        cpu->gradient(g_cpu);
        cpu->residual_vectors(e_cpu, b_cpu);

        const gpu::MlpNetView<double> net = gpu::make_mlp_net_view<double>(opt);
        ASSERT_EQ(std::size_t(net.n_params), theta.size());
        const int n_int = 201, n_bnd = 53;
        const gpu::MlpTiling tiling =
            gpu::emulated_mlp_tiling(net, n_int, n_bnd, true, points, grid, variant);
        std::vector<double> e(n_int), b(n_bnd), partials(std::size_t(grid) * theta.size()),
            losses(3);
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
        a.e = e.data();
        a.b = b.data();
        a.partials = partials.data();
        a.losses = losses.data();
        gpu::emulate_mlp_pass(net, tiling, a);
        std::vector<double> g(theta.size(), 0.0);
        for (int blk = 0; blk < grid; ++blk)
          for (std::size_t k = 0; k < g.size(); ++k) g[k] += partials[blk * g.size() + k];
        EXPECT_LE(relative_difference(losses[0], l_cpu.loss), 1e-12);
        EXPECT_LE(relative_difference(e, e_cpu), 1e-12);
        EXPECT_LE(relative_difference(b, b_cpu), 1e-12);
        EXPECT_LE(relative_difference(g, g_cpu), 1e-12);

        // Evaluation mode: u, ∇u, Δu.
        const CollocationBatch pts = random_batch(dim, 157, 0, 99);
        std::vector<double> u_cpu, lap_cpu, grad_cpu;
        cpu->evaluate(pts.interior, u_cpu, lap_cpu);
        cpu->evaluate_gradient(pts.interior, grad_cpu);
        std::vector<double> u(157), grad(157 * dim), lap(157);
        gpu::MlpPassArgs<double> ev;
        ev.theta = theta.data();
        ev.x_int = pts.interior.data();
        ev.n_int = 157;
        ev.out_u = u.data();
        ev.out_grad = grad.data();
        ev.out_lap = lap.data();
        gpu::emulate_mlp_pass(
            net, gpu::emulated_mlp_tiling(net, 157, 0, false, points, grid, variant), ev);
        EXPECT_LE(relative_difference(u, u_cpu), 1e-12);
        EXPECT_LE(relative_difference(grad, grad_cpu), 1e-12);
        EXPECT_LE(relative_difference(lap, lap_cpu), 1e-12);
      }
    }
  }
}

}  // namespace
}  // namespace rbfpde
