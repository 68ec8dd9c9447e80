// A rank that fails mid-run, for the MPI failure tests (tests/CMakeLists.txt): every rank runs
// gradient cycles of the CPU backend over its share of a batch (each cycle all-reduces), and at
// cycle 3 rank 1
//   throw: throws, and the error is handled as rbfpde's main does (Communicator::abort);
//   kill:  dies on SIGKILL;
//   stall: stops calling collectives, so that the others' watchdog (2 s here) ends the run.
// Each test checks that every rank exits, with one clear message, well within its timeout.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/comm.hpp"
#include "tests/common/random_inputs.hpp"

int main(int argc, char** argv) {
  using namespace rbfpde;
  const auto comm = mpi_initialize(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "throw";
  set_collective_timeout(2);
  try {
    BackendOptions opt;
    opt.dim = 2;
    opt.comm = comm;
    auto backend = make_cpu_backend<double>(opt);
    const CollocationBatch all = test_inputs::random_batch(2, 60, 20, 1);
    CollocationBatch mine = all;
    const Share si = share_of(all.n_interior(), comm->rank(), comm->size());
    mine.interior.assign(all.interior.begin() + long(2 * si.offset),
                         all.interior.begin() + long(2 * (si.offset + si.count)));
    mine.f.assign(all.f.begin() + long(si.offset), all.f.begin() + long(si.offset + si.count));
    backend->set_batch(mine);
    backend->set_parameters(test_inputs::random_parameters<double>(2, 8, 2));
    for (int cycle = 1; cycle <= 1000000; ++cycle) {
      if (comm->rank() == 1 && cycle == 3) {
        if (mode == "throw") throw std::runtime_error("test failure injected at cycle 3");
        if (mode == "kill") raise(SIGKILL);
        if (mode == "stall") {
          for (;;) pause();
        }
      }
      RbfParameters<double> g;
      backend->gradient(g);
    }
  } catch (const std::exception& e) {
    comm->abort(e.what(), 1);
  }
  mpi_finalize();
  return 0;
}
