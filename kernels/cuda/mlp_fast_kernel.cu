// Variant 3 of the CUDA MLP pass (MlpTiling::variant; planned and launched from mlp_kernels.cu
// through mlp_variants.hpp): mlp_fast_kernel, the register-resident training pass in double for
// 2D networks of 1 to 8 hidden layers of one width ≤ 56 and one output. Opt-in
// (RBFPDE_MLP_VARIANT=3): exact (tests/gpu), as fast as variant 2 at 16384 + 1024 points and
// slower at 1200 + 120 (bench/RESULTS.md).
// Launch: persistent blocks of 4 warps, a warp taking 8 points a round; grid = the SMs, or the
// 8-point chunks / 4 if fewer; dynamic shared memory fast_shared_bytes (θ padded to 56-wide
// layers, a 64 × 60-double staging area per warp).
// Napkin math: the FLOPs of mlp_kernels.cu's head comment, on DMMA and with the hidden layers
// padded to 56; every hidden layer's pre-activations (4 streams × 56 features a point, double)
// go to a per-warp scratch in global memory and come back in the backward pass (L2-resident).
// The section below has the structure.
#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/mlp_device.cuh"
#include "kernels/cuda/mlp_variants.hpp"
#include "kernels/mlp_math.hpp"

namespace rbfpde::gpu::detail {
namespace {

// ---- Variant 3: the register-resident training pass (double, 2D, uniform hidden width) -------
// bench/RESULTS.md ("the forward pass with every stream in registers") measured the layout; this
// is the whole training pass on it. A warp takes 8 points (a chunk) and keeps their four streams
// in DMMA fragments: rows of m-tile 0 are the value (row g) and ∂/∂x (row g + 8) streams of
// point g = lane / 4, m-tile 1 holds ∂/∂y and Δ; columns are features, padded to kFastHp. A lane
// so holds all streams of its point for features 8·nt + 2t + e (t = lane % 4, e = 0, 1) and runs
// the activation and its adjoint in registers; a layer's C fragment is the next GEMM's A fragment
// as it stands (k-step 2·nt + e takes feature 8·nt + 2t + e at A column t, which the weight
// operand's index absorbs). Forward Z = X Wᵀ, adjoint X̄ = P̄ W: both warp-local, W in shared
// memory. The pre-activations of every hidden layer go to a per-warp scratch in global memory
// (fragment order, coalesced, L2-resident) for the backward pass. The weight gradient is the
// only cross-warp step: per weight layer the 4 warps of a block stage P̄ and X_{l−1} (32 rows
// each) in shared memory, one barrier, and each warp forms its own 16 × 8 tiles of ∂I/∂W over the
// block's 128 rows and adds them to the block's partials[] row (one owner per entry, fixed order:
// same inputs, same bits). Two barriers per weight layer per 32 points, against 24 per 16 points
// in variants 0–2.
constexpr int kFastHp = 56;           // padded hidden width
constexpr int kFastNt = kFastHp / 8;  // n-tiles of a hidden layer
constexpr int kFastKs = kFastHp / 4;  // f64 k-steps over a hidden layer
constexpr int kFastWarps = 4;
constexpr int kFastThreads = 32 * kFastWarps;
constexpr int kFastMaxHidden = 8;
constexpr int kFastStage = 60;              // staging row stride (conflict-free fragment loads)
constexpr int kFastRegs = 2 * kFastNt * 4;  // doubles of one stream block per lane

using FastFrag = double[2][kFastNt][4];

// Shared image of θ (doubles): W1 [kFastHp][2], b1 [kFastHp], per hidden→hidden layer
// W [kFastHp][kFastHp] (row = output) then b [kFastHp], the output row w [kFastHp] and its bias.
__host__ __device__ inline int fast_image_doubles(int hidden) {
  return 3 * kFastHp + (hidden - 1) * (kFastHp * kFastHp + kFastHp) + kFastHp + 1;
}
__host__ __device__ inline int fast_image_padded(int hidden) {
  return (fast_image_doubles(hidden) + 1) / 2 * 2;
}
__host__ inline std::size_t fast_shared_bytes(int hidden) {
  return (std::size_t(fast_image_padded(hidden)) + std::size_t(kFastWarps) * 2 * 32 * kFastStage) *
         sizeof(double);
}

#if defined(__CUDA_ARCH__)
// The DMMA of variant 2's fragments (mma_frag), operands as scalars.
__device__ __forceinline__ void fast_mma(double (&c)[4], double a0, double a1, double b) {
  const double fa[2] = {a0, a1}, fb[1] = {b};
  mma_frag(c, fa, fb);
}

// Streams of (mt, nt, i): value (0, nt, e), ∂x (0, nt, 2 + e), ∂y (1, nt, e), Δ (1, nt, 2 + e).
__device__ __forceinline__ void fast_activate(FastFrag& c, Activation act) {
#pragma unroll
  for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const ActivationTerms<double> s = activation_terms(act, c[0][nt][e]);
      const double gx = c[0][nt][2 + e], gy = c[1][nt][e];
      c[1][nt][2 + e] = s.d2 * (gx * gx + gy * gy) + s.d1 * c[1][nt][2 + e];
      c[0][nt][e] = s.s;
      c[0][nt][2 + e] = s.d1 * gx;
      c[1][nt][e] = s.d1 * gy;
    }
}

// In place, X̄ → P̄ through the activation at pre-activations z (activation_backward's formulas).
__device__ __forceinline__ void fast_activate_adjoint(FastFrag& xb, const FastFrag& z,
                                                      Activation act) {
#pragma unroll
  for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const ActivationTerms<double> s = activation_terms(act, z[0][nt][e]);
      const double ax = z[0][nt][2 + e], ay = z[1][nt][e], cz = z[1][nt][2 + e];
      const double hb = xb[0][nt][e], gxb = xb[0][nt][2 + e], gyb = xb[1][nt][e],
                   lb = xb[1][nt][2 + e];
      xb[0][nt][e] =
          hb * s.d1 + s.d2 * (gxb * ax + gyb * ay) + lb * (s.d3 * (ax * ax + ay * ay) + s.d2 * cz);
      xb[0][nt][2 + e] = gxb * s.d1 + 2.0 * lb * s.d2 * ax;
      xb[1][nt][e] = gyb * s.d1 + 2.0 * lb * s.d2 * ay;
      xb[1][nt][2 + e] = lb * s.d1;
    }
}

