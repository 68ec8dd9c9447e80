// `rbfpde compare A.yaml B.yaml …`: every config is loaded and its problem built first (a bad
// config fails before anything runs), then each is solved in turn with solve(), and the results
// are set side by side: a table on `table_out` and a CSV file,
//   <parent of the first config's output.directory>/comparison_<nameA>_vs_<nameB>[_vs_…].csv
// (output/comparison_poisson2d_seed_vs_poisson2d_seed_mlp.csv for the shipped configs), and
// beside it the same name with .png: the runs' error (or loss) against training time.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "solver/config/config.hpp"
#include "solver/output/pictures.hpp"
#include "solver/train/run_output.hpp"

namespace rbfpde {

struct ComparisonRow {
  std::string name;    // the config's name
  std::string method;  // training.method
  SolveResult result;
};

// The table (fixed-width columns: config, model, method, parameters, backend, precision, cycles,
// training time, loss, relative L2 error, max error) and the CSV text of the same rows.
std::string comparison_table(const std::vector<ComparisonRow>& rows);
std::string comparison_csv(const std::vector<ComparisonRow>& rows);
// The comparison picture's one panel: every run's relative L2 error against training time, or its
// loss when any run has no error (no exact solution); `histories` are the runs' history rows.
std::vector<CurvePanel> comparison_panels(
    const std::vector<std::string>& names,
    const std::vector<std::vector<HistoryCsv::Row>>& histories);
// Where the CSV goes for these configs (see above); the picture goes beside it, as .png.
std::filesystem::path comparison_csv_path(const std::vector<Config>& configs);

// Applies `overrides` (--set) to every config. Throws InputError when a config is bad, when
// fewer than two are given, or when two would write into the same output directory. Returns the
// exit code: 3 when any run diverged, else 0.
int run_compare(const std::vector<std::string>& config_files,
                const std::vector<std::string>& overrides, const SolveOptions& options,
                std::ostream& table_out);

}  // namespace rbfpde
