// What every model's run leaves behind, written the same way for the RBF network and the MLP:
// the evaluation grid with the exact solution on it, reports (history rows, progress line,
// snapshots), solution.vtu (solution.pvd and its series with time), collocation.vtp and
// summary.json. The model-specific files (centres.vtp, model.yaml) are written by the model's own
// solve.
#pragma once

#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/output/output.hpp"
#include "solver/train/error_norms.hpp"
#include "solver/train/rbf_trainer.hpp"
#include "solver/train/validation.hpp"

namespace rbfpde {

struct SolveOptions {
  bool quiet = false;
  std::ostream* out = nullptr;        // final results (stdout); nullptr = none
  std::ostream* progress = nullptr;   // progress lines and notes (stderr); nullptr = none
  bool progress_is_terminal = false;  // redraw one line instead of printing a line per report
  bool resume = false;                // continue from <output directory>/checkpoint
  std::function<bool()> should_stop;  // polled after every cycle (SIGINT/SIGTERM); may be empty
  // The ranks of a distributed run (null: one process). Rank 0 alone writes files and prints.
  std::shared_ptr<Communicator> comm;
};

struct SolveResult {
  std::string model;      // rbf | mlp
  std::string backend;    // cpu | cuda
  std::string device;
  std::string precision;  // double | float
  long long parameters = 0;
  TrainOutcome outcome;
  ErrorNorms errors;      // on the evaluation grid (NaN without an exact solution)
  ValidationFigures validation;  // of the state written
  double error_estimate = std::numeric_limits<double>::quiet_NaN();  // residual-based
  long best_cycle = -1;   // the report whose state was written (-1: the final state)
  std::string unsound;    // why the result failed the soundness checks ("" when sound)
  double seconds_output = 0;
  std::string directory;
  int exit_code = 0;      // 0, or 3 when training diverged or the result is unsound
  int ranks = 1;          // processes of the run
  std::vector<std::string> devices;  // each rank's device, in rank order
};

// What the outputs of a diverged or unsound result hold: "the best parameters found sound", or
// the final parameters when no report's state was sound (best_cycle −1).
std::string outputs_held(const SolveResult& result);

// Before a run starts: output.directory must be creatable, or writable when it exists. A path
// component that is a file, or no write permission on the nearest existing directory, is the
// config's error (InputError on output.directory). Creates nothing.
void check_output_directory(const Config& config);

class RunOutput {
 public:
  // Builds the evaluation grid and evaluates f and the exact solution on it; creates nothing.
  RunOutput(const Config& config, const Problem& problem, const SolveOptions& options);

  const EvaluationGrid& grid() const { return grid_; }
  const std::filesystem::path& directory() const { return dir_; }
  // Creates the output directory (call once the run is about to produce something).
  void create_directory() const;

  // One report from u and the interior row's residual (Δu − f for Poisson) on the grid points: a
  // history row and progress line every
  // report_every cycles, a snapshot every snapshot_every cycles, both at the end. Returns the error norms (NaN without an exact solution).
  ErrorNorms report(long cycle, double seconds, const LossParts& loss,
                    const ValidationFigures& validation, const std::vector<double>& u,
                    const std::vector<double>& residual, bool final);

  // The error norms of u on the grid against the exact solution (NaN without one).
  ErrorNorms errors_of(const std::vector<double>& u) const {
    return exact_.empty() ? ErrorNorms{} : compute_errors(u, exact_);
  }

  // The run's communicator (the serial one for a single process), and whether this process
  // writes the outputs: rank 0 alone does.
  Communicator& comm() const { return *comm_; }
  bool writes() const { return comm_->rank() == 0; }

  // Notes on the progress stream (not with --quiet).
  void note(const std::string& text) const;

  // Final files: history.csv, solution.vtu (with time: solution.pvd, solution_NNNN.vtu),
  // collocation.vtp (each skipped without VTK, with a note), summary.json; then the result lines on
  // options.out.
  void write_history() const;
  // Also draws the pictures (convergence.png; solution.png and error.png of a 2D or 3D problem)
  // unless output.pictures is false; a build without PLplot notes that it draws none.
  void write_solution(const std::vector<double>& u, const std::vector<double>& residual) const;
  void write_collocation(const CollocationBatch& batch, const std::vector<double>& e,
                         const std::vector<double>& b) const;
  // summary.json; `model_counts` adds model-specific entries to "counts" (e.g. neurons, layers).
  void write_summary(const SolveResult& result, const Json& model_counts) const;
  void print_result(const SolveResult& result) const;

  // What a checkpoint keeps of the reports so far, and its restoration on resume.
  using Snapshots = std::vector<std::pair<double, std::string>>;
  const std::vector<HistoryCsv::Row>& history_rows() const { return history_.rows(); }
  const Snapshots& snapshots() const { return snapshots_; }
  void restore(const std::vector<HistoryCsv::Row>& rows, const Snapshots& snapshots);

 private:
  std::vector<PointArray> solution_arrays(const std::vector<double>& u,
                                          const std::vector<double>& residual) const;
  void write_pictures(const std::vector<PointArray>& arrays) const;

  const Config& config_;
  const Problem& problem_;
  const SolveOptions& options_;
  std::shared_ptr<Communicator> comm_;
  std::filesystem::path dir_;
  EvaluationGrid grid_;
  std::vector<double> exact_;
  HistoryCsv history_;
  std::vector<std::pair<double, std::string>> snapshots_;
  bool progress_printed_ = false;
  double progress_last_ = 0;
};

}  // namespace rbfpde
