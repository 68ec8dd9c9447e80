#include "solver/train/evaluate_model.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "kernels/backend.hpp"
#include "kernels/mlp_backend.hpp"
#include "problems/errors.hpp"
#include "problems/problem.hpp"
#include "solver/config/config.hpp"
#include "solver/output/output.hpp"
#include "solver/train/mlp_model.hpp"
#include "solver/train/model_file.hpp"

namespace rbfpde {
namespace fs = std::filesystem;

namespace {

// A model reduced to what eval needs of it.
struct LoadedModel {
  int dim = 2;
  std::function<void(const std::vector<double>&, std::vector<double>&, std::vector<double>&)>
      evaluate;  // u and Δu
  std::function<void(const std::vector<double>&, std::vector<double>&)> gradient;
  std::optional<Config> config;        // with the problem, when recorded
  std::vector<double> box_lo, box_hi;  // the MLP's input map, when no problem
  std::shared_ptr<void> owner;         // keeps the backend alive
};

std::string extension_of(const std::string& file) { return fs::path(file).extension().string(); }

// The `type` of a model file, read with the file's own checks (format, readable).
std::string model_type(const std::string& file) {
  const YAML::Node root = read_model_root(file);
  const std::string type = root["type"] ? root["type"].as<std::string>("") : "";
  if (type != "rbf" && type != "mlp")
    throw model_file_error(file, root["type"] ? root["type"] : root, "type",
                           "expected rbf or mlp, found \"" + type + "\"");
  return type;
}

// The problem a model file records under `problem` (model files written before it carried one
// have none).
std::optional<Config> recorded_problem(const std::string& file) {
  const YAML::Node root = YAML::LoadFile(file);
  const YAML::Node problem = root["problem"];
  if (!problem) return std::nullopt;
  if (!problem.IsScalar())
    throw model_file_error(file, problem, "problem", "expected the problem section as text");
  return load_config_text(problem.Scalar(), file);
}

LoadedModel load_model(const std::string& file) {
  LoadedModel m;
  const std::string type = model_type(file);
  m.config = recorded_problem(file);
  // Δ acts on the spatial coordinates only when the recorded problem has time.
  const int laplacian_dims = m.config ? m.config->problem.space_dim() : 0;
  if (type == "rbf") {
    const RbfParameters<double> p = read_model_yaml(file);
    BackendOptions opt;
    opt.dim = p.dim;
    opt.min_width = 0;
    if (laplacian_dims > 0 && laplacian_dims <= p.dim) opt.laplacian_dims = laplacian_dims;
    std::shared_ptr<RbfBackend<double>> backend = make_cpu_backend<double>(opt);
    backend->set_parameters(p);
    m.dim = p.dim;
    m.evaluate = [backend](const std::vector<double>& x, std::vector<double>& u,
                           std::vector<double>& lap) { backend->evaluate(x, u, lap); };
    m.gradient = [backend](const std::vector<double>& x, std::vector<double>& g) {
      backend->evaluate_gradient(x, g);
    };
    m.owner = backend;
  } else {
    const MlpModel model = read_mlp_model_yaml(file);
    MlpOptions opt = mlp_backend_options(model.shape, 1.0);
    if (laplacian_dims > 0 && laplacian_dims <= model.shape.dim) opt.laplacian_dims = laplacian_dims;
    std::shared_ptr<MlpBackend<double>> backend = make_cpu_mlp_backend<double>(opt);
    backend->set_parameters(model.parameters);
    m.dim = model.shape.dim;
    m.box_lo = model.shape.input_min;
    m.box_hi = model.shape.input_max;
    m.evaluate = [backend](const std::vector<double>& x, std::vector<double>& u,
                           std::vector<double>& lap) { backend->evaluate(x, u, lap); };
    m.gradient = [backend](const std::vector<double>& x, std::vector<double>& g) {
      backend->evaluate_gradient(x, g);
    };
    m.owner = backend;
  }
  if (m.config && m.config->problem.dim != m.dim)
    throw InputError(SourceLoc{file}, "problem",
                     "expected the problem of a " + std::to_string(m.dim) + "D model, found a " +
                         std::to_string(m.config->problem.dim) + "D one");
  return m;
}

void check_output(const std::string& file) {
  const std::string ext = extension_of(file);
  if (ext != ".vtu" && ext != ".vtp" && ext != ".csv")
    throw InputError(SourceLoc{"--output"}, "",
                     "expected a file ending in .vtu, .vtp or .csv, found \"" + file + "\"");
  if (ext != ".csv" && !vtk_available())
    throw InputError(SourceLoc{"--output"}, "",
                     "this build has no VTK: expected a .csv output, found \"" + file + "\"");
  fs::path dir = fs::path(file).parent_path();
  if (dir.empty()) dir = ".";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(SourceLoc{"--output"}, "",
                     "expected an existing directory for \"" + file + "\", found no directory \"" +
                         dir.string() + "\"");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw InputError(SourceLoc{"--output"}, "",
                     "cannot write into \"" + dir.string() + "\": " + std::strerror(errno));
}

// The points (and cells) to evaluate at.
EvaluationGrid points_of(const EvalRequest& r, const LoadedModel& m,
                         const std::optional<Problem>& problem) {
  if (!r.points_file.empty()) {
    if (!r.resolution.empty())
      throw InputError(SourceLoc{"--resolution"}, "",
                       "expected either --points or --resolution, found both");
    const std::string ext = extension_of(r.points_file);
    if (ext == ".csv") {
      EvaluationGrid g;
      g.dim = m.dim;
      g.points = read_points_csv(r.points_file, m.dim,
                                 m.config ? m.config->problem.space_dim() : 0);
      return g;
    }
    if (ext == ".vtu" || ext == ".vtp") return read_vtk_grid(r.points_file, m.dim);
    throw InputError(
        SourceLoc{"--points"}, "",
        "expected a file ending in .csv, .vtu or .vtp, found \"" + r.points_file + "\"");
  }
  std::vector<int> resolution = r.resolution;
  if (resolution.empty())
    resolution = m.config ? m.config->output.resolution : default_resolution(m.dim);
  if (static_cast<int>(resolution.size()) != m.dim)
    throw InputError(SourceLoc{"--resolution"}, "",
                     "expected " + std::to_string(m.dim) + " values for a " +
                         std::to_string(m.dim) + "D model, found " +
                         std::to_string(resolution.size()));
  for (int n : resolution)
    if (n < 2)
      throw InputError(SourceLoc{"--resolution"}, "",
                       "expected at least 2 points per axis, found " + std::to_string(n));
  if (problem) return make_evaluation_grid(problem->domain(), resolution);
  if (m.box_lo.size() == static_cast<std::size_t>(m.dim))
    return make_lattice(m.box_lo.data(), m.box_hi.data(), m.dim, resolution);
  throw InputError(SourceLoc{r.model_file}, "problem",
                   "the model file records no domain for a grid: give --points");
}

}  // namespace

EvalSummary evaluate_model(const EvalRequest& r) {
  check_output(r.output_file);
  const LoadedModel m = load_model(r.model_file);
  std::optional<Problem> problem;
  if (m.config) problem = Problem::build(m.config->problem);
  const EvaluationGrid grid = points_of(r, m, problem);
  const std::string ext = extension_of(r.output_file);
  // A model with time has its points go to a .csv or a .vtp (t as the point array `t` in 4D, as z
  // with 2D space): a .vtu holds one grid, and solve's solution.pvd series is the grid over time.
  // A 4D model without a recorded problem has time too (no VTK cell spans four coordinates).
  const bool with_time = m.dim == 4 || (m.config && m.config->problem.time);
  if (with_time ? ext == ".vtu" : m.dim != 2 && m.dim != 3 && ext != ".csv")
    throw InputError(SourceLoc{"--output"}, "",
                     std::string("expected a .csv") + (with_time ? " or .vtp" : "") +
                         " output for a " + std::to_string(m.dim) + "D model" +
                         (with_time ? " with time" : "") + ", found \"" + r.output_file + "\"");

  const std::size_t n = grid.n_points();
  std::vector<double> u, lap;
  m.evaluate(grid.points, u, lap);
  std::vector<PointArray> arrays;
  arrays.push_back({"u", 1, u});
  if (r.gradient) {
    std::vector<double> g;
    m.gradient(grid.points, g);
    arrays.push_back({"grad_u", m.dim, g});
  }
  if (r.laplacian) arrays.push_back({"laplacian_u", 1, lap});
  if (problem) {
    // The same arrays as solution.vtu's: u_exact and error with an exact solution, and the
    // residual of the equation's row, a·Δₛu + b·∇u + c·u − f (Δu − f for Poisson).
    if (problem->has_exact()) {
      std::vector<double> exact(n), error(n);
      problem->exact().evaluate(grid.points.data(), n, exact.data());
      for (std::size_t i = 0; i < n; ++i) error[i] = std::abs(u[i] - exact[i]);
      arrays.push_back({"u_exact", 1, exact});
      arrays.push_back({"error", 1, error});
    }
    std::vector<double> residual(n), g;
    if (problem->uses_gradient()) m.gradient(grid.points, g);
    problem->interior_residuals(grid.points.data(), n, u.data(), g.empty() ? nullptr : g.data(),
                                lap.data(), residual.data());
    arrays.push_back({"residual", 1, residual});
  }

  if (ext == ".csv") {
    write_points_csv(r.output_file, m.dim, grid.points, arrays,
                     m.config ? m.config->problem.space_dim() : 0);
  } else if (ext == ".vtp") {
    write_points_vtp(r.output_file, m.dim, grid.points, arrays);
  } else {
    write_grid_vtu(r.output_file, grid, arrays);
  }
  EvalSummary s;
  s.points = n;
  for (const PointArray& a : arrays) s.arrays.push_back(a.name);
  return s;
}

}  // namespace rbfpde
