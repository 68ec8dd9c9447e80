// Collocation batches drawn on the device: the sampler that kernels/sampler_source.hpp generates
// for one Problem, compiled at run time with NVRTC and launched into the backend's batch buffers
// (that header says what the kernel draws and how it uses Philox). No CUDA types here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/common/stream.hpp"
#include "kernels/sampler_source.hpp"
#include "problems/problem.hpp"

namespace rbfpde::gpu {

// Device arrays for the coefficients of a general batch (CollocationBatch's a, b, c over the
// interior rows, alpha, beta over the boundary rows), of the launch's scalar type.
struct SampledCoefficients {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  void* alpha = nullptr;
  void* beta = nullptr;
};

class DeviceSampler {
 public:
  // Generates and compiles the sampler of `problem` for the current device. Throws
  // std::runtime_error (with NVRTC's log) when it cannot. Compiled images are cached per source
  // for the process's lifetime: a second backend for the same problem compiles nothing.
  DeviceSampler(const Problem& problem, bool double_precision);
  DeviceSampler(const Problem& problem, const OperatorText& op, bool double_precision);
  ~DeviceSampler();
  DeviceSampler(const DeviceSampler&) = delete;
  DeviceSampler& operator=(const DeviceSampler&) = delete;

  int dim() const;
  // True when the batches carry coefficients (the operator is not Poisson/Dirichlet): launch then
  // needs `coefficients`, and every one of its five arrays is written in full.
  bool general() const;
  int space_dim() const;  // the coordinates of Δₛ (dim when the operator has no time)
  // The batch number in device memory that a backend's launches read (`index` below), and the
  // host's write of it, stream-ordered; from pageable memory, staged before the call returns, so
  // the caller need not synchronise. A captured graph writes it instead from pinned memory.
  std::uint64_t* batch_index();
  void set_batch_index(Stream stream, std::uint64_t index);
  // Throws std::invalid_argument when a batch of n_int + n_bnd rows is too large for the int
  // indexing of the backends' kernels.
  static void check_rows(std::size_t n_int, std::size_t n_bnd);
  // x: (n_int + n_bnd) × dim row-major, interior rows first; target: [f (n_int) | p (n_bnd)];
  // normals: n_bnd × dim (unused when n_bnd is 0). Scalars are float or double as constructed.
  // index: device pointer. A point depends only on (seed, index, interior or boundary, its
  // position among those), not on n_int or n_bnd: launches with (n_int, 0) and (0, n_bnd) draw
  // the same points as one with (n_int, n_bnd), into separate buffers. halt (device, optional):
  // nothing is drawn when halt[0] < step (a training chunk that stopped before this step).
  // coefficients: required when general(), ignored otherwise; a boundary point that no entry
  // covers gets NaN target, α and β.
  void launch(Stream stream, const std::uint64_t* index, std::uint64_t seed, int n_int, int n_bnd,
              void* x, void* target, void* normals, const int* halt = nullptr, int step = 0,
              const SampledCoefficients* coefficients = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// *sampler, or std::logic_error naming `caller` when the backend's set_problem has not made one.
DeviceSampler& sampler_for(const std::unique_ptr<DeviceSampler>& sampler, const char* caller);

}  // namespace rbfpde::gpu
