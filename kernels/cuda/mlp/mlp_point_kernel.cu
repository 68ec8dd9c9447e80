// The point-stationary CUDA MLP pass (MlpTiling::variant kMlpPoint; planned and launched from
// mlp_launch.cu through mlp_variants.hpp, its selection rules in mlp_plan.hpp):
// mlp_point_kernel, the training and residual pass of 2D networks of hidden layers of one width
// ≤ 64 and one output, the default for their training passes from about 0.4 (float) or 0.65
// (double) of its 32-point tiles per SM (kPtDefaultTilesPerSm).
// Launch: persistent blocks of 32·G·NT threads (G = ⌈width / R⌉ feature groups, R = pt_rows:
// 5, or 10 in double for widths past 60; NT = 1 or, in float, 2 tiles of 32 points), grid =
// the resident blocks or the tiles if fewer; dynamic shared memory PtLayout::total elements (θ
// with zero-padded weight images, two stream buffers).
// Napkin math: the FLOPs of mlp_pass_kernel.cu's head comment; a training pass also writes every
// hidden layer's pre-activations (4 streams × R·G features a point; σ(z) in the value slot for
// tanh and sigmoid) to a per-thread scratch in global memory and reads each back at most twice
// (L2-resident): for 2-50-50-50-50-1 in double about 18 KB a point, 0.3 GB a pass at
// 16384 + 1024. The section below has the structure and the measurements.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/mlp/mlp_plan.hpp"
#include "kernels/cuda/mlp/mlp_device.cuh"
#include "kernels/cuda/mlp/mlp_variants.hpp"
#include "kernels/mlp_math.hpp"
#include "kernels/mlp_tile_schedule.hpp"

namespace rbfpde::gpu::detail {
namespace {

// ---- The point-stationary training pass (2D, equal hidden widths ≤ 64) -----------------------
// Thread (q, g) of a block owns point slot q (lane + 32·tile-warp) and the R (pt_rows)
// features Rg … Rg + R − 1 of every hidden layer, with all four streams of its point in
// registers: the forward GEMM Z = W X reads X's column block of its point from shared memory
// (16-byte loads, consecutive lanes → consecutive points) and W's rows as broadcasts, 4 k at a
// time: 16·R FMAs on 4·R independent accumulators per 4 + R loads, and the activation runs in place
// on the accumulators (no second pass over shared memory). A block takes 32·NT points per tile, two
// stream buffers (ping-pong) and one barrier per layer in the forward pass, two per layer in the
// backward pass (24 barriers per 16 points in the tiled kernel). The pre-activations of every
// hidden layer go to a per-thread scratch (global, coalesced, L2-resident; each thread reads back
// only what it wrote); for tanh and sigmoid the value slot holds σ(z) instead, because σ', σ'',
// σ''' follow from it, so the backward pass evaluates no activation. The last hidden layer stays
// in the registers: each thread adds w_out over its own rows into row g of a free buffer, the
// output sums the G rows, and ∂I/∂w_out comes from the registers by warp shuffles. Backward per
// hidden layer h, top down: P̄ = the activation adjoint of X̄ (registers) into buffer A, X_{h−1}
// recomputed from the scratch into buffer X (the same ownership: features Rg … of point q), one
// barrier, then ∂I/∂W_h += Σ_columns P̄ Xᵀ in 5 × KB micro-tiles (half-warps on 2 × 8 of them:
// pt_weight_gradient) added straight into the block's partials row (one owner per entry, fixed
// order: same inputs, same bits), and X̄_{h−1} = W_hᵀ P̄ into registers. In double both products
// and the forward GEMM run on the tensor cores instead (pt_mma: DMMA from the same shared
// buffers; X̄ is staged in buffer X, Z in the output buffer, one more barrier each, and their
// owners read them back, Z's adding the bias and activating). Boundary tiles carry four points
// per lane, one in each stream slot (a boundary point needs only the value stream). Each block
// sums its threads' Σe², Σb² and the last block adds the blocks' sums (fixed order). θ reaches
// shared memory by cp.async. The blocks take their tiles by a static schedule that puts the
// boundary tiles (each about two interior tiles of work) on the blocks with fewer interior tiles
// (kernels/mlp_tile_schedule.hpp). A block's first tile stores its gradient terms into its
// partials row and later tiles add to them (no zeroing pass over the row). The pass launches with
// programmatic dependent launch (MlpTiling::overlap, mlp_device.cuh): a block zero-fills its
// shared memory while the reduction before it finishes; so does the reduction after it when each
// block takes one tile (MlpTiling::overlap_reduce).
// Features of every hidden layer a thread owns (R, a template parameter of the kernel): 5 in
// float; in double 5 for widths ≤ 60 and 10 above (pt_rows). In float a width-50 network then
// takes 10 warps a 32-point tile at 96 registers: two blocks, 20 warps an SM. In double, 10 warps
// of at most 168 registers: one block an SM (shared memory), twice the warps of R = 10. The
// register cap is what 9 to 12 warps leave: an SM spreads a block's warps over four register
// files of 16384, so 10 warps at 172 registers did not fit (three on one file).
// The kernels built: (T, R, NT) = (float, 5, 1), (float, 5, 2), (double, 5, 1), (double, 10, 1).
// Weight-gradient micro-tiles (FMA path): 5 rows × pt_kb / NT columns (about as many
// micro-tiles as threads for width 50).
constexpr int pt_kb(int R) { return R >= 10 ? 4 : 2; }
// DMMA warp units (UM × UN output tiles of 16 × 8 a warp; double): Z = W X and X̄ = Wᵀ P̄ take
// kPtUnitM × 4, ∂I/∂W 2 × kPtWgUnitN. R = 10 (5 warps a tile) 4 × 4 and 2 × 4; R = 5 (10 warps)
// 2 × 4 and 2 × 2: 3746 it/s, against 3700 with 4 × 2 and 2 × 2 and 3258 with 2 × 2 and 1 × 2
// (16384 + 1024, H200).
template <int R>
constexpr int kPtUnitM = R >= 10 ? 4 : 2;
template <int R>
constexpr int kPtWgUnitN = R >= 10 ? 4 : 2;

// A packed boundary tile costs about this many interior tiles (kernels/mlp_tile_schedule.hpp):
// on an H200 at 16384 + 1024, 76 against 37 µs in float (two blocks an SM) and 93 against 49 µs
// in double (bench_gpu_mlp timeline).
constexpr int kPtBoundaryCost = 2;

// Offsets (in T) of the block's shared memory, computed once on the host.
struct PtLayout {
  int H = 0, G = 0, NT = 0, NP = 0, threads = 0;
  int R = 0;     // features of every hidden layer a thread owns (pt_rows)
  int Rr = 0;    // rows of a weight image and of the biases: R·G
  int Kq = 0;    // columns of a weight image (zero-padded; see point_layout)
  int Kf = 0;    // … of them read by the forward GEMM: max(H, Rr) rounded up to 4
  int rows = 0;  // rows of a stream buffer
  int ldc = 0;   // row stride of a stream buffer: 4·NP padded to an odd number of 16-byte units
  int kbn = 0;   // weight-gradient micro-tiles along k (KB rows each, strided by kbn)
  int rbn = 0;   // … along r (5 consecutive rows each)
  int off_w1 = 0, off_bias = 0, off_wo = 0, off_img = 0, off_buf0 = 0, off_buf1 = 0;
  int off_seed = 0, off_xin = 0, off_osum = 0, total = 0;
  int tiles_int = 0, tiles_bnd = 0;
  int Ri = 0;  // rows of a weight image: Rr rounded up to 8 (zero rows: the MMAs' k padding)
};

// Double runs the weight gradient, the adjoint and the forward GEMM on the tensor cores (DMMA);
// float keeps the FMA units. Each kernel holds only its own path, so that the other one's code
// takes no room in the instruction cache.
template <class T>
constexpr bool kPtTensorCores = sizeof(T) == sizeof(double);

// Four consecutive values into shared memory (p 16-byte aligned) in 16-byte stores. Written
// in PTX: NVVM split the float4 store into four 4-byte stores (st.shared.f32; lanes 16 bytes
// apart, so 4-way bank conflicts: 13 % of the float pass's shared-memory wavefronts).
template <class T>
__device__ __forceinline__ void store4(T* p, const T (&v)[4]) {
#if defined(__CUDA_ARCH__)
  const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(p));
  if constexpr (sizeof(T) == 4) {
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(a), "f"(v[0]), "f"(v[1]),
                 "f"(v[2]), "f"(v[3]));
  } else {
    asm volatile("st.shared.v2.f64 [%0], {%1, %2};" ::"r"(a), "d"(v[0]), "d"(v[1]));
    asm volatile("st.shared.v2.f64 [%0+16], {%1, %2};" ::"r"(a), "d"(v[2]), "d"(v[3]));
  }
#endif
}

