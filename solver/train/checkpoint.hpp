// Checkpoints: <output directory>/checkpoint/state.bin holds a run's whole training state
// (parameters, batch, random engine, LM damping, history so far) bit-exactly, so that
// `rbfpde solve CONFIG --resume` continues to the same numbers as an uninterrupted run.
// Written atomically at the end of every run, interrupted or not.
#pragma once

#include <filesystem>
#include <string>

#include "solver/train/rbf_trainer.hpp"
#include "solver/train/run_output.hpp"

namespace rbfpde {

template <class T>
struct Checkpoint {
  TrainerState<T> state;
  std::vector<HistoryCsv::Row> history;
  RunOutput::Snapshots snapshots;
  std::string config_dump;  // dump_config of the run that wrote it
};

std::filesystem::path checkpoint_path(const Config& config);

// An empty checkpoint stamped with `config`'s identity; the caller fills state and history.
template <class T>
Checkpoint<T> new_checkpoint(const Config& config);

template <class T>
void write_checkpoint(const std::filesystem::path& path, const Checkpoint<T>& checkpoint);

// Reads a checkpoint of precision T. Throws InputError naming the file when it is missing,
// torn, of the other precision, or of a run whose config differs from `config` in anything
// but the stopping rules and reporting.
template <class T>
Checkpoint<T> read_checkpoint(const std::filesystem::path& path, const Config& config);

}  // namespace rbfpde
