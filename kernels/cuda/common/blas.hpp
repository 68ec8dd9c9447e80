// float/double overloads of the few cuBLAS and cuSOLVER calls the backend uses, so that the
// backend is written once for both scalar types. Column-major throughout, as the libraries.
#pragma once

#include "kernels/cuda/common/cuda_check.hpp"

namespace rbfpde::gpu::blas {

inline cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int rows, int cols,
                           const double* alpha, const double* a, int lda, const double* x,
                           const double* beta, double* y) {
  return cublasDgemv(h, op, rows, cols, alpha, a, lda, x, 1, beta, y, 1);
}
inline cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int rows, int cols,
                           const float* alpha, const float* a, int lda, const float* x,
                           const float* beta, float* y) {
  return cublasSgemv(h, op, rows, cols, alpha, a, lda, x, 1, beta, y, 1);
}

// y = alpha · A x + beta · y for the symmetric A (n × n, ld n) held in its lower triangle.
inline cublasStatus_t symv_lower(cublasHandle_t h, int n, const double* alpha, const double* a,
                                 const double* x, const double* beta, double* y) {
  return cublasDsymv(h, CUBLAS_FILL_MODE_LOWER, n, alpha, a, n, x, 1, beta, y, 1);
}
inline cublasStatus_t symv_lower(cublasHandle_t h, int n, const float* alpha, const float* a,
                                 const float* x, const float* beta, float* y) {
  return cublasSsymv(h, CUBLAS_FILL_MODE_LOWER, n, alpha, a, n, x, 1, beta, y, 1);
}

// C (n × n, lower) = alpha · Aᵀ A + beta · C for A of k rows × n columns (ld lda).
inline cublasStatus_t syrk_t(cublasHandle_t h, int n, int k, const double* alpha, const double* a,
                             int lda, const double* beta, double* c) {
  return cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k, alpha, a, lda, beta, c, n);
}
inline cublasStatus_t syrk_t(cublasHandle_t h, int n, int k, const float* alpha, const float* a,
                             int lda, const float* beta, float* c) {
  return cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k, alpha, a, lda, beta, c, n);
}

// The same SYRK with an explicit ld for C (for a diagonal block of a larger matrix).
inline cublasStatus_t syrk_t_ld(cublasHandle_t h, int n, int k, const double* alpha,
                                const double* a, int lda, const double* beta, double* c, int ldc) {
  return cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k, alpha, a, lda, beta, c, ldc);
}
inline cublasStatus_t syrk_t_ld(cublasHandle_t h, int n, int k, const float* alpha, const float* a,
                                int lda, const float* beta, float* c, int ldc) {
  return cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k, alpha, a, lda, beta, c, ldc);
}

inline cusolverStatus_t potrf_buffer_size(cusolverDnHandle_t h, int n, double* a, int* lwork) {
  return cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
inline cusolverStatus_t potrf_buffer_size(cusolverDnHandle_t h, int n, float* a, int* lwork) {
  return cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
inline cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double* a, double* work, int lwork,
                              int* info) {
  return cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info);
}
inline cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float* a, float* work, int lwork,
                              int* info) {
  return cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work, lwork, info);
}
inline cusolverStatus_t potrs(cusolverDnHandle_t h, int n, const double* a, double* b, int* info) {
  return cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, a, n, b, n, info);
}
inline cusolverStatus_t potrs(cusolverDnHandle_t h, int n, const float* a, float* b, int* info) {
  return cusolverDnSpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, a, n, b, n, info);
}

