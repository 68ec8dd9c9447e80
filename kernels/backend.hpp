// The operations the RBF trainers need, at the granularity of fused steps. A backend owns the
// network's parameters and the current collocation batch (on the device for CUDA); the host
// sees them only through parameters(), residual_vectors() and evaluate(). Trainers are written
// once against this interface; the CPU backend is the reference every other backend matches.
//
// Functional (docs/mathematics.md), with N interior and K boundary points:
//   e = M w − f, b = N w − p,  I = 1/(2N) Σ e² + λ/(2K) Σ b²
// Parameters θ = (w, c, a) are flattened in that order: w[m], c[m·d] (row-major), a[m].
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/comm.hpp"
#include "kernels/loss_parts.hpp"
#include "kernels/rbf_math.hpp"
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

struct CgResult {
  int iterations = 0;
  double relative_residual = 0;  // |s − A w| / |s| at exit
};

struct BackendOptions {
  int dim = 2;
  double penalty = 100;    // λ
  double min_width = 1e-4; // widths are clamped to stay ≥ this
  int laplacian_dims = 0;  // coordinates the Laplacian acts on (CollocationBatch); 0: dim
  // The ranks of a data-parallel run (null: one process). Each rank's batch is its share of
  // the points; the backend sums its partial sums over the ranks, so that losses, gradients and
  // steps are those of the union batch (docs/architecture.md, "Distributed runs").
  std::shared_ptr<Communicator> comm;
  // CUDA, variable projection on one GPU: while a trial step solves its weights, factor the
  // features of the trial's centres and widths for the next vp_prepare on a second stream
  // (cuda_rbf_varpro.cu, "look-ahead"; beside preconditioned trials only after
  // vp_expect_accepted_trials(true)). The same bits either way; off only to measure it.
  bool vp_lookahead = true;
  // Variable projection in double on one process: a trial step solves its weights first by the
  // normal equations of F_t·R⁻¹, with R the factor of the iteration's own features, and falls
  // back to the QR solve when vp_trial_weights_usable says no (docs/mathematics.md, "Trial
  // weights"; the config's training.lm.trial_weights). Off: every trial solves by QR.
  bool vp_preconditioned_trials = false;
  // With preconditioned trials: the vp_prepare that follows an accepted preconditioned trial
  // takes the trial's own factorisation (F_t = A·R⁻¹·R = (A·L⁻ᵀ)·(Lᵀ·R) for G = AᵀA = LLᵀ) and
  // projects [J_ca | R] by two passes of G's normal equations, instead of a new Householder QR,
  // where vp_trial_factor_usable accepts the trial's refinement (docs/mathematics.md, "The
  // factor from the trial"; the config's training.lm.prepare_factor). Off: every vp_prepare
  // factors by QR.
  bool vp_factor_from_trial = false;
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

  // Backends that draw collocation batches themselves (on the device, so that no batch crosses
  // the bus) say so here; the trainer then calls draw_batch instead of sampling on the host.
  // set_problem prepares the drawing for `problem` (e.g. compiles its sampler); it is called
  // once, before training, and may throw std::runtime_error when it cannot.
  virtual bool draws_batches() const { return false; }
  virtual void set_problem(const Problem& problem) {}
  // Draws batch number `index` of the sequence for `seed`: the same (seed, index) gives the
  // same batch, so a resumed run redraws nothing it has not seen.
  virtual void draw_batch(std::uint64_t seed, std::uint64_t index, std::size_t n_interior,
                          std::size_t n_boundary) {
    throw std::logic_error(name() + " backend does not draw batches");
  }
  // The current batch, copied to the host (for collocation.vtp and checkpoints).
  virtual CollocationBatch batch() const = 0;

