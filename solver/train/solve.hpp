// One `rbfpde solve`: choose the backend, initialise the network, train, report progress, and
// write every output of DESIGN.md §4 into the output directory.
#pragma once

#include <iosfwd>
#include <string>

#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/output/output.hpp"
#include "solver/train/error_norms.hpp"
#include "solver/train/rbf_trainer.hpp"

namespace rbfpde {

struct SolveOptions {
  bool quiet = false;
  std::ostream* out = nullptr;       // final results (stdout); nullptr = none
  std::ostream* progress = nullptr;  // progress lines and notes (stderr); nullptr = none
  bool progress_is_terminal = false; // redraw one line instead of printing a line per report
};

struct SolveResult {
  std::string backend;    // cpu | cuda
  std::string device;
  std::string precision;  // double | float
  TrainOutcome outcome;
  ErrorNorms errors;      // on the evaluation grid (NaN without an exact solution)
  double seconds_output = 0;
  std::string directory;
  int exit_code = 0;      // 0, or 3 when training diverged
};

// The backend `auto` resolves to on this machine: "cuda" when a device is present, else "cpu".
std::string resolve_backend(const std::string& requested);

// Trains and writes the outputs. Throws InputError for a backend that cannot be had here.
SolveResult solve(const Config& config, const Problem& problem, const SolveOptions& options);

}  // namespace rbfpde
