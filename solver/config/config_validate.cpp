// The config tree → Config: the key names, types, ranges and defaults of docs/config.md (documented
// for users in configs/README.md; keep the two in step). Sections are read in file order so that
// the first error reported is the first one a reader meets.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "solver/config/config_tree.hpp"

namespace rbfpde::config_detail {
namespace {

bool positive(double x) { return x > 0; }
bool non_negative(double x) { return x >= 0; }
bool unit_interval(double x) { return x > 0 && x <= 1; }

const char* const kPositiveInteger = "a positive integer";
const char* const kNonNegativeInteger = "a non-negative integer";

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

std::string read_name(const Field& field) {
  const std::string expected = "a name of letters, digits, '_', '-', '.'";
  const std::string name = read_text(field, expected);
  if (!valid_name(name)) field.fail_expected(expected);
  return name;
}

bool is_composite(const std::string& type) {
  return type == "union" || type == "difference" || type == "intersection";
}

// The dimension a domain lives in: fixed by its type, by its first part (composites, whose parts
// all agree) or by its file (points).
int domain_dim(const DomainSpec& domain) {
  if (domain.type == "box" || domain.type == "ball") return 3;
  if (is_composite(domain.type)) return domain_dim(domain.domains.front());
  if (domain.type == "points") return domain.cloud->dim;
  return 2;
}

std::string dimension_name(int dim) { return std::to_string(dim) + "D"; }

// `base_dir` is the config file's directory (point-cloud files are relative to it); `nested` is
// true for the parts of a composite.
DomainSpec read_domain(const Field& field, const std::filesystem::path& base_dir, bool nested) {
  DomainSpec domain;
  domain.key = field.path();
  domain.loc = field.loc();
  // A misspelt key is a likelier mistake than a missing type: report it first.
  if (!field.child("type").present()) {
    field.check_map({"type", "min", "max", "centre", "radius", "vertices", "domains", "file"});
  }
  std::vector<std::string> types = {"rectangle", "box", "disk", "ball", "polygon",
                                    "union", "difference", "intersection"};
  if (!nested) types.push_back("points");
  domain.type = read_choice(field.require("type"), types);
  if (is_composite(domain.type)) {
    field.check_map({"type", "domains"});
    const Field list = field.require("domains");
    const std::vector<Field> items = list.entries("a sequence of at least 2 domains");
    if (items.size() < 2) {
      list.fail("expected a sequence of at least 2 domains, found " +
                std::to_string(items.size()));
    }
    for (const Field& item : items) {
      DomainSpec part = read_domain(item, base_dir, true);
      if (!domain.domains.empty() && domain_dim(part) != domain_dim(domain.domains.front())) {
        const int want = domain_dim(domain.domains.front());
        item.child("type").fail("expected a " + dimension_name(want) + " domain (as " +
                                domain.key + ".domains[0]), found a " + part.type + " (" +
                                dimension_name(domain_dim(part)) + ")");
      }
      domain.domains.push_back(std::move(part));
    }
    return domain;
  }
  if (domain.type == "points") {
    field.check_map({"type", "file"});
    const Field file = field.require("file");
    const std::filesystem::path given =
        read_text(file, "the path of a point cloud (.csv, .vtp or .vtu)");
    std::error_code ec;
    const std::filesystem::path resolved =
        std::filesystem::absolute(given.is_absolute() ? given : base_dir / given, ec)
            .lexically_normal();
    domain.file = resolved.string();
    try {
      domain.cloud = std::make_shared<const PointCloudData>(read_point_cloud(domain.file));
    } catch (const std::invalid_argument& e) {
      file.fail(e.what());
    }
    return domain;
  }
  const int dim = domain.type == "box" || domain.type == "ball" ? 3 : 2;
  const std::string why = "a " + domain.type + " is " + std::to_string(dim) + "D";
  if (domain.type == "rectangle" || domain.type == "box") {
    field.check_map({"type", "min", "max"});
    domain.min = read_numbers(field.require("min"), dim, why);
    const Field max = field.require("max");
    domain.max = read_numbers(max, dim, why);
    for (int i = 0; i < dim; ++i) {
      if (domain.max[i] <= domain.min[i]) {
        const std::vector<Field> entries = max.entries("a sequence");
        entries[i].fail("expected a value greater than min[" + std::to_string(i) + "] = " +
                        format_double(domain.min[i]) + ", found " + describe(entries[i].node()));
      }
    }
  } else if (domain.type == "disk" || domain.type == "ball") {
    field.check_map({"type", "centre", "radius"});
    domain.centre = read_numbers(field.require("centre"), dim, why);
    domain.radius = read_double(field.require("radius"), positive, "a positive number");
  } else {
    field.check_map({"type", "vertices"});
    const Field vertices = field.require("vertices");
    const std::vector<Field> items = vertices.entries("a sequence of [x, y] vertices");
    if (items.size() < 3) {
      vertices.fail("expected at least 3 vertices, found " + std::to_string(items.size()));
    }
    for (const Field& item : items) {
      if (item.node().IsSequence() && item.node().size() != 2) {
        item.fail("expected an [x, y] pair, found a sequence of " +
                  std::to_string(item.node().size()));
      }
      const std::vector<double> xy = read_numbers(item, 2, "an [x, y] pair");
      domain.vertices.push_back({xy[0], xy[1]});
    }
  }
  return domain;
}

BoundarySpec read_boundary_entry(const Field& field) {
  // A misspelt key is a likelier mistake than a missing type: report it first.
  if (!field.child("type").present()) field.check_map({"type", "value", "where", "alpha", "beta"});
  BoundarySpec entry;
  entry.loc = field.loc();
  entry.type = read_choice(field.require("type"), {"dirichlet", "neumann", "robin"});
  if (entry.type == "robin") {
    field.check_map({"type", "value", "where", "alpha", "beta"});
    entry.alpha = read_expression(field.require("alpha"));
    if (const Field beta = field.child("beta"); beta.present()) {
      entry.beta = read_expression(beta);
    } else {
      entry.beta = ExprSpec{"1", beta.path(), field.loc()};
    }
  } else {
    field.check_map({"type", "value", "where"});
  }
  entry.value = read_expression(field.require("value"));
  const Field where = field.child("where");
  if (where.present()) {
    entry.where = read_expression(where);
  } else {
    entry.where.text = "1";
    entry.where.key = where.path();
    entry.where.loc = field.loc();
  }
  return entry;
}

bool finite_number(double x) { return std::isfinite(x); }

TimeSpec read_time(const Field& field) {
  field.check_map({"start", "end"});
  TimeSpec time;
  time.loc = field.loc();
  time.start = read_double(field.require("start"), finite_number, "a number");
  const Field end = field.require("end");
  time.end = read_double(end, finite_number, "a number");
  if (!(time.end > time.start)) {
    end.fail("expected a value greater than start = " + format_double(time.start) + ", found " +
             describe(end.node()));
  }
  return time;
}

// problem.equation: the keys each type takes (ProblemSpec).
void read_equation(const Field& equation, ProblemSpec& problem) {
  const Field type = equation.child("type");
  if (!type.present()) {
    equation.check_map({"type", "f"});
  } else {
    problem.equation = read_choice(type, {"poisson", "helmholtz", "heat", "linear"});
  }
  problem.equation_loc = type.present() ? type.loc() : equation.loc();
  const std::string& eq = problem.equation;
  if (eq == "poisson") {
    equation.check_map({"type", "f"});
  } else if (eq == "helmholtz") {
    equation.check_map({"type", "k", "f"});
    problem.k = read_expression(equation.require("k"));
  } else if (eq == "heat") {
    equation.check_map({"type", "diffusivity", "f"});
    if (!problem.time) {
      type.fail("expected problem.time ({start, end}) for the heat equation, found no time");
    }
    problem.diffusivity = read_expression(equation.require("diffusivity"));
  } else {
    equation.check_map({"type", "a", "b", "c", "f"});
    if (const Field a = equation.child("a"); a.present()) problem.a = read_expression(a);
    if (const Field b = equation.child("b"); b.present()) {
      const std::size_t n = std::size_t(problem.dim);
      const std::string expected = "a sequence of " + std::to_string(n) +
                                   " expressions (one per coordinate" +
                                   (problem.time ? std::string(", t last") : std::string()) + ")";
      const std::vector<Field> items = b.entries(expected);
      if (items.size() != n) {
        b.fail("expected " + std::to_string(n) + " expressions (one per coordinate" +
               (problem.time ? std::string(", t last") : std::string()) + "), found " +
               std::to_string(items.size()));
      }
      for (const Field& item : items) problem.b.push_back(read_expression(item));
      problem.b_loc = b.loc();
    }
    if (const Field c = equation.child("c"); c.present()) problem.c = read_expression(c);
  }
  problem.f = read_expression(equation.require("f"));
}

ProblemSpec read_problem(const Field& field, const std::filesystem::path& base_dir) {
  field.check_map({"domain", "equation", "time", "initial", "boundary", "exact"});
  ProblemSpec problem;
  problem.domain = read_domain(field.require("domain"), base_dir, false);
  problem.dim = domain_dim(problem.domain);
  if (const Field time = field.child("time"); time.present()) {
    problem.time = read_time(time);
    problem.dim += 1;  // t is the last coordinate
  }

  read_equation(field.require("equation"), problem);

  if (const Field initial = field.child("initial"); initial.present()) {
    if (!problem.time) initial.fail("expected no initial condition without problem.time");
    problem.initial = read_expression(initial);
  } else if (problem.time) {
    field.child("time").fail("expected problem.initial (u at t = start) with problem.time");
  }

  const Field boundary = field.require("boundary");
  problem.boundary_loc = boundary.loc();
  const std::vector<Field> entries = boundary.entries("a sequence of boundary conditions");
  if (entries.empty()) {
    boundary.fail("expected at least one boundary condition, found an empty sequence");
  }
  for (const Field& entry : entries) problem.boundary.push_back(read_boundary_entry(entry));

  if (const Field exact = field.child("exact"); exact.present()) {
    problem.exact = read_expression(exact);
  }
  return problem;
}

ModelConfig read_model(const Field& field) {
  ModelConfig model;
  if (!field.present()) return model;
  field.check_map({"type", "neurons", "init", "layers", "activation"});
  if (const Field f = field.child("type"); f.present()) model.type = read_choice(f, {"rbf", "mlp"});
  if (const Field f = field.child("neurons"); f.present()) {
    model.neurons = read_int(f, 1, kPositiveInteger);
  }
  if (const Field init = field.child("init"); init.present()) {
    init.check_map({"centres", "width", "from"});
    if (const Field f = init.child("from"); f.present()) {
      model.init_from = read_text(f, "the path of a model.yaml");
      model.init_from_loc = f.loc();
    }
    if (const Field f = init.child("centres"); f.present()) {
      model.init_centres = read_choice(f, {"grid", "random"});
    }
    if (const Field f = init.child("width"); f.present()) {
      model.init_width_auto = f.node().IsScalar() && f.node().Scalar() == "auto";
      if (!model.init_width_auto)
        model.init_width = read_double(f, positive, "a positive number or auto");
    }
  }
  if (const Field f = field.child("layers"); f.present()) {
    const std::vector<Field> items = f.entries("a sequence of layer widths");
    if (items.empty()) f.fail("expected at least one layer width, found an empty sequence");
    model.layers.clear();
    for (const Field& item : items) model.layers.push_back(read_int(item, 1, kPositiveInteger));
  }
  if (const Field f = field.child("activation"); f.present()) {
    model.activation = read_choice(f, {"tanh", "sin", "sigmoid"});
  }
  return model;
}

// Defaults of variable projection that scale with the problem and the network, for the keys the
// config leaves out (docs/config.md, "Defaults that scale"):
//   neurons 196 in 2D, 343 in 3D, 625 with 4 coordinates (3D and time) (a 14², a 7³ and a 5⁴
//   lattice); interior points 5 per parameter (m·(d+2)); boundary points
//   4d·N^((d−1)/d) (about four times the interior spacing's density on a unit box's boundary:
//   the boundary values carry most of the error into the interior); one fixed
//   batch; at most 1000 iterations, stopped by the validation loss's plateau (patience 150
//   iterations) rather than a tolerance; kVarproRestarts neuron relocations at stalls. The
//   slowest seeds of the 2D problems still descend steadily at 400 iterations.
// Five restarts: escalated (5 %, 10 %, 20 %, 40 %, 50 % of the neurons), the fourth left a minimum
// the first three returned to (the CPU seed problem's seed 3: 1.2e-6 → 5.5e-10).
constexpr int kVarproRestarts = 5;
struct GivenTraining {
  bool interior = false, boundary = false, resample_every = false, max_cycles = false,
       tolerance = false, patience = false, restarts = false;
};

void apply_varpro_defaults(ModelConfig& model, bool neurons_given, TrainingConfig& training,
                           const GivenTraining& given, int dim) {
  if (!neurons_given) model.neurons = dim >= 4 ? 625 : dim == 3 ? 343 : 196;
  const long params = long(model.neurons) * (dim + 2);
  if (!given.interior) training.points_interior = int(std::min<long>(5 * params, 1L << 24));
  if (!given.boundary)
    training.points_boundary = int(std::ceil(
        4.0 * dim * std::pow(double(training.points_interior), double(dim - 1) / dim)));
  if (!given.resample_every) training.resample_every = 0;
  if (!given.max_cycles) training.max_cycles = 1000;
  if (!given.tolerance) training.tolerance = 0;
  if (!given.patience) training.patience = 150;
  if (!given.restarts) training.restarts = kVarproRestarts;
}

TrainingConfig read_training(const Field& field, ModelConfig& model, bool neurons_given, int dim) {
  TrainingConfig training;
  // RBF networks are trained by variable projection unless the config asks for the seed's
  // scheme (gdcg) or plain LM; an MLP is trained by Adam.
  training.method = model.type == "mlp" ? "adam" : "varpro";
  GivenTraining given;
  std::optional<Field> resample_field, restarts_field;
  const auto finish = [&]() -> TrainingConfig {
    if (model.type == "mlp" && training.method == "adam" && training.resample_every == 0)
      resample_field->fail_expected("a positive integer for method adam (0, one fixed batch, is "
                                    "for lm)");
    if (training.method == "varpro") apply_varpro_defaults(model, neurons_given, training, given, dim);
    if (training.method != "varpro" && training.restarts > 0)
      restarts_field->fail("expected 0 for method " + training.method +
                           " (restarts relocate the neurons of varpro only), found " +
                           std::to_string(training.restarts));
    return training;
  };
  if (!field.present()) return finish();
  field.check_map({"method", "points", "penalty", "max_cycles", "tolerance", "time_limit",
                   "patience", "restarts", "gd", "cg", "lm", "adam", "lbfgs", "seed"});
  if (const Field f = field.child("method"); f.present()) {
    training.method = read_choice(f, {"varpro", "gdcg", "lm", "adam"});
    if (model.type == "rbf" && training.method == "adam") {
      f.fail("expected varpro, lm or gdcg for model.type rbf, found \"adam\"");
    }
    if (model.type == "mlp" && training.method != "adam" && training.method != "lm") {
      f.fail("expected adam or lm for model.type mlp, found \"" + training.method + "\"");
    }
  }
  if (const Field points = field.child("points"); points.present()) {
    points.check_map({"interior", "boundary", "resample_every"});
    if (const Field f = points.child("interior"); f.present()) {
      training.points_interior = read_int(f, 1, kPositiveInteger);
      given.interior = true;
    }
    if (const Field f = points.child("boundary"); f.present()) {
      training.points_boundary = read_int(f, 1, kPositiveInteger);
      given.boundary = true;
    }
    if (const Field f = points.child("resample_every"); f.present()) {
      training.resample_every = read_int(f, 0, kNonNegativeInteger);
      // 0 keeps one batch for the whole run: the RBF trainers' and the MLP's LM's fixed
      // collocation set (Adam needs fresh batches; checked once the method is known).
      given.resample_every = true;
      resample_field.emplace(f);
    }
  }
  if (const Field f = field.child("penalty"); f.present()) {
    training.penalty = read_double(f, positive, "a positive number");
  }
  if (const Field f = field.child("max_cycles"); f.present()) {
    training.max_cycles =
        static_cast<long>(read_integer(f, 1, std::numeric_limits<long>::max(), kPositiveInteger));
    given.max_cycles = true;
  }
  if (const Field f = field.child("tolerance"); f.present()) {
    training.tolerance = read_double(f, non_negative, "a non-negative number");
    given.tolerance = true;
  }
  if (const Field f = field.child("patience"); f.present()) {
    training.patience = read_int(f, 0, kNonNegativeInteger);
    given.patience = true;
  }
  if (const Field f = field.child("restarts"); f.present()) {
    training.restarts = read_int(f, 0, kNonNegativeInteger);
    given.restarts = true;
    restarts_field.emplace(f);
  }
  if (const Field f = field.child("time_limit"); f.present()) {
    training.time_limit = read_double(f, non_negative, "a non-negative number of seconds");
  }
  if (const Field gd = field.child("gd"); gd.present()) {
    gd.check_map({"steps", "learning_rate"});
    if (const Field f = gd.child("steps"); f.present()) {
      training.gd_steps = read_int(f, 0, kNonNegativeInteger);
    }
    if (const Field f = gd.child("learning_rate"); f.present()) {
      training.gd_learning_rate = read_double(f, positive, "a positive number");
    }
  }
  if (const Field cg = field.child("cg"); cg.present()) {
    cg.check_map({"iterations", "tolerance"});
    if (const Field f = cg.child("iterations"); f.present()) {
      training.cg_iterations = read_int(f, 1, kPositiveInteger);
    }
    if (const Field f = cg.child("tolerance"); f.present()) {
      training.cg_tolerance = read_double(f, non_negative, "a non-negative number");
    }
  }
  if (const Field lm = field.child("lm"); lm.present()) {
    lm.check_map({"damping", "update", "trial_weights", "prepare_factor"});
    if (const Field f = lm.child("damping"); f.present()) {
      training.lm_damping = read_double(f, positive, "a positive number");
    }
    if (const Field f = lm.child("update"); f.present()) {
      training.lm_update = read_choice(f, {"marquardt", "bracket", "nielsen", "hybrid"});
    }
    if (const Field f = lm.child("trial_weights"); f.present()) {
      training.trial_weights = read_choice(f, {"auto", "preconditioned", "qr"});
    }
    if (const Field f = lm.child("prepare_factor"); f.present()) {
      training.prepare_factor = read_choice(f, {"qr", "trial"});
    }
  }
  if (const Field adam = field.child("adam"); adam.present()) {
    adam.check_map({"learning_rate", "decay"});
    if (const Field f = adam.child("learning_rate"); f.present()) {
      training.adam_learning_rate = read_double(f, positive, "a positive number");
    }
    if (const Field f = adam.child("decay"); f.present()) {
      training.adam_decay = read_double(f, unit_interval, "a number in (0, 1]");
    }
  }
  if (const Field lbfgs = field.child("lbfgs"); lbfgs.present()) {
    lbfgs.check_map({"iterations", "history"});
    if (const Field f = lbfgs.child("iterations"); f.present()) {
      training.lbfgs_iterations = read_int(f, 0, kNonNegativeInteger);
      // Refusing it beats ignoring it: a user asking the RBF trainer for L-BFGS would otherwise
      // believe it ran.
      if (model.type == "rbf" && training.lbfgs_iterations > 0) {
        f.fail("expected 0 for model.type rbf (L-BFGS refines the MLP only), found " +
               describe(f.node()));
      }
    }
    if (const Field f = lbfgs.child("history"); f.present()) {
      training.lbfgs_history = read_int(f, 1, kPositiveInteger);
    }
  }
  if (const Field f = field.child("seed"); f.present()) {
    training.seed = read_unsigned(f, kNonNegativeInteger);
  }
  return finish();
}

ComputeConfig read_compute(const Field& field) {
  ComputeConfig compute;
  if (!field.present()) return compute;
  field.check_map({"backend", "precision"});
  if (const Field f = field.child("backend"); f.present()) {
    compute.backend = read_choice(f, {"auto", "cpu", "cuda"});
    compute.backend_loc = f.loc();
  }
  if (const Field f = field.child("precision"); f.present()) {
    compute.precision = read_choice(f, {"double", "float"});
  }
  return compute;
}

OutputConfig read_output(const Field& field, const std::string& name, int dim, bool time) {
  OutputConfig output;
  output.directory = "output/" + name;
  output.resolution = default_resolution(dim, time);
  if (!field.present()) return output;
  field.check_map({"directory", "resolution", "snapshot_every", "report_every", "pictures"});
  if (const Field f = field.child("directory"); f.present()) {
    output.directory = read_text(f, "a directory path");
    output.directory_loc = f.loc();
  }
  if (const Field f = field.child("resolution"); f.present()) {
    const std::string expected =
        "a sequence of " + std::to_string(dim) + " integers (points per axis)";
    const std::vector<Field> items = f.entries(expected);
    if (static_cast<int>(items.size()) != dim) {
      f.fail("expected " + std::to_string(dim) + " integers (the domain is " + std::to_string(dim) +
             "D), found " + std::to_string(items.size()));
    }
    output.resolution.clear();
    for (const Field& item : items) {
      output.resolution.push_back(read_int(item, 2, "an integer of at least 2"));
    }
  }
  if (const Field f = field.child("snapshot_every"); f.present()) {
    output.snapshot_every = read_int(f, 0, kNonNegativeInteger);
  }
  if (const Field f = field.child("report_every"); f.present()) {
    output.report_every = read_int(f, 1, kPositiveInteger);
  }
  if (const Field f = field.child("pictures"); f.present()) {
    output.pictures = read_choice(f, {"true", "false"}) == "true";
  }
  return output;
}

}  // namespace

Config config_from_tree(const YAML::Node& root, const Origin& origin,
                        const std::string& default_name) {
  // An empty document has no position; its errors belong to the file's first line.
  const YAML::Mark top = root.IsDefined() && !root.Mark().is_null() ? root.Mark() : YAML::Mark();
  const Field tree(root, "", top, &origin);
  if (!root.IsMap()) tree.fail_expected("a map of config keys (name, problem, model, ...)");
  tree.check_map({"name", "problem", "model", "training", "compute", "output"});

  Config config;
  config.file = origin.file;
  config.name = default_name;
  if (const Field f = tree.child("name"); f.present()) config.name = read_name(f);
  config.problem =
      read_problem(tree.require("problem"), std::filesystem::path(origin.file).parent_path());
  config.model = read_model(tree.child("model"));
  const bool neurons_given = tree.child("model").present() && tree.child("model").child("neurons").present();
  config.training = read_training(tree.child("training"), config.model, neurons_given,
                                  config.problem.dim);
  config.compute = read_compute(tree.child("compute"));
  config.output = read_output(tree.child("output"), config.name, config.problem.dim,
                              config.problem.time.has_value());
  if (config.output.directory_loc.file.empty())
    config.output.directory_loc = SourceLoc{config.file};
  return config;
}

}  // namespace rbfpde::config_detail

namespace rbfpde {

std::vector<int> default_resolution(int dim, bool time) {
  if (dim >= 4) return {21, 21, 21, 11};
  if (dim == 3 && time) return {41, 41, 21};
  return dim == 3 ? std::vector<int>{41, 41, 41} : std::vector<int>{101, 101};
}

}  // namespace rbfpde
