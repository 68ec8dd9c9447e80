// The device sampler with a general operator (OperatorText): the generated source (host only, no
// device needed) translates every coefficient and writes the coefficient arrays, and a Poisson
// operator's source writes none; on a device, a drawn batch carries a, b, c at interior points
// and the α, β, value of the first boundary entry whose `where` holds, equal to muParser's values
// at the stored points to 1e-12 relative; and training steps on the drawn batch match the same
// batch set from the host.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/common/device_sampler.hpp"
#include "kernels/cuda/rbf/launchers.hpp"
#include "problems/expression.hpp"
#include "problems/expression_codegen.hpp"
#include "solver/config/config.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

const char* kSquareYaml = R"yaml(
name: general_square
problem:
  domain: { type: rectangle, min: [-1, 0], max: [2, 1.5] }
  equation: { type: poisson, f: "sin(x) * y" }
  boundary:
    - { type: dirichlet, value: "x + y", where: "y > 1.4" }
    - { type: dirichlet, value: "x*y" }
)yaml";

// A Robin condition on the top edge, Neumann elsewhere, a·Δu + b·∇u + c·u = f inside.
gpu::OperatorText general_operator() {
  gpu::OperatorText op;
  op.f = "cos(x) + y^2";
  op.a = "1 + 0.5*x*y";
  op.b = {"y", "-x + 1"};
  op.c = "-2 - x^2";
  op.boundary.push_back({"x - y", "y > 1.4", "1 + x^2", "0.5"});
  op.boundary.push_back({"exp(x)*y", "", "0", "1"});
  return op;
}

Problem square_problem() {
  return Problem::build(load_config_text(kSquareYaml, "general_square.yaml").problem);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CudaGeneralSampler, OperatorTextSaysWhetherItIsPoisson) {
  gpu::OperatorText op;
  op.f = "1";
  op.boundary.push_back({"0", "", "", ""});
  EXPECT_TRUE(op.poisson_dirichlet(2));
  op.space_dim = 2;
  EXPECT_TRUE(op.poisson_dirichlet(2));
  EXPECT_FALSE(op.poisson_dirichlet(3));  // Δ over two of three coordinates
  op.space_dim = 0;
  op.boundary[0].beta = "1";
  EXPECT_FALSE(op.poisson_dirichlet(2));
  op.boundary[0].beta.clear();
  op.c = "0";  // given, even if zero: the sampler writes the arrays
  EXPECT_FALSE(op.poisson_dirichlet(2));
  EXPECT_FALSE(general_operator().poisson_dirichlet(2));
}

TEST(CudaGeneralSampler, ProblemOperatorTextIsItsFAndDirichletEntries) {
  const Problem problem = square_problem();
  const gpu::OperatorText op = gpu::operator_text(problem);
  EXPECT_EQ(op.f, "sin(x) * y");
  ASSERT_EQ(op.boundary.size(), 2u);
  EXPECT_EQ(op.boundary[0].value, "x + y");
  EXPECT_EQ(op.boundary[0].where, "y > 1.4");
  EXPECT_EQ(op.boundary[1].where, "");
  EXPECT_TRUE(op.poisson_dirichlet(2));
  EXPECT_EQ(gpu::sampler_source(problem, true), gpu::sampler_source(problem, op, true));
}

TEST(CudaGeneralSampler, SourceWritesEveryCoefficient) {
  const Problem problem = square_problem();
  const gpu::OperatorText op = general_operator();
  const std::string src = gpu::sampler_source(problem, op, true);
  for (const std::string& text : {op.f, op.a, op.b[0], op.b[1], op.c, op.boundary[0].alpha,
                                  op.boundary[0].value, op.boundary[0].where, op.boundary[1].value})
    EXPECT_TRUE(contains(src, expression_to_c(text, 2))) << text;
  for (const char* store : {"a[i] = T(coef_a(", "b[(long long)i * 2 + 0] = T(coef_b_0(",
                            "b[(long long)i * 2 + 1] = T(coef_b_1(", "c[i] = T(coef_c(",
                            "alpha[i - n_int] = T(al)", "beta[i - n_int] = T(be)"})
    EXPECT_TRUE(contains(src, store)) << store;
  // The Neumann entry's α = 0 and β = 1 are literals; the first entry's β = 0.5 is translated.
  EXPECT_TRUE(contains(src, "bc_alpha_1(double x, double y, double z) { return (0.0); }") ||
              contains(src, "bc_alpha_1(double x, double y, double z) { return " +
                                expression_to_c("0", 2) + "; }"));
  EXPECT_TRUE(contains(src, "bc_beta_0"));
  // The Poisson source writes no coefficient.
  const std::string poisson = gpu::sampler_source(problem, true);
  EXPECT_FALSE(contains(poisson, "coef_a"));
  EXPECT_FALSE(contains(poisson, "alpha[i - n_int]"));
  // A b of the wrong length is refused.
  gpu::OperatorText bad = op;
  bad.b.push_back("z");
  EXPECT_THROW(gpu::sampler_source(problem, bad, true), std::runtime_error);
}