#if defined(__CUDA_ARCH__)
// One element from global to shared memory, asynchronously (cp.async, bypassing the registers);
// pt_copy_async_wait waits for all of the thread's copies.
template <class T>
__device__ __forceinline__ void pt_copy_async(T* dst, const T* src) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(d), "l"(src), "n"(sizeof(T))
               : "memory");
}
__device__ __forceinline__ void pt_copy_async_wait() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

template <class T>
__device__ __forceinline__ void load2(const T* p, T& a, T& b) {
  if constexpr (sizeof(T) == 4) {
    const float2 v = *reinterpret_cast<const float2*>(p);
    a = v.x, b = v.y;
  } else {
    const double2 v = *reinterpret_cast<const double2*>(p);
    a = v.x, b = v.y;
  }
}

// The streams of a row in place: value, ∂x, ∂y, Δ. FromValue: z[0] holds σ(z) already, not z
// (the scratch of tanh and sigmoid: pt_save).
template <class T, bool FromValue>
__device__ __forceinline__ void pt_activate(T (&z)[4], Activation act) {
  const ActivationTerms<T> t = activation_terms_at(act, z[0], FromValue);
  const T ax = z[1], ay = z[2];
  z[0] = t.s;
  z[1] = stream_slope(t, ax);
  z[2] = stream_slope(t, ay);
  z[3] = stream_laplacian(t, ax * ax + ay * ay, z[3]);
}

// X̄ → P̄ in place at the scratch row z (mlp_math.hpp's adjoint_*).
template <class T, bool FromValue>
__device__ __forceinline__ void pt_adjoint(T (&xb)[4], const T (&z)[4], Activation act) {
  const ActivationTerms<T> t = activation_terms_at(act, z[0], FromValue);
  const T ax = z[1], ay = z[2], c = z[3];
  const T hb = xb[0], gx = xb[1], gy = xb[2], lb = xb[3];
  xb[0] = adjoint_value(t, hb, gx * ax + gy * ay, lb, ax * ax + ay * ay, c);
  xb[1] = adjoint_slope(t, gx, lb, ax);
  xb[2] = adjoint_slope(t, gy, lb, ay);
  xb[3] = adjoint_laplacian(t, lb);
}

// Packed (boundary) tiles: every slot a value. Rolled loops over a local copy, not inlined:
// these tiles are rare, and unrolled they would quadruple the kernel's inlined activations.
template <class T, int A, int R>
__device__ __noinline__ void pt_activate_packed(T* v) {
  for (int k = 0; k < 4 * R; ++k) {
    T s, d1;
    activation_value_slope(Activation(A), v[k], s, d1);
    v[k] = s;
  }
}
template <class T, int A, bool FromValue, int R>
__device__ __noinline__ void pt_adjoint_packed(T* xb, const T* z) {
  for (int k = 0; k < 4 * R; ++k) xb[k] *= activation_terms_at(Activation(A), z[k], FromValue).d1;
}

// FromValue: the rows hold σ(z) in their value slots (every slot when packed, where activating
// is then nothing to do).
template <class T, int A, bool FromValue, int R>
__device__ __forceinline__ void pt_activate_rows(T (&z)[R][4], bool packed) {
  if (packed) {
    if constexpr (!FromValue) {
      T v[4 * R];
#pragma unroll
      for (int k = 0; k < 4 * R; ++k) v[k] = z[k / 4][k % 4];
      pt_activate_packed<T, A, R>(v);
#pragma unroll
      for (int k = 0; k < 4 * R; ++k) z[k / 4][k % 4] = v[k];
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < R; ++i) pt_activate<T, FromValue>(z[i], Activation(A));
}

template <class T, int A, bool FromValue, int R>
__device__ __forceinline__ void pt_adjoint_rows(T (&xb)[R][4], const T (&z)[R][4], bool packed) {
  if (packed) {
    T v[4 * R], w[4 * R];
#pragma unroll
    for (int k = 0; k < 4 * R; ++k) v[k] = xb[k / 4][k % 4], w[k] = z[k / 4][k % 4];
    pt_adjoint_packed<T, A, FromValue, R>(v, w);
#pragma unroll
    for (int k = 0; k < 4 * R; ++k) xb[k / 4][k % 4] = v[k];
    return;
  }
#pragma unroll
  for (int i = 0; i < R; ++i) pt_adjoint<T, FromValue>(xb[i], z[i], Activation(A));
}

// Per-thread scratch of hidden layer h: element j of thread tid at base + (h·4R + j)·threads.
// pt_save writes slots s0 … s1 − 1 of every row.
template <class T, int R>
__device__ __forceinline__ void pt_save(T* base, int h, int threads, const T (&z)[R][4], int s0 = 0,
                                        int s1 = 4) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int s = 0; s < 4; ++s)
      if (s >= s0 && s < s1) base[std::size_t(h * 4 * R + 4 * i + s) * threads] = z[i][s];
}
template <class T, int R>
__device__ __forceinline__ void pt_load(const T* base, int h, int threads, T (&z)[R][4]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int s = 0; s < 4; ++s) z[i][s] = base[std::size_t(h * 4 * R + 4 * i + s) * threads];
}

