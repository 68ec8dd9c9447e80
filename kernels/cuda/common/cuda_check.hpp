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

#define CUDA_CHECK(expr)                                                  \
  do {                                                                    \
    const cudaError_t rbfpde_status_ = (expr);                            \
    if (rbfpde_status_ != cudaSuccess)                                    \
      ::rbfpde::gpu::throw_gpu_error("CUDA", #expr, __FILE__, __LINE__,   \
                                     cudaGetErrorString(rbfpde_status_)); \
  } while (0)

// After every <<<>>>: a bad launch configuration surfaces here, not at the next sync.
#define CUDA_CHECK_LAUNCH(kernel_name)                                                     \
  do {                                                                                     \
    const cudaError_t rbfpde_status_ = cudaGetLastError();                                 \
    if (rbfpde_status_ != cudaSuccess)                                                     \
      ::rbfpde::gpu::throw_gpu_error("CUDA", "launch of " kernel_name, __FILE__, __LINE__, \
                                     cudaGetErrorString(rbfpde_status_));                  \
  } while (0)

#define CUBLAS_CHECK(expr)                                                   \
  do {                                                                       \
    const cublasStatus_t rbfpde_status_ = (expr);                            \
    if (rbfpde_status_ != CUBLAS_STATUS_SUCCESS)                             \
      ::rbfpde::gpu::throw_gpu_error("cuBLAS", #expr, __FILE__, __LINE__,    \
                                     cublasGetStatusString(rbfpde_status_)); \
  } while (0)

#define CUSOLVER_CHECK(expr)                                                                 \
  do {                                                                                       \
    const cusolverStatus_t rbfpde_status_ = (expr);                                          \
    if (rbfpde_status_ != CUSOLVER_STATUS_SUCCESS)                                           \
      ::rbfpde::gpu::throw_gpu_error("cuSOLVER", #expr, __FILE__, __LINE__,                  \
                                     ::rbfpde::gpu::cusolver_status_string(rbfpde_status_)); \
  } while (0)
