// Every CUDA backend operation against the CPU reference on random inputs whose sizes are not
// multiples of the kernels' block sizes (m = 37, 64, 129; N = 201, K = 53; 2D and 3D).
// Differences are norm-wise, ‖gpu − cpu‖ / ‖cpu‖. Tolerances:
// - double 1e-12: the two backends evaluate the same formulas (rbf_math.hpp) and differ only in
//   summation order, FMA contraction and exp's last bit;
// - float 1e-5: measured CPU-float vs CPU-double differences on these inputs are ≤ 3e-7 for
//   residuals, gradients, GD, 4 CG iterations and LM steps;
// - solves: see each test. The Gaussian normal equations here have κ(A) ≳ 1e12, so a rounding
//   difference of A (the GPU forms A = MᵀM/N + λNᵀN/K by SYRK, the CPU applies Mᵀ(M v)) is
//   amplified: measured with a 1e-16 relative perturbation of A in double, CG weights agree to
//   1e-15 after 5 iterations but only to 1e-3 after 20, and LDLT-vs-Cholesky weights agree to
//   ≈ κ·ε while the losses agree to 1e-14.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

template <class T>
struct Tolerance;
template <>
struct Tolerance<double> {
  static constexpr double value = 1e-12;
  // A direct solve with ridge 1e-2: the weights agree to κ(A + ridge)·ε ≈ 1e-11 (measured ≤ 5e-12),
  // the losses to 1e-14.
  static constexpr double direct_weights = 1e-10;
  static constexpr double direct_loss = 1e-12;
};
template <>
struct Tolerance<float> {
  static constexpr double value = 1e-5;
  // In float the ridge-1e-2 system still has κ·ε ≈ 1e-3: CPU-float weights differ from
  // CPU-double by 3e-3 and its loss by 2e-5 (measured), so only the loss is compared.
  static constexpr double direct_weights = INFINITY;
  static constexpr double direct_loss = 2e-4;
};

template <class T>
struct BackendPair {
  std::unique_ptr<RbfBackend<T>> cpu, gpu;
  RbfParameters<T> params;
  CollocationBatch batch;

  BackendPair(int dim, int m, double penalty = 100.0, unsigned seed = 1) {
    BackendOptions options;
    options.dim = dim;
    options.penalty = penalty;
    cpu = make_cpu_backend<T>(options);
    gpu = make_cuda_backend<T>(options);
    batch = random_batch(dim, kInterior, kBoundary, seed * 7 + 3);
    params = random_parameters<T>(dim, m, seed * 11 + 5);
    for (auto* be : {cpu.get(), gpu.get()}) {
      be->set_batch(batch);
      be->set_parameters(params);
    }
  }

  void expect_same_parameters(double tol) const {
    EXPECT_LE(relative_difference(flatten(gpu->parameters()), flatten(cpu->parameters())), tol);
  }
  void expect_same_residual_vectors(double tol) const {
    std::vector<T> e_cpu, b_cpu, e_gpu, b_gpu;
    cpu->residual_vectors(e_cpu, b_cpu);
    gpu->residual_vectors(e_gpu, b_gpu);
    EXPECT_LE(relative_difference(e_gpu, e_cpu), tol) << "interior residuals";
    EXPECT_LE(relative_difference(b_gpu, b_cpu), tol) << "boundary residuals";
  }
};

void expect_same_loss(const LossParts& gpu, const LossParts& cpu, double tol) {
  EXPECT_LE(relative_difference(gpu.loss, cpu.loss), tol)
      << "loss " << gpu.loss << " vs " << cpu.loss;
  EXPECT_LE(relative_difference(gpu.rms_interior, cpu.rms_interior), tol);
  EXPECT_LE(relative_difference(gpu.rms_boundary, cpu.rms_boundary), tol);
}

template <class F>
void for_each_size(F&& check) {
  for (int dim : kDims)
    for (int m : kNeuronCounts) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      check(dim, m);
    }
}

template <class T>
void check_residuals() {
  const double tol = Tolerance<T>::value;
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    expect_same_loss(pair.gpu->residuals(), pair.cpu->residuals(), tol);
    pair.expect_same_residual_vectors(tol);
  });
}
TEST(CudaBackendParity, ResidualsDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_residuals<double>();
}
TEST(CudaBackendParity, ResidualsFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_residuals<float>();
}

template <class T>
void check_gradient() {
  const double tol = Tolerance<T>::value;
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m, 7.0);
    RbfParameters<T> g_cpu, g_gpu;
    const LossParts l_cpu = pair.cpu->gradient(g_cpu);
    const LossParts l_gpu = pair.gpu->gradient(g_gpu);
    expect_same_loss(l_gpu, l_cpu, tol);
    EXPECT_EQ(g_gpu.dim, dim);
    EXPECT_LE(relative_difference(g_gpu.weights, g_cpu.weights), tol) << "∂I/∂w";
    EXPECT_LE(relative_difference(g_gpu.centres, g_cpu.centres), tol) << "∂I/∂c";
    EXPECT_LE(relative_difference(g_gpu.widths, g_cpu.widths), tol) << "∂I/∂a";
  });
}
TEST(CudaBackendParity, GradientDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_gradient<double>();
}
TEST(CudaBackendParity, GradientFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_gradient<float>();
}

