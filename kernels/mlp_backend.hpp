// The operations the MLP trainer needs (docs/mathematics.md, "The MLP"), at the granularity of
// fused steps, in the style of RbfBackend: a backend owns the network's parameters, the Adam
// moments and the current collocation batch (on the device for CUDA); the host sees them only
// through parameters(), gradient(), residual_vectors() and evaluate().
//
// Network: sizes n_0 = d → n_1 … n_L → 1 (hidden widths from the config), h_0 = x' (x mapped
// onto [−1, 1]^d, see MlpOptions),
// h_l = σ(W_l h_{l−1} + b_l) for the hidden layers, u = W_{L+1} h_L + b_{L+1} (linear output).
// The forward pass carries, per point, the value h, its d first derivatives ∂h/∂x_j and its
// Laplacian Δh through every layer, so that Δu comes out exactly (no finite differences):
//   z = W h + b,  h' = σ(z),  ∂h'/∂x_j = σ'(z)⊙(W ∂h/∂x_j),
//   Δh' = σ''(z)⊙Σ_j (W ∂h/∂x_j)² + σ'(z)⊙(W Δh).
// Functional: the RBF one, with the batch's rows (CollocationBatch)
//   e = a·Δₛu + b·∇u + c·u − f (interior),  r = α·u + β·∇u·n − p (boundary),
//   I = 1/(2N) Σ e² + λ/(2K) Σ r²,
// e = Δu − f and r = u − p for a Poisson/Dirichlet batch. Δₛ is the Laplacian stream over the
// first MlpOptions::laplacian_dims coordinates: the forward pass above with Σ_j over those only.
// ∂I/∂θ is a hand-written backward pass through those three streams (no autograd), seeded with
// each row's coefficient of each stream (docs/mathematics.md, "General rows").
//
// Flat parameter layout (parameters(), gradient(), model.yaml): layer by layer, W_l row-major
// (n_l × n_{l−1}) then b_l (n_l).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/comm.hpp"
#include "kernels/loss_parts.hpp"
#include "kernels/mlp_math.hpp"
#include "problems/problem.hpp"

namespace rbfpde {

struct MlpOptions {
  int dim = 2;
  std::vector<int> layers = {50, 50, 50, 50};  // hidden widths
  std::string activation = "tanh";             // tanh | sin | sigmoid
  double penalty = 100;                        // λ
  // The fixed input map x' = 2 (x − input_min) / (input_max − input_min) − 1 in front of the
  // first layer (the domain's bounding box onto [−1, 1]^d, where tanh networks train best);
  // empty: x' = x. The derivative streams carry its chain-rule factors, so ∇u and Δu are in x.
  std::vector<double> input_min, input_max;
  // Coordinates the Laplacian stream acts on (the first ones; CollocationBatch); 0: dim. A batch
  // must have the same (set_batch throws std::invalid_argument otherwise).
  int laplacian_dims = 0;
  // The ranks of a data-parallel run (null: one process): the backends sum the loss, the
  // gradient and (CPU) LM's normal equations over the ranks' shares, with the union's counts
  // (BackendOptions::comm). The CUDA backend takes its distributed path when distributed() is
  // true (make_device_communicator gives it the rank's GPU and NCCL's sums).
  std::shared_ptr<Communicator> comm;
};

// d, hidden widths…, 1.
inline std::vector<int> mlp_layer_sizes(int dim, const std::vector<int>& hidden) {
  std::vector<int> sizes{dim};
  sizes.insert(sizes.end(), hidden.begin(), hidden.end());
  sizes.push_back(1);
  return sizes;
}

// Σ_l n_l (n_{l−1} + 1).
inline std::size_t mlp_parameter_count(int dim, const std::vector<int>& hidden) {
  const std::vector<int> s = mlp_layer_sizes(dim, hidden);
  std::size_t n = 0;
  for (std::size_t l = 1; l < s.size(); ++l) n += std::size_t(s[l]) * (std::size_t(s[l - 1]) + 1);
  return n;
}

template <class T>
class MlpBackend {
 public:
  virtual ~MlpBackend() = default;
  MlpBackend() = default;
  MlpBackend(const MlpBackend&) = delete;
  MlpBackend& operator=(const MlpBackend&) = delete;

