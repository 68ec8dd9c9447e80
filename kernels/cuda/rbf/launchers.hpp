// Host-side launchers of the CUDA kernels. No CUDA types: a stream is the opaque CUstream_st*.
// Layouts shared by every launcher:
//   theta  = [w (m) | c (m × D, row-major) | a (m)], the parameter order of backend.hpp
//   x      = collocation points, (n_int + n_bnd) × D row-major, interior rows first
//   target = [f (n_int) | p (n_bnd)],   res = [e | b] = (features · w) − target
//   F      = features, column-major n × m (ld n): rows of M (Δφ) then rows of N (φ)
//   J      = Jacobian of R = [e/√N ; √(λ/K) b], column-major n × m(D+2)
// Rows are Poisson/Dirichlet (Δφ at interior rows, φ at boundary rows) unless a launcher is given
// GeneralRows: then an interior row is A·Δₛφ + B·∇φ + C·φ and a boundary row α·φ + β·∂φ/∂n
// (kernels/rbf_math.hpp's operator_row_* and boundary_row_*), computed by the same kernel
// instantiated for general rows and selected at launch.
#pragma once

#include <cstddef>

#include "kernels/cuda/common/stream.hpp"

namespace rbfpde {
template <class T>
class RbfBackend;
class Problem;
namespace gpu {
struct OperatorText;
}
}

