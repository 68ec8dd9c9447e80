// What the CUDA backend must do beyond matching the CPU: the same inputs give bit-identical
// results (no floating-point atomics, fixed reduction orders), an impossible allocation fails
// with a message that says how much was asked for, NaN widths are not hidden by the clamp, and
// misuse throws.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/common/device_buffer.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

// Everything a training run observes, from one fresh backend.
template <class T>
struct Trace {
  std::vector<double> scalars;
  std::vector<T> vectors;
  std::vector<double> evaluated;
};

template <class T>
void append(std::vector<T>& out, const std::vector<T>& v) {
  out.insert(out.end(), v.begin(), v.end());
}

template <class T>
Trace<T> run_sequence(int dim, int m) {
  BackendOptions options;
  options.dim = dim;
  auto be = make_cuda_backend<T>(options);
  be->set_batch(random_batch(dim, kInterior, kBoundary, 21));
  be->set_parameters(random_parameters<T>(dim, m, 22));
  Trace<T> t;
  auto record = [&](const LossParts& p) {
    t.scalars.push_back(p.loss);
    t.scalars.push_back(p.rms_interior);
    t.scalars.push_back(p.rms_boundary);
  };
  auto record_state = [&] {
    std::vector<T> e, b;
    be->residual_vectors(e, b);
    append(t.vectors, e);
    append(t.vectors, b);
    const RbfParameters<T> p = be->parameters();
    append(t.vectors, p.weights);
    append(t.vectors, p.centres);
    append(t.vectors, p.widths);
  };
  record(be->residuals());
  RbfParameters<T> g;
  record(be->gradient(g));
  append(t.vectors, g.weights);
  append(t.vectors, g.centres);
  append(t.vectors, g.widths);
  record(be->gd_steps(2, T(1e-3)));
  const CgResult cg = be->solve_weights_cg(20, T(1e-14));
  t.scalars.push_back(cg.iterations);
  t.scalars.push_back(cg.relative_residual);
  record_state();
  be->solve_weights_direct(T(1e-3));
  record_state();
  record(be->lm_prepare());
  record(be->lm_try(T(1e-2)));
  record_state();
  be->lm_reject();
  record(be->lm_try(T(1)));
  record_state();
  std::vector<double> points;
  for (int i = 0; i < 97 * dim; ++i) points.push_back(std::fmod(0.37 * i, 1.0));
  std::vector<double> u, lap;
  be->evaluate(points, u, lap);
  append(t.evaluated, u);
  append(t.evaluated, lap);
  return t;
}

template <class T>
void check_deterministic() {
  for (int dim : kDims)
    for (int m : {64, 129}) {  // the single-block CG and the cuBLAS CG
      SCOPED_TRACE(testing::Message() << "dim " << dim << ", m " << m);
      const Trace<T> a = run_sequence<T>(dim, m), b = run_sequence<T>(dim, m);
      EXPECT_TRUE(bitwise_equal(a.scalars, b.scalars));
      EXPECT_TRUE(bitwise_equal(a.vectors, b.vectors));
      EXPECT_TRUE(bitwise_equal(a.evaluated, b.evaluated));
      EXPECT_FALSE(a.vectors.empty());
    }
}
TEST(CudaBackendBehaviour, SameInputsGiveBitIdenticalResultsDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_deterministic<double>();
}
TEST(CudaBackendBehaviour, SameInputsGiveBitIdenticalResultsFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  check_deterministic<float>();
}

TEST(CudaBackendBehaviour, AbsurdAllocationThrowsWithRequestedBytes) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  gpu::DeviceBuffer<double> buffer;
  try {
    buffer.resize(125'000'000'000'000ull);  // 1e15 bytes
    FAIL() << "a 1e15-byte allocation succeeded";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1000000000000000 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("free"), std::string::npos) << what;
  }
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
  // The failure is not sticky: the device still works.
  gpu::DeviceBuffer<double> small(1000);
  EXPECT_NE(small.data(), nullptr);
  BackendOptions options;
  auto be = make_cuda_backend<double>(options);
  be->set_batch(random_batch(2, kInterior, kBoundary, 1));
  be->set_parameters(random_parameters<double>(2, 37, 2));
  EXPECT_TRUE(std::isfinite(be->residuals().loss));
}

TEST(CudaBackendBehaviour, DeviceBufferIsMoveOnly) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  static_assert(!std::is_copy_constructible_v<gpu::DeviceBuffer<float>>);
  static_assert(!std::is_copy_assignable_v<gpu::DeviceBuffer<float>>);
  gpu::DeviceBuffer<float> a(100);
  float* p = a.data();
  gpu::DeviceBuffer<float> b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 100u);
  EXPECT_EQ(a.data(), nullptr);
  gpu::DeviceBuffer<float> c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
}

TEST(CudaBackendBehaviour, NanWidthStaysNanThroughGradientStep) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  BackendOptions options;
  auto be = make_cuda_backend<double>(options);
  be->set_batch(random_batch(2, kInterior, kBoundary, 3));
  RbfParameters<double> p = random_parameters<double>(2, 37, 4);
  p.widths[5] = NAN;
  be->set_parameters(p);
  be->gd_steps(1, 1e-3);
  EXPECT_TRUE(std::isnan(be->parameters().widths[5]));
}

TEST(CudaBackendBehaviour, NamesAndMisuse) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  BackendOptions options;
  options.dim = 3;
  auto be = make_cuda_backend<double>(options);
  EXPECT_EQ(be->name(), "cuda");
  EXPECT_FALSE(be->device_name().empty());
  EXPECT_THROW(be->set_batch(random_batch(2, 10, 5, 1)), std::invalid_argument);
  EXPECT_THROW(be->set_parameters(random_parameters<double>(2, 5, 1)), std::invalid_argument);
  be->set_batch(random_batch(3, 10, 5, 1));
  be->set_parameters(random_parameters<double>(3, 5, 1));
  EXPECT_THROW(be->lm_try(1.0), std::logic_error);
  options.dim = 5;  // 2D, 3D and 3D + time (4) are built
  EXPECT_THROW(make_cuda_backend<double>(options), std::invalid_argument);
}

}  // namespace
}  // namespace rbfpde
