// The CUDA MLP's tiled pass kernel, the reduction with Adam, the host emulation of the tiled
// block code, and the planning and launch of every pass (docs/mathematics.md has the streams and
// their adjoints). The point-stationary kernel lives in mlp_point_kernel.cu, called through
// mlp_variants.hpp; the device helpers both files use are in mlp_device.cuh.
//
// mlp_pass_kernel (MlpTiling::variant kMlpTiledFloat / kMlpTiledDouble): persistent blocks of
// 512 threads; the three GEMMs of a tile run on the FMA units in float (2 × 4 output micro-tiles
// per thread) and on the tensor cores in double (mma.sync DMMA). A block copies θ into shared
// memory once (W rows padded to 4 for 16-byte loads), then takes tiles of `points` points. Per
// tile, every layer's stream matrices live in shared memory, a column per (stream, point): for
// interior tiles the streams are value, d first derivatives and the Laplacian Δₛ over the first
// lap_dims coordinates (S = d + 2), for boundary tiles the value (S = 1), or all d + 2 streams
// when a point of the tile has β ≠ 0 (general rows: its Laplacian stream then gets no adjoint).
// Forward: the GEMM Z_l = W_l X_{l−1} (+ b on the value columns) and the elementwise activation of
// the streams (mlp_math.hpp); the Z_l of the hidden layers are kept for the backward pass, the X_l
// recomputed from them when needed. Backward (as the CPU backend's): ∂I/∂W_l += P̄_l X_{l−1}ᵀ
// accumulated in shared memory by the one thread that owns each entry, X̄ = W_lᵀ P̄_l, and the
// elementwise adjoint of the activation streams in place. Each block ends by writing its gradient
// accumulators to partials[blockIdx.x]. The last block to finish (an integer ticket) sums Σe², Σb²
// over the whole batch in a fixed order: same inputs, same bits. plan_mlp_tiling picks the tile
// size (1 to 16 points): about the smallest of those with the fewest waves of resident blocks,
// since a tile's time grows with its points.
//
// mlp_reduce_kernel: 32 parameters a block, 8 warps summing the blocks' partials in a fixed
// order (coalesced), then the fused Adam update.
//
// Napkin math, 2-50-50-50-50-1 (P = 7851 parameters), N interior and K boundary points: forward
// ≈ 2·P·((d+2)N + K) FLOPs, backward twice that: 0.23 GFLOP at 1200 + 120, 3.1 GFLOP at
// 16384 + 1024 (≈ 50 µs at the H200's 67 TFLOP/s fp32 vector peak). Bytes: θ (31 KB float) per
// block from L2, the partials (grid × P) written and read once, points and residuals:
// negligible. Shared memory (θ, the gradient accumulators, 350 stream rows) leaves one block of
// 16 warps per SM, and a tile runs 24 barrier-separated phases: the 6 GEMM phases take 2/3 of
// the time, the 12 elementwise ones 1/3, and the GEMM phases are latency-bound (short dependent
// MMA/FMA chains per warp, one block per SM). Large batches of the networks it takes go to the
// point-stationary kernel instead (bench/RESULTS.md).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/mlp/mlp_plan.hpp"
#include "kernels/cuda/mlp/mlp_device.cuh"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/cuda/mlp/mlp_variants.hpp"
#include "kernels/mlp_backend.hpp"
#include "kernels/mlp_math.hpp"

namespace rbfpde::gpu {
using namespace detail;  // mlp_device.cuh's helpers, named as in the kernels below
namespace {

constexpr int kThreads = 256;
constexpr int kMicro = 4;  // micro-tile edge of the shared-memory GEMMs

// The block code below also compiles for the host, where emulate_mlp_pass runs it as blocks of
// one thread (no barriers needed): the tile logic is then testable without a device.
#if defined(__CUDA_ARCH__)
#define MLP_TID int(threadIdx.x)
#define MLP_NTHREADS int(blockDim.x)
#define MLP_SYNC() __syncthreads()
#else
#define MLP_TID 0
#define MLP_NTHREADS 1
#define MLP_SYNC() \
  do {             \
  } while (0)
#endif

MLP_HD int imin(int a, int b) { return a < b ? a : b; }
MLP_HD int imax(int a, int b) { return a > b ? a : b; }

template <class T, int R, int C>
MLP_HD void zero(T (&acc)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) acc[i][j] = T(0);
}

// The shared-memory GEMMs (float). Each thread owns an RM × 4 micro-tile of the output (RM = 2)
// and reads its operands in 16-byte loads: row strides (lda, ld) are
// multiples of 4 elements and every matrix starts 16-byte aligned (pass_shared_elements); the
// padding columns up to ld may be read (their products land in accumulators never stored).

// out(r, c) = Σ_{k<m} a[r·lda + k] · bmat[k·ld + c] (+ bias[r] on the value columns c < P), for
// r < n, c < C. Micro-tile: rows RM·rg…, columns 4·cg… (consecutive threads, consecutive
// columns: conflict-free B loads; A loads along k, broadcast within a row group).
template <int RM, class T>
MLP_HD void block_gemm_nn(T* __restrict__ out, const T* __restrict__ a, int lda,
                          const T* __restrict__ bmat, int n, int m, int C, int ld,
                          const T* __restrict__ bias, int P) {
  const int rgs = (n + RM - 1) / RM, cgs = (C + kMicro - 1) / kMicro;
  for (int item = MLP_TID; item < rgs * cgs; item += MLP_NTHREADS) {
    const int r0 = (item / cgs) * RM, c0 = (item % cgs) * kMicro;
    T acc[RM][kMicro];
    zero(acc);
    const T* arow[RM];
#pragma unroll
    for (int i = 0; i < RM; ++i) arow[i] = a + imin(r0 + i, n - 1) * lda;
    const T* bcol = bmat + c0;
    int k = 0;
    for (; k + 4 <= m; k += 4) {
      T av[RM][4], bv[4][kMicro];
#pragma unroll
      for (int i = 0; i < RM; ++i) load4(arow[i] + k, av[i]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) load4(bcol + (k + kk) * ld, bv[kk]);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int j = 0; j < kMicro; ++j) acc[i][j] = fma(av[i][kk], bv[kk][j], acc[i][j]);
    }
    for (; k < m; ++k) {
      T bv[kMicro];
      load4(bcol + k * ld, bv);
#pragma unroll
      for (int i = 0; i < RM; ++i) {
        const T av = arow[i][k];
#pragma unroll
        for (int j = 0; j < kMicro; ++j) acc[i][j] = fma(av, bv[j], acc[i][j]);
      }
    }
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int r = r0 + i;
      if (r >= n) continue;
      const T br = bias ? bias[r] : T(0);
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int c = c0 + j;
        if (c < C) out[r * ld + c] = acc[i][j] + (c < P ? br : T(0));
      }
    }
  }
}