bool close(double a, double b, double rel) {
  return std::abs(a - b) <= rel * std::max(1.0, std::abs(b));
}

TEST(CudaGeneralSampler, DrawnBatchCarriesTheCoefficients) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = square_problem();
  const gpu::OperatorText op = general_operator();
  BackendOptions options;
  options.dim = 2;
  auto be = make_cuda_backend<double>(options);
  gpu::set_problem_operator(*be, problem, op);
  ASSERT_TRUE(be->draws_batches());
  const std::size_t n_int = 1037, n_bnd = 389;
  be->draw_batch(5, 2, n_int, n_bnd);
  const CollocationBatch b = be->batch();
  ASSERT_EQ(b.a.size(), n_int);
  ASSERT_EQ(b.b.size(), 2 * n_int);
  ASSERT_EQ(b.c.size(), n_int);
  ASSERT_EQ(b.alpha.size(), n_bnd);
  ASSERT_EQ(b.beta.size(), n_bnd);
  EXPECT_FALSE(b.poisson_dirichlet());
  const Expression f(op.f, 2), a(op.a, 2), b0(op.b[0], 2), b1(op.b[1], 2), c(op.c, 2);
  int bad = 0;
  for (std::size_t i = 0; i < n_int; ++i) {
    const double* x = &b.interior[2 * i];
    bad += !close(b.f[i], f(x), 1e-12) + !close(b.a[i], a(x), 1e-12) +
           !close(b.b[2 * i], b0(x), 1e-12) + !close(b.b[2 * i + 1], b1(x), 1e-12) +
           !close(b.c[i], c(x), 1e-12);
  }
  EXPECT_EQ(bad, 0) << "interior coefficients differ from muParser";
  const Expression where(op.boundary[0].where, 2), v0(op.boundary[0].value, 2),
      al0(op.boundary[0].alpha, 2), v1(op.boundary[1].value, 2);
  int robin = 0, neumann = 0;
  bad = 0;
  for (std::size_t j = 0; j < n_bnd; ++j) {
    const double* x = &b.boundary[2 * j];
    if (where(x) != 0) {
      ++robin;
      bad += !close(b.p[j], v0(x), 1e-12) + !close(b.alpha[j], al0(x), 1e-12) + (b.beta[j] != 0.5);
    } else {
      ++neumann;
      bad += !close(b.p[j], v1(x), 1e-12) + (b.alpha[j] != 0.0) + (b.beta[j] != 1.0);
    }
  }
  EXPECT_EQ(bad, 0) << "boundary rows differ from muParser";
  EXPECT_GT(robin, 0);
  EXPECT_GT(neumann, 0);

  // Steps on the drawn batch equal those on the same batch set from the host.
  auto host = make_cuda_backend<double>(options);
  host->set_batch(b);
  const RbfParameters<double> params = random_parameters<double>(2, 41, 3);
  be->set_parameters(params);
  host->set_parameters(params);
  EXPECT_TRUE(bitwise_equal(be->residuals().loss, host->residuals().loss));
  EXPECT_TRUE(bitwise_equal(be->gd_steps(2, 1e-3).loss, host->gd_steps(2, 1e-3).loss));
  EXPECT_EQ(flatten(be->parameters()), flatten(host->parameters()));
}

// The fused cycle that draws (one graph: sampler with coefficients, GD, CG) against the same
// steps on the drawn batch set from the host.
TEST(CudaGeneralSampler, FusedDrawingCycleUsesTheDrawnCoefficients) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = square_problem();
  BackendOptions options;
  options.dim = 2;
  auto fused = make_cuda_backend<double>(options);
  auto steps = make_cuda_backend<double>(options);
  gpu::set_problem_operator(*fused, problem, general_operator());
  const RbfParameters<double> params = random_parameters<double>(2, 57, 9);
  fused->set_parameters(params);
  steps->set_parameters(params);
  RbfBackend<double>::GdcgCycle cycle;
  cycle.draw = true;
  cycle.seed = 11;
  cycle.batch_index = 4;
  cycle.n_interior = 301;
  cycle.n_boundary = 77;
  cycle.gd_steps = 1;
  cycle.learning_rate = 1e-3;
  cycle.cg_iterations = 4;
  cycle.cg_tolerance = 0.0;
  const LossParts l_fused = fused->gdcg_cycle(cycle);
  const CollocationBatch drawn = fused->batch();
  ASSERT_EQ(drawn.alpha.size(), 77u);
  steps->set_batch(drawn);
  const LossParts l_steps = steps->gd_steps(1, 1e-3);
  steps->solve_weights_cg(4, 0.0);
  EXPECT_LE(relative_difference(l_fused.loss, l_steps.loss), 1e-13);
  EXPECT_LE(relative_difference(flatten(fused->parameters()), flatten(steps->parameters())), 1e-13);
}

}  // namespace
}  // namespace rbfpde
