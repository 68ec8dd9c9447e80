// Judging a run on points it never trained on (docs/mathematics.md, "Validation and the error
// estimate"): a fixed validation set drawn once from its own stream of the seed, the figures on
// it, the choice of the best sound state seen, the soundness checks that make an unsound result
// exit 3, and the residual-based error estimate. Written once for every model and method: the
// model is seen only through an evaluation function and a snapshot of its parameters.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/output/output.hpp"

namespace rbfpde {

// u and Δₛu of the model at n points (row-major, n × dim).
using EvaluateFn = std::function<void(const std::vector<double>& points, std::vector<double>& u,
                                      std::vector<double>& laplacian)>;
// ∇u of the model at n points (n × dim): what the rows with b·∇u or β·∂u/∂n need besides u, Δₛu.
using GradientFn =
    std::function<void(const std::vector<double>& points, std::vector<double>& gradient)>;

struct ValidationFigures {
  // RMS of the interior rows' residuals a·Δₛu + b·∇u + c·u − f (Δu − f for Poisson)
  double rms_interior = std::numeric_limits<double>::quiet_NaN();
  // RMS of the boundary rows' residuals α·u + β·∂u/∂n − p (u − p for Dirichlet)
  double rms_boundary = std::numeric_limits<double>::quiet_NaN();
  double loss = std::numeric_limits<double>::quiet_NaN();          // ½ rms_i² + ½ λ rms_b²
  double max_abs_u = 0;  // max |u| over the validation points
  bool finite = true;    // every u and Δu there finite
};

// The sizes of the validation set for a training batch of n points: twice the batch, but at
// most max(n + 1, kValidationCap) points.
constexpr std::size_t kValidationCap = 20000;
std::size_t validation_size(std::size_t batch_points);

class ValidationSet {
 public:
  // Draws the set from the stream seed ^ kValidationStream, independent of every training draw.
  ValidationSet(const Config& config, const Problem& problem);

  const CollocationBatch& points() const { return set_; }
  // Figures of the model evaluated by `evaluate` (and `gradient`, called only when the problem's
  // rows involve ∇u); the rows' residuals at the interior and the boundary points are left in
  // the last_* vectors (for the error estimate).
  ValidationFigures assess(const EvaluateFn& evaluate, const GradientFn& gradient = {});
  const std::vector<double>& last_u_interior() const { return u_int_; }
  const std::vector<double>& last_interior_residuals() const { return res_int_; }
  const std::vector<double>& last_boundary_residuals() const { return res_bnd_; }

 private:
  double penalty_;
  bool uses_gradient_;
  CollocationBatch set_;
  std::vector<double> u_int_, lap_int_, u_bnd_, scratch_, grad_int_, grad_bnd_, res_int_, res_bnd_;
};

// What the monitor decided about a run.
struct MonitorVerdict {
  long best_cycle = -1;           // the report whose state is kept, -1 when none was sound
  ValidationFigures best;         // its validation figures
  std::string unsound;            // why the final state was not sound ("" when it was)
  std::string stop_reason;        // tolerance | plateau, when the monitor stopped the run
};

// What a RunMonitor has learnt from the reports so far: the best sound state and its figures, and
// the plateau and slow rules' counters. A checkpoint keeps it, so that a resumed run judges its
// reports as the run that was never stopped does.
template <class Params>
struct MonitorState {
  Params best{};
  long best_cycle = -1;  // -1: no sound state yet
  ValidationFigures best_figures;
  double plateau_loss = std::numeric_limits<double>::infinity();
  long improved_cycle = -1;
  double slow_loss = std::numeric_limits<double>::infinity();
  long slow_cycle = -1;
  bool slow = false;
};

// Watches the reports of one run: keeps the best sound state by validation loss, stops the run
// when the validation loss reaches training.tolerance or has not improved by 1 % for
// training.patience cycles (judged at reports), says when it has not improved by 10 % for as
// long (slow progress, which variable projection answers by a restart), and judges soundness:
//   - u non-finite on the evaluation grid or the validation set, or max |u| on the grid above
//     kAbsurdFactor × max |u| on the validation set (a spike between the points);
//   - a validation loss within kZeroShare of the data's own, that of the zero function (a
//     network whose weights underflowed: it explains none of the data);
//   - a validation residual above kOverfitFactor × the training one (both RMS, interior or
//     boundary), beyond a floor of kOverfitFloor × the data's RMS;
//   - what the model itself reports (narrow neurons, for the RBF network).
template <class Params>
class RunMonitor {
 public:
  static constexpr double kAbsurdFactor = 10;
  static constexpr double kOverfitFactor = 100;
  static constexpr double kOverfitFloor = 1e-8;
  static constexpr double kZeroShare = 1e-12;
  // Progress is slow when the validation loss has not fallen by this share in `patience` cycles.
  static constexpr double kSlowShare = 0.1;