// out(r, c) = Σ_{k<m} a[k·lda + r] · bmat[k·ld + c] for r < n, c < C (Aᵀ·B: the adjoint X̄ = WᵀP̄
// with W row-major, lda its padded row stride ≥ n rounded up to 4).
template <int RM, class T>
MLP_HD void block_gemm_tn(T* __restrict__ out, const T* __restrict__ a, int lda,
                          const T* __restrict__ bmat, int n, int m, int C, int ld) {
  const int rgs = (n + RM - 1) / RM, cgs = (C + kMicro - 1) / kMicro;
  for (int item = MLP_TID; item < rgs * cgs; item += MLP_NTHREADS) {
    const int r0 = (item / cgs) * RM, c0 = (item % cgs) * kMicro;
    T acc[RM][kMicro];
    zero(acc);
    const T* acol = a + r0;
    const T* bcol = bmat + c0;
    for (int k = 0; k < m; ++k) {
      T av[RM], bv[kMicro];
#pragma unroll
      for (int i = 0; i < RM; ++i) av[i] = acol[k * lda + i];
      load4(bcol + k * ld, bv);
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < kMicro; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int r = r0 + i;
      if (r >= n) continue;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int c = c0 + j;
        if (c < C) out[r * ld + c] = acc[i][j];
      }
    }
  }
}

// g(r, c) += Σ_{col < C} pbar(r, col) · x(c, col) for r < n, c < m (g row-major n × m). Every
// entry has one owner thread: no races, fixed order.
// Rows and columns of a micro-tile are interleaved (r = rg + i·rgs) so that consecutive threads
// read consecutive rows (ld/4 odd: distinct banks); the loads run along the columns.
template <int RM, class T>
MLP_HD void block_weight_gradient(T* __restrict__ g, const T* __restrict__ pbar,
                                  const T* __restrict__ x, int n, int m, int C, int ld) {
  const int rgs = (n + RM - 1) / RM, cgs = (m + kMicro - 1) / kMicro;
  for (int item = MLP_TID; item < rgs * cgs; item += MLP_NTHREADS) {
    const int rg = item / cgs, cg = item % cgs;
    T acc[RM][kMicro];
    zero(acc);
    const T* prow[RM];
    const T* xrow[kMicro];
#pragma unroll
    for (int i = 0; i < RM; ++i) prow[i] = pbar + imin(rg + i * rgs, n - 1) * ld;
#pragma unroll
    for (int j = 0; j < kMicro; ++j) xrow[j] = x + imin(cg + j * cgs, m - 1) * ld;
    int col = 0;
    for (; col + 4 <= C; col += 4) {
      T pv[RM][4], xv[kMicro][4];
#pragma unroll
      for (int i = 0; i < RM; ++i) load4(prow[i] + col, pv[i]);
#pragma unroll
      for (int j = 0; j < kMicro; ++j) load4(xrow[j] + col, xv[j]);
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
          for (int j = 0; j < kMicro; ++j) acc[i][j] = fma(pv[i][q], xv[j][q], acc[i][j]);
    }
    for (; col < C; ++col) {
#pragma unroll
      for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < kMicro; ++j) acc[i][j] = fma(prow[i][col], xrow[j][col], acc[i][j]);
    }
#pragma unroll
    for (int i = 0; i < RM; ++i) {
      const int r = rg + i * rgs;
      if (r >= n) continue;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int c = cg + j * cgs;
        if (c < m) g[r * m + c] += acc[i][j];
      }
    }
  }
}

// ---- Tensor-core GEMMs (double) ------------------------------------------------------------
// The same three products as above, each warp computing 16 × 8·NT output blocks with mma.sync
// (mlp_device.cuh: the instruction shape and the fragment coordinates). Operands
// are read from the shared-memory layouts above as they stand (any strides; rows, columns and k
// past the matrix read as 0), so only the fragment coordinates are new.
// Host builds (emulate_mlp_pass) run the same loaders and epilogues for all 32 lanes of a warp
// and multiply the gathered tiles exactly, so the fragment bookkeeping is tested without a GPU.

// A(r, k) = a[r·ar + k·ak] and B(k, c) = b[k·bk + c·bc], zero outside M × K and K × N.
template <class T>
struct GemmOperands {
  const T* a;
  int ar, ak;
  const T* b;
  int bk, bc;
  int M, N, K;
};

template <class T>
MLP_HD void load_frag_a(const GemmOperands<T>& op, int lane, int m0, int k0,
                        T (&fa)[MmaShape::NA]) {
#pragma unroll
  for (int i = 0; i < MmaShape::NA; ++i) {
    const int r = m0 + frag_a_row(lane, i), k = k0 + frag_a_col(lane, i);
    fa[i] = (r < op.M && k < op.K) ? op.a[r * op.ar + k * op.ak] : T(0);
  }
}

template <class T>
MLP_HD void load_frag_b(const GemmOperands<T>& op, int lane, int n0, int k0,
                        T (&fb)[MmaShape::NB]) {
  const int c = n0 + frag_b_col(lane);
#pragma unroll
  for (int i = 0; i < MmaShape::NB; ++i) {
    const int k = k0 + frag_b_row(lane, i);
    fb[i] = (c < op.N && k < op.K) ? op.b[k * op.bk + c * op.bc] : T(0);
  }
}

