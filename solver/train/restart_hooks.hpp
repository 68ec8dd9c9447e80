// The hooks through which the caller's validation monitor (solver/train/supervisor.hpp) takes
// part in the RBF trainer's width search and restarts.
#pragma once

#include <functional>
#include <string>

namespace rbfpde {

// What the caller's validation monitor has to do with variable projection's width search and
// restarts (docs/mathematics.md, "The width search", "Restarts"). Any may be empty.
struct RestartHooks {
  // Called at every restart with its cycle and a one-line note, before the iterations continue.
  std::function<void(long cycle, const std::string& note)> restarted;
  // Called once after variable projection's width search with a one-line note.
  std::function<void(const std::string& note)> widths_chosen;
  // Asked when a report stops the run: when the stop is the validation loss's plateau, that loss
  // over the validation data's own (the loss of the zero network); NaN for any other stop.
  std::function<double()> plateau_loss_ratio;
  // Asked at every other report: when the validation loss has progressed slowly (under 10 % in
  // training.patience cycles), that loss over the validation data's own; NaN otherwise.
  std::function<double()> slow_loss_ratio;
};

}  // namespace rbfpde
