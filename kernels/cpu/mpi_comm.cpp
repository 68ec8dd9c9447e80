// The MPI communicator (MPI_COMM_WORLD) and its watchdog: every collective records when it
// started; a thread ends the run with MPI_Abort when one has not returned within the limit
// (kCollectiveTimeoutSeconds unless set_collective_timeout changed it), so that a rank that
// died or stopped calling collectives never leaves the others waiting for ever.
#ifdef RBFPDE_HAVE_MPI
#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "kernels/comm.hpp"

namespace rbfpde {
namespace {

using Clock = std::chrono::steady_clock;

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    // The ranks that share this host's memory, hence its GPUs.
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) ==
            MPI_SUCCESS &&
        node != MPI_COMM_NULL) {
      MPI_Comm_rank(node, &local_rank_);
      MPI_Comm_free(&node);
    } else {
      local_rank_ = rank_;
    }
    if (size_ > 1) watchdog_ = std::thread([this] { watch(); });
  }
  ~MpiCommunicator() override { stop_watchdog(); }

  void stop_watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (watchdog_.joinable()) watchdog_.join();
  }

  void set_timeout(double seconds) { timeout_s_.store(seconds); }

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  double collective_timeout() const override { return timeout_s_.load(); }

  void allreduce_sum(double* data, std::size_t n) override {
    if (size_ == 1 || n == 0) return;
    Guard g(*this, "allreduce");
    check(MPI_Allreduce(MPI_IN_PLACE, data, count(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  }
  void allreduce_sum(float* data, std::size_t n) override {
    if (size_ == 1 || n == 0) return;
    Guard g(*this, "allreduce");
    check(MPI_Allreduce(MPI_IN_PLACE, data, count(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    if (size_ == 1 || bytes == 0) return;
    Guard g(*this, "broadcast");
    check(MPI_Bcast(data, count(bytes), MPI_BYTE, root, MPI_COMM_WORLD));
  }
  void allgather(const double* in, std::size_t n, double* out) override {
    Guard g(*this, "allgather");
    check(MPI_Allgather(in, count(n), MPI_DOUBLE, out, count(n), MPI_DOUBLE, MPI_COMM_WORLD));
  }
  void allgather(const float* in, std::size_t n, float* out) override {
    Guard g(*this, "allgather");
    check(MPI_Allgather(in, count(n), MPI_FLOAT, out, count(n), MPI_FLOAT, MPI_COMM_WORLD));
  }
  void barrier() override {
    if (size_ == 1) return;
    Guard g(*this, "barrier");
    check(MPI_Barrier(MPI_COMM_WORLD));
  }
  [[noreturn]] void abort(const std::string& message, int code) override {
    if (size_ > 1)
      std::fprintf(stderr, "error: rank %d of %d: %s\n", rank_, size_, message.c_str());
    else
      std::fprintf(stderr, "error: %s\n", message.c_str());
    std::fflush(stderr);
    if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, code);
    stop_watchdog();
    MPI_Finalize();
    std::exit(code);
  }

 private:
  struct Guard {
    Guard(MpiCommunicator& c, const char* what) : c(c) {
      c.what_.store(what);
      c.started_ns_.store(Clock::now().time_since_epoch().count());
    }
    ~Guard() { c.started_ns_.store(0); }
    MpiCommunicator& c;
  };

  static int count(std::size_t n) {
    if (n > std::size_t(2147483647)) throw std::length_error("a collective of over 2³¹ elements");
    return int(n);
  }
  void check(int rc) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    abort(std::string("MPI error: ") + std::string(text, std::size_t(len)), 1);
  }

  void watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::chrono::milliseconds(200));
      const auto started = started_ns_.load();
      if (stopping_ || started == 0) continue;
      const double waited =
          std::chrono::duration<double>(Clock::now().time_since_epoch() -
                                        Clock::duration(started)).count();
      const double limit = timeout_s_.load();
      if (waited > limit) {
        std::fprintf(stderr,
                     "error: rank %d of %d: an MPI %s has not returned within %g s: another rank "
                     "failed or stopped; ending the run\n",
                     rank_, size_, what_.load(), limit);
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        std::_Exit(1);
      }
    }
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0;
  std::atomic<Clock::rep> started_ns_{0};
  std::atomic<const char*> what_{""};
  std::atomic<double> timeout_s_{kCollectiveTimeoutSeconds};
  std::thread watchdog_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
};

std::shared_ptr<MpiCommunicator>& world() {
  static std::shared_ptr<MpiCommunicator> w;
  return w;
}

}  // namespace

bool mpi_built() { return true; }

std::string distributed_support() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string v(version, std::size_t(len));
  const auto cut = v.find_first_of(",\n");
  if (cut != std::string::npos) v.resize(cut);
#ifdef RBFPDE_HAVE_NCCL
  return "distributed runs: on (" + v + "; NCCL for the CUDA backend's sums)";
#elif defined(RBFPDE_HAVE_CUDA)
  return "distributed runs: on (" + v + "; no NCCL: the CUDA backend's sums go through host memory)";
#else
  return "distributed runs: on (" + v + "; the CPU backend)";
#endif
}

std::shared_ptr<Communicator> mpi_initialize(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    // A process that mpirun did not start is an Open MPI singleton: isolated, it starts no
    // runtime daemon, which saves about 0.5 s of every such run (rbfpde never spawns
    // processes). A value the user set is kept; other MPI libraries ignore the name.
    setenv("OMPI_MCA_ess_singleton_isolated", "1", /*overwrite=*/0);
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  }
  // Errors come back as codes (MpiCommunicator::check turns them into one message).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (!world()) world() = std::make_shared<MpiCommunicator>();
  return world();
}

void mpi_finalize() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  if (!initialised || finalised) return;
  if (world()) world()->stop_watchdog();
  MPI_Finalize();
}

std::shared_ptr<Communicator> world_communicator() {
  if (world()) return world();
  return serial_communicator();
}

void set_collective_timeout(double seconds) {
  if (world()) world()->set_timeout(seconds);
}

}  // namespace rbfpde
#endif
