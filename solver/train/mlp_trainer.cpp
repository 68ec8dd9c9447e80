#include "solver/train/mlp_trainer.hpp"

#include <Eigen/Dense>
#include <limits>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <string>

#include "solver/train/training_rules.hpp"

namespace rbfpde {
namespace {

using namespace training_rules;

template <class T>
bool all_finite(const std::vector<T>& p) {
  for (T x : p)
    if (!std::isfinite(double(x))) return false;
  return true;
}

}  // namespace

template <class T>
MlpTrainer<T>::MlpTrainer(const Config& config, const Problem& problem, MlpBackend<T>& backend,
                          std::shared_ptr<Communicator> comm)
    : config_(config),
      problem_(problem),
      backend_(backend),
      comm_(comm ? std::move(comm) : serial_communicator()) {
  if (comm_->size() > 1 && backend_.draws_batches())
    throw std::invalid_argument("a backend that draws its own batches cannot run over ranks");
}

template <class T>
std::uint64_t MlpTrainer<T>::adam_batch_index(long cycle, int resample_every) {
  return std::uint64_t(cycle / std::max(1, resample_every));
}

template <class T>
std::uint64_t MlpTrainer<T>::lbfgs_batch_index(long adam_steps, int resample_every) {
  return adam_steps > 0 ? adam_batch_index(adam_steps - 1, resample_every) + 1 : 1;
}

template <class T>
void MlpTrainer<T>::draw_batch(PhaseTimes& times, std::uint64_t index) {
  auto t0 = Clock::now();
  if (backend_.draws_batches()) {
    backend_.draw_batch(config_.training.seed, index, std::size_t(config_.training.points_interior),
                        std::size_t(config_.training.points_boundary));
    times.sampling += since(t0);
    if (batch_check_) batch_check_(backend_.batch());
    return;
  }
  // This rank's share of the batch; with one rank, the whole of it.
  const int rank = comm_->rank(), ranks = comm_->size();
  const TrainingConfig& tc = config_.training;
  const std::size_t n_int = share_of(std::size_t(tc.points_interior), rank, ranks).count;
  const std::size_t n_bnd = share_of(std::size_t(tc.points_boundary), rank, ranks).count;
  problem_.sample(state_.rng, n_int, n_bnd, state_.batch);
  times.sampling += since(t0);
  t0 = Clock::now();
  backend_.set_batch(state_.batch);
  times.upload += since(t0);
}

template <class T>
void MlpTrainer<T>::mark_diverged(TrainOutcome& out, const std::string& why) const {
  // A batch the backend drew inside a chunk of steps is seen here first.
  if (backend_.draws_batches() && batch_check_) batch_check_(backend_.batch());
  out.diverged = true;
  out.stop_reason = "diverged";
  out.divergence = why;
}

template <class T>
CollocationBatch MlpTrainer<T>::batch() const {
  return backend_.draws_batches() ? backend_.batch() : state_.batch;
}

template <class T>
MlpTrainerState<T> MlpTrainer<T>::state() const {
  MlpTrainerState<T> s = state_;
  if (backend_.draws_batches()) s.batch = backend_.batch();
  s.params = backend_.parameters();
  backend_.adam_moments(s.adam_m, s.adam_v);
  return s;
}

template <class T>
TrainOutcome MlpTrainer<T>::train(const std::vector<double>& initial, const MlpReportFn<T>& report,
                                  const StopFn& should_stop) {
  TrainOutcome out;
  const auto start = Clock::now();
  state_ = MlpTrainerState<T>{};
  state_.rng.seed(rank_seed(config_.training.seed, comm_->rank()));
  state_.last_good.assign(initial.begin(), initial.end());
  backend_.set_parameters(state_.last_good);
  draw_batch(out.times, 0);
  const LossParts loss = backend_.residuals();
  state_.reference_loss = loss.loss;
  state_.seconds = since(start);
  if (!finite(loss)) mark_diverged(out, "non-finite loss at the initial parameters");
  return run(out, report, should_stop);
}

template <class T>
TrainOutcome MlpTrainer<T>::resume(const MlpTrainerState<T>& state, const MlpReportFn<T>& report,
                                   const StopFn& should_stop) {
  state_ = state;
  // set_parameters zeroes the moments: they are restored after it.
  backend_.set_parameters(state_.params);
  backend_.set_adam_moments(state_.adam_m, state_.adam_v);
  // A checkpoint keeps the batch with its coefficients (older formats: points and targets only).
  problem_.fill_missing_coefficients(state_.batch);
  backend_.set_batch(state_.batch);
  // The backend holds them from here on (state() reads them back).
  state_.params.clear();
  state_.adam_m.clear();
  state_.adam_v.clear();
  return run(TrainOutcome{}, report, should_stop);
}

template <class T>
TrainOutcome MlpTrainer<T>::run(TrainOutcome out, const MlpReportFn<T>& report,
                                const StopFn& should_stop) {
  const TrainingConfig& tc = config_.training;
  const AdamConstants adam;
  const auto start = Clock::now();
  const double seconds_before = state_.seconds;
  const int report_every = std::max(1, config_.output.report_every);
  long& cycle = state_.cycle;
  std::vector<T>& last_good = state_.last_good;

  auto diverged = [&](const LossParts& l) {
    if (!finite(l)) return true;
    return exploded(l.loss, state_.reference_loss, state_.exploded_cycles);
  };
  auto diverge = [&](const std::string& why) { mark_diverged(out, why); };
  auto loss_text = [](const LossParts& l) {
    return std::isfinite(l.loss) ? "loss " + std::to_string(l.loss) + " exploded"
                                 : std::string("non-finite loss");
  };

  // Steps run in chunks of at most steps_per_sync() (1 on the CPU: step by step), a chunk
  // ending before the next report, so that the checks below see every step's loss in order;
  // time and interruption are checked once per chunk. A backend that draws batches draws them
  // inside the chunk (in the CUDA graph); otherwise a chunk also ends before the next batch,
  // which the host samples.
  const int per_sync = std::max(1, backend_.steps_per_sync());
  const bool backend_draws = backend_.draws_batches();
  const int every = tc.resample_every;  // ≥ 1 for Adam (config validation)
  std::vector<typename MlpBackend<T>::AdamStepArgs> steps;
  std::vector<LossParts> losses;
  const auto fresh_batch_at = [every](long c) { return c > 0 && c % every == 0; };
  if (tc.method == "lm" && !out.diverged) lm_stage(out, seconds_before, start, report, should_stop);
  while (tc.method != "lm" && !out.diverged && !state_.in_lbfgs && cycle < tc.max_cycles) {
    if (!backend_draws && fresh_batch_at(cycle))
      draw_batch(out.times, adam_batch_index(cycle, every));
    long k = std::min<long>(per_sync, tc.max_cycles - cycle);
    if (!backend_draws) k = std::min<long>(k, every - cycle % every);
    k = std::min<long>(k, report_every - cycle % report_every);
    steps.clear();
    for (long c = cycle; c < cycle + k; ++c) {
      typename MlpBackend<T>::AdamStepArgs s{T(adam_learning_rate(tc, c)), c + 1};
      if (backend_draws && fresh_batch_at(c))
        s.drawing(tc.seed, adam_batch_index(c, every), std::size_t(tc.points_interior),
                  std::size_t(tc.points_boundary));
      steps.push_back(s);
    }
    auto t0 = Clock::now();
    // The loss at the parameters before each step, on the current batch, drives stopping (as
    // gd_steps does for gdcg): it costs nothing extra, the gradient pass computes it.
    losses.clear();
    backend_.train_steps(steps, T(adam.beta1), T(adam.beta2), T(adam.epsilon), tc.tolerance,
                         losses);
    out.times.gd += since(t0);
    const double seconds = seconds_before + since(start);
    state_.seconds = seconds;
    for (std::size_t i = 0; i < losses.size(); ++i) {
      ++cycle;
      const LossParts& loss = losses[i];
      if (diverged(loss)) {
        diverge(loss_text(loss) + " (cycle " + std::to_string(cycle) + ")");
        backend_.set_parameters(last_good);
        break;
      }
      state_.adam_steps = cycle;
      if (loss.loss < tc.tolerance) {
        out.stop_reason = "tolerance";
        break;
      }
    }
    if (out.diverged) break;
    // Clocks and signals differ between ranks: every rank stops at the cycle where any would.
    if (out.stop_reason.empty() && any_rank(*comm_, tc.time_limit > 0 && seconds >= tc.time_limit))
      out.stop_reason = "time_limit";
    if (out.stop_reason.empty() && any_rank(*comm_, should_stop && should_stop()))
      out.stop_reason = "interrupted";
    if (!out.stop_reason.empty()) break;

    // The last Adam step is reported too when an L-BFGS stage follows: the final report comes
    // after that stage, and the history shows where Adam left off.
    if (cycle % report_every == 0 && cycle < tc.max_cycles + tc.lbfgs_iterations) {
      t0 = Clock::now();
      // The report shows the loss of the parameters after the step, on the current batch.
      const LossParts now = backend_.residuals();
      std::vector<T> params = backend_.parameters();
      if (!finite(now) || !all_finite(params)) {
        diverge("non-finite parameters or loss at the report of cycle " + std::to_string(cycle));
        backend_.set_parameters(last_good);
        break;
      }
      last_good = std::move(params);
      const bool go_on = !any_rank(*comm_, !report(cycle, seconds, now, backend_, false));
      out.times.report += since(t0);
      if (!go_on) {
        out.stop_reason = "monitor";
        break;
      }
    }
  }
  if (out.stop_reason.empty() && tc.method != "lm" &&
      (state_.in_lbfgs || tc.lbfgs_iterations > 0))
    lbfgs_stage(out, seconds_before, start, report, should_stop);
  if (out.stop_reason.empty()) out.stop_reason = "max_cycles";
  out.cycles = cycle;
  auto t0 = Clock::now();
  out.loss = backend_.residuals();
  if (!out.diverged && !(finite(out.loss) && all_finite(backend_.parameters()))) {
    // The last step (after the last report) blew up: fall back like any other divergence.
    diverge("non-finite parameters or loss after the last step (cycle " + std::to_string(cycle) +
            ")");
    backend_.set_parameters(last_good);
    out.loss = backend_.residuals();
  }
  out.seconds = state_.seconds = seconds_before + since(start);
  report(cycle, out.seconds, out.loss, backend_, true);
  out.times.report += since(t0);
  return out;
}

template <class T>
void MlpTrainer<T>::lm_stage(TrainOutcome& out, double seconds_before, Clock::time_point start,
                             const MlpReportFn<T>& report, const StopFn& should_stop) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vec = Eigen::VectorXd;
  const TrainingConfig& tc = config_.training;
  const int report_every = std::max(1, config_.output.report_every);
  long& cycle = state_.cycle;
  double mu = tc.lm_damping;
  DampingHistory history;
  std::vector<double> jtj_flat, jtr_flat;
  while (cycle < tc.max_cycles) {
    if (cycle > 0 && tc.resample_every > 0 && cycle % tc.resample_every == 0)
      draw_batch(out.times, adam_batch_index(cycle, tc.resample_every));
    auto t0 = Clock::now();
    const std::vector<T> theta0 = backend_.parameters();
    const LossParts before = backend_.residuals();
    // Summed over the ranks by the backend: every rank solves the same system.
    backend_.normal_equations(jtj_flat, jtr_flat);
    const Eigen::Index np = Eigen::Index(theta0.size());
    const Eigen::Map<const Mat> jtj(jtj_flat.data(), np, np);
    const Eigen::Map<const Vec> jtr(jtr_flat.data(), np);
    const double floor = std::max(jtj.diagonal().maxCoeff() * 1e-12, 1e-300);
    LossParts after = before;
    bool accepted = false;
    DampingRule damping(damping_kind(tc.lm_update), min_damping<T>(), &history, cycle + 1);
    for (int attempt = 0; attempt < 12 && !accepted; ++attempt) {
      Mat a = jtj;
      Vec mu_d(np);
      for (Eigen::Index i = 0; i < np; ++i) {
        mu_d[i] = mu * std::max(jtj(i, i), floor);
        a(i, i) += mu_d[i];
      }
      const Vec delta = -a.selfadjointView<Eigen::Lower>().ldlt().solve(jtr);
      std::vector<T> trial(theta0);
      for (Eigen::Index i = 0; i < np; ++i) trial[i] = T(double(theta0[i]) + delta[i]);
      backend_.set_parameters(trial);
      after = backend_.residuals();
      if (delta.allFinite() && finite(after) && after.loss < before.loss) {
        accepted = true;
        // The linearised decrease ½(δᵀ(μD)δ − δᵀJᵀR) (docs/mathematics.md, "Damping").
        const double predicted = 0.5 * (delta.dot(mu_d.cwiseProduct(delta)) - delta.dot(jtr));
        mu = damping.accepted(mu, before.loss - after.loss, predicted);
      } else {
        mu = damping.rejected(mu);
      }
    }
    if (!accepted) {
      backend_.set_parameters(theta0);
      after = before;
    }
    out.times.lm += since(t0);
    ++cycle;
    const double seconds = seconds_before + since(start);
    state_.seconds = seconds;
    if (!finite(after)) {
      mark_diverged(out, "non-finite loss (cycle " + std::to_string(cycle) + ")");
      backend_.set_parameters(state_.last_good);
      return;
    }
    // On one fixed batch, no damping up to kMaxDamping that helps means converged.
    if (tc.resample_every == 0 && mu >= kMaxDamping) out.stop_reason = "converged";
    if (out.stop_reason.empty() && any_rank(*comm_, tc.time_limit > 0 && seconds >= tc.time_limit))
      out.stop_reason = "time_limit";
    if (out.stop_reason.empty() && any_rank(*comm_, should_stop && should_stop()))
      out.stop_reason = "interrupted";
    if (!out.stop_reason.empty()) return;
    if (cycle % report_every == 0 && cycle < tc.max_cycles) {
      t0 = Clock::now();
      state_.last_good = backend_.parameters();
      const bool go_on = !any_rank(*comm_, !report(cycle, seconds, after, backend_, false));
      out.times.report += since(t0);
      if (!go_on) {
        out.stop_reason = "monitor";
        return;
      }
    }
  }
}

