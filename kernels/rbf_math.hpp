// The Gaussian neuron and its derivatives (docs/mathematics.md), written once for both backends.
//   φ = exp(−r²/a²), r² = |x − c|², g = 4r²/a⁴ − 2d/a², Δφ = φ·g
//   ∂φ/∂c = 2(x − c)/a² · φ              ∂φ/∂a = 2r²/a³ · φ
//   ∂Δφ/∂c = 2(x − c)/a² · φ · (g − 4/a²)  ∂Δφ/∂a = φ · (2r²/a³ · g − 16r²/a⁵ + 4d/a³)
//   ∂φ/∂n = −2 (x − c)·n / a² · φ
// The c-derivatives are returned as scalars s with ∂/∂c = s · (x − c), so a caller multiplies
// by the difference vector it already holds.
#pragma once

#include <cmath>

#include "kernels/host_device.hpp"

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

// Per-neuron constants of the terms above, for kernels that evaluate one neuron at many points:
// everything that depends on a alone is computed once, so a pair costs exp plus ≈ 12 operations.
// The same quantities as gaussian_terms, associated differently (a few ulps apart).
template <class T>
struct NeuronConstants {
  T ia2;       // 1/a²
  T g1, g0;    // g = g1·t − g0 with t = r²/a²: g1 = 4/a², g0 = 2d/a²
  T dc;        // 2/a²
  T dc4;       // 4/a² (∂Δφ/∂c = ∂φ/∂c · (g − 4/a²))
  T da;        // 2/a³ (2r²/a³ = r²·da)
  T da16;      // 16/a⁵
  T da4d;      // 4d/a³
};

template <int D, class T>
RBFPDE_HD NeuronConstants<T> neuron_constants(T a) {
  NeuronConstants<T> k;
  const T ia = T(1) / a;
  k.ia2 = ia * ia;
  k.g1 = T(4) * k.ia2;
  k.g0 = T(2 * D) * k.ia2;
  k.dc = T(2) * k.ia2;
  k.dc4 = T(4) * k.ia2;
  k.da = T(2) * k.ia2 * ia;
  k.da16 = T(16) * k.ia2 * k.ia2 * ia;
  k.da4d = T(4 * D) * k.ia2 * ia;
  return k;
}

// gaussian_terms_from_constants with t = r²/a² (r2 * k.ia2) and φ = exp(−t) given: for callers
// that take the exponentials of many pairs at once.
template <int D, class T>
RBFPDE_HD NeuronTerms<T> gaussian_terms_given_phi(T r2, T t, T phi, const NeuronConstants<T>& k) {
  const T g = k.g1 * t - k.g0;
  NeuronTerms<T> out;
  out.phi = phi;
  out.lap = phi * g;
  out.phi_dc = k.dc * phi;
  out.lap_dc = out.phi_dc * (g - k.dc4);
  const T two_r2_a3 = r2 * k.da;
  out.phi_da = two_r2_a3 * phi;
  out.lap_da = phi * (two_r2_a3 * g - r2 * k.da16 + k.da4d);
  return out;
}

template <int D, class T>
RBFPDE_HD NeuronTerms<T> gaussian_terms_from_constants(T r2, const NeuronConstants<T>& k) {
  const T t = r2 * k.ia2;
  return gaussian_terms_given_phi<D>(r2, t, rbf_exp(-t), k);
}

// Δφ = φ · (1/a²)(4t − 2d) for t = r²/a² and φ = exp(−t).
template <int D, class T>
RBFPDE_HD T gaussian_laplacian_given_phi(T t, T inv_a2, T phi) {
  return phi * (inv_a2 * (T(4) * t - T(2 * D)));
}

// φ and Δφ with 1/a² precomputed: φ = exp(−t), t = r²/a².
template <int D, class T>
RBFPDE_HD void gaussian_value_laplacian_from_inverse(T r2, T inv_a2, T& phi, T& lap) {
  const T t = r2 * inv_a2;
  phi = rbf_exp(-t);
  lap = gaussian_laplacian_given_phi<D>(t, inv_a2, phi);
}

