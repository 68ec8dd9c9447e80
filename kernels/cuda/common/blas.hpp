// The few cuBLAS and cuSOLVER calls the backend uses, as templates on the scalar type (float or
// double), so that the backend is written once for both. Column-major throughout, as the
// libraries.
#pragma once

#include <type_traits>

#include "kernels/cuda/common/cuda_check.hpp"

namespace rbfpde::gpu::blas {

// The library's double or float entry point (d or s) of a routine, by T.
template <class T, class D, class S>
constexpr auto pick(D d, S s) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>, "float or double only");
  if constexpr (std::is_same_v<T, double>)
    return d;
  else
    return s;
}

template <class T>
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t op, int rows, int cols, const T* alpha,
                    const T* a, int lda, const T* x, const T* beta, T* y) {
  return pick<T>(cublasDgemv, cublasSgemv)(h, op, rows, cols, alpha, a, lda, x, 1, beta, y, 1);
}

// y = alpha · A x + beta · y for the symmetric A (n × n, ld n) held in its lower triangle.
template <class T>
cublasStatus_t symv_lower(cublasHandle_t h, int n, const T* alpha, const T* a, const T* x,
                          const T* beta, T* y) {
  return pick<T>(cublasDsymv, cublasSsymv)(h, CUBLAS_FILL_MODE_LOWER, n, alpha, a, n, x, 1, beta, y,
                                           1);
}

// C (n × n, lower, ld ldc) = alpha · Aᵀ A + beta · C for A of k rows × n columns (ld lda); ldc
// other than n for a diagonal block of a larger matrix.
template <class T>
cublasStatus_t syrk_t_ld(cublasHandle_t h, int n, int k, const T* alpha, const T* a, int lda,
                         const T* beta, T* c, int ldc) {
  return pick<T>(cublasDsyrk, cublasSsyrk)(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k, alpha, a,
                                           lda, beta, c, ldc);
}
template <class T>
cublasStatus_t syrk_t(cublasHandle_t h, int n, int k, const T* alpha, const T* a, int lda,
                      const T* beta, T* c) {
  return syrk_t_ld(h, n, k, alpha, a, lda, beta, c, n);
}

template <class T>
cusolverStatus_t potrf_buffer_size(cusolverDnHandle_t h, int n, T* a, int* lwork) {
  return pick<T>(cusolverDnDpotrf_bufferSize, cusolverDnSpotrf_bufferSize)(
      h, CUBLAS_FILL_MODE_LOWER, n, a, n, lwork);
}
template <class T>
cusolverStatus_t potrf(cusolverDnHandle_t h, int n, T* a, T* work, int lwork, int* info) {
  return pick<T>(cusolverDnDpotrf, cusolverDnSpotrf)(h, CUBLAS_FILL_MODE_LOWER, n, a, n, work,
                                                     lwork, info);
}
// b (n × cols, ld ldb) = (LLᵀ)⁻¹ b for L in the lower triangle of a (n × n, ld n) from potrf.
template <class T>
cusolverStatus_t potrs_columns(cusolverDnHandle_t h, int n, int cols, const T* a, T* b, int ldb,
                               int* info) {
  return pick<T>(cusolverDnDpotrs, cusolverDnSpotrs)(h, CUBLAS_FILL_MODE_LOWER, n, cols, a, n, b,
                                                     ldb, info);
}
template <class T>
cusolverStatus_t potrs(cusolverDnHandle_t h, int n, const T* a, T* b, int* info) {
  return potrs_columns(h, n, 1, a, b, n, info);
}

// C (rows × cols, ld ldc) = alpha · op(A)·op(B) + beta · C, op(A) rows × k, op(B) k × cols.
template <class T>
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t op_a, cublasOperation_t op_b, int rows,
                    int cols, int k, const T* alpha, const T* a, int lda, const T* b, int ldb,
                    const T* beta, T* c, int ldc) {
  return pick<T>(cublasDgemm, cublasSgemm)(h, op_a, op_b, rows, cols, k, alpha, a, lda, b, ldb,
                                           beta, c, ldc);
}

