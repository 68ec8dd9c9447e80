// The CUDA MLP's kernels (DESIGN.md §3): one fused pass per loss+gradient, one reduction + Adam.
//
// mlp_point_kernel (variant 4; 2D, equal hidden widths ≤ 64, one output; training and residual
// passes): a thread keeps one point's four streams for 10 features of every hidden layer in
// registers (see its section). The default once the batch fills a wave of resident blocks
// (16384 + 1024 on an H200: float 1.8× variant 1 on the FMA units; double 1.09× variant 2, with
// its weight gradient and adjoint on DMMA); for small batches the tiled kernels below are faster
// (bench/RESULTS.md), so there it is opt-in (RBFPDE_MLP_VARIANT=4).
//
// mlp_fast_kernel (variant 3, opt-in with RBFPDE_MLP_VARIANT=3; double, 2D, equal hidden widths
// ≤ 56): the training pass with the streams in registers and the weight gradient staged per
// block; exact (tests/gpu); as fast as variant 2 at 16384 + 1024 points, slower at 1200 + 120
// (bench/RESULTS.md). See its section.
//
// mlp_pass_kernel: persistent blocks; the three GEMMs of a tile run on tensor cores (variant 2,
// the default in double: mma.sync DMMA; 3xTF32 in float) or on the FMA units (variant 1, the
// default in float: 512 threads, 2 × 4 output micro-tiles per thread; variant 0: 256 threads,
// 4 × 4). A block copies θ into shared memory once
// (W rows padded to 4 for 16-byte loads), then takes tiles of `points` points. Per tile, every
// layer's stream matrices live in shared memory, a column per (stream, point): for interior tiles
// the streams are value, d first derivatives and the Laplacian (S = d + 2), for boundary tiles
// the value (S = 1). Forward: the GEMM Z_l = W_l X_{l−1} (+ b on the value columns) and the
// elementwise activation of the three streams (mlp_backend.hpp); the Z_l of the hidden layers are
// kept for the backward pass, the X_l recomputed from them when needed. Backward (as the CPU
// backend's): ∂I/∂W_l += P̄_l X_{l−1}ᵀ accumulated in shared memory by the one thread that owns
// each entry, X̄ = W_lᵀ P̄_l, and the elementwise adjoint of the activation streams in place.
// Each block ends by writing its gradient accumulators to partials[blockIdx.x]. The last block
// to finish (an integer ticket) sums Σe², Σb² over the whole batch in a fixed order: same inputs,
// same bits. plan_mlp_tiling picks the tile size with the fewest waves of resident blocks.
//
// mlp_reduce_kernel: 32 parameters a block, 8 warps summing the blocks' partials in a fixed
// order (coalesced), then the fused Adam update.
//
// Napkin math, 2-50-50-50-50-1 (P = 7851 parameters), N interior and K boundary points: forward
// ≈ 2·P·((d+2)N + K) FLOPs, backward twice that: 0.23 GFLOP at 1200 + 120, 3.1 GFLOP at
// 16384 + 1024 (≈ 50 µs at the H200's 67 TFLOP/s fp32 vector peak). Bytes: θ (31 KB float) per
// block from L2, the partials (grid × P) written and read once, points and residuals:
// negligible. Measured (bench/RESULTS.md, H200, 16384 + 1024): 2.1k steps/s in double on DMMA
// (1.3k on the FMA units), 2.6k in float. Shared memory (θ, the gradient accumulators, 350
// stream rows) leaves one block of 16 warps per SM, and a tile runs 24 barrier-separated phases
// (phase cycles: bench_gpu_mlp profile): the 6 GEMM phases take 2/3 of the time, the 12
// elementwise ones 1/3, and the GEMM phases are latency-bound (short dependent MMA/FMA chains
// per warp, one block per SM); 24-point tiles, the most that fit in float, ran no faster. Going
// further needs another structure (warp-independent tiles with activations in registers and the
// weight gradient as a separate GEMM), not faster arithmetic.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/mlp_kernels.hpp"
#include "kernels/mlp_backend.hpp"
#include "kernels/mlp_math.hpp"

namespace rbfpde::gpu {
namespace {

constexpr int kMlpPhaseSlots = 64;

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
#define MLP_HD __host__ __device__ __forceinline__

MLP_HD int imin(int a, int b) { return a < b ? a : b; }
MLP_HD int imax(int a, int b) { return a > b ? a : b; }

// Four consecutive values from shared memory in 16-byte loads (p 16-byte aligned).
MLP_HD void load4(const float* p, float (&v)[4]) {
  const float4 q = *reinterpret_cast<const float4*>(p);
  v[0] = q.x;
  v[1] = q.y;
  v[2] = q.z;
  v[3] = q.w;
}
MLP_HD void load4(const double* p, double (&v)[4]) {
  const double2 q0 = *reinterpret_cast<const double2*>(p);
  const double2 q1 = *reinterpret_cast<const double2*>(p + 2);
  v[0] = q0.x;
  v[1] = q0.y;
  v[2] = q1.x;
  v[3] = q1.y;
}

template <class T, int R, int C>
MLP_HD void zero(T (&acc)[R][C]) {
#pragma unroll
  for (int i = 0; i < R; ++i)
#pragma unroll
    for (int j = 0; j < C; ++j) acc[i][j] = T(0);
}

// The shared-memory GEMMs. Each thread owns an RM × 4 micro-tile of the output (RM = 4 or 2:
// the kernel variant) and reads its operands in 16-byte loads: row strides (lda, ld) are
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
      if constexpr (RM == 4) {
        load4(acol + k * lda, av);
      } else {
#pragma unroll
        for (int i = 0; i < RM; ++i) av[i] = acol[k * lda + i];
      }
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

// g(r, c) += Σ_{col < C} pbar(r, col) · x(c, col) for r < n, c < m (g row-major n × m), and
// gb(r) += Σ_{col < P} pbar(r, col). Every entry has one owner thread: no races, fixed order.
// Rows and columns of a micro-tile are interleaved (r = rg + i·rgs) so that consecutive threads
// read consecutive rows (ld/4 odd: distinct banks); the loads run along the columns.
template <int RM, class T>
MLP_HD void block_weight_gradient(T* __restrict__ g, T* __restrict__ gb, const T* __restrict__ pbar,
                                  const T* __restrict__ x, int n, int m, int C, int ld, int P) {
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
  for (int r = MLP_TID; r < n; r += MLP_NTHREADS) {
    T s = T(0);
    for (int i = 0; i < P; ++i) s += pbar[r * ld + i];
    gb[r] += s;
  }
}

// ---- Tensor-core GEMMs (kernel variant 2, the default) ----------------------------------------
// The same three products as above, each warp computing 16 × 8·NT output blocks with mma.sync:
// double: m16n8k4 .f64 (DMMA, exact FMA arithmetic in another summation order); float: m16n8k8
// .tf32 split three ways (x = big + small, both TF32; A·B ≈ As·Bb + Ab·Bs + Ab·Bb), which keeps
// float accuracy (the dropped As·Bs term is below 2⁻²² relative). Operands are read from the
// shared-memory layouts above as they stand (any strides; rows, columns and k past the matrix
// read as 0), so only the fragment coordinates are new. Fragment coordinates of lane l
// (g = l / 4, t = l % 4), PTX ISA "Matrix fragments for mma.m16n8k8/k4":
//   A (16 × K): element i at row g + 8 (i % 2), column t + 4 (i / 2)
//   B (K × 8):  element i at row t + 4 i, column g
//   C (16 × 8): element i at row g + 8 (i / 2), column 2t + i % 2
// Host builds (emulate_mlp_pass) run the same loaders and epilogues for all 32 lanes of a warp
// and multiply the gathered tiles exactly, so the fragment bookkeeping is tested without a GPU.
template <class T>
struct MmaShape;
template <>
struct MmaShape<float> {
  static constexpr int K = 8, NA = 4, NB = 2;
};
template <>
struct MmaShape<double> {
  static constexpr int K = 4, NA = 2, NB = 1;
};

MLP_HD int frag_a_row(int lane, int i) { return (lane >> 2) + 8 * (i & 1); }
MLP_HD int frag_a_col(int lane, int i) { return (lane & 3) + 4 * (i >> 1); }
MLP_HD int frag_b_row(int lane, int i) { return (lane & 3) + 4 * i; }
MLP_HD int frag_b_col(int lane) { return lane >> 2; }
MLP_HD int frag_c_row(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
MLP_HD int frag_c_col(int lane, int i) { return 2 * (lane & 3) + (i & 1); }

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
                        T (&fa)[MmaShape<T>::NA]) {
#pragma unroll
  for (int i = 0; i < MmaShape<T>::NA; ++i) {
    const int r = m0 + frag_a_row(lane, i), k = k0 + frag_a_col(lane, i);
    fa[i] = (r < op.M && k < op.K) ? op.a[r * op.ar + k * op.ak] : T(0);
  }
}

template <class T>
MLP_HD void load_frag_b(const GemmOperands<T>& op, int lane, int n0, int k0,
                        T (&fb)[MmaShape<T>::NB]) {
  const int c = n0 + frag_b_col(lane);
#pragma unroll
  for (int i = 0; i < MmaShape<T>::NB; ++i) {
    const int k = k0 + frag_b_row(lane, i);
    fb[i] = (c < op.N && k < op.K) ? op.b[k * op.bk + c * op.bc] : T(0);
  }
}

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ void split_tf32(float x, unsigned& big, unsigned& small) {
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(big) : "f"(x));
  const float rest = x - __uint_as_float(big);
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(small) : "f"(rest));
}

