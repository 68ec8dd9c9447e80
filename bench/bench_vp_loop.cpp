// Variable projection's loop on one fixed batch, on the CPU or CUDA backend, in three variants:
// QR trials; preconditioned trials (BackendOptions::vp_preconditioned_trials) with every
// vp_prepare a QR; and preconditioned trials with the factor from the trial
// (BackendOptions::vp_factor_from_trial). Each runs `iterations` iterations of the damping rule
// from the config's initial network on the batch of its training seed, and prints the loss, the
// trial steps an iteration and how the trials solved their weights every 25 iterations, and the
// wall time. Where the loss ends and how many trials it takes show what a variant does to the
// last decades of the descent, without the trainer's validation, restarts or stopping.
// Usage: bench_vp_loop CONFIG [iterations=150] [cpu|cuda] [seeds=1] [update]
//   seeds: one or a range (1-3); update: the damping rule (training.lm.update; default the
//   config's), e.g. marquardt
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/training_rules.hpp"

namespace {

using namespace rbfpde;
using Rule = training_rules::DampingRule;

Rule::Kind rule_kind(const std::string& update) {
  if (update == "bracket") return Rule::kBracket;
  if (update == "nielsen") return Rule::kNielsen;
  if (update == "hybrid") return Rule::kHybrid;
  return Rule::kMarquardt;
}

void run(const Config& config, const Problem& problem, const std::string& backend_name, int variant,
         int iterations) {
  const TrainingConfig& tc = config.training;
  Rng rng(tc.seed), init_rng(tc.seed);
  const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, init_rng);
  CollocationBatch batch;
  problem.sample(rng, tc.points_interior, tc.points_boundary, batch);
  BackendOptions options;
  options.dim = problem.dim();
  options.penalty = tc.penalty;
  options.min_width = minimum_width(problem.domain(), tc);
  options.vp_preconditioned_trials = variant >= 1;
  options.vp_factor_from_trial = variant == 2;
  auto be = backend_name == "cuda" ? make_cuda_backend<double>(options)
                                   : make_cpu_backend<double>(options);
  be->set_batch(batch);
  be->set_parameters(init.params);
  be->solve_weights_qr();
  double mu = tc.lm_damping, loss = be->residuals().loss;
  long tries = 0;
  training_rules::DampingHistory history;
  const auto start = std::chrono::steady_clock::now();
  static const char* names[3] = {"QR trials", "preconditioned, QR prepare",
                                 "preconditioned, factor from trial"};
  for (int it = 0; it < iterations; ++it) {
    const LossParts before = be->vp_prepare();
    Rule damping(rule_kind(tc.lm_update), training_rules::min_damping<double>(), &history, it + 1);
    for (int attempt = 0; attempt < 12; ++attempt) {
      ++tries;
      be->vp_expect_accepted_trials(damping.likely_accepted());
      const LossParts after = be->vp_try(mu);
      if (std::isfinite(after.loss) && after.loss < before.loss) {
        mu = damping.accepted(mu, before.loss - after.loss, be->lm_predicted_decrease());
        loss = after.loss;
        break;
      }
      be->lm_reject();
      mu = damping.rejected(mu);
    }
    if ((it + 1) % 25 == 0 || it + 1 == iterations) {
      const auto counts = be->vp_trial_counts();
      const double s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf(
          "| seed %llu | %s | iteration %d | loss %.3e | %.2f tries/it | %ld preconditioned, "
          "%ld QR, %ld prepares from the trial | %.1f s |\n",
          static_cast<unsigned long long>(tc.seed), names[variant], it + 1, loss,
          double(tries) / (it + 1), counts.preconditioned, counts.qr, counts.factored_from_trial,
          s);
      std::fflush(stdout);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_vp_loop CONFIG [iterations] [cpu|cuda] [seeds] [update]\n");
    return 2;
  }
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 150;
  const std::string backend = argc > 3 ? argv[3] : "cpu";
  const std::string seeds = argc > 4 ? argv[4] : "1";
  if (backend == "cuda" && !cuda_device_available()) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const std::size_t dash = seeds.find('-');
  const unsigned long long first = std::stoull(seeds.substr(0, dash));
  const unsigned long long last =
      dash == std::string::npos ? first : std::stoull(seeds.substr(dash + 1));
  Config config = load_config(argv[1]);
  if (argc > 5) config.training.lm_update = argv[5];
  const Problem problem = Problem::build(config.problem);
  for (unsigned long long seed = first; seed <= last; ++seed) {
    config.training.seed = seed;
    for (int variant = 0; variant < 3; ++variant)
      run(config, problem, backend, variant, iterations);
  }
  return 0;
}
