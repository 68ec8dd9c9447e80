// The device sums of device_comm.hpp and the NCCL communicator. NCCL runs non-blocking
// (ncclConfig_t::blocking = 0): every NCCL call returns at once, and this file polls
// ncclCommGetAsyncError — and, for a sum, an event recorded after it on the stream — until the
// call completed, failed, or outlived the communicator's collective timeout. A rank that died
// or stopped therefore ends the others with a message instead of leaving them in a kernel that
// waits for ever.
#include "kernels/cuda/common/device_comm.hpp"

#include "kernels/cuda/common/module_entry.hpp"

#include <cuda_runtime.h>
#ifdef RBFPDE_HAVE_NCCL
#include <nccl.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"

namespace rbfpde {
namespace gpu {
namespace {

// On the device when the communicator reaches device memory, else staged through the host.
template <class T>
void device_allreduce_sum(Communicator& comm, T* data, std::size_t n, cudaStream_t stream) {
  if (n == 0 || comm.allreduce_sum_device(data, n, stream)) return;
  std::vector<T> host(n);
  CUDA_CHECK(cudaMemcpyAsync(host.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  comm.allreduce_sum(host.data(), n);
  CUDA_CHECK(cudaMemcpyAsync(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void device_allgather(Communicator& comm, const T* in, std::size_t n, T* out, cudaStream_t stream) {
  if (n == 0 || comm.allgather_device(in, n, out, stream)) return;
  std::vector<T> mine(n), all(n * std::size_t(comm.size()));
  CUDA_CHECK(cudaMemcpyAsync(mine.data(), in, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  comm.allgather(mine.data(), n, all.data());
  CUDA_CHECK(
      cudaMemcpyAsync(out, all.data(), all.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

#ifdef RBFPDE_HAVE_NCCL
using Clock = std::chrono::steady_clock;

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(std::shared_ptr<Communicator> host, int device)
      : host_(std::move(host)), device_(device) {
    CUDA_CHECK(cudaSetDevice(device_));
    ncclUniqueId id{};
    if (host_->rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    host_->broadcast(&id, sizeof(id), 0);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    check(ncclCommInitRankConfig(&comm_, host_->size(), id, host_->rank(), &config),
          "ncclCommInitRankConfig");
    wait_for_nccl("ncclCommInitRankConfig");
    CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
  }

  ~NcclCommunicator() override {
    // Destructors log instead of throwing; a finalisation that does not complete is aborted.
    if (done_) cudaEventDestroy(done_);
    if (!comm_) return;
    ncclResult_t state = ncclCommFinalize(comm_);
    if (state == ncclSuccess || state == ncclInProgress) state = poll_async();
    const auto start = Clock::now();
    while (state == ncclInProgress && seconds_since(start) < timeout()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      state = poll_async();
    }
    if (state == ncclSuccess) {
      ncclCommDestroy(comm_);
    } else {
      std::fprintf(stderr, "rbfpde: the NCCL communicator did not finalise; aborting it\n");
      ncclCommAbort(comm_);
    }
  }

  std::string name() const override { return "nccl"; }
  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  int local_rank() const override { return host_->local_rank(); }
  bool distributed() const override { return true; }
  double collective_timeout() const override { return host_->collective_timeout(); }

  void allreduce_sum(double* data, std::size_t n) override { host_->allreduce_sum(data, n); }
  void allreduce_sum(float* data, std::size_t n) override { host_->allreduce_sum(data, n); }
  void broadcast(void* data, std::size_t bytes, int root) override {
    host_->broadcast(data, bytes, root);
  }
  void allgather(const double* in, std::size_t n, double* out) override {
    host_->allgather(in, n, out);
  }
  void allgather(const float* in, std::size_t n, float* out) override {
    host_->allgather(in, n, out);
  }
  void barrier() override { host_->barrier(); }
  [[noreturn]] void abort(const std::string& message, int code) override {
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    host_->abort(message, code);
    std::exit(code);  // not reached: the host communicator's abort ends the process
  }

  bool allreduce_sum_device(double* data, std::size_t n, void* stream) override {
    return sum(data, n, ncclDouble, static_cast<cudaStream_t>(stream));
  }
  bool allreduce_sum_device(float* data, std::size_t n, void* stream) override {
    return sum(data, n, ncclFloat, static_cast<cudaStream_t>(stream));
  }
  bool allgather_device(const double* in, std::size_t n, double* out, void* stream) override {
    return gather(in, n, out, ncclDouble, static_cast<cudaStream_t>(stream));
  }
  bool allgather_device(const float* in, std::size_t n, float* out, void* stream) override {
    return gather(in, n, out, ncclFloat, static_cast<cudaStream_t>(stream));
  }

 private:
  static double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }
  double timeout() const { return host_->collective_timeout(); }

  ncclResult_t poll_async() {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm_, &state);
    return r == ncclSuccess ? state : r;
  }

  [[noreturn]] void fail(const std::string& what) { abort("NCCL: " + what, 1); }

  void check(ncclResult_t r, const char* call) {
    if (r == ncclSuccess || r == ncclInProgress) return;
    std::string detail = ncclGetErrorString(r);
    const char* last = comm_ ? ncclGetLastError(comm_) : ncclGetLastError(nullptr);
    if (last && *last) detail += std::string(" (") + last + ")";
    fail(std::string(call) + " failed on device " + std::to_string(device_) + ": " + detail);
  }

  // Until the last non-blocking call on comm_ has completed (or failed, or timed out).
  void wait_for_nccl(const char* call) {
    const auto start = Clock::now();
    for (;;) {
      const ncclResult_t state = poll_async();
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) check(state, call);
      if (seconds_since(start) > timeout()) fail(timeout_message(call));
      std::this_thread::yield();
    }
  }

  std::string timeout_message(const char* call) const {
    std::ostringstream out;
    out << call << " has not completed within " << timeout()
        << " s: another rank failed or stopped; ending the run";
    return out.str();
  }

  bool sum(void* data, std::size_t n, ncclDataType_t type, cudaStream_t stream) {
    if (n == 0) return true;
    check(ncclAllReduce(data, data, n, type, ncclSum, comm_, stream), "ncclAllReduce");
    return complete("ncclAllReduce", stream);
  }

  bool gather(const void* in, std::size_t n, void* out, ncclDataType_t type, cudaStream_t stream) {
    if (n == 0) return true;
    check(ncclAllGather(in, out, n, type, comm_, stream), "ncclAllGather");
    return complete("ncclAllGather", stream);
  }

  // Waits for the collective `call` just enqueued on `stream`: its enqueueing (non-blocking
  // NCCL), then the collective itself on the stream, so that a peer that never joins is noticed
  // within the timeout rather than by a synchronisation that never returns.
  bool complete(const char* call, cudaStream_t stream) {
    wait_for_nccl(call);
    CUDA_CHECK(cudaEventRecord(done_, stream));
    const auto start = Clock::now();
    for (;;) {
      const cudaError_t e = cudaEventQuery(done_);
      if (e == cudaSuccess) return true;
      if (e != cudaErrorNotReady) fail(std::string(call) + ": CUDA error " + cudaGetErrorString(e));
      const ncclResult_t state = poll_async();
      if (state != ncclSuccess && state != ncclInProgress) check(state, call);
      if (seconds_since(start) > timeout()) fail(timeout_message(call));
      std::this_thread::yield();
    }
  }

  std::shared_ptr<Communicator> host_;
  int device_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaEvent_t done_ = nullptr;
};
#endif

}  // namespace

bool nccl_built() {
#ifdef RBFPDE_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<Communicator> host,
                                                     int device) {
  if (!host) host = serial_communicator();
#ifdef RBFPDE_HAVE_NCCL
  return std::make_shared<NcclCommunicator>(std::move(host), device);
#else
  throw std::runtime_error("this build of rbfpde has no NCCL (it was not found when it was built)");
#endif
}

void allreduce_sum(Communicator& comm, double* data, std::size_t n, CUstream_st* stream) {
  device_allreduce_sum(comm, data, n, stream);
}
void allreduce_sum(Communicator& comm, float* data, std::size_t n, CUstream_st* stream) {
  device_allreduce_sum(comm, data, n, stream);
}
void allgather(Communicator& comm, const double* in, std::size_t n, double* out,
               CUstream_st* stream) {
  device_allgather(comm, in, n, out, stream);
}
void allgather(Communicator& comm, const float* in, std::size_t n, float* out,
               CUstream_st* stream) {
  device_allgather(comm, in, n, out, stream);
}

std::shared_ptr<Communicator> make_device_communicator(std::shared_ptr<Communicator> host) {
  if (!host || host->size() <= 1) return host;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    host->abort("a run over " + std::to_string(host->size()) +
                    " ranks on the CUDA backend found no CUDA device on this rank",
                1);
  }
  const int device = host->local_rank() % count;
  CUDA_CHECK(cudaSetDevice(device));
#ifdef RBFPDE_HAVE_NCCL
  // NCCL needs one GPU per rank: ranks that share a device (more ranks on a host than GPUs) sum
  // through host memory instead. Every rank takes the same choice.
  double shared = host->local_rank() >= count ? 1.0 : 0.0;
  host->allreduce_sum(&shared, 1);
  if (shared > 0) return host;
  return gpu::make_nccl_communicator(std::move(host), device);
#else
  return host;
#endif
}

}  // namespace gpu
}  // namespace rbfpde