  // One cycle of the seed's scheme, fused where the backend can (one CUDA graph, say):
  // (draw a fresh batch when `draw` is true and the backend draws batches), `gd_steps` GD
  // steps, `cg_iterations` CG iterations. Returns what gd_steps returns. The default runs the
  // steps one by one.
  struct GdcgCycle {
    bool draw = false;
    std::uint64_t seed = 0, batch_index = 0;
    std::size_t n_interior = 0, n_boundary = 0;
    int gd_steps = 1;
    T learning_rate = T(1);
    int cg_iterations = 50;
    T cg_tolerance = T(0);
  };
  virtual LossParts gdcg_cycle(const GdcgCycle& c) {
    if (c.draw) draw_batch(c.seed, c.batch_index, c.n_interior, c.n_boundary);
    const LossParts loss = gd_steps(c.gd_steps, c.learning_rate);
    solve_weights_cg(c.cg_iterations, c.cg_tolerance);
    return loss;
  }

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

  // Variable projection (docs/mathematics.md, "Variable projection"), at least-squares weights:
  // vp_prepare() factors the scaled features F = QR and forms the projected Gauss–Newton system
  // of centres and widths alone — B = rows m… of Qᵀ·J_ca (Kaufman's Jacobian P⊥·J_ca in the
  // basis of range(F)'s complement) and z = rows m… of Qᵀ·R — as JᵀJ = BᵀB, JᵀR = Bᵀz; returns
  // I. vp_try(μ) moves centres and widths by (BᵀB + μ·max(diag, floor)) δ = −Bᵀz, then solves
  // the weights (by solve_weights_qr, or preconditioned by vp_prepare's R where
  // BackendOptions::vp_preconditioned_trials allows) and returns I there; lm_reject() returns to
  // vp_prepare's state.
  virtual LossParts vp_prepare() = 0;
  virtual LossParts vp_try(T mu) = 0;
  // The system of the last lm_prepare/vp_prepare (JᵀJ, p × p, lower triangle meaningful, and
  // JᵀR), copied to the host: for tests.
  virtual void lm_system(std::vector<T>& jtj, std::vector<T>& jtr) const = 0;
  // How vp_try's trial steps since construction solved their weights: by the preconditioned
  // normal equations (BackendOptions::vp_preconditioned_trials) or by QR.
  // factored_from_trial counts the vp_prepare calls that took an accepted trial's factor
  // (BackendOptions::vp_factor_from_trial).
  struct VpTrialCounts {
    long preconditioned = 0, qr = 0, factored_from_trial = 0;
  };
  virtual VpTrialCounts vp_trial_counts() const = 0;
  // A hint for the coming vp_try calls: true when they are likely to be accepted (the trainer
  // says so under Nielsen's damping rule and for a retry after a rejection). The CUDA backend then
  // factors a preconditioned trial's features ahead for the next vp_prepare as it does beside QR
  // trials (BackendOptions::vp_lookahead). It changes no result.
  virtual void vp_expect_accepted_trials(bool likely) { (void)likely; }
  // The decrease of the loss that the last lm_try or vp_try step δ was chosen for, by the
  // linearised residuals: ½‖R‖² − ½‖R + Jδ‖² in the loss's units (0 before any step).
  virtual double lm_predicted_decrease() const { return 0; }
  // Least-squares weights from a Householder QR factorisation of the scaled features
  // F = [M/√N; √(λ/K)·N] stacked over vp_qr_ridge·max_k|F_k|·I: the residual is accurate to the
  // unit roundoff times cond(F), not its square as with the normal equations. Leaves the
  // residuals at the new weights.
  virtual void solve_weights_qr() = 0;

  // u and Δₛu of the network at n points (row-major, n × dim, double on the host); Δₛ is the
  // Laplacian over the first BackendOptions::laplacian_dims coordinates.
  virtual void evaluate(const std::vector<double>& points, std::vector<double>& u,
                        std::vector<double>& laplacian) = 0;
  // ∇u at n points (n × dim, row-major): with evaluate, what the host needs to form any row of
  // a general operator or boundary condition. This one sums the neurons on the host from
  // parameters(); a backend may do it on its device.
  virtual void evaluate_gradient(const std::vector<double>& points, std::vector<double>& gradient);
};

