// Host-side launchers of the CUDA kernels. No CUDA types: a stream is the opaque CUstream_st*.
// Layouts shared by every launcher:
//   theta  = [w (m) | c (m × D, row-major) | a (m)], the parameter order of backend.hpp
//   x      = collocation points, (n_int + n_bnd) × D row-major, interior rows first
//   target = [f (n_int) | p (n_bnd)],   res = [e | b] = (features · w) − target
//   F      = features, column-major n × m (ld n): rows of M (Δφ) then rows of N (φ)
//   J      = Jacobian of R = [e/√N ; √(λ/K) b], column-major n × m(D+2)
#pragma once

#include <cstddef>

struct CUstream_st;

namespace rbfpde::gpu {

using Stream = CUstream_st*;

struct PointsView {
  int n_int = 0;  // interior rows
  int n_bnd = 0;  // boundary rows
  int rows() const { return n_int + n_bnd; }
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
  CgState cg;
};

// residual_kernels.cu --------------------------------------------------------------------------
int residual_blocks(int rows);
// res = features(x)·w − target in one pass, and per-block (Σe², Σb²) partials (2 per block).
template <class T, int D>
void launch_residuals(Stream stream, PointsView pts, const T* x, const T* target, const T* theta,
                      int m, T* res, double* partials);
// Per-block partials of Σe², Σb² from a residual vector already in memory.
template <class T>
void launch_loss_partials(Stream stream, PointsView pts, const T* res, double* partials);
// Sums the partials in a fixed order into scalars->loss, rms_interior, rms_boundary.
void launch_loss_finalize(Stream stream, PointsView pts, const double* partials, int blocks,
                          double penalty, DeviceScalars* scalars);
// F (n × m, column-major) of Δφ_k at interior rows and φ_k at boundary rows.
template <class T, int D>
void launch_features(Stream stream, PointsView pts, const T* x, const T* theta, int m, T* features);
// u and Δu at n points.
template <class T, int D>
void launch_evaluate(Stream stream, int n, const T* x, const T* theta, int m, T* u, T* laplacian);

// gradient_kernel.cu ---------------------------------------------------------------------------
// ∂I/∂θ from the residuals res (block per neuron). Writes grad when non-null; when
// learning_rate_step is true also applies c −= η gc, a −= η ga, clamping a at min_width.
template <class T, int D>
void launch_gradient(Stream stream, PointsView pts, const T* x, const T* res, T* theta, int m,
                     T inv_n, T lam_k, T* grad, bool apply_step, T learning_rate, T min_width);

// jacobian_kernel.cu ---------------------------------------------------------------------------
template <class T, int D>
void launch_jacobian(Stream stream, PointsView pts, const T* x, const T* res, const T* theta, int m,
                     T scale_interior, T scale_boundary, T* jacobian, T* r_scaled);

// solver_kernels.cu ----------------------------------------------------------------------------
// Copies the lower triangle of a column-major m × m matrix into its upper triangle.
template <class T>
void launch_symmetrize_lower(Stream stream, T* a, int m);
template <class T>
void launch_add_to_diagonal(Stream stream, T* a, int m, T value);
// Whole CG in one block, A (m × m, full) staged in shared memory: for small m.
int cg_single_block_max_neurons();
template <class T>
void launch_cg_single_block(Stream stream, const T* a, const T* s, T* w, int m, int max_iterations,
                            double tol, CgState* state);
// CG building blocks for the cuBLAS path: r = s − A w is formed by the caller.
template <class T>
void launch_cg_init(Stream stream, const T* s, const T* r, T* d, int m, int max_iterations,
                    double tol, CgState* state);
template <class T>
void launch_cg_step(Stream stream, const T* ad, T* w, T* r, T* d, int m, int max_iterations,
                    CgState* state);
// A = JᵀJ + μ·max(diag JᵀJ, floor), floor = max(1e-12·max diag, T_min) (diagonal only; A holds
// JᵀJ).
template <class T>
void launch_lm_damp(Stream stream, const T* jtj, T* a, int p, T mu);
template <class T>
void launch_negate(Stream stream, const T* in, T* out, int n);
// θ = θ0 + δ with widths clamped, or θ = θ0 and scalars->step_rejected = 1 when the Cholesky
// factorisation failed (info ≠ 0) or δ is not finite.
template <class T>
void launch_lm_apply(Stream stream, const T* theta0, const T* delta, const int* info, T* theta,
                     int m, int dim, T min_width, DeviceScalars* scalars);
// w = solution when the factorisation succeeded and the solution is finite; else w is kept.
template <class T>
void launch_accept_weights(Stream stream, const T* solution, const int* info, T* w, int m,
                           DeviceScalars* scalars);

}  // namespace rbfpde::gpu
