#include "solver/train/run_output.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <system_error>

#include "problems/errors.hpp"
#include "problems/space_time.hpp"
#include "solver/output/pictures.hpp"

namespace rbfpde {
namespace fs = std::filesystem;

namespace {

std::string format_g(double v, int digits = 3) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  return buf;
}

// YAML scalars of the resolved config become JSON numbers, booleans or strings.
Json yaml_to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    Json obj = Json::object();
    for (const auto& kv : node) obj.set(kv.first.as<std::string>(), yaml_to_json(kv.second));
    return obj;
  }
  if (node.IsSequence()) {
    Json arr = Json::array();
    for (const auto& item : node) arr.push(yaml_to_json(item));
    return arr;
  }
  if (!node.IsScalar()) return Json();
  const std::string s = node.Scalar();
  if (node.Tag() == "!") return Json(s);  // quoted in the YAML: a string even if it looks numeric
  if (s == "true") return Json(true);
  if (s == "false") return Json(false);
  char* end = nullptr;
  const long long i = std::strtoll(s.c_str(), &end, 10);
  if (!s.empty() && *end == '\0') return Json(i);
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0') return Json(d);
  return Json(s);
}

}  // namespace

RunOutput::RunOutput(const Config& config, const Problem& problem, const SolveOptions& options)
    : config_(config),
      problem_(problem),
      options_(options),
      comm_(options.comm ? options.comm : serial_communicator()),
      dir_(config.output.directory) {
  grid_ = make_evaluation_grid(problem.domain(), config.output.resolution);
  const std::size_t n = grid_.n_points();
  if (problem.has_exact()) {
    exact_.resize(n);
    problem.exact().evaluate(grid_.points.data(), n, exact_.data());
  }
}

namespace {

// output.directory cannot be created (or written into), and why: the config's error.
[[noreturn]] void output_directory_error(const Config& config, const std::string& why) {
  throw InputError(config.output.directory_loc, "output.directory",
                   "cannot create the directory \"" + config.output.directory + "\": " + why);
}

}  // namespace

std::string outputs_held(const SolveResult& result) {
  return result.best_cycle >= 0 ? "the best parameters found sound"
                                : "the final parameters: no report found a sound state";
}

void check_output_directory(const Config& config) {
  // The nearest part of the path that exists (the working directory for a relative path).
  std::error_code ec;
  fs::path existing = config.output.directory;
  while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
  const fs::path shown = existing;
  if (existing.empty()) existing = ".";
  if (!fs::is_directory(existing, ec))
    output_directory_error(config, "\"" + shown.string() + "\" is not a directory");
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    output_directory_error(config, "\"" + existing.string() + "\": " + std::strerror(errno));
}

void RunOutput::create_directory() const {
  if (!writes()) return;
  // A bad path (a file in the way, no permission) is the config's error, named by its key.
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!ec && !fs::is_directory(dir_, ec)) ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) output_directory_error(config_, ec.message());
}

void RunOutput::note(const std::string& text) const {
  if (writes() && options_.progress && !options_.quiet)
    *options_.progress << text << "\n" << std::flush;
}

std::vector<PointArray> RunOutput::solution_arrays(const std::vector<double>& u,
                                                   const std::vector<double>& residual) const {
  std::vector<PointArray> arrays;
  arrays.push_back({"u", 1, u});
  if (!exact_.empty()) {
    std::vector<double> err(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) err[i] = std::abs(u[i] - exact_[i]);
    arrays.push_back({"u_exact", 1, exact_});
    arrays.push_back({"error", 1, err});
  }
  arrays.push_back({"residual", 1, residual});
  return arrays;
}

