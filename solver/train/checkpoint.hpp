// Checkpoints: <output directory>/checkpoint/state.bin holds a run's whole training state
// bit-exactly, so that `rbfpde solve CONFIG --resume` continues to the same numbers as an
// uninterrupted run: for the RBF network its TrainerState (parameters, batch, random engine, LM
// damping, restarts so far), for the MLP its MlpTrainerState (parameters, Adam moments and step
// count, batch, random engine, and in the L-BFGS stage the minimiser's iterate and curvature
// pairs), each with the history so far and the validation monitor's memory (the best sound
// state, the plateau and slow rules' counters). Written atomically at the end of every run,
// interrupted or not.
//
// Layout: "RBFCKPT6", the model ("rbf" | "mlp"), the scalar's size, the config's identity, the
// state (its batch with the rows' coefficients), the history rows, the snapshots, the monitor's
// state; for a run of several ranks, then the rank count and ranks 1…'s random engines and
// batches (a single-process run writes nothing more). Formats 1 (RBF only, no model field), 2
// (no restart count: 0), 3 (no coefficients: refilled from the problem), 4 (no damping history)
// and 5 (no monitor state: the resumed run's monitor starts afresh) are still read. Rank 0
// writes; resuming needs the same rank count.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "solver/train/mlp_trainer.hpp"
#include "solver/train/rbf_trainer.hpp"
#include "solver/train/run_output.hpp"
#include "solver/train/validation.hpp"

namespace rbfpde {

// State: TrainerState<T> (RBF) or MlpTrainerState<T> (MLP), T double or float.
template <class State>
struct Checkpoint {
  State state;
  std::vector<HistoryCsv::Row> history;
  RunOutput::Snapshots snapshots;
  MonitorState<decltype(State::params)> monitor;
  std::string config_dump;  // the resume identity of the run that wrote it
  // A distributed run's ranks, and the random engine and batch of ranks 1… (rank 0's are in
  // `state`), each serialised as the checkpoint stores them.
  int ranks = 1;
  std::vector<std::string> rank_parts;
  char format = 0;  // the format digit of the file it was read from (0: not read from a file)
};

std::filesystem::path checkpoint_path(const Config& config);

// An empty checkpoint stamped with `config`'s identity; the caller fills state and history.
template <class State>
Checkpoint<State> new_checkpoint(const Config& config);

template <class State>
void write_checkpoint(const std::filesystem::path& path, const Checkpoint<State>& checkpoint);

// Reads a checkpoint of State's model and precision. Throws InputError naming the file when it
// is missing, torn, of the other model or precision, or of a run whose config differs from
// `config` in anything but the stopping rules and reporting.
template <class State>
Checkpoint<State> read_checkpoint(const std::filesystem::path& path, const Config& config);

// The two ends of a resumable run, as every model's solve does them: read config's checkpoint
// and put its reports back into `output` (before anything is written) ...
template <class State>
Checkpoint<State> resume_run(const Config& config, RunOutput& output);
// ... and write the checkpoint of a run that ended in `state`, with the reports and the monitor's
// state a resumed run continues from.
template <class State>
void save_run(const Config& config, const RunOutput& output, State state,
              MonitorState<decltype(State::params)> monitor);

// The end of every model's solve, after history, model and solution are written:
// collocation.vtp with the last batch's residuals, the checkpoint, the output time (from
// output_start) and exit code, summary.json with `model_counts`, and the result lines.
template <class State, class T>
void finish_run(const Config& config, RunOutput& output, const CollocationBatch& batch,
                const std::vector<T>& e, const std::vector<T>& b, State state,
                MonitorState<decltype(State::params)> monitor,
                std::chrono::steady_clock::time_point output_start, const Json& model_counts,
                SolveResult& result) {
  output.write_collocation(batch, std::vector<double>(e.begin(), e.end()),
                           std::vector<double>(b.begin(), b.end()));
  save_run(config, output, std::move(state), std::move(monitor));
  result.seconds_output =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - output_start).count();
  result.exit_code = result.outcome.diverged || !result.unsound.empty() ? 3 : 0;
  output.write_summary(result, model_counts);
  output.print_result(result);
}

}  // namespace rbfpde