template <class T>
void MlpTrainer<T>::lbfgs_stage(TrainOutcome& out, double seconds_before, Clock::time_point start,
                                const MlpReportFn<T>& report, const StopFn& should_stop) {
  const TrainingConfig& tc = config_.training;
  const int report_every = std::max(1, config_.output.report_every);
  long& cycle = state_.cycle;
  auto diverge = [&](const std::string& why) {
    mark_diverged(out, why);
    backend_.set_parameters(state_.last_good);
  };

  // The objective round-trips the parameters through T (float on a float backend): the minimiser
  // works in double on the host, the backend evaluates at the nearest T point. `at_x` keeps the
  // loss parts of the last evaluation, which after a successful iteration is the new iterate.
  LossParts at_x;
  std::vector<T> theta, grad;
  const LbfgsObjective objective = [&](const std::vector<double>& x, std::vector<double>& g) {
    theta.assign(x.begin(), x.end());
    at_x = backend_.loss_and_gradient_at(theta, grad);
    g.assign(grad.begin(), grad.end());
    return at_x.loss;
  };
  LbfgsOptions options;
  options.history = tc.lbfgs_history;
  std::optional<Lbfgs> lbfgs;
  if (state_.in_lbfgs) {
    // Resumed inside the stage: the batch is already the stage's, the minimiser carries on.
    lbfgs.emplace(objective, state_.lbfgs, options);
  } else {
    // L-BFGS builds its curvature pairs from differences of gradients: they only mean something
    // when every evaluation sees the same points, so the stage keeps one batch throughout.
    draw_batch(out.times, lbfgs_batch_index(state_.adam_steps, tc.resample_every));
    state_.in_lbfgs = true;
    const auto t0 = Clock::now();
    const std::vector<T> p0 = backend_.parameters();
    lbfgs.emplace(objective, std::vector<double>(p0.begin(), p0.end()), options);
    out.times.lbfgs += since(t0);
    if (!std::isfinite(lbfgs->loss())) {
      // Adam's last steps (after its last report) left a network with no finite loss.
      diverge("non-finite loss at the start of the L-BFGS stage (cycle " + std::to_string(cycle) +
              ")");
    } else if (lbfgs->loss() < tc.tolerance) {
      out.stop_reason = "tolerance";
    }
  }

  const long last_cycle = state_.adam_steps + tc.lbfgs_iterations;
  while (out.stop_reason.empty() && cycle < last_cycle) {
    auto t0 = Clock::now();
    const Lbfgs::Status status = lbfgs->iterate();
    out.times.lbfgs += since(t0);
    const double seconds = seconds_before + since(start);
    state_.seconds = seconds;
    if (status != Lbfgs::Status::ok) {
      // No decrease even along −g (at the resolution of T): the iterate is as good as this
      // batch lets the minimiser make it. The backend may hold a rejected trial point.
      const std::vector<double>& x = lbfgs->x();
      backend_.set_parameters(std::vector<T>(x.begin(), x.end()));
      out.stop_reason = "lbfgs_stalled";
      break;
    }
    ++cycle;
    // The line search steps back from non-finite trial points, so an accepted iterate is finite;
    // this guards the rule "a non-finite loss is divergence" all the same.
    if (!finite(at_x)) {
      diverge("non-finite loss in the L-BFGS stage (cycle " + std::to_string(cycle) + ")");
      break;
    }
    if (at_x.loss < tc.tolerance) {
      out.stop_reason = "tolerance";
      break;
    }
    if (any_rank(*comm_, tc.time_limit > 0 && seconds >= tc.time_limit)) {
      out.stop_reason = "time_limit";
      break;
    }
    if (any_rank(*comm_, should_stop && should_stop())) {
      out.stop_reason = "interrupted";
      break;
    }
    if (cycle % report_every == 0 && cycle < last_cycle) {
      t0 = Clock::now();
      // The backend's last evaluation was at the iterate: its parameters are the iterate's.
      std::vector<T> params = backend_.parameters();
      if (!all_finite(params)) {
        diverge("non-finite parameters at the report of cycle " + std::to_string(cycle));
        break;
      }
      state_.last_good = std::move(params);
      const bool go_on = !any_rank(*comm_, !report(cycle, seconds, at_x, backend_, false));
      out.times.report += since(t0);
      if (!go_on) {
        out.stop_reason = "monitor";
        break;
      }
    }
  }
  state_.lbfgs = lbfgs->state();
}

template class MlpTrainer<double>;
template class MlpTrainer<float>;

}  // namespace rbfpde
