// Every CUDA backend operation on general rows (a·Δₛu + b·∇u + c·u = f inside, α·u + β·∂u/∂n = p
// on the boundary: non-constant a, b, c; Dirichlet, Neumann and Robin rows mixed) against the CPU
// reference, in double, on random batches whose sizes are not multiples of the kernels' block
// sizes: 2D, 3D, and 3D with Δ over the first two coordinates. Tolerances as the Poisson parity
// tests (cuda_backend_parity_test.cpp, cuda_varpro_parity_test.cpp): 1e-12 where both evaluate
// the same formulas (rbf_math.hpp) in another order; the solves as stated at each.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/gpu/general_rows_support.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

constexpr double kTol = 1e-12;

struct Pair {
  std::unique_ptr<RbfBackend<double>> cpu, gpu;
  CollocationBatch batch;
  RbfParameters<double> params;
  Pair(const GeneralCase& c, unsigned seed = 1) {
    BackendOptions options;
    options.dim = c.dim;
    options.penalty = 100.0;
    options.min_width = 0.05;
    options.laplacian_dims = c.space_dim;
    cpu = make_cpu_backend<double>(options);
    gpu = make_cuda_backend<double>(options);
    batch = general_batch(c.dim, c.space_dim, kInterior, kBoundary, seed * 7 + unsigned(c.m));
    params = random_parameters<double>(c.dim, c.m, seed * 11 + unsigned(c.m));
    for (auto* be : {cpu.get(), gpu.get()}) {
      be->set_batch(batch);
      be->set_parameters(params);
    }
  }
  void expect_same_parameters(double tol) const {
    EXPECT_LE(relative_difference(flatten(gpu->parameters()), flatten(cpu->parameters())), tol);
  }
  void expect_same_residual_vectors(double tol) const {
    std::vector<double> e_cpu, b_cpu, e_gpu, b_gpu;
    cpu->residual_vectors(e_cpu, b_cpu);
    gpu->residual_vectors(e_gpu, b_gpu);
    EXPECT_LE(relative_difference(e_gpu, e_cpu), tol) << "interior residuals";
    EXPECT_LE(relative_difference(b_gpu, b_cpu), tol) << "boundary residuals";
  }
};

void expect_same_loss(const LossParts& gpu, const LossParts& cpu, double tol) {
  EXPECT_LE(relative_difference(gpu.loss, cpu.loss), tol) << gpu.loss << " vs " << cpu.loss;
  EXPECT_LE(relative_difference(gpu.rms_interior, cpu.rms_interior), tol);
  EXPECT_LE(relative_difference(gpu.rms_boundary, cpu.rms_boundary), tol);
}

template <class F>
void for_each_case(F&& check) {
  for (const GeneralCase& c : kGeneralCases) {
    SCOPED_TRACE(testing::Message()
                 << "dim " << c.dim << ", space_dim " << c.space_dim << ", m " << c.m);
    check(c);
  }
}

TEST(CudaGeneralParity, Residuals) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    expect_same_loss(pair.gpu->residuals(), pair.cpu->residuals(), kTol);
    pair.expect_same_residual_vectors(kTol);
  });
}

TEST(CudaGeneralParity, Gradient) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    RbfParameters<double> g_cpu, g_gpu;
    expect_same_loss(pair.gpu->gradient(g_gpu), pair.cpu->gradient(g_cpu), kTol);
    EXPECT_LE(relative_difference(g_gpu.weights, g_cpu.weights), kTol) << "∂I/∂w";
    EXPECT_LE(relative_difference(g_gpu.centres, g_cpu.centres), kTol) << "∂I/∂c";
    EXPECT_LE(relative_difference(g_gpu.widths, g_cpu.widths), kTol) << "∂I/∂a";
  });
}

TEST(CudaGeneralParity, GdSteps) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    expect_same_loss(pair.gpu->gd_steps(3, 1e-3), pair.cpu->gd_steps(3, 1e-3), kTol);
    pair.expect_same_parameters(kTol);
  });
}

// Four CG iterations (before ill-conditioning amplifies rounding): weights to the full tolerance.
TEST(CudaGeneralParity, CgFewIterations) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    const CgResult r_cpu = pair.cpu->solve_weights_cg(4, 0.0);
    const CgResult r_gpu = pair.gpu->solve_weights_cg(4, 0.0);
    EXPECT_EQ(r_gpu.iterations, r_cpu.iterations);
    EXPECT_LE(relative_difference(r_gpu.relative_residual, r_cpu.relative_residual), 10 * kTol);
    EXPECT_LE(relative_difference(pair.gpu->parameters().weights, pair.cpu->parameters().weights),
              kTol);
    pair.expect_same_residual_vectors(kTol);
  });
}

// 50 iterations: only what holds regardless of the chaotic amplification of rounding.
TEST(CudaGeneralParity, CgFiftyIterations) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    const double before = pair.cpu->residuals().loss;
    const CgResult r_cpu = pair.cpu->solve_weights_cg(50, 1e-14);
    const CgResult r_gpu = pair.gpu->solve_weights_cg(50, 1e-14);
    EXPECT_EQ(r_gpu.iterations, r_cpu.iterations);
    const double loss_gpu = pair.gpu->residuals().loss, loss_cpu = pair.cpu->residuals().loss;
    EXPECT_LT(loss_gpu, before);
    EXPECT_LE(relative_difference(loss_gpu, loss_cpu), 1e-2);
  });
}

