// Where the time of a variable-projection iteration goes on the CUDA backend, at the default sizes
// of shipped configs: the backend's calls (vp_prepare, vp_try, solve_weights_qr, residuals) and
// the cuSOLVER/cuBLAS calls they are made of, timed alone at the same sizes, then the trainer's
// loop (ms an iteration, trial steps an iteration, loss after 200 iterations) in nine variants,
// alternately, kLoopRounds rounds: QR trials without and with the look-ahead factorisation
// (BackendOptions::vp_lookahead); preconditioned trials (BackendOptions::vp_preconditioned_trials)
// without the factor from the trial (BackendOptions::vp_factor_from_trial; the defaults), every
// vp_prepare a QR and the look-ahead beside the trials likely to be accepted as the trainer runs
// them (vp_expect_accepted_trials, DampingRule::likely_accepted), with Marquardt's update of μ,
// Nielsen's and the hybrid (training_rules.hpp DampingRule); and with the factor from the trial
// under the same three rules and the bracketing update. The look-ahead moves no bit:
// the two QR loops are checked to end with the same parameters. Then the accept/reject decisions of
// the loop with the factor from the trial (Marquardt's update) against QR trials' on the same
// steps (check_decisions).
// Wall-clock times of calls that end in a
// synchronisation (the library calls are followed by one), median of kRuns after kWarmup.
// Usage: bench_gpu_varpro [config.yaml ...]   (run from the repository root; default: the
// seed problem, the peak and the cube)
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/median_time.hpp"
#include "bench/vp_loop.hpp"
#include "kernels/backend.hpp"
#include "kernels/cuda/common/blas.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_model.hpp"
#include "solver/train/training_rules.hpp"

