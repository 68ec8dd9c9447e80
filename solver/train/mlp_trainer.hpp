// HOW the MLP is trained (docs/mathematics.md): Adam on all parameters (or Levenberg–Marquardt,
// training.method lm, from the backend's Jacobian), written once against
// MlpBackend<T>. Same loop semantics as RbfTrainer: a fresh batch every resample_every cycles,
// stop at tolerance / max_cycles / time_limit / should_stop (SIGINT), and on divergence stop with
// the last parameters found sound at a report restored. One cycle is one Adam step.
// With training.lbfgs.iterations > 0 an L-BFGS stage follows the max_cycles Adam steps (see
// train()): one cycle is then one L-BFGS iteration, numbered on from the Adam steps. Its whole
// state between cycles is an MlpTrainerState (with the minimiser's in the L-BFGS stage), so a
// run can be checkpointed and resumed to the same numbers as an uninterrupted one.
// Over ranks (a communicator of several) each rank draws its share of every batch from its own
// stream, the backend sums the loss, the gradient and LM's normal equations, and the decisions
// that hang on a rank's clock, signals or monitor are agreed on, as in RbfTrainer.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/comm.hpp"
#include "kernels/mlp_backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"
#include "solver/config/config.hpp"
#include "solver/train/lbfgs.hpp"
#include "solver/train/train_outcome.hpp"
#include "solver/train/training_rules.hpp"

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

// Everything the loop carries from one cycle to the next.
template <class T>
struct MlpTrainerState {
  long cycle = 0;             // cycles done: Adam steps, then L-BFGS iterations
  long adam_steps = 0;        // Adam steps done (the bias corrections' t of the last one)
  double reference_loss = 0;  // the initial network's loss (divergence is judged against it)
  int exploded_cycles = 0;
  double seconds = 0;  // training time so far
  Rng rng;
  CollocationBatch batch;  // the current batch (in the L-BFGS stage, its fixed one)
  std::vector<T> params;
  std::vector<T> adam_m, adam_v;  // Adam's moments
  std::vector<T> last_good;       // the parameters last found sound at a report
  bool in_lbfgs = false;          // the L-BFGS stage has begun (it ends at adam_steps + iterations)
  LbfgsState lbfgs;               // the minimiser's state, in that stage
};

// Called every report_every cycles and once at the end (final == true); returns false to stop.
template <class T>
using MlpReportFn = std::function<bool(long cycle, double seconds, const LossParts& loss,
                                       MlpBackend<T>& backend, bool final)>;

template <class T>
class MlpTrainer {
 public:
  // With several ranks (`comm`), each draws its share of every batch (share_of) from its own
  // stream (rank_seed), and the backend, made with the same communicator, sums over the ranks;
  // a backend that draws its own batches cannot (std::invalid_argument). Null: one process.
  MlpTrainer(const Config& config, const Problem& problem, MlpBackend<T>& backend,
             std::shared_ptr<Communicator> comm = nullptr);

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
  // Continues from a state saved by state() after an earlier train()/resume(), in the stage it
  // was saved in. In the L-BFGS stage the stage ends at state.adam_steps + lbfgs.iterations.
  TrainOutcome resume(const MlpTrainerState<T>& state, const MlpReportFn<T>& report,
                      const StopFn& should_stop = {});

  // The state after the last completed cycle (what a checkpoint stores).
  MlpTrainerState<T> state() const;
  // The last collocation batch (for collocation.vtp).
  CollocationBatch batch() const;

  // Batch numbers, a function of the cycle alone (so a resumed run, on either backend, draws
  // what the uninterrupted one would): 0 for the first batch, c / resample_every for the one
  // drawn before Adam step c + 1, and one past the last Adam batch for the L-BFGS stage's.
  static std::uint64_t adam_batch_index(long cycle, int resample_every);
  static std::uint64_t lbfgs_batch_index(long adam_steps, int resample_every);

  void set_batch_check(training_rules::BatchCheck check) { batch_check_ = std::move(check); }

 private:
  // Records divergence in `out`, after checking a batch the backend drew (set_batch_check).
  void mark_diverged(TrainOutcome& out, const std::string& why) const;
  // A fresh batch: number `index` drawn by the backend when it draws batches, else this rank's
  // share sampled on the host from state_.rng and uploaded.
  void draw_batch(PhaseTimes& times, std::uint64_t index);
  TrainOutcome run(TrainOutcome out, const MlpReportFn<T>& report, const StopFn& should_stop);
  // training.method lm: Levenberg–Marquardt on all parameters from the backend's Jacobian (a
  // fresh batch every resample_every iterations, 0 = one batch), with Marquardt's damping
  // μ·max(diag JᵀJ, floor) and the RBF trainer's accept/reject rule.
  void lm_stage(TrainOutcome& out, double seconds_before,
                std::chrono::steady_clock::time_point start, const MlpReportFn<T>& report,
                const StopFn& should_stop);
  // The L-BFGS stage, begun afresh or continued from state_.lbfgs (state_.in_lbfgs).
  void lbfgs_stage(TrainOutcome& out, double seconds_before,
                   std::chrono::steady_clock::time_point start, const MlpReportFn<T>& report,
                   const StopFn& should_stop);

  const Config& config_;
  const Problem& problem_;
  MlpBackend<T>& backend_;
  std::shared_ptr<Communicator> comm_;
  // Kept up to date by the loop, except params and the Adam moments, which the backend holds
  // (state() reads them).
  MlpTrainerState<T> state_;
  training_rules::BatchCheck batch_check_;
};

extern template class MlpTrainer<double>;
extern template class MlpTrainer<float>;

}  // namespace rbfpde