__device__ __forceinline__ void mma_tf32(float (&c)[4], const unsigned (&a)[4],
                                         const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// c += A·B for one fragment triple.
__device__ __forceinline__ void mma_frag(float (&c)[4], const float (&fa)[4],
                                         const float (&fb)[2]) {
  unsigned ab[4], as[4], bb[2], bs[2];
#pragma unroll
  for (int i = 0; i < 4; ++i) split_tf32(fa[i], ab[i], as[i]);
#pragma unroll
  for (int i = 0; i < 2; ++i) split_tf32(fb[i], bb[i], bs[i]);
  mma_tf32(c, as, bb);
  mma_tf32(c, ab, bs);
  mma_tf32(c, ab, bb);
}

__device__ __forceinline__ void mma_frag(double (&c)[4], const double (&fa)[2],
                                         const double (&fb)[1]) {
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(fa[0]), "d"(fa[1]), "d"(fb[0]));
}
#endif

// Block-wide: for every (r, c) in M × N, epi(r, c, Σ_k A(r, k) B(k, c)). Work items are
// 16 × 8·NT output blocks (the NT n-tiles share the A fragments), warp w taking items
// w, w + warps, …; each output has one owner lane, so epi may accumulate without races.
template <int NT, class T, class Epi>
MLP_HD void warp_gemm(const GemmOperands<T>& op, Epi epi) {
  constexpr int KS = MmaShape<T>::K, NA = MmaShape<T>::NA, NB = MmaShape<T>::NB;
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
#pragma unroll
    for (int j = 0; j < NT; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) c[j][i] = T(0);
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

// The three products of pass_block, by kernel variant: Mma (variant 2) the tensor-core GEMMs,
// otherwise the RM × 4 micro-tiled ones.
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

template <bool Mma, int RM, class T>
MLP_HD void gemm_weight_gradient(T* __restrict__ g, T* __restrict__ gb, const T* __restrict__ pbar,
                                 const T* __restrict__ x, int n, int m, int C, int ld, int P) {
  if constexpr (Mma) {
    tensor_gemm(GemmOperands<T>{pbar, ld, 1, x, 1, ld, n, m, C},
                [=](int r, int c, T v) { g[r * m + c] += v; });
    for (int r = MLP_TID; r < n; r += MLP_NTHREADS) {
      T s = T(0);
      for (int i = 0; i < P; ++i) s += pbar[r * ld + i];
      gb[r] += s;
    }
  } else {
    block_weight_gradient<RM>(g, gb, pbar, x, n, m, C, ld, P);
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

// X = the activation's streams of Z (n rows): σ(z); σ'(z)·A_j; σ''(z)·Σ A_j² + σ'(z)·C.
template <class T>
MLP_HD void activation_forward(T* __restrict__ X, const T* __restrict__ Z, Activation act, int d,
                               int n, int P, int S, int ld) {
  for (int idx = MLP_TID; idx < n * P; idx += MLP_NTHREADS) {
    const int r = idx / P, i = idx % P;
    const T* z = Z + r * ld + i;
    T* x = X + r * ld + i;
    if (S == 1) {
      T s, d1;
      activation_value_slope(act, z[0], s, d1);
      x[0] = s;
      continue;
    }
    const ActivationTerms<T> t = activation_terms(act, z[0]);
    x[0] = t.s;
    T sum = T(0);
    for (int j = 1; j <= d; ++j) {
      const T a = z[j * P];
      x[j * P] = t.d1 * a;
      sum += a * a;
    }
    x[(d + 1) * P] = t.d2 * sum + t.d1 * z[(d + 1) * P];
  }
}

// In place, X̄ → P̄ through the activation (the CPU backend's formulas):
//   z̄ = h̄ σ' + Σ_j ḡ_j σ'' A_j + l̄ (σ''' S + σ'' C),  Ā_j = ḡ_j σ' + 2 l̄ σ'' A_j,  C̄ = l̄ σ'.
template <class T>
MLP_HD void activation_backward(T* __restrict__ XB, const T* __restrict__ Z, Activation act, int d,
                                int n, int P, int S, int ld) {
  for (int idx = MLP_TID; idx < n * P; idx += MLP_NTHREADS) {
    const int r = idx / P, i = idx % P;
    const T* z = Z + r * ld + i;
    T* xb = XB + r * ld + i;
    if (S == 1) {
      T s, d1;
      activation_value_slope(act, z[0], s, d1);
      xb[0] *= d1;
      continue;
    }
    const ActivationTerms<T> t = activation_terms(act, z[0]);
    const T lbar = xb[(d + 1) * P];
    const T c = z[(d + 1) * P];
    T zbar = xb[0] * t.d1;
    T sum = T(0);
    for (int j = 1; j <= d; ++j) {
      const T a = z[j * P];
      const T gbar = xb[j * P];
      sum += a * a;
      zbar += gbar * t.d2 * a;
      xb[j * P] = gbar * t.d1 + T(2) * lbar * t.d2 * a;
    }
    zbar += lbar * (t.d3 * sum + t.d2 * c);
    xb[0] = zbar;
    xb[(d + 1) * P] = lbar * t.d1;
  }
}

// Σ v over the block in double, fixed order (a tree over a power of two after folding the
// rest onto it); every thread calls it; scratch holds blockDim.x doubles.
__device__ double block_sum(double v, double* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  int pow2 = 1;
  while (2 * pow2 <= int(blockDim.x)) pow2 *= 2;
  if (int(threadIdx.x) < int(blockDim.x) - pow2)
    scratch[threadIdx.x] += scratch[threadIdx.x + pow2];
  __syncthreads();
  for (int w = pow2 / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) scratch[threadIdx.x] += scratch[threadIdx.x + w];
    __syncthreads();
  }
  const double r = scratch[0];
  __syncthreads();
  return r;
}

// Σ v² over n values in double, fixed order (strided per thread, then block_sum); every thread
// of the block must call it. The loads bypass L1: other blocks wrote v.
template <class T>
__device__ double block_sum_squares(const T* v, int n, double* scratch) {
  double s = 0;
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    const double x = double(__ldcg(v + k));
    s += x * x;
  }
  return block_sum(s, scratch);
}

// The last block of a pass to finish (an integer ticket) sums the residuals every block wrote,
// in a fixed order, into losses[3·step…], and sets the early-stop flag. Every thread calls it.
// block_sums (variant 4): instead of the residuals, each block's {Σe², Σb²} (2 doubles a block).
template <class T>
__device__ void last_block_loss(const MlpPassArgs<T>& a, double* scratch,
                                const double* block_sums = nullptr) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(a.counter, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  double se = 0, sb = 0;
  if (block_sums) {
    double pe = 0, pb = 0;
    for (int k = threadIdx.x; k < int(gridDim.x); k += blockDim.x) {
      pe += __ldcg(block_sums + 2 * k);
      pb += __ldcg(block_sums + 2 * k + 1);
    }
    se = block_sum(pe, scratch);
    sb = block_sum(pb, scratch);
  } else {
    se = block_sum_squares(a.e, a.n_int, scratch);
    sb = block_sum_squares(a.b, a.n_bnd, scratch);
  }
  if (threadIdx.x == 0) {
    const double nn = double(max(a.n_int, 1)), kk = double(max(a.n_bnd, 1));
    const double loss = 0.5 * se / nn + 0.5 * a.penalty * sb / kk;
    double* out = a.losses + 3 * a.step;
    out[0] = loss;
    out[1] = sqrt(se / nn);
    out[2] = sqrt(sb / kk);
    if (a.halt && a.halt[0] == INT_MAX) {
      if (!isfinite(loss)) {
        a.halt[0] = a.step;
        a.halt[1] = 0;
      } else if (loss < a.stop_below) {
        a.halt[0] = a.step;
        a.halt[1] = 1;
      }
    }
    *a.counter = 0u;
  }
}

// One block's share of a pass: θ into shared memory `sm`, then tiles block, block + grid, …;
// ends with the block's gradient accumulators in partials[block] (training passes).
// Phase timing for bench_gpu_mlp (`profile`): when the flag is set, block 0 adds the clock
// cycles of each barrier interval of a tile to g_phase_cycles[interior ? phase : 32 + phase].
#if defined(__CUDACC__)
__device__ unsigned long long g_phase_cycles[kMlpPhaseSlots];
__device__ int g_phase_timing;
#endif

template <bool Mma, int RM, class T>
MLP_HD void pass_block(const MlpNetView<T>& net, const MlpPassArgs<T>& a, const int P, const int ld,
                       const int tiles_int, const int tiles_total, T* const sm, const int block,
                       const int grid) {
  const int np = net.n_params, L = net.layers, d = net.dim;
  const Activation act = Activation(net.activation);
  const bool train = a.partials != nullptr;
  const bool eval = a.out_u != nullptr;
  int maxw = 1, hidden_rows = 0;
  for (int l = 0; l <= L; ++l) maxw = imax(maxw, net.sizes[l]);
  for (int h = 1; h < L; ++h) hidden_rows += net.sizes[h];
  const int ws_end = (net.ws_size + 3) / 4 * 4, np_end = (np + 3) / 4 * 4;
  T* const wsh = sm;
  T* const gsh = sm + ws_end;
#if defined(__CUDA_ARCH__)
  const bool timing = g_phase_timing && block == 0 && threadIdx.x == 0;
  long long t_mark = timing ? clock64() : 0;
  int phase = 0, phase_base = kMlpPhaseSlots / 2 - 1;  // slot 31: the θ prologue
  auto sync = [&] {
    __syncthreads();
    if (timing) {
      const long long now = clock64();
      const int slot = imin(phase_base + phase, kMlpPhaseSlots - 1);
      g_phase_cycles[slot] += (unsigned long long)(now - t_mark);
      t_mark = now;
      ++phase;
    }
  };
#else
  int phase = 0, phase_base = 0;
  auto sync = [] {};
#endif
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
  sync();

  for (int tile = block; tile < tiles_total; tile += grid) {
    const bool interior = tile < tiles_int;
    phase = 0;
    phase_base = interior ? 0 : kMlpPhaseSlots / 2;
    const int start = (interior ? tile : tile - tiles_int) * P;
    const int count = imin(P, (interior ? a.n_int : a.n_bnd) - start);
    const int S = interior ? d + 2 : 1;
    const int C = S * P;
    const T* pts = interior ? a.x_int : a.x_bnd;

    load_input(xbuf, net, pts, start, count, P, S, ld);
    sync();
    for (int l = 1; l <= L; ++l) {
      T* out = l < L ? zlayer(l) : buf_a;
      gemm_forward<Mma, RM>(out, wsh + net.ws_offset[l - 1], net.ws_stride[l - 1], xbuf,
                            net.sizes[l], net.sizes[l - 1], C, ld, wsh + net.ws_bias[l - 1], P);
      sync();
      if (l == L) break;
      activation_forward(xbuf, out, act, d, net.sizes[l], P, S, ld);
      sync();
    }

    // Output row (buf_a row 0): u, ∂u/∂x_j, Δu. Residuals, and the seed P̄ of the output layer.
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
      if (interior) {
        T seed = T(0);
        if (live) {
          const T e = buf_a[(d + 1) * P + i] - a.f[start + i];
          a.e[start + i] = e;
          seed = e * a.inv_n;
        }
        for (int s = 0; s <= d; ++s) buf_a[s * P + i] = T(0);
        buf_a[(d + 1) * P + i] = seed;
      } else {
        T seed = T(0);
        if (live) {
          const T b = buf_a[i] - a.p[start + i];
          a.b[start + i] = b;
          seed = b * a.lam_k;
        }
        buf_a[i] = seed;
      }
    }
    sync();
    if (!train) continue;

    T* pbar = buf_a;
    T* xbar = buf_b;
    for (int l = L; l >= 1; --l) {
      const int n = net.sizes[l], m = net.sizes[l - 1];
      if (l < L) {  // X_{l−1} into xbuf (after the forward pass it holds X_{L−1})
        if (l > 1)
          activation_forward(xbuf, zlayer(l - 1), act, d, m, P, S, ld);
        else
          load_input(xbuf, net, pts, start, count, P, S, ld);
        sync();
      }
      gemm_weight_gradient<Mma, RM>(gsh + net.w_offset[l - 1], gsh + net.b_offset[l - 1], pbar,
                                    xbuf, n, m, C, ld, P);
      if (l == 1) break;
      // X̄ = W_lᵀ P̄: A(r, k) = W(k, r).
      gemm_adjoint<Mma, RM>(xbar, wsh + net.ws_offset[l - 1], net.ws_stride[l - 1], pbar, m, n, C,
                            ld);
      sync();
      activation_backward(xbar, zlayer(l - 1), act, d, m, P, S, ld);
      sync();
      T* t = pbar;
      pbar = xbar;
      xbar = t;
    }
    sync();
  }

  if (train)
    for (int k = MLP_TID; k < np; k += MLP_NTHREADS)
      a.partials[std::size_t(block) * np + k] = gsh[k];
}