// Block-wide: for every (r, c) in M × N, epi(r, c, Σ_k A(r, k) B(k, c)). Work items are
// 16 × 8·NT output blocks (the NT n-tiles share the A fragments), warp w taking items
// w, w + warps, …; each output has one owner lane, so epi may accumulate without races.
template <int NT, class T, class Epi>
MLP_HD void warp_gemm(const GemmOperands<T>& op, Epi epi) {
  constexpr int KS = MmaShape::K, NA = MmaShape::NA, NB = MmaShape::NB;
  const int mt = (op.M + 15) / 16, nt = (op.N + 8 * NT - 1) / (8 * NT);
  const int items = mt * nt;
#if defined(__CUDA_ARCH__)
  const int lane = int(threadIdx.x) & 31, warp = int(threadIdx.x) >> 5,
            warps = int(blockDim.x) >> 5;
  const int kfull = op.K / KS * KS;
  for (int item = warp; item < items; item += warps) {
    const int m0 = (item / nt) * 16, n0 = (item % nt) * 8 * NT;
    // Operand offsets at k = 0, advanced along k. Rows past M and columns past N are clamped
    // (their products land in outputs that are never stored); k past K reads 0 (the tail step).
    int ia[NA], ib[NT][NB];
#pragma unroll
    for (int i = 0; i < NA; ++i)
      ia[i] = imin(m0 + frag_a_row(lane, i), op.M - 1) * op.ar + frag_a_col(lane, i) * op.ak;
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < NB; ++i)
        ib[j][i] =
            imin(n0 + 8 * j + frag_b_col(lane), op.N - 1) * op.bc + frag_b_row(lane, i) * op.bk;
    const int sa = KS * op.ak, sb = KS * op.bk;
    T c[NT][4];
    zero(c);
#pragma unroll 2
    for (int k0 = 0; k0 < kfull; k0 += KS) {
      T fa[NA], fb[NT][NB];
#pragma unroll
      for (int i = 0; i < NA; ++i) {
        fa[i] = op.a[ia[i]];
        ia[i] += sa;
      }
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int i = 0; i < NB; ++i) {
          fb[j][i] = op.b[ib[j][i]];
          ib[j][i] += sb;
        }
#pragma unroll
      for (int j = 0; j < NT; ++j) mma_frag(c[j], fa, fb[j]);
    }
    if (kfull < op.K) {
      T fa[NA], fb[NT][NB];
#pragma unroll
      for (int i = 0; i < NA; ++i) fa[i] = kfull + frag_a_col(lane, i) < op.K ? op.a[ia[i]] : T(0);
#pragma unroll
      for (int j = 0; j < NT; ++j)
#pragma unroll
        for (int i = 0; i < NB; ++i)
          fb[j][i] = kfull + frag_b_row(lane, i) < op.K ? op.b[ib[j][i]] : T(0);
#pragma unroll
      for (int j = 0; j < NT; ++j) mma_frag(c[j], fa, fb[j]);
    }
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int r = m0 + frag_c_row(lane, i), col = n0 + 8 * j + frag_c_col(lane, i);
        if (r < op.M && col < op.N) epi(r, col, c[j][i]);
      }
  }
#else
  // One warp of 32 emulated lanes: the fragments each lane would load, gathered into the tiles
  // they stand for, multiplied, and handed back through the lanes' C coordinates.
  for (int item = 0; item < items; ++item) {
    const int m0 = (item / nt) * 16, n0 = (item % nt) * 8 * NT;
    T c[32][NT][4] = {};
    for (int k0 = 0; k0 < op.K; k0 += KS) {
      T ta[16][KS] = {}, tb[NT][KS][8] = {};
      for (int lane = 0; lane < 32; ++lane) {
        T fa[NA];
        load_frag_a(op, lane, m0, k0, fa);
        for (int i = 0; i < NA; ++i) ta[frag_a_row(lane, i)][frag_a_col(lane, i)] = fa[i];
        for (int j = 0; j < NT; ++j) {
          T fb[NB];
          load_frag_b(op, lane, n0 + 8 * j, k0, fb);
          for (int i = 0; i < NB; ++i) tb[j][frag_b_row(lane, i)][frag_b_col(lane)] = fb[i];
        }
      }
      for (int lane = 0; lane < 32; ++lane)
        for (int j = 0; j < NT; ++j)
          for (int i = 0; i < 4; ++i)
            for (int k = 0; k < KS; ++k)
              c[lane][j][i] += ta[frag_c_row(lane, i)][k] * tb[j][k][frag_c_col(lane, i)];
    }
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < NT; ++j)
        for (int i = 0; i < 4; ++i) {
          const int r = m0 + frag_c_row(lane, i), col = n0 + 8 * j + frag_c_col(lane, i);
          if (r < op.M && col < op.N) epi(r, col, c[lane][j][i]);
        }
  }
#endif
}

// Two n-tiles per item while that still gives every warp an item, else one. (Host emulation
// decides as the device's 16 warps would, so that both paths are tested.)
template <class T, class Epi>
MLP_HD void tensor_gemm(const GemmOperands<T>& op, Epi epi) {
  const int items2 = ((op.M + 15) / 16) * ((op.N + 15) / 16);
#if defined(__CUDA_ARCH__)
  const int warps = int(blockDim.x) >> 5;
#else
  const int warps = 16;
#endif
  if (items2 >= warps)
    warp_gemm<2>(op, epi);
  else
    warp_gemm<1>(op, epi);
}

// The three products of pass_block: Mma (double) the tensor-core GEMMs, otherwise (float) the
// RM × 4 micro-tiled ones.
template <bool Mma, int RM, class T>
MLP_HD void gemm_forward(T* __restrict__ out, const T* __restrict__ w, int lda,
                         const T* __restrict__ x, int n, int m, int C, int ld,
                         const T* __restrict__ bias, int P) {
  if constexpr (Mma) {
    tensor_gemm(GemmOperands<T>{w, lda, 1, x, ld, 1, n, C, m},
                [=](int r, int c, T v) { out[r * ld + c] = v + (c < P ? bias[r] : T(0)); });
  } else {
    block_gemm_nn<RM>(out, w, lda, x, n, m, C, ld, bias, P);
  }
}

