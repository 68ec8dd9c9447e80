// HOW the MLP is trained (DESIGN.md §3): Adam on all parameters, written once against
// MlpBackend<T>. Same loop semantics as RbfTrainer: a fresh batch every resample_every cycles,
// stop at tolerance / max_cycles / time_limit / should_stop (SIGINT), and on divergence stop with
// the last parameters found sound at a report restored. One cycle is one Adam step.
// With training.lbfgs.iterations > 0 an L-BFGS stage follows the max_cycles Adam steps (see
// train()): one cycle is then one L-BFGS iteration, numbered on from the Adam steps. There is no
// checkpoint/resume for the MLP (yet): an interrupted run keeps its outputs, not its Adam state.
#pragma once

#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

#include "kernels/mlp_backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"
#include "solver/config/config.hpp"
#include "solver/train/rbf_trainer.hpp"

namespace rbfpde {

// Adam's constants (Kingma & Ba): the defaults every PINN study uses; only the learning rate
// and its decay are configurable.
struct AdamConstants {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

// learning_rate × decay^(step / 1000): a smooth exponential schedule, `decay` per 1000 steps.
inline double adam_learning_rate(const TrainingConfig& tc, long step) {
  return tc.adam_learning_rate * std::pow(tc.adam_decay, double(step) / 1000.0);
}

// Called every report_every cycles and once at the end (final == true); returns false to stop.
template <class T>
using MlpReportFn = std::function<bool(long cycle, double seconds, const LossParts& loss,
                                       MlpBackend<T>& backend, bool final)>;

template <class T>
class MlpTrainer {
 public:
  MlpTrainer(const Config& config, const Problem& problem, MlpBackend<T>& backend);

  // Sets the initial parameters and trains until a stopping rule holds. Throws nothing for
  // divergence: the outcome says so and the backend holds the last parameters whose loss was
  // finite. Time spent in forward/backward passes and Adam updates is counted in times.gd.
  //
  // The L-BFGS stage runs when the Adam steps all ran (it does not after divergence,
  // interruption, or a stop for tolerance or time_limit: those rules bound the whole training).
  // It draws one batch of the configured size and minimises the loss on it for up to
  // training.lbfgs.iterations iterations (lbfgs.hpp), with the same reports and stopping rules;
  // it may also stop with reason "lbfgs_stalled" when its line search finds no decrease. Its
  // time is counted in times.lbfgs.
  TrainOutcome train(const std::vector<double>& initial, const MlpReportFn<T>& report,
                     const StopFn& should_stop = {});

  // The last collocation batch (for collocation.vtp).
  const CollocationBatch& batch() const { return batch_; }

 private:
  void draw_batch(PhaseTimes& times);
  // The L-BFGS stage; `cycle`, `last_good` and `out` carry on from the Adam stage.
  void lbfgs_stage(TrainOutcome& out, long& cycle, std::vector<T>& last_good,
                   std::chrono::steady_clock::time_point start, const MlpReportFn<T>& report,
                   const StopFn& should_stop);

  const Config& config_;
  const Problem& problem_;
  MlpBackend<T>& backend_;
  Rng rng_;
  CollocationBatch batch_;
};

extern template class MlpTrainer<double>;
extern template class MlpTrainer<float>;

}  // namespace rbfpde