// ∂I/∂W (H × H, row-major at w_off of prow) += Σ over the tile's columns P̄[r][c] X[k][c], and
// ∂I/∂b (b_off) += Σ over the value columns of P̄[r]. Micro-tile (rb, kb): rows 5rb … 5rb + 4,
// columns kb + j·kbn (j < KB).
template <class T, int KB>
__device__ void pt_weight_gradient(T* prow, int w_off, int b_off, const T* pbar, const T* x,
                                   const PtLayout& L, bool packed, bool first) {
  const int H = L.H, ncol = 4 * L.NP;
  // Micro-tile of lane t: half-warps take tiles of 2 row blocks × 8 column blocks, so that a
  // half-warp's P̄ loads touch 2 rows and its X loads 8 rows (one shared-memory wavefront each;
  // consecutive lanes along the column blocks touched up to 16); the micro-tiles the tiles
  // leave (the last column blocks when kbn is not a multiple of 8, the last row block when rbn
  // is odd) go to the lanes after them, one each.
  const int rp = L.rbn / 2, ko = L.kbn / 8, main_lanes = 16 * rp * ko, kx = L.kbn - 8 * ko;
  for (int t = int(threadIdx.x); t < L.rbn * L.kbn; t += int(blockDim.x)) {
    int rb, kb;
    if (t < main_lanes) {
      const int h = t >> 4;
      rb = 2 * (h % rp) + ((t >> 3) & 1);
      kb = 8 * (h / rp) + (t & 7);
    } else if (const int u = t - main_lanes; u < L.rbn * kx) {
      rb = u % L.rbn;
      kb = 8 * ko + u / L.rbn;
    } else {
      rb = L.rbn - 1;
      kb = u - L.rbn * kx;
    }
    T acc[5][KB];
#pragma unroll
    for (int i = 0; i < 5; ++i)
#pragma unroll
      for (int j = 0; j < KB; ++j) acc[i][j] = T(0);
    // The micro-tiles of column block kb = 0 also own the bias rows: Σ over the value columns.
    T sb[5] = {T(0), T(0), T(0), T(0), T(0)};
    const bool bias_owner = kb == 0;

    const T* pa = pbar + 5 * rb * L.ldc;
    const T* px = x + kb * L.ldc;
#pragma unroll 2
    for (int c = 0; c < ncol; c += 4) {
      T av[5][4], xv[KB][4];
#pragma unroll
      for (int i = 0; i < 5; ++i) load4(pa + i * L.ldc + c, av[i]);
#pragma unroll
      for (int j = 0; j < KB; ++j) load4(px + j * L.kbn * L.ldc + c, xv[j]);
#pragma unroll
      for (int i = 0; i < 5; ++i)
#pragma unroll
        for (int j = 0; j < KB; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][j] += av[i][e] * xv[j][e];
      if (bias_owner) {
#pragma unroll
        for (int i = 0; i < 5; ++i)
          sb[i] += packed ? (av[i][0] + av[i][1]) + (av[i][2] + av[i][3]) : av[i][0];
      }
    }
    // All loads of the partials before any store: the read-modify-writes overlap. (Loaded
    // before the column loop instead, they cost two blocks per SM their registers.)
    T old[5][KB], old_b[5];
#pragma unroll
    for (int i = 0; i < 5; ++i) {
#pragma unroll
      for (int j = 0; j < KB; ++j) {
        const int r = 5 * rb + i, k = kb + j * L.kbn;
        old[i][j] = !first && r < H && k < H ? prow[w_off + r * H + k] : T(0);
      }
      old_b[i] = !first && bias_owner && 5 * rb + i < H ? prow[b_off + 5 * rb + i] : T(0);
    }
#pragma unroll
    for (int i = 0; i < 5; ++i)
#pragma unroll
      for (int j = 0; j < KB; ++j) {
        const int r = 5 * rb + i, k = kb + j * L.kbn;
        if (r < H && k < H) prow[w_off + r * H + k] = old[i][j] + acc[i][j];
      }
#pragma unroll
    for (int i = 0; i < 5; ++i)
      if (bias_owner && 5 * rb + i < H) prow[b_off + 5 * rb + i] = old_b[i] + sb[i];
  }
}