__device__ __forceinline__ void fast_bias(FastFrag& c, const double* b, int t) {
#pragma unroll
  for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      c[0][nt][e] = b[8 * nt + 2 * t + e];
      c[0][nt][2 + e] = c[1][nt][e] = c[1][nt][2 + e] = 0.0;
    }
}

__device__ __forceinline__ void fast_zero(FastFrag& c) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) c[mt][nt][i] = 0.0;
}

// out (+)= X Wᵀ (forward, transpose = false: B(k = in, n = out) = W[out][in]) or P̄ W (adjoint,
// transpose = true: B(k = out, n = in) = W[out][in]); W row-major with stride kFastHp.
template <bool Adjoint>
__device__ __forceinline__ void fast_gemm(FastFrag& out, const FastFrag& x, const double* w, int g,
                                          int t) {
#pragma unroll
  for (int ks = 0; ks < kFastKs; ++ks) {
    const int nt = ks / 2, e = ks % 2, k = 8 * nt + 2 * t + e;
#pragma unroll
    for (int j = 0; j < kFastNt; ++j) {
      const double b = Adjoint ? w[k * kFastHp + 8 * j + g] : w[(8 * j + g) * kFastHp + k];
      fast_mma(out[0][j], x[0][nt][e], x[0][nt][2 + e], b);
      fast_mma(out[1][j], x[1][nt][e], x[1][nt][2 + e], b);
    }
  }
}

// The fragment in scratch, fragment order (lane fastest): coalesced, each lane its own values.
__device__ __forceinline__ void fast_save(double* s, const FastFrag& c, int lane) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) s[((mt * kFastNt + nt) * 4 + i) * 32 + lane] = c[mt][nt][i];
}
__device__ __forceinline__ void fast_load(const double* s, FastFrag& c, int lane) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) c[mt][nt][i] = s[((mt * kFastNt + nt) * 4 + i) * 32 + lane];
}

// Staging row of stream s of point g: s·8 + g; column = feature.
__device__ __forceinline__ void fast_stage(double* st, const FastFrag& c, int g, int t) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int s = 2 * mt + i / 2;
        st[(s * 8 + g) * kFastStage + 8 * nt + 2 * t + (i & 1)] = c[mt][nt][i];
      }
}

