// The tiled pass's block code (pass_block and the tile code it calls; mlp_pass_kernel.cu runs it on
// the device, mlp_emulation.cu on the host) and what the kernel, its emulation and its planner
// (mlp_launch.cu) share: a tile's shared-memory layout and the kernel's instantiations. Included by
// those three files alone. docs/mathematics.md has the streams and their adjoints.
//
// The three GEMMs of a tile run on the FMA units in float (2 × 4 output micro-tiles per thread) and
// on the tensor cores in double (mma.sync DMMA). A block copies θ into shared memory once (W rows
// padded to 4 for 16-byte loads), then takes tiles of `points` points. Per tile, every layer's
// stream matrices live in shared memory, a column per (stream, point): for interior tiles the
// streams are value, d first derivatives and the Laplacian Δₛ over the first lap_dims coordinates
// (S = d + 2), for boundary tiles the value (S = 1), or all d + 2 streams when a point of the tile
// has β ≠ 0 (general rows: its Laplacian stream then gets no adjoint). Forward: the GEMM
// Z_l = W_l X_{l−1} (+ b on the value columns) and the elementwise activation of the streams
// (mlp_math.hpp); the Z_l of the hidden layers are kept for the backward pass, the X_l recomputed
// from them when needed. Backward (as the CPU backend's): ∂I/∂W_l += P̄_l X_{l−1}ᵀ accumulated in
// shared memory by the one thread that owns each entry, X̄ = W_lᵀ P̄_l, and the elementwise adjoint
// of the activation streams in place. Each block ends by writing its gradient accumulators to
// partials[blockIdx.x].
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/cuda/mlp/mlp_device.cuh"
#include "kernels/cuda/mlp/mlp_kernels.hpp"
#include "kernels/mlp_math.hpp"

namespace rbfpde::gpu::detail {

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
// instantiation leaves out the general rows and the coordinates past the Laplacian's, so that
// their code does not enter the plain passes' register allocation. plain_pass() picks it.
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

template <class T>
using PassKernel = void (*)(MlpNetView<T>, MlpPassArgs<T>, int, int, int, int);

// The tiled kernel of each precision: SIMT FMA GEMMs in float, DMMA tensor-core GEMMs in double.
// (3xTF32 would replace each FFMA by three MMAs and operand splitting: as many instructions,
// and 1e-5 less exact.)
constexpr int kPassThreads = 512;
template <class T>
constexpr bool kPassMma = sizeof(T) == sizeof(double);

// Its two instantiations of T (pass_block's Plain true and false; mlp_pass_kernel.cu).
template <class T>
PassKernel<T> pass_kernel(bool plain);

// Whether a pass takes pass_block's Plain instantiation.
template <class T>
bool plain_pass(const MlpNetView<T>& net, const MlpPassArgs<T>& a) {
  return !a.general && (net.lap_dims <= 0 || net.lap_dims == net.dim);
}

}  // namespace rbfpde::gpu::detail