// C = A·B on the tensor cores (mma.sync DMMA, double: see kPtTensorCores; the tiled kernel's
// fragment coordinates) for the block's warps, operands in shared memory: A(m, k) = a[m·am + k·ak],
// B(k, n) = b[k·bk + n·bn], k < K rounded up to the MMA's k (the operands must read as 0 or
// finite there, and B as 0). Rows m of A are clamped to m_max and columns n of B to n_max
// (reads stay in the matrices; the outputs they feed are past the matrix and dropped). Warp
// units of UM × UN output tiles (16 × 8 each) share their fragments: per k-step UM A and UN B
// fragments are loaded once. For every output of the units (m < 16·UM·⌈M/16/UM⌉, n likewise;
// one owner lane each, fixed order) the epilogue gets epi.load(j, m, n), then, after all of the
// lane's loads, epi.store(j, m, n, value); j numbers the lane's outputs (read-modify-writes
// overlap).
template <class T, int UM, int UN, class Epi>
__device__ __forceinline__ void pt_mma(int M, int N, int K, const T* a, int am, int ak, int m_max,
                                       const T* b, int bk, int bn, int n_max, Epi epi) {
  static_assert(sizeof(T) == sizeof(double), "the point pass's MMAs are DMMA only");
  using S = MmaShape;
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5;
  const int warps = int(blockDim.x) >> 5, g = lane >> 2, t = lane & 3;
  const int un = ((N + 7) / 8 + UN - 1) / UN, units = ((M + 15) / 16 + UM - 1) / UM * un;
  for (int u = warp; u < units; u += warps) {
    const int m0 = (u / un) * 16 * UM, n0 = (u % un) * 8 * UN;
    int aoff[UM][2], boff[UN];
#pragma unroll
    for (int mi = 0; mi < UM; ++mi)
#pragma unroll
      for (int e = 0; e < 2; ++e) aoff[mi][e] = min(m0 + 16 * mi + g + 8 * e, m_max) * am + t * ak;
#pragma unroll
    for (int ni = 0; ni < UN; ++ni) boff[ni] = min(n0 + 8 * ni + g, n_max) * bn + t * bk;
    T acc[UM][UN][4];
#pragma unroll
    for (int mi = 0; mi < UM; ++mi)
#pragma unroll
      for (int ni = 0; ni < UN; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mi][ni][e] = T(0);
#pragma unroll 2
    for (int k = 0; k < K; k += S::K) {
      T fa[UM][2], fb[UN][1];
#pragma unroll
      for (int mi = 0; mi < UM; ++mi)
#pragma unroll
        for (int i = 0; i < 2; ++i) fa[mi][i] = a[aoff[mi][i] + k * ak];
#pragma unroll
      for (int ni = 0; ni < UN; ++ni) fb[ni][0] = b[boff[ni] + k * bk];
#pragma unroll
      for (int mi = 0; mi < UM; ++mi)
#pragma unroll
        for (int ni = 0; ni < UN; ++ni) mma_frag(acc[mi][ni], fa[mi], fb[ni]);
    }
    // f(j, m, n, value) for the lane's outputs: accumulator j at row m, column n.
    auto each_output = [&](auto&& f) {
#pragma unroll
      for (int mi = 0; mi < UM; ++mi)
#pragma unroll
        for (int ni = 0; ni < UN; ++ni)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            f(mi * UN * 4 + ni * 4 + e, m0 + 16 * mi + g + 8 * (e >> 1),
              n0 + 8 * ni + 2 * t + (e & 1), acc[mi][ni][e]);
    };
    each_output([&](int j, int m, int n, T) { epi.load(j, m, n); });  // every load, then
    each_output([&](int j, int m, int n, T v) { epi.store(j, m, n, v); });
  }
}

// Epilogue of the weight gradient: ∂I/∂W[r][k] (H × H, row-major at w) += the product; all
// loads of the partials before any store, so that the read-modify-writes overlap.
template <class T, int NV>
struct PtAddToPartials {
  T* w;
  int H;
  bool first;  // the block's first tile: store, no load
  T old[NV];
  __device__ void load(int j, int r, int k) {
    old[j] = !first && r < H && k < H ? w[r * H + k] : T(0);
  }
  __device__ void store(int j, int r, int k, T v) {
    if (r < H && k < H) w[r * H + k] = old[j] + v;
  }
};

// Epilogue of X̄ = Wᵀ P̄: rows m < rows of the stream buffer x (row stride ld).
template <class T>
struct PtStoreRows {
  T* x;
  int ld, rows;
  __device__ void load(int, int, int) {}
  __device__ void store(int, int m, int n, T v) {
    if (m < rows) x[m * ld + n] = v;
  }
};

// ∂I/∂W (H × H at w_off of prow) += P̄ Xᵀ over the tile's columns on the tensor cores, and
// ∂I/∂b (b_off) += Σ over the value columns of P̄ (every column in packed tiles) by the warps
// without a unit (else by all).
template <class T, int UM, int UN>
__device__ void pt_weight_gradient_mma(T* prow, int w_off, int b_off, const T* pbar, const T* x,
                                       const PtLayout& L, bool packed, bool first_tile) {
  const int H = L.H, ncol = 4 * L.NP;
  pt_mma<T, UM, UN>(H, H, ncol, pbar, L.ldc, 1, H - 1, x, 1, L.ldc, H - 1,
                    PtAddToPartials<T, UM * UN * 4>{prow + w_off, H, first_tile, {}});
  const int un = ((H + 7) / 8 + UN - 1) / UN, units = ((H + 15) / 16 + UM - 1) / UM * un;
  const int busy = min(units, int(blockDim.x) / 32) * 32;
  const int first = busy < int(blockDim.x) ? busy : 0;
  for (int r = int(threadIdx.x) - first; r >= 0 && r < H; r += int(blockDim.x) - first) {
    const T* pr = pbar + r * L.ldc;
    T sum = T(0);
    if (packed) {
      for (int c = 0; c < ncol; c += 4) {
        T v[4];
        load4(pr + c, v);
        sum += (v[0] + v[1]) + (v[2] + v[3]);
      }
    } else {
      for (int c = 0; c < ncol; c += 4) sum += pr[c];
    }
    prow[b_off + r] = (first_tile ? T(0) : prow[b_off + r]) + sum;
  }
}

#endif

