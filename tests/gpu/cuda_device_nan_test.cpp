// An expression that is NaN on a set of measure zero (here the line x = x₀ through one point the
// device draws) is bad input on the CUDA backends too: the run throws InputError naming the key,
// the expression and the point, which the CLI turns into exit code 2, instead of calling the
// loss that is not finite divergence (exit 3). The validation points and the evaluation grid, the
// host's share of the check, miss such a line; only the device-drawn batch meets it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/mlp_backend.hpp"
#include "solver/config/config.hpp"
#include "solver/train/mlp_model.hpp"
#include "solver/train/solve.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

constexpr int kInteriorPoints = 400;
constexpr int kBoundaryPoints = 120;

// The seed problem with `f` and the boundary value given; `model` is "rbf" or "mlp".
std::string yaml(const std::string& f, const std::string& value, const std::string& model,
                 const std::string& method) {
  return "name: device_nan\n"
         "problem:\n"
         "  domain: { type: rectangle, min: [0, 0], max: [1, 1] }\n"
         "  equation: { type: poisson, f: \"" + f + "\" }\n"
         "  boundary:\n"
         "    - { type: dirichlet, value: \"" + value + "\" }\n"
         "model: { type: " + model + ", neurons: 64, layers: [16, 16] }\n"
         "training:\n"
         "  method: " + method + "\n"
         "  points: { interior: " + std::to_string(kInteriorPoints) + ", boundary: " +
         std::to_string(kBoundaryPoints) + ", resample_every: 1000 }\n"
         "  max_cycles: 5\n"
         "  seed: 3\n";
}

Config config_of(const std::string& text, const std::string& dir) {
  return load_config_text(text, "device_nan.yaml",
                          {"output.directory=" + dir, "compute.backend=cuda", "output.pictures=false"});
}

// The first batch a run of `config` trains on, drawn by the backend the run will make.
CollocationBatch first_batch(const Config& config) {
  const Problem problem = Problem::build(config.problem);
  if (config.model.type == "mlp") {
    const MlpShape shape = mlp_shape(config.model, problem.domain());
    auto be = make_cuda_mlp_backend<double>(mlp_backend_options(shape, config.training.penalty));
    be->set_problem(problem);
    be->draw_batch(config.training.seed, 0, kInteriorPoints, kBoundaryPoints);
    return be->batch();
  }
  BackendOptions opt;
  opt.dim = 2;
  auto be = make_cuda_backend<double>(opt);
  be->set_problem(problem);
  be->draw_batch(config.training.seed, 0, kInteriorPoints, kBoundaryPoints);
  return be->batch();
}

// x written so that parsing it gives x back.
std::string literal(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// Runs `config` and returns the InputError it throws (a failure when it throws none).
InputError run_error(const Config& config) {
  std::filesystem::remove_all(config.output.directory);
  const Problem problem = Problem::build(config.problem);
  SolveOptions options;
  options.quiet = true;
  try {
    const SolveResult r = solve(config, problem, options);
    ADD_FAILURE() << "expected InputError, the run ended with exit code " << r.exit_code << " ("
                  << r.outcome.divergence << ")";
  } catch (const InputError& e) {
    return e;
  }
  return InputError("none");
}

void expect_nan_at_boundary_point(const std::string& model, const std::string& method) {
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/device_nan_" + model + "_" + method;
  // A boundary point on the edge y = 0 of the batch the run draws.
  const CollocationBatch batch = first_batch(config_of(yaml("1", "0", model, method), dir));
  double x0 = -1;
  for (std::size_t j = 0; j < batch.n_boundary(); ++j)
    if (batch.boundary[2 * j + 1] == 0.0 && batch.boundary[2 * j] > 0.0) {
      x0 = batch.boundary[2 * j];
      break;
    }
  ASSERT_GT(x0, 0.0) << "no boundary point on y = 0";
  const std::string value = "x == " + literal(x0) + " ? sqrt(-1) : 0";
  const InputError e = run_error(config_of(yaml("1", value, model, method), dir));
  std::printf("%s/%s: %s\n", model.c_str(), method.c_str(), e.what());
  EXPECT_EQ(e.key(), "problem.boundary[0].value");
  EXPECT_NE(e.message().find("= nan at (" + literal(x0).substr(0, 6)), std::string::npos)
      << e.message();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "summary.json"));
}

TEST(CudaDeviceNan, BoundaryValueNanAtADrawnPointIsBadInputVarpro) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  expect_nan_at_boundary_point("rbf", "varpro");
}

TEST(CudaDeviceNan, BoundaryValueNanAtADrawnPointIsBadInputGdcg) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  expect_nan_at_boundary_point("rbf", "gdcg");
}

TEST(CudaDeviceNan, BoundaryValueNanAtADrawnPointIsBadInputMlp) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  expect_nan_at_boundary_point("mlp", "adam");
}

TEST(CudaDeviceNan, SourceNanAtADrawnInteriorPointIsBadInput) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const std::string dir = std::string(RBFPDE_TEST_TMP) + "/device_nan_f";
  const CollocationBatch batch = first_batch(config_of(yaml("1", "0", "rbf", "varpro"), dir));
  ASSERT_GT(batch.n_interior(), 0u);
  const double x0 = batch.interior[0];
  const std::string f = "x == " + literal(x0) + " ? sqrt(-1) : 1";
  const InputError e = run_error(config_of(yaml(f, "0", "rbf", "varpro"), dir));
  std::printf("rbf/varpro, f: %s\n", e.what());
  EXPECT_EQ(e.key(), "problem.equation.f");
  EXPECT_NE(e.message().find("= nan at ("), std::string::npos) << e.message();
}

}  // namespace
}  // namespace rbfpde
