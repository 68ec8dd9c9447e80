// Host-side launchers of the CUDA MLP kernels (mlp_launch.cu, mlp_reduce_kernel.cu) and the host
// emulation of the tiled pass (mlp_emulation.cu). No CUDA types: a stream is the opaque
// CUstream_st*. Layouts:
//   theta    = the flat parameters of kernels/mlp_backend.hpp (per layer W row-major, then b)
//   points   = raw coordinates, n × dim row-major, in T (the input map runs in the kernel)
//   partials = grid × n_params: each block's share of ∂I/∂θ, summed in a fixed order later
//   losses   = 3 doubles per step: loss, rms_interior, rms_boundary
//   halt     = 2 ints {step, apply}: the first step of a chunk whose loss stopped it (INT_MAX:
//              none yet) and whether that step's Adam update is still applied (tolerance: 1,
//              non-finite loss: 0). Kernels of later steps return at once.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;

namespace rbfpde {
struct MlpOptions;
template <class T>
class MlpBackend;
}  // namespace rbfpde

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
  int lap_dims = 0;  // Δₛ acts on the first lap_dims coordinates (MlpOptions::laplacian_dims)
};

// The kernels' view of MlpOptions' network (offsets of the flat layout, the input map in T).
// Throws std::invalid_argument for what the kernels cannot hold (dim > kMlpMaxDim, more than
// kMlpMaxLayers − 1 hidden layers) and for what MlpOptions forbids.
template <class T>
MlpNetView<T> make_mlp_net_view(const MlpOptions& options);

// The pass kernels the planner chooses from (MlpTiling::variant):
//   1, 2: the tiled kernel, 512 threads: SIMT GEMMs with 2 × 4 micro-tiles in float (1), DMMA
//         tensor-core GEMMs in double (2); every network, training, residual and evaluation.
//   4:    the point-stationary kernel (mlp_point_kernel.cu): training and residual passes of 2D
//         networks of hidden layers of one width ≤ 64 and one output, from kPtDefaultTilesPerSm
//         of its 32-point tiles per SM (about 2100 points in float, 2750 in double on an H200),
//         for Poisson/Dirichlet rows (MlpPassArgs::general false, lap_dims = dim) only.
inline constexpr int kMlpTiledFloat = 1, kMlpTiledDouble = 2, kMlpPoint = 4;
template <class T>
inline constexpr int kMlpTiled = sizeof(T) == sizeof(double) ? kMlpTiledDouble : kMlpTiledFloat;

// Overrides of the planner's choices, for tests and benchmarks; the product passes the defaults.
// A forced choice that the network or the device cannot take throws std::invalid_argument.
struct MlpTuning {
  // kPoint: the point kernel for the training passes (gradient); evaluation stays tiled.
  enum class Kernel { kAuto, kTiled, kPoint };
  Kernel kernel = Kernel::kAuto;
  int tile_points = 0;  // tiled kernel: at most this many points a tile (0: the planner's)
  int point_tiles = 0;  // point kernel: 32-point tiles a block, 1 or 2 (0: the planner's)
  int point_grid = 0;   // point kernel: at most this many blocks (0: the resident blocks)
  bool pdl = true;      // programmatic dependent launch where MlpTiling::overlap allows it
};

