// Host-side launchers of the kernels the CUDA RBF backend runs only on its distributed path
// (docs/architecture.md, "Distributed runs"): the loss from sums over the ranks, the GD step
// from a gradient summed over the ranks, and the clean R of a QR factorisation for TSQR. No
// CUDA types (a stream is the opaque CUstream_st*), as in launchers.hpp.
#pragma once

#include "kernels/cuda/rbf/launchers.hpp"

namespace rbfpde::gpu {

// sums[0] = Σe², sums[1] = Σb² from the residual pass's per-block partials (2 per block, as
// launch_residuals writes them), summed in block order by one block: deterministic.
void launch_loss_sums(Stream stream, const double* partials, int blocks, double* sums);
// The loss scalars from (Σe², Σb²) over the union's N interior and K boundary points.
void launch_loss_from_sums(Stream stream, const double* sums, int n_int, int n_bnd, double penalty,
                           DeviceScalars* scalars);
// The GD step on centres and widths from the full gradient grad (layout of θ): the CPU
// backend's limited_gd_step, widths clamped at min_width (NaN stays NaN), weights untouched.
template <class T, int D>
void launch_gd_apply(Stream stream, const T* grad, T* theta, int m, T learning_rate, T min_width);
// r (cols × cols, column-major) = the upper triangle of the first min(rows, cols) rows of a
// (column-major, leading dimension lda), zero elsewhere: geqrf's R without its reflectors.
template <class T>
void launch_upper_triangle(Stream stream, const T* a, int lda, int rows, int cols, T* r);

}  // namespace rbfpde::gpu
