// The operations the RBF trainers need, at the granularity of fused steps. A backend owns the
// network's parameters and the current collocation batch (on the device for CUDA); the host
// sees them only through parameters(), residual_vectors() and evaluate(). Trainers are written
// once against this interface; the CPU backend is the reference every other backend matches.
//
// Functional (DESIGN.md §2), with N interior and K boundary points:
//   e = M w − f, b = N w − p,  I = 1/(2N) Σ e² + λ/(2K) Σ b²
// Parameters θ = (w, c, a) are flattened in that order: w[m], c[m·d] (row-major), a[m].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "problems/problem.hpp"

namespace rbfpde {

template <class T>
struct RbfParameters {
  int dim = 2;
  std::vector<T> weights;  // m
  std::vector<T> centres;  // m × dim, row-major
  std::vector<T> widths;   // m
  int neurons() const { return static_cast<int>(weights.size()); }
  std::size_t size() const { return weights.size() + centres.size() + widths.size(); }
};

struct LossParts {
  double loss = 0;          // I
  double rms_interior = 0;  // sqrt(Σe²/N)
  double rms_boundary = 0;  // sqrt(Σb²/K)
};

struct CgResult {
  int iterations = 0;
  double relative_residual = 0;  // |s − A w| / |s| at exit
};

struct BackendOptions {
  int dim = 2;
  double penalty = 100;    // λ
  double min_width = 1e-4; // widths are clamped to stay ≥ this
};

template <class T>
class RbfBackend {
 public:
  virtual ~RbfBackend() = default;
  RbfBackend() = default;
  RbfBackend(const RbfBackend&) = delete;
  RbfBackend& operator=(const RbfBackend&) = delete;

  virtual std::string name() const = 0;         // "cpu" | "cuda"
  virtual std::string device_name() const = 0;  // e.g. "NVIDIA H100 80GB HBM3" or the CPU model

  virtual void set_parameters(const RbfParameters<T>& params) = 0;
  virtual RbfParameters<T> parameters() const = 0;
  // Replaces the collocation batch (converted to T).
  virtual void set_batch(const CollocationBatch& batch) = 0;

  // One fused pass over points × neurons: e, b and the loss at the current parameters.
  virtual LossParts residuals() = 0;
  // The residuals of the last residuals()/solve/LM call, copied to the host.
  virtual void residual_vectors(std::vector<T>& e, std::vector<T>& b) const = 0;

  // Residuals and the full gradient ∂I/∂θ (same layout as the parameters).
  virtual LossParts gradient(RbfParameters<T>& grad) = 0;
  // `steps` gradient-descent steps on centres and widths with the weights fixed
  // (c −= η ∂I/∂c, a −= η ∂I/∂a, widths clamped). Returns the loss before the last step.
  virtual LossParts gd_steps(int steps, T learning_rate) = 0;

  // Weight solve with centres and widths fixed: CG on (MᵀM/N + λNᵀN/K) w = Mᵀf/N + λNᵀp/K,
  // warm-started from the current weights. Leaves the residuals at the new weights.
  virtual CgResult solve_weights_cg(int max_iterations, T tolerance) = 0;
  // The same system solved directly (Cholesky) with `ridge`·I added: least-squares weights.
  virtual void solve_weights_direct(T ridge) = 0;

  // Levenberg–Marquardt: lm_prepare() builds J, JᵀJ and JᵀR at the current θ and returns I(θ);
  // lm_try(μ) moves to θ + δ with (JᵀJ + μ·diag JᵀJ) δ = −JᵀR and returns I there;
  // lm_reject() returns to θ. Several lm_try calls may follow one lm_prepare.
  virtual LossParts lm_prepare() = 0;
  virtual LossParts lm_try(T mu) = 0;
  virtual void lm_reject() = 0;

  // u and Δu of the network at n points (row-major, n × dim, double on the host).
  virtual void evaluate(const std::vector<double>& points, std::vector<double>& u,
                        std::vector<double>& laplacian) = 0;
};

template <class T>
std::unique_ptr<RbfBackend<T>> make_cpu_backend(const BackendOptions& options);

// True when this build has the CUDA backend and a CUDA device is present.
bool cuda_device_available();
// Throws std::runtime_error when the build has no CUDA backend or no device is present.
template <class T>
std::unique_ptr<RbfBackend<T>> make_cuda_backend(const BackendOptions& options);

}  // namespace rbfpde
