#include "solver/train/solve.hpp"

#include <yaml-cpp/yaml.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "solver/train/model_file.hpp"
#include "solver/train/rbf_model.hpp"

namespace rbfpde {
namespace fs = std::filesystem;

std::string resolve_backend(const std::string& requested) {
  if (requested == "auto") return cuda_device_available() ? "cuda" : "cpu";
  return requested;
}

namespace {

using Clock = std::chrono::steady_clock;

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

// Everything a report needs that does not change during training: the evaluation grid and
// the exact solution and right-hand side on it.
struct GridFields {
  EvaluationGrid grid;
  std::vector<double> exact, f;
  bool has_exact = false;
};

GridFields make_grid_fields(const Config& config, const Problem& problem) {
  GridFields g;
  g.grid = make_evaluation_grid(problem.domain(), config.output.resolution);
  const std::size_t n = g.grid.n_points();
  g.f.resize(n);
  problem.f().evaluate(g.grid.points.data(), n, g.f.data());
  if (problem.has_exact()) {
    g.has_exact = true;
    g.exact.resize(n);
    problem.exact().evaluate(g.grid.points.data(), n, g.exact.data());
  }
  return g;
}

// Progress: one redrawn line on a terminal, a line per report otherwise, nothing when quiet.
class Progress {
 public:
  Progress(const SolveOptions& o, long max_cycles) : o_(o), max_cycles_(max_cycles) {}
  void note(const std::string& text) const {
    if (o_.progress && !o_.quiet) *o_.progress << text << "\n" << std::flush;
  }
  // Redrawn at most 10 times a second on a terminal; otherwise a line per report interval but
  // no more than one a second, so that a log of a long run stays readable. The final line
  // always appears.
  void update(long cycle, double seconds, double loss, double err, bool final) {
    if (!o_.progress || o_.quiet) return;
    const double min_gap = o_.progress_is_terminal ? 0.1 : 1.0;
    if (!final && printed_ && seconds - last_ < min_gap) return;
    printed_ = true;
    last_ = seconds;
    std::ostringstream line;
    const double rate = seconds > 0 ? cycle / seconds : 0;
    line << "cycle " << cycle << "/" << max_cycles_ << "  loss " << format_g(loss)
         << "  L2 error " << format_g(err) << "  " << std::fixed << std::setprecision(1) << seconds
         << " s  " << std::setprecision(0) << rate << " cycles/s";
    if (o_.progress_is_terminal) {
      *o_.progress << "\r" << line.str() << "\033[K";
      if (final) *o_.progress << "\n";
    } else {
      *o_.progress << line.str() << "\n";
    }
    *o_.progress << std::flush;
  }

