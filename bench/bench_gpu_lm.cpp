// Levenberg–Marquardt on the seed problem (configs/poisson2d_seed_lm.yaml: 64 neurons, 176 + 48
// points, a fresh batch every iteration, 300 iterations), the trainer's loop written out against
// the backend: CUDA with device-drawn batches, CUDA with host-sampled batches, and the CPU
// reference (host batches). Prints per backend the wall time per iteration and of the whole
// loop, the final loss and the relative L2 error against the exact solution on a 101 × 101 grid —
// so that a difference in accuracy between the batch sources shows, apart from speed.
// Then the accuracy over training seeds 1..5 (device vs host batches): how much of a difference
// between batch sources is the luck of one random sequence.
// Usage: bench_gpu_lm [config.yaml] [seeds]   (run from the repository root)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"

namespace {

using namespace rbfpde;
using Clock = std::chrono::steady_clock;

struct Result {
  double seconds = 0, loss = 0, rel_l2 = 0;
  long tries = 0;
};

Result run(const Config& config, const Problem& problem, RbfBackend<double>& be, bool device) {
  const TrainingConfig& tc = config.training;
  Rng rng(tc.seed);
  Rng init_rng(tc.seed);
  const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, init_rng);
  be.set_parameters(init.params);
  CollocationBatch batch;
  std::uint64_t index = 0;
  auto draw = [&] {
    if (device) {
      be.draw_batch(tc.seed, index++, tc.points_interior, tc.points_boundary);
    } else {
      problem.sample(rng, tc.points_interior, tc.points_boundary, batch);
      be.set_batch(batch);
    }
  };
  Result r;
  const auto t0 = Clock::now();
  draw();
  be.solve_weights_direct(0.0);
  double mu = tc.lm_damping;
  LossParts loss = be.residuals();
  for (long cycle = 0; cycle < tc.max_cycles; ++cycle) {
    if (cycle > 0 && cycle % tc.resample_every == 0) draw();
    const LossParts before = be.lm_prepare();
    LossParts after = before;
    bool accepted = false;
    for (int attempt = 0; attempt < 12; ++attempt) {
      ++r.tries;
      after = be.lm_try(mu);
      if (std::isfinite(after.loss) && after.loss < before.loss) {
        accepted = true;
        mu = std::max(mu * 0.1, 1e-15);
        break;
      }
      be.lm_reject();
      mu = std::min(mu * 10.0, 1e12);
    }
    loss = accepted ? after : before;
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.loss = loss.loss;
  std::vector<double> pts, u, lap;
  for (int i = 0; i <= 100; ++i)
    for (int j = 0; j <= 100; ++j) pts.push_back(i / 100.0), pts.push_back(j / 100.0);
  be.evaluate(pts, u, lap);
  double num = 0, den = 0;
  for (std::size_t k = 0; k < u.size(); ++k) {
    const double exact = problem.exact()(&pts[2 * k]);
    num += (u[k] - exact) * (u[k] - exact);
    den += exact * exact;
  }
  r.rel_l2 = std::sqrt(num / den);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "configs/poisson2d_seed_lm.yaml";
  const Config config = load_config(path);
  const Problem problem = Problem::build(config.problem);
  BackendOptions options;
  options.dim = problem.dim();
  options.penalty = config.training.penalty;
  options.min_width = minimum_width(problem.domain(), config.training);
  std::printf("## LM on %s: %ld iterations, %d + %d points, fresh batch every %d\n\n", path.c_str(),
              config.training.max_cycles, config.training.points_interior,
              config.training.points_boundary, config.training.resample_every);
  std::printf("| backend | batches | loop s | ms / iteration | lm_try calls | final loss | rel. L2 error |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  auto row = [&](const char* name, const char* batches, const Result& r) {
    std::printf("| %s | %s | %.4f | %.3f | %ld | %.3e | %.3e |\n", name, batches, r.seconds,
                1e3 * r.seconds / double(config.training.max_cycles), r.tries, r.loss, r.rel_l2);
    std::fflush(stdout);
  };
  if (cuda_device_available()) {
    {
      auto be = make_cuda_backend<double>(options);
      be->set_problem(problem);
      run(config, problem, *be, true);  // warm-up: graphs, cuBLAS/cuSOLVER handles, caches
      row("cuda", "device", run(config, problem, *be, true));
    }
    {
      auto be = make_cuda_backend<double>(options);
      run(config, problem, *be, false);
      row("cuda", "host", run(config, problem, *be, false));
    }
  }
  auto cpu = make_cpu_backend<double>(options);
  row("cpu", "host", run(config, problem, *cpu, false));
  const int seeds = argc > 2 ? std::atoi(argv[2]) : 5;
  if (cuda_device_available() && seeds > 0) {
    std::printf("\n| seed | rel. L2, cuda device batches | rel. L2, cuda host batches |\n|---|---|---|\n");
    auto be = make_cuda_backend<double>(options);
    be->set_problem(problem);
    auto host = make_cuda_backend<double>(options);
    for (int seed = 1; seed <= seeds; ++seed) {
      Config c = config;
      c.training.seed = seed;
      const Result d = run(c, problem, *be, true), h = run(c, problem, *host, false);
      std::printf("| %d | %.3e | %.3e |\n", seed, d.rel_l2, h.rel_l2);
      std::fflush(stdout);
    }
  }
  return 0;
}