template <bool Mma, int RM, class T>
MLP_HD void gemm_adjoint(T* __restrict__ out, const T* __restrict__ w, int lda,
                         const T* __restrict__ pbar, int n, int m, int C, int ld) {
  if constexpr (Mma) {
    tensor_gemm(GemmOperands<T>{w, 1, lda, pbar, ld, 1, n, C, m},
                [=](int r, int c, T v) { out[r * ld + c] = v; });
  } else {
    block_gemm_tn<RM>(out, w, lda, pbar, n, m, C, ld);
  }
}

// g += P̄ Xᵀ as above, then gb(r) += Σ_{col < P} pbar(r, col), a thread a row.
template <bool Mma, int RM, class T>
MLP_HD void gemm_weight_gradient(T* __restrict__ g, T* __restrict__ gb, const T* __restrict__ pbar,
                                 const T* __restrict__ x, int n, int m, int C, int ld, int P) {
  if constexpr (Mma) {
    tensor_gemm(GemmOperands<T>{pbar, ld, 1, x, 1, ld, n, m, C},
                [=](int r, int c, T v) { g[r * m + c] += v; });
  } else {
    block_weight_gradient<RM>(g, pbar, x, n, m, C, ld);
  }
  for (int r = MLP_TID; r < n; r += MLP_NTHREADS) {
    T s = T(0);
    for (int i = 0; i < P; ++i) s += pbar[r * ld + i];
    gb[r] += s;
  }
}

// The input stack of a tile: x' = scale ⊙ x + shift on the value columns, ∂x'/∂x_j = scale_j e_j,
// Δx' = 0. Points past `count` get x = 0 (finite; their adjoints are zero).
template <class T>
MLP_HD void load_input(T* __restrict__ X, const MlpNetView<T>& net, const T* __restrict__ pts,
                       int start, int count, int P, int S, int ld) {
  const int d = net.dim;
  for (int idx = MLP_TID; idx < d * P; idx += MLP_NTHREADS) {
    const int j = idx / P, i = idx % P;
    const T x = i < count ? pts[(start + i) * d + j] : T(0);
    X[j * ld + i] = net.scale[j] * x + net.shift[j];
    if (S > 1) {
      for (int s = 1; s <= d; ++s) X[j * ld + s * P + i] = (s - 1 == j) ? net.scale[j] : T(0);
      X[j * ld + (d + 1) * P + i] = T(0);
    }
  }
}

// X = the activation's streams of Z (n rows): σ(z); σ'(z)·A_j; σ''(z)·Σ_{j ≤ ls} A_j² + σ'(z)·C
// (ls = net.lap_dims: the Laplacian's coordinates).
// keep_value: Z's value rows then hold σ(z) instead of z (tanh and sigmoid in training passes:
// the backward pass takes σ', σ'', σ''' from it and evaluates no activation); from_value: they
// hold it already.
template <class T>
MLP_HD void activation_forward(T* __restrict__ X, T* __restrict__ Z, Activation act, int d, int ls,
                               int n, int P, int S, int ld, bool from_value = false,
                               bool keep_value = false) {
  for (int idx = MLP_TID; idx < n * P; idx += MLP_NTHREADS) {
    const int r = idx / P, i = idx % P;
    T* z = Z + r * ld + i;
    T* x = X + r * ld + i;
    if (S == 1) {
      T s = z[0], d1;
      if (!from_value) activation_value_slope(act, z[0], s, d1);  // σ alone: no σ'', σ'''
      x[0] = s;
      if (keep_value) z[0] = s;
      continue;
    }
    const ActivationTerms<T> t = activation_terms_at(act, z[0], from_value);
    x[0] = t.s;
    if (keep_value) z[0] = t.s;
    T sum = T(0);
    for (int j = 1; j <= ls; ++j) {
      const T a = z[j * P];
      x[j * P] = stream_slope(t, a);
      sum += a * a;
    }
    for (int j = ls + 1; j <= d; ++j) x[j * P] = stream_slope(t, z[j * P]);
    x[(d + 1) * P] = stream_laplacian(t, sum, z[(d + 1) * P]);
  }
}

// In place, X̄ → P̄ through the activation (mlp_math.hpp's adjoint_value, adjoint_slope,
// adjoint_laplacian); the coordinates past the Laplacian's (j > ls) reach it through nothing.
// from_value: Z's value rows hold σ(z) (activation_forward).
template <class T>
MLP_HD void activation_backward(T* __restrict__ XB, const T* __restrict__ Z, Activation act, int d,
                                int ls, int n, int P, int S, int ld, bool from_value = false) {
  for (int idx = MLP_TID; idx < n * P; idx += MLP_NTHREADS) {
    const int r = idx / P, i = idx % P;
    const T* z = Z + r * ld + i;
    T* xb = XB + r * ld + i;
    if (S == 1) {
      xb[0] *= activation_terms_at(act, z[0], from_value).d1;
      continue;
    }
    const ActivationTerms<T> t = activation_terms_at(act, z[0], from_value);
    const T lbar = xb[(d + 1) * P];
    T sum = T(0), dot = T(0);
    for (int j = 1; j <= ls; ++j) {
      const T a = z[j * P];
      const T gbar = xb[j * P];
      sum += a * a;
      dot += gbar * a;
      xb[j * P] = adjoint_slope(t, gbar, lbar, a);
    }
    for (int j = ls + 1; j <= d; ++j) {
      const T a = z[j * P];
      const T gbar = xb[j * P];
      dot += gbar * a;
      xb[j * P] = adjoint_slope(t, gbar, T(0), a);
    }
    xb[0] = adjoint_value(t, xb[0], dot, lbar, sum, z[(d + 1) * P]);
    xb[(d + 1) * P] = adjoint_laplacian(t, lbar);
  }
}

// The streams a tile carries: d + 2 for interior tiles; for boundary tiles 1, or d + 2 when one
// of its points has β ≠ 0 (general rows). Block-wide: every thread gets the same answer, after a
// barrier.
template <bool Plain, class T>
MLP_HD int tile_streams(const MlpPassArgs<T>& a, bool interior, int start, int count, int d) {
  if (interior) return d + 2;
  if (Plain || !a.general) return 1;
  int any = 0;
  for (int i = MLP_TID; i < count; i += MLP_NTHREADS) any |= a.coef_beta[start + i] != T(0);
#if defined(__CUDA_ARCH__)
  any = __syncthreads_or(any);
#endif
  return any ? d + 2 : 1;
}

