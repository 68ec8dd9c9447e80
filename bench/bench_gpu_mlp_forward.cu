// An experiment for the next MLP kernel, not used by the solver: the MLP's forward pass
// (u, ∇u and Δu streams, double, 2D, tanh, uniform hidden width ≤ 56) with every stream in
// registers, against the fused pass kernel's evaluation mode (kernels/cuda/mlp_kernels.cu) on
// the same network and points, and against the CPU backend for correctness.
//
// The layout it tests (bench/RESULTS.md explains why the pass kernel needs another structure):
// a warp takes 8 points; each layer is one MMA (m16n8k4 .f64) GEMM whose rows are the points'
// streams and whose columns are the features, Z = X Wᵀ. Rows of m-tile 0 are the value (row g)
// and ∂/∂x (row g + 8) streams of point g = lane / 4, m-tile 1 holds ∂/∂y and Δ; so a lane holds
// all four streams of its point for features 2t, 2t + 1 of every 8-feature n-tile (t = lane % 4)
// and applies the activation in registers. The C fragment of one layer is the A fragment of the
// next with no data movement: k-step 2·nt + e takes feature 8·nt + 2t + e at the A column t,
// so the B operand reads W[out][8·nt + 2t + e]. Weights sit in shared memory; nothing else does.
// No barriers after the weights are loaded.
#if !defined(RBFPDE_HAVE_CUDA_MLP)
#include <cstdio>
int main() {
  std::printf("built without the CUDA MLP backend: nothing to time\n");
  return 0;
}
#else
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/mlp_kernels.hpp"
#include "kernels/mlp_backend.hpp"
#include "problems/random.hpp"
#include "solver/train/mlp_model.hpp"

namespace {

using namespace rbfpde;

constexpr int kHp = 56;          // padded hidden width
constexpr int kNt = kHp / 8;     // n-tiles of a hidden layer
constexpr int kKs = kHp / 4;     // k-steps (f64 MMA: k = 4)
constexpr int kMaxHidden = 6;    // hidden layers
constexpr int kThreads = 256;

struct ProtoNet {
  int hidden = 0;  // hidden layers, all of width width
  int width = 0;
  double scale[2], shift[2];
};

// Shared-memory layout (doubles): W1 [kHp][2], b1 [kHp], then per hidden→hidden layer
// W [kHp][kHp], b [kHp], then the output row w [kHp] and its bias; zero-padded.
__host__ __device__ int proto_shared_doubles(int hidden) {
  return kHp * 3 + (hidden - 1) * (kHp * kHp + kHp) + kHp + 1;
}

__device__ __forceinline__ void mma_f64(double (&c)[4], double a0, double a1, double b) {
  asm volatile(
      "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
      "{%0,%1,%2,%3};\n"
      : "+d"(c[0]), "+d"(c[1]), "+d"(c[2]), "+d"(c[3])
      : "d"(a0), "d"(a1), "d"(b));
}

// c[mt][nt][i]: value (mt 0, i = e), ∂x (mt 0, i = 2 + e), ∂y (mt 1, i = e), Δ (mt 1, i = 2 + e)
// of feature 8 nt + 2t + e. In place: the activation's streams.
__device__ __forceinline__ void activate(double (&c)[2][kNt][4]) {
#pragma unroll
  for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const double s = tanh(c[0][nt][e]);
      const double d1 = 1.0 - s * s, d2 = -2.0 * s * d1;
      const double gx = c[0][nt][2 + e], gy = c[1][nt][e];
      c[1][nt][2 + e] = d2 * (gx * gx + gy * gy) + d1 * c[1][nt][2 + e];
      c[0][nt][e] = s;
      c[0][nt][2 + e] = d1 * gx;
      c[1][nt][e] = d1 * gy;
    }
}

