// Checked CUDA, cuBLAS and cuSOLVER calls: every failure throws std::runtime_error naming the
// file, the line, the expression and the library's error string. Used by the .cu files only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace rbfpde::gpu {

[[noreturn]] inline void throw_gpu_error(const char* library, const char* expression,
                                         const char* file, int line, const std::string& what) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + library +
                           " error in `" + expression + "`: " + what);
}

inline const char* cusolver_status_string(cusolverStatus_t status) {
  static const std::pair<cusolverStatus_t, const char*> kNames[] = {
      {CUSOLVER_STATUS_SUCCESS, "CUSOLVER_STATUS_SUCCESS"},
      {CUSOLVER_STATUS_NOT_INITIALIZED, "CUSOLVER_STATUS_NOT_INITIALIZED"},
      {CUSOLVER_STATUS_ALLOC_FAILED, "CUSOLVER_STATUS_ALLOC_FAILED"},
      {CUSOLVER_STATUS_INVALID_VALUE, "CUSOLVER_STATUS_INVALID_VALUE"},
      {CUSOLVER_STATUS_ARCH_MISMATCH, "CUSOLVER_STATUS_ARCH_MISMATCH"},
      {CUSOLVER_STATUS_EXECUTION_FAILED, "CUSOLVER_STATUS_EXECUTION_FAILED"},
      {CUSOLVER_STATUS_INTERNAL_ERROR, "CUSOLVER_STATUS_INTERNAL_ERROR"},
      {CUSOLVER_STATUS_NOT_SUPPORTED, "CUSOLVER_STATUS_NOT_SUPPORTED"},
  };
  for (const auto& [s, name] : kNames)
    if (s == status) return name;
  return "unknown cuSOLVER status";
}

}  // namespace rbfpde::gpu

// Throws with file, line and `what` when `expr` (of type Status) is not `ok`.
#define RBFPDE_GPU_CHECK(Status, ok, library, to_string, what, expr)    \
  do {                                                                  \
    const Status rbfpde_status_ = (expr);                               \
    if (rbfpde_status_ != ok)                                           \
      ::rbfpde::gpu::throw_gpu_error(library, what, __FILE__, __LINE__, \
                                     to_string(rbfpde_status_));        \
  } while (0)

#define CUDA_CHECK(expr) \
  RBFPDE_GPU_CHECK(cudaError_t, cudaSuccess, "CUDA", cudaGetErrorString, #expr, expr)
// After every <<<>>>: a bad launch configuration surfaces here, not at the next sync.
#define CUDA_CHECK_LAUNCH(kernel_name)                                                             \
  RBFPDE_GPU_CHECK(cudaError_t, cudaSuccess, "CUDA", cudaGetErrorString, "launch of " kernel_name, \
                   cudaGetLastError())
#define CUBLAS_CHECK(expr)                                                                        \
  RBFPDE_GPU_CHECK(cublasStatus_t, CUBLAS_STATUS_SUCCESS, "cuBLAS", cublasGetStatusString, #expr, \
                   expr)
#define CUSOLVER_CHECK(expr)                                              \
  RBFPDE_GPU_CHECK(cusolverStatus_t, CUSOLVER_STATUS_SUCCESS, "cuSOLVER", \
                   ::rbfpde::gpu::cusolver_status_string, #expr, expr)