 private:
  const SolveOptions& o_;
  long max_cycles_;
  bool printed_ = false;
  double last_ = 0;
};

template <class T>
std::unique_ptr<RbfBackend<T>> make_backend(const std::string& which, const BackendOptions& opt) {
  if (which == "cuda") return make_cuda_backend<T>(opt);
  return make_cpu_backend<T>(opt);
}

template <class T>
SolveResult solve_rbf(const Config& config, const Problem& problem, const SolveOptions& options,
                      const std::string& backend_name) {
  SolveResult result;
  result.backend = backend_name;
  result.precision = config.compute.precision;
  result.directory = config.output.directory;
  const fs::path dir(config.output.directory);
  Progress progress(options, config.training.max_cycles);

  BackendOptions bopt;
  bopt.dim = problem.dim();
  bopt.penalty = config.training.penalty;
  bopt.min_width = minimum_width(problem.domain());
  std::unique_ptr<RbfBackend<T>> backend = make_backend<T>(backend_name, bopt);
  result.device = backend->device_name();

  Rng init_rng(config.training.seed ^ 0x9e3779b97f4a7c15ULL);
  const RbfInit init = initial_rbf_parameters(problem.domain(), config.model, init_rng);
  const GridFields fields = make_grid_fields(config, problem);

  fs::create_directories(dir);
  HistoryCsv history;
  std::vector<std::pair<double, std::string>> snapshots;
  std::vector<double> u, lap;

  auto grid_errors = [&](RbfBackend<T>& be) {
    be.evaluate(fields.grid.points, u, lap);
    return fields.has_exact ? compute_errors(u, fields.exact) : ErrorNorms{};
  };
  auto solution_arrays = [&]() {
    std::vector<PointArray> arrays;
    arrays.push_back({"u", 1, u});
    if (fields.has_exact) {
      std::vector<double> err(u.size());
      for (std::size_t i = 0; i < u.size(); ++i) err[i] = std::abs(u[i] - fields.exact[i]);
      arrays.push_back({"u_exact", 1, fields.exact});
      arrays.push_back({"error", 1, err});
    }
    std::vector<double> res(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) res[i] = lap[i] - fields.f[i];
    arrays.push_back({"residual", 1, res});
    return arrays;
  };
  const bool vtk = vtk_available();

  RbfTrainer<T> trainer(config, problem, *backend);
  const ReportFn<T> report = [&](long cycle, double seconds, const LossParts& loss,
                                 RbfBackend<T>& be, bool final) {
    const ErrorNorms e = grid_errors(be);
    history.add({cycle, seconds, loss.loss, loss.rms_interior, loss.rms_boundary, e.rel_l2, e.max});
    progress.update(cycle, seconds, loss.loss, e.rel_l2, final);
    const int every = config.output.snapshot_every;
    if (vtk && every > 0 && (cycle % every == 0 || final)) {
      char name[64];
      std::snprintf(name, sizeof name, "training_%06ld.vtu", cycle);
      if (snapshots.empty() || snapshots.back().second != name) {
        write_grid_vtu(dir / name, fields.grid, solution_arrays());
        snapshots.emplace_back(double(cycle), name);
        write_pvd(dir / "training.pvd", snapshots);
      }
    }
    if (!final && cycle % (10 * config.output.report_every) == 0) history.flush(dir / "history.csv");
    return true;
  };
  result.outcome = trainer.train(init.params, report);

  // Outputs. The grid fields u and lap were left by the final report.
  const auto t0 = Clock::now();
  result.errors = grid_errors(*backend);
  history.flush(dir / "history.csv");
  const RbfParameters<T> params = backend->parameters();
  write_model_yaml(dir / "model.yaml", params, config, backend_name);
  if (vtk) {
    write_grid_vtu(dir / "solution.vtu", fields.grid, solution_arrays());
    std::vector<double> centres(params.centres.begin(), params.centres.end());
    write_points_vtp(dir / "centres.vtp", problem.dim(), centres,
                     {{"width", 1, std::vector<double>(params.widths.begin(), params.widths.end())},
                      {"weight", 1, std::vector<double>(params.weights.begin(), params.weights.end())}});
    std::vector<T> e, b;
    backend->residual_vectors(e, b);
    const CollocationBatch& batch = trainer.batch();
    std::vector<double> pts = batch.interior;
    pts.insert(pts.end(), batch.boundary.begin(), batch.boundary.end());
    std::vector<double> residual(e.begin(), e.end()), target = batch.f, kind(e.size(), 0.0);
    residual.insert(residual.end(), b.begin(), b.end());
    target.insert(target.end(), batch.p.begin(), batch.p.end());
    kind.resize(residual.size(), 1.0);
    write_points_vtp(dir / "collocation.vtp", problem.dim(), pts,
                     {{"residual", 1, residual}, {"target", 1, target}, {"boundary", 1, kind}});
  } else {
    progress.note("note: this build has no VTK: solution.vtu, centres.vtp, collocation.vtp not written");
  }
  result.seconds_output = std::chrono::duration<double>(Clock::now() - t0).count();
  result.exit_code = result.outcome.diverged ? 3 : 0;

  const TrainOutcome& o = result.outcome;
  Json summary = Json::object();
  summary.set("rbfpde_version", RBFPDE_VERSION);
  summary.set("name", config.name);
  summary.set("config_file", config.file);
  summary.set("model", "rbf");
  summary.set("method", config.training.method);
  summary.set("backend", backend_name);
  summary.set("device", result.device);
  summary.set("precision", config.compute.precision);
  summary.set("stop_reason", o.stop_reason);
  summary.set("diverged", o.diverged);
  if (o.diverged)
    summary.set("note", "training diverged; outputs hold the last parameters whose loss was finite");
  Json counts = Json::object();
  counts.set("dimension", problem.dim());
  counts.set("neurons", params.neurons());
  counts.set("parameters", static_cast<long long>(params.size()));
  counts.set("interior_points", config.training.points_interior);
  counts.set("boundary_points", config.training.points_boundary);
  counts.set("grid_points", static_cast<long long>(fields.grid.n_points()));
  counts.set("cycles", static_cast<long long>(o.cycles));
  summary.set("counts", counts);
  Json times = Json::object();
  times.set("total", o.seconds + result.seconds_output);
  times.set("training", o.seconds);
  times.set("sampling", o.times.sampling);
  times.set("upload", o.times.upload);
  times.set("gd", o.times.gd);
  times.set("weights", o.times.weights);
  times.set("lm", o.times.lm);
  times.set("report", o.times.report);
  times.set("output", result.seconds_output);
  summary.set("seconds", times);
  Json final = Json::object();
  final.set("loss", o.loss.loss);
  final.set("rms_interior_residual", o.loss.rms_interior);
  final.set("rms_boundary_residual", o.loss.rms_boundary);
  final.set("relative_l2_error", result.errors.rel_l2);
  final.set("max_error", result.errors.max);
  final.set("rmse", result.errors.rmse);
  summary.set("final", final);
  summary.set("config", yaml_to_json(YAML::Load(dump_config(config))));
  write_file_atomic(dir / "summary.json", summary.dump() + "\n");

  if (options.out && !options.quiet) {
    std::ostream& os = *options.out;
    os << config.name << ": " << config.training.method << ", " << params.neurons() << " neurons, "
       << o.cycles << " cycles (" << o.stop_reason << "), " << std::fixed << std::setprecision(2)
       << o.seconds << " s on " << backend_name << " (" << result.device << ", "
       << config.compute.precision << ")\n";
    os << "loss " << format_g(o.loss.loss) << "\n";
    if (fields.has_exact)
      os << "relative L2 error " << format_g(result.errors.rel_l2) << ", max error "
         << format_g(result.errors.max) << "\n";
    os << "output: " << dir.string() << "/\n";
  }
  return result;
}

}  // namespace

SolveResult solve(const Config& config, const Problem& problem, const SolveOptions& options) {
  const std::string backend = resolve_backend(config.compute.backend);
  if (backend == "cuda" && !cuda_device_available())
    throw InputError(SourceLoc{config.file, 0, 0}, "compute.backend",
                     "cuda was asked for, but no CUDA device is present (use auto or cpu)");
  if (config.compute.backend == "auto" && backend == "cpu" && options.progress && !options.quiet)
    *options.progress << "note: no CUDA device found: running on the CPU\n";
  if (config.compute.precision == "float") return solve_rbf<float>(config, problem, options, backend);
  return solve_rbf<double>(config, problem, options, backend);
}

}  // namespace rbfpde
