// The typed, validated configuration (docs/config.md). load_config() reads a YAML file, applies
// --set overrides, checks every key and value, fills defaults, and either returns a Config or
// throws InputError with "file:line:column: key: expected ..., found ..." — before anything is
// written anywhere. configs/README.md documents every key and default listed here.
#pragma once

#include <string>
#include <vector>

#include "problems/errors.hpp"
#include "problems/problem.hpp"

namespace rbfpde {

struct ModelConfig {
  std::string type = "rbf";           // rbf | mlp
  int neurons = 64;                   // rbf
  std::string init_centres = "grid";  // grid | random
  double init_width = 1.5;            // multiple of the initial centre spacing
  bool init_width_auto = true;        // width: auto (varpro: the width search; else init_width)
  std::string init_from;              // a model.yaml to start from (centres, widths, weights)
  SourceLoc init_from_loc;
  std::vector<int> layers = {50, 50, 50, 50};  // mlp hidden widths
  std::string activation = "tanh";    // mlp: tanh | sin | sigmoid
};

struct TrainingConfig {
  std::string method = "varpro";  // varpro | gdcg | lm (rbf) · adam (mlp)
  int points_interior = 176;
  int points_boundary = 48;
  int resample_every = 1;       // cycles between fresh batches
  double penalty = 100;         // λ
  long max_cycles = 2000;
  double tolerance = 1e-10;     // stop when the validation loss falls below
  int patience = 0;             // cycles without a 1 % better validation loss before stopping
                                // (judged at reports), 0 = never
  double time_limit = 0;        // seconds, 0 = none
  int gd_steps = 1;
  double gd_learning_rate = 1.0;
  int cg_iterations = 50;
  double cg_tolerance = 1e-14;
  double lm_damping = 1e-2;     // initial μ
  // How μ moves between trial steps: "marquardt" (÷10 / ×10), "bracket", "nielsen" (from the
  // gain ratio) or "hybrid" (Marquardt's, then Nielsen's) (training_rules.hpp DampingRule)
  std::string lm_update = "hybrid";
  // varpro: how a trial step solves its weights, "preconditioned" (QR where that is not usable),
  // "qr", or "auto": preconditioned on the CUDA backend, QR on the CPU
  // (BackendOptions::vp_preconditioned_trials)
  std::string trial_weights = "auto";
  // varpro: how vp_prepare factors the features, "qr" (Householder QR each iteration) or "trial"
  // (the accepted preconditioned trial's factor where usable; BackendOptions::vp_factor_from_trial)
  std::string prepare_factor = "qr";
  int restarts = 0;             // varpro: neuron relocations allowed at stalls (default below)
  double adam_learning_rate = 1e-3;
  double adam_decay = 1.0;      // learning rate multiplier per 1000 steps
  int lbfgs_iterations = 0;     // mlp: L-BFGS iterations after Adam on one fixed batch, 0 = none
  int lbfgs_history = 10;       // (s, y) pairs L-BFGS keeps
  unsigned long long seed = 1;
};

struct ComputeConfig {
  std::string backend = "auto";      // auto | cpu | cuda
  std::string precision = "double";  // double | float
  SourceLoc backend_loc;             // where backend was set (for "no device" errors)
};

struct OutputConfig {
  std::string directory;             // default output/<name>
  SourceLoc directory_loc;           // where `directory` was set (the file alone when defaulted)
  std::vector<int> resolution;       // default_resolution(problem.dim, time)
  int snapshot_every = 0;            // cycles between training snapshots, 0 = none
  int report_every = 10;             // cycles between history rows / progress lines
  bool pictures = true;              // convergence.png, solution.png, error.png (with PLplot)
};

// output.resolution's default for points of `dim` coordinates (`time`: the last one is t):
// [101, 101] in 2D, [41, 41, 41] in 3D, [41, 41, 21] with 3 and time (2D space and 21 times),
// [21, 21, 21, 11] with 4 (3D space and 11 times).
std::vector<int> default_resolution(int dim, bool time = false);

struct Config {
  std::string file;  // the YAML file it came from
  std::string name;
  ProblemSpec problem;
  ModelConfig model;
  TrainingConfig training;
  ComputeConfig compute;
  OutputConfig output;
};

// Reads and validates `path`, then applies `overrides` ("key.path=value", as given to --set,
// YAML-parsed value) before validation. Throws InputError on any problem.
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});

// The same for config text already in memory; `path` names it in messages and sets the
// default name.
Config load_config_text(const std::string& text, const std::string& path,
                        const std::vector<std::string>& overrides = {});

// The resolved config (every key, defaults filled) as YAML text; load_config(dump) gives it back.
std::string dump_config(const Config& config);

}  // namespace rbfpde