template <class T>
void check_gd_steps() {
  const double tol = Tolerance<T>::value;
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    const LossParts l_cpu = pair.cpu->gd_steps(3, T(1e-3));
    const LossParts l_gpu = pair.gpu->gd_steps(3, T(1e-3));
    expect_same_loss(l_gpu, l_cpu, tol);  // the loss before the last step
    pair.expect_same_parameters(tol);
    expect_same_loss(pair.gpu->residuals(), pair.cpu->residuals(), tol);
  });
}
TEST(CudaBackendParity, GdStepsDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_gd_steps<double>();
}
TEST(CudaBackendParity, GdStepsFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_gd_steps<float>();
}

// A learning rate so large that many widths fall below min_width: both clamp the same neurons
// to exactly min_width.
template <class T>
void check_gd_clamps_widths() {
  for (int m : kNeuronCounts) {
    SCOPED_TRACE(testing::Message() << "m " << m);
    const CollocationBatch batch = random_batch(2, kInterior, kBoundary, 5);
    const RbfParameters<T> params = random_parameters<T>(2, m, 9);
    // A step changes a width by at most a quarter (the GD step limit), so the clamp must sit
    // close to the widths for some to reach it: 0.9 × the largest.
    BackendOptions options;
    options.dim = 2;
    options.min_width = 0.9 * double(*std::max_element(params.widths.begin(), params.widths.end()));
    auto cpu = make_cpu_backend<T>(options);
    auto gpu = make_cuda_backend<T>(options);
    for (auto* be : {cpu.get(), gpu.get()}) {
      be->set_batch(batch);
      be->set_parameters(params);
      be->gd_steps(1, T(10));
    }
    const RbfParameters<T> p_cpu = cpu->parameters(), p_gpu = gpu->parameters();
    int clamped = 0;
    for (int k = 0; k < m; ++k) {
      const bool at_min = p_cpu.widths[k] == T(options.min_width);
      clamped += at_min;
      EXPECT_EQ(p_gpu.widths[k] == T(options.min_width), at_min) << "neuron " << k;
    }
    EXPECT_GT(clamped, 0) << "the test needs some clamped widths";
  }
}
TEST(CudaBackendParity, GdClampsWidthsDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_gd_clamps_widths<double>();
}
TEST(CudaBackendParity, GdClampsWidthsFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_gd_clamps_widths<float>();
}

// Four CG iterations (tol 0): before the ill-conditioning amplifies rounding differences, so the
// weights must agree to the full tolerance. m = 37, 64 take the single-block kernel, m = 129 the
// cuBLAS path.
template <class T>
void check_cg_few_iterations() {
  const double tol = Tolerance<T>::value;
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    const CgResult r_cpu = pair.cpu->solve_weights_cg(4, T(0));
    const CgResult r_gpu = pair.gpu->solve_weights_cg(4, T(0));
    EXPECT_EQ(r_gpu.iterations, r_cpu.iterations);
    EXPECT_EQ(r_gpu.iterations, 4);
    // |r| is a difference of nearly equal vectors: 10× the weights' tolerance.
    EXPECT_LE(relative_difference(r_gpu.relative_residual, r_cpu.relative_residual), 10 * tol);
    EXPECT_LE(relative_difference(pair.gpu->parameters().weights, pair.cpu->parameters().weights),
              tol);
    pair.expect_same_residual_vectors(tol);  // residuals at the new weights
  });
}
TEST(CudaBackendParity, CgFewIterationsDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_cg_few_iterations<double>();
}
TEST(CudaBackendParity, CgFewIterationsFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_cg_few_iterations<float>();
}