// One block's share of a pass: θ into shared memory `sm`, then tiles block, block + grid, …;
// ends with the block's gradient accumulators in partials[block] (training passes). Plain: a
// pass of Poisson/Dirichlet rows (a.general false) with the Laplacian over every coordinate; its
// instantiation leaves out the general rows and the coordinates past the Laplacian's, whose
// code, compiled in, changes the plain passes' register allocation (float 104 → 122 registers,
// double 124 → 128; bench/RESULTS.md). plain_pass() picks it.
template <bool Mma, int RM, bool Plain, class T>
MLP_HD void pass_block(const MlpNetView<T>& net, const MlpPassArgs<T>& a, const int P, const int ld,
                       const int tiles_int, const int tiles_total, T* const sm, const int block,
                       const int grid) {
  const int np = net.n_params, L = net.layers, d = net.dim;
  const int ls = Plain || net.lap_dims <= 0 ? d : net.lap_dims;
  const Activation act = Activation(net.activation);
  const bool train = a.partials != nullptr;
  const bool eval = a.out_u != nullptr;
  const bool keep_value = train && activation_terms_from_value_only(act);  // activation_forward
  int maxw = 1, hidden_rows = 0;
  for (int l = 0; l <= L; ++l) maxw = imax(maxw, net.sizes[l]);
  for (int h = 1; h < L; ++h) hidden_rows += net.sizes[h];
  const int ws_end = (net.ws_size + 3) / 4 * 4, np_end = (np + 3) / 4 * 4;
  T* const wsh = sm;
  T* const gsh = sm + ws_end;
  T* const zbase = gsh + (train ? np_end : 0);  // Z of hidden layer h at zbase + zoff(h)·ld
  T* const xbuf = zbase + hidden_rows * ld;
  T* buf_a = xbuf + maxw * ld;
  T* buf_b = buf_a + maxw * ld;
  auto zlayer = [&](int h) {
    int off = 0;
    for (int k = 1; k < h; ++k) off += net.sizes[k];
    return zbase + off * ld;
  };

  for (int l = 0; l < L; ++l) {
    const int n = net.sizes[l + 1], m = net.sizes[l], mp = net.ws_stride[l];
    for (int k = MLP_TID; k < n * mp; k += MLP_NTHREADS) {
      const int r = k / mp, c = k % mp;
      wsh[net.ws_offset[l] + k] = c < m ? a.theta[net.w_offset[l] + r * m + c] : T(0);
    }
    for (int k = MLP_TID; k < n; k += MLP_NTHREADS)
      wsh[net.ws_bias[l] + k] = a.theta[net.b_offset[l] + k];
  }
  if (train)
    for (int k = MLP_TID; k < np; k += MLP_NTHREADS) gsh[k] = T(0);
  MLP_SYNC();

  for (int tile = block; tile < tiles_total; tile += grid) {
    const bool interior = tile < tiles_int;
    const int start = (interior ? tile : tile - tiles_int) * P;
    const int count = imin(P, (interior ? a.n_int : a.n_bnd) - start);
    const int S = tile_streams<Plain>(a, interior, start, count, d);
    const int C = S * P;
    const T* pts = interior ? a.x_int : a.x_bnd;

    load_input(xbuf, net, pts, start, count, P, S, ld);
    MLP_SYNC();
    for (int l = 1; l <= L; ++l) {
      T* out = l < L ? zlayer(l) : buf_a;
      gemm_forward<Mma, RM>(out, wsh + net.ws_offset[l - 1], net.ws_stride[l - 1], xbuf,
                            net.sizes[l], net.sizes[l - 1], C, ld, wsh + net.ws_bias[l - 1], P);
      MLP_SYNC();
      if (l == L) break;
      activation_forward(xbuf, out, act, d, ls, net.sizes[l], P, S, ld, false, keep_value);
      MLP_SYNC();
    }

    // Output row (buf_a row 0): u, ∂u/∂x_j, Δₛu. Residuals, and the seed P̄ of the output layer:
    // the residual's adjoint times the residual's coefficient of each stream.
    for (int i = MLP_TID; i < P; i += MLP_NTHREADS) {
      const bool live = i < count;
      if (eval) {
        if (!live) continue;
        const int q = start + i;
        a.out_u[q] = buf_a[i];
        if (a.out_grad)
          for (int j = 0; j < d; ++j) a.out_grad[q * d + j] = buf_a[(1 + j) * P + i];
        if (a.out_lap) a.out_lap[q] = buf_a[(d + 1) * P + i];
        continue;
      }
      const int q = start + i;
      if (!Plain && a.general) {
        if (interior) {
          // e = a·Δₛu + b·∇u + c·u − f; seeds (c, b_1 … b_d, a)·ē.
          T e = T(0);
          if (live) {
            e = a.coef_a[q] * buf_a[(d + 1) * P + i];
            for (int j = 0; j < d; ++j) e += a.coef_b[q * d + j] * buf_a[(1 + j) * P + i];
            e += a.coef_c[q] * buf_a[i];
            e -= a.f[q];
            a.e[q] = e;
          }
          const T s = live ? e * a.inv_n : T(0);
          buf_a[i] = live ? a.coef_c[q] * s : T(0);
          for (int j = 0; j < d; ++j)
            buf_a[(1 + j) * P + i] = live ? a.coef_b[q * d + j] * s : T(0);
          buf_a[(d + 1) * P + i] = live ? a.coef_a[q] * s : T(0);
        } else {
          // r = α·u + β·∇u·n − p; seeds (α, β n_1 … β n_d, 0)·r̄ (derivative streams: S > 1).
          T r = T(0);
          if (live) {
            r = a.coef_alpha[q] * buf_a[i];
            const T beta = a.coef_beta[q];
            if (S > 1 && beta != T(0))
              for (int j = 0; j < d; ++j) r += beta * a.normals[q * d + j] * buf_a[(1 + j) * P + i];
            r -= a.p[q];
            a.b[q] = r;
          }
          const T s = live ? r * a.lam_k : T(0);
          buf_a[i] = live ? a.coef_alpha[q] * s : T(0);
          if (S > 1) {
            for (int j = 0; j < d; ++j)
              buf_a[(1 + j) * P + i] = live ? a.coef_beta[q] * a.normals[q * d + j] * s : T(0);
            buf_a[(d + 1) * P + i] = T(0);
          }
        }
        continue;
      }
      if (interior) {
        T seed = T(0);
        if (live) {
          const T e = buf_a[(d + 1) * P + i] - a.f[q];
          a.e[q] = e;
          seed = e * a.inv_n;
        }
        for (int s = 0; s <= d; ++s) buf_a[s * P + i] = T(0);
        buf_a[(d + 1) * P + i] = seed;
      } else {
        T seed = T(0);
        if (live) {
          const T b = buf_a[i] - a.p[q];
          a.b[q] = b;
          seed = b * a.lam_k;
        }
        buf_a[i] = seed;
      }
    }
    MLP_SYNC();
    if (!train) continue;

    T* pbar = buf_a;
    T* xbar = buf_b;
    for (int l = L; l >= 1; --l) {
      const int n = net.sizes[l], m = net.sizes[l - 1];
      if (l < L) {  // X_{l−1} into xbuf (after the forward pass it holds X_{L−1})
        if (l > 1)
          activation_forward(xbuf, zlayer(l - 1), act, d, ls, m, P, S, ld, keep_value);
        else
          load_input(xbuf, net, pts, start, count, P, S, ld);
        MLP_SYNC();
      }
      gemm_weight_gradient<Mma, RM>(gsh + net.w_offset[l - 1], gsh + net.b_offset[l - 1], pbar,
                                    xbuf, n, m, C, ld, P);
      if (l == 1) break;
      // X̄ = W_lᵀ P̄: A(r, k) = W(k, r).
      gemm_adjoint<Mma, RM>(xbar, wsh + net.ws_offset[l - 1], net.ws_stride[l - 1], pbar, m, n, C,
                            ld);
      MLP_SYNC();
      activation_backward(xbar, zlayer(l - 1), act, d, ls, m, P, S, ld, keep_value);
      MLP_SYNC();
      T* t = pbar;
      pbar = xbar;
      xbar = t;
    }
    MLP_SYNC();
  }

  if (train)
    for (int k = MLP_TID; k < np; k += MLP_NTHREADS)
      a.partials[std::size_t(block) * np + k] = gsh[k];
}