// Tensor-core GEMMs (Mma) or RM rows per thread's micro-tile, THREADS threads: the variants.
template <class T, bool Mma, int RM, int THREADS>
__global__ void __launch_bounds__(THREADS, 1)
    mlp_pass_kernel(const MlpNetView<T> net, const MlpPassArgs<T> a, const int P, const int ld,
                    const int tiles_int, const int tiles_total) {
  if (a.halt && a.halt[0] < a.step) return;
  extern __shared__ __align__(16) unsigned char mlp_smem[];
  pass_block<Mma, RM>(net, a, P, ld, tiles_int, tiles_total, reinterpret_cast<T*>(mlp_smem),
                      int(blockIdx.x), int(gridDim.x));
  if (a.out_u || !a.losses) return;
  __shared__ double scratch[THREADS];
  last_block_loss(a, scratch);
}

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

// ---- Variant 4: the point-stationary training pass (2D, equal hidden widths ≤ 64) -------------
// Thread (q, g) of a block owns point slot q (lane + 32·tile-warp) and the kPtRows features
// 10g … 10g + 9 of every hidden layer, with all four streams of its point in registers: the
// forward GEMM Z = W X reads X's column block of its point from shared memory (16-byte loads,
// consecutive lanes → consecutive points) and W's rows as broadcasts, 4 k at a time: 160 FMAs
// on 40 independent accumulators per 14 loads, and the activation runs in place on the
// accumulators (no second pass over shared memory). A block takes 32·NT points per tile, two
// stream buffers (ping-pong) and one barrier per layer in the forward pass, two per layer in the
// backward pass (24 barriers per 16 points in variants 0–2). The pre-activations of every hidden
// layer go to a per-thread scratch (global, coalesced, L2-resident; each thread reads back only
// what it wrote). Backward per hidden layer h, top down: P̄ = the activation adjoint of X̄
// (registers) into buffer A, X_{h−1} recomputed from its pre-activations into buffer X (the
// same ownership: features 10g … of point q), one barrier, then ∂I/∂W_h += Σ_columns P̄ Xᵀ in
// 5 × KB micro-tiles (consecutive lanes on consecutive X rows) added straight into the
// block's partials row (one owner per entry, fixed order: same inputs, same bits), and
// X̄_{h−1} = W_hᵀ P̄ into registers. In double both products run on the tensor cores instead
// (pt_mma: DMMA from the same shared buffers; X̄ is staged in buffer X, one more barrier, and
// read back by its owners): 2243 against 1913 it/s at 16384 + 1024 on an H200. In float
// (3xTF32) that was slower, 4475 against 4546, so float keeps the FMA units. Boundary tiles carry four points per lane, one in each
// stream slot (a boundary point needs only the value stream), so the 1024 boundary points of the
// benchmark cost 8 tiles instead of 32. Each block sums its threads' Σe², Σb² and the last block
// adds the blocks' sums (fixed order). bench/RESULTS.md has the measurements and what was tried.
constexpr int kPtRows = 10;
constexpr int kPtMaxGroups = 7;  // hidden width ≤ 64 (features padded to 10 per thread)
// Two tiles per block take at most 5 feature groups (width ≤ 50): 320 threads, whose launch
// bound leaves 204 registers a thread (448 would cap them at 128).
constexpr int pt_max_groups(int nt) { return nt == 2 ? 5 : kPtMaxGroups; }
constexpr int kPtMaxWidth = 64;

