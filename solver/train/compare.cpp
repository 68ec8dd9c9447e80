#include "solver/train/compare.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "problems/errors.hpp"
#include "solver/output/output.hpp"
#include "solver/output/pictures.hpp"
#include "solver/train/solve.hpp"

namespace rbfpde {
namespace fs = std::filesystem;

namespace {

std::string sci(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

std::string fixed2(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// A CSV field, quoted when it holds a separator or a quote (device names may).
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(double v) {
  if (std::isnan(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::string comparison_table(const std::vector<ComparisonRow>& rows) {
  std::vector<std::vector<std::string>> cells = {{"config", "model", "method", "parameters",
                                                  "backend", "precision", "cycles", "time [s]",
                                                  "loss", "rel. L2 error", "max error"}};
  for (const ComparisonRow& r : rows) {
    const SolveResult& s = r.result;
    cells.push_back({r.name, s.model, r.method, std::to_string(s.parameters), s.backend,
                     s.precision,
                     std::to_string(s.outcome.cycles) + (s.outcome.diverged ? " (diverged)" : ""),
                     fixed2(s.outcome.seconds), sci(s.outcome.loss.loss), sci(s.errors.rel_l2),
                     sci(s.errors.max)});
  }
  std::vector<std::size_t> width(cells[0].size(), 0);
  for (const auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::ostringstream os;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      // Text left-aligned, numbers (from "parameters" on, but backend/precision) right-aligned.
      const bool right = c == 3 || c >= 6;
      const std::string pad(width[c] - row[c].size(), ' ');
      line += right ? pad + row[c] : row[c] + pad;
      if (c + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
  return os.str();
}

std::string comparison_csv(const std::vector<ComparisonRow>& rows) {
  std::ostringstream os;
  os << "name,model,method,parameters,backend,device,precision,cycles,stop_reason,"
        "training_seconds,loss,rel_l2_error,max_error,rmse,output_directory\n";
  for (const ComparisonRow& r : rows) {
    const SolveResult& s = r.result;
    os << csv_field(r.name) << "," << s.model << "," << r.method << "," << s.parameters << ","
       << s.backend << "," << csv_field(s.device) << "," << s.precision << "," << s.outcome.cycles
       << "," << s.outcome.stop_reason << "," << csv_number(s.outcome.seconds) << ","
       << csv_number(s.outcome.loss.loss) << "," << csv_number(s.errors.rel_l2) << ","
       << csv_number(s.errors.max) << "," << csv_number(s.errors.rmse) << ","
       << csv_field(s.directory) << "\n";
  }
  return os.str();
}

std::vector<CurvePanel> comparison_panels(
    const std::vector<std::string>& names,
    const std::vector<std::vector<HistoryCsv::Row>>& histories) {
  bool every_run_has_error = !histories.empty();
  for (const auto& rows : histories) {
    bool any = false;
    for (const auto& r : rows) any = any || std::isfinite(r.rel_l2_error);
    every_run_has_error = every_run_has_error && any;
  }
  CurvePanel panel;
  panel.xlabel = "training time [s]";
  panel.log_x = true;  // runs of one comparison often differ in time by orders of magnitude
  panel.ylabel = every_run_has_error ? "relative L2 error" : "loss";
  for (std::size_t i = 0; i < histories.size(); ++i) {
    Curve curve;
    curve.label = i < names.size() ? names[i] : "run " + std::to_string(i + 1);
    for (const auto& r : histories[i]) {
      curve.x.push_back(r.seconds);
      curve.y.push_back(every_run_has_error ? r.rel_l2_error : r.loss);
    }
    panel.curves.push_back(std::move(curve));
  }
  return {panel};
}

fs::path comparison_csv_path(const std::vector<Config>& configs) {
  std::string name = "comparison";
  for (std::size_t i = 0; i < configs.size(); ++i) name += (i ? "_vs_" : "_") + configs[i].name;
  fs::path parent = fs::path(configs.at(0).output.directory).lexically_normal().parent_path();
  if (parent.empty()) parent = ".";
  return parent / (name + ".csv");
}

int run_compare(const std::vector<std::string>& config_files,
                const std::vector<std::string>& overrides, const SolveOptions& options,
                std::ostream& table_out) {
  if (config_files.size() < 2)
    throw InputError("compare: expected at least two config files, found " +
                     std::to_string(config_files.size()));
  // Every config and problem is checked before the first run: a typo in the second file must
  // not cost the first run's training time.
  std::vector<Config> configs;
  std::vector<Problem> problems;
  for (const std::string& file : config_files) {
    configs.push_back(load_config(file, overrides));
    problems.push_back(Problem::build(configs.back().problem));
  }
  for (std::size_t i = 0; i < configs.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (fs::path(configs[i].output.directory).lexically_normal() ==
          fs::path(configs[j].output.directory).lexically_normal())
        throw InputError(configs[i].output.directory_loc, "output.directory",
                         "writes into \"" + configs[i].output.directory + "\", as " +
                             configs[j].file +
                             " does; give the runs different names or "
                             "output directories");
  for (const Config& config : configs) check_output_directory(config);

  std::vector<ComparisonRow> rows;
  int exit_code = 0;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ComparisonRow row;
    row.name = configs[i].name;
    // The MLP's L-BFGS stage (training.lbfgs) is part of its method: "adam+lbfgs".
    row.method = configs[i].training.method;
    if (configs[i].model.type == "mlp" && configs[i].training.lbfgs_iterations > 0)
      row.method += "+lbfgs";
    row.result = solve(configs[i], problems[i], options);
    if (row.result.exit_code != 0) exit_code = row.result.exit_code;
    rows.push_back(std::move(row));
  }
  const fs::path csv = comparison_csv_path(configs);
  if (!csv.parent_path().empty()) fs::create_directories(csv.parent_path());
  write_file_atomic(csv, comparison_csv(rows));
  table_out << comparison_table(rows) << "comparison: " << csv.string() << "\n" << std::flush;

  // The picture: every run's error (or loss, when a run has no exact solution) against time,
  // from the history.csv each run wrote. Pictures are off when any config turns them off.
  bool pictures = true;
  for (const Config& config : configs) pictures = pictures && config.output.pictures;
  if (pictures) {
    fs::path png = csv;
    png.replace_extension(".png");
    try {
      if (!pictures_available()) throw std::runtime_error(pictures_unavailable_reason());
      std::vector<std::string> names;
      std::vector<std::vector<HistoryCsv::Row>> histories;
      for (const ComparisonRow& row : rows) {
        names.push_back(row.name);
        histories.push_back(read_history_csv(fs::path(row.result.directory) / "history.csv"));
      }
      std::string title;
      for (const std::string& name : names) title += (title.empty() ? "" : " vs ") + name;
      write_curve_picture(png, title, comparison_panels(names, histories));
      table_out << "comparison picture: " << png.string() << "\n" << std::flush;
    } catch (const std::runtime_error& e) {
      if (options.progress && !options.quiet)
        *options.progress << "note: comparison picture not written: " << e.what() << "\n";
    }
  }
  return exit_code;
}

}  // namespace rbfpde