// Tensor-core GEMMs (Mma) or RM rows per thread's micro-tile, THREADS threads; Plain as in
// pass_block.
template <class T, bool Mma, int RM, bool Plain, int THREADS>
__global__ void __launch_bounds__(THREADS, 1)
    mlp_pass_kernel(const MlpNetView<T> net, const MlpPassArgs<T> a, const int P, const int ld,
                    const int tiles_int, const int tiles_total) {
  pdl_start();
  if (a.halt && a.halt[0] < a.step) return;
  extern __shared__ __align__(16) unsigned char mlp_smem[];
  pass_block<Mma, RM, Plain>(net, a, P, ld, tiles_int, tiles_total, reinterpret_cast<T*>(mlp_smem),
                             int(blockIdx.x), int(gridDim.x));
  if (a.out_u || !a.losses) return;
  __shared__ double scratch[THREADS];
  last_block_loss(a, scratch);
}

// 32 parameters a block: warp w sums partials of blocks w, w + 8, … for its lane's parameter,
// then warp 0 adds the 8 sums in order, stores the gradient and applies Adam.
template <class T>
__global__ void __launch_bounds__(kThreads)
    mlp_reduce_kernel(const T* __restrict__ partials, int blocks, int np, T* __restrict__ grad,
                      const MlpAdamArgs<T> adam, const int* halt, int step) {
  pdl_start();
  if (halt && (halt[0] < step || (halt[0] == step && halt[1] == 0))) return;
  __shared__ T sums[kThreads / 32][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int k = blockIdx.x * 32 + lane;
  T s = T(0);
  if (k < np)
    for (int b = warp; b < blocks; b += kThreads / 32) s += partials[std::size_t(b) * np + k];
  sums[warp][lane] = s;
  __syncthreads();
  if (warp != 0 || k >= np) return;
  T g = sums[0][lane];
  for (int w = 1; w < kThreads / 32; ++w) g += sums[w][lane];
  grad[k] = g;
  if (!adam.enabled) return;
  const T lr = adam.step_consts[3 * step], c1 = adam.step_consts[3 * step + 1],
          c2 = adam.step_consts[3 * step + 2];
  const T m = adam.beta1 * adam.m[k] + (T(1) - adam.beta1) * g;
  const T v = adam.beta2 * adam.v[k] + (T(1) - adam.beta2) * g * g;
  adam.m[k] = m;
  adam.v[k] = v;
  adam.theta[k] -= lr * (m * c1) / (sqrt(v * c2) + adam.epsilon);
}

template <class T>
__global__ void mlp_adam_kernel(int np, const T* __restrict__ grad, T* __restrict__ theta,
                                T* __restrict__ mm, T* __restrict__ vv, T lr, T beta1, T beta2,
                                T epsilon, T c1, T c2) {
  pdl_start();
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= np) return;
  const T g = grad[k];
  const T m = beta1 * mm[k] + (T(1) - beta1) * g;
  const T v = beta2 * vv[k] + (T(1) - beta2) * g * g;
  mm[k] = m;
  vv[k] = v;
  theta[k] -= lr * (m * c1) / (sqrt(v * c2) + epsilon);
}

// Row stride of a tile's stream matrices: ≥ the columns rounded up to 4, 16-byte rows, and an
// odd number of 16-byte units (consecutive rows in distinct banks).
template <class T>
int pass_ld(int dim, int points) {
  constexpr int vw = 16 / int(sizeof(T));  // elements per 16 bytes
  int ld = round4((dim + 2) * points);
  while (ld % (2 * vw) != vw) ld += vw;
  return ld;
}

template <class T>
std::size_t pass_shared_elements(const MlpNetView<T>& net, int points, bool gradient) {
  int maxw = 1, hidden_rows = 0;
  for (int l = 0; l <= net.layers; ++l) maxw = std::max(maxw, net.sizes[l]);
  for (int h = 1; h < net.layers; ++h) hidden_rows += net.sizes[h];
  const std::size_t ld = std::size_t(pass_ld<T>(net.dim, points));
  return std::size_t(round4(net.ws_size)) + (gradient ? std::size_t(round4(net.n_params)) : 0) +
         (hidden_rows + 3 * std::size_t(maxw)) * ld;
}