  virtual std::string name() const = 0;  // "cpu" | "cuda"
  virtual std::string device_name() const = 0;

  // Flat parameters in the layout above; set_parameters also zeroes the Adam moments, so a
  // restored or freshly loaded network starts its optimiser anew.
  virtual void set_parameters(const std::vector<T>& flat) = 0;
  virtual std::vector<T> parameters() const = 0;
  // Adam's first and second moments (same layout as the parameters), copied to the host, and
  // their restoration: with parameters(), the whole optimiser state a checkpoint keeps. Call
  // set_adam_moments after set_parameters, which zeroes them.
  virtual void adam_moments(std::vector<T>& m, std::vector<T>& v) const = 0;
  virtual void set_adam_moments(const std::vector<T>& m, const std::vector<T>& v) = 0;
  // Replaces the collocation batch (converted to T), its coefficients included. Throws
  // std::invalid_argument for a batch of the wrong dimension or Laplacian coordinates, or whose
  // vectors have sizes its point counts do not give.
  virtual void set_batch(const CollocationBatch& batch) = 0;

  // Backends that draw collocation batches themselves (the CUDA one, on the device, as the RBF
  // backend does: RbfBackend::draws_batches) say so once set_problem has prepared the drawing;
  // set_problem may throw std::runtime_error when it cannot (the trainer then samples on the
  // host). draw_batch draws batch number `index` of the sequence for `seed`: the same
  // (seed, index, sizes) gives the same batch, bit for bit. batch() copies the current batch to
  // the host (normals included).
  virtual bool draws_batches() const { return false; }
  virtual void set_problem(const Problem& problem) {}
  virtual void draw_batch(std::uint64_t seed, std::uint64_t index, std::size_t n_interior,
                          std::size_t n_boundary) {
    throw std::logic_error(name() + " MLP backend does not draw batches");
  }
  virtual CollocationBatch batch() const {
    throw std::logic_error(name() + " MLP backend does not keep a batch to copy back");
  }

  // Forward pass only: e, b and the loss at the current parameters.
  virtual LossParts residuals() = 0;
  // Forward and backward pass: e, b, the loss and ∂I/∂θ at the current parameters; the gradient
  // stays in the backend for adam_step().
  virtual LossParts loss_and_gradient() = 0;
  // The gradient of the last loss_and_gradient() call, copied to the host.
  virtual void gradient(std::vector<T>& g) const = 0;
  // set_parameters(flat), loss_and_gradient() and gradient(g) in one call (an L-BFGS objective
  // evaluation); the CUDA backend synchronises once instead of three times.
  virtual LossParts loss_and_gradient_at(const std::vector<T>& flat, std::vector<T>& g) {
    set_parameters(flat);
    const LossParts l = loss_and_gradient();
    gradient(g);
    return l;
  }
  // One fused Adam update of every parameter from the last gradient; t ≥ 1 is the step number
  // (for the bias corrections 1 − β^t).
  virtual void adam_step(T learning_rate, T beta1, T beta2, T epsilon, long t) = 0;

  // The residuals of the last residuals()/loss_and_gradient() call, copied to the host.
  virtual void residual_vectors(std::vector<T>& e, std::vector<T>& b) const = 0;

