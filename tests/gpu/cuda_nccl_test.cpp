// The CUDA backend's distributed path on one GPU (docs/architecture.md, "Distributed runs"):
// an NCCL communicator of one rank (ncclCommInitRank with a unique id of its own, no MPI) sums
// device buffers, and a backend given it — distributed() is true, so it takes every collective
// of the multi-rank path — reproduces the single-GPU backend; so does a backend whose one-rank
// communicator stages its sums through host memory (the path of a build without NCCL, or of
// ranks that share a GPU). The CUDA MLP backend likewise (tests/gpu/mlp_nccl_parity.hpp), on the
// planner's kernels and with the point kernel forced. tests/mpi/test_gpu_ranks.cpp runs the same
// comparisons over ranks.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/cuda/common/device_buffer.hpp"
#include "kernels/cuda/common/device_comm.hpp"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "tests/gpu/mlp_nccl_parity.hpp"
#include "tests/gpu/nccl_parity.hpp"

namespace rbfpde {
namespace {

#define RBFPDE_REQUIRE_NCCL()                                                           \
  do {                                                                                  \
    if (!::rbfpde::cuda_device_available()) GTEST_SKIP() << "no CUDA device: skipping"; \
    if (!::rbfpde::gpu::nccl_built()) GTEST_SKIP() << "built without NCCL: skipping";   \
  } while (0)

// One rank that asks for the distributed path but does not reach device memory: the backend
// stages every sum through host memory.
class StagedOneRank final : public Communicator {
 public:
  std::string name() const override { return "staged"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  bool distributed() const override { return true; }
  void allreduce_sum(double* data, std::size_t n) override { serial_->allreduce_sum(data, n); }
  void allreduce_sum(float* data, std::size_t n) override { serial_->allreduce_sum(data, n); }
  bool allreduce_sum_device(double*, std::size_t, void*) override {
    ++device_sums_refused;
    return false;
  }
  bool allreduce_sum_device(float*, std::size_t, void*) override {
    ++device_sums_refused;
    return false;
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    serial_->broadcast(data, bytes, root);
  }
  void allgather(const double* in, std::size_t n, double* out) override {
    serial_->allgather(in, n, out);
  }
  void allgather(const float* in, std::size_t n, float* out) override {
    serial_->allgather(in, n, out);
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& message, int code) override {
    serial_->abort(message, code);
    std::exit(code);  // not reached: the serial communicator's abort ends the process
  }
  int device_sums_refused = 0;

 private:
  const std::shared_ptr<Communicator> serial_ = serial_communicator();
};

template <class T>
void expect_device_sum_of_one_rank(Communicator& comm, std::size_t n) {
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = T(0.37) * T(i) - T(11);
  gpu::DeviceBuffer<T> buffer(n);
  T* device = buffer.data();
  ASSERT_EQ(cudaMemcpy(device, values.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_TRUE(comm.allreduce_sum_device(device, n, stream));
  gpu::allreduce_sum(comm, device, n, stream);  // the backends' entry point
  std::vector<T> back(n, T(0));
  ASSERT_EQ(cudaMemcpy(back.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, values) << "a sum over one rank is its own values";
  cudaStreamDestroy(stream);
}

TEST(NcclOneRank, SumsDeviceBuffers) {
  RBFPDE_REQUIRE_NCCL();
  const std::shared_ptr<Communicator> comm = gpu::make_nccl_communicator(serial_communicator(), 0);
  EXPECT_EQ(comm->name(), "nccl");
  EXPECT_EQ(comm->size(), 1);
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_TRUE(comm->distributed());
  expect_device_sum_of_one_rank<double>(*comm, 1000003);
  expect_device_sum_of_one_rank<float>(*comm, 257);
}

// A plain run keeps the serial path: no device is selected and no NCCL communicator is made.
TEST(NcclOneRank, OneRankRunTakesNoDeviceCommunicator) {
  const std::shared_ptr<Communicator> serial = serial_communicator();
  EXPECT_EQ(make_device_communicator(serial).get(), serial.get());
}

TEST(NcclOneRank, BackendMatchesSingleGpu) {
  RBFPDE_REQUIRE_NCCL();
  const std::shared_ptr<Communicator> comm = gpu::make_nccl_communicator(serial_communicator(), 0);
  for (const nccl_test::ParityCase& c : nccl_test::kParityCases)
    nccl_test::expect_matches_one_gpu(comm, c);
}

TEST(NcclOneRank, HostStagedBackendMatchesSingleGpu) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const auto comm = std::make_shared<StagedOneRank>();
  for (const nccl_test::ParityCase& c : nccl_test::kParityCases)
    nccl_test::expect_matches_one_gpu(comm, c);
  EXPECT_GT(comm->device_sums_refused, 0) << "the backend's device sums went through host memory";
}

// The CUDA MLP backend of the planner's choice and, on Poisson/Dirichlet rows (the only ones it
// takes), with the point kernel forced, whose last block sums the blocks' loss sums.
void expect_mlp_matches_one_gpu(const std::shared_ptr<Communicator>& comm) {
  const mlp_nccl_test::MlpBackendFactory planned = [](const MlpOptions& o) {
    return make_cuda_mlp_backend<double>(o);
  };
  const mlp_nccl_test::MlpBackendFactory point = [](const MlpOptions& o) {
    gpu::MlpTuning tuning;
    tuning.kernel = gpu::MlpTuning::Kernel::kPoint;
    return gpu::make_cuda_mlp_backend<double>(o, tuning);
  };
  for (const mlp_nccl_test::MlpParityCase& c : mlp_nccl_test::kMlpParityCases) {
    mlp_nccl_test::expect_mlp_matches_one_gpu(comm, c, planned);
    if (!c.general && c.dim == 2) mlp_nccl_test::expect_mlp_matches_one_gpu(comm, c, point);
  }
}

TEST(NcclOneRank, MlpBackendMatchesSingleGpu) {
  RBFPDE_REQUIRE_NCCL();
  expect_mlp_matches_one_gpu(gpu::make_nccl_communicator(serial_communicator(), 0));
}

TEST(NcclOneRank, HostStagedMlpBackendMatchesSingleGpu) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const auto comm = std::make_shared<StagedOneRank>();
  expect_mlp_matches_one_gpu(comm);
  EXPECT_GT(comm->device_sums_refused, 0) << "the backend's device sums went through host memory";
}

}  // namespace
}  // namespace rbfpde
