// The CUDA MLP backend's batches drawn on the device (the RBF backend's NVRTC sampler, run as
// two launches, interior and boundary): the same points as the RBF backend draws for the same
// (seed, number), on every domain type of the shipped configs; draws inside one train_steps
// graph equal to draws between single steps, bit for bit (the same kernels run); a chunk that
// stops early keeps the batch of the step it stopped at. The trainer's resume with such draws is
// in mlp_cuda_checkpoint_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../mlp/mlp_test_util.hpp"
#include "kernels/backend.hpp"
#include "solver/config/config.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using gpu_test::bitwise_equal;

template <class T>
class CudaMlpDraws : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(CudaMlpDraws, Precisions);

Problem shipped_problem(const std::string& name) {
  return Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/" + name + ".yaml").problem);
}

template <class T>
std::unique_ptr<MlpBackend<T>> drawing_mlp(const Problem& problem, MlpShape shape) {
  shape.dim = problem.dim();
  auto be = make_cuda_mlp_backend<T>(mlp_options(shape, 7.0));
  be->set_problem(problem);
  return be;
}

void expect_same_batch(const CollocationBatch& a, const CollocationBatch& b) {
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.n_interior(), b.n_interior());
  EXPECT_EQ(a.n_boundary(), b.n_boundary());
  EXPECT_TRUE(bitwise_equal(a.interior, b.interior));
  EXPECT_TRUE(bitwise_equal(a.f, b.f));
  EXPECT_TRUE(bitwise_equal(a.boundary, b.boundary));
  EXPECT_TRUE(bitwise_equal(a.p, b.p));
  EXPECT_TRUE(bitwise_equal(a.normals, b.normals));
}

template <class T>
using StepArgs = typename MlpBackend<T>::AdamStepArgs;

// A drawing backend per entry of `backends`, each holding the parameters of random_mlp_parameters
// (shape, params_seed) rounded to T and batch 0 of `seed` drawn, n_int + n_bnd points.
template <class T>
std::vector<std::unique_ptr<MlpBackend<T>>> started(const Problem& problem, const MlpShape& shape,
                                                    int backends, unsigned long long params_seed,
                                                    std::uint64_t seed, std::size_t n_int,
                                                    std::size_t n_bnd) {
  const std::vector<double> t0 = random_mlp_parameters(shape, params_seed);
  const std::vector<T> theta(t0.begin(), t0.end());
  std::vector<std::unique_ptr<MlpBackend<T>>> out;
  for (int i = 0; i < backends; ++i) {
    out.push_back(drawing_mlp<T>(problem, shape));
    out.back()->set_parameters(theta);
    out.back()->draw_batch(seed, 0, n_int, n_bnd);
  }
  return out;
}

// `steps` one at a time, each draw done by draw_batch before its step (outside any graph).
template <class T>
void run_singly(MlpBackend<T>& be, const std::vector<StepArgs<T>>& steps,
                std::vector<LossParts>& losses) {
  for (StepArgs<T> s : steps) {
    if (s.draw) be.draw_batch(s.seed, s.batch_index, s.n_interior, s.n_boundary);
    s.draw = false;
    be.train_steps({s}, T(0.9), T(0.999), T(1e-8), 0.0, losses);
  }
}

TYPED_TEST(CudaMlpDraws, SameBatchAsTheRbfBackend) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (const char* name : {"poisson2d_seed", "lshape", "disk", "cube3d"}) {
    SCOPED_TRACE(name);
    const Problem problem = shipped_problem(name);
    MlpShape shape;
    shape.hidden = {16, 16};
    auto mlp = drawing_mlp<T>(problem, shape);
    ASSERT_TRUE(mlp->draws_batches());
    BackendOptions options;
    options.dim = problem.dim();
    auto rbf = make_cuda_backend<T>(options);
    rbf->set_problem(problem);
    // Not multiples of the sampler's 256-thread blocks.
    mlp->draw_batch(42, 5, 1037, 389);
    rbf->draw_batch(42, 5, 1037, 389);
    const CollocationBatch a = mlp->batch();
    expect_same_batch(a, rbf->batch());
    ASSERT_EQ(a.interior.size(), 1037u * std::size_t(problem.dim()));
    ASSERT_EQ(a.normals.size(), 389u * std::size_t(problem.dim()));
    mlp->draw_batch(42, 6, 1037, 389);
    EXPECT_FALSE(bitwise_equal(mlp->batch().interior, a.interior));
  }
}

