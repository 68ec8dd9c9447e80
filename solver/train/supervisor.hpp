// The reports of a run, judged on the validation set: what the RBF and the MLP solves share
// between their trainers and their output. At every report it evaluates the model on the
// evaluation grid and the validation set, writes the history row and progress line, and lets the
// RunMonitor keep the best sound state; after training, finish() puts that state back into the
// model, re-evaluates it, estimates its error and says whether the result is sound.
#pragma once

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/restart_hooks.hpp"
#include "solver/train/run_output.hpp"
#include "solver/train/validation.hpp"

namespace rbfpde {

template <class Params>
class Supervisor {
 public:
  // What the supervisor needs of a model: evaluation, its parameters, and its own soundness
  // verdict ("" when sound).
  struct Model {
    EvaluateFn evaluate;
    GradientFn gradient;  // ∇u: for the rows with b·∇u or β·∂u/∂n
    std::function<Params()> parameters;
    std::function<void(const Params&)> set_parameters;
    std::function<std::string(const Params&, double max_abs_u)> unsound;
  };

  // The Model of a backend with evaluate(points, u, Δu), parameters() and set_parameters(p) (the
  // RBF and MLP backends alike); `unsound` left empty.
  template <class Backend>
  static Model model_of(Backend& backend) {
    Model model;
    model.evaluate = [&backend](const std::vector<double>& pts, std::vector<double>& u,
                                std::vector<double>& lap) { backend.evaluate(pts, u, lap); };
    model.gradient = [&backend](const std::vector<double>& pts, std::vector<double>& grad) {
      backend.evaluate_gradient(pts, grad);
    };
    model.parameters = [&backend] { return backend.parameters(); };
    model.set_parameters = [&backend](const Params& p) { backend.set_parameters(p); };
    return model;
  }

  Supervisor(const Config& config, const Problem& problem, RunOutput& output)
      : config_(config),
        problem_(problem),
        output_(output),
        validation_(config, problem),
        monitor_(config, problem, validation_) {}

  // The fixed validation set (drawn once, in the constructor).
  const ValidationSet& validation() const { return validation_; }

  // The cycles at which the trainer reports whatever the run's stopping point (by default every
  // output.report_every cycles). A final report at any other cycle is irregular: an
  // uninterrupted run does not make it, so the checkpoint's monitor state leaves it out.
  void set_regular_reports(std::function<bool(long cycle)> regular) {
    regular_ = std::move(regular);
  }

  // One report (the trainers' report callback); false stops the run (a monitor rule holds).
  bool report(long cycle, double seconds, const LossParts& loss, const Model& model, bool final) {
    evaluate_grid(model);
    last_validation_ = validation_.assess(model.evaluate, model.gradient);
    const Params params = model.parameters();
    const std::string model_why =
        model.unsound ? model.unsound(params, last_validation_.max_abs_u) : "";
    // A final report between regular ones is not in the checkpoint's history, and the monitor's
    // state that the checkpoint keeps is the one before it.
    irregular_final_ = final && !regular_(cycle);
    if (irregular_final_) before_final_ = monitor_.state();
    last_unsound_ = monitor_.observe(cycle, loss, last_validation_, u_, model_why, params);
    last_cycle_ = cycle;
    errors_ = output_.report(cycle, seconds, loss, last_validation_, u_, residual_, final);
    return final || !monitor_.should_stop();
  }

  // The hooks of RbfTrainer's restarts (variable projection's neuron relocation): a restart is
  // noted on the progress stream and is a fresh chance for the plateau and slow rules.
  RestartHooks restart_hooks() {
    RestartHooks hooks;
    hooks.restarted = [this](long cycle, const std::string& note) {
      output_.note(note);
      monitor_.restarted(cycle);
    };
    hooks.widths_chosen = [this](const std::string& note) { output_.note(note); };
    hooks.plateau_loss_ratio = [this] {
      return monitor_.verdict().stop_reason == "plateau"
                 ? last_validation_.loss / monitor_.data_loss()
                 : std::numeric_limits<double>::quiet_NaN();
    };
    hooks.slow_loss_ratio = [this] {
      return monitor_.slow() ? last_validation_.loss / monitor_.data_loss()
                             : std::numeric_limits<double>::quiet_NaN();
    };
    return hooks;
  }

  // After training: the best sound state goes back into the model (when there is one and it is
  // not the final state), u and Δu on the grid are those of the state written, and `result`
  // gets the validation figures, the error estimate, the errors and the soundness verdict.
  void finish(const Model& model, const std::string& backend, SolveResult& result) {
    const MonitorVerdict& verdict = monitor_.verdict();
    if (!verdict.stop_reason.empty() && result.outcome.stop_reason == "monitor")
      result.outcome.stop_reason = verdict.stop_reason;
    // The final state's own verdict first; else the trainer's on the run.
    result.unsound = last_unsound_.empty() ? result.outcome.unsound : last_unsound_;
    if (monitor_.has_best() && verdict.best_cycle != last_cycle_) {
      model.set_parameters(monitor_.best());
      evaluate_grid(model);
      last_validation_ = validation_.assess(model.evaluate, model.gradient);
      errors_ = output_.errors_of(u_);
    }
    result.best_cycle = monitor_.has_best() ? verdict.best_cycle : -1;
    result.validation = last_validation_;
    result.errors = errors_;
    // With no sound state at all the final one is written, and the run is unsound.
    if (!monitor_.has_best() && result.unsound.empty())
      result.unsound = "no sound state was found at any report";
    result.error_estimate = estimate_relative_error(backend, config_, problem_, validation_,
                                                    output_.grid().points, u_);
  }

  // The monitor's memory of the regular reports, for the checkpoint, and its restoration on
  // resume.
  MonitorState<Params> monitor_state() const {
    return irregular_final_ ? before_final_ : monitor_.state();
  }
  void restore_monitor(const MonitorState<Params>& s) { monitor_.restore(s); }

  const std::vector<double>& u() const { return u_; }
  // The interior row's residual a·Δₛu + b·∇u + c·u − f on the grid (Δu − f for Poisson).
  const std::vector<double>& residual() const { return residual_; }

 private:
  // u, Δₛu (and ∇u when the rows need it) on the grid, and the residual there.
  void evaluate_grid(const Model& model) {
    const std::vector<double>& points = output_.grid().points;
    model.evaluate(points, u_, lap_);
    if (problem_.uses_gradient()) model.gradient(points, grad_);
    residual_.resize(u_.size());
    problem_.interior_residuals(points.data(), u_.size(), u_.data(), grad_.data(), lap_.data(),
                                residual_.data());
  }

  const Config& config_;
  const Problem& problem_;
  RunOutput& output_;
  ValidationSet validation_;
  RunMonitor<Params> monitor_;
  std::vector<double> u_, lap_, grad_, residual_;
  ValidationFigures last_validation_;
  std::string last_unsound_;
  long last_cycle_ = -1;
  std::function<bool(long)> regular_ =
      [every = std::max(1, config_.output.report_every)](long cycle) { return cycle % every == 0; };
  bool irregular_final_ = false;
  MonitorState<Params> before_final_;
  ErrorNorms errors_;
};

}  // namespace rbfpde