// ∂I/∂W (M outputs × N inputs, at w_off in partials_row) += Σ over the block's 128 staged rows
// P̄[row][m] X[row][n]; ∂I/∂b (at b_off) += Σ over the value-stream rows P̄[row][m]. Tiles
// 16 × 8, tile q owned by warp q % kFastWarps. Between two barriers.
__device__ void fast_weight_gradient(double* partials_row, int w_off, int b_off, int M, int N,
                                     const double* stage, int warp, int g, int t) {
  const int mts = (M + 15) / 16, nts = (N + 7) / 8;
  for (int q = warp; q < mts * nts; q += kFastWarps) {
    const int m0 = (q / nts) * 16, n0 = (q % nts) * 8;
    double acc[4] = {0.0, 0.0, 0.0, 0.0};
    const int ma = m0 + g, mb = m0 + g + 8, n = n0 + g;
#pragma unroll 4
    for (int ks = 0; ks < 32 * kFastWarps / 4; ++ks) {
      const int r = 4 * ks + t;  // block row: warp r / 32, row r % 32 of its staging
      const double* p = stage + (r / 32) * (2 * 32 * kFastStage) + (r % 32) * kFastStage;
      const double* x = p + 32 * kFastStage;
      const double a0 = ma < M ? p[ma] : 0.0, a1 = mb < M ? p[mb] : 0.0;
      const double b = n < N ? x[n] : 0.0;
      fast_mma(acc, a0, a1, b);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = m0 + g + 8 * (i / 2), nn = n0 + 2 * t + (i & 1);
      if (m < M && nn < N) partials_row[w_off + m * N + nn] += acc[i];
    }
  }
  for (int m = int(threadIdx.x); m < M; m += kFastThreads) {
    double s = 0.0;
    for (int w = 0; w < kFastWarps; ++w)
      for (int gg = 0; gg < 8; ++gg) s += stage[w * (2 * 32 * kFastStage) + gg * kFastStage + m];
    partials_row[b_off + m] += s;
  }
}
#endif