DeviceLimits device_limits() {
  int dev = 0, sms = 0, optin = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  return {sms, std::size_t(optin), std::size_t(per_sm)};
}

template <class T>
using PassKernel = void (*)(MlpNetView<T>, MlpPassArgs<T>, int, int, int, int);

// The tiled kernel of each precision: SIMT in float (3xTF32 on the tensor cores gained nothing:
// its three MMAs and operand splitting cost as many instructions as the FFMAs they replace, and
// it is 1e-5 less exact), DMMA in double (1.6× the SIMT kernel on an H200; bench/RESULTS.md).
constexpr int kPassThreads = 512;
template <class T>
constexpr bool kPassMma = sizeof(T) == sizeof(double);

template <class T>
PassKernel<T> pass_kernel(bool plain) {
  return plain ? mlp_pass_kernel<T, kPassMma<T>, 2, true, kPassThreads>
               : mlp_pass_kernel<T, kPassMma<T>, 2, false, kPassThreads>;
}

// Whether a pass takes pass_block's Plain instantiation.
template <class T>
bool plain_pass(const MlpNetView<T>& net, const MlpPassArgs<T>& a) {
  return !a.general && (net.lap_dims <= 0 || net.lap_dims == net.dim);
}

constexpr std::size_t kPassStaticBytes = kPassThreads * sizeof(double) + 64;  // last block's

// Once per precision, outside any graph capture (plan_mlp_tiling runs before every launch).
template <class T>
void configure_pass_kernel(const DeviceLimits& limits) {
  static const bool configured = [&] {
    for (bool plain : {true, false})
      allow_shared_memory(pass_kernel<T>(plain), limits.shared_optin - kPassStaticBytes);
    return true;
  }();
  (void)configured;
}

}  // namespace

int mlp_device_sms() { return device_limits().sms; }

template <class T>
MlpNetView<T> make_mlp_net_view(const MlpOptions& options) {
  const std::vector<int> sizes = mlp_layer_sizes(options.dim, options.layers);
  if (options.dim < 1 || options.dim > kMlpMaxDim)
    throw std::invalid_argument("the CUDA MLP backend supports 1 to " + std::to_string(kMlpMaxDim) +
                                " dimensions, got " + std::to_string(options.dim));
  if (int(sizes.size()) - 1 > kMlpMaxLayers)
    throw std::invalid_argument("the CUDA MLP backend supports at most " +
                                std::to_string(kMlpMaxLayers - 1) + " hidden layers");
  for (int s : sizes)
    if (s < 1) throw std::invalid_argument("MLP layer widths must be ≥ 1");
  MlpNetView<T> net;
  net.dim = options.dim;
  net.layers = int(sizes.size()) - 1;
  net.activation = int(parse_activation(options.activation));
  net.lap_dims = options.laplacian_dims > 0 ? options.laplacian_dims : options.dim;
  if (net.lap_dims > net.dim)
    throw std::invalid_argument("the MLP's Laplacian cannot act on more coordinates (" +
                                std::to_string(net.lap_dims) + ") than it has (" +
                                std::to_string(net.dim) + ")");
  int off = 0;
  for (std::size_t l = 0; l < sizes.size(); ++l) net.sizes[l] = sizes[l];
  for (int l = 1; l <= net.layers; ++l) {
    net.w_offset[l - 1] = off;
    off += sizes[l] * sizes[l - 1];
    net.b_offset[l - 1] = off;
    off += sizes[l];
  }
  net.n_params = off;
  int ws = 0;
  for (int l = 1; l <= net.layers; ++l) {
    net.ws_stride[l - 1] = (sizes[l - 1] + 3) / 4 * 4;
    net.ws_offset[l - 1] = ws;
    ws += sizes[l] * net.ws_stride[l - 1];
    net.ws_bias[l - 1] = ws;
    ws += (sizes[l] + 3) / 4 * 4;
  }
  net.ws_size = ws;
  for (int j = 0; j < net.dim; ++j) {
    net.scale[j] = T(1);
    net.shift[j] = T(0);
  }
  if (!options.input_min.empty() || !options.input_max.empty()) {
    if (int(options.input_min.size()) != net.dim || int(options.input_max.size()) != net.dim)
      throw std::invalid_argument("the MLP input map needs dim values in input_min and input_max");
    for (int j = 0; j < net.dim; ++j) {
      const double len = options.input_max[j] - options.input_min[j];
      if (!(len > 0)) throw std::invalid_argument("the MLP input map needs input_max > input_min");
      net.scale[j] = T(2.0 / len);
      net.shift[j] = T(-2.0 * options.input_min[j] / len - 1.0);
    }
  }
  return net;
}

template <class T>
MlpTiling emulated_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                              int points, int grid, int variant) {
  if (variant != kMlpTiledFloat && variant != kMlpTiled<T>)
    throw std::invalid_argument("emulate_mlp_pass runs the tiled variants of its precision");
  MlpTiling t;
  t.variant = variant;
  t.points = points;
  t.ld = pass_ld<T>(net.dim, points);
  t.tiles_interior = (n_int + points - 1) / points;
  t.tiles_boundary = (n_bnd + points - 1) / points;
  t.grid = grid;
  t.shared_bytes = pass_shared_elements(net, points, gradient) * sizeof(T);
  return t;
}

