// The trainers on the seed problem (docs/mathematics.md), built without a config file, so that the
// training scheme is tested apart from config parsing. The error bounds on the shipped configs
// are in test_regression.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "solver/train/error_norms.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/rbf_trainer.hpp"
#include "tests/common/seed_problem.hpp"

namespace rbfpde {
namespace {

using test_inputs::seed_problem_spec;

// Relative L2 error of the trained network on a 101 × 101 grid.
template <class T>
double grid_error(RbfBackend<T>& backend, const Problem& problem) {
  std::vector<double> pts, exact;
  for (int j = 0; j <= 100; ++j)
    for (int i = 0; i <= 100; ++i) {
      const double x[2] = {i / 100.0, j / 100.0};
      pts.insert(pts.end(), x, x + 2);
      exact.push_back(problem.exact()(x));
    }
  std::vector<double> u, lap;
  backend.evaluate(pts, u, lap);
  return compute_errors(u, exact).rel_l2;
}

BackendOptions seed_backend_options(const Config& config, const Problem& problem) {
  BackendOptions opt;
  opt.dim = 2;
  opt.penalty = config.training.penalty;
  opt.min_width = minimum_width(problem.domain(), config.training);
  return opt;
}

template <class T>
double train_seed(const std::string& method, long cycles, TrainOutcome* outcome = nullptr) {
  Config config;
  config.name = "seed";
  config.problem = seed_problem_spec();
  config.training.method = method;
  config.training.max_cycles = cycles;
  config.training.tolerance = 0;
  if (method == "lm") config.training.resample_every = 10;
  const Problem problem = Problem::build(config.problem);
  Rng rng(config.training.seed);
  const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, rng);
  const BackendOptions opt = seed_backend_options(config, problem);
  auto backend = make_cpu_backend<T>(opt);
  RbfTrainer<T> trainer(config, problem, *backend);
  const auto t0 = std::chrono::steady_clock::now();
  const TrainOutcome out = trainer.train(
      init.params, [](long, double, const LossParts&, RbfBackend<T>&, bool) { return true; });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (outcome) *outcome = out;
  const double err = grid_error(*backend, problem);
  std::printf("seed problem, %s, %ld cycles: relative L2 error %.3e, loss %.3e, %.2f s\n",
              method.c_str(), out.cycles, err, out.loss.loss, secs);
  return err;
}

TEST(RbfTrainer, BothMethodsImproveOnTheInitialNetwork) {
  // The initial network (grid centres, least-squares weights) is what 0 cycles leaves.
  const double initial = train_seed<double>("lm", 0);
  EXPECT_LT(train_seed<double>("lm", 30), 0.2 * initial);
  EXPECT_LT(train_seed<double>("gdcg", 100), 0.8 * initial);
}

TEST(RbfTrainer, SameSeedSameNumbers) {
  EXPECT_EQ(train_seed<double>("lm", 20), train_seed<double>("lm", 20));
  EXPECT_EQ(train_seed<float>("gdcg", 20), train_seed<float>("gdcg", 20));
}

// Variable projection under model.init.width: auto reports, as cycle 0, the scale of the initial
// widths whose least-squares weights have the lowest loss, and trains from the initial widths.
TEST(RbfTrainer, WidthSearchReportsTheLowestLossScale) {
  Config config;
  config.name = "seed";
  config.problem = seed_problem_spec();
  config.model.neurons = 49;
  config.training.method = "varpro";
  config.training.points_interior = 600;
  config.training.points_boundary = 120;
  config.training.resample_every = 0;
  config.training.max_cycles = 0;
  const Problem problem = Problem::build(config.problem);
  Rng rng(config.training.seed);
  const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, rng);
  const BackendOptions opt = seed_backend_options(config, problem);
  auto backend = make_cpu_backend<double>(opt);
  RbfTrainer<double> trainer(config, problem, *backend);
  std::vector<long> cycles;
  double start_loss = NAN;
  const TrainOutcome out = trainer.train(
      init.params, [&](long cycle, double, const LossParts& loss, RbfBackend<double>&, bool final) {
        if (!final) cycles.push_back(cycle);
        if (cycle == 0 && !final) start_loss = loss.loss;
        return true;
      });
  ASSERT_EQ(cycles, std::vector<long>{0});
  ASSERT_GT(out.initial_width, 0);
  const double chosen = out.initial_width / config.model.init_width;

  // Every scale's loss on the same batch, from a second backend.
  auto other = make_cpu_backend<double>(opt);
  other->set_batch(trainer.batch());
  auto loss_at = [&](double scale) {
    RbfParameters<double> p = init.params;
    for (double& a : p.widths) a *= scale;
    other->set_parameters(p);
    other->solve_weights_qr();
    return other->residuals().loss;
  };
  EXPECT_NEAR(loss_at(chosen), start_loss, 1e-9 * start_loss);
  // Training starts from the initial widths (scale 1); with no cycle it ends there.
  EXPECT_NEAR(out.loss.loss, loss_at(1.0), 1e-9 * loss_at(1.0));
  std::printf("chosen scale %.4f (%.3g x the spacing): loss %.3e\n", chosen, out.initial_width,
              start_loss);
  for (double scale : kWidthScales) {
    const double loss = loss_at(scale);
    std::printf("scale %.4f: loss %.3e\n", scale, loss);
    EXPECT_LE(start_loss, loss * (1 + 1e-12)) << "scale " << scale;
  }
  // On the seed problem the wide Gaussians fit far better than the lattice's 1.5 spacings.
  EXPECT_LT(start_loss, 1e-3 * loss_at(1.0));

  // A width given as a number is kept: no search, no report before the first cycle.
  config.model.init_width_auto = false;
  auto fixed_backend = make_cpu_backend<double>(opt);
  RbfTrainer<double> fixed(config, problem, *fixed_backend);
  cycles.clear();
  const TrainOutcome kept = fixed.train(
      init.params, [&](long cycle, double, const LossParts&, RbfBackend<double>&, bool final) {
        if (!final) cycles.push_back(cycle);
        return true;
      });
  EXPECT_EQ(kept.initial_width, 0);
  EXPECT_TRUE(cycles.empty());
  EXPECT_NEAR(kept.loss.loss, loss_at(1.0), 1e-9 * loss_at(1.0));
}

// The width floor of every method lies above the soundness check's narrow-neuron threshold, so no
// width training can reach is unsound; varpro and lm keep one interior point spacing.
TEST(RbfModel, EveryMethodsWidthFloorPassesTheNarrowCheck) {
  Config config;
  config.problem = seed_problem_spec();
  config.training.points_interior = 400;
  const Problem problem = Problem::build(config.problem);
  const double h = point_spacing(problem.domain(), config.training.points_interior);
  EXPECT_NEAR(h, 0.05, 1e-12);
  for (const char* method : {"varpro", "lm", "gdcg"}) {
    config.training.method = method;
    const double floor = minimum_width(problem.domain(), config.training);
    EXPECT_GT(floor, kNarrowPerSpacing * h) << method;
    if (config.training.method != "gdcg") EXPECT_GE(floor, h) << method;
    // A neuron at the floor, centred in the domain with a large weight, is not narrow.
    RbfParameters<double> p;
    p.dim = 2;
    p.weights = {1e3};
    p.centres = {0.5, 0.5};
    p.widths = {floor};
    EXPECT_EQ(narrow_neurons(p, h, 1.0, {0, 0}, {1, 1}), "") << method;
  }
}

}  // namespace
}  // namespace rbfpde