// One instantiation per activation (A: rbfpde::Activation), as mlp_point_kernel.
template <int A>
__global__ void __launch_bounds__(kFastThreads, 1)
    mlp_fast_kernel(const MlpNetView<double> net, const MlpPassArgs<double> a, double* scratch) {
#if defined(__CUDA_ARCH__)
  pdl_start();
  if (a.halt && a.halt[0] < a.step) return;
  extern __shared__ __align__(16) unsigned char mlp_smem[];
  double* const sm = reinterpret_cast<double*>(mlp_smem);
  const int Lh = net.layers - 1, H = net.sizes[1], np = net.n_params;
  constexpr Activation act = Activation(A);
  const bool train = a.partials != nullptr;
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5, g = lane >> 2, t = lane & 3;

  // θ into the padded image; this block's partials row to zero.
  double* const w1 = sm;
  double* const b1 = w1 + 2 * kFastHp;
  double* const wh = b1 + kFastHp;
  double* const wo = wh + (Lh - 1) * (kFastHp * kFastHp + kFastHp);
  for (int k = int(threadIdx.x); k < fast_image_doubles(Lh); k += kFastThreads) sm[k] = 0.0;
  __syncthreads();
  for (int k = int(threadIdx.x); k < 2 * H; k += kFastThreads) w1[k] = a.theta[net.w_offset[0] + k];
  for (int k = int(threadIdx.x); k < H; k += kFastThreads) {
    b1[k] = a.theta[net.b_offset[0] + k];
    wo[k] = a.theta[net.w_offset[Lh] + k];
  }
  if (threadIdx.x == 0) wo[kFastHp] = a.theta[net.b_offset[Lh]];
  for (int l = 1; l < Lh; ++l) {
    double* w = wh + (l - 1) * (kFastHp * kFastHp + kFastHp);
    for (int k = int(threadIdx.x); k < H * H; k += kFastThreads)
      w[(k / H) * kFastHp + k % H] = a.theta[net.w_offset[l] + k];
    for (int k = int(threadIdx.x); k < H; k += kFastThreads)
      w[kFastHp * kFastHp + k] = a.theta[net.b_offset[l] + k];
  }
  double* const prow = train ? a.partials + std::size_t(blockIdx.x) * np : nullptr;
  if (train)
    for (int k = int(threadIdx.x); k < np; k += kFastThreads) prow[k] = 0.0;
  double* const stage = sm + fast_image_padded(Lh);
  double* const my_stage = stage + warp * (2 * 32 * kFastStage);
  double* const my_scratch =
      scratch + (std::size_t(blockIdx.x) * kFastWarps + warp) * std::size_t(Lh) * kFastRegs * 32;
  __syncthreads();

  const int chunks_int = (a.n_int + 7) / 8, chunks = chunks_int + (a.n_bnd + 7) / 8;
  const int per_round = int(gridDim.x) * kFastWarps;
  for (int base = 0; base < chunks; base += per_round) {
    const int block_first = base + int(blockIdx.x) * kFastWarps;
    if (block_first >= chunks) break;  // uniform over the block
    const int chunk = block_first + warp;
    const bool has = chunk < chunks;
    const bool interior = chunk < chunks_int;
    const int start = (interior ? chunk : chunk - chunks_int) * 8;
    const int count = has ? min(8, (interior ? a.n_int : a.n_bnd) - start) : 0;
    const bool live = g < count;
    const int p = start + g;
    const double* pts = interior ? a.x_int : a.x_bnd;
    const double xs0 = live ? net.scale[0] * pts[2 * p] + net.shift[0] : 0.0;
    const double xs1 = live ? net.scale[1] * pts[2 * p + 1] + net.shift[1] : 0.0;

    // Forward. c: the current layer's streams.
    FastFrag c;
    fast_bias(c, b1, t);
    {
      const double v = t == 0 ? xs0 : (t == 1 ? xs1 : 0.0);
      const double dx = t == 0 ? net.scale[0] : 0.0, dy = t == 1 ? net.scale[1] : 0.0;
#pragma unroll
      for (int j = 0; j < kFastNt; ++j) {
        const double b = t < 2 ? w1[(8 * j + g) * 2 + t] : 0.0;
        fast_mma(c[0][j], v, dx, b);
        fast_mma(c[1][j], dy, 0.0, b);
      }
    }
    if (train) fast_save(my_scratch, c, lane);
    fast_activate(c, act);
    for (int l = 1; l < Lh; ++l) {
      const double* w = wh + (l - 1) * (kFastHp * kFastHp + kFastHp);
      FastFrag z;
      fast_bias(z, w + kFastHp * kFastHp, t);
      fast_gemm<false>(z, c, w, g, t);
      if (train) fast_save(my_scratch + std::size_t(l) * kFastRegs * 32, z, lane);
      fast_activate(z, act);
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
          for (int i = 0; i < 4; ++i) c[mt][nt][i] = z[mt][nt][i];
    }
    double o[2][4] = {{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};
#pragma unroll
    for (int ks = 0; ks < kFastKs; ++ks) {
      const int nt = ks / 2, e = ks % 2;
      const double b = g == 0 ? wo[8 * nt + 2 * t + e] : 0.0;
      fast_mma(o[0], c[0][nt][e], c[0][nt][2 + e], b);
      fast_mma(o[1], c[1][nt][e], c[1][nt][2 + e], b);
    }
    // Output column 0 sits in the lanes t = 0 (C elements 0 and 2): broadcast to the quad.
    const int leader = lane & ~3;
    const double u = __shfl_sync(0xffffffffu, o[0][0], leader) + wo[kFastHp];
    const double lapu = __shfl_sync(0xffffffffu, o[1][2], leader);
    // Seeds ∂I/∂(output streams) of point g: Δu for interior points, u for boundary points.
    double seed_v = 0.0, seed_l = 0.0;
    if (live) {
      if (interior) {
        const double e = lapu - a.f[p];
        if (t == 0) a.e[p] = e;
        seed_l = e * a.inv_n;
      } else {
        const double b = u - a.p[p];
        if (t == 0) a.b[p] = b;
        seed_v = b * a.lam_k;
      }
    }
    if (!train) continue;

    // Backward, output layer: P̄ (one column) and X_Lh (= c) staged; X̄_Lh = P̄ ⊗ w_out.
    fast_stage(my_stage + 32 * kFastStage, c, g, t);
    if (t == 0)
      for (int s = 0; s < 4; ++s)
        my_stage[(s * 8 + g) * kFastStage] = s == 0 ? seed_v : (s == 3 ? seed_l : 0.0);
    FastFrag xb;
#pragma unroll
    for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const double w = wo[8 * nt + 2 * t + e];
        xb[0][nt][e] = seed_v * w;
        xb[0][nt][2 + e] = 0.0;
        xb[1][nt][e] = 0.0;
        xb[1][nt][2 + e] = seed_l * w;
      }
    __syncthreads();
    fast_weight_gradient(prow, net.w_offset[Lh], net.b_offset[Lh], 1, H, stage, warp, g, t);
    __syncthreads();
    for (int l = Lh - 1; l >= 0; --l) {  // hidden layer l + 1, weight layer l
      {
        FastFrag z;
        fast_load(my_scratch + std::size_t(l) * kFastRegs * 32, z, lane);
        fast_activate_adjoint(xb, z, act);  // xb is now P̄
      }
      if (!has) {  // an idle warp contributes nothing
        for (int k = lane; k < 2 * 32 * kFastStage; k += 32) my_stage[k] = 0.0;
      } else {
        fast_stage(my_stage, xb, g, t);
        if (l > 0) {
          FastFrag x;
          fast_load(my_scratch + std::size_t(l - 1) * kFastRegs * 32, x, lane);
          fast_activate(x, act);
          fast_stage(my_stage + 32 * kFastStage, x, g, t);
        } else if (t == 0) {  // the input streams: x', ∂x'/∂x_j = scale_j e_j, Δx' = 0
          double* xs = my_stage + 32 * kFastStage;
          xs[(0 * 8 + g) * kFastStage] = xs0;
          xs[(0 * 8 + g) * kFastStage + 1] = xs1;
          xs[(1 * 8 + g) * kFastStage] = net.scale[0];
          xs[(1 * 8 + g) * kFastStage + 1] = 0.0;
          xs[(2 * 8 + g) * kFastStage] = 0.0;
          xs[(2 * 8 + g) * kFastStage + 1] = net.scale[1];
          xs[(3 * 8 + g) * kFastStage] = 0.0;
          xs[(3 * 8 + g) * kFastStage + 1] = 0.0;
        }
      }
      __syncthreads();
      fast_weight_gradient(prow, net.w_offset[l], net.b_offset[l], H, l > 0 ? H : 2, stage, warp, g,
                           t);
      if (l > 0) {
        FastFrag nx;
        fast_zero(nx);
        fast_gemm<true>(nx, xb, wh + (l - 1) * (kFastHp * kFastHp + kFastHp), g, t);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
          for (int nt = 0; nt < kFastNt; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) xb[mt][nt][i] = nx[mt][nt][i];
      }
      __syncthreads();
    }
  }
  if (!a.losses) return;
  __shared__ double loss_scratch[kFastThreads];
  last_block_loss(a, loss_scratch);
#endif
}