// One instantiation per activation (A: rbfpde::Activation): the others' code (sin's argument
// reduction above all) would otherwise sit in every row's inlined activation.
// Registers: at most 96 a thread in float (two blocks of 320 threads per SM for width 50, or
// one of 640); in double what one block of the kernel's most warps leaves, counting warps in
// fours (an SM's four register files): 168 for R = 5 (up to 12 warps), 255 for R = 10.
template <class T, int R, int NT, int A>
__global__ void __maxnreg__(
    sizeof(T) == sizeof(float)
        ? 96
        : std::min(255, 65536 / (128 * ((pt_max_groups<T>(R, NT) * NT + 3) / 4)) / 8 * 8))
    mlp_point_kernel(const MlpNetView<T> net, const MlpPassArgs<T> a, const PtLayout L) {
#if defined(__CUDA_ARCH__)
  extern __shared__ __align__(16) unsigned char mlp_smem[];
  T* const sm = reinterpret_cast<T*>(mlp_smem);
  constexpr int KB = pt_kb(R) / NT;
  constexpr bool kFromValue = activation_terms_from_value_only(Activation(A));
  const int H = L.H, G = L.G, Lh = net.layers - 1, np = net.n_params;
  const int tid = int(threadIdx.x), nth = int(blockDim.x);
  const int lane = tid & 31, warp = tid >> 5, g = warp % G, q = (warp / G) * 32 + lane;
  const int r0 = R * g;
  T* const w1 = sm + L.off_w1;       // Rr × 2
  T* const bias = sm + L.off_bias;   // Lh × Rr
  T* const wo = sm + L.off_wo;       // Kq, then the output bias at [Kq]
  T* const img = sm + L.off_img;     // (Lh − 1) × Ri × Kq: W_l row-major, zero-padded
  T* const seeds = sm + L.off_seed;  // NP × 4
  T* const xin = sm + L.off_xin;     // NP × 8: the input coordinates of the tile's points
  T* const osum = sm + L.off_osum;   // NT × (Rr + 1): the tile-warps' ∂I/∂w_out, ∂I/∂b_out

  // Zeros first (16-byte stores): the padding of the weight images, biases and stream buffers
  // must read as 0.
  {
    const T zero[4] = {T(0), T(0), T(0), T(0)};
    for (int k = tid; k < L.total / 4; k += nth) store4(sm + 4 * k, zero);
  }
  // Everything above overlaps with the previous kernel (mlp_device.cuh); from here on the
  // global reads and writes.
  pdl_wait();
  if (a.halt && a.halt[0] < a.step) return;
  __syncthreads();
  // θ into shared memory by asynchronous copies (cp.async): every copy of a thread is in
  // flight at once, and none passes through its registers.
  const T* const th = a.theta;
  for (int k = tid; k < 2 * H; k += nth) pt_copy_async(w1 + k, th + net.w_offset[0] + k);
  for (int h = 1; h <= Lh; ++h)
    for (int k = tid; k < H; k += nth)
      pt_copy_async(bias + (h - 1) * L.Rr + k, th + net.b_offset[h - 1] + k);
  for (int k = tid; k < H; k += nth) pt_copy_async(wo + k, th + net.w_offset[Lh] + k);
  if (tid == 0) pt_copy_async(wo + L.Kq, th + net.b_offset[Lh]);
  // W_l (H × H, row-major) into its image (row stride Kq): element k at row k / H, column
  // k % H, both stepped along with k (no division per element).
  for (int l = 1; l < Lh; ++l) {
    T* const im = img + (l - 1) * L.Ri * L.Kq;
    const T* const wl = th + net.w_offset[l];
    const int dr = nth / H, dc = nth % H;
    int r = tid / H, c = tid % H;
#pragma unroll 4
    for (int k = tid; k < H * H; k += nth) {
      pt_copy_async(im + r * L.Kq + c, wl + k);
      r += dr;
      c += dc;
      if (c >= H) c -= H, ++r;
    }
  }
  const bool train = a.partials != nullptr;  // else residuals and the loss only
  T* const prow = train ? a.partials + std::size_t(blockIdx.x) * np : nullptr;
  T* const scr = a.scratch + std::size_t(blockIdx.x) * Lh * 4 * R * nth + tid;
  pt_copy_async_wait();
  __syncthreads();
  // The reduction after this pass may launch now, when it launches with programmatic dependent
  // launch (MlpTiling::overlap_reduce; its blocks wait for this pass to finish): here rather
  // than at the start, 6700 against 6672 it/s (float, 16384 + 1024, H200, before the schedule).
  pdl_launch_dependents();

  double sum_e = 0, sum_b = 0;  // this thread's Σe², Σb² (the loss: block sums, then the grid's)
  for (int it = 0;; ++it) {
    // The static schedule (kernels/mlp_tile_schedule.hpp): boundary tiles on the blocks with
    // fewer interior tiles.
    const int tile = point_tile_schedule(it, int(blockIdx.x), int(gridDim.x), L.tiles_int,
                                         L.tiles_bnd, kPtBoundaryCost);
    if (tile < 0) break;
    const bool packed = tile >= L.tiles_int;  // boundary: four points per lane
    // The block's first tile stores its gradient terms into the partials row, later tiles add
    // to them (the row is not zeroed first: every entry is written on every tile).
    const bool first = it == 0;
    const int start = packed ? (tile - L.tiles_int) * 4 * L.NP : tile * L.NP;
    const T* pts = packed ? a.x_bnd : a.x_int;
    const int n = packed ? a.n_bnd : a.n_int;
    // Input coordinates of the slots (x', the map applied); dead slots get 0.
    T x0[4], x1[4];
#pragma unroll
    for (int s = 0; s < 4; ++s) {
      const int p = packed ? start + 4 * q + s : start + q;
      const bool live = (packed || s == 0) && p < n;
      x0[s] = live ? net.scale[0] * pts[2 * p] + net.shift[0] : T(0);
      x1[s] = live ? net.scale[1] * pts[2 * p + 1] + net.shift[1] : T(0);
    }
    if (g == 0)
#pragma unroll
      for (int s = 0; s < 4; ++s) xin[8 * q + 2 * s] = x0[s], xin[8 * q + 2 * s + 1] = x1[s];

    // Forward: hidden layer 1 from the inputs, then Z = W X (+ b on the value slots); one
    // activation site for all layers (the kernel's code size is its instruction cache's).
    T z[R][4];
    T* in = sm + L.off_buf1;
    T* out = sm + L.off_buf0;
    T* psum = out;  // the groups' output sums (row g of the buffer the last hidden layer frees)
    for (int l = 0; l < Lh; ++l) {
      if (l == 0) {
#pragma unroll
        for (int i = 0; i < R; ++i) {
          const int r = r0 + i;
          const T wa = r < H ? w1[2 * r] : T(0), wb = r < H ? w1[2 * r + 1] : T(0);
          const T b = bias[r];
          if (packed) {
#pragma unroll
            for (int s = 0; s < 4; ++s) z[i][s] = wa * x0[s] + wb * x1[s] + b;
          } else {
            z[i][0] = wa * x0[0] + wb * x1[0] + b;
            z[i][1] = wa * net.scale[0];
            z[i][2] = wb * net.scale[1];
            z[i][3] = T(0);
          }
        }
      } else {
        const T* w = img + (l - 1) * L.Ri * L.Kq + r0 * L.Kq;
        const T* bl = bias + l * L.Rr + r0;
        if constexpr (kPtTensorCores<T>) {
          // Z = W_l X on the tensor cores into `out` (free: its last reader was the previous
          // layer's GEMM, before that layer's barrier), one barrier, then each thread takes
          // back its own rows and columns (and writes only those below: no second barrier).
          pt_mma<T, kPtUnitM<R>, 4>(L.Rr, 4 * L.NP, H, img + (l - 1) * L.Ri * L.Kq, L.Kq, 1,
                                    L.Ri - 1, in, L.ldc, 1, INT_MAX / 2,
                                    PtStoreRows<T>{out, L.ldc, L.Rr});
          __syncthreads();
#pragma unroll
          for (int i = 0; i < R; ++i) {
            load4(out + (r0 + i) * L.ldc + 4 * q, z[i]);
            z[i][0] += bl[i];
            if (packed) z[i][1] += bl[i], z[i][2] += bl[i], z[i][3] += bl[i];
          }
        } else {
#pragma unroll
          for (int i = 0; i < R; ++i) {
            z[i][0] = bl[i];
            z[i][1] = packed ? bl[i] : T(0);
            z[i][2] = packed ? bl[i] : T(0);
            z[i][3] = packed ? bl[i] : T(0);
          }
          const T* xc = in + 4 * q;
#pragma unroll 2
          for (int k = 0; k < L.Kf; k += 4) {
            T xv[4][4];
#pragma unroll
            for (int j = 0; j < 4; ++j) load4(xc + (k + j) * L.ldc, xv[j]);
#pragma unroll
            for (int i = 0; i < R; ++i) {
              T wv[4];
              load4(w + i * L.Kq + k, wv);
#pragma unroll
              for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int s = 0; s < 4; ++s) z[i][s] += wv[j] * xv[j][s];
            }
          }
        }
      }
      // The scratch keeps what the backward pass needs: the pre-activation streams, with σ(z)
      // in the value slots (every slot when packed) where σ', σ'', σ''' follow from it (tanh,
      // sigmoid), so that the backward pass evaluates no activation.
      if (train && !(kFromValue && packed)) pt_save(scr, l, nth, z, kFromValue ? 1 : 0, 4);
      pt_activate_rows<T, A, false>(z, packed);
      if (train && kFromValue) pt_save(scr, l, nth, z, 0, packed ? 4 : 1);
      if (l + 1 < Lh) {
#pragma unroll
        for (int i = 0; i < R; ++i) store4(out + (r0 + i) * L.ldc + 4 * q, z[i]);
      } else {
        // The last hidden layer stays in the registers (the backward pass recomputes what it
        // needs): each thread adds w_out over its own rows, for every stream of its slot, into
        // row g of a free buffer: `out`, or `in` once the tensor-core GEMM has read it (its
        // results sit in `out` until their owners have taken them back).
        T acc[4] = {T(0), T(0), T(0), T(0)};
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
          for (int s = 0; s < 4; ++s) acc[s] += wo[r0 + i] * z[i][s];
        psum = kPtTensorCores<T> && l > 0 ? in : out;
        store4(psum + g * L.ldc + 4 * q, acc);
      }
      __syncthreads();
      T* t = in;
      in = out;
      out = t;
    }

    // Output: u (value slots) and Δu from the groups' sums, residuals, seeds ∂I/∂(output
    // streams) per slot.
    if (g == 0) {
      T sd[4] = {T(0), T(0), T(0), T(0)};
      T acc[4] = {T(0), T(0), T(0), T(0)};
      for (int gg = 0; gg < G; ++gg) {
        T xv[4];
        load4(psum + gg * L.ldc + 4 * q, xv);
#pragma unroll
        for (int s = 0; s < 4; ++s) acc[s] += xv[s];
      }
      if (packed) {
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          const int p = start + 4 * q + s;
          if (p < n) {
            const T b = acc[s] + wo[L.Kq] - a.p[p];
            a.b[p] = b;
            sd[s] = b * a.lam_k;
            sum_b += double(b) * double(b);
          }
        }
      } else if (start + q < n) {
        const int p = start + q;
        const T e = acc[3] - a.f[p];
        a.e[p] = e;
        sd[3] = e * a.inv_n;
        sum_e += double(e) * double(e);
      }
      store4(seeds + 4 * q, sd);
    }
    __syncthreads();
    if (!train) continue;  // the next tile writes the buffers and seeds after its own barriers
    // X̄ of the last hidden layer: seed ⊗ w_out. ∂I/∂w_out (and ∂I/∂b_out) from the registers:
    // Σ over the slot's streams of seed · X_Lh per row, summed over the warp's points (its
    // lanes) into the tile-warp's row of osum; added to the partials after the next barrier.
    T xb[R][4];
    {
      T sd[4];
      load4(seeds + 4 * q, sd);
      T dw[R + 1];
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const T w = wo[r0 + i];
        dw[i] = T(0);
#pragma unroll
        for (int s = 0; s < 4; ++s) {
          xb[i][s] = sd[s] * w;
          dw[i] += sd[s] * z[i][s];
        }
      }
      dw[R] = packed ? (sd[0] + sd[1]) + (sd[2] + sd[3]) : sd[0];