  // Gauss–Newton/LM: the scaled residuals R = [e/√N; √(λ/K)·b] (n = N + K) at the current
  // parameters and their Jacobian J = ∂R/∂θ (n × p, row-major), each row from the forward
  // streams and the hand-written backward pass of its point alone (general rows included). Over
  // ranks, this rank's rows, scaled by the union's N and K. The CPU backend has it; others throw
  // std::logic_error.
  virtual void jacobian(std::vector<double>& jac, std::vector<double>& r) {
    throw std::logic_error(name() + " MLP backend has no Jacobian (method lm runs on the CPU)");
  }
  // LM's normal equations at the current parameters: JᵀJ (p × p, row-major, lower triangle
  // meaningful) and JᵀR from jacobian()'s rows. Over ranks (MlpOptions::comm) J and R are the
  // union's (scaled by its counts N and K) and both are summed over the ranks' rows, so every
  // rank holds the system of the whole batch.
  virtual void normal_equations(std::vector<double>& jtj, std::vector<double>& jtr) {
    throw std::logic_error(name() + " MLP backend has no Jacobian (method lm runs on the CPU)");
  }
  // u and Δₛu (over the first laplacian_dims coordinates) of the network at n points (row-major,
  // n × dim, double on the host).
  void evaluate(const std::vector<double>& points, std::vector<double>& u,
                std::vector<double>& laplacian) {
    evaluate_streams(points, &u, nullptr, &laplacian);
  }
  // ∇u at n points (n × dim, row-major): the first-derivative stream's output (with evaluate,
  // what the host needs to form any general row).
  void evaluate_gradient(const std::vector<double>& points, std::vector<double>& gradient) {
    evaluate_streams(points, nullptr, &gradient, nullptr);
  }

  // How many Adam steps the trainer should hand to train_steps() between host checks: 1 keeps
  // the step-by-step loop (CPU); the CUDA backend runs a chunk as one CUDA graph, one sync.
  virtual int steps_per_sync() const { return 1; }
  // Runs steps.size() Adam steps, step i being (draw_batch() when steps[i].draw, which only a
  // backend that draws batches accepts), loss_and_gradient() then adam_step() with steps[i]'s
  // learning rate and t, and appends each step's loss (before its update) to `losses`. Stops
  // early, as the trainer would: after a step whose loss is not finite, without its update, and
  // after a step whose loss is below stop_below, with its update; the steps after it draw
  // nothing either.
  struct AdamStepArgs {
    T learning_rate;
    long t;
    bool draw = false;  // a fresh batch before this step: batch_index of the sequence for seed
    std::uint64_t seed = 0, batch_index = 0;
    std::size_t n_interior = 0, n_boundary = 0;
    // This step draws batch `index` of `seed`'s sequence, of n_interior + n_boundary points.
    AdamStepArgs& drawing(std::uint64_t seed_, std::uint64_t index, std::size_t n_interior_,
                          std::size_t n_boundary_) {
      draw = true;
      seed = seed_;
      batch_index = index;
      n_interior = n_interior_;
      n_boundary = n_boundary_;
      return *this;
    }
  };
  virtual void train_steps(const std::vector<AdamStepArgs>& steps, T beta1, T beta2, T epsilon,
                           double stop_below, std::vector<LossParts>& losses) {
    for (const AdamStepArgs& s : steps) {
      if (s.draw) draw_batch(s.seed, s.batch_index, s.n_interior, s.n_boundary);
      const LossParts l = loss_and_gradient();
      losses.push_back(l);
      if (!std::isfinite(l.loss)) return;
      adam_step(s.learning_rate, beta1, beta2, epsilon, s.t);
      if (l.loss < stop_below) return;
    }
  }

 protected:
  // The forward passes behind evaluate() and evaluate_gradient(): fills whichever of u, ∇u, Δu
  // are non-null.
  virtual void evaluate_streams(const std::vector<double>& points, std::vector<double>* u,
                                std::vector<double>* gradient, std::vector<double>* laplacian) = 0;
};

template <class T>
std::unique_ptr<MlpBackend<T>> make_cpu_mlp_backend(const MlpOptions& options);

// True when this build has the CUDA MLP backend (a CUDA device may still be missing: see
// cuda_device_available()).
bool cuda_mlp_backend_built();
// Throws std::runtime_error when the build has no CUDA MLP backend or no device is present.
template <class T>
std::unique_ptr<MlpBackend<T>> make_cuda_mlp_backend(const MlpOptions& options);

}  // namespace rbfpde
