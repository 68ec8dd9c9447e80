// The reduction of a training pass's partial gradients (MlpPassArgs::partials, grid × n_params)
// with the fused Adam update, mlp_reduce_kernel, and the Adam update alone, mlp_adam_kernel, with
// their launchers.
//
// mlp_reduce_kernel: 32 parameters a block, 8 warps summing the blocks' partials in a fixed
// order (coalesced), then the fused Adam update; ⌈n_params / 32⌉ blocks of 256 threads.
// mlp_adam_kernel: a thread a parameter, blocks of 256 threads.
// Napkin math: the reduction reads the partials once (grid × n_params values) and writes the
// gradient; the Adam update reads and writes θ, m and v once.
#include <cstddef>

#include "kernels/cuda/mlp/mlp_device.cuh"
#include "kernels/cuda/mlp/mlp_kernels.hpp"

namespace rbfpde::gpu {
using namespace detail;  // mlp_device.cuh's helpers, named as in the kernels below
namespace {

constexpr int kThreads = 256;

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

}  // namespace

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

#define RBFPDE_MLP_REDUCE_INSTANTIATE(T)                                                       \
  template void launch_mlp_reduce<T>(MlpStream, const T*, int, int, T*, const MlpAdamArgs<T>&, \
                                     const int*, int, bool);                                   \
  template void launch_mlp_adam<T>(MlpStream, int, const T*, T*, T*, T*, T, T, T, T, T, T);
RBFPDE_MLP_REDUCE_INSTANTIATE(float)
RBFPDE_MLP_REDUCE_INSTANTIATE(double)
#undef RBFPDE_MLP_REDUCE_INSTANTIATE

}  // namespace rbfpde::gpu