// Steps 2, 3 and 6 of 7 draw batches 4, 5 and 8: once as one train_steps call (one graph), once
// as single steps with draw_batch between them.
TYPED_TEST(CudaMlpDraws, GraphDrawsMatchSingleSteps) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = shipped_problem("poisson2d_seed");
  MlpShape shape;
  shape.hidden = {37, 29};
  auto backends = started<T>(problem, shape, 2, 3, 9, 201, 53);
  MlpBackend<T>& graph = *backends[0];
  MlpBackend<T>& single = *backends[1];
  std::vector<StepArgs<T>> steps;
  for (long t = 1; t <= 7; ++t) {
    StepArgs<T> s{T(2e-3), t};
    if (t == 2 || t == 3 || t == 6) s.drawing(9, std::uint64_t(t + 2), 201, 53);
    steps.push_back(s);
  }
  std::vector<LossParts> l_graph, l_single;
  graph.train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_graph);
  run_singly(single, steps, l_single);
  ASSERT_EQ(l_graph.size(), steps.size());
  ASSERT_EQ(l_single.size(), steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    EXPECT_TRUE(bitwise_equal(l_graph[i].loss, l_single[i].loss)) << i;
  // The fresh batches changed the losses' course: step 2's loss is on batch 4, not batch 0.
  EXPECT_NE(l_graph[1].loss, l_graph[0].loss);
  EXPECT_TRUE(bitwise_equal(graph.parameters(), single.parameters()));
  expect_same_batch(graph.batch(), single.batch());
  auto fresh = drawing_mlp<T>(problem, shape);
  fresh->draw_batch(9, 8, 201, 53);
  expect_same_batch(graph.batch(), fresh->batch());
  // The graph is kept: the same call again runs it with the new batch numbers.
  for (auto& s : steps) s.batch_index += 10;
  l_graph.clear();
  graph.train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_graph);
  fresh->draw_batch(9, 18, 201, 53);
  expect_same_batch(graph.batch(), fresh->batch());
}

// More chunk shapes than the backend keeps graphs for (8): chunks of 1 to 12 steps, drawing at
// their second step, then the first shapes again (recaptured after their eviction); the same
// bits as single steps throughout.
TYPED_TEST(CudaMlpDraws, ManyChunkShapesStayExact) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = shipped_problem("poisson2d_seed");
  MlpShape shape;
  shape.hidden = {12, 12};
  auto backends = started<T>(problem, shape, 2, 6, 4, 100, 30);
  MlpBackend<T>& chunked = *backends[0];
  MlpBackend<T>& single = *backends[1];
  long t = 0;
  std::uint64_t index = 0;
  std::vector<LossParts> l_chunked, l_single;
  for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 1, 2, 3}) {
    std::vector<StepArgs<T>> steps;
    for (int i = 0; i < k; ++i) {
      StepArgs<T> s{T(1e-3), ++t};
      ++index;
      if (i == 1) s.drawing(4, index, 100, 30);
      steps.push_back(s);
    }
    chunked.train_steps(steps, T(0.9), T(0.999), T(1e-8), 0.0, l_chunked);
    run_singly(single, steps, l_single);
  }
  ASSERT_EQ(l_chunked.size(), std::size_t(t));
  ASSERT_EQ(l_single.size(), std::size_t(t));
  for (std::size_t i = 0; i < l_chunked.size(); ++i)
    EXPECT_TRUE(bitwise_equal(l_chunked[i].loss, l_single[i].loss)) << i;
  EXPECT_TRUE(bitwise_equal(chunked.parameters(), single.parameters()));
  expect_same_batch(chunked.batch(), single.batch());
}

// A chunk that stops at its first step (every loss is below stop_below) draws nothing after it:
// the batch is the one before the chunk, or the stopping step's own.
TYPED_TEST(CudaMlpDraws, AStoppedChunkKeepsTheBatchOfItsLastStep) {
  using T = TypeParam;
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = shipped_problem("poisson2d_seed");
  MlpShape shape;
  shape.hidden = {12, 12};
  auto backends = started<T>(problem, shape, 1, 5, 9, 150, 40);
  MlpBackend<T>& be = *backends[0];
  auto fresh = drawing_mlp<T>(problem, shape);
  const CollocationBatch b0 = be.batch();
  auto step = [](long t, bool draw, std::uint64_t index) {
    StepArgs<T> s{T(1e-3), t};
    if (draw) s.drawing(9, index, 150, 40);
    return s;
  };
  std::vector<LossParts> losses;
  be.train_steps({step(1, false, 0), step(2, true, 3), step(3, true, 4)}, T(0.9), T(0.999), T(1e-8),
                 1e300, losses);
  ASSERT_EQ(losses.size(), 1u);
  expect_same_batch(be.batch(), b0);
  losses.clear();
  be.train_steps({step(2, true, 3), step(3, true, 4)}, T(0.9), T(0.999), T(1e-8), 1e300, losses);
  ASSERT_EQ(losses.size(), 1u);
  fresh->draw_batch(9, 3, 150, 40);
  expect_same_batch(be.batch(), fresh->batch());
}

}  // namespace
}  // namespace rbfpde
