// The CUDA backends over several ranks against one GPU on the union of the ranks' points
// (tests/gpu/nccl_parity.hpp for the RBF network, tests/gpu/mlp_nccl_parity.hpp for the MLP):
// every sum-carrying operation agrees to rounding. Each rank takes
// its device from make_device_communicator, as `rbfpde solve` does: NCCL when every rank has a
// GPU of its own, sums staged through host memory over MPI when ranks share one. Skipped (on
// every rank alike) unless every rank sees a CUDA device; the single-GPU reference runs on each
// rank's own device.
#include <gtest/gtest.h>

#include <memory>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"
#include "tests/gpu/mlp_nccl_parity.hpp"
#include "tests/gpu/nccl_parity.hpp"

namespace rbfpde {
namespace {

// Every rank sees a CUDA device (a collective).
bool every_rank_has_a_device(Communicator& world) {
  double with_device = cuda_device_available() ? 1.0 : 0.0;
  world.allreduce_sum(&with_device, 1);
  return with_device >= world.size();
}

TEST(GpuRanks, MatchOneGpuOnTheUnion) {
  const std::shared_ptr<Communicator> world = world_communicator();
  if (!every_rank_has_a_device(*world))
    GTEST_SKIP() << "not every rank sees a CUDA device: skipping";
  const std::shared_ptr<Communicator> comm = make_device_communicator(world);
  if (world->rank() == 0)
    std::printf("[ info     ] %d ranks, device sums by %s\n", comm->size(),
                comm->name() == "nccl" ? "NCCL" : "host staging over MPI");
  for (const nccl_test::ParityCase& c : nccl_test::kParityCases)
    nccl_test::expect_matches_one_gpu(comm, c);
}

TEST(GpuRanks, MlpMatchesOneGpuOnTheUnion) {
  const std::shared_ptr<Communicator> world = world_communicator();
  if (!every_rank_has_a_device(*world) || !cuda_mlp_backend_built())
    GTEST_SKIP() << "not every rank sees a CUDA device, or no CUDA MLP backend: skipping";
  const std::shared_ptr<Communicator> comm = make_device_communicator(world);
  const mlp_nccl_test::MlpBackendFactory make = [](const MlpOptions& o) {
    return make_cuda_mlp_backend<double>(o);
  };
  for (const mlp_nccl_test::MlpParityCase& c : mlp_nccl_test::kMlpParityCases)
    mlp_nccl_test::expect_mlp_matches_one_gpu(comm, c, make);
}

}  // namespace
}  // namespace rbfpde
