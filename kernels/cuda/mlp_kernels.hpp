// Host-side launchers of the CUDA MLP kernels (mlp_kernels.cu). No CUDA types: a stream is the
// opaque CUstream_st*. Layouts:
//   theta    = the flat parameters of kernels/mlp_backend.hpp (per layer W row-major, then b)
//   points   = raw coordinates, n × dim row-major, in T (the input map runs in the kernel)
//   partials = grid × n_params: each block's share of ∂I/∂θ, summed in a fixed order later
//   losses   = 3 doubles per step: loss, rms_interior, rms_boundary
//   halt     = 2 ints {step, apply}: the first step of a chunk whose loss stopped it (INT_MAX:
//              none yet) and whether that step's Adam update is still applied (tolerance: 1,
//              non-finite loss: 0). Kernels of later steps return at once.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct CUstream_st;

namespace rbfpde {
struct MlpOptions;
}

namespace rbfpde::gpu {

using MlpStream = CUstream_st*;

inline constexpr int kMlpMaxLayers = 16;  // weight layers, output included
inline constexpr int kMlpMaxDim = 8;

template <class T>
struct MlpNetView {
  int dim = 2;
  int layers = 0;  // weight layers L (hidden layers + the output layer)
  int sizes[kMlpMaxLayers + 1] = {};
  int w_offset[kMlpMaxLayers] = {}, b_offset[kMlpMaxLayers] = {};
  int n_params = 0;
  // θ as shared memory holds it: W_l with rows padded to a multiple of 4 (16-byte loads), b_l.
  int ws_offset[kMlpMaxLayers] = {}, ws_stride[kMlpMaxLayers] = {}, ws_bias[kMlpMaxLayers] = {};
  int ws_size = 0;
  int activation = 0;                                // rbfpde::Activation
  T scale[kMlpMaxDim] = {}, shift[kMlpMaxDim] = {};  // x' = scale ⊙ x + shift
};

// The kernels' view of MlpOptions' network (offsets of the flat layout, the input map in T).
// Throws std::invalid_argument for what the kernels cannot hold (dim > kMlpMaxDim, more than
// kMlpMaxLayers − 1 hidden layers) and for what MlpOptions forbids.
template <class T>
MlpNetView<T> make_mlp_net_view(const MlpOptions& options);

// How a pass splits its points: tiles of `points` points (all streams of a tile in shared
// memory), `grid` persistent blocks taking tiles blockIdx.x, +gridDim.x, …; interior tiles first.
struct MlpTiling {
  // The kernel: 2 = tensor-core GEMMs (mma.sync: DMMA in double, 3xTF32 in float), 512
  // threads, the default in double where variant 4 is not; SIMT: 1 = 2 × 4 micro-tiles, 512
  // threads, the default in float where variant 4 is not; 0 = 4 × 4, 256.
  // RBFPDE_MLP_VARIANT=0|1|2 overrides the default (tests, benchmarks).
  // 3: the register-resident pass (double, 2D, equal hidden widths ≤ 56), opt-in.
  // 4: the point-stationary pass (2D, equal hidden widths ≤ 64, one output), the default for
  //    the training passes of the networks it takes from a batch size (float about 2100 points,
  //    double about 2750 on an H200)
  //    (RBFPDE_MLP_VARIANT=0|1|2 turns it off, =4 forces it).
  int variant = 2;
  int points = 0;  // points per tile (variant 4: per interior tile; 4 × that per boundary tile)
  int features = 0;  // variant 4: hidden features of every layer a thread owns (5 or 10)
  // Variant 4 in double: the hidden layers' forward GEMM on the tensor cores (the default) or,
  // with RBFPDE_MLP_POINT_FORWARD=fma, on the FP64 FMA units.
  bool forward_mma = false;
  int ld = 0;      // shared-memory row stride of a stream matrix (padded)
  int tiles_interior = 0, tiles_boundary = 0;
  int grid = 0;
  std::size_t shared_bytes = 0;
  // Variants 3 and 4 (the register-resident and point-stationary passes): the pre-activation
  // scratch they need in MlpPassArgs::scratch (variant 4: and the blocks' loss sums), in elements.
  std::size_t scratch_elements = 0;
  // The pass launches with programmatic dependent launch (its blocks start, and zero-fill their
  // shared memory, while the reduction before it finishes; mlp_device.cuh): variant 4 unless
  // RBFPDE_MLP_PDL=0 (the tiled kernels at 1200 + 120 ran 2 % slower with it, so they do
  // without). overlap_reduce: so does the reduction after the pass (its blocks start while the
  // pass's last blocks run): variant 4 when each block takes one tile. H200, float: 14800
  // against 12130 it/s at 2048 + 128, 14500 against 11410 at 4096 + 256; with more tiles than
  // blocks its waiting blocks slow the pass's last ones: 6820 against 6920 at 16384 + 1024.
  bool overlap = false, overlap_reduce = false;
};

// Picks the tile size and grid for n_int + n_bnd points on the current device (gradient: the
// training pass, with gradient accumulators in shared memory). Throws std::runtime_error naming
// the sizes when not even one point per tile fits in the device's shared memory.
template <class T>
MlpTiling plan_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient);

