// Helpers shared by the CUDA MLP's kernel files: the tiled pass's (mlp_pass_block.cuh, which
// mlp_pass_kernel.cu, mlp_emulation.cu and mlp_launch.cu include), the reduction's
// (mlp_reduce_kernel.cu) and the point-stationary pass's (mlp_point_kernel.cu); included by those
// alone. They compile without -rdc, each file getting its own copy: everything here is inline or a
// template.
#pragma once

#include <climits>
#include <string>
#include <utility>

#include "kernels/cuda/common/cuda_check.hpp"
#include "kernels/cuda/common/device_reduce.cuh"
#include "kernels/cuda/mlp/mlp_kernels.hpp"

// Also compiled for the host, where emulate_mlp_pass runs the tiled kernel's block code.
#define MLP_HD __host__ __device__ __forceinline__

namespace rbfpde::gpu::detail {

inline int round4(int n) { return (n + 3) / 4 * 4; }

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

// ---- mma.sync fragments (the double kernels' tensor-core GEMMs) -----------------------------
// m16n8k4 .f64 (DMMA: exact FMA arithmetic in another summation order). Fragment coordinates of
// lane l (g = l / 4, t = l % 4), PTX ISA "Matrix fragments for mma.m16n8k4":
//   A (16 × 4): element i at row g + 8 i, column t
//   B (4 × 8):  element 0 at row t, column g
//   C (16 × 8): element i at row g + 8 (i / 2), column 2t + i % 2
struct MmaShape {
  static constexpr int K = 4, NA = 2, NB = 1;
};

MLP_HD int frag_a_row(int lane, int i) { return (lane >> 2) + 8 * (i & 1); }
MLP_HD int frag_a_col(int lane, int i) { return (lane & 3) + 4 * (i >> 1); }
MLP_HD int frag_b_row(int lane, int i) { return (lane & 3) + 4 * i; }
MLP_HD int frag_b_col(int lane) { return lane >> 2; }
MLP_HD int frag_c_row(int lane, int i) { return (lane >> 2) + 8 * (i >> 1); }
MLP_HD int frag_c_col(int lane, int i) { return 2 * (lane & 3) + (i & 1); }

#if defined(__CUDA_ARCH__)
// c += A·B for one fragment triple.
__device__ __forceinline__ void mma_frag(double (&c)[4], const double (&fa)[2],
                                         const double (&fb)[1]) {
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(fa[0]), "d"(fa[1]), "d"(fb[0]));
}
#endif

// ---- The loss: block sums (block_sum: device_reduce.cuh) and the last block's total ---------
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
// in a fixed order, into losses[3·step…] (and the two sums into a.sums when given), and sets the
// early-stop flag. Every thread calls it.
// block_sums (the point kernel): instead of the residuals, each block's {Σe², Σb²} (2 doubles a
// block).
template <class T>
__device__ void last_block_loss(const MlpPassArgs<T>& a, double* scratch,
                                const double* block_sums = nullptr) {
  __shared__ bool last;
  // The last block reads the residuals every thread wrote, or only thread 0's block sums.
  if (!block_sums) __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    if (block_sums) __threadfence();
    last = atomicAdd(a.counter, 1u) == gridDim.x - 1;
  }
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
    if (a.sums) {
      a.sums[0] = se;
      a.sums[1] = sb;
    }
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

// ---- Programmatic dependent launch (sm_90) --------------------------------------------------
// A training step is two kernels, the pass and the reduction (+ Adam), and a graph chains them
// step after step. Launched with programmatic stream serialization (launch_mlp_kernel), a
// kernel's blocks may start while the kernel before it in the stream is still running. Every
// MLP kernel waits (pdl_wait) for its predecessor to have finished, with its writes visible,
// before it reads or writes anything in global memory that the predecessor reads or writes,
// and signals early (at its start; the point kernel after its prologue) that its successor may
// launch (pdl_launch_dependents). The point kernel's pass launches with the attribute
// (MlpTiling::overlap): its blocks start, and zero-fill their shared memory, while the
// reduction before it finishes; the reduction after it does when each of the pass's blocks
// takes one tile (MlpTiling::overlap_reduce). Without the attribute (MlpTuning::pdl off) both
// calls are no-ops. No deadlock: a kernel's successor launches only when all of its blocks have
// signalled or exited, so all of them have started.
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Both at a kernel's start: the successor may launch, then wait for the predecessor.
__device__ __forceinline__ void pdl_start() {
  pdl_launch_dependents();
  pdl_wait();
}

// Lets `kernel` take `bytes` of dynamic shared memory, with the L1/shared split at the most
// shared memory.
template <class... Params>
void allow_shared_memory(void (*kernel)(Params...), std::size_t bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
}

// kernel<<<grid, block, shared, stream>>>(args...), with programmatic stream serialization
// when overlap; the kernel must call pdl_wait() before its first global access.
template <class... Params, class... Args>
void launch_mlp_kernel(const char* name, void (*kernel)(Params...), int grid, int block,
                       std::size_t shared, MlpStream stream, bool overlap, Args&&... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(unsigned(block));
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = overlap ? 1 : 0;
  config.attrs = attribute;
  config.numAttrs = 1;
  const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (status != cudaSuccess) {
    const std::string what = std::string("launch of ") + name;
    throw_gpu_error("CUDA", what.c_str(), __FILE__, __LINE__, cudaGetErrorString(status));
  }
}

}  // namespace rbfpde::gpu::detail
