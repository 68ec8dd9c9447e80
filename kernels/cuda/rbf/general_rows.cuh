// One collocation row's coefficients in registers, and its value and derivatives for one neuron
// through kernels/rbf_math.hpp (the CPU backend's functions, so both backends form the same rows):
//   interior  A·Δₛφ + B·∇φ + C·φ   (operator_row_value / operator_row_terms)
//   boundary  α·φ + β·∂φ/∂n        (boundary_row_value / boundary_row_terms)
// A row is loaded once and serves every neuron a thread visits. B is held as D zeros when the
// batch has no b: the row then equals the one with B omitted, bit for bit (q = Σ 0·diff = 0).
#pragma once

#include "kernels/cuda/rbf/launchers.hpp"
#include "kernels/rbf_math.hpp"

namespace rbfpde::gpu {

template <class T, int D>
struct RowCoefficients {
  bool interior = true;
  T p0 = T(1), p1 = T(0);  // interior: A, C; boundary: α, β
  T v[D] = {};             // interior: B; boundary: the outward normal n
};

// Row `row` (an existing row) of a batch whose first n_int rows are interior.
template <class T, int D>
__device__ __forceinline__ RowCoefficients<T, D> load_row_coefficients(const GeneralRows<T>& g,
                                                                       int row, int n_int) {
  RowCoefficients<T, D> r;
  r.interior = row < n_int;
  if (r.interior) {
    r.p0 = g.a ? g.a[row] : T(1);
    r.p1 = g.c ? g.c[row] : T(0);
#pragma unroll
    for (int j = 0; j < D; ++j) r.v[j] = g.b ? g.b[std::size_t(row) * D + j] : T(0);
  } else {
    const int k = row - n_int;
    r.p0 = g.alpha ? g.alpha[k] : T(1);
    r.p1 = g.beta ? g.beta[k] : T(0);
#pragma unroll
    for (int j = 0; j < D; ++j) r.v[j] = g.normals ? g.normals[std::size_t(k) * D + j] : T(0);
  }
  return r;
}

// The coordinates of Δₛ.
template <int D, class T>
__device__ __forceinline__ int laplacian_dims(const GeneralRows<T>& g) {
  return g.space_dim > 0 && g.space_dim < D ? g.space_dim : D;
}

// The row's feature for the neuron of width a at difference diff = x − c, r² = |diff|².
template <class T, int D>
__device__ __forceinline__ T row_value(const RowCoefficients<T, D>& r, int ds, const T* diff, T r2,
                                       T a) {
  return r.interior ? operator_row_value<D>(diff, r2, a, ds, r.p0, r.v, r.p1)
                    : boundary_row_value<D>(diff, r2, a, r.v, r.p0, r.p1);
}

// The feature and its derivatives with respect to the centre and the width.
template <class T, int D>
__device__ __forceinline__ RowTerms<D, T> row_terms(const RowCoefficients<T, D>& r, int ds,
                                                    const T* diff, T r2, T a) {
  return r.interior ? operator_row_terms<D>(diff, r2, a, ds, r.p0, r.v, r.p1)
                    : boundary_row_terms<D>(diff, r2, a, r.v, r.p0, r.p1);
}

}  // namespace rbfpde::gpu