template <class T>
void emulate_mlp_pass(const MlpNetView<T>& net, const MlpTiling& tiling, const MlpPassArgs<T>& a) {
  std::vector<T> sm(tiling.shared_bytes / sizeof(T));
  const int total = tiling.tiles_interior + tiling.tiles_boundary;
  auto run = [&](auto mma, auto plain) {
    for (int block = 0; block < tiling.grid; ++block)
      pass_block<decltype(mma)::value, 2, decltype(plain)::value>(net, a, tiling.points, tiling.ld,
                                                                  tiling.tiles_interior, total,
                                                                  sm.data(), block, tiling.grid);
  };
  auto run_variant = [&](auto plain) {
    if constexpr (kPassMma<T>)
      if (tiling.variant == kMlpTiledDouble) return run(std::true_type{}, plain);
    run(std::false_type{}, plain);
  };
  if (plain_pass(net, a))
    run_variant(std::true_type{});
  else
    run_variant(std::false_type{});
  if (a.out_u || !a.losses) return;
  double se = 0, sb = 0;
  for (int k = 0; k < a.n_int; ++k) se += double(a.e[k]) * double(a.e[k]);
  for (int k = 0; k < a.n_bnd; ++k) sb += double(a.b[k]) * double(a.b[k]);
  const double nn = double(std::max(a.n_int, 1)), kk = double(std::max(a.n_bnd, 1));
  a.losses[3 * a.step] = 0.5 * se / nn + 0.5 * a.penalty * sb / kk;
  a.losses[3 * a.step + 1] = std::sqrt(se / nn);
  a.losses[3 * a.step + 2] = std::sqrt(sb / kk);
  if (a.sums) {
    a.sums[0] = se;
    a.sums[1] = sb;
  }
}

template <class T>
MlpTiling plan_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient,
                          const MlpTuning& tuning) {
  static const DeviceLimits limits = device_limits();
  configure_pass_kernel<T>(limits);
  // The point kernel takes the training passes it is faster at (mlp_plan.hpp), or is forced.
  MlpTiling t;
  if (tuning.kernel != MlpTuning::Kernel::kTiled &&
      detail::plan_point_tiling(net, n_int, n_bnd, gradient, tuning, limits, t))
    return t;
  if (gradient && tuning.kernel == MlpTuning::Kernel::kPoint)
    throw std::invalid_argument(
        "the point-stationary MLP pass takes the training passes of 2D networks of hidden layers "
        "of one width ≤ " +
        std::to_string(kPtMaxWidth) + " with one output");
  const TileChoice choice =
      choose_tile_points(n_int, n_bnd, limits.sms, tuning.tile_points, [&](int p) {
        const std::size_t bytes = pass_shared_elements(net, p, gradient) * sizeof(T);
        if (bytes + kPassStaticBytes > limits.shared_optin) return 0;
        // The plan serves both instantiations (pass_block's Plain): the fewer blocks.
        int per_sm = 0, per_sm_other = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pass_kernel<T>(true),
                                                                 kPassThreads, bytes));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm_other, pass_kernel<T>(false), kPassThreads, bytes));
        return std::min(per_sm, per_sm_other);
      });
  if (choice.points == 0)
    throw std::runtime_error(
        "the CUDA MLP pass needs " +
        std::to_string(pass_shared_elements(net, 1, gradient) * sizeof(T) + kPassStaticBytes) +
        " bytes of shared memory per block for one point (" + std::to_string(net.n_params) +
        " parameters" + (gradient ? " and their gradient" : "") + "), the device allows " +
        std::to_string(limits.shared_optin) + ": use narrower layers");
  // The tiling emulate_mlp_pass gets, on the resident blocks or the tiles if fewer.
  t = emulated_mlp_tiling(net, n_int, n_bnd, gradient, choice.points, 1, kMlpTiled<T>);
  t.grid = std::max(1, std::min(t.tiles_interior + t.tiles_boundary, choice.resident));
  return t;
}

template <class T>
void launch_mlp_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                     const MlpPassArgs<T>& args) {
  const int total = tiling.tiles_interior + tiling.tiles_boundary;
  if (total == 0) return;
  if (tiling.variant == kMlpPoint) {
    detail::launch_point_pass(stream, net, tiling, args);
    return;
  }
  launch_mlp_kernel("mlp_pass_kernel", pass_kernel<T>(plain_pass(net, args)), tiling.grid,
                    kPassThreads, tiling.shared_bytes, stream, tiling.overlap, net, args,
                    tiling.points, tiling.ld, tiling.tiles_interior, total);
}

template <class T>
void launch_mlp_reduce(MlpStream stream, const T* partials, int blocks, int n_params, T* grad,
                       const MlpAdamArgs<T>& adam, const int* halt, int step, bool overlap) {
  if (n_params == 0) return;
  launch_mlp_kernel("mlp_reduce_kernel", mlp_reduce_kernel<T>, (n_params + 31) / 32, kThreads, 0,
                    stream, overlap, partials, blocks, n_params, grad, adam, halt, step);
}

template <class T>
void launch_mlp_adam(MlpStream stream, int n_params, const T* grad, T* theta, T* m, T* v,
                     T learning_rate, T beta1, T beta2, T epsilon, T c1, T c2) {
  if (n_params == 0) return;
  launch_mlp_kernel("mlp_adam_kernel", mlp_adam_kernel<T>, (n_params + 255) / 256, 256, 0, stream,
                    false, n_params, grad, theta, m, v, learning_rate, beta1, beta2, epsilon, c1,
                    c2);
}

#define RBFPDE_MLP_INSTANTIATE(T)                                                                 \
  template MlpNetView<T> make_mlp_net_view<T>(const MlpOptions&);                                 \
  template MlpTiling emulated_mlp_tiling<T>(const MlpNetView<T>&, int, int, bool, int, int, int); \
  template void emulate_mlp_pass<T>(const MlpNetView<T>&, const MlpTiling&,                       \
                                    const MlpPassArgs<T>&);                                       \
  template MlpTiling plan_mlp_tiling<T>(const MlpNetView<T>&, int, int, bool, const MlpTuning&);  \
  template void launch_mlp_pass<T>(MlpStream, const MlpNetView<T>&, const MlpTiling&,             \
                                   const MlpPassArgs<T>&);                                        \
  template void launch_mlp_reduce<T>(MlpStream, const T*, int, int, T*, const MlpAdamArgs<T>&,    \
                                     const int*, int, bool);                                      \
  template void launch_mlp_adam<T>(MlpStream, int, const T*, T*, T*, T*, T, T, T, T, T, T);
RBFPDE_MLP_INSTANTIATE(float)
RBFPDE_MLP_INSTANTIATE(double)
#undef RBFPDE_MLP_INSTANTIATE

}  // namespace rbfpde::gpu
