// The MLP's run (model.type mlp): the counterpart of solve_rbf, writing the same outputs through
// RunOutput plus the MLP's model.yaml (no centres.vtp: an MLP has no centres).
#pragma once

#include <string>

#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/train/run_output.hpp"

namespace rbfpde {

// Trains the config's MLP on a resolved backend ("cpu" or "cuda") and writes the outputs. While
// the build has no CUDA MLP backend, "cuda" runs on the CPU with a note on the progress stream;
// the result's backend says where it ran.
SolveResult solve_mlp(const Config& config, const Problem& problem, const SolveOptions& options,
                      const std::string& backend);

}  // namespace rbfpde
