// Variable projection on the CUDA backend against the CPU reference, on random inputs whose sizes
// are not multiples of the kernels' block sizes (m = 37, 64, 129; N = 201, K = 53; 2D and 3D):
// the QR least-squares weights, the projected system (JᵀJ = BᵀB, JᵀR = Bᵀz) and one projected
// step. Both backends factor the same matrices by Householder QR (Eigen on the CPU, cuSOLVER's
// geqrf on the GPU: different blockings, so rounding differs at ε·cond(F)); the losses, which
// are backward stable, agree to 1e-8 (measured ≤ 1.4e-9 at m = 129 in 2D, where 129 Gaussians on
// 254 points are nearly rank-deficient), the projected system to 1e-5 (measured ≤ 1.6e-6).
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

struct Pair {
  std::unique_ptr<RbfBackend<double>> cpu, gpu;
  Pair(int dim, int m) {
    BackendOptions options;
    options.dim = dim;
    options.penalty = 100.0;
    options.min_width = 0.05;
    cpu = make_cpu_backend<double>(options);
    gpu = make_cuda_backend<double>(options);
    const CollocationBatch batch = random_batch(dim, kInterior, kBoundary, unsigned(7 * m + dim));
    const RbfParameters<double> params = random_parameters<double>(dim, m, unsigned(11 * m + dim));
    for (auto* be : {cpu.get(), gpu.get()}) {
      be->set_batch(batch);
      be->set_parameters(params);
    }
  }
};

TEST(CudaVarproParity, QrWeightsAndLoss) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims)
    for (int m : kNeuronCounts) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      Pair pair(dim, m);
      pair.cpu->solve_weights_qr();
      pair.gpu->solve_weights_qr();
      const LossParts l_cpu = pair.cpu->residuals(), l_gpu = pair.gpu->residuals();
      EXPECT_LE(relative_difference(l_gpu.loss, l_cpu.loss), 1e-8);
      std::vector<double> e_cpu, b_cpu, e_gpu, b_gpu;
      pair.cpu->residual_vectors(e_cpu, b_cpu);
      pair.gpu->residual_vectors(e_gpu, b_gpu);
      EXPECT_LE(relative_difference(e_gpu, e_cpu), 1e-6) << "interior residuals";
      EXPECT_LE(relative_difference(b_gpu, b_cpu), 1e-6) << "boundary residuals";
    }
}

TEST(CudaVarproParity, ProjectedSystemAndStep) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int dim : kDims)
    for (int m : kNeuronCounts) {
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      Pair pair(dim, m);
      pair.cpu->solve_weights_qr();
      pair.gpu->solve_weights_qr();
      const LossParts p_cpu = pair.cpu->vp_prepare(), p_gpu = pair.gpu->vp_prepare();
      EXPECT_LE(relative_difference(p_gpu.loss, p_cpu.loss), 1e-8);
      std::vector<double> jtj_cpu, jtr_cpu, jtj_gpu, jtr_gpu;
      pair.cpu->lm_system(jtj_cpu, jtr_cpu);
      pair.gpu->lm_system(jtj_gpu, jtr_gpu);
      ASSERT_EQ(jtr_cpu.size(), std::size_t(m * (dim + 1)));
      EXPECT_LE(relative_difference(jtr_gpu, jtr_cpu), 1e-5) << "JᵀR";
      EXPECT_LE(relative_difference(jtj_gpu, jtj_cpu), 1e-5) << "JᵀJ";
      // A strongly damped step is a scaled gradient step: the same on both backends.
      const LossParts s_cpu = pair.cpu->vp_try(1e3), s_gpu = pair.gpu->vp_try(1e3);
      EXPECT_LE(relative_difference(s_gpu.loss, s_cpu.loss), 1e-8);
      const RbfParameters<double> q_cpu = pair.cpu->parameters(), q_gpu = pair.gpu->parameters();
      EXPECT_LE(relative_difference(q_gpu.centres, q_cpu.centres), 1e-9) << "centres";
      EXPECT_LE(relative_difference(q_gpu.widths, q_cpu.widths), 1e-9) << "widths";
      // lm_reject returns both to the prepared state.
      pair.cpu->lm_reject();
      pair.gpu->lm_reject();
      EXPECT_LE(relative_difference(pair.gpu->residuals().loss, pair.cpu->residuals().loss), 1e-8);
    }
}

}  // namespace
}  // namespace rbfpde