// The gradient step on one neuron's centre and width, η·∂I/∂c and η·∂I/∂a, each shortened to
// at most kGdStepLimit × the neuron's width. A plain step η·∇I can fling a narrow neuron
// (gradients grow like 1/a³) far outside the domain, or its width through zero; the limit
// keeps every step local to the neuron, where the gradient is a good model, and leaves the
// ordinary small steps untouched. NaN passes through, so divergence is still seen.
constexpr double kGdStepLimit = 0.25;

template <int D, class T>
RBFPDE_HD void limited_gd_step(const T* grad_c, T grad_a, T a, T learning_rate, T* step_c,
                               T& step_a) {
  const T limit = T(kGdStepLimit) * a;
  T norm2 = T(0);
  for (int j = 0; j < D; ++j) {
    step_c[j] = learning_rate * grad_c[j];
    norm2 += step_c[j] * step_c[j];
  }
  if (norm2 > limit * limit) {
    const T scale = limit / sqrt(norm2);
    for (int j = 0; j < D; ++j) step_c[j] *= scale;
  }
  step_a = learning_rate * grad_a;
  if (step_a > limit) step_a = limit;
  if (step_a < -limit) step_a = -limit;
}

// The plain gradient step η·∂I/∂c, η·∂I/∂a of one neuron (d centre coordinates) over the step
// limit kGdStepLimit × a: the larger of the two lengths. Above 1, limited_gd_step shortens it; far
// above 1, the limit and not the gradient sets the neuron's steps.
inline double gd_step_over_limit(const double* grad_c, int d, double grad_a, double a,
                                 double learning_rate) {
  double norm2 = 0;
  for (int j = 0; j < d; ++j) norm2 += grad_c[j] * grad_c[j];
  const double centre = std::sqrt(norm2), width = std::abs(grad_a);
  const double step = learning_rate * (centre > width ? centre : width);
  return step / (kGdStepLimit * a);
}

// ∂φ/∂n at x for the outward normal n (Neumann conditions).
template <int D, class T>
RBFPDE_HD T gaussian_normal_derivative(const T* diff, const T* n, T phi, T a) {
  T dot = T(0);
  for (int j = 0; j < D; ++j) dot += diff[j] * n[j];
  return T(-2) * dot / (a * a) * phi;
}

}  // namespace rbfpde

