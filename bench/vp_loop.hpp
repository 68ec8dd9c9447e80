// Variable projection's loop as the trainer runs it, on one fixed batch, for the benchmark
// programs (bench_gpu_varpro, bench_vp_loop).
#pragma once

#include <chrono>
#include <cmath>
#include <functional>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/training_rules.hpp"

namespace rbfpde::bench {

// Where the varpro benchmarks start on a config: its initial network and the first batch of its
// training seed (as the trainer draws them), and backend options for its dimension, penalty and
// width floor.
struct VarproStart {
  RbfInit init;
  CollocationBatch batch;
  BackendOptions options;
};

inline VarproStart varpro_start(const Config& config, const Problem& problem) {
  const TrainingConfig& tc = config.training;
  Rng rng(tc.seed), init_rng(tc.seed);
  VarproStart start;
  start.init = initial_rbf_parameters(problem.domain(), config.model, init_rng);
  problem.sample(rng, tc.points_interior, tc.points_boundary, start.batch);
  start.options.dim = problem.dim();
  start.options.penalty = tc.penalty;
  start.options.min_width = minimum_width(problem.domain(), tc);
  return start;
}

struct LoopRun {
  double ms_per_iteration = 0, tries_per_iteration = 0;
  double from_trial = 0;  // the share of vp_prepare calls that took the trial's factor
  LossParts loss;
  RbfParameters<double> params;
};

// `iterations` iterations from `init` (least-squares weights first), μ from `mu` by `update`
// (training_rules.hpp DampingRule), at most 12 trials an iteration; with `hint`, the look-ahead
// beside the trials likely to be accepted, as the trainer. `report`, where given, is called after
// each iteration with its number (from 1), the last accepted loss and the trials so far.
inline LoopRun run_loop(
    RbfBackend<double>& be, const RbfParameters<double>& init, double mu, int iterations,
    training_rules::DampingRule::Kind update, bool hint,
    const std::function<void(int, double, long)>& report = nullptr) {
  be.set_parameters(init);
  be.solve_weights_qr();
  long tries = 0;
  LoopRun run;
  const long from_trial = be.vp_trial_counts().factored_from_trial;
  const auto start = std::chrono::steady_clock::now();
  run.loss = be.residuals();
  training_rules::DampingHistory history;
  for (int it = 0; it < iterations; ++it) {
    const LossParts before = be.vp_prepare();
    training_rules::DampingRule damping(update, training_rules::min_damping<double>(), &history,
                                        it + 1);
    for (int attempt = 0; attempt < 12; ++attempt) {
      ++tries;
      be.vp_expect_accepted_trials(hint && damping.likely_accepted());
      const LossParts after = be.vp_try(mu);
      if (std::isfinite(after.loss) && after.loss < before.loss) {
        mu = damping.accepted(mu, before.loss - after.loss, be.lm_predicted_decrease());
        run.loss = after;
        break;
      }
      be.lm_reject();
      mu = damping.rejected(mu);
    }
    if (report) report(it + 1, run.loss.loss, tries);
  }
  run.ms_per_iteration =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
      iterations;
  run.tries_per_iteration = double(tries) / iterations;
  run.from_trial = double(be.vp_trial_counts().factored_from_trial - from_trial) / iterations;
  run.params = be.parameters();
  return run;
}

}  // namespace rbfpde::bench