// b (n × cols, ld ldb) = Lᵀ·b in place, L the lower triangle of l (n × n, ld ldl).
template <class T>
cublasStatus_t trmm_left_lower_t(cublasHandle_t h, int n, int cols, const T* l, int ldl, T* b,
                                 int ldb) {
  const T one = 1;
  return pick<T>(cublasDtrmm, cublasStrmm)(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                           CUBLAS_DIAG_NON_UNIT, n, cols, &one, l, ldl, b, ldb, b,
                                           ldb);
}

// Householder QR (geqrf), Qᵀ·C (ormqr, from the left) and the triangular solve R x = b (trsv),
// for the weights' least-squares solve.
template <class T>
cusolverStatus_t geqrf_buffer_size(cusolverDnHandle_t h, int rows, int cols, T* a, int lda,
                                   int* lwork) {
  return pick<T>(cusolverDnDgeqrf_bufferSize, cusolverDnSgeqrf_bufferSize)(h, rows, cols, a, lda,
                                                                           lwork);
}
template <class T>
cusolverStatus_t geqrf(cusolverDnHandle_t h, int rows, int cols, T* a, int lda, T* tau, T* work,
                       int lwork, int* info) {
  return pick<T>(cusolverDnDgeqrf, cusolverDnSgeqrf)(h, rows, cols, a, lda, tau, work, lwork, info);
}
template <class T>
cusolverStatus_t ormqr_t_buffer_size(cusolverDnHandle_t h, int rows, int cols, int k, const T* a,
                                     int lda, const T* tau, const T* c, int* lwork) {
  return pick<T>(cusolverDnDormqr_bufferSize, cusolverDnSormqr_bufferSize)(
      h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, rows, cols, k, a, lda, tau, c, rows, lwork);
}
// c (rows × cols, leading dimension rows) = Qᵀ c, Q the product of a's k reflectors.
template <class T>
cusolverStatus_t ormqr_t(cusolverDnHandle_t h, int rows, int cols, int k, const T* a, int lda,
                         const T* tau, T* c, T* work, int lwork, int* info) {
  return pick<T>(cusolverDnDormqr, cusolverDnSormqr)(h, CUBLAS_SIDE_LEFT, CUBLAS_OP_T, rows, cols,
                                                     k, a, lda, tau, c, rows, work, lwork, info);
}
// x = R⁻¹ x with R the upper triangle of a.
template <class T>
cublasStatus_t trsv_upper(cublasHandle_t h, int n, const T* a, int lda, T* x) {
  return pick<T>(cublasDtrsv, cublasStrsv)(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N,
                                           CUBLAS_DIAG_NON_UNIT, n, a, lda, x, 1);
}

// A (rows × n, ld lda) = A·R⁻¹ with R the upper triangle of r (n × n, ld ldr).
template <class T>
cublasStatus_t trsm_right_upper(cublasHandle_t h, int rows, int n, const T* r, int ldr, T* a,
                                int lda) {
  const T one = 1;
  return pick<T>(cublasDtrsm, cublasStrsm)(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER,
                                           CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, rows, n, &one, r, ldr,
                                           a, lda);
}
// y += alpha·x (alpha in the handle's pointer mode).
template <class T>
cublasStatus_t axpy(cublasHandle_t h, int n, const T* alpha, const T* x, T* y) {
  return pick<T>(cublasDaxpy, cublasSaxpy)(h, n, alpha, x, 1, y, 1);
}
// result = |x|₂ (result in the handle's pointer mode).
template <class T>
cublasStatus_t nrm2(cublasHandle_t h, int n, const T* x, T* result) {
  return pick<T>(cublasDnrm2, cublasSnrm2)(h, n, x, 1, result);
}

}  // namespace rbfpde::gpu::blas