namespace rbfpde {

// General rows (docs/mathematics.md, "Operators and conditions"). With diff = x − c, r² = |diff|²,
// r²ₛ = Σ_{j<ds} diff_j² (the first ds coordinates are space, the rest time) and q = β·diff:
//   interior row  Lφ = A·Δₛφ + B·∇φ + C·φ = φ·G,  G = A·(4r²ₛ/a⁴ − 2ds/a²) − 2(B·diff)/a² + C
//     ∂Lφ/∂c_k = φ·(2G/a² · diff_k − 8A/a⁴ · diff_k·[k < ds] + 2B_k/a²)
//     ∂Lφ/∂a   = φ·(2r²/a³ · G − 16A·r²ₛ/a⁵ + 4A·ds/a³ + 4(B·diff)/a³)
//   boundary row  Bφ = α·φ + β·∂φ/∂n = φ·H,  H = α − 2β(n·diff)/a²
//     ∂Bφ/∂c_k = φ·(2H/a² · diff_k + 2β·n_k/a²)
//     ∂Bφ/∂a   = φ·(2r²/a³ · H + 4β(n·diff)/a³)
// With A = 1, B = 0, C = 0, ds = D these are Δφ and its derivatives above; with α = 1, β = 0 they
// are φ and its derivatives. B (or n) may be null, meaning zero.
template <int D, class T>
struct RowTerms {
  T value;  // the row's feature: Lφ or Bφ
  T dc[D];  // its derivative with respect to the centre
  T da;     // and to the width
};

// The value of an interior row only.
template <int D, class T>
RBFPDE_HD T operator_row_value(const T* diff, T r2, T a, int ds, T A, const T* B, T C) {
  const T ia2 = T(1) / (a * a);
  T r2s = T(0), q = T(0);
  for (int j = 0; j < D; ++j) {
    if (j < ds) r2s += diff[j] * diff[j];
    if (B) q += B[j] * diff[j];
  }
  const T phi = rbf_exp(-r2 * ia2);
  return phi * (A * (T(4) * r2s * ia2 * ia2 - T(2) * T(ds) * ia2) - T(2) * q * ia2 + C);
}

template <int D, class T>
RBFPDE_HD RowTerms<D, T> operator_row_terms(const T* diff, T r2, T a, int ds, T A, const T* B,
                                            T C) {
  const T ia = T(1) / a;
  const T ia2 = ia * ia;
  T r2s = T(0), q = T(0);
  for (int j = 0; j < D; ++j) {
    if (j < ds) r2s += diff[j] * diff[j];
    if (B) q += B[j] * diff[j];
  }
  const T phi = rbf_exp(-r2 * ia2);
  const T G = A * (T(4) * r2s * ia2 * ia2 - T(2) * T(ds) * ia2) - T(2) * q * ia2 + C;
  RowTerms<D, T> t;
  t.value = phi * G;
  const T s_diff = T(2) * G * ia2;
  const T s_space = T(8) * A * ia2 * ia2;
  for (int k = 0; k < D; ++k) {
    T v = s_diff * diff[k];
    if (k < ds) v -= s_space * diff[k];
    if (B) v += T(2) * B[k] * ia2;
    t.dc[k] = phi * v;
  }
  t.da = phi * (T(2) * r2 * ia2 * ia * G - T(16) * A * r2s * ia2 * ia2 * ia +
                T(4) * A * T(ds) * ia2 * ia + T(4) * q * ia2 * ia);
  return t;
}

// The value of a boundary row only.
template <int D, class T>
RBFPDE_HD T boundary_row_value(const T* diff, T r2, T a, const T* n, T alpha, T beta) {
  const T ia2 = T(1) / (a * a);
  T s = T(0);
  if (n)
    for (int j = 0; j < D; ++j) s += n[j] * diff[j];
  return rbf_exp(-r2 * ia2) * (alpha - T(2) * beta * s * ia2);
}

template <int D, class T>
RBFPDE_HD RowTerms<D, T> boundary_row_terms(const T* diff, T r2, T a, const T* n, T alpha,
                                            T beta) {
  const T ia = T(1) / a;
  const T ia2 = ia * ia;
  T s = T(0);
  if (n)
    for (int j = 0; j < D; ++j) s += n[j] * diff[j];
  const T phi = rbf_exp(-r2 * ia2);
  const T H = alpha - T(2) * beta * s * ia2;
  RowTerms<D, T> t;
  t.value = phi * H;
  for (int k = 0; k < D; ++k)
    t.dc[k] = phi * (T(2) * H * ia2 * diff[k] + (n ? T(2) * beta * n[k] * ia2 : T(0)));
  t.da = phi * (T(2) * r2 * ia2 * ia * H + T(4) * beta * s * ia2 * ia);
  return t;
}

// ∇φ at x: −2 diff/a² · φ; returns φ.
template <int D, class T>
RBFPDE_HD T gaussian_gradient(const T* diff, T r2, T a, T* grad) {
  const T ia2 = T(1) / (a * a);
  const T phi = rbf_exp(-r2 * ia2);
  for (int j = 0; j < D; ++j) grad[j] = T(-2) * diff[j] * ia2 * phi;
  return phi;
}

}  // namespace rbfpde
