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

#include "bench/vp_loop.hpp"
#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/training_rules.hpp"

namespace {

using namespace rbfpde;

void run(const Config& config, const Problem& problem, const std::string& backend_name, int variant,
         int iterations) {
  const TrainingConfig& tc = config.training;
  bench::VarproStart setup = bench::varpro_start(config, problem);
  const RbfInit& init = setup.init;
  BackendOptions& options = setup.options;
  options.vp_preconditioned_trials = variant >= 1;
  options.vp_factor_from_trial = variant == 2;
  auto be = backend_name == "cuda" ? make_cuda_backend<double>(options)
                                   : make_cpu_backend<double>(options);
  be->set_batch(setup.batch);
  static const char* names[3] = {"QR trials", "preconditioned, QR prepare",
                                 "preconditioned, factor from trial"};
  const auto start = std::chrono::steady_clock::now();
  auto report = [&](int it, double loss, long tries) {
    if (it % 25 != 0 && it != iterations) return;
    const auto counts = be->vp_trial_counts();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "| seed %llu | %s | iteration %d | loss %.3e | %.2f tries/it | %ld preconditioned, "
        "%ld QR, %ld prepares from the trial | %.1f s |\n",
        static_cast<unsigned long long>(tc.seed), names[variant], it, loss, double(tries) / it,
        counts.preconditioned, counts.qr, counts.factored_from_trial, s);
    std::fflush(stdout);
  };
  bench::run_loop(*be, init.params, tc.lm_damping, iterations,
                  training_rules::damping_kind(tc.lm_update), true, report);
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
