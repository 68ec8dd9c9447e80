// CPU baseline: one gdcg cycle (fresh points, one GD step, 50 CG iterations) and one LM
// iteration (Jacobian, normal equations, one damped solve, residuals at the trial point) on the
// seed problem, double, CPU backend. Prints a markdown table; median of several runs after a
// warm-up. Later GPU numbers are compared against this (bench/RESULTS.md).
// Then variable projection's calls at the default sizes of the given configs (default: the seed
// problem and the cube), each timed alone, and the trainer's loop (bench/vp_loop.hpp, QR trials
// as the CPU's defaults, Marquardt's update) on one fixed batch, ms an iteration.
// Usage: bench_cpu [runs=9] [config.yaml ...]   (run from the repository root)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/median_time.hpp"
#include "bench/vp_loop.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/rbf_trainer.hpp"
#include "solver/train/training_rules.hpp"
#include "tests/common/seed_problem.hpp"

using namespace rbfpde;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  int neurons, points;
};

// Variable projection's calls on the CPU backend at `path`'s default sizes, from its initial
// network on its first batch. set_parameters drops the cached features and factorisation, so
// "features + QR + weights" is what a trial's weight solve costs and "vp_prepare" (the
// factorisation kept) what the iteration adds to it.
void time_varpro(const std::string& path, int runs) {
  const Config config = load_config(path);
  const Problem problem = Problem::build(config.problem);
  const TrainingConfig& tc = config.training;
  const bench::VarproStart start = bench::varpro_start(config, problem);
  const RbfInit& init = start.init;
  auto be = make_cpu_backend<double>(start.options);
  be->set_batch(start.batch);
  be->set_parameters(init.params);
  be->solve_weights_qr();
  const int m = config.model.neurons, d = problem.dim();
  const int n = tc.points_interior + tc.points_boundary;
  const int warmup = 1, reps = std::max(3, runs);
  const double t_res = bench::median_ms(
      [&] {
        be->set_parameters(init.params);
        be->residuals();
      },
      warmup, reps);
  const double t_qr = bench::median_ms(
      [&] {
        be->set_parameters(init.params);
        be->solve_weights_qr();
      },
      warmup, reps);
  const double t_prep = bench::median_ms([&] { be->vp_prepare(); }, warmup, reps);
  // A rejected trial leaves vp_prepare's system in place: the next trial needs no new one.
  be->vp_prepare();
  const double t_trial = bench::median_ms(
      [&] {
        be->vp_try(1e-3);
        be->lm_reject();
      },
      warmup, reps);
  const int iterations = 30;
  const bench::LoopRun loop =
      bench::run_loop(*be, init.params, tc.lm_damping, iterations,
                      training_rules::DampingRule::kMarquardt, false);
  std::printf("| %s | %d | %d | %d | %.1f | %.1f | %.1f | %.1f | %.1f (%.2f tries) |\n",
              config.name.c_str(), d, m, n, t_res, t_qr, t_prep, t_trial,
              loop.ms_per_iteration, loop.tries_per_iteration);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 9;
  const Problem problem = Problem::build(test_inputs::seed_problem_spec());
  using Clock = std::chrono::steady_clock;
  std::printf("| operation | neurons | points (N+K) | median ms | runs |\n|---|---|---|---|---|\n");

  auto setup = [&](int m, int points, Rng& rng, CollocationBatch& batch) {
    ModelConfig model;
    model.neurons = m;
    const RbfInit init = initial_rbf_parameters(problem.domain(), model, rng);
    BackendOptions opt;
    opt.dim = 2;
    opt.penalty = 100;
    opt.min_width = minimum_width(problem.domain(), TrainingConfig{});
    auto be = make_cpu_backend<double>(opt);
    const int n_bnd = points * 48 / 224;
    problem.sample(rng, points - n_bnd, n_bnd, batch);
    be->set_parameters(convert_parameters<double>(init.params));
    be->set_batch(batch);
    be->solve_weights_cg(50, 0.0);
    return be;
  };

  for (const Case c : {Case{64, 224}, Case{1024, 18432}}) {
    Rng rng(1);
    CollocationBatch batch;
    auto be = setup(c.neurons, c.points, rng, batch);
    const int n_bnd = c.points * 48 / 224;
    std::vector<double> times;
    const int reps = c.neurons > 256 ? std::max(3, runs / 3) : runs * 20;
    for (int r = 0; r < reps + 1; ++r) {
      const auto t0 = Clock::now();
      problem.sample(rng, c.points - n_bnd, n_bnd, batch);
      be->set_batch(batch);
      be->gd_steps(1, 1e-3);
      be->solve_weights_cg(50, 0.0);  // tolerance 0: always 50 iterations
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (r > 0) times.push_back(ms);  // the first run is the warm-up
    }
    std::printf("| gdcg cycle | %d | %d | %.3f | %zu |\n", c.neurons, c.points, median(times), times.size());
  }
  for (const Case c : {Case{64, 224}, Case{256, 4608}}) {
    Rng rng(1);
    CollocationBatch batch;
    auto be = setup(c.neurons, c.points, rng, batch);
    std::vector<double> times;
    const int reps = c.neurons > 64 ? runs : runs * 10;
    for (int r = 0; r < reps + 1; ++r) {
      const auto t0 = Clock::now();
      const LossParts before = be->lm_prepare();
      const LossParts after = be->lm_try(1e-3);
      if (!(after.loss < before.loss)) be->lm_reject();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (r > 0) times.push_back(ms);
    }
    std::printf("| lm iteration | %d | %d | %.3f | %zu |\n", c.neurons, c.points, median(times), times.size());
  }
  std::vector<std::string> configs(argv + std::min(argc, 2), argv + argc);
  if (configs.empty()) configs = {"configs/poisson2d.yaml", "configs/cube3d.yaml"};
  std::printf(
      "\n| config | d | m | n | features + residuals ms | features + QR + weights ms | vp_prepare "
      "ms | vp_try + lm_reject ms | loop ms/it (30 it.) |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string& path : configs) time_varpro(path, runs);
  std::printf("\nbackend: cpu (%s), %u hardware threads\n", make_cpu_backend<double>({})->device_name().c_str(),
              std::thread::hardware_concurrency());
  return 0;
}