  RunMonitor(const Config& config, const Problem& problem, const ValidationSet& validation);

  // One report. `grid_u` is u on the evaluation grid; `model_unsound` the model's own verdict
  // ("" when sound); `params` the current parameters (kept when they are a new best). A report
  // of cycle 0 is a candidate for the best state only: the plateau and slow rules start at the
  // first cycle. Returns the soundness verdict of this state ("" when sound).
  std::string observe(long cycle, const LossParts& train, const ValidationFigures& v,
                      const std::vector<double>& grid_u, const std::string& model_unsound,
                      const Params& params);
  // The trainer restarted at `cycle`: a plateau stop is withdrawn, and the plateau and slow
  // rules count their patience from there, against the best validation loss before it (so a
  // restart that never beats that by 1 % ends the run `patience` cycles later).
  void restarted(long cycle) {
    improved_cycle_ = cycle;
    slow_cycle_ = cycle;
    slow_ = false;
    if (verdict_.stop_reason == "plateau") verdict_.stop_reason.clear();
  }
  // True while the validation loss has not fallen by kSlowShare within training.patience cycles
  // (judged at reports; never with patience 0).
  bool slow() const { return slow_; }
  // The validation data's own loss ½ rms(f)² + ½ λ rms(p)², that of the zero network.
  double data_loss() const;
  // True once a stopping rule of the monitor holds (the caller stops the run).
  bool should_stop() const { return !verdict_.stop_reason.empty(); }

  // What the monitor has learnt, and its restoration (a resumed run). A stop is not restored:
  // the next report decides it again, under the resumed run's tolerance.
  MonitorState<Params> state() const;
  void restore(const MonitorState<Params>& s);

  bool has_best() const { return verdict_.best_cycle >= 0; }
  const Params& best() const { return best_; }
  MonitorVerdict& verdict() { return verdict_; }
  const MonitorVerdict& verdict() const { return verdict_; }

 private:
  const Config& config_;
  double f_rms_ = 0, p_rms_ = 0;
  Params best_{};
  double plateau_loss_ = std::numeric_limits<double>::infinity();
  long improved_cycle_ = -1;  // the cycle of the last 1 % improvement (or the first report)
  double slow_loss_ = std::numeric_limits<double>::infinity();
  long slow_cycle_ = -1;      // the cycle of the last kSlowShare improvement (or the first report)
  bool slow_ = false;
  MonitorVerdict verdict_;
};

// The residual-based estimate of the relative L2 error (docs/mathematics.md): the error
// e = u_h − u solves Le = Lu_h − f in Ω, Be = Bu_h − p on ∂Ω (L, B the problem's interior and
// boundary rows; Δe = Δu_h − f, e = u_h − p for Poisson/Dirichlet); it is solved by least
// squares in an auxiliary basis of Gaussians, 4 lattice spacings wide, on a lattice finer than
// the network (solve_weights_qr of an RBF backend `backend` — "cpu" or "cuda" — in double;
// always the CPU one for rows other than Poisson/Dirichlet), at the validation points, and
// evaluated on the evaluation grid's points inside the domain: RMS(e_h) / RMS(u_h) there.
// `grid_u` is u_h on those points. NaN when the problem is degenerate (u_h ≡ 0).
double estimate_relative_error(const std::string& backend, const Config& config,
                               const Problem& problem, const ValidationSet& validation,
                               const std::vector<double>& grid_points,
                               const std::vector<double>& grid_u);

}  // namespace rbfpde