#pragma unroll
      for (int i = 0; i <= R; ++i) dw[i] = warp_sum(dw[i]);  // lane 0 holds the sums
      if (lane == 0) {
        T* const os = osum + (warp / G) * (L.Rr + 1);
#pragma unroll
        for (int i = 0; i < R; ++i) os[r0 + i] = dw[i];
        if (g == 0) os[L.Rr] = dw[R];
      }
    }
    // P̄ and X_{h−1} go to the two stream buffers: the output's sums were read before the last
    // barrier, and nothing reads X_Lh from shared memory.
    T* const pb = out;
    T* const xs = in;
    for (int h = Lh; h >= 1; --h) {
      pt_load(scr, h - 1, nth, z);
      pt_adjoint_rows<T, A, kFromValue>(xb, z, packed);
#pragma unroll
      for (int i = 0; i < R; ++i) store4(pb + (r0 + i) * L.ldc + 4 * q, xb[i]);
      if (h >= 2) {
        pt_load(scr, h - 2, nth, z);
        pt_activate_rows<T, A, kFromValue>(z, packed);
#pragma unroll
        for (int i = 0; i < R; ++i) store4(xs + (r0 + i) * L.ldc + 4 * q, z[i]);
      }
      __syncthreads();
      if (h == Lh) {  // ∂I/∂w_out, ∂I/∂b_out: the tile-warps' sums (fixed order)
        for (int r = tid; r <= H; r += nth) {
          const int k = r < H ? r : L.Rr;
          T v = osum[k];
          for (int tw = 1; tw < L.NT; ++tw) v += osum[tw * (L.Rr + 1) + k];
          const int idx = r < H ? net.w_offset[Lh] + r : net.b_offset[Lh];
          prow[idx] = (first ? T(0) : prow[idx]) + v;
        }
      }
      if (h >= 2) {
        const int w_off = net.w_offset[h - 1], b_off = net.b_offset[h - 1];
        if constexpr (kPtTensorCores<T>) {
          pt_weight_gradient_mma<T, 2, kPtWgUnitN<R> / NT>(prow, w_off, b_off, pb, xs, L, packed,
                                                           first);
          // X̄_{h−1} = W_hᵀ P̄ on the tensor cores, staged in the X buffer (free after a barrier)
          // and read back into the registers of its owners. A's rows are W's columns: clamped to
          // the image's row length (past it a warp's unit would read beyond the last image).
          __syncthreads();
          pt_mma<T, kPtUnitM<R>, 4>(L.Rr, 4 * L.NP, H, img + (h - 2) * L.Ri * L.Kq, 1, L.Kq,
                                    L.Kq - 1, pb, L.ldc, 1, INT_MAX / 2,
                                    PtStoreRows<T>{xs, L.ldc, L.Rr});
          __syncthreads();
#pragma unroll
          for (int i = 0; i < R; ++i) load4(xs + (r0 + i) * L.ldc + 4 * q, xb[i]);
          continue;  // the next layer writes only what its own threads read: no barrier
        } else {
          pt_weight_gradient<T, KB>(prow, w_off, b_off, pb, xs, L, packed, first);
        }
        // X̄_{h−1} = W_{h−1}ᵀ P̄: column block r0 … r0 + R − 1 of every row of W, read in 8-byte
        // pairs. The image's rows have an even length, so the pairs start at r0 or r0 + 1 by r0's
        // parity o and the feature left over is a 4-byte load. The accumulators take the values in
        // load order (slot j: feature o + j for j < R − 1, the left-over feature last) and go back
        // in feature order after the loop.
        const T* w = img + (h - 2) * L.Ri * L.Kq + r0;
        const int o = R % 2 == 1 ? (r0 & 1) : 0;
        const T* wp = w + o;
        const T* ws = w + (o ? 0 : R - 1);
        T acc[R][4];
#pragma unroll
        for (int j = 0; j < R; ++j)
#pragma unroll
          for (int s = 0; s < 4; ++s) acc[j][s] = T(0);
        const T* pc = pb + 4 * q;
#pragma unroll 2
        for (int r = 0; r < H; ++r) {
          T pv[4], wv[R];
          load4(pc + r * L.ldc, pv);
#pragma unroll
          for (int j = 0; j + 1 < R; j += 2) load2(wp + r * L.Kq + j, wv[j], wv[j + 1]);
          if constexpr (R % 2 == 1) wv[R - 1] = ws[r * L.Kq];
#pragma unroll
          for (int j = 0; j < R; ++j)
#pragma unroll
            for (int s = 0; s < 4; ++s) acc[j][s] += wv[j] * pv[s];
        }
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
          for (int s = 0; s < 4; ++s) xb[i][s] = o ? acc[(i + R - 1) % R][s] : acc[i][s];
      } else {
        // Hidden layer 1's weights W_1 (H × 2) and bias: x' of the slot, ∂x'_j/∂x_j = scale_j.
        // Four lanes a row, each over every fourth point (the four lanes' loads then fall in
        // different banks), combined by shuffles; whole warps run the loop.
        const int lanes4 = (4 * H + 31) / 32 * 32;
        for (int t = tid; t < lanes4; t += nth) {
          const int r = min(t >> 2, H - 1), part = t & 3;
          T s0 = T(0), s1 = T(0), sb = T(0);
          const T* pr = pb + r * L.ldc;
          for (int qq = part; qq < L.NP; qq += 4) {
            T pv[4];
            load4(pr + 4 * qq, pv);
            if (packed) {
#pragma unroll
              for (int s = 0; s < 4; ++s) {
                s0 += pv[s] * xin[8 * qq + 2 * s];
                s1 += pv[s] * xin[8 * qq + 2 * s + 1];
                sb += pv[s];
              }
            } else {
              s0 += pv[0] * xin[8 * qq] + pv[1] * net.scale[0];
              s1 += pv[0] * xin[8 * qq + 1] + pv[2] * net.scale[1];
              sb += pv[0];
            }
          }
#pragma unroll
          for (int m = 1; m <= 2; m <<= 1) {
            s0 += __shfl_xor_sync(0xffffffffu, s0, m);
            s1 += __shfl_xor_sync(0xffffffffu, s1, m);
            sb += __shfl_xor_sync(0xffffffffu, sb, m);
          }
          if (part == 0 && (t >> 2) < H) {
            const T o0 = first ? T(0) : prow[net.w_offset[0] + 2 * r],
                    o1 = first ? T(0) : prow[net.w_offset[0] + 2 * r + 1],
                    ob = first ? T(0) : prow[net.b_offset[0] + r];
            prow[net.w_offset[0] + 2 * r] = o0 + s0;
            prow[net.w_offset[0] + 2 * r + 1] = o1 + s1;
            prow[net.b_offset[0] + r] = ob + sb;
          }
        }
      }
      __syncthreads();
    }
  }
  if (!a.losses) return;
  __shared__ double loss_scratch[32 * pt_max_groups<T>(R, NT) * NT];
  double* const block_sums = reinterpret_cast<double*>(
      a.scratch + std::size_t(gridDim.x) * Lh * 4 * R * nth);  // after every block's Z scratch
  sum_e = block_sum(sum_e, loss_scratch);
  sum_b = block_sum(sum_b, loss_scratch);
  if (tid == 0) {
    block_sums[2 * blockIdx.x] = sum_e;
    block_sums[2 * blockIdx.x + 1] = sum_b;
  }
  last_block_loss(a, loss_scratch, block_sums);
