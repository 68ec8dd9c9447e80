// Deterministic block reductions: a fixed shuffle tree inside each warp, then the warp totals
// summed by one warp in warp order. Same block size, same inputs → same bits; no atomics.
#pragma once

namespace rbfpde::gpu {

template <class V>
__device__ __forceinline__ V warp_sum(V v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

template <class V>
__device__ __forceinline__ V warp_max(V v) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const V o = __shfl_down_sync(0xffffffffu, v, offset);
    v = o > v ? o : v;
  }
  return v;
}

// Sum over the block, returned to every thread. Every thread of the block must call it;
// blockDim.x a multiple of 32; `scratch` holds at least 32 values.
template <class V>
__device__ V block_sum(V v, V* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  V total = lane < warps ? scratch[lane] : V(0);
  total = warp_sum(total);
  return __shfl_sync(0xffffffffu, total, 0);
}

template <class V>
__device__ V block_max(V v, V* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  V total = lane < warps ? scratch[lane] : scratch[0];
  total = warp_max(total);
  return __shfl_sync(0xffffffffu, total, 0);
}

}  // namespace rbfpde::gpu
