// Sums of device arrays over the ranks of a run (docs/architecture.md, "Distributed runs"), for
// the CUDA backends: NCCL on the stream when the communicator is NCCL's, otherwise staged
// through host memory over the communicator's host collectives (MPI). No CUDA types here.
#pragma once

#include <cstddef>
#include <memory>

#include "kernels/comm.hpp"

struct CUstream_st;

namespace rbfpde::gpu {

// True when this build has NCCL.
bool nccl_built();

// An NCCL communicator over `host`'s ranks on `device` (made current with cudaSetDevice): rank 0
// draws the unique id and `host` broadcasts it; host collectives go to `host`. With a serial
// `host` it is a communicator of one rank (no MPI needed) whose distributed() is true, so that
// a backend given it runs its distributed path. Initialisation and every sum are bounded by
// host->collective_timeout(); an NCCL error or a timeout ends every rank through abort() with
// one message. Throws std::runtime_error in a build without NCCL.
std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<Communicator> host,
                                                     int device);

// data[0…n) (device memory) summed in place over comm's ranks, after the work already enqueued
// on `stream`; complete on return (the stream has reached the sum).
void allreduce_sum(Communicator& comm, double* data, std::size_t n, CUstream_st* stream);
void allreduce_sum(Communicator& comm, float* data, std::size_t n, CUstream_st* stream);

// out[0…size()·n) (device memory) = every rank's in[0…n) (device memory) in rank order, after
// the work already enqueued on `stream`; complete on return.
void allgather(Communicator& comm, const double* in, std::size_t n, double* out,
               CUstream_st* stream);
void allgather(Communicator& comm, const float* in, std::size_t n, float* out, CUstream_st* stream);

}  // namespace rbfpde::gpu