__device__ __forceinline__ void init_bias(double (&c)[2][kNt][4], const double* b, int t) {
#pragma unroll
  for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      c[0][nt][e] = b[8 * nt + 2 * t + e];
      c[0][nt][2 + e] = c[1][nt][e] = c[1][nt][2 + e] = 0.0;
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    proto_forward(const ProtoNet net, const double* __restrict__ sm_image, const double* x,
                  int n, double* u, double* grad, double* lap) {
  extern __shared__ double sm[];
  const int total = proto_shared_doubles(net.hidden);
  for (int k = threadIdx.x; k < total; k += blockDim.x) sm[k] = sm_image[k];
  __syncthreads();
  const double* w1 = sm;
  const double* b1 = w1 + 2 * kHp;
  const double* wh = b1 + kHp;  // layer l: wh + l (kHp² + kHp), bias after its W
  const double* wo = wh + (net.hidden - 1) * (kHp * kHp + kHp);
  const double bo = wo[kHp];

  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
  const int warps = int(gridDim.x * blockDim.x) >> 5;
  for (int chunk = int(blockIdx.x * blockDim.x + threadIdx.x) >> 5; chunk * 8 < n;
       chunk += warps) {
    const int p = chunk * 8 + g;
    const bool live = p < n;
    const double xs0 = live ? net.scale[0] * x[2 * p] + net.shift[0] : 0.0;
    const double xs1 = live ? net.scale[1] * x[2 * p + 1] + net.shift[1] : 0.0;
    double c[2][kNt][4];
    init_bias(c, b1, t);
    {  // first layer, k = 2 (padded to 4): value x', ∂x' = scale e_j, Δx' = 0
      const double v = t == 0 ? xs0 : (t == 1 ? xs1 : 0.0);
      const double dx = t == 0 ? net.scale[0] : 0.0, dy = t == 1 ? net.scale[1] : 0.0;
#pragma unroll
      for (int j = 0; j < kNt; ++j) {
        const double b = t < 2 ? w1[(8 * j + g) * 2 + t] : 0.0;
        mma_f64(c[0][j], v, dx, b);
        mma_f64(c[1][j], dy, 0.0, b);
      }
    }
    activate(c);
    for (int l = 0; l + 1 < net.hidden; ++l) {
      const double* w = wh + l * (kHp * kHp + kHp);
      double z[2][kNt][4];
      init_bias(z, w + kHp * kHp, t);
#pragma unroll
      for (int ks = 0; ks < kKs; ++ks) {
        const int nt = ks / 2, e = ks % 2;
        const int col = 8 * nt + 2 * t + e;
#pragma unroll
        for (int j = 0; j < kNt; ++j) {
          const double b = w[(8 * j + g) * kHp + col];
          mma_f64(z[0][j], c[0][nt][e], c[0][nt][2 + e], b);
          mma_f64(z[1][j], c[1][nt][e], c[1][nt][2 + e], b);
        }
      }
      activate(z);
#pragma unroll
      for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNt; ++nt)
#pragma unroll
          for (int i = 0; i < 4; ++i) c[mt][nt][i] = z[mt][nt][i];
    }
    double o[2][4] = {{0, 0, 0, 0}, {0, 0, 0, 0}};
#pragma unroll
    for (int ks = 0; ks < kKs; ++ks) {
      const int nt = ks / 2, e = ks % 2;
      const double b = g == 0 ? wo[8 * nt + 2 * t + e] : 0.0;
      mma_f64(o[0], c[0][nt][e], c[0][nt][2 + e], b);
      mma_f64(o[1], c[1][nt][e], c[1][nt][2 + e], b);
    }
    if (t == 0 && live) {  // output column 0: C elements 0 (row g) and 2 (row g + 8)
      u[p] = o[0][0] + bo;
      grad[2 * p] = o[0][2];
      grad[2 * p + 1] = o[1][0];
      lap[p] = o[1][2];
    }
  }
}