namespace {

using namespace rbfpde;
using bench::LoopRun;
using bench::run_loop;
namespace blas = rbfpde::gpu::blas;
constexpr int kWarmup = 3, kRuns = 15;

double median_ms(const std::function<void()>& call) {
  return bench::median_ms(call, kWarmup, kRuns);
}

// The library calls of one iteration at rows = n + m (features over ridge rows), m neurons and
// pc = m·(d + 1) centre and width parameters, on random matrices.
void time_library(int n, int m, int pc) {
  const int rows = n + m;
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cublasHandle_t cublas;
  cusolverDnHandle_t solver;
  CUBLAS_CHECK(cublasCreate(&cublas));
  CUSOLVER_CHECK(cusolverDnCreate(&solver));
  CUBLAS_CHECK(cublasSetStream(cublas, stream));
  CUSOLVER_CHECK(cusolverDnSetStream(solver, stream));
  std::mt19937_64 rng(3);
  std::normal_distribution<double> g;
  auto random = [&](std::size_t count) {
    std::vector<double> h(count);
    for (double& v : h) v = g(rng);
    double* d = nullptr;
    CUDA_CHECK(cudaMalloc(&d, count * sizeof(double)));
    CUDA_CHECK(cudaMemcpy(d, h.data(), count * sizeof(double), cudaMemcpyHostToDevice));
    return d;
  };
  double* f0 = random(std::size_t(rows) * m);
  double* f = random(std::size_t(rows) * m);
  double* c = random(std::size_t(rows) * (pc + 1));
  double* spd = random(std::size_t(pc) * pc);
  double* a = random(std::size_t(pc) * pc);
  double* tau = random(m);
  int* info = nullptr;
  CUDA_CHECK(cudaMalloc(&info, sizeof(int)));
  int l1 = 0, l2 = 0, l3 = 0;
  CUSOLVER_CHECK(blas::geqrf_buffer_size(solver, rows, m, f, rows, &l1));
  CUSOLVER_CHECK(blas::ormqr_t_buffer_size(solver, rows, pc + 1, m, f, rows, tau, c, &l2));
  CUSOLVER_CHECK(blas::potrf_buffer_size(solver, pc, a, &l3));
  const int lwork = std::max({l1, l2, l3});
  double* work = random(std::size_t(lwork));
  const double one = 1, zero = 0;
  // An SPD matrix of order pc: CᵀC, C random with more rows than columns.
  CUBLAS_CHECK(blas::syrk_t(cublas, pc, rows, &one, c, rows, &zero, spd));
  auto sync = [&] { CUDA_CHECK(cudaStreamSynchronize(stream)); };
  auto copy = [&](double* dst, const double* src, std::size_t count) {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, count * sizeof(double), cudaMemcpyDeviceToDevice, stream));
  };
  const std::size_t fm = std::size_t(rows) * m;
  const double t_copy = median_ms([&] { copy(f, f0, fm); sync(); });
  const double t_geqrf = median_ms([&] {
    copy(f, f0, fm);
    CUSOLVER_CHECK(blas::geqrf(solver, rows, m, f, rows, tau, work, lwork, info));
    sync();
  });
  // The 64-bit API's geqrf (cusolverDnXgeqrf), which may pick another algorithm.
  cusolverDnParams_t params;
  CUSOLVER_CHECK(cusolverDnCreateParams(&params));
  std::size_t dev_bytes = 0, host_bytes = 0;
  CUSOLVER_CHECK(cusolverDnXgeqrf_bufferSize(solver, params, rows, m, CUDA_R_64F, f, rows,
                                             CUDA_R_64F, tau, CUDA_R_64F, &dev_bytes,
                                             &host_bytes));
  void* xwork = nullptr;
  CUDA_CHECK(cudaMalloc(&xwork, std::max<std::size_t>(dev_bytes, 8)));
  std::vector<char> host_work(std::max<std::size_t>(host_bytes, 8));
  const double t_xgeqrf = median_ms([&] {
    copy(f, f0, fm);
    CUSOLVER_CHECK(cusolverDnXgeqrf(solver, params, rows, m, CUDA_R_64F, f, rows, CUDA_R_64F, tau,
                                    CUDA_R_64F, xwork, dev_bytes, host_work.data(), host_bytes,
                                    info));
    sync();
  });
  CUDA_CHECK(cudaFree(xwork));
  cusolverDnDestroyParams(params);
  const double t_ormqr = median_ms([&] {
    CUSOLVER_CHECK(blas::ormqr_t(solver, rows, pc + 1, m, f, rows, tau, c, work, lwork, info));
    sync();
  });
  const double t_ormqr1 = median_ms([&] {
    CUSOLVER_CHECK(blas::ormqr_t(solver, rows, 1, m, f, rows, tau, c, work, lwork, info));
    sync();
  });
  const double t_syrk = median_ms([&] {
    CUBLAS_CHECK(blas::syrk_t(cublas, pc, rows - m, &one, c + m, rows, &zero, a));
    sync();
  });
  const double t_potrf = median_ms([&] {
    copy(a, spd, std::size_t(pc) * pc);
    CUSOLVER_CHECK(blas::potrf(solver, pc, a, work, lwork, info));
    sync();
  });
  // One pass of Cholesky QR of the features: G = FᵀF, G = LLᵀ, Q = F L⁻ᵀ.
  const double t_cholqr = median_ms([&] {
    copy(f, f0, fm);
    CUBLAS_CHECK(blas::syrk_t(cublas, m, rows, &one, f, rows, &zero, a));
    CUSOLVER_CHECK(blas::potrf(solver, m, a, work, lwork, info));
    CUBLAS_CHECK(cublasDtrsm(cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                             CUBLAS_DIAG_NON_UNIT, rows, m, &one, a, m, f, rows));
    sync();
  });
  const double t_sync = median_ms([&] {
    CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
    sync();
  });
  std::printf("| library, rows %d, m %d, pc %d | copy F %.3f | geqrf %.3f | Xgeqrf %.3f | "
              "ormqr(pc+1) %.3f | ormqr(1) %.3f | syrk(pc) %.3f | potrf(pc) %.3f | cholqr pass "
              "%.3f | memset+sync %.3f |\n",
              rows, m, pc, t_copy, t_geqrf - t_copy, t_xgeqrf - t_copy, t_ormqr, t_ormqr1, t_syrk,
              t_potrf - t_copy, t_cholqr - t_copy, t_sync);
  for (double* p : {f0, f, c, spd, a, tau, work}) CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaFree(info));
  cusolverDnDestroy(solver);
  cublasDestroy(cublas);
  cudaStreamDestroy(stream);
}