ErrorNorms RunOutput::report(long cycle, double seconds, const LossParts& loss,
                             const ValidationFigures& validation, const std::vector<double>& u,
                             const std::vector<double>& residual, bool final) {
  const ErrorNorms e = exact_.empty() ? ErrorNorms{} : compute_errors(u, exact_);
  const bool history_due = final || cycle % std::max(1, config_.output.report_every) == 0;
  if (history_due)
    history_.add({cycle, seconds, loss.loss, loss.rms_interior, loss.rms_boundary, e.rel_l2, e.max,
                  validation.rms_interior, validation.rms_boundary});

  // Progress: redrawn at most 10 times a second on a terminal; otherwise a line per report but
  // no more than one a second, so that the log of a long run stays readable. The final line
  // always appears.
  if (history_due && writes() && options_.progress && !options_.quiet) {
    const double min_gap = options_.progress_is_terminal ? 0.1 : 1.0;
    if (final || !progress_printed_ || seconds - progress_last_ >= min_gap) {
      progress_printed_ = true;
      progress_last_ = seconds;
      std::ostringstream line;
      const double rate = seconds > 0 ? cycle / seconds : 0;
      // An MLP's L-BFGS iterations count as cycles after its Adam steps.
      const long total = config_.training.max_cycles +
                         (config_.model.type == "mlp" ? config_.training.lbfgs_iterations : 0);
      line << "cycle " << cycle << "/" << total << "  loss " << format_g(loss.loss)
           << "  validation " << format_g(validation.rms_interior) << "/"
           << format_g(validation.rms_boundary) << "  L2 error " << format_g(e.rel_l2) << "  "
           << std::fixed << std::setprecision(1) << seconds << " s";
      // Cycle 0 (variable projection's width search) has no rate.
      if (cycle > 0) line << "  " << std::setprecision(0) << rate << " cycles/s";
      std::ostream& os = *options_.progress;
      if (options_.progress_is_terminal) {
        os << "\r" << line.str() << "\033[K";
        if (final) os << "\n";
      } else {
        os << line.str() << "\n";
      }
      os << std::flush;
    }
  }

  const int every = config_.output.snapshot_every;
  if (writes() && vtk_available() && every > 0 && (cycle % every == 0 || final)) {
    char name[64];
    std::snprintf(name, sizeof name, "training_%06ld.vtu", cycle);
    if (snapshots_.empty() || snapshots_.back().second != name) {
      if (grid_.time_sliced()) {
        // A grid over space and time: the snapshot is its last time level (t = end).
        const std::size_t last = grid_.times.size() - 1;
        write_grid_vtu(dir_ / name, time_level(grid_, last),
                       time_level(grid_, last, solution_arrays(u, residual)));
      } else {
        write_grid_vtu(dir_ / name, grid_, solution_arrays(u, residual));
      }
      snapshots_.emplace_back(double(cycle), name);
      write_pvd(dir_ / "training.pvd", snapshots_);
    }
  }
  // A long run keeps its history on disk as it goes, so an interrupted run still has it.
  if (writes() && history_due && !final && history_.rows().size() % 10 == 0) write_history();
  return e;
}

void RunOutput::restore(const std::vector<HistoryCsv::Row>& rows, const Snapshots& snapshots) {
  history_ = HistoryCsv{};
  for (const auto& row : rows) history_.add(row);
  snapshots_ = snapshots;
}

void RunOutput::write_history() const {
  if (writes()) history_.flush(dir_ / "history.csv");
}

namespace {

// The array named `name` of solution.vtu's arrays (nullptr when there is none).
const std::vector<double>* array_named(const std::vector<PointArray>& arrays,
                                       const std::string& name) {
  for (const PointArray& a : arrays)
    if (a.name == name && a.components == 1) return &a.values;
  return nullptr;
}

}  // namespace

