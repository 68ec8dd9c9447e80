// One `rbfpde solve`: choose the backend, initialise the model, train, report progress, and
// write every output of docs/outputs.md into the output directory.
#pragma once

#include <string>

#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/run_output.hpp"

namespace rbfpde {

// The backend `auto` resolves to on this machine: "cuda" when a device is present, else "cpu".
std::string resolve_backend(const std::string& requested);

// Trains the config's model and writes the outputs. Throws InputError for a backend that
// cannot be had here.
SolveResult solve(const Config& config, const Problem& problem, const SolveOptions& options);

// The RBF network's run (model.type rbf) on a resolved backend ("cpu" or "cuda").
SolveResult solve_rbf(const Config& config, const Problem& problem, const SolveOptions& options,
                      const std::string& backend);

}  // namespace rbfpde