// The padded shared-memory image of θ (flat layout of kernels/mlp_backend.hpp).
std::vector<double> shared_image(const std::vector<double>& theta, int hidden, int width) {
  std::vector<double> img(proto_shared_doubles(hidden), 0.0);
  std::size_t off = 0;
  for (int r = 0; r < width; ++r)
    for (int c = 0; c < 2; ++c) img[r * 2 + c] = theta[off + r * 2 + c];
  off += width * 2;
  for (int r = 0; r < width; ++r) img[2 * kHp + r] = theta[off + r];
  off += width;
  double* wh = img.data() + 3 * kHp;
  for (int l = 0; l + 1 < hidden; ++l) {
    double* w = wh + l * (kHp * kHp + kHp);
    for (int r = 0; r < width; ++r)
      for (int c = 0; c < width; ++c) w[r * kHp + c] = theta[off + r * width + c];
    off += std::size_t(width) * width;
    for (int r = 0; r < width; ++r) w[kHp * kHp + r] = theta[off + r];
    off += width;
  }
  double* wo = wh + (hidden - 1) * (kHp * kHp + kHp);
  for (int c = 0; c < width; ++c) wo[c] = theta[off + c];
  off += width;
  wo[kHp] = theta[off];
  if (off + 1 != theta.size()) throw std::logic_error("parameter layout mismatch");
  return img;
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median over 21 launches (after 3 warm-up ones) of launch(), in microseconds, CUDA events.
template <class F>
double time_us(F launch) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  std::vector<double> ms;
  for (int i = 0; i < 21; ++i) {
    CUDA_CHECK(cudaEventRecord(a));
    launch();
    CUDA_CHECK(cudaEventRecord(b));
    CUDA_CHECK(cudaEventSynchronize(b));
    float m = 0;
    CUDA_CHECK(cudaEventElapsedTime(&m, a, b));
    ms.push_back(m);
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  return 1e3 * median(ms);
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* d = nullptr;
  CUDA_CHECK(cudaMalloc(&d, std::max<std::size_t>(1, v.size()) * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> host_copy(const T* d, std::size_t n) {
  std::vector<T> v(n);
  CUDA_CHECK(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

void run(int n) {
  MlpShape shape;  // 2-50-50-50-50-1 tanh on the unit square
  shape.input_min = {0.0, 0.0};
  shape.input_max = {1.0, 1.0};
  const MlpOptions opt = mlp_backend_options(shape, 100.0);
  Rng init(7);
  const std::vector<double> theta = initial_mlp_parameters(shape, init);
  Rng rng(3);
  std::vector<double> pts(2 * std::size_t(n));
  for (double& v : pts) v = uniform01(rng);

  auto cpu = make_cpu_mlp_backend<double>(opt);
  cpu->set_parameters(theta);
  std::vector<double> u_ref, lap_ref, grad_ref;
  cpu->evaluate(pts, u_ref, lap_ref);
  cpu->evaluate_gradient(pts, grad_ref);

  const int hidden = int(shape.hidden.size()), width = shape.hidden[0];
  ProtoNet net;
  net.hidden = hidden;
  net.width = width;
  const gpu::MlpNetView<double> view = gpu::make_mlp_net_view<double>(opt);
  for (int j = 0; j < 2; ++j) {
    net.scale[j] = view.scale[j];
    net.shift[j] = view.shift[j];
  }
  const std::vector<double> img = shared_image(theta, hidden, width);
  double* d_img = device_copy(img);
  double* d_theta = device_copy(theta);
  double* d_x = device_copy(pts);
  double *d_u = nullptr, *d_grad = nullptr, *d_lap = nullptr;
  CUDA_CHECK(cudaMalloc(&d_u, n * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&d_grad, 2 * n * sizeof(double)));
  CUDA_CHECK(cudaMalloc(&d_lap, n * sizeof(double)));

  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const std::size_t bytes = proto_shared_doubles(hidden) * sizeof(double);
  CUDA_CHECK(cudaFuncSetAttribute(proto_forward, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  int(bytes)));
  const int chunks = (n + 7) / 8, per_block = kThreads / 32;
  const int grid = std::min(sms, (chunks + per_block - 1) / per_block);
  auto proto = [&] {
    proto_forward<<<grid, kThreads, bytes>>>(net, d_img, d_x, n, d_u, d_grad, d_lap);
    CUDA_CHECK_LAUNCH("proto_forward");
  };
  const double t_proto = time_us(proto);
  const double e_u = rel_diff(host_copy(d_u, n), u_ref);
  const double e_g = rel_diff(host_copy(d_grad, 2 * std::size_t(n)), grad_ref);
  const double e_l = rel_diff(host_copy(d_lap, n), lap_ref);

  // The pass kernel in evaluation mode (what evaluate() launches), same buffers.
  const gpu::MlpTiling tiling = gpu::plan_mlp_tiling(view, n, 0, false);
  gpu::MlpPassArgs<double> a;
  a.theta = d_theta;
  a.x_int = d_x;
  a.n_int = n;
  a.out_u = d_u;
  a.out_grad = d_grad;
  a.out_lap = d_lap;
  const double t_pass = time_us([&] { gpu::launch_mlp_pass<double>(nullptr, view, tiling, a); });
  const double p_u = rel_diff(host_copy(d_u, n), u_ref);
  const double p_l = rel_diff(host_copy(d_lap, n), lap_ref);

  std::printf("| %d | %.1f | %.1f | %.1f× | %.1e / %.1e / %.1e | %.1e / %.1e | %d × %d, tile %d |\n",
              n, t_proto, t_pass, t_pass / t_proto, e_u, e_g, e_l, p_u, p_l, grid, kThreads,
              tiling.points);
  for (double* d : {d_img, d_theta, d_x, d_u, d_grad, d_lap}) CUDA_CHECK(cudaFree(d));
}

}  // namespace

int main() {
  if (!cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);
  std::printf(
      "| points | registers-only forward, µs | pass kernel (evaluation), µs | speed-up | "
      "rel. error u / ∇u / Δu vs CPU | pass kernel u / Δu vs CPU | proto grid, pass tile |\n"
      "|---|---|---|---|---|---|---|\n");
  for (int n : {1200, 16384, 65536}) run(n);
  return 0;
}
#endif