void RunOutput::write_pictures(const std::vector<PointArray>& arrays) const {
  if (!config_.output.pictures) return;
  if (!pictures_available()) {
    note("note: pictures not written: " + pictures_unavailable_reason());
    return;
  }
  try {
    write_curve_picture(dir_ / "convergence.png", config_.name + ": convergence",
                        convergence_panels(history_.rows()));
    // A grid over space and time is drawn at its last time level (t = end), as a grid of Ω.
    const bool sliced = grid_.time_sliced();
    const std::size_t last = sliced ? grid_.times.size() - 1 : 0;
    const EvaluationGrid grid = sliced ? time_level(grid_, last) : EvaluationGrid{};
    const std::vector<PointArray> level = sliced ? time_level(grid_, last, arrays) : arrays;
    const EvaluationGrid& drawn = sliced ? grid : grid_;
    const Domain& domain =
        sliced ? static_cast<const SpaceTimeDomain&>(problem_.domain()).space() : problem_.domain();
    std::vector<int> resolution = config_.output.resolution;
    if (sliced) resolution.pop_back();
    char when[48] = "";
    if (sliced) std::snprintf(when, sizeof when, " at t = %.6g", grid_.times[last]);
    const int dim = drawn.dim;
    if (dim != 2 && dim != 3) return;
    const std::vector<std::string> axes =
        dim == 2 ? std::vector<std::string>{"x", "y"} : std::vector<std::string>{"x", "y", "z"};
    const std::vector<double>* u = array_named(level, "u");
    const std::vector<double>* error = array_named(level, "error");
    const std::vector<double>* residual = array_named(level, "residual");
    if (u) {
      FieldPicture solution;
      solution.title = config_.name + ": u" + when;
      solution.colour_label = "u";
      solution.panels = grid_panels(domain, drawn, resolution, *u, axes);
      write_field_picture(dir_ / "solution.png", solution);
    }
    // Without an exact solution the error picture shows the PDE residual's magnitude.
    if (error || residual) {
      FieldPicture picture;
      picture.log_scale = true;
      std::vector<double> magnitude = error ? *error : *residual;
      for (double& v : magnitude) v = std::abs(v);
      picture.title =
          config_.name + (error ? ": |u - u_exact|" : ": |residual| (no exact solution)") + when;
      picture.colour_label = error ? "error" : "|residual|";
      picture.panels = grid_panels(domain, drawn, resolution, magnitude, axes);
      write_field_picture(dir_ / "error.png", picture);
    }
  } catch (const std::runtime_error& e) {
    note(std::string("note: pictures not written: ") + e.what());
  }
}

void RunOutput::write_solution(const std::vector<double>& u,
                               const std::vector<double>& residual) const {
  if (!writes()) return;
  write_pictures(solution_arrays(u, residual));
  if (!vtk_available()) {
    note(std::string("note: this build has no VTK: ") +
         (grid_.time_sliced() ? "solution.pvd" : "solution.vtu") +
         ", centres.vtp, collocation.vtp not written");
    return;
  }
  if (grid_.time_sliced())
    write_grid_series(dir_, "solution", grid_, solution_arrays(u, residual));
  else
    write_grid_vtu(dir_ / "solution.vtu", grid_, solution_arrays(u, residual));
}

void RunOutput::write_collocation(const CollocationBatch& batch, const std::vector<double>& e,
                                  const std::vector<double>& b) const {
  if (!writes() || !vtk_available()) return;
  std::vector<double> pts = batch.interior;
  pts.insert(pts.end(), batch.boundary.begin(), batch.boundary.end());
  std::vector<double> residual = e, target = batch.f, kind(e.size(), 0.0);
  residual.insert(residual.end(), b.begin(), b.end());
  target.insert(target.end(), batch.p.begin(), batch.p.end());
  kind.resize(residual.size(), 1.0);
  write_points_vtp(dir_ / "collocation.vtp", problem_.dim(), pts,
                   {{"residual", 1, residual}, {"target", 1, target}, {"boundary", 1, kind}});
}

