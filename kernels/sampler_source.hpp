// The CUDA source of one problem's collocation-batch sampler, generated on the host (no CUDA
// needed: the CPU build compiles and tests it too); kernels/cuda/common/device_sampler.hpp
// compiles it with NVRTC and launches it. The kernel draws the domain's points with the formulas
// of problems/domain_shapes.hpp (which NVRTC includes), evaluates f, the boundary values and
// `where` (translated by expression_to_c) and, for a general operator, its coefficients a, b, c,
// α, β (OperatorText), and writes points, targets and normals straight into the backend's batch
// buffers, so that no batch crosses the bus.
//
// Random numbers: cuRAND's Philox4x32-10, curand_init(seed, subsequence, offset) with
// subsequence = point index (interior i → i, boundary j → 2³² + j) and offset = S · batch index,
// S the stride of the domain: 16 for a primitive or a point cloud (a point uses at most 8 of its
// 16 32-bit draws per batch), 2²⁴ for a composite drawn by rejection (at most 2²⁰ proposals of at
// most 12 draws each). The batch index is read from device memory, so that a captured CUDA graph
// replays with the index the host (or a kernel) wrote there. Same (seed, index) → same batch, bit
// for bit.
#pragma once

#include <string>
#include <vector>

#include "problems/problem.hpp"

namespace rbfpde::gpu {

// Threads a block of the generated kernel (its __launch_bounds__, and the launch's block size).
constexpr int kSamplerThreads = 256;

// What the sampler evaluates at the points it draws, as expression text (the config's syntax,
// translated by expression_to_c): the interior row a·Δₛu + b·∇u + c·u = f and, per boundary entry
// in order, α·u + β·∂u/∂n = value where `where` holds. An empty text means the default: a = 1,
// b = 0 (b empty: all zero), c = 0, α = 1, β = 0, where = everywhere.
struct OperatorText {
  int space_dim = 0;  // coordinates of Δₛ; 0: all of them
  std::string f;
  std::string a, c;
  std::vector<std::string> b;  // empty, or one per coordinate
  struct Boundary {
    std::string value, where;
    std::string alpha, beta;
  };
  std::vector<Boundary> boundary;
  // No coefficient given and Δ over every coordinate: the sampler writes points and targets only.
  bool poisson_dirichlet(int dim) const;
};

// The operator text of `problem`: f, the boundary entries and, unless the problem is
// Poisson/Dirichlet, the coefficient expressions. Throws std::runtime_error for a problem with
// time (the host samples those).
OperatorText operator_text(const Problem& problem);

// The generated CUDA source (exposed for tests and for error messages).
std::string sampler_source(const Problem& problem, bool double_precision);
// The same for an explicit operator; its coefficient arrays are written unless
// op.poisson_dirichlet(problem.dim()).
std::string sampler_source(const Problem& problem, const OperatorText& op, bool double_precision);

}  // namespace rbfpde::gpu