template <class T>
struct MlpPassArgs {
  const T* theta = nullptr;
  const T* x_int = nullptr;  // interior (or evaluation) points
  const T* f = nullptr;
  int n_int = 0;
  const T* x_bnd = nullptr;
  const T* p = nullptr;
  int n_bnd = 0;
  T inv_n = 0, lam_k = 0;  // 1/N, λ/K
  double penalty = 0;      // λ (for the loss)
  // Training / residual mode: e, b and the loss (the last block to finish sums Σe², Σb² in a
  // fixed order into losses[3·step…]); partials non-null adds the backward pass.
  T* e = nullptr;
  T* b = nullptr;
  T* partials = nullptr;
  T* scratch = nullptr;  // variants 3 and 4: MlpTiling::scratch_elements
  double* losses = nullptr;
  unsigned* counter = nullptr;  // zero between launches (the last block resets it)
  int* halt = nullptr;          // null: no early stop
  int step = 0;
  double stop_below = 0;
  // Evaluation mode (out_u non-null): u, ∇u (n × dim), Δu at the interior points.
  T* out_u = nullptr;
  T* out_grad = nullptr;
  T* out_lap = nullptr;
};

template <class T>
void launch_mlp_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                     const MlpPassArgs<T>& args);

// The pass on the host, args holding host pointers: the kernel's block code run block after
// block as blocks of one thread (the loss as the kernel's last block computes it, in another
// summation order). For testing the tile logic (layouts, streams, backward pass) without a
// device. emulated_mlp_tiling gives it `points` per tile, `grid` blocks and a kernel variant.
template <class T>
MlpTiling emulated_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                              int points, int grid, int variant);
template <class T>
void emulate_mlp_pass(const MlpNetView<T>& net, const MlpTiling& tiling,
                      const MlpPassArgs<T>& args);

// grad = Σ_blocks partials (fixed order); with adam, also one Adam update of every parameter
// with step_consts[3·step…] = {learning rate, 1/(1 − β1^t), 1/(1 − β2^t)}.
template <class T>
struct MlpAdamArgs {
  bool enabled = false;
  T* theta = nullptr;
  T* m = nullptr;
  T* v = nullptr;
  T beta1 = 0, beta2 = 0, epsilon = 0;
  const T* step_consts = nullptr;
};

// overlap: MlpTiling::overlap_reduce of the pass before it.
template <class T>
void launch_mlp_reduce(MlpStream stream, const T* partials, int blocks, int n_params, T* grad,
                       const MlpAdamArgs<T>& adam, const int* halt, int step, bool overlap);

// One Adam update from grad with the given constants (no halt).
template <class T>
void launch_mlp_adam(MlpStream stream, int n_params, const T* grad, T* theta, T* m, T* v,
                     T learning_rate, T beta1, T beta2, T epsilon, T c1, T c2);

// Phase timing (bench_gpu_mlp profile): while on, block 0 of every pass adds the clock cycles
// of each barrier interval of its tiles to slot `phase` (interior tiles) or 32 + phase
// (boundary tiles); variant 4 to slot 64 + its phase (mlp_point_kernel.cu's PtPhase; boundary
// tiles 80 + phase). Turning it on zeroes the slots.
void set_mlp_phase_timing(bool on);
std::vector<unsigned long long> mlp_phase_cycles();

// The current device's multiprocessors, as the planner counts them (its crossovers are in tiles
// per SM).
int mlp_device_sms();

}  // namespace rbfpde::gpu
