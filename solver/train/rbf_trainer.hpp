// HOW the RBF network is trained: the seed's GD+CG scheme (gdcg) and Levenberg–Marquardt (lm),
// written once against RbfBackend<T>. The trainer owns the loop (sampling, steps, stopping);
// what happens at each report (history, progress, snapshots) belongs to the caller. Its whole
// state between cycles is a TrainerState, so a run can be checkpointed and resumed to the
// same numbers as an uninterrupted one.
#pragma once

#include <functional>
#include <string>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"
#include "solver/config/config.hpp"
#include "solver/train/restart_hooks.hpp"
#include "solver/train/train_outcome.hpp"
#include "solver/train/training_rules.hpp"

namespace rbfpde {

// Everything the loop carries from one cycle to the next.
template <class T>
struct TrainerState {
  long cycle = 0;
  double mu = 0;               // LM damping
  training_rules::DampingHistory damping;  // the damping rule's history (training.lm.update)
  int restarts = 0;            // neuron relocations so far (training.restarts)
  double reference_loss = 0;   // the initial network's loss (divergence is judged against it)
  int exploded_cycles = 0;
  double seconds = 0;          // training time so far
  std::uint64_t batches = 0;   // batches drawn so far (a device-drawing backend's batch index)
  Rng rng;                     // the host's sampler (backends that draw batches do not use it)
  CollocationBatch batch;
  RbfParameters<T> params;
};

// Called every report_every cycles, every snapshot_every cycles, and once at the end
// (final == true); returns false to stop (stop_reason "monitor": the caller's validation rules).
template <class T>
using ReportFn = std::function<bool(long cycle, double seconds, const LossParts& loss,
                                    RbfBackend<T>& backend, bool final)>;

// The scales of the initial widths (model.init.width × the centre spacing) that variable
// projection's width search tries first: √2^k, k = 0 … 6.
inline constexpr double kWidthScales[] = {1.0, 1.4142135623730951, 2.0, 2.8284271247461903,
                                          4.0, 5.6568542494923806, 8.0};

template <class T>
class RbfTrainer {
 public:
  // With several ranks (`comm`), each draws its share of every batch from its own stream
  // (share_of, rank_seed) and the backend sums over the ranks; the stopping decisions are
  // agreed on by every rank. Null: one process.
  RbfTrainer(const Config& config, const Problem& problem, RbfBackend<T>& backend,
             std::shared_ptr<Communicator> comm = nullptr);

  // Starts from `initial` (with `solve_initial_weights`, least-squares weights are solved on
  // the first batch) and trains until a stopping rule holds. Divergence is not thrown: the
  // outcome says so and the backend holds the last parameters found sound at a report.
  TrainOutcome train(const RbfParameters<double>& initial, const ReportFn<T>& report,
                     const StopFn& should_stop = {}, bool solve_initial_weights = true);
  // Continues from a state saved by state() after an earlier train()/resume().
  TrainOutcome resume(const TrainerState<T>& state, const ReportFn<T>& report,
                      const StopFn& should_stop = {});

  void set_restart_hooks(RestartHooks hooks) { hooks_ = std::move(hooks); }
  void set_batch_check(training_rules::BatchCheck check) { batch_check_ = std::move(check); }

  // The regular reports: every output.report_every cycles, and every output.snapshot_every cycles
  // when that is set. A run stopped between them makes one more, final report at its last cycle.
  static bool regular_report(const OutputConfig& output, long cycle) {
    return cycle % std::max(1, output.report_every) == 0 ||
           (output.snapshot_every > 0 && cycle % output.snapshot_every == 0);
  }

  // The state after the last completed cycle (what a checkpoint stores).
  TrainerState<T> state() const;
  // The last collocation batch (for collocation.vtp).
  CollocationBatch batch() const;

 private:
  // A fresh batch: drawn by the backend when it can, else sampled here and uploaded. With
  // `fused`, a backend that draws leaves the drawing to the next gdcg_cycle.
  void draw_batch(PhaseTimes& times, bool fused = false);
  TrainOutcome run(TrainOutcome out, const ReportFn<T>& report, const StopFn& should_stop);
  // Variable projection's width search under model.init.width: auto (docs/mathematics.md, "The
  // width search"): the least-squares weights on the first batch with the initial widths scaled
  // by each of kWidthScales, then by a quarter octave either side of the best scale.
  struct WidthFit {
    double scale = 1;            // the best scale
    LossParts loss;              // its loss on the batch
    RbfParameters<T> best;       // its parameters, weights included
    RbfParameters<T> start;      // those of scale 1 (the initial widths)
  };
  WidthFit fit_widths();
  // Non-empty when the parameters show divergence (non-finite, or centres flung far away).
  std::string unsound(const RbfParameters<T>& params) const;

  // gdcg, at the end, with `params` the backend's current parameters: a reason
  // (TrainOutcome::unsound) when the plain gradient step of some neuron is over kAbsurdStepRatio
  // times the step limit, "" otherwise. Leaves the residuals at those parameters.
  std::string steps_set_by_limit(const RbfParameters<T>& params);

  // Variable projection's restarts (docs/mathematics.md, "Restarts"): true when a stall at
  // `loss` on the fixed batch, respectively a plateau of the validation loss, is to be answered
  // by relocating neurons rather than by stopping.
  bool restart_left() const;
  bool stall_restart_due(const LossParts& loss) const;
  bool plateau_restart_due() const;
  bool slow_restart_due() const;
  // The current batch on the host, with its coefficients.
  CollocationBatch host_batch() const;
  // ½(mean f² + λ·mean p²) over the union batch: the loss of the zero network.
  double data_loss(const CollocationBatch& batch) const;
  // Moves the least useful neurons to the points of largest residual, solves the weights, resets
  // μ and counts the restart; returns the note that reports it.
  std::string relocate_neurons(PhaseTimes& times);

  // True when any rank's `mine` is true (the value itself with one rank).
  bool any_rank(bool mine) const;

  const Config& config_;
  const Problem& problem_;
  RbfBackend<T>& backend_;
  std::shared_ptr<Communicator> comm_;
  TrainerState<T> state_;
  RestartHooks hooks_;
  training_rules::BatchCheck batch_check_;
};

extern template class RbfTrainer<double>;
extern template class RbfTrainer<float>;

}  // namespace rbfpde
