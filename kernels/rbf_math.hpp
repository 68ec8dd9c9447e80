// The Gaussian neuron and its derivatives (DESIGN.md §2), written once for both backends.
//   φ = exp(−r²/a²), r² = |x − c|², g = 4r²/a⁴ − 2d/a², Δφ = φ·g
//   ∂φ/∂c = 2(x − c)/a² · φ              ∂φ/∂a = 2r²/a³ · φ
//   ∂Δφ/∂c = 2(x − c)/a² · φ · (g − 4/a²)  ∂Δφ/∂a = φ · (2r²/a³ · g − 16r²/a⁵ + 4d/a³)
//   ∂φ/∂n = −2 (x − c)·n / a² · φ
// The c-derivatives are returned as scalars s with ∂/∂c = s · (x − c), so a caller multiplies
// by the difference vector it already holds.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define RBFPDE_HD __host__ __device__ __forceinline__
#else
#define RBFPDE_HD inline
#endif

namespace rbfpde {

template <class T>
struct NeuronTerms {
  T phi;      // φ
  T lap;      // Δφ
  T phi_dc;   // ∂φ/∂c  = phi_dc · (x − c)
  T lap_dc;   // ∂Δφ/∂c = lap_dc · (x − c)
  T phi_da;   // ∂φ/∂a
  T lap_da;   // ∂Δφ/∂a
};

RBFPDE_HD float rbf_exp(float v) { return expf(v); }
RBFPDE_HD double rbf_exp(double v) { return exp(v); }

// r² and x − c for a D-dimensional point.
template <int D, class T>
RBFPDE_HD T squared_distance(const T* x, const T* c, T* diff) {
  T r2 = T(0);
  for (int j = 0; j < D; ++j) {
    diff[j] = x[j] - c[j];
    r2 += diff[j] * diff[j];
  }
  return r2;
}

// φ and Δφ only: what the residual needs.
template <int D, class T>
RBFPDE_HD void gaussian_value_laplacian(T r2, T a, T& phi, T& lap) {
  const T inv_a2 = T(1) / (a * a);
  phi = rbf_exp(-r2 * inv_a2);
  lap = phi * (T(4) * r2 * inv_a2 * inv_a2 - T(2 * D) * inv_a2);
}

// Everything the gradient and the Jacobian need.
template <int D, class T>
RBFPDE_HD NeuronTerms<T> gaussian_terms(T r2, T a) {
  const T inv_a = T(1) / a;
  const T inv_a2 = inv_a * inv_a;
  const T phi = rbf_exp(-r2 * inv_a2);
  const T g = T(4) * r2 * inv_a2 * inv_a2 - T(2 * D) * inv_a2;
  NeuronTerms<T> t;
  t.phi = phi;
  t.lap = phi * g;
  t.phi_dc = T(2) * inv_a2 * phi;
  t.lap_dc = t.phi_dc * (g - T(4) * inv_a2);
  const T two_r2_a3 = T(2) * r2 * inv_a2 * inv_a;
  t.phi_da = two_r2_a3 * phi;
  t.lap_da = phi * (two_r2_a3 * g - T(16) * r2 * inv_a2 * inv_a2 * inv_a + T(4 * D) * inv_a2 * inv_a);
  return t;
}

// The same terms with 1/a precomputed per neuron, so that a kernel looping over point–neuron pairs
// does no division (an FP64 division costs ≈ 10 dependent instructions on a GPU). Same
// expressions as gaussian_terms from inv_a2 = inv_a·inv_a on.
template <int D, class T>
RBFPDE_HD NeuronTerms<T> gaussian_terms_from_inverse(T r2, T inv_a) {
  const T inv_a2 = inv_a * inv_a;
  const T phi = rbf_exp(-r2 * inv_a2);
  const T g = T(4) * r2 * inv_a2 * inv_a2 - T(2 * D) * inv_a2;
  NeuronTerms<T> t;
  t.phi = phi;
  t.lap = phi * g;
  t.phi_dc = T(2) * inv_a2 * phi;
  t.lap_dc = t.phi_dc * (g - T(4) * inv_a2);
  const T two_r2_a3 = T(2) * r2 * inv_a2 * inv_a;
  t.phi_da = two_r2_a3 * phi;
  t.lap_da = phi * (two_r2_a3 * g - T(16) * r2 * inv_a2 * inv_a2 * inv_a + T(4 * D) * inv_a2 * inv_a);
  return t;
}

// φ and Δφ with 1/a² precomputed: φ = exp(−t), Δφ = φ · (1/a²)(4t − 2d), t = r²/a².
template <int D, class T>
RBFPDE_HD void gaussian_value_laplacian_from_inverse(T r2, T inv_a2, T& phi, T& lap) {
  const T t = r2 * inv_a2;
  phi = rbf_exp(-t);
  lap = phi * (inv_a2 * (T(4) * t - T(2 * D)));
}

// ∂φ/∂n at x for the outward normal n (Neumann conditions).
template <int D, class T>
RBFPDE_HD T gaussian_normal_derivative(const T* diff, const T* n, T phi, T a) {
  T dot = T(0);
  for (int j = 0; j < D; ++j) dot += diff[j] * n[j];
  return T(-2) * dot / (a * a) * phi;
}

}  // namespace rbfpde