// Direct solve with ridge 1e-2: weights to κ·ε, losses to 1e-12.
TEST(CudaGeneralParity, DirectSolve) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    pair.cpu->solve_weights_direct(1e-2);
    pair.gpu->solve_weights_direct(1e-2);
    EXPECT_LE(relative_difference(pair.gpu->parameters().weights, pair.cpu->parameters().weights),
              1e-10);
    EXPECT_LE(relative_difference(pair.gpu->residuals().loss, pair.cpu->residuals().loss), 1e-12);
  });
}

TEST(CudaGeneralParity, LevenbergMarquardt) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    expect_same_loss(pair.gpu->lm_prepare(), pair.cpu->lm_prepare(), kTol);
    std::vector<double> jtj_cpu, jtr_cpu, jtj_gpu, jtr_gpu;
    pair.cpu->lm_system(jtj_cpu, jtr_cpu);
    pair.gpu->lm_system(jtj_gpu, jtr_gpu);
    EXPECT_LE(relative_difference(jtr_gpu, jtr_cpu), 1e-11) << "JᵀR";
    EXPECT_LE(relative_difference(jtj_gpu, jtj_cpu), 1e-11) << "JᵀJ";
    expect_same_loss(pair.gpu->lm_try(1.0), pair.cpu->lm_try(1.0), 10 * kTol);
    pair.expect_same_parameters(kTol);
    pair.cpu->lm_reject();
    pair.gpu->lm_reject();
    EXPECT_EQ(flatten(pair.gpu->parameters()), flatten(pair.params));
    expect_same_loss(pair.gpu->residuals(), pair.cpu->residuals(), kTol);
  });
}

// QR weights and the projected system (as cuda_varpro_parity_test.cpp): losses to 1e-8, the
// system to 1e-5, a strongly damped step's parameters to 1e-9.
TEST(CudaGeneralParity, VariableProjection) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    pair.cpu->solve_weights_qr();
    pair.gpu->solve_weights_qr();
    EXPECT_LE(relative_difference(pair.gpu->residuals().loss, pair.cpu->residuals().loss), 1e-8);
    pair.expect_same_residual_vectors(1e-6);
    const LossParts p_cpu = pair.cpu->vp_prepare(), p_gpu = pair.gpu->vp_prepare();
    EXPECT_LE(relative_difference(p_gpu.loss, p_cpu.loss), 1e-8);
    std::vector<double> jtj_cpu, jtr_cpu, jtj_gpu, jtr_gpu;
    pair.cpu->lm_system(jtj_cpu, jtr_cpu);
    pair.gpu->lm_system(jtj_gpu, jtr_gpu);
    ASSERT_EQ(jtr_cpu.size(), std::size_t(c.m * (c.dim + 1)));
    EXPECT_LE(relative_difference(jtr_gpu, jtr_cpu), 1e-5) << "JᵀR";
    EXPECT_LE(relative_difference(jtj_gpu, jtj_cpu), 1e-5) << "JᵀJ";
    const LossParts s_cpu = pair.cpu->vp_try(1e3), s_gpu = pair.gpu->vp_try(1e3);
    EXPECT_LE(relative_difference(s_gpu.loss, s_cpu.loss), 1e-8);
    const RbfParameters<double> q_cpu = pair.cpu->parameters(), q_gpu = pair.gpu->parameters();
    EXPECT_LE(relative_difference(q_gpu.centres, q_cpu.centres), 1e-9) << "centres";
    EXPECT_LE(relative_difference(q_gpu.widths, q_cpu.widths), 1e-9) << "widths";
  });
}

TEST(CudaGeneralParity, EvaluateAndGradient) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(-0.2, 1.2);
    std::vector<double> points(301 * c.dim);
    for (double& v : points) v = u(rng);
    std::vector<double> u_cpu, l_cpu, u_gpu, l_gpu, g_cpu, g_gpu;
    pair.cpu->evaluate(points, u_cpu, l_cpu);
    pair.gpu->evaluate(points, u_gpu, l_gpu);
    EXPECT_LE(relative_difference(u_gpu, u_cpu), kTol);
    EXPECT_LE(relative_difference(l_gpu, l_cpu), kTol) << "Δₛu";
    pair.cpu->evaluate_gradient(points, g_cpu);
    pair.gpu->evaluate_gradient(points, g_gpu);
    EXPECT_LE(relative_difference(g_gpu, g_cpu), kTol) << "∇u";
  });
}

// The fused cycle (one CUDA graph) against the CPU's default cycle on the same host batch.
TEST(CudaGeneralParity, FusedCycle) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Pair pair(c);
    RbfBackend<double>::GdcgCycle cycle;
    cycle.gd_steps = 2;
    cycle.learning_rate = 1e-3;
    cycle.cg_iterations = 4;
    cycle.cg_tolerance = 0.0;
    for (int i = 0; i < 2; ++i)  // the second replays the captured graph
      expect_same_loss(pair.gpu->gdcg_cycle(cycle), pair.cpu->gdcg_cycle(cycle), 1e-11);
    pair.expect_same_parameters(1e-11);
  });
}

}  // namespace
}  // namespace rbfpde
