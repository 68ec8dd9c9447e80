// The gtest main of the MPI tests: every rank runs every test (the tests' collectives must line
// up); rank 0 alone prints the results. Run under mpirun (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include "kernels/comm.hpp"

int main(int argc, char** argv) {
  const auto comm = rbfpde::mpi_initialize(&argc, &argv);
  // A test whose ranks fell out of step ends in a minute, not in the product's five.
  rbfpde::set_collective_timeout(60);
  ::testing::InitGoogleTest(&argc, argv);
  if (comm->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  // Every rank's verdict: a failure on rank 1 fails the run on rank 0 too.
  double any = failed;
  comm->allreduce_sum(&any, 1);
  if (any > 0 && comm->rank() == 0 && !failed)
    std::fprintf(stderr, "a test failed on another rank\n");
  rbfpde::mpi_finalize();
  return any > 0 ? 1 : 0;
}