namespace rbfpde::gpu {

// X(T, D) for every scalar type and dimension the kernels are built for (the launchers' explicit
// instantiations).
#define RBFPDE_FOR_EACH_T_D(X) \
  X(float, 2) X(float, 3) X(float, 4) X(double, 2) X(double, 3) X(double, 4)

struct PointsView {
  int n_int = 0;  // interior rows
  int n_bnd = 0;  // boundary rows
  int rows() const { return n_int + n_bnd; }
};

// The coefficients of general rows (CollocationBatch), device arrays indexed like the batch's:
// a, b, c over the interior rows (b: n_int × D row-major), alpha, beta, normals over the boundary
// rows (normals: n_bnd × D). A null array means its default everywhere: a = 1, b = 0, c = 0,
// α = 1, β = 0. space_dim: the coordinates of Δₛ (the first space_dim; D when 0).
template <class T>
struct GeneralRows {
  const T* a = nullptr;
  const T* b = nullptr;
  const T* c = nullptr;
  const T* alpha = nullptr;
  const T* beta = nullptr;
  const T* normals = nullptr;
  int space_dim = 0;
};

// Device-side scalars the host reads back in one copy after a fused step.
struct CgState {
  double rr = 0;      // |r|², accumulated in double
  double s_norm = 0;  // |s|
  double stop = 0;    // tol · |s| (or tol when s = 0)
  int iterations = 0;
  int done = 0;
};

struct DeviceScalars {
  double loss = 0, rms_interior = 0, rms_boundary = 0;
  int step_rejected =
      0;  // lm_try / direct solve: the factorisation failed or the step was not finite
  int pad = 0;
  double predicted_decrease = 0;  // lm_try / vp_try: the step's linearised decrease of the loss
  CgState cg;
};

// The loss scalars' reduction (Σe², Σb² partials → loss, rms), folded into another kernel's launch.
struct LossFinalize {
  const double* partials = nullptr;
  int blocks = 0;
  double penalty = 0;
  DeviceScalars* scalars = nullptr;
};

// residual_kernels.cu --------------------------------------------------------------------------
// Loss partials written by launch_residuals (2 doubles per block).
int residual_blocks(int rows);
// Neuron chunks of the residual pass: launch_residuals needs chunk_sums of
// residual_chunk_count(rows, m) × rows entries when that is > 1 (else it may be null).
int residual_chunk_count(int rows, int m);
// res = features(x)·w − target in one pass, and per-block (Σe², Σb²) partials (2 per block).
// With `loss` (its scalars and penalty), the last block to finish also writes the loss scalars
// (counter: one unsigned, zero between launches).
template <class T, int D>
void launch_residuals(Stream stream, PointsView pts, const T* x, const T* target, const T* theta,
                      int m, T* res, T* chunk_sums, double* partials,
                      const LossFinalize* loss = nullptr, unsigned* counter = nullptr,
                      const GeneralRows<T>* general = nullptr);
// F' (n × m, column-major): Δφ_k at interior rows scaled by scale_interior, φ_k at boundary rows
// scaled by scale_boundary; scaled_target likewise. With scales √(1/N), √(λ/K):
// A = F'ᵀF', s = F'ᵀ scaled_target.
template <class T, int D>
void launch_features(Stream stream, PointsView pts, const T* x, const T* target, const T* theta,
                     int m, T scale_interior, T scale_boundary, T* features, T* scaled_target,
                     const GeneralRows<T>* general = nullptr);
// u and Δₛu at n points, Δₛ over the first space_dim coordinates (D when 0 or D).
template <class T, int D>
void launch_evaluate(Stream stream, int n, const T* x, const T* theta, int m, T* u, T* laplacian,
                     int space_dim = 0);
// ∇u at n points (n × D, row-major).
template <class T, int D>
void launch_evaluate_gradient(Stream stream, int n, const T* x, const T* theta, int m, T* gradient);

// gradient_kernel.cu ---------------------------------------------------------------------------
// ∂I/∂θ from the residuals res. Writes grad when non-null; when apply_step is true also applies
// c −= η gc, a −= η ga, clamping a at min_width. With `loss`, also finalises the loss scalars.
template <class T, int D>
void launch_gradient(Stream stream, PointsView pts, const T* x, const T* res, T* theta, int m,
                     T inv_n, T lam_k, T* grad, bool apply_step, T learning_rate, T min_width,
                     const LossFinalize* loss = nullptr, const GeneralRows<T>* general = nullptr);

// cycle_kernels.cu -----------------------------------------------------------------------------
// A = MᵀM/N + λNᵀN/K (full, column-major) and s = Mᵀf/N + λNᵀp/K for m ≤ gram_max_neurons()
// without storing the features (scales = √(1/N), √(λ/K)). Scratch: a_partials of
// gram_blocks(rows)·m² entries, s_partials of gram_blocks(rows)·m.
int gram_max_neurons();
int gram_blocks(int rows);
template <class T, int D>
void launch_gram(Stream stream, PointsView pts, const T* x, const T* target, const T* theta, int m,
                 T scale_interior, T scale_boundary, T* a_partials, T* s_partials, T* a, T* s,
                 const GeneralRows<T>* general = nullptr);
// Whole CG in one block, A in registers: m ≤ 128.
template <class T>
void launch_cg_small(Stream stream, const T* a, const T* s, T* w, int m, int max_iterations,
                     double tol, CgState* state);
// Whole CG in one multi-block kernel with a grid barrier: ad_buffers holds 2m entries, barrier
// two unsigned zeroed once at allocation (each launch leaves them as it found them).
bool cg_grid_supported(int m, std::size_t scalar_size);
template <class T>
void launch_cg_grid(Stream stream, const T* a, const T* s, T* w, T* ad_buffers, int m,
                    int max_iterations, double tol, CgState* state, unsigned* barrier);

// jacobian_kernel.cu ---------------------------------------------------------------------------
// J (n × m(d+2), column-major) and R = scale·res; with r_scaled null only J's m weight columns
// (res and the weights are not read).
template <class T, int D>
void launch_jacobian(Stream stream, PointsView pts, const T* x, const T* res, const T* theta, int m,
                     T scale_interior, T scale_boundary, T* jacobian, T* r_scaled,
                     const GeneralRows<T>* general = nullptr);

// solver_kernels.cu ----------------------------------------------------------------------------
// Copies the lower triangle of a column-major m × m matrix into its upper triangle.
template <class T>
void launch_symmetrize_lower(Stream stream, T* a, int m);
// dst (m × m, column-major) = the upper triangle of src (leading dimension ld_src), zeros below.
template <class T>
void launch_upper_triangle(Stream stream, const T* src, int ld_src, T* dst, int m);
template <class T>
void launch_add_to_diagonal(Stream stream, T* a, int m, T value);
// norms[k] = |column k| (or its square) of the first `rows` rows of a column-major matrix
// (leading dimension lda).
template <class T>
void launch_column_norms(Stream stream, const T* a, int rows, int cols, int lda, bool squared,
                         T* norms);
// Rows n … n+m−1 of a ((n+m) × m, column-major) = relative·max_k norms[k]·I; y[n … n+m−1] = 0.
template <class T>
void launch_qr_ridge_rows(Stream stream, T* a, T* y, int n, int m, const T* norms, T relative);
// a (m × m, full) = Σ over `slabs` m × m matrices of their lower triangles, mirrored.
template <class T>
void launch_sum_slabs_symmetric(Stream stream, const T* partials, int slabs, T* a, int m);
// CG building blocks for the cuBLAS path: r = s − A w is formed by the caller.
template <class T>
void launch_cg_init(Stream stream, const T* s, const T* r, T* d, int m, int max_iterations,
                    double tol, CgState* state);
template <class T>
void launch_cg_step(Stream stream, const T* ad, T* w, T* r, T* d, int m, int max_iterations,
                    CgState* state);
// a = JᵀJ with μ·max(d, floor) added to its diagonal, d = diag JᵀJ or `scaling` (p entries) when
// given, floor = max(1e-12·max d, T_min), μ read from device memory, and delta = −JᵀR: the LM
// system in one launch (graph-capturable with μ changing per try).
template <class T>
void launch_lm_system(Stream stream, const T* jtj, const T* jtr, T* a, T* delta, int p,
                      const T* mu, const T* scaling);
// θ[i] = θ0[i] + δ[i − first] for i ≥ first (θ[i] = θ0[i] below) with widths clamped, or θ = θ0
// and scalars->step_rejected = 1 when the Cholesky factorisation failed (info ≠ 0) or δ is not
// finite; then δ becomes the step taken, θ − θ0 from `first` on (widths clamped; 0 if rejected).
template <class T>
void launch_lm_apply(Stream stream, const T* theta0, T* delta, const int* info, T* theta, int m,
                     int dim, int first, T min_width, DeviceScalars* scalars);
// scalars->predicted_decrease = −δᵀg − ½δᵀh (p entries, summed in double): with g = JᵀR and
// h = JᵀJδ, the decrease of ½|R|² that the linearised residuals predict for the step δ.
template <class T>
void launch_linearised_decrease(Stream stream, const T* delta, const T* g, const T* h, int p,
                                DeviceScalars* scalars);
// w = solution when the factorisation succeeded and the solution is finite; else w is kept.
template <class T>
void launch_accept_weights(Stream stream, const T* solution, const int* info, T* w, int m,
                           DeviceScalars* scalars);

// cuda_backend.cu ------------------------------------------------------------------------------
// The stream a CUDA backend (made by make_cuda_backend<T> or gpu::make_rbf_backend<T>) enqueues on, for benchmarks that time
// its calls with CUDA events; throws std::invalid_argument for any other backend.
Stream backend_stream(RbfBackend<double>& backend);
Stream backend_stream(RbfBackend<float>& backend);
// set_problem with the operator and conditions given as text (common/device_sampler.hpp): the
// batches a CUDA backend draws then carry the operator's coefficients. set_problem(problem) is
// this with operator_text(problem). Throws std::invalid_argument for any other backend, and
// std::runtime_error as set_problem when the sampler cannot be built.
void set_problem_operator(RbfBackend<double>& backend, const Problem& problem,
                          const OperatorText& op);
void set_problem_operator(RbfBackend<float>& backend, const Problem& problem,
                          const OperatorText& op);

}  // namespace rbfpde::gpu