constexpr int kLoopRounds = 3;

// The preconditioned loop's decisions against QR's: `pre` runs the loop (Marquardt's update) with
// preconditioned trials; before each iteration `qr` (QR trials) takes pre's parameters, and each
// trial is made on both. A trial that used the preconditioned weights and whose acceptance
// differs from QR's on the same step is a disagreement (the trajectory follows pre).
void check_decisions(RbfBackend<double>& pre, RbfBackend<double>& qr,
                     const RbfParameters<double>& init, double mu, int iterations,
                     const std::string& path) {
  pre.set_parameters(init);
  pre.solve_weights_qr();
  long trials = 0, used = 0, disagreements = 0;
  double worst = 0;  // the largest |loss_pre − loss_qr| / loss_qr where used
  for (int it = 0; it < iterations; ++it) {
    const double before = pre.vp_prepare().loss;
    training_rules::DampingRule damping(training_rules::DampingRule::kMarquardt,
                                        training_rules::min_damping<double>());
    qr.set_parameters(pre.parameters());
    qr.vp_prepare();
    bool accepted = false;
    for (int attempt = 0; attempt < 12 && !accepted; ++attempt) {
      const long before_used = pre.vp_trial_counts().preconditioned;
      const double l_pre = pre.vp_try(mu).loss, l_qr = qr.vp_try(mu).loss;
      ++trials;
      if (pre.vp_trial_counts().preconditioned > before_used) {
        ++used;
        worst = std::max(worst, std::abs(l_pre - l_qr) / l_qr);
        if ((l_pre < before) != (l_qr < before)) {
          ++disagreements;
          std::printf("| %s: disagreement at iteration %d, μ %.1e: before %.9e, preconditioned "
                      "%.9e, QR %.9e |\n",
                      path.c_str(), it, mu, before, l_pre, l_qr);
        }
      }
      accepted = std::isfinite(l_pre) && l_pre < before;
      qr.lm_reject();
      if (accepted) {
        mu = damping.accepted(mu, before - l_pre, pre.lm_predicted_decrease());
      } else {
        pre.lm_reject();
        mu = damping.rejected(mu);
      }
    }
  }
  std::printf("| %s: decisions over %d iterations | %ld trials | %ld preconditioned | %ld "
              "disagreements | largest relative loss difference %.2e | final loss %.3e |\n",
              path.c_str(), iterations, trials, used, disagreements, worst, pre.residuals().loss);
  std::fflush(stdout);
}