// Offsets (in T) of the block's shared memory, computed once on the host.
struct PtLayout {
  int H = 0, G = 0, NT = 0, NP = 0, threads = 0;
  int Rr = 0;    // rows of a weight image and of the biases: 10·G
  int Kq = 0;    // columns of a weight image (zero-padded; see point_layout)
  int Kf = 0;    // … of them read by the forward GEMM: max(H, Rr) rounded up to 4
  int rows = 0;  // rows of a stream buffer
  int ldc = 0;   // row stride of a stream buffer: 4·NP padded to an odd number of 16-byte units
  int kbn = 0;   // weight-gradient micro-tiles along k (KB rows each, strided by kbn)
  int rbn = 0;   // … along r (5 consecutive rows each)
  int off_w1 = 0, off_bias = 0, off_wo = 0, off_img = 0, off_buf0 = 0, off_buf1 = 0;
  int off_seed = 0, off_xin = 0, total = 0;
  int tiles_int = 0, tiles_bnd = 0;
  int Ri = 0;   // rows of a weight image: Rr rounded up to 8 (zero rows: the MMAs' k padding)
  // On the tensor cores (else the FMA units): 1 the weight gradient, 2 the adjoint X̄ = Wᵀ P̄.
  // Both in double, neither in float (bench/RESULTS.md); RBFPDE_MLP_PT_MMA=0…3 sets it.
  int mma = 0;
};

template <class T>
MLP_HD void store4(T* p, const T (&v)[4]) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    reinterpret_cast<double2*>(p)[0] = make_double2(v[0], v[1]);
    reinterpret_cast<double2*>(p)[1] = make_double2(v[2], v[3]);
  }
#else
  for (int i = 0; i < 4; ++i) p[i] = v[i];
#endif
}

#if defined(__CUDA_ARCH__)
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

template <class T>
__device__ __forceinline__ void pt_activate(T (&z)[4], Activation act);

// Packed (boundary) tiles: every slot a value. Rolled loops over a local copy, not inlined:
// these tiles are rare, and unrolled they would quadruple the kernel's inlined activations.
template <class T, int A>
__device__ __noinline__ void pt_activate_packed(T* v) {
  for (int k = 0; k < 4 * kPtRows; ++k) {
    T s, d1;
    activation_value_slope(Activation(A), v[k], s, d1);
    v[k] = s;
  }
}
template <class T, int A>
__device__ __noinline__ void pt_adjoint_packed(T* xb, const T* z) {
  for (int k = 0; k < 4 * kPtRows; ++k) {
    T s, d1;
    activation_value_slope(Activation(A), z[k], s, d1);
    xb[k] *= d1;
  }
}

template <class T, int A>
__device__ __forceinline__ void pt_activate_rows(T (&z)[kPtRows][4], bool packed) {
  if (packed) {
    T v[4 * kPtRows];
#pragma unroll
    for (int k = 0; k < 4 * kPtRows; ++k) v[k] = z[k / 4][k % 4];
    pt_activate_packed<T, A>(v);
#pragma unroll
    for (int k = 0; k < 4 * kPtRows; ++k) z[k / 4][k % 4] = v[k];
    return;
  }
#pragma unroll
  for (int i = 0; i < kPtRows; ++i) pt_activate(z[i], Activation(A));
}

// The streams of a row in place: value, ∂x, ∂y, Δ.
template <class T>
__device__ __forceinline__ void pt_activate(T (&z)[4], Activation act) {
  const ActivationTerms<T> t = activation_terms(act, z[0]);
  const T ax = z[1], ay = z[2];
  z[0] = t.s;
  z[1] = t.d1 * ax;
  z[2] = t.d1 * ay;
  z[3] = t.d2 * (ax * ax + ay * ay) + t.d1 * z[3];
}

// X̄ → P̄ in place at pre-activations z (activation_backward's formulas).
template <class T>
__device__ __forceinline__ void pt_adjoint(T (&xb)[4], const T (&z)[4], Activation act) {
  const ActivationTerms<T> t = activation_terms(act, z[0]);
  const T ax = z[1], ay = z[2], c = z[3];
  const T hb = xb[0], gx = xb[1], gy = xb[2], lb = xb[3];
  xb[0] = hb * t.d1 + t.d2 * (gx * ax + gy * ay) + lb * (t.d3 * (ax * ax + ay * ay) + t.d2 * c);
  xb[1] = gx * t.d1 + T(2) * lb * t.d2 * ax;
  xb[2] = gy * t.d1 + T(2) * lb * t.d2 * ay;
  xb[3] = lb * t.d1;
}

template <class T, int A>
__device__ __forceinline__ void pt_adjoint_rows(T (&xb)[kPtRows][4], const T (&z)[kPtRows][4],
                                                bool packed) {
  if (packed) {
    T v[4 * kPtRows], w[4 * kPtRows];
#pragma unroll
    for (int k = 0; k < 4 * kPtRows; ++k) v[k] = xb[k / 4][k % 4], w[k] = z[k / 4][k % 4];
    pt_adjoint_packed<T, A>(v, w);
#pragma unroll
    for (int k = 0; k < 4 * kPtRows; ++k) xb[k / 4][k % 4] = v[k];
    return;
  }
#pragma unroll
  for (int i = 0; i < kPtRows; ++i) pt_adjoint(xb[i], z[i], Activation(A));
}

// Per-thread scratch of hidden layer h: element j of thread tid at base + (h·40 + j)·threads.
template <class T>
__device__ __forceinline__ void pt_save(T* base, int h, int threads, const T (&z)[kPtRows][4]) {
#pragma unroll
  for (int i = 0; i < kPtRows; ++i)
#pragma unroll
    for (int s = 0; s < 4; ++s) base[std::size_t(h * 4 * kPtRows + 4 * i + s) * threads] = z[i][s];
}
template <class T>
__device__ __forceinline__ void pt_load(const T* base, int h, int threads, T (&z)[kPtRows][4]) {
#pragma unroll
  for (int i = 0; i < kPtRows; ++i)
#pragma unroll
    for (int s = 0; s < 4; ++s) z[i][s] = base[std::size_t(h * 4 * kPtRows + 4 * i + s) * threads];
}