#endif
}

template <class T>
PtLayout point_layout(const MlpNetView<T>& net, int R, int nt, int n_int, int n_bnd) {
  PtLayout L;
  const int H = net.sizes[1], Lh = net.layers - 1, kb = pt_kb(R) / nt;
  L.H = H;
  L.R = R;
  L.G = (H + R - 1) / R;
  L.NT = nt;
  L.NP = 32 * nt;
  L.threads = 32 * L.G * nt;
  L.Rr = R * L.G;
  // Columns ≡ 8 or 24 (mod 32): the adjoint's A fragments (lanes along m and k) are then
  // conflict-free.
  L.Kq = (std::max(H, L.Rr) + 7) / 8 * 8;
  if (L.Kq % 16 == 0) L.Kq += 8;
  L.Ri = (L.Rr + 7) / 8 * 8;
  L.Kf = round4(std::max(H, L.Rr));
  L.kbn = (H + kb - 1) / kb;
  L.rbn = (H + 4) / 5;
  L.rows = (std::max({L.Ri, L.Kq, 5 * L.rbn, kb * L.kbn}) + 7) / 8 * 8;
  L.ldc = 4 * L.NP + 16 / int(sizeof(T));  // an odd number of 16-byte units
  int off = 0;
  auto take = [&](int n) {
    const int o = off;
    off += round4(n);
    return o;
  };
  L.off_w1 = take(2 * L.Rr);
  L.off_bias = take(Lh * L.Rr);
  L.off_wo = take(L.Kq + 1);
  L.off_img = take((Lh - 1) * L.Ri * L.Kq);
  L.off_buf0 = take(L.rows * L.ldc);
  L.off_buf1 = take(L.rows * L.ldc);
  L.off_seed = take(4 * L.NP);
  L.off_xin = take(8 * L.NP);
  L.off_osum = take(L.NT * (L.Rr + 1));
  L.total = off;
  L.tiles_int = (n_int + L.NP - 1) / L.NP;
  L.tiles_bnd = (n_bnd + 4 * L.NP - 1) / (4 * L.NP);
  return L;
}

