// HOW the RBF network is trained: the seed's GD+CG scheme (gdcg) and Levenberg–Marquardt (lm),
// written once against RbfBackend<T>. The trainer owns the loop (sampling, steps, stopping);
// what happens at each report (history, progress, snapshots) belongs to the caller.
#pragma once

#include <functional>
#include <string>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "problems/random.hpp"
#include "solver/config/config.hpp"

namespace rbfpde {

struct PhaseTimes {
  double sampling = 0;   // drawing points and evaluating f, p on the host
  double upload = 0;     // handing the batch to the backend
  double gd = 0;         // gradient steps on centres and widths
  double weights = 0;    // CG / direct weight solves
  double lm = 0;         // Levenberg–Marquardt steps
  double report = 0;     // reports (error evaluation, history, snapshots)
};

struct TrainOutcome {
  long cycles = 0;              // cycles completed
  std::string stop_reason;      // tolerance | max_cycles | time_limit | diverged | interrupted
  bool diverged = false;
  LossParts loss;               // at the end, on the last batch
  PhaseTimes times;
  double seconds = 0;
};

// Called every report_every cycles and once at the end (final == true); returns false to stop.
template <class T>
using ReportFn = std::function<bool(long cycle, double seconds, const LossParts& loss,
                                    RbfBackend<T>& backend, bool final)>;

template <class T>
class RbfTrainer {
 public:
  RbfTrainer(const Config& config, const Problem& problem, RbfBackend<T>& backend);

  // Sets the initial parameters (least-squares weights are solved on the first batch) and
  // trains until a stopping rule holds. Throws nothing for divergence: the outcome says so and
  // the backend holds the last parameters whose loss was finite.
  TrainOutcome train(const RbfParameters<double>& initial, const ReportFn<T>& report);

  // The last collocation batch (for collocation.vtp).
  const CollocationBatch& batch() const { return batch_; }

 private:
  void draw_batch(PhaseTimes& times);

  const Config& config_;
  const Problem& problem_;
  RbfBackend<T>& backend_;
  Rng rng_;
  CollocationBatch batch_;
};

extern template class RbfTrainer<double>;
extern template class RbfTrainer<float>;

}  // namespace rbfpde