// 50 iterations: past ~10 iterations CG on these systems amplifies unit-roundoff differences
// chaotically (measured 1e-3 weight differences from a 1e-16 perturbation of A), so only what
// must hold regardless is compared: the iteration count, a loss that decreased to within 1% of
// the CPU's, and residuals that are those of the returned weights.
template <class T>
void check_cg_long() {
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    const double before = pair.cpu->residuals().loss;
    const CgResult r_cpu = pair.cpu->solve_weights_cg(50, T(1e-14));
    const CgResult r_gpu = pair.gpu->solve_weights_cg(50, T(1e-14));
    EXPECT_EQ(r_gpu.iterations, r_cpu.iterations);
    EXPECT_TRUE(std::isfinite(r_gpu.relative_residual));
    std::vector<T> e_after, b_after;
    pair.gpu->residual_vectors(e_after, b_after);
    const double loss_gpu = pair.gpu->residuals().loss;
    const double loss_cpu = pair.cpu->residuals().loss;
    EXPECT_LT(loss_gpu, before);
    // Float: the chaotic divergence starts from ε = 6e-8 instead of 1e-16, so 10%.
    EXPECT_LE(relative_difference(loss_gpu, loss_cpu), sizeof(T) == 8 ? 1e-2 : 1e-1);
    // The residuals left by the solve (F w − target by GEMV) are those of the fused pass.
    std::vector<T> e_fused, b_fused;
    pair.gpu->residual_vectors(e_fused, b_fused);
    EXPECT_LE(relative_difference(e_after, e_fused), 1e3 * Tolerance<T>::value);
    EXPECT_LE(relative_difference(b_after, b_fused), 1e3 * Tolerance<T>::value);
  });
}
TEST(CudaBackendParity, CgFiftyIterationsDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_cg_long<double>();
}
TEST(CudaBackendParity, CgFiftyIterationsFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_cg_long<float>();
}

template <class T>
void check_direct() {
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    pair.cpu->solve_weights_direct(T(1e-2));
    pair.gpu->solve_weights_direct(T(1e-2));
    if (std::isfinite(Tolerance<T>::direct_weights)) {
      EXPECT_LE(relative_difference(pair.gpu->parameters().weights, pair.cpu->parameters().weights),
                Tolerance<T>::direct_weights);
    }
    std::vector<T> e, b;
    pair.gpu->residual_vectors(e, b);
    const double loss_cpu = pair.cpu->residuals().loss;
    const double loss_gpu = pair.gpu->residuals().loss;
    EXPECT_LE(relative_difference(loss_gpu, loss_cpu), Tolerance<T>::direct_loss);
    // The least-squares weights beat the random ones by far.
    EXPECT_LT(loss_gpu, 0.5 * BackendPair<T>(dim, m).gpu->residuals().loss);
  });
}
TEST(CudaBackendParity, DirectSolveDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_direct<double>();
}
TEST(CudaBackendParity, DirectSolveFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_direct<float>();
}

// LM with μ = 1: the Marquardt-scaled system has κ ≤ (m(d+2) + μ)/μ ≈ 650, so the step agrees
// to ≈ κ·ε and the parameters (θ0 + δ) to the full tolerance.
template <class T>
void check_lm() {
  const double tol = Tolerance<T>::value;
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    expect_same_loss(pair.gpu->lm_prepare(), pair.cpu->lm_prepare(), tol);
    const LossParts t_cpu = pair.cpu->lm_try(T(1));
    const LossParts t_gpu = pair.gpu->lm_try(T(1));
    expect_same_loss(t_gpu, t_cpu, 10 * tol);
    EXPECT_NEAR(pair.gpu->lm_predicted_decrease(), pair.cpu->lm_predicted_decrease(),
                100 * tol * std::abs(pair.cpu->lm_predicted_decrease()))
        << "predicted decrease";
    pair.expect_same_parameters(tol);
    pair.expect_same_residual_vectors(10 * tol);
    // A second try from the same θ0 with another μ.
    const LossParts u_cpu = pair.cpu->lm_try(T(10));
    const LossParts u_gpu = pair.gpu->lm_try(T(10));
    expect_same_loss(u_gpu, u_cpu, 10 * tol);
    pair.expect_same_parameters(tol);
    // Reject: back to θ0 exactly, with its residuals.
    pair.cpu->lm_reject();
    pair.gpu->lm_reject();
    EXPECT_EQ(flatten(pair.gpu->parameters()), flatten(pair.params));
    pair.expect_same_residual_vectors(tol);
    expect_same_loss(pair.gpu->residuals(), pair.cpu->residuals(), tol);
  });
}
TEST(CudaBackendParity, LevenbergMarquardtDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_lm<double>();
}
TEST(CudaBackendParity, LevenbergMarquardtFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_lm<float>();
}

template <class T>
void check_evaluate() {
  const double tol = Tolerance<T>::value;
  for_each_size([&](int dim, int m) {
    BackendPair<T> pair(dim, m);
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(-0.2, 1.2);
    std::vector<double> points(301 * dim);
    for (double& v : points) v = u(rng);
    std::vector<double> u_cpu, l_cpu, u_gpu, l_gpu;
    pair.cpu->evaluate(points, u_cpu, l_cpu);
    pair.gpu->evaluate(points, u_gpu, l_gpu);
    EXPECT_LE(relative_difference(u_gpu, u_cpu), tol);
    EXPECT_LE(relative_difference(l_gpu, l_cpu), tol);
  });
}
TEST(CudaBackendParity, EvaluateDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_evaluate<double>();
}
TEST(CudaBackendParity, EvaluateFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_evaluate<float>();
}

}  // namespace
}  // namespace rbfpde
