// The serial communicator, and the world communicator's bookkeeping in a build without MPI
// (cpu/mpi_comm.cpp has the MPI one).
#include "kernels/comm.hpp"

#include <cstdlib>
#include <cstring>
#include <iostream>

namespace rbfpde {
namespace {

class SerialCommunicator final : public Communicator {
 public:
  std::string name() const override { return "serial"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(double*, std::size_t) override {}
  void allreduce_sum(float*, std::size_t) override {}
  void broadcast(void*, std::size_t, int) override {}
  void allgather(const double* in, std::size_t n, double* out) override {
    if (n) std::memmove(out, in, n * sizeof(double));
  }
  void allgather(const float* in, std::size_t n, float* out) override {
    if (n) std::memmove(out, in, n * sizeof(float));
  }
  void barrier() override {}
  [[noreturn]] void abort(const std::string& message, int code) override {
    std::cerr << "error: " << message << "\n";
    std::exit(code);
  }
};

}  // namespace

double Communicator::collective_timeout() const { return kCollectiveTimeoutSeconds; }

std::shared_ptr<Communicator> serial_communicator() {
  static const std::shared_ptr<Communicator> serial = std::make_shared<SerialCommunicator>();
  return serial;
}

#ifndef RBFPDE_HAVE_MPI
bool mpi_built() { return false; }
std::string distributed_support() {
  return "distributed runs: off (built without MPI)";
}
std::shared_ptr<Communicator> mpi_initialize(int*, char***) { return serial_communicator(); }
void mpi_finalize() {}
std::shared_ptr<Communicator> world_communicator() { return serial_communicator(); }
void set_collective_timeout(double) {}
#endif

}  // namespace rbfpde