using FastKernel = void (*)(MlpNetView<double>, MlpPassArgs<double>, double*);

FastKernel fast_kernel(Activation act) {
  switch (act) {
    case Activation::kSin:
      return mlp_fast_kernel<int(Activation::kSin)>;
    case Activation::kSigmoid:
      return mlp_fast_kernel<int(Activation::kSigmoid)>;
    case Activation::kTanh:
    default:
      return mlp_fast_kernel<int(Activation::kTanh)>;
  }
}

}  // namespace

void configure_fast_kernels(const DeviceLimits& limits) {
  static const bool configured = [&] {
    for (Activation act : {Activation::kTanh, Activation::kSin, Activation::kSigmoid}) {
      CUDA_CHECK(cudaFuncSetAttribute(fast_kernel(act), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(limits.shared_optin - 4096)));
      CUDA_CHECK(cudaFuncSetAttribute(fast_kernel(act),
                                      cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    }
    return true;
  }();
  (void)configured;
}

bool plan_fast_tiling(const MlpNetView<double>& net, int n_int, int n_bnd, bool gradient, int want,
                      const DeviceLimits& limits, MlpTiling& t) {
  // Variant 3 where it applies (double, 2D, equal hidden widths ≤ kFastHp, a training plan;
  // evaluation keeps the tiled kernels) and only when asked for (RBFPDE_MLP_VARIANT=3): it is
  // exact but slower than variant 2 so far (bench/RESULTS.md).
  const int Lh = net.layers - 1;
  bool fits = gradient && net.dim == 2 && Lh >= 1 && Lh <= kFastMaxHidden &&
              net.sizes[1] <= kFastHp && net.sizes[net.layers] == 1 && want == 3;
  for (int l = 1; l <= Lh; ++l) fits = fits && net.sizes[l] == net.sizes[1];
  if (fits && fast_shared_bytes(Lh) + 4096 <= limits.shared_optin) {
    const int chunks = (n_int + 7) / 8 + (n_bnd + 7) / 8;
    t.variant = 3;
    t.points = 8;
    t.tiles_interior = (n_int + 7) / 8;
    t.tiles_boundary = (n_bnd + 7) / 8;
    t.grid = std::max(1, std::min(limits.sms, (chunks + kFastWarps - 1) / kFastWarps));
    t.shared_bytes = fast_shared_bytes(Lh);
    t.scratch_elements = std::size_t(t.grid) * kFastWarps * std::size_t(Lh) * kFastRegs * 32;
    return true;
  }
  return false;
}

void launch_fast_pass(MlpStream stream, const MlpNetView<double>& net, const MlpTiling& tiling,
                      const MlpPassArgs<double>& args) {
  if (args.out_u) throw std::logic_error("the register-resident MLP pass does not evaluate");
  launch_mlp_kernel("mlp_fast_kernel", fast_kernel(Activation(net.activation)), tiling.grid,
                    kFastThreads, tiling.shared_bytes, stream, tiling.overlap, net, args,
                    args.scratch);
}

}  // namespace rbfpde::gpu::detail
