#include "solver/train/rbf_trainer.hpp"

#include <chrono>
#include <cmath>

#include "solver/train/rbf_model.hpp"

namespace rbfpde {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

bool finite(const LossParts& l) { return std::isfinite(l.loss); }

constexpr double kExplosionFactor = 1e10;
constexpr int kExplosionCycles = 20;

template <class T>
bool all_finite(const RbfParameters<T>& p) {
  for (const auto* v : {&p.weights, &p.centres, &p.widths})
    for (T x : *v)
      if (!std::isfinite(double(x))) return false;
  return true;
}

}  // namespace

template <class T>
RbfTrainer<T>::RbfTrainer(const Config& config, const Problem& problem, RbfBackend<T>& backend)
    : config_(config), problem_(problem), backend_(backend), rng_(config.training.seed) {}

template <class T>
void RbfTrainer<T>::draw_batch(PhaseTimes& times) {
  auto t0 = Clock::now();
  problem_.sample(rng_, std::size_t(config_.training.points_interior),
                  std::size_t(config_.training.points_boundary), batch_);
  times.sampling += since(t0);
  t0 = Clock::now();
  backend_.set_batch(batch_);
  times.upload += since(t0);
}

template <class T>
TrainOutcome RbfTrainer<T>::train(const RbfParameters<double>& initial, const ReportFn<T>& report) {
  const TrainingConfig& tc = config_.training;
  const bool lm = tc.method == "lm";
  TrainOutcome out;
  const auto start = Clock::now();

  backend_.set_parameters(convert_parameters<T>(initial));
  draw_batch(out.times);
  {
    // Least-squares weights for the initial centres: both methods start from the best weights
    // the initial network can have, as the reference LM run did.
    auto t0 = Clock::now();
    backend_.solve_weights_direct(T(0));
    out.times.weights += since(t0);
  }
  LossParts loss = backend_.residuals();
  RbfParameters<T> last_good = backend_.parameters();
  double mu = tc.lm_damping;
  const int report_every = std::max(1, config_.output.report_every);

  // Divergence: a non-finite loss at once, or a loss that stays above kExplosionFactor times
  // the initial one for kExplosionCycles cycles in a row. A single spike is not divergence: on
  // a fresh batch the loss of a network fitted to the last one can jump and recover.
  const double reference_loss = loss.loss;
  int exploded_cycles = 0;
  auto diverged = [&](const LossParts& l) {
    if (!finite(l)) return true;
    exploded_cycles = l.loss > kExplosionFactor * reference_loss && l.loss > 1.0 ? exploded_cycles + 1 : 0;
    return exploded_cycles >= kExplosionCycles;
  };

  if (diverged(loss)) {
    out.diverged = true;
    out.stop_reason = "diverged";
  }

  long cycle = 0;
  while (!out.diverged && cycle < tc.max_cycles) {
    if (cycle > 0 && cycle % tc.resample_every == 0) draw_batch(out.times);
    ++cycle;
    if (lm) {
      auto t0 = Clock::now();
      const LossParts before = backend_.lm_prepare();
      LossParts after = before;
      bool accepted = false;
      // Marquardt's rule: shrink μ after a success, grow it until the step helps.
      for (int attempt = 0; attempt < 12; ++attempt) {
        after = backend_.lm_try(T(mu));
        if (finite(after) && after.loss < before.loss) {
          accepted = true;
          mu = std::max(mu * 0.1, 1e-15);
          break;
        }
        backend_.lm_reject();
        mu = std::min(mu * 10.0, 1e12);
      }
      loss = accepted ? after : before;
      out.times.lm += since(t0);
    } else {
      auto t0 = Clock::now();
      loss = backend_.gd_steps(tc.gd_steps, T(tc.gd_learning_rate));
      out.times.gd += since(t0);
      t0 = Clock::now();
      backend_.solve_weights_cg(tc.cg_iterations, T(tc.cg_tolerance));
      out.times.weights += since(t0);
      // gd_steps reports the loss before its step; after the weight solve the backend holds
      // the residuals at the new parameters, but the loss needs a pass to be summed, so the
      // one from the start of the cycle (on the current batch) drives stopping.
    }

    if (diverged(loss)) {
      out.diverged = true;
      out.stop_reason = "diverged";
      backend_.set_parameters(last_good);
      loss = backend_.residuals();
      break;
    }

    const double seconds = since(start);
    const bool stop_tol = loss.loss < tc.tolerance;
    const bool stop_time = tc.time_limit > 0 && seconds >= tc.time_limit;
    if (stop_tol) out.stop_reason = "tolerance";
    if (stop_time && out.stop_reason.empty()) out.stop_reason = "time_limit";
    if (!out.stop_reason.empty()) break;

    if (cycle % report_every == 0 && cycle < tc.max_cycles) {
      auto t0 = Clock::now();
      // The report shows the parameters' loss on the current batch after the whole cycle.
      const LossParts now = lm ? loss : backend_.residuals();
      RbfParameters<T> params = backend_.parameters();
      if (!finite(now) || !all_finite(params)) {
        out.diverged = true;
        out.stop_reason = "diverged";
        backend_.set_parameters(last_good);
        break;
      }
      last_good = std::move(params);
      const bool go_on = report(cycle, seconds, now, backend_, false);
      out.times.report += since(t0);
      if (!go_on) {
        out.stop_reason = "interrupted";
        break;
      }
    }
  }
  if (out.stop_reason.empty()) out.stop_reason = "max_cycles";
  out.cycles = cycle;
  auto t0 = Clock::now();
  out.loss = backend_.residuals();
  out.seconds = since(start);
  report(cycle, out.seconds, out.loss, backend_, true);
  out.times.report += since(t0);
  return out;
}

template class RbfTrainer<double>;
template class RbfTrainer<float>;

}  // namespace rbfpde