void RunOutput::write_summary(const SolveResult& result, const Json& model_counts) const {
  if (!writes()) return;
  const TrainOutcome& o = result.outcome;
  Json summary = Json::object();
  summary.set("rbfpde_version", RBFPDE_VERSION);
  summary.set("name", config_.name);
  summary.set("config_file", config_.file);
  summary.set("model", result.model);
  summary.set("method", config_.training.method);
  summary.set("backend", result.backend);
  summary.set("device", result.device);
  summary.set("precision", result.precision);
  summary.set("ranks", result.ranks);
  Json devices = Json::array();
  for (const std::string& d : result.devices) devices.push(Json(d));
  if (result.devices.empty()) devices.push(Json(result.device));
  summary.set("devices", devices);
  summary.set("stop_reason", o.stop_reason);
  summary.set("diverged", o.diverged);
  if (o.diverged) {
    summary.set("divergence", o.divergence);
    summary.set("note", "training diverged; the outputs hold " + outputs_held(result));
  }
  summary.set("sound", result.unsound.empty() && !o.diverged);
  if (!result.unsound.empty()) {
    summary.set("unsound", result.unsound);
    if (!o.diverged)
      summary.set("note",
                  "the result failed a soundness check; the outputs hold " + outputs_held(result));
  }
  if (o.initial_width > 0) summary.set("initial_width", o.initial_width);
  summary.set("best_cycle", static_cast<long long>(result.best_cycle));
  summary.set("error_estimate", result.error_estimate);
  Json counts = model_counts;
  counts.set("dimension", problem_.dim());
  counts.set("parameters", result.parameters);
  counts.set("interior_points", config_.training.points_interior);
  counts.set("boundary_points", config_.training.points_boundary);
  counts.set("grid_points", static_cast<long long>(grid_.n_points()));
  counts.set("cycles", static_cast<long long>(o.cycles));
  summary.set("counts", counts);
  Json times = Json::object();
  times.set("total", o.seconds + result.seconds_output);
  times.set("training", o.seconds);
  times.set("sampling", o.times.sampling);
  times.set("upload", o.times.upload);
  times.set("gdcg", o.times.gdcg);
  times.set("gd", o.times.gd);
  times.set("weights", o.times.weights);
  times.set("lm", o.times.lm);
  times.set("lbfgs", o.times.lbfgs);
  times.set("report", o.times.report);
  times.set("output", result.seconds_output);
  summary.set("seconds", times);
  Json final = Json::object();
  final.set("loss", o.loss.loss);
  final.set("rms_interior_residual", o.loss.rms_interior);
  final.set("rms_boundary_residual", o.loss.rms_boundary);
  final.set("validation_rms_interior_residual", result.validation.rms_interior);
  final.set("validation_rms_boundary_residual", result.validation.rms_boundary);
  final.set("error_estimate", result.error_estimate);
  final.set("relative_l2_error", result.errors.rel_l2);
  final.set("max_error", result.errors.max);
  final.set("rmse", result.errors.rmse);
  summary.set("final", final);
  summary.set("config", yaml_to_json(YAML::Load(dump_config(config_))));
  write_file_atomic(dir_ / "summary.json", summary.dump() + "\n");
}

void RunOutput::print_result(const SolveResult& r) const {
  if (!writes() || !options_.out || options_.quiet) return;
  const TrainOutcome& o = r.outcome;
  std::ostream& os = *options_.out;
  os << config_.name << ": " << r.model << " (" << r.parameters << " parameters), "
     << config_.training.method << ", " << o.cycles << " cycles (" << o.stop_reason << "), "
     << std::fixed << std::setprecision(2) << o.seconds << " s on " << r.backend << " ("
     << r.device << ", " << r.precision << ")\n";
  os << "loss " << format_g(o.loss.loss) << ", validation residual " << format_g(r.validation.rms_interior)
     << " (interior), " << format_g(r.validation.rms_boundary) << " (boundary)\n";
  os << "estimated relative L2 error " << format_g(r.error_estimate) << "\n";
  if (!r.unsound.empty()) os << "unsound: " << r.unsound << "\n";
  if (!exact_.empty())
    os << "relative L2 error " << format_g(r.errors.rel_l2) << ", max error "
       << format_g(r.errors.max) << "\n";
  os << "output: " << dir_.string() << "/\n";
}

}  // namespace rbfpde
