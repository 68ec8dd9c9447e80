// The device sampler's generated source (kernels/sampler_source.hpp), built without CUDA: the
// composite's program over its primitives and its stride of the random stream, a primitive's shape
// compiled in as constants, the boundary entries in order; the GPU tests (tests/gpu) compile and
// run it.
#include "kernels/sampler_source.hpp"

#include <gtest/gtest.h>

#include <string>

#include "problems/problem.hpp"

namespace rbfpde {
namespace {

ExprSpec expr(const std::string& text, const std::string& key) {
  return ExprSpec{text, key, SourceLoc{"x.yaml", 1, 1}};
}

DomainSpec disk(double x, double y, double r) {
  DomainSpec d;
  d.type = "disk";
  d.centre = {x, y};
  d.radius = r;
  return d;
}

ProblemSpec spec_on(DomainSpec domain) {
  ProblemSpec s;
  s.dim = 2;
  s.domain = std::move(domain);
  s.f = expr("sin(x)*y", "problem.equation.f");
  BoundarySpec top;
  top.value = expr("x + y", "problem.boundary[0].value");
  top.where = expr("y > 0.9", "problem.boundary[0].where");
  BoundarySpec rest;
  rest.value = expr("0", "problem.boundary[1].value");
  rest.where = expr("1", "problem.boundary[1].where");
  s.boundary = {top, rest};
  return s;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SamplerSource, CompositeHasItsProgramLeavesAndStride) {
  DomainSpec square;
  square.type = "rectangle";
  square.min = {0, 0};
  square.max = {1, 1};
  DomainSpec holes;
  holes.type = "difference";
  holes.domains = {square, disk(0.3, 0.3, 0.1), disk(0.7, 0.7, 0.1)};
  const std::string source = gpu::sampler_source(Problem::build(spec_on(holes)), true);
  EXPECT_TRUE(has(source, "kProgram[] = {0, 1, -2, 2, -2}"));
  EXPECT_TRUE(has(source, "case 2: return shape_contains(leaf2(), p);"));
  EXPECT_TRUE(
      has(source, "__device__ BallShape leaf1() { return BallShape{2, {(0.29999999999999999)"));
  EXPECT_TRUE(has(source, "kDrawStride = 16777216ull"));
  EXPECT_TRUE(has(source, "#include \"problems/domain_shapes.hpp\""));
}

TEST(SamplerSource, PrimitiveHasItsShapeAndTheBoundaryEntriesInOrder) {
  const std::string source = gpu::sampler_source(Problem::build(spec_on(disk(0.5, -1, 2))), false);
  EXPECT_TRUE(has(source, "typedef float T;"));
  EXPECT_TRUE(has(
      source,
      "__device__ BallShape domain_shape() { return BallShape{2, {(0.5), (-1.0), (0.0)}, (2.0)"));
  EXPECT_TRUE(has(source, "kDrawStride = 16ull"));
  // The `where` entry first; the one that holds everywhere returns unconditionally after it.
  const std::size_t first =
      source.find("if (holds(bc_where_0(x, y, z))) return bc_value_0(x, y, z);");
  const std::size_t second = source.find("  return bc_value_1(x, y, z);");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
  EXPECT_FALSE(has(source, "coef_a"));  // Poisson/Dirichlet: no coefficient arrays
}

}  // namespace
}  // namespace rbfpde
