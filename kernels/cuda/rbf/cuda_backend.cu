// gpu::make_rbf_backend (make_cuda_backend of backend.hpp, through librbfpde_cuda.so's entry
// table): the CUDA RBF backend (cuda_rbf_backend.cuh) for dimension 2, 3 or 4;
// gpu::device_available; and gpu::backend_stream and gpu::set_problem_operator (launchers.hpp),
// which reach a CUDA backend through its RbfBackend interface.
#include <memory>
#include <stdexcept>
#include <string>

#include "kernels/backend.hpp"
#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/common/module_entry.hpp"
#include "kernels/cuda/rbf/cuda_rbf_backend.cuh"

namespace rbfpde {

using cuda_detail::CudaRbfBackend;

bool gpu::device_available() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return count > 0;
}

template <class T>
std::unique_ptr<RbfBackend<T>> gpu::make_rbf_backend(const BackendOptions& options) {
  if (!gpu::device_available())
    throw std::runtime_error("the CUDA backend was requested but no CUDA device is present");
  if (options.dim == 2) return std::make_unique<CudaRbfBackend<T, 2>>(options);
  if (options.dim == 3) return std::make_unique<CudaRbfBackend<T, 3>>(options);
  if (options.dim == 4) return std::make_unique<CudaRbfBackend<T, 4>>(options);
  throw std::invalid_argument("the CUDA backend supports 2, 3 or 4 dimensions, got " +
                              std::to_string(options.dim));
}

namespace gpu {
namespace {
// f(b) for `backend` as the CudaRbfBackend of its dimension; `caller` throws for another backend.
template <class T, class F>
auto with_cuda_backend(RbfBackend<T>& backend, const char* caller, F f) {
  if (auto* b = dynamic_cast<CudaRbfBackend<T, 2>*>(&backend)) return f(*b);
  if (auto* b = dynamic_cast<CudaRbfBackend<T, 3>*>(&backend)) return f(*b);
  if (auto* b = dynamic_cast<CudaRbfBackend<T, 4>*>(&backend)) return f(*b);
  throw std::invalid_argument(std::string(caller) + ": not a CUDA backend");
}
template <class T>
Stream stream_of(RbfBackend<T>& backend) {
  return with_cuda_backend(backend, "backend_stream", [](auto& b) { return b.stream(); });
}
template <class T>
void set_problem_operator_of(RbfBackend<T>& backend, const Problem& problem,
                             const OperatorText& op) {
  with_cuda_backend(backend, "set_problem_operator",
                    [&](auto& b) { b.set_problem_operator(problem, op); });
}
}  // namespace
Stream backend_stream(RbfBackend<double>& backend) { return stream_of(backend); }
Stream backend_stream(RbfBackend<float>& backend) { return stream_of(backend); }
void set_problem_operator(RbfBackend<double>& backend, const Problem& problem,
                          const OperatorText& op) {
  set_problem_operator_of(backend, problem, op);
}
void set_problem_operator(RbfBackend<float>& backend, const Problem& problem,
                          const OperatorText& op) {
  set_problem_operator_of(backend, problem, op);
}
}  // namespace gpu

template std::unique_ptr<RbfBackend<double>> gpu::make_rbf_backend<double>(const BackendOptions&);
template std::unique_ptr<RbfBackend<float>> gpu::make_rbf_backend<float>(const BackendOptions&);

}  // namespace rbfpde
