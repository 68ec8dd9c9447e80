// The communicator of a data-parallel run (docs/architecture.md, "Distributed runs"): every
// rank holds the same parameters and its own share of the collocation points; the backends sum
// their partial sums over the ranks with allreduce_sum. A serial communicator (one rank) makes
// every collective a no-op, so that one code path serves both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace rbfpde {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string name() const = 0;  // "serial" | "mpi" | "nccl"
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The rank among the ranks on this host (MPI_COMM_TYPE_SHARED): a rank's GPU is its local
  // rank modulo the host's device count.
  virtual int local_rank() const { return rank(); }
  // Whether a backend takes its distributed code path (union counts, sums over the ranks): with
  // more than one rank, and for a communicator of one rank that asks for it (NCCL's, so that a
  // one-GPU test runs every collective of that path).
  virtual bool distributed() const { return size() > 1; }
  // In-place sums over the ranks of n values in device memory, enqueued on `stream` (a
  // cudaStream_t) and complete when it returns. False when this communicator does not reach
  // device memory: the caller then stages the values through host memory (gpu::allreduce_sum in
  // kernels/cuda/common/device_comm.hpp does either).
  virtual bool allreduce_sum_device(double* data, std::size_t n, void* stream) { return false; }
  virtual bool allreduce_sum_device(float* data, std::size_t n, void* stream) { return false; }
  // out (size()·n values, device memory) = the ranks' `in` (n values each, device memory) in rank
  // order, enqueued on `stream` and complete when it returns. False when this communicator does
  // not reach device memory (gpu::allgather stages through host memory then).
  virtual bool allgather_device(const double* in, std::size_t n, double* out, void* stream) {
    return false;
  }
  virtual bool allgather_device(const float* in, std::size_t n, float* out, void* stream) {
    return false;
  }
  // The limit after which a collective that has not returned ends the run.
  virtual double collective_timeout() const;
  // In-place sums over the ranks; every rank gets the sum.
  virtual void allreduce_sum(double* data, std::size_t n) = 0;
  virtual void allreduce_sum(float* data, std::size_t n) = 0;
  // Root's `bytes` bytes at `data` on every rank.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  // out (size()·n values) = the ranks' `in` (n values each) in rank order.
  virtual void allgather(const double* in, std::size_t n, double* out) = 0;
  virtual void allgather(const float* in, std::size_t n, float* out) = 0;
  virtual void barrier() = 0;
  // Prints "error: rank r of n: message" once and ends every rank with `code`.
  [[noreturn]] virtual void abort(const std::string& message, int code) = 0;
};

// One rank: the collectives return their input.
std::shared_ptr<Communicator> serial_communicator();

// True when this build has the MPI communicator.
bool mpi_built();
// A one-line description of the distributed-run support of this build, for --version.
std::string distributed_support();

// MPI's lifetime, for main(): mpi_initialize before anything else, mpi_finalize at the end;
// both do nothing in a build without MPI. mpi_initialize returns the world communicator (the
// serial one without MPI); a process that mpirun or srun did not start is a singleton of size 1.
std::shared_ptr<Communicator> mpi_initialize(int* argc, char*** argv);
void mpi_finalize();
// The communicator of mpi_initialize, or the serial one when MPI was not initialised.
std::shared_ptr<Communicator> world_communicator();

// The communicator a CUDA backend of a run over `host`'s ranks takes. With more than one rank
// it selects this rank's device (local_rank() modulo the device count, cudaSetDevice) and, in a
// build with NCCL, returns an NCCL communicator over the same ranks (its unique id broadcast
// over `host`); without NCCL it returns `host`, and the backend stages its device sums through
// host memory. With one rank, or in a build without the CUDA backend, it returns `host` and
// selects nothing. Defined in kernels/cuda/common/device_comm.cpp (comm.cpp without CUDA).
std::shared_ptr<Communicator> make_device_communicator(std::shared_ptr<Communicator> host);

// A collective that has not returned within this many seconds ends the run (a rank died or
// stopped calling collectives): the MPI communicator's watchdog.
constexpr double kCollectiveTimeoutSeconds = 300;
// Sets the watchdog's limit of the world communicator (tests shorten it).
void set_collective_timeout(double seconds);

// Every rank's `mine`, in rank order, on every rank (a collective).
inline std::vector<std::string> allgather_strings(Communicator& comm, const std::string& mine) {
  const int n = comm.size();
  std::vector<std::string> all(std::size_t(n > 0 ? n : 1));
  if (n <= 1) {
    all[0] = mine;
    return all;
  }
  const double length = double(mine.size());
  std::vector<double> lengths(static_cast<std::size_t>(n));
  comm.allgather(&length, 1, lengths.data());
  for (int r = 0; r < n; ++r) {
    std::string& s = all[std::size_t(r)];
    if (r == comm.rank())
      s = mine;
    else
      s.assign(std::size_t(lengths[std::size_t(r)]), '\0');
    comm.broadcast(&s[0], s.size(), r);
  }
  return all;
}

// The union's interior and boundary counts N and K: this rank's summed over the ranks (a
// collective).
inline std::pair<long, long> union_counts(Communicator& comm, long n_int, long n_bnd) {
  double counts[2] = {double(n_int), double(n_bnd)};
  comm.allreduce_sum(counts, 2);
  return {long(counts[0]), long(counts[1])};
}

// True on every rank when `mine` is true on any (a collective; `mine` itself with one rank):
// decisions that hang on a rank's clock or signals, agreed on so that every rank takes them.
inline bool any_rank(Communicator& comm, bool mine) {
  if (comm.size() == 1) return mine;
  double v = mine ? 1.0 : 0.0;
  comm.allreduce_sum(&v, 1);
  return v > 0;
}

// Rank r's share of `total` items split over `size` ranks: the first total % size ranks get one
// more. offset is where the share starts in the union, rank by rank.
struct Share {
  std::size_t offset = 0, count = 0;
};
inline Share share_of(std::size_t total, int rank, int size) {
  const std::size_t q = total / std::size_t(size), r = total % std::size_t(size);
  const std::size_t k = std::size_t(rank);
  return {k * q + (k < r ? k : r), q + (k < r ? 1 : 0)};
}

// The seed of rank r's stream: the seed itself on rank 0 (a one-rank run draws exactly what a
// serial one does), a SplitMix64 mix of (seed, rank) on the others.
inline std::uint64_t rank_seed(std::uint64_t seed, int rank) {
  if (rank == 0) return seed;
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * std::uint64_t(rank + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace rbfpde
