// gpu::allgather over the ranks (kernels/cuda/common/device_comm.hpp): every rank's device
// values in rank order on every rank, through the communicator a run's CUDA backend takes
// (NCCL when every rank has a GPU of its own, host staging when ranks share one). Variable
// projection gathers the ranks' R factors and top blocks with it. Skipped (on every rank alike) unless every rank sees a device.
#include <gtest/gtest.h>

#ifdef RBFPDE_HAVE_CUDA_BACKEND
#include <cuda_runtime.h>

#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "kernels/cuda/common/device_buffer.hpp"
#include "kernels/cuda/common/device_comm.hpp"

namespace rbfpde {
namespace {

template <class T>
void expect_gathered_in_rank_order(Communicator& comm, std::size_t n) {
  const int ranks = comm.size();
  const auto value = [](int rank, std::size_t i) { return T(1000 * rank) + T(0.5) * T(i); };
  std::vector<T> mine(n);
  for (std::size_t i = 0; i < n; ++i) mine[i] = value(comm.rank(), i);
  gpu::DeviceBuffer<T> in(n), out(n * std::size_t(ranks));
  // Every copy on the gather's stream: a non-blocking stream is not ordered after the legacy
  // default stream, and cudaMemcpy from pageable memory may return before its data has landed.
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(in.data(), mine.data(), n * sizeof(T), cudaMemcpyHostToDevice, stream),
            cudaSuccess);
  gpu::allgather(comm, in.data(), n, out.data(), stream);
  std::vector<T> all(n * std::size_t(ranks));
  ASSERT_EQ(cudaMemcpyAsync(all.data(), out.data(), all.size() * sizeof(T),
                            cudaMemcpyDeviceToHost, stream),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  for (int r = 0; r < ranks; ++r)
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(all[std::size_t(r) * n + i], value(r, i)) << "rank " << r << ", entry " << i;
}

TEST(GpuRanks, AllgatherInRankOrder) {
  const std::shared_ptr<Communicator> world = world_communicator();
  double with_device = cuda_device_available() ? 1.0 : 0.0;
  world->allreduce_sum(&with_device, 1);
  if (with_device < world->size()) GTEST_SKIP() << "not every rank sees a CUDA device: skipping";
  const std::shared_ptr<Communicator> comm = make_device_communicator(world);
  expect_gathered_in_rank_order<double>(*comm, 100003);
  expect_gathered_in_rank_order<float>(*comm, 17);
}

}  // namespace
}  // namespace rbfpde
#endif
