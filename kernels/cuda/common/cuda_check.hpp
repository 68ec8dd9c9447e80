// Checked CUDA, cuBLAS and cuSOLVER calls: every failure throws std::runtime_error naming the
// file, the line, the expression and the library's error string. Used by the .cu files only.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace rbfpde::gpu {

[[noreturn]] inline void throw_gpu_error(const char* library, const char* expression,
                                         const char* file, int line, const std::string& what) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + library +
                           " error in `" + expression + "`: " + what);
}

inline const char* cusolver_status_string(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS:
      return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED:
      return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED:
      return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE:
      return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH:
      return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED:
      return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR:
      return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default:
      return "unknown cuSOLVER status";
  }
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
