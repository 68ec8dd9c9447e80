// The MLP's checkpoint on the CUDA backend: its Adam moments read back and restored against the
// CPU reference, and a run interrupted in the Adam stage, at its end and inside the L-BFGS stage
// resumed to the same bits as the run never stopped (on the device the stop comes after a chunk
// of steps, so the resumed run's chunks fall differently: the steps must not care), also with
// the batches drawn on the device every few steps.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../mlp/mlp_test_util.hpp"
#include "tests/common/resume_runs.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using gpu_test::bitwise_equal;
using gpu_test::relative_difference;

template <class T>
class CudaMlpCheckpoint : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(CudaMlpCheckpoint, Precisions);

TYPED_TEST(CudaMlpCheckpoint, AdamMomentsReadBackAndRestore) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  MlpShape shape;
  shape.hidden = {37, 29};
  const MlpOptions opt = mlp_options(shape, 7.0);
  auto cpu = make_cpu_mlp_backend<T>(opt);
  auto gpu = make_cuda_mlp_backend<T>(opt);
  auto copy = make_cuda_mlp_backend<T>(opt);
  const std::vector<double> theta0 = random_mlp_parameters(shape, 4);
  const std::vector<T> theta(theta0.begin(), theta0.end());
  const CollocationBatch batch = random_batch(2, 201, 53, 5);
  for (MlpBackend<T>* be : {cpu.get(), gpu.get(), copy.get()}) be->set_batch(batch);
  for (MlpBackend<T>* be : {cpu.get(), gpu.get()}) {
    be->set_parameters(theta);
    for (long t = 1; t <= 3; ++t) {
      be->loss_and_gradient();
      be->adam_step(T(1e-3), T(0.9), T(0.999), T(1e-8), t);
    }
  }
  std::vector<T> m_cpu, v_cpu, m_gpu, v_gpu;
  cpu->adam_moments(m_cpu, v_cpu);
  gpu->adam_moments(m_gpu, v_gpu);
  const double tol = sizeof(T) == sizeof(double) ? 1e-11 : 1e-4;
  EXPECT_LE(relative_difference(m_gpu, m_cpu), tol);
  EXPECT_LE(relative_difference(v_gpu, v_cpu), tol);

  copy->set_parameters(gpu->parameters());
  copy->set_adam_moments(m_gpu, v_gpu);
  std::vector<T> m_copy, v_copy;
  copy->adam_moments(m_copy, v_copy);
  EXPECT_TRUE(bitwise_equal(m_copy, m_gpu));
  EXPECT_TRUE(bitwise_equal(v_copy, v_gpu));
  for (MlpBackend<T>* be : {gpu.get(), copy.get()}) {
    be->loss_and_gradient();
    be->adam_step(T(1e-3), T(0.9), T(0.999), T(1e-8), 4);
  }
  EXPECT_TRUE(bitwise_equal(copy->parameters(), gpu->parameters()));
}

// A 2-32-32-1 network, 300 + 60 points redrawn every 70 steps, reports every 50 cycles; 200 Adam
// steps then up to 60 L-BFGS iterations.
std::vector<std::string> small_run(const std::string& precision) {
  return {"model.layers=[32, 32]",         "training.points.interior=300",
          "training.points.boundary=60",   "training.points.resample_every=70",
          "training.max_cycles=200",       "training.lbfgs.iterations=60",
          "output.report_every=50",        "output.resolution=[21, 21]",
          "compute.precision=" + precision};
}

TYPED_TEST(CudaMlpCheckpoint, ResumesBitIdenticallyInBothStages) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const std::string precision = sizeof(TypeParam) == sizeof(double) ? "double" : "float";
  // The batches are drawn on the device inside the chunks, so the Adam stage polls at its
  // reports only: cycles 50, 100, 150, 200. Stopped at the second poll (cycle 100, after the
  // draw at 70), the fourth (200, the end of the Adam steps) and the 21st (cycle 217, inside
  // the L-BFGS stage, which polls every cycle).
  for (long polls : {1, 3, 20}) {
    SCOPED_TRACE(polls);
    test_runs::check_resume_matches("poisson2d_seed_mlp",
                                    "cuda_" + precision + "_" + std::to_string(polls),
                                    small_run(precision), polls, "cuda");
  }
}

// A fresh batch every 3 steps, drawn inside the graphs: stopped at the second poll (cycle 100,
// the chunk's draws at 51, 54, …, 99 done) and at the end of the Adam steps.
TYPED_TEST(CudaMlpCheckpoint, ResumesBitIdenticallyWithAFreshBatchEveryFewSteps) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const std::string precision = sizeof(TypeParam) == sizeof(double) ? "double" : "float";
  std::vector<std::string> o = small_run(precision);
  o.push_back("training.points.resample_every=3");
  o.push_back("training.lbfgs.iterations=10");
  for (long polls : {1, 3}) {
    SCOPED_TRACE(polls);
    test_runs::check_resume_matches("poisson2d_seed_mlp",
                                    "cuda_every3_" + precision + "_" + std::to_string(polls), o,
                                    polls, "cuda");
  }
}

}  // namespace
}  // namespace rbfpde
