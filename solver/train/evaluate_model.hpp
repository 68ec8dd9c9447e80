// `rbfpde eval` (docs/outputs.md, "rbfpde eval"): a trained model.yaml (RBF network or MLP)
// evaluated on the CPU backend at the points of a file or on the evaluation grid of its domain,
// written as .vtu, .vtp or .csv.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace rbfpde {

struct EvalRequest {
  std::string model_file;
  std::string points_file;      // .csv, .vtu or .vtp; empty: the evaluation grid
  std::vector<int> resolution;  // the grid's points per axis; empty: the default for the dimension
  std::string output_file;      // .vtu, .vtp or .csv
  bool gradient = false;        // add grad_u
  bool laplacian = false;       // add laplacian_u
};

// What eval wrote.
struct EvalSummary {
  std::size_t points = 0;
  std::vector<std::string> arrays;  // the arrays' names, in the file's order
};

// Reads the model, the points and (when the model file records it) the problem; evaluates u and
// the asked derivatives, and with the problem f's residual, u_exact and error; writes the output
// atomically. Every bad input (missing or unreadable file, wrong columns, a dimension that is not
// the model's, an unknown extension, both --points and --resolution) throws InputError before
// anything is written.
EvalSummary evaluate_model(const EvalRequest& request);

}  // namespace rbfpde
