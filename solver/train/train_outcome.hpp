// What every trainer (RBF network or MLP) returns and takes besides its own state: where the time
// went, how training ended, and the stop poll.
#pragma once

#include <functional>
#include <string>

#include "kernels/loss_parts.hpp"

namespace rbfpde {

struct PhaseTimes {
  double sampling = 0;   // drawing points and evaluating f, p on the host
  double upload = 0;     // handing the batch to the backend
  double gdcg = 0;       // RBF gdcg cycles: GD on centres and widths + CG on the weights (+ a
                         // device-drawn batch), fused by the backend where it can
  double gd = 0;         // MLP: loss, gradient and Adam steps
  double weights = 0;    // direct weight solves
  double lm = 0;         // Levenberg–Marquardt and variable projection steps
  double lbfgs = 0;      // MLP: the L-BFGS stage after Adam (its passes and line searches)
  double report = 0;     // reports (error evaluation, validation, history, snapshots)
};

struct TrainOutcome {
  long cycles = 0;              // cycles completed (counting those before a resume)
  std::string stop_reason;      // tolerance | plateau | converged | max_cycles | time_limit |
                                // diverged | interrupted | lbfgs_stalled (| monitor until the
                                // solve names it)
  bool diverged = false;
  std::string divergence;       // what was seen, when diverged
  std::string unsound;          // the trainer's own verdict on the run, "" when sound: gdcg's
                                // learning rate far above what the step limit lets through
  LossParts loss;               // at the end, on the last batch
  double initial_width = 0;     // varpro's width search: the starting widths it chose, as a
                                // multiple of the initial centre spacing (0: no search)
  PhaseTimes times;
  double seconds = 0;           // training time, counting the time before a resume
};

// Polled after every cycle; true stops training with stop_reason "interrupted".
using StopFn = std::function<bool()>;

}  // namespace rbfpde