// ∂I/∂W (H × H, row-major at w_off of prow) += Σ over the tile's columns P̄[r][c] X[k][c], and
// ∂I/∂b (b_off) += Σ over the value columns of P̄[r]. Micro-tile (rb, kb): rows 5rb … 5rb + 4,
// columns kb + j·kbn (j < KB).
template <class T, int KB>
__device__ void pt_weight_gradient(T* prow, int w_off, int b_off, const T* pbar, const T* x,
                                   const PtLayout& L, bool packed) {
  const int H = L.H, ncol = 4 * L.NP;
  for (int t = int(threadIdx.x); t < L.rbn * L.kbn; t += int(blockDim.x)) {
    const int rb = t / L.kbn, kb = t % L.kbn;
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
        old[i][j] = r < H && k < H ? prow[w_off + r * H + k] : T(0);
      }
      old_b[i] = bias_owner && 5 * rb + i < H ? prow[b_off + 5 * rb + i] : T(0);
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

// C = A·B on the tensor cores (mma.sync: DMMA in double, 3xTF32 in float; variant 2's fragment
// coordinates) for the block's warps, operands in shared memory: A(m, k) = a[m·am + k·ak],
// B(k, n) = b[k·bk + n·bn], k < K rounded up to the MMA's k (the operands must read as 0 or
// finite there, and B as 0). Rows m of A are clamped to m_max and columns n of B to n_max
// (reads stay in the matrices; the outputs they feed are past the matrix and dropped). Warp
// units of UM × UN output tiles (16 × 8 each) share their fragments: per k-step UM A and UN B
// fragments are loaded (and split, in float) once. epi(m, n, value) for every output of the
// units (m < 16·UM·⌈M/16/UM⌉, n likewise): one owner lane each, fixed order.
template <class T, int UM, int UN, class Epi>
__device__ __forceinline__ void pt_mma(int M, int N, int K, const T* a, int am, int ak, int m_max,
                                       const T* b, int bk, int bn, int n_max, Epi epi) {
  using S = MmaShape<T>;
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
      if constexpr (sizeof(T) == sizeof(float)) {
        unsigned ab[UM][4], as[UM][4], bb[UN][2], bs[UN][2];
#pragma unroll
        for (int mi = 0; mi < UM; ++mi)
#pragma unroll
          for (int i = 0; i < 4; ++i)
            split_tf32(a[aoff[mi][i & 1] + (k + 4 * (i >> 1)) * ak], ab[mi][i], as[mi][i]);
#pragma unroll
        for (int ni = 0; ni < UN; ++ni)
#pragma unroll
          for (int i = 0; i < 2; ++i) split_tf32(b[boff[ni] + (k + 4 * i) * bk], bb[ni][i], bs[ni][i]);
#pragma unroll
        for (int mi = 0; mi < UM; ++mi)
#pragma unroll
          for (int ni = 0; ni < UN; ++ni) {
            mma_tf32(acc[mi][ni], as[mi], bb[ni]);
            mma_tf32(acc[mi][ni], ab[mi], bs[ni]);
            mma_tf32(acc[mi][ni], ab[mi], bb[ni]);
          }
      } else {
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
    }
    epi.begin();
#pragma unroll
    for (int mi = 0; mi < UM; ++mi)
#pragma unroll
      for (int ni = 0; ni < UN; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          epi.load(mi * UN * 4 + ni * 4 + e, m0 + 16 * mi + g + 8 * (e >> 1),
                   n0 + 8 * ni + 2 * t + (e & 1));
#pragma unroll
    for (int mi = 0; mi < UM; ++mi)
#pragma unroll
      for (int ni = 0; ni < UN; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          epi.store(mi * UN * 4 + ni * 4 + e, m0 + 16 * mi + g + 8 * (e >> 1),
                    n0 + 8 * ni + 2 * t + (e & 1), acc[mi][ni][e]);
  }
}

// Epilogue of the weight gradient: ∂I/∂W[r][k] (H × H, row-major at w) += the product; all
// loads of the partials before any store, so that the read-modify-writes overlap.
template <class T, int NV>
struct PtAddToPartials {
  T* w;
  int H;
  T old[NV];
  __device__ void begin() {}
  __device__ void load(int j, int r, int k) { old[j] = r < H && k < H ? w[r * H + k] : T(0); }
  __device__ void store(int j, int r, int k, T v) {
    if (r < H && k < H) w[r * H + k] = old[j] + v;
  }
};

// Epilogue of X̄ = Wᵀ P̄: rows m < rows of the stream buffer x (row stride ld).
template <class T>
struct PtStoreRows {
  T* x;
  int ld, rows;
  __device__ void begin() {}
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
                                       const PtLayout& L, bool packed) {
  const int H = L.H, ncol = 4 * L.NP;
  pt_mma<T, UM, UN>(H, H, ncol, pbar, L.ldc, 1, H - 1, x, 1, L.ldc, H - 1,
                    PtAddToPartials<T, UM * UN * 4>{prow + w_off, H, {}});
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
    prow[b_off + r] += sum;
  }
}

#endif

// One instantiation per activation (A: rbfpde::Activation): the others' code (sin's argument
// reduction above all) would otherwise sit in every row's inlined activation.
// Registers: at most 168 a thread in float (two blocks of 160 threads per SM; left free, the
// compiler takes 255 and one block fits), the launch bound's share otherwise.
template <class T, int NT, int A>
__global__ void __maxnreg__(sizeof(T) == sizeof(float)
                                ? 168
                                : std::min(255, 65536 / (32 * pt_max_groups(NT) * NT) / 8 * 8))
    mlp_point_kernel(const MlpNetView<T> net, const MlpPassArgs<T> a, const PtLayout L) {
#if defined(__CUDA_ARCH__)
  if (a.halt && a.halt[0] < a.step) return;
  extern __shared__ __align__(16) unsigned char mlp_smem[];
  T* const sm = reinterpret_cast<T*>(mlp_smem);
  constexpr int R = kPtRows, KB = 4 / NT;
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

  for (int k = tid; k < L.total; k += nth) sm[k] = T(0);
  __syncthreads();
  // θ through the read-only path (__ldg): the loads need not wait for the stores before them.
  const T* const th = a.theta;
  for (int k = tid; k < 2 * H; k += nth) w1[k] = __ldg(th + net.w_offset[0] + k);
  for (int h = 1; h <= Lh; ++h)
    for (int k = tid; k < H; k += nth)
      bias[(h - 1) * L.Rr + k] = __ldg(th + net.b_offset[h - 1] + k);
  for (int k = tid; k < H; k += nth) wo[k] = __ldg(th + net.w_offset[Lh] + k);
  if (tid == 0) wo[L.Kq] = __ldg(th + net.b_offset[Lh]);
  for (int l = 1; l < Lh; ++l)
#pragma unroll 4
    for (int k = tid; k < H * H; k += nth)
      img[(l - 1) * L.Ri * L.Kq + (k / H) * L.Kq + k % H] = __ldg(th + net.w_offset[l] + k);
  const bool train = a.partials != nullptr;  // else residuals and the loss only
  T* const prow = train ? a.partials + std::size_t(blockIdx.x) * np : nullptr;
  if (train)
    for (int k = tid; k < np; k += nth) prow[k] = T(0);
  T* const scr = a.scratch + std::size_t(blockIdx.x) * Lh * 4 * R * nth + tid;
  __syncthreads();

  const int tiles = L.tiles_int + L.tiles_bnd;
  double sum_e = 0, sum_b = 0;  // this thread's Σe², Σb² (the loss: block sums, then the grid's)
  for (int tile = int(blockIdx.x); tile < tiles; tile += int(gridDim.x)) {
    const bool packed = tile >= L.tiles_int;  // boundary: four points per lane
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
      if (train) pt_save(scr, l, nth, z);
      pt_activate_rows<T, A>(z, packed);
#pragma unroll
      for (int i = 0; i < R; ++i) store4(out + (r0 + i) * L.ldc + 4 * q, z[i]);
      __syncthreads();
      T* t = in;
      in = out;
      out = t;
    }

    // Output: u (value slots) and Δu, residuals, seeds ∂I/∂(output streams) per slot.
    if (g == 0) {
      T sd[4] = {T(0), T(0), T(0), T(0)};
      T acc[4] = {T(0), T(0), T(0), T(0)};
      for (int r = 0; r < H; ++r) {
        T xv[4];
        load4(in + r * L.ldc + 4 * q, xv);
#pragma unroll
        for (int s = 0; s < 4; ++s) acc[s] += wo[r] * xv[s];
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
    if (!train) continue;  // the next tile writes `in` and the seeds after barriers of its own
    // ∂I/∂w_out, ∂I/∂b_out (one owner each; `in` holds X_Lh).
    for (int r = tid; r <= H; r += nth) {
      T s = T(0);
      for (int qq = 0; qq < L.NP; ++qq) {
        T sd[4], xv[4];
        load4(seeds + 4 * qq, sd);
        if (r < H) {
          load4(in + r * L.ldc + 4 * qq, xv);
#pragma unroll
          for (int e = 0; e < 4; ++e) s += sd[e] * xv[e];
        } else {
          s += packed ? sd[0] + sd[1] + sd[2] + sd[3] : sd[0];
        }
      }
      T* const o = prow + (r < H ? net.w_offset[Lh] + r : net.b_offset[Lh]);
      *o += s;
    }
    // X̄ of the last hidden layer: seed ⊗ w_out.
    T xb[R][4];
    {
      T sd[4];
      load4(seeds + 4 * q, sd);
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const T w = r0 + i < H ? wo[r0 + i] : T(0);
#pragma unroll
        for (int s = 0; s < 4; ++s) xb[i][s] = sd[s] * w;
      }
    }
    T* const pb = out;  // P̄ buffer (free since the last forward barrier)
    T* const xs = in;   // X_{h−1} buffer (read above until the next barrier)
    __syncthreads();
    for (int h = Lh; h >= 1; --h) {
      pt_load(scr, h - 1, nth, z);
      pt_adjoint_rows<T, A>(xb, z, packed);
#pragma unroll
      for (int i = 0; i < R; ++i) store4(pb + (r0 + i) * L.ldc + 4 * q, xb[i]);
      if (h >= 2) {
        pt_load(scr, h - 2, nth, z);
        pt_activate_rows<T, A>(z, packed);
#pragma unroll
        for (int i = 0; i < R; ++i) store4(xs + (r0 + i) * L.ldc + 4 * q, z[i]);
      }
      __syncthreads();
      if (h >= 2) {
        if (L.mma & 1)
          pt_weight_gradient_mma<T, 2, 4 / NT>(prow, net.w_offset[h - 1], net.b_offset[h - 1], pb,
                                               xs, L, packed);
        else
          pt_weight_gradient<T, KB>(prow, net.w_offset[h - 1], net.b_offset[h - 1], pb, xs, L,
                                    packed);
        if (L.mma & 2) {
          // X̄_{h−1} = W_hᵀ P̄ on the tensor cores, staged in the X buffer (free after a barrier)
          // and read back into the registers of its owners.
          __syncthreads();
          pt_mma<T, 4, 4>(L.Rr, 4 * L.NP, H, img + (h - 2) * L.Ri * L.Kq, 1, L.Kq, INT_MAX / 2, pb,
                          L.ldc, 1, INT_MAX / 2, PtStoreRows<T>{xs, L.ldc, L.Rr});
          __syncthreads();
#pragma unroll
          for (int i = 0; i < R; ++i) load4(xs + (r0 + i) * L.ldc + 4 * q, xb[i]);
          continue;  // the next layer writes only what its own threads read: no barrier
        }
        // X̄_{h−1} = W_{h−1}ᵀ P̄: column block r0 … r0 + 9 of every row of W.
        const T* w = img + (h - 2) * L.Ri * L.Kq + r0;
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
          for (int s = 0; s < 4; ++s) xb[i][s] = T(0);
        const T* pc = pb + 4 * q;
#pragma unroll 2
        for (int r = 0; r < H; ++r) {
          T pv[4], wv[R];
          load4(pc + r * L.ldc, pv);
#pragma unroll
          for (int i = 0; i < R; i += 2) load2(w + r * L.Kq + i, wv[i], wv[i + 1]);
#pragma unroll
          for (int i = 0; i < R; ++i)
#pragma unroll
            for (int s = 0; s < 4; ++s) xb[i][s] += wv[i] * pv[s];
        }
      } else {
        // Hidden layer 1's weights W_1 (H × 2) and bias: x' of the slot, ∂x'_j/∂x_j = scale_j.
        for (int r = tid; r < H; r += nth) {
          T s0 = T(0), s1 = T(0), sb = T(0);
          const T* pr = pb + r * L.ldc;
          for (int qq = 0; qq < L.NP; ++qq) {
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
          const T o0 = prow[net.w_offset[0] + 2 * r], o1 = prow[net.w_offset[0] + 2 * r + 1],
                  ob = prow[net.b_offset[0] + r];
          prow[net.w_offset[0] + 2 * r] = o0 + s0;
          prow[net.w_offset[0] + 2 * r + 1] = o1 + s1;
          prow[net.b_offset[0] + r] = ob + sb;
        }
      }
      __syncthreads();
    }
  }
  if (!a.losses) return;
  __shared__ double loss_scratch[32 * pt_max_groups(NT) * NT];
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

// 32 parameters a block: warp w sums partials of blocks w, w + 8, … for its lane's parameter,
// then warp 0 adds the 8 sums in order, stores the gradient and applies Adam.
template <class T>
__global__ void __launch_bounds__(kThreads)
    mlp_reduce_kernel(const T* __restrict__ partials, int blocks, int np, T* __restrict__ grad,
                      const MlpAdamArgs<T> adam, const int* halt, int step) {
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
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= np) return;
  const T g = grad[k];
  const T m = beta1 * mm[k] + (T(1) - beta1) * g;
  const T v = beta2 * vv[k] + (T(1) - beta2) * g * g;
  mm[k] = m;
  vv[k] = v;
  theta[k] -= lr * (m * c1) / (sqrt(v * c2) + epsilon);
}

int round4(int n) { return (n + 3) / 4 * 4; }

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

struct DeviceLimits {
  int sms = 0;
  std::size_t shared_optin = 0, shared_per_sm = 0;
};

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

// The pass kernel's variants (MlpTiling::variant): tensor-core GEMMs or micro-tile rows, and
// threads per block. 0 and 1 are the SIMT kernels the tensor-core one replaced, kept for
// comparison (bench/bench_gpu_mlp.cpp) and as a cross-check in the tests.
struct PassVariant {
  bool mma;
  int rows, threads;
};
constexpr PassVariant kPassVariants[] = {{false, 4, 256}, {false, 2, 512}, {true, 2, 512}};
constexpr int kPassVariantCount = 3;
// By precision, from bench/RESULTS.md (H200): double runs 1.6× faster on DMMA than on the SIMT
// kernels; float gains nothing from 3xTF32 (its three MMAs and operand splitting cost as many
// instructions as the FFMAs they replace) and is 1e-5 less exact, so float keeps variant 1.
template <class T>
constexpr int kDefaultPassVariant = sizeof(T) == sizeof(double) ? 2 : 1;

template <class T>
PassKernel<T> pass_kernel(int variant) {
  switch (variant) {
    case 0:
      return mlp_pass_kernel<T, false, 4, 256>;
    case 1:
      return mlp_pass_kernel<T, false, 2, 512>;
    default:
      return mlp_pass_kernel<T, true, 2, 512>;
  }
}

std::size_t pass_static_bytes(int variant) {  // scratch and flag of the last block
  return std::size_t(kPassVariants[variant].threads) * sizeof(double) + 64;
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

// Once per precision, outside any graph capture (plan_mlp_tiling runs before every launch).
template <class T>
void configure_pass_kernels(const DeviceLimits& limits) {
  static const bool configured = [&] {
    for (int v = 0; v < kPassVariantCount; ++v) {
      CUDA_CHECK(cudaFuncSetAttribute(pass_kernel<T>(v),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(limits.shared_optin - pass_static_bytes(v))));
      CUDA_CHECK(cudaFuncSetAttribute(pass_kernel<T>(v),
                                      cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    }
    if constexpr (std::is_same_v<T, double>) {
      for (Activation act : {Activation::kTanh, Activation::kSin, Activation::kSigmoid}) {
        CUDA_CHECK(cudaFuncSetAttribute(fast_kernel(act),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(limits.shared_optin - 4096)));
        CUDA_CHECK(cudaFuncSetAttribute(fast_kernel(act),
                                        cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      }
    }
    return true;
  }();
  (void)configured;
}

// Variant 4 takes 2D networks of equal hidden widths ≤ kPtMaxWidth with one output, for
// training passes; NT tile-warps (32 points each) per block.
template <class T>
bool point_pass_fits(const MlpNetView<T>& net) {
  const int Lh = net.layers - 1;
  if (net.dim != 2 || Lh < 1 || net.sizes[net.layers] != 1) return false;
  for (int l = 1; l <= Lh; ++l)
    if (net.sizes[l] != net.sizes[1]) return false;
  return net.sizes[1] <= kPtMaxWidth;
}

template <class T>
PtLayout point_layout(const MlpNetView<T>& net, int nt, int n_int, int n_bnd) {
  PtLayout L;
  const int H = net.sizes[1], Lh = net.layers - 1, kb = 4 / nt;
  L.H = H;
  L.G = (H + kPtRows - 1) / kPtRows;
  L.NT = nt;
  L.NP = 32 * nt;
  L.threads = 32 * L.G * nt;
  L.Rr = kPtRows * L.G;
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
  L.total = off;
  L.tiles_int = (n_int + L.NP - 1) / L.NP;
  L.tiles_bnd = (n_bnd + 4 * L.NP - 1) / (4 * L.NP);
  L.mma = sizeof(T) == sizeof(double) ? 3 : 0;
  if (const char* v = std::getenv("RBFPDE_MLP_PT_MMA")) L.mma = std::atoi(v) & 3;
  return L;
}

template <class T>
using PointKernel = void (*)(MlpNetView<T>, MlpPassArgs<T>, PtLayout);

template <class T, int NT>
PointKernel<T> point_kernel_nt(Activation act) {
  switch (act) {
    case Activation::kSin:
      return mlp_point_kernel<T, NT, int(Activation::kSin)>;
    case Activation::kSigmoid:
      return mlp_point_kernel<T, NT, int(Activation::kSigmoid)>;
    case Activation::kTanh:
    default:
      return mlp_point_kernel<T, NT, int(Activation::kTanh)>;
  }
}

// Two tiles per block in float only (double's would need 128 registers a thread and spill).
template <class T>
constexpr int kPtMaxTiles = sizeof(T) == sizeof(double) ? 1 : 2;

template <class T>
PointKernel<T> point_kernel(int nt, Activation act) {
  if constexpr (kPtMaxTiles<T> == 2)
    if (nt == 2) return point_kernel_nt<T, 2>(act);
  return point_kernel_nt<T, 1>(act);
}

std::size_t point_static_bytes(int nt) {  // loss scratch and flag of the last block
  return std::size_t(32 * pt_max_groups(nt) * nt) * sizeof(double) + 64;
}

template <class T>
void configure_point_kernels(const DeviceLimits& limits) {
  static const bool configured = [&] {
    for (int nt = 1; nt <= kPtMaxTiles<T>; ++nt)
      for (Activation act : {Activation::kTanh, Activation::kSin, Activation::kSigmoid}) {
        CUDA_CHECK(cudaFuncSetAttribute(point_kernel<T>(nt, act),
                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(limits.shared_optin - point_static_bytes(nt))));
        CUDA_CHECK(cudaFuncSetAttribute(point_kernel<T>(nt, act),
                                        cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      }
    return true;
  }();
  (void)configured;
}

}  // namespace

void set_mlp_phase_timing(bool on) {
  const int flag = on ? 1 : 0;
  CUDA_CHECK(cudaMemcpyToSymbol(g_phase_timing, &flag, sizeof(flag)));
  if (on) {
    const unsigned long long zero[kMlpPhaseSlots] = {};
    CUDA_CHECK(cudaMemcpyToSymbol(g_phase_cycles, zero, sizeof(zero)));
  }
}

std::vector<unsigned long long> mlp_phase_cycles() {
  std::vector<unsigned long long> v(kMlpPhaseSlots);
  CUDA_CHECK(cudaMemcpyFromSymbol(v.data(), g_phase_cycles, sizeof(unsigned long long) * v.size()));
  return v;
}

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
  if (variant < 0 || variant >= kPassVariantCount)
    throw std::invalid_argument("emulate_mlp_pass runs kernel variants 0 to " +
                                std::to_string(kPassVariantCount - 1));
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
  for (int block = 0; block < tiling.grid; ++block) {
    if (kPassVariants[tiling.variant].mma)
      pass_block<true, 2>(net, a, tiling.points, tiling.ld, tiling.tiles_interior, total, sm.data(),
                          block, tiling.grid);
    else if (kPassVariants[tiling.variant].rows == 4)
      pass_block<false, 4>(net, a, tiling.points, tiling.ld, tiling.tiles_interior, total,
                           sm.data(), block, tiling.grid);
    else
      pass_block<false, 2>(net, a, tiling.points, tiling.ld, tiling.tiles_interior, total,
                           sm.data(), block, tiling.grid);
  }
  if (a.out_u || !a.losses) return;
  double se = 0, sb = 0;
  for (int k = 0; k < a.n_int; ++k) se += double(a.e[k]) * double(a.e[k]);
  for (int k = 0; k < a.n_bnd; ++k) sb += double(a.b[k]) * double(a.b[k]);
  const double nn = double(std::max(a.n_int, 1)), kk = double(std::max(a.n_bnd, 1));
  a.losses[3 * a.step] = 0.5 * se / nn + 0.5 * a.penalty * sb / kk;
  a.losses[3 * a.step + 1] = std::sqrt(se / nn);
  a.losses[3 * a.step + 2] = std::sqrt(sb / kk);
}

template <class T>
MlpTiling plan_mlp_tiling(const MlpNetView<T>& net, int n_int, int n_bnd, bool gradient) {
  static const DeviceLimits limits = device_limits();
  configure_pass_kernels<T>(limits);
  MlpTiling t;
  t.variant = kDefaultPassVariant<T>;
  // Tuning knobs for bench/bench_gpu_mlp.cpp: the kernel variant, a smaller tile.
  int want = -1;
  if (const char* v = std::getenv("RBFPDE_MLP_VARIANT")) {
    want = std::atoi(v);
    if (want >= 0 && want < kPassVariantCount) t.variant = want;
  }
  // Variant 3 where it applies (double, 2D, equal hidden widths ≤ kFastHp, a training plan;
  // evaluation keeps the tiled kernels) and only when asked for (RBFPDE_MLP_VARIANT=3): it is
  // exact but slower than variant 2 so far (bench/RESULTS.md).
  if constexpr (std::is_same_v<T, double>) {
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
      return t;
    }
  }
  // Variant 4 (the point-stationary pass) for the training passes of the networks it takes:
  // when asked for (RBFPDE_MLP_VARIANT=4), and by default when its tiles fill at least one wave
  // of resident blocks (bench/RESULTS.md: below that the tiled kernels are faster).
  // RBFPDE_MLP_POINT_TILES=1|2 sets its 32-point tiles per block (bench_gpu_mlp),
  // else the one with the fewest rounds of resident blocks.
  if (gradient && point_pass_fits(net) &&
      (want == 4 || want == -1)) {
    configure_point_kernels<T>(limits);
    int forced_nt = 0;
    if (const char* p = std::getenv("RBFPDE_MLP_POINT_TILES")) forced_nt = std::atoi(p);
    int best_nt = 0, best_rounds = 0, best_resident = 0;
    for (int nt = 1; nt <= kPtMaxTiles<T>; ++nt) {
      if (forced_nt >= 1 && forced_nt <= 2 && nt != forced_nt) continue;
      const PtLayout L = point_layout(net, nt, n_int, n_bnd);
      if (L.G > pt_max_groups(nt)) continue;
      const std::size_t bytes = std::size_t(L.total) * sizeof(T);
      if (bytes + point_static_bytes(nt) > limits.shared_optin) continue;
      int per_sm = 0;
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, point_kernel<T>(nt, Activation(net.activation)), L.threads, bytes));
      if (per_sm < 1) continue;
      const int resident = per_sm * limits.sms;
      // Rounds of the busiest SM, in units of 32-point tiles.
      const int per_sm_tiles = (L.tiles_int + L.tiles_bnd + resident - 1) / resident * per_sm;
      const int rounds = per_sm_tiles * nt;
      if (best_nt == 0 || rounds < best_rounds) {
        best_nt = nt;
        best_rounds = rounds;
        best_resident = resident;
      }
    }
    const PtLayout best = point_layout(net, std::max(best_nt, 1), n_int, n_bnd);
    if (best_nt != 0 && (want == 4 || best.tiles_int + best.tiles_bnd >= best_resident)) {
      const PtLayout& L = best;
      t.variant = 4;
      t.points = L.NP;
      t.tiles_interior = L.tiles_int;
      t.tiles_boundary = L.tiles_bnd;
      t.grid = std::max(1, std::min(L.tiles_int + L.tiles_bnd, best_resident));
      t.shared_bytes = std::size_t(L.total) * sizeof(T);
      // Every block's pre-activations, then 2 doubles a block (its Σe², Σb²).
      t.scratch_elements =
          std::size_t(t.grid) * std::size_t(net.layers - 1) * 4 * kPtRows * std::size_t(L.threads) +
          std::size_t(t.grid) * 2 * sizeof(double) / sizeof(T);
      return t;
    }
  }
  int forced = 0;
  if (const char* p = std::getenv("RBFPDE_MLP_TILE_POINTS")) forced = std::atoi(p);
  const int threads = kPassVariants[t.variant].threads;
  const std::size_t static_bytes = pass_static_bytes(t.variant);
  auto tiles = [&](int p) { return (n_int + p - 1) / p + (n_bnd + p - 1) / p; };
  // The tile size with the fewest waves of resident blocks (ties: the larger tile).
  int best_points = 0, best_blocks = 0, best_waves = 0;
  for (int p : {16, 8, 4, 2, 1}) {
    const std::size_t bytes = pass_shared_elements(net, p, gradient) * sizeof(T);
    if (bytes + static_bytes > limits.shared_optin) continue;
    if (forced >= 1 && p > forced) continue;
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, pass_kernel<T>(t.variant),
                                                             threads, bytes));
    if (per_sm < 1) continue;
    const int resident = per_sm * limits.sms;
    const int waves = (tiles(p) + resident - 1) / resident;
    if (best_points == 0 || waves < best_waves) {
      best_points = p;
      best_blocks = resident;
      best_waves = waves;
    }
    if (forced >= 1) break;
  }
  if (best_points == 0)
    throw std::runtime_error(
        "the CUDA MLP pass needs " +
        std::to_string(pass_shared_elements(net, 1, gradient) * sizeof(T) + static_bytes) +
        " bytes of shared memory per block for one point (" + std::to_string(net.n_params) +
        " parameters" + (gradient ? " and their gradient" : "") + "), the device allows " +
        std::to_string(limits.shared_optin) + ": use narrower layers");
  t.points = best_points;
  t.ld = pass_ld<T>(net.dim, t.points);
  t.tiles_interior = (n_int + t.points - 1) / t.points;
  t.tiles_boundary = (n_bnd + t.points - 1) / t.points;
  t.shared_bytes = pass_shared_elements(net, t.points, gradient) * sizeof(T);
  t.grid = std::max(1, std::min(t.tiles_interior + t.tiles_boundary, best_blocks));
  return t;
}

template <class T>
void launch_mlp_pass(MlpStream stream, const MlpNetView<T>& net, const MlpTiling& tiling,
                     const MlpPassArgs<T>& args) {
  const int total = tiling.tiles_interior + tiling.tiles_boundary;
  if (total == 0) return;
  if (tiling.variant == 3) {
    if constexpr (std::is_same_v<T, double>) {
      if (args.out_u) throw std::logic_error("the register-resident MLP pass does not evaluate");
      fast_kernel(
          Activation(net.activation))<<<tiling.grid, kFastThreads, tiling.shared_bytes, stream>>>(
          net, args, args.scratch);
      CUDA_CHECK_LAUNCH("mlp_fast_kernel");
      return;
    }
    throw std::logic_error("the register-resident MLP pass is double only");
  }
  if (tiling.variant == 4) {
    if (args.out_u) throw std::logic_error("the point-stationary MLP pass does not evaluate");
    const PtLayout L = point_layout(net, tiling.points / 32, args.n_int, args.n_bnd);
    point_kernel<T>(
        L.NT, Activation(net.activation))<<<tiling.grid, L.threads, tiling.shared_bytes, stream>>>(
        net, args, L);
    CUDA_CHECK_LAUNCH("mlp_point_kernel");
    return;
  }
  pass_kernel<T>(tiling.variant)<<<tiling.grid, kPassVariants[tiling.variant].threads,
                                   tiling.shared_bytes, stream>>>(
      net, args, tiling.points, tiling.ld, tiling.tiles_interior, total);
  CUDA_CHECK_LAUNCH("mlp_pass_kernel");
}

template <class T>
void launch_mlp_reduce(MlpStream stream, const T* partials, int blocks, int n_params, T* grad,
                       const MlpAdamArgs<T>& adam, const int* halt, int step) {
  if (n_params == 0) return;
  mlp_reduce_kernel<T><<<(n_params + 31) / 32, kThreads, 0, stream>>>(partials, blocks, n_params,
                                                                      grad, adam, halt, step);
  CUDA_CHECK_LAUNCH("mlp_reduce_kernel");
}

template <class T>
void launch_mlp_adam(MlpStream stream, int n_params, const T* grad, T* theta, T* m, T* v,
                     T learning_rate, T beta1, T beta2, T epsilon, T c1, T c2) {
  if (n_params == 0) return;
  mlp_adam_kernel<T><<<(n_params + 255) / 256, 256, 0, stream>>>(
      n_params, grad, theta, m, v, learning_rate, beta1, beta2, epsilon, c1, c2);
  CUDA_CHECK_LAUNCH("mlp_adam_kernel");
}

#define RBFPDE_MLP_INSTANTIATE(T)                                                                 \
  template MlpNetView<T> make_mlp_net_view<T>(const MlpOptions&);                                 \
  template MlpTiling emulated_mlp_tiling<T>(const MlpNetView<T>&, int, int, bool, int, int, int); \
  template void emulate_mlp_pass<T>(const MlpNetView<T>&, const MlpTiling&,                       \
                                    const MlpPassArgs<T>&);                                       \
  template MlpTiling plan_mlp_tiling<T>(const MlpNetView<T>&, int, int, bool);                    \
  template void launch_mlp_pass<T>(MlpStream, const MlpNetView<T>&, const MlpTiling&,             \
                                   const MlpPassArgs<T>&);                                        \
  template void launch_mlp_reduce<T>(MlpStream, const T*, int, int, T*, const MlpAdamArgs<T>&,    \
                                     const int*, int);                                            \
  template void launch_mlp_adam<T>(MlpStream, int, const T*, T*, T*, T*, T, T, T, T, T, T);
RBFPDE_MLP_INSTANTIATE(float)
RBFPDE_MLP_INSTANTIATE(double)
#undef RBFPDE_MLP_INSTANTIATE

}  // namespace rbfpde::gpu