template <class T>
using PointKernel = void (*)(MlpNetView<T>, MlpPassArgs<T>, PtLayout);

template <class T, int R, int NT>
PointKernel<T> point_kernel_nt(Activation act) {
  switch (act) {
    case Activation::kSin:
      return mlp_point_kernel<T, R, NT, int(Activation::kSin)>;
    case Activation::kSigmoid:
      return mlp_point_kernel<T, R, NT, int(Activation::kSigmoid)>;
    case Activation::kTanh:
    default:
      return mlp_point_kernel<T, R, NT, int(Activation::kTanh)>;
  }
}

// R = 10 in double only (widths past pt_max_groups(5, 1)·5), two tiles a block in float only.
template <class T>
PointKernel<T> point_kernel(int R, int nt, Activation act) {
  if constexpr (sizeof(T) == sizeof(float)) {
    if (nt == 2) return point_kernel_nt<T, 5, 2>(act);
  } else {
    if (R == 10) return point_kernel_nt<T, 10, 1>(act);
  }
  return point_kernel_nt<T, 5, 1>(act);
}

// The (R, NT) pairs built for T (point_kernel).
template <class T>
std::vector<std::pair<int, int>> point_kernel_shapes() {
  if (sizeof(T) == sizeof(float)) return {{5, 1}, {5, 2}};
  return {{5, 1}, {10, 1}};
}

template <class T>
std::size_t point_static_bytes(int R, int nt) {  // loss scratch and flag of the last block
  return std::size_t(32 * pt_max_groups<T>(R, nt) * nt) * sizeof(double) + 64;
}

template <class T>
void configure_point_kernels(const DeviceLimits& limits) {
  static const bool configured = [&] {
    for (auto [R, nt] : point_kernel_shapes<T>())
      for (Activation act : {Activation::kTanh, Activation::kSin, Activation::kSigmoid})
        allow_shared_memory(point_kernel<T>(R, nt, act),
                            limits.shared_optin - point_static_bytes<T>(R, nt));
    return true;
  }();
  (void)configured;
}

}  // namespace

template <class T>
bool plan_point_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                       const MlpTuning& tuning, const DeviceLimits& limits, MlpTiling& t) {
  const bool forced = tuning.kernel == MlpTuning::Kernel::kPoint;
  if (!gradient || !point_pass_fits(net)) return false;
  configure_point_kernels<T>(limits);
  const int R = pt_rows<T>(net.sizes[1]);
  int per_sm[2] = {0, 0};
  for (int nt = 1; nt <= kPtMaxTiles<T>; ++nt) {
    const PtLayout L = point_layout(net, R, nt, n_int, n_bnd);
    const std::size_t bytes = std::size_t(L.total) * sizeof(T);
    if (L.G > pt_max_groups<T>(R, nt) || bytes + point_static_bytes<T>(R, nt) > limits.shared_optin)
      continue;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm[nt - 1], point_kernel<T>(R, nt, Activation(net.activation)), L.threads, bytes));
  }
  const int nt = choose_point_tiles<T>(per_sm, n_int, n_bnd, limits.sms, tuning.point_tiles);
  if (nt == 0) {
    if (forced)
      throw std::invalid_argument(
          "the point-stationary MLP pass does not fit this network" +
          std::string(tuning.point_tiles ? " with that many tiles a block" : "") +
          " on this device");
    return false;
  }
  const PtLayout L = point_layout(net, R, nt, n_int, n_bnd);
  const int tiles = L.tiles_int + L.tiles_bnd;
  if (!forced && !point_kernel_by_default<T>(tiles, limits.sms)) return false;
  t.variant = kMlpPoint;
  t.points = L.NP;
  t.features = L.R;
  t.tiles_interior = L.tiles_int;
  t.tiles_boundary = L.tiles_bnd;
  t.overlap = tuning.pdl;
  const int resident = per_sm[nt - 1] * limits.sms;
  t.grid = std::max(
      1, std::min({tiles, resident, tuning.point_grid >= 1 ? tuning.point_grid : resident}));
  t.overlap_reduce = t.overlap && t.grid == tiles;
  t.shared_bytes = std::size_t(L.total) * sizeof(T);
  // Every block's pre-activations, then 2 doubles a block (its Σe², Σb²).
  t.scratch_elements = std::size_t(t.grid) * std::size_t(net.layers - 1) * 4 * std::size_t(L.R) *
                           std::size_t(L.threads) +
                       std::size_t(t.grid) * 2 * sizeof(double) / sizeof(T);
  return true;
}

template <class T>
void launch_point_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                       const MlpPassArgs<T>& args) {
  if (args.out_u) throw std::logic_error("the point-stationary MLP pass does not evaluate");
  if (args.general)
    throw std::logic_error("the point-stationary MLP pass takes Poisson/Dirichlet rows only");
  const PtLayout L = point_layout(net, tiling.features, tiling.points / 32, args.n_int, args.n_bnd);
  launch_mlp_kernel("mlp_point_kernel", point_kernel<T>(L.R, L.NT, Activation(net.activation)),
                    tiling.grid, L.threads, tiling.shared_bytes, stream, tiling.overlap, net, args,
                    L);
}

#define RBFPDE_MLP_POINT_INSTANTIATE(T)                                                      \
  template bool plan_point_tiling<T>(const MlpNetView<T>&, int, int, bool, const MlpTuning&, \
                                     const DeviceLimits&, MlpTiling&);                       \
  template void launch_point_pass<T>(MlpStream, const MlpNetView<T>&, const MlpTiling&,      \
                                     const MlpPassArgs<T>&);
RBFPDE_MLP_POINT_INSTANTIATE(float)
RBFPDE_MLP_POINT_INSTANTIATE(double)
#undef RBFPDE_MLP_POINT_INSTANTIATE

}  // namespace rbfpde::gpu::detail