// How a pass splits its points: tiles of `points` points (all streams of a tile in shared
// memory), `grid` persistent blocks taking tiles blockIdx.x, +gridDim.x, …; interior tiles first.
struct MlpTiling {
  int variant = kMlpTiledDouble;  // kMlpTiledFloat, kMlpTiledDouble or kMlpPoint
  int points = 0;  // points per tile (point kernel: per interior tile; 4 × that per boundary tile)
  int features = 0;  // point kernel: hidden features of every layer a thread owns (5 or 10)
  int ld = 0;        // shared-memory row stride of a stream matrix (padded)
  int tiles_interior = 0, tiles_boundary = 0;
  int grid = 0;
  std::size_t shared_bytes = 0;
  // Point kernel: the pre-activation scratch it needs in MlpPassArgs::scratch and the blocks'
  // loss sums, in elements.
  std::size_t scratch_elements = 0;
  // The pass launches with programmatic dependent launch (its blocks start, and zero-fill their
  // shared memory, while the reduction before it finishes; mlp_device.cuh): the point kernel
  // only. overlap_reduce: so does the reduction after the pass (its blocks start while the
  // pass's last blocks run): the point kernel when each block takes one tile (with more tiles
  // than blocks, waiting reduction blocks would take SM slots from the pass's last tiles).
  bool overlap = false, overlap_reduce = false;
};

// Picks the kernel, tile size and grid for n_int + n_bnd points on the current device
// (gradient: the training pass, with gradient accumulators in shared memory). Throws
// std::runtime_error naming the sizes when not even one point per tile fits in the device's
// shared memory.
template <class T>
MlpTiling plan_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                          const MlpTuning& tuning = {});

// Field order: what the Poisson/Dirichlet passes read comes first, the general rows' fields and
// `sums` last. The kernels read their arguments at these offsets, and ptxas's register allocation
// of the float point kernel depends on them. MlpNetView keeps lap_dims last for the same reason.
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
  T* scratch = nullptr;  // point kernel: MlpTiling::scratch_elements
  double* losses = nullptr;
  unsigned* counter = nullptr;  // zero between launches (the last block resets it)
  int* halt = nullptr;          // null: no early stop
  int step = 0;
  double stop_below = 0;
  // Evaluation mode (out_u non-null): u, ∇u (n × dim), Δₛu at the interior points.
  T* out_u = nullptr;
  T* out_grad = nullptr;
  T* out_lap = nullptr;
  // The rows (docs/mathematics.md, "The MLP"). general false: e = Δu − f, r = u − p (and the
  // pointers below unused). general true: e = a·Δₛu + b·∇u + c·u − f, r = α·u + β·∇u·n − p,
  // every coefficient given per point (a, c: N; b: N × dim; alpha, beta: K; normals: K × dim).
  // A boundary tile carries the derivative streams when one of its points has β ≠ 0.
  bool general = false;
  const T* coef_a = nullptr;
  const T* coef_b = nullptr;
  const T* coef_c = nullptr;
  const T* coef_alpha = nullptr;
  const T* coef_beta = nullptr;
  const T* normals = nullptr;
  // Non-null: the last block also writes {Σe², Σb²} here (2 doubles), the sums a run over ranks
  // adds up into the union's loss (losses divides by this launch's own counts).
  double* sums = nullptr;
};
static_assert(offsetof(MlpPassArgs<float>, general) > offsetof(MlpPassArgs<float>, out_lap) &&
                  offsetof(MlpNetView<float>, lap_dims) > offsetof(MlpNetView<float>, shift),
              "the fields added for general rows stay after the Poisson/Dirichlet ones");

template <class T>
void launch_mlp_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                     const MlpPassArgs<T>& args);

// The pass on the host, args holding host pointers: the kernel's block code run block after
// block as blocks of one thread (the loss as the kernel's last block computes it, in another
// summation order). For testing the tile logic (layouts, streams, backward pass) without a
// device. emulated_mlp_tiling gives it `points` per tile, `grid` blocks and a tiled variant
// (kMlpTiledFloat's SIMT block code in either precision, kMlpTiledDouble's in double).
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

// The CUDA MLP backend (make_cuda_mlp_backend of kernels/mlp_backend.hpp) planning its passes
// with `tuning`.
template <class T>
std::unique_ptr<MlpBackend<T>> make_cuda_mlp_backend(const MlpOptions& options,
                                                     const MlpTuning& tuning);

// The current device's multiprocessors, as the planner counts them (its crossovers are in tiles
// per SM).
int mlp_device_sms();

}  // namespace rbfpde::gpu