// False when the two loops end with different parameters.
bool time_config(const std::string& path) {
  const Config config = load_config(path);
  const Problem problem = Problem::build(config.problem);
  const TrainingConfig& tc = config.training;
  // The variants of the head of this file.
  using Rule = training_rules::DampingRule;
  constexpr int kVariants = 9;
  const char* names[kVariants] = {"QR trials, no look-ahead, Marquardt",
                                  "QR trials, look-ahead, Marquardt",
                                  "preconditioned, QR prepare, Marquardt",
                                  "preconditioned, QR prepare, Nielsen",
                                  "preconditioned, QR prepare, hybrid (defaults)",
                                  "preconditioned, factor from trial, Marquardt",
                                  "preconditioned, factor from trial, Nielsen",
                                  "preconditioned, factor from trial, hybrid",
                                  "preconditioned, factor from trial, bracket"};
  const Rule::Kind update[kVariants] = {Rule::kMarquardt, Rule::kMarquardt, Rule::kMarquardt,
                                        Rule::kNielsen,   Rule::kHybrid,    Rule::kMarquardt,
                                        Rule::kNielsen,   Rule::kHybrid,    Rule::kBracket};
  const bool hint[kVariants] = {false, false, true, true, true, true, true, true, true};
  const bench::VarproStart start = bench::varpro_start(config, problem);
  const RbfInit& init = start.init;
  std::unique_ptr<RbfBackend<double>> backends[kVariants];
  for (int i = 0; i < kVariants; ++i) {
    BackendOptions options = start.options;
    options.vp_lookahead = i >= 1;
    options.vp_preconditioned_trials = i >= 2;
    options.vp_factor_from_trial = i >= 5;
    backends[i] = make_cuda_backend<double>(options);
    backends[i]->set_batch(start.batch);
  }
  RbfBackend<double>& be = *backends[0];
  be.set_parameters(init.params);
  be.solve_weights_qr();
  const int m = config.model.neurons, d = problem.dim();
  const int n = tc.points_interior + tc.points_boundary;
  const double t_res = median_ms([&] { be.residuals(); });
  const double t_qr = median_ms([&] { be.solve_weights_qr(); });
  const double t_prep = median_ms([&] { be.vp_prepare(); });
  const double t_cycle = median_ms([&] {
    be.vp_prepare();
    be.vp_try(1e-3);
    be.lm_reject();
  });
  RbfBackend<double>& pre = *backends[5];
  pre.set_parameters(init.params);
  pre.solve_weights_qr();
  const double t_pre_cycle = median_ms([&] {
    pre.vp_prepare();
    pre.vp_try(1e-3);
    pre.lm_reject();
  });
  std::printf("| %s: d %d, m %d, n %d | residuals %.3f | solve_weights_qr %.3f | vp_prepare %.3f "
              "| vp_try+reject %.3f | preconditioned vp_try+reject %.3f |\n",
              path.c_str(), d, m, n, t_res, t_qr, t_prep, t_cycle - t_prep, t_pre_cycle - t_prep);
  std::vector<double> ms[kVariants];
  LoopRun last[kVariants];
  for (int round = 0; round < kLoopRounds; ++round)
    for (int i = 0; i < kVariants; ++i) {
      last[i] = run_loop(*backends[i], init.params, tc.lm_damping, 200, update[i], hint[i]);
      ms[i].push_back(last[i].ms_per_iteration);
    }
  check_decisions(*backends[5], *backends[1], init.params, tc.lm_damping, 300, path);
  // The look-ahead changes where a factorisation is made, not its bits.
  const bool same = last[0].params.weights == last[1].params.weights &&
                    last[0].params.centres == last[1].params.centres &&
                    last[0].params.widths == last[1].params.widths;
  for (int i = 0; i < kVariants; ++i) {
    std::sort(ms[i].begin(), ms[i].end());
    std::printf(
        "| %s: loop, %s | %.3f ms/it (median of %d) | %.2f tries/it | %.2f prepares "
        "from the trial | loss %.3e |\n",
        path.c_str(), names[i], ms[i][kLoopRounds / 2], kLoopRounds, last[i].tries_per_iteration,
        last[i].from_trial, last[i].loss.loss);
  }
  std::printf("| %s: the loops' parameters with and without the look-ahead %s |\n",
              path.c_str(), same ? "are the same to the bit" : "DIFFER");
  std::fflush(stdout);
  time_library(n, m, m * (d + 1));
  return same;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  std::vector<std::string> configs(argv + 1, argv + argc);
  if (configs.empty())
    configs = {"configs/poisson2d.yaml", "configs/peak.yaml", "configs/cube3d.yaml"};
  bool same = true;
  for (const std::string& path : configs) same = time_config(path) && same;
  return same ? 0 : 1;
}
