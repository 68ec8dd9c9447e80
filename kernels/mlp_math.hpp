// The MLP's activations and their first three derivatives (docs/mathematics.md, "The MLP"),
// written once for both backends. The forward pass needs σ, σ', σ'' (value, gradient and
// Laplacian streams); the backward pass through the Laplacian stream Δh' = σ''(z)·S + σ'(z)·C
// needs σ''' as well.
//   tanh:    s = tanh z, s' = 1 − s², s'' = −2 s s', s''' = −2 (s'² + s s'')
//   sin:     s = sin z,  s' = cos z,  s'' = −sin z,  s''' = −cos z
//   sigmoid: s = 1/(1 + e^−z), s' = s(1 − s), s'' = s'(1 − 2s), s''' = s''(1 − 2s) − 2 s'²
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/host_device.hpp"

namespace rbfpde {

enum class Activation : int { kTanh = 0, kSin = 1, kSigmoid = 2 };

template <class T>
struct ActivationTerms {
  T s;   // σ(z)
  T d1;  // σ'(z)
  T d2;  // σ''(z)
  T d3;  // σ'''(z)
};

RBFPDE_HD float mlp_tanh(float z) { return tanhf(z); }
RBFPDE_HD double mlp_tanh(double z) { return tanh(z); }
RBFPDE_HD float mlp_sin(float z) { return sinf(z); }
RBFPDE_HD double mlp_sin(double z) { return sin(z); }
RBFPDE_HD float mlp_cos(float z) { return cosf(z); }
RBFPDE_HD double mlp_cos(double z) { return cos(z); }
RBFPDE_HD float mlp_exp(float z) { return expf(z); }
RBFPDE_HD double mlp_exp(double z) { return exp(z); }

// Written so that large |z| gives 0 or 1 rather than Inf/Inf.
template <class T>
RBFPDE_HD T mlp_sigmoid(T z) {
  if (z >= T(0)) return T(1) / (T(1) + mlp_exp(-z));
  const T e = mlp_exp(z);
  return e / (T(1) + e);
}

// tanh and sigmoid: σ', σ'', σ''' are functions of the value s = σ(z) alone.
RBFPDE_HD constexpr bool activation_terms_from_value_only(Activation a) {
  return a != Activation::kSin;
}

// The terms of tanh or sigmoid from s = σ(z) (activation_terms_from_value_only).
template <class T>
RBFPDE_HD ActivationTerms<T> activation_terms_from_value(Activation a, T s) {
  ActivationTerms<T> t;
  t.s = s;
  if (a == Activation::kSigmoid) {
    t.d1 = s * (T(1) - s);
    t.d2 = t.d1 * (T(1) - T(2) * s);
    t.d3 = t.d2 * (T(1) - T(2) * s) - T(2) * t.d1 * t.d1;
  } else {
    t.d1 = T(1) - s * s;
    t.d2 = T(-2) * s * t.d1;
    t.d3 = T(-2) * (t.d1 * t.d1 + s * t.d2);
  }
  return t;
}

template <class T>
RBFPDE_HD ActivationTerms<T> activation_terms(Activation a, T z) {
  ActivationTerms<T> t;
  switch (a) {
    case Activation::kSin: {
      const T s = mlp_sin(z), c = mlp_cos(z);
      t.s = s;
      t.d1 = c;
      t.d2 = -s;
      t.d3 = -c;
      break;
    }
    case Activation::kSigmoid:
      t = activation_terms_from_value(a, mlp_sigmoid(z));
      break;
    case Activation::kTanh:
    default:
      t = activation_terms_from_value(Activation::kTanh, mlp_tanh(z));
      break;
  }
  return t;
}

// The terms at z0: the pre-activation z, or σ(z) itself when from_value (tanh and sigmoid only:
// activation_terms_from_value_only). Unused terms cost nothing once inlined.
template <class T>
RBFPDE_HD ActivationTerms<T> activation_terms_at(Activation a, T z0, bool from_value) {
  return from_value ? activation_terms_from_value(a, z0) : activation_terms(a, z0);
}

// σ and σ' only: what the value stream of boundary points needs.
template <class T>
RBFPDE_HD void activation_value_slope(Activation a, T z, T& s, T& d1) {
  switch (a) {
    case Activation::kSin:
      s = mlp_sin(z);
      d1 = mlp_cos(z);
      break;
    case Activation::kSigmoid:
      s = mlp_sigmoid(z);
      d1 = s * (T(1) - s);
      break;
    case Activation::kTanh:
    default:
      s = mlp_tanh(z);
      d1 = T(1) - s * s;
      break;
  }
}

// ---- The streams through one activation, per unit and point --------------------------------
// Written once for the CPU reference and every CUDA kernel, which keep their own loops and
// layouts around them. With z the pre-activation, A_j = W ∂h/∂x_j its first-derivative streams,
// C = W Δh its Laplacian stream and S = Σ_j A_j², the streams of h' = σ(z) are
//   ∂h'/∂x_j = σ' A_j,   Δh' = σ'' S + σ' C,
// and the adjoints, from those of the output streams h̄, ḡ_j, l̄ back to z̄, Ā_j, C̄:
//   z̄ = h̄ σ' + σ'' Σ_j ḡ_j A_j + l̄ (σ''' S + σ'' C),   Ā_j = ḡ_j σ' + 2 l̄ σ'' A_j,   C̄ = l̄ σ'.
template <class T>
RBFPDE_HD T stream_slope(const ActivationTerms<T>& t, T a) {
  return t.d1 * a;
}
// sum_sq = S, c = C.
template <class T>
RBFPDE_HD T stream_laplacian(const ActivationTerms<T>& t, T sum_sq, T c) {
  return t.d2 * sum_sq + t.d1 * c;
}
// z̄ from h̄, Σ_j ḡ_j A_j, l̄, S and C.
template <class T>
RBFPDE_HD T adjoint_value(const ActivationTerms<T>& t, T hbar, T gbar_dot_a, T lbar, T sum_sq,
                          T c) {
  return hbar * t.d1 + t.d2 * gbar_dot_a + lbar * (t.d3 * sum_sq + t.d2 * c);
}
// Ā_j from ḡ_j, l̄ and A_j.
template <class T>
RBFPDE_HD T adjoint_slope(const ActivationTerms<T>& t, T gbar, T lbar, T a) {
  return gbar * t.d1 + T(2) * lbar * t.d2 * a;
}
// C̄ from l̄.
template <class T>
RBFPDE_HD T adjoint_laplacian(const ActivationTerms<T>& t, T lbar) {
  return lbar * t.d1;
}

// "tanh" | "sin" | "sigmoid"; throws std::invalid_argument otherwise.
inline Activation parse_activation(const std::string& name) {
  if (name == "tanh") return Activation::kTanh;
  if (name == "sin") return Activation::kSin;
  if (name == "sigmoid") return Activation::kSigmoid;
  throw std::invalid_argument("unknown activation \"" + name +
                              "\" (expected tanh, sin or sigmoid)");
}

}  // namespace rbfpde