namespace detail {
template <int D, class T>
void sum_rbf_gradient(const RbfParameters<T>& p, const std::vector<double>& points,
                      std::vector<double>& gradient) {
  const std::size_t n = points.size() / D;
  gradient.assign(n * D, 0.0);
  const int m = p.neurons();
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < static_cast<long long>(n); ++i) {
    double x[D], g[D] = {};
    for (int j = 0; j < D; ++j) x[j] = points[std::size_t(i) * D + j];
    for (int k = 0; k < m; ++k) {
      double c[D], diff[D], gk[D];
      for (int j = 0; j < D; ++j) c[j] = double(p.centres[std::size_t(k) * D + j]);
      const double r2 = squared_distance<D>(x, c, diff);
      gaussian_gradient<D>(diff, r2, double(p.widths[k]), gk);
      for (int j = 0; j < D; ++j) g[j] += double(p.weights[k]) * gk[j];
    }
    for (int j = 0; j < D; ++j) gradient[std::size_t(i) * D + j] = g[j];
  }
}
}  // namespace detail

template <class T>
void RbfBackend<T>::evaluate_gradient(const std::vector<double>& points,
                                      std::vector<double>& gradient) {
  const RbfParameters<T> p = parameters();
  switch (p.dim) {
    case 2: detail::sum_rbf_gradient<2>(p, points, gradient); break;
    case 3: detail::sum_rbf_gradient<3>(p, points, gradient); break;
    case 4: detail::sum_rbf_gradient<4>(p, points, gradient); break;
    default: throw std::invalid_argument("evaluate_gradient: the dimension must be 2, 3 or 4");
  }
}

// The ridge of solve_weights_qr, relative to the largest feature column's norm.
template <class T>
constexpr T vp_qr_ridge() {
  return sizeof(T) == sizeof(double) ? T(1e-12) : T(1e-6);
}

// Whether a trial's weights from the preconditioned normal equations stand for its QR solve: the
// Cholesky factorisation succeeded, the one step of iterative refinement moved the solution by at
// most 1e-6 of its norm (`correction`, relative; NaN fails), and the trial's loss is finite and
// differs from the iteration's (`before`) by more than 1e-4 of it, so that rounding at the loss
// floor cannot decide between acceptance and rejection.
inline bool vp_trial_weights_usable(bool factored, double correction, double loss,
                                    double before) {
  constexpr double kMaxCorrection = 1e-6, kTie = 1e-4;
  return factored && correction <= kMaxCorrection && std::isfinite(loss) &&
         !(loss >= before * (1 - kTie) && loss <= before * (1 + kTie));
}

// Whether the vp_prepare after an accepted preconditioned trial may take that trial's factor
// (BackendOptions::vp_factor_from_trial): when the refinement moved z by at most 10⁻¹⁰ of its
// norm, cond(G) is at most about 10⁶, one pass of G's normal equations removes the range of F_t
// from a column to about 10⁻¹⁰ of its size and the second to rounding, and LᵀR factors F_t
// as accurately as a QR would.
inline bool vp_trial_factor_usable(double correction) {
  constexpr double kMaxCorrection = 1e-10;
  return correction <= kMaxCorrection;
}

template <class T>
std::unique_ptr<RbfBackend<T>> make_cpu_backend(const BackendOptions& options);

// True when this build has the CUDA backend and a CUDA device is present.
bool cuda_device_available();
// Why cuda_device_available() is false, as a phrase ("no CUDA device is present", "no NVIDIA
// driver (libcuda.so.1) was found", the loader's error, …); empty when it is true.
std::string cuda_unavailable_reason();
// Throws std::runtime_error when the build has no CUDA backend or no device is present.
template <class T>
std::unique_ptr<RbfBackend<T>> make_cuda_backend(const BackendOptions& options);

}  // namespace rbfpde