// Householder QR (geqrf), Qᵀ·C (ormqr, from the left) and the triangular solve R x = b (trsv),
// for the weights' least-squares solve.
inline cusolverStatus_t geqrf_buffer_size(cusolverDnHandle_t h, int rows, int cols, double* a,
                                          int lda, int* lwork) {
  return cusolverDnDgeqrf_bufferSize(h, rows, cols, a, lda, lwork);
}
inline cusolverStatus_t geqrf_buffer_size(cusolverDnHandle_t h, int rows, int cols, float* a,
                                          int lda, int* lwork) {
  return cusolverDnSgeqrf_bufferSize(h, rows, cols, a, lda, lwork);
}
inline cusolverStatus_t geqrf(cusolverDnHandle_t h, int rows, int cols, double* a, int lda,
                              double* tau, double* work, int lwork, int* info) {
  return cusolverDnDgeqrf(h, rows, cols, a, lda, tau, work, lwork, info);
}
inline cusolverStatus_t geqrf(cusolverDnHandle_t h, int rows, int cols, float* a, int lda,
                              float* tau, float* work, int lwork, int* info) {
  return cusolverDnSgeqrf(h, rows, cols, a, lda, tau, work, lwork, info);
}
inline cusolverStatus_t ormqr_t_buffer_size(cusolverDnHandle_t h, int rows, int cols, int k,
                                            const double* a, int lda, const double* tau,
                                            const double* c, int* lwork) {
  return cusolverDnDormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, rows, cols, k, a, lda, tau,
                                     c, rows, lwork);
}
inline cusolverStatus_t ormqr_t_buffer_size(cusolverDnHandle_t h, int rows, int cols, int k,
                                            const float* a, int lda, const float* tau,
                                            const float* c, int* lwork) {
  return cusolverDnSormqr_bufferSize(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, rows, cols, k, a, lda, tau,
                                     c, rows, lwork);
}
// c (rows × cols, leading dimension rows) = Qᵀ c, Q the product of a's k reflectors.
inline cusolverStatus_t ormqr_t(cusolverDnHandle_t h, int rows, int cols, int k, const double* a,
                                int lda, const double* tau, double* c, double* work, int lwork,
                                int* info) {
  return cusolverDnDormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, rows, cols, k, a, lda, tau, c, rows,
                          work, lwork, info);
}
inline cusolverStatus_t ormqr_t(cusolverDnHandle_t h, int rows, int cols, int k, const float* a,
                                int lda, const float* tau, float* c, float* work, int lwork,
                                int* info) {
  return cusolverDnSormqr(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, rows, cols, k, a, lda, tau, c, rows,
                          work, lwork, info);
}
// x = R⁻¹ x with R the upper triangle of a.
inline cublasStatus_t trsv_upper(cublasHandle_t h, int n, const double* a, int lda, double* x) {
  return cublasDtrsv(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, a, lda, x, 1);
}
inline cublasStatus_t trsv_upper(cublasHandle_t h, int n, const float* a, int lda, float* x) {
  return cublasStrsv(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, a, lda, x, 1);
}

// A (rows × n, ld lda) = A·R⁻¹ with R the upper triangle of r (n × n, ld ldr).
inline cublasStatus_t trsm_right_upper(cublasHandle_t h, int rows, int n, const double* r,
                                       int ldr, double* a, int lda) {
  const double one = 1;
  return cublasDtrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, rows, n, &one, r, ldr, a, lda);
}
inline cublasStatus_t trsm_right_upper(cublasHandle_t h, int rows, int n, const float* r, int ldr,
                                       float* a, int lda) {
  const float one = 1;
  return cublasStrsm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                     CUBLAS_DIAG_NON_UNIT, rows, n, &one, r, ldr, a, lda);
}
// y += alpha·x (alpha in the handle's pointer mode).
inline cublasStatus_t axpy(cublasHandle_t h, int n, const double* alpha, const double* x,
                           double* y) {
  return cublasDaxpy(h, n, alpha, x, 1, y, 1);
}
inline cublasStatus_t axpy(cublasHandle_t h, int n, const float* alpha, const float* x, float* y) {
  return cublasSaxpy(h, n, alpha, x, 1, y, 1);
}
// result = |x|₂ (result in the handle's pointer mode).
inline cublasStatus_t nrm2(cublasHandle_t h, int n, const double* x, double* result) {
  return cublasDnrm2(h, n, x, 1, result);
}
inline cublasStatus_t nrm2(cublasHandle_t h, int n, const float* x, float* result) {
  return cublasSnrm2(h, n, x, 1, result);
}

}  // namespace rbfpde::gpu::blas
