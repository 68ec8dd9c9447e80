// End to end on the CUDA backend: configs/heat3d.yaml (3D space and time, the D = 4 kernels with
// Δ over the first three coordinates, batches sampled on the host) at a small size, solved on
// the CPU and on the GPU from the same seed. Both errors must reach the CPU test's bound
// (tests/cli/time3d_test.cpp), the GPU's within 5× of the CPU's either way, and the error
// estimate (its 4D auxiliary lattice on the CUDA backend) must be finite.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "solver/config/config.hpp"
#include "solver/train/solve.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

SolveResult solve_heat3d(const std::string& backend) {
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/time3d_solve_" + backend;
  std::filesystem::remove_all(dir);
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/heat3d.yaml",
                  {"output.directory=" + dir, "compute.backend=" + backend, "model.neurons=40",
                   "training.points.interior=800", "training.points.boundary=800",
                   "training.max_cycles=30", "output.resolution=[6,6,6,3]"});
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  const SolveResult r = solve(config, problem, options);
  EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.unsound;
  std::printf("heat3d (%s): relative L2 %.3e, estimate %.3e, %ld cycles, %.2f s\n", backend.c_str(),
              r.errors.rel_l2, r.error_estimate, r.outcome.cycles, r.outcome.seconds);
#ifdef RBFPDE_HAVE_VTK
  EXPECT_TRUE(std::filesystem::exists(dir + "/solution.pvd")) << backend;  // VTK writes the series
#endif
  return r;
}

TEST(CudaTime3dSolve, Heat3dMatchesTheCpu) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const SolveResult cpu = solve_heat3d("cpu");
  const SolveResult gpu = solve_heat3d("cuda");
  EXPECT_EQ(gpu.backend, "cuda");
  EXPECT_LE(cpu.errors.rel_l2, 0.15);
  EXPECT_LE(gpu.errors.rel_l2, 0.15);
  EXPECT_LE(gpu.errors.rel_l2, 5 * cpu.errors.rel_l2);
  EXPECT_GE(gpu.errors.rel_l2, cpu.errors.rel_l2 / 5);
  EXPECT_TRUE(std::isfinite(gpu.error_estimate));
  EXPECT_GT(gpu.error_estimate, gpu.errors.rel_l2 / 3);
  EXPECT_LT(gpu.error_estimate, gpu.errors.rel_l2 * 3);
}

}  // namespace
}  // namespace rbfpde
