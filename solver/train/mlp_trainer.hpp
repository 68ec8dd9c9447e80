// HOW the MLP is trained (DESIGN.md §3): Adam on all parameters, written once against
// MlpBackend<T>. Same loop semantics as RbfTrainer: a fresh batch every resample_every cycles,
// stop at tolerance / max_cycles / time_limit / should_stop (SIGINT), and on divergence stop with
// the last parameters found sound at a report restored. One cycle is one Adam step. There is no
// checkpoint/resume for the MLP (yet): an interrupted run keeps its outputs, not its Adam state.
#pragma once

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
  // finite. Time spent in forward/backward passes and Adam updates is counted in times.gd
  // (PhaseTimes has no separate optimiser entry).
  TrainOutcome train(const std::vector<double>& initial, const MlpReportFn<T>& report,
                     const StopFn& should_stop = {});

  // The last collocation batch (for collocation.vtp).
  const CollocationBatch& batch() const { return batch_; }

 private:
  void draw_batch(PhaseTimes& times);

  const Config& config_;
  const Problem& problem_;
  MlpBackend<T>& backend_;
  Rng rng_;
  CollocationBatch batch_;
};

extern template class MlpTrainer<double>;
extern template class MlpTrainer<float>;

}  // namespace rbfpde
