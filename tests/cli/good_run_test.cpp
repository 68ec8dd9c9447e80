// Good runs through the real binary: the files `rbfpde solve` writes, read back and checked against
// the network in model.yaml and the problem's expressions; determinism, float precision, `check`,
// --version, progress lines, and divergence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/expression.hpp"
#include "solver/train/mlp_model.hpp"
#include "solver/train/model_file.hpp"
#include "tests/cli/cli_test_util.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkDataArray.h>
#include <vtkDoubleArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde::cli_test {
namespace {

const char* const kF = "sin(pi*x)*sin(pi*y)";
const char* const kExact = "-sin(pi*x)*sin(pi*y)/(2*pi^2)";

// gdcg, 16 neurons, 20 cycles, a 21 × 21 grid, a snapshot every 5 cycles.
std::string good_config() {
  std::string c = replace_once(kTinyConfig, "max_cycles: 3", "max_cycles: 20");
  return replace_once(c, "  directory: out",
                      "  directory: out\n  resolution: [21, 21]\n  snapshot_every: 5");
}

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

// The cells of a data row of history.csv (the last, or the one of cycle `cycle`), by header name.
std::map<std::string, std::string> history_row(const std::string& csv, long cycle = -1) {
  std::vector<std::string> lines = lines_of(csv);
  std::map<std::string, std::string> row;
  if (lines.size() < 2) return row;
  if (cycle >= 0) {
    const std::string prefix = std::to_string(cycle) + ",";
    const auto it = std::find_if(lines.begin() + 1, lines.end(), [&](const std::string& line) {
      return line.rfind(prefix, 0) == 0;
    });
    if (it == lines.end()) return row;
    lines.back() = *it;
  }
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.push_back("");
    return cells;
  };
  const std::vector<std::string> header = split(lines.front()), cells = split(lines.back());
  for (std::size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
  return row;
}

// |a − b| ≤ tol · scale, with a message that shows both.
#define EXPECT_CLOSE(a, b, tol, scale) EXPECT_LE(std::abs((a) - (b)), (tol) * (scale)) \
  << #a " = " << (a) << ", " #b " = " << (b)

TEST(CliGoodRun, SolveQuietWritesEveryOutputAndNothingElse) {
  TempDir dir;
  write_text(dir / "c.yaml", good_config());
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--quiet"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "") << "--quiet prints nothing but errors";
  ASSERT_TRUE(fs::is_regular_file(dir / "out/summary.json"));

  const fs::path out = dir / "out";
  for (const char* name : {"solution.vtu", "centres.vtp", "collocation.vtp", "history.csv",
                           "summary.json", "model.yaml", "training.pvd"}) {
    EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
    EXPECT_GT(fs::file_size(out / name), 0u) << name;
  }
  for (const std::string& name : files_in(out)) {
    EXPECT_NE(name.front(), '.') << "temporary file left behind: " << name;
  }
  EXPECT_EQ(files_in(dir.path()), (std::vector<std::string>{"c.yaml", "out"}));

  // training.pvd: one snapshot every 5 cycles of the 20, each referenced file present, and no
  // snapshot file that the .pvd does not reference.
  const std::string pvd = read_text(out / "training.pvd");
  std::set<std::string> referenced;
  const std::regex file_attr("file=\"([^\"]+)\"");
  for (std::sregex_iterator it(pvd.begin(), pvd.end(), file_attr), end; it != end; ++it)
    referenced.insert((*it)[1]);
  for (const std::string& name : referenced)
    EXPECT_TRUE(fs::is_regular_file(out / name)) << name << " is referenced but missing";
  std::set<std::string> snapshot_files;
  for (const std::string& name : files_in(out))
    if (name.rfind("training_", 0) == 0) snapshot_files.insert(name);
  EXPECT_EQ(snapshot_files, referenced);
  EXPECT_EQ(referenced, (std::set<std::string>{"training_000005.vtu", "training_000010.vtu",
                                              "training_000015.vtu", "training_000020.vtu"}))
      << "snapshot_every: 5 over 20 cycles\n"
      << pvd;

  // history.csv, summary.json, model.yaml agree on the run.
  const std::string summary = read_text(out / "summary.json");
  EXPECT_EQ(json_raw(summary, "diverged"), "false");
  EXPECT_EQ(json_raw(summary, "precision"), "\"double\"");
  EXPECT_EQ(json_raw(summary, "method"), "\"gdcg\"");
  EXPECT_EQ(json_raw(summary, "sound"), "true");
  EXPECT_EQ(summary.find("\"unsound\""), std::string::npos) << "only an unsound run says why";
  EXPECT_EQ(json_number(summary, "neurons"), 16);
  EXPECT_EQ(json_number(summary, "cycles"), 20);
  EXPECT_EQ(json_number(summary, "grid_points"), 21 * 21);
  const std::string history = read_text(out / "history.csv");
  const auto last = history_row(history);
  ASSERT_EQ(last.count("cycle"), 1u);
  EXPECT_EQ(last.at("cycle"), "20");
  // History rows every report_every (10) cycles, with the validation residuals filled.
  ASSERT_EQ(lines_of(history).size(), 3u) << history;
  EXPECT_EQ(history_row(history, 10).at("cycle"), "10");
  for (long cycle : {10L, 20L}) {
    const auto row = history_row(history, cycle);
    ASSERT_EQ(row.count("val_rms_boundary"), 1u) << history;
    EXPECT_GT(std::stod(row.at("val_rms_interior")), 0.0) << history;
    EXPECT_GT(std::stod(row.at("val_rms_boundary")), 0.0) << history;
  }
  // The monitor judges the state at every report, snapshots (5, 15) included: this run's
  // lowest validation loss is at the snapshot of cycle 15, and that state is written.
  EXPECT_EQ(json_number(summary, "best_cycle"), 15);
  EXPECT_EQ(json_raw(summary, "stop_reason"), "\"max_cycles\"");
  EXPECT_GT(json_number(summary, "error_estimate"), 0.0);
}

#ifdef RBFPDE_HAVE_VTK

std::vector<double> point_array(vtkPointData* pd, const char* name) {
  vtkDataArray* a = pd->GetArray(name);
  std::vector<double> v;
  if (!a) return v;
  for (vtkIdType i = 0; i < a->GetNumberOfTuples(); ++i) v.push_back(a->GetComponent(i, 0));
  return v;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

TEST(CliGoodRun, SolutionVtuMatchesTheModelAndTheProblem) {
  TempDir dir;
  write_text(dir / "c.yaml", good_config());
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--quiet"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const fs::path out = dir / "out";
  ASSERT_TRUE(fs::is_regular_file(out / "summary.json"));
  EXPECT_EQ(json_raw(read_text(out / "summary.json"), "diverged"), "false");

  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName((out / "solution.vtu").c_str());
  reader->Update();
  vtkUnstructuredGrid* grid = reader->GetOutput();
  ASSERT_NE(grid, nullptr);
  const vtkIdType n = grid->GetNumberOfPoints();
  ASSERT_EQ(n, 21 * 21) << "the whole unit square is inside the domain";
  EXPECT_EQ(grid->GetNumberOfCells(), 20 * 20);
  vtkPointData* pd = grid->GetPointData();
  for (const char* name : {"u", "u_exact", "error", "residual"}) {
    ASSERT_NE(pd->GetArray(name), nullptr) << name;
    EXPECT_EQ(pd->GetArray(name)->GetNumberOfTuples(), n) << name;
    EXPECT_EQ(pd->GetArray(name)->GetNumberOfComponents(), 1) << name;
  }
  const std::vector<double> u = point_array(pd, "u"), ue = point_array(pd, "u_exact"),
                            err = point_array(pd, "error"), res = point_array(pd, "residual");

  std::vector<double> pts(2 * n);
  for (vtkIdType i = 0; i < n; ++i) {
    double p[3];
    grid->GetPoint(i, p);
    pts[2 * i] = p[0];
    pts[2 * i + 1] = p[1];
    EXPECT_EQ(p[2], 0.0);
    EXPECT_GE(p[0], 0.0);
    EXPECT_LE(p[0], 1.0);
    EXPECT_GE(p[1], 0.0);
    EXPECT_LE(p[1], 1.0);
  }

  // The network from model.yaml, evaluated at the grid points.
  const RbfParameters<double> params = read_model_yaml(out / "model.yaml");
  ASSERT_EQ(params.dim, 2);
  ASSERT_EQ(params.neurons(), 16);
  BackendOptions opts;
  opts.dim = 2;
  auto backend = make_cpu_backend<double>(opts);
  backend->set_parameters(params);
  std::vector<double> u_model, lap;
  backend->evaluate(pts, u_model, lap);
  ASSERT_EQ(u_model.size(), std::size_t(n));

  const Expression f(kF, 2), exact(kExact, 2);
  std::vector<double> f_at(n), exact_at(n);
  f.evaluate(pts.data(), n, f_at.data());
  exact.evaluate(pts.data(), n, exact_at.data());

  const double u_scale = max_abs(u_model), lap_scale = std::max(max_abs(lap), max_abs(f_at));
  ASSERT_GT(u_scale, 0);
  double diff2 = 0, ref2 = 0, max_err = 0;
  for (vtkIdType i = 0; i < n; ++i) {
    EXPECT_CLOSE(u[i], u_model[i], 1e-12, u_scale) << " at point " << i;
    EXPECT_CLOSE(ue[i], exact_at[i], 1e-14, 1.0) << " at point " << i;
    EXPECT_CLOSE(err[i], std::abs(u[i] - ue[i]), 1e-15, u_scale) << " at point " << i;
    EXPECT_CLOSE(res[i], lap[i] - f_at[i], 1e-12, lap_scale) << " at point " << i;
    diff2 += (u[i] - ue[i]) * (u[i] - ue[i]);
    ref2 += ue[i] * ue[i];
    max_err = std::max(max_err, std::abs(u[i] - ue[i]));
  }
  const double rel_l2 = std::sqrt(diff2 / ref2);
  ASSERT_GT(rel_l2, 0);

  const std::string summary = read_text(out / "summary.json");
  const double summary_rel_l2 = json_number(summary, "relative_l2_error");
  EXPECT_CLOSE(summary_rel_l2, rel_l2, 1e-10, rel_l2);
  EXPECT_CLOSE(json_number(summary, "max_error"), max_err, 1e-10, max_err);
  EXPECT_CLOSE(json_number(summary, "rmse"), std::sqrt(diff2 / n), 1e-10, std::sqrt(diff2 / n));

  // solution.vtu holds the best sound state seen at a report: that of the snapshot at cycle 15
  // (snapshots are reports too; history.csv has rows every report_every = 10 cycles only).
  const long best_cycle = long(json_number(summary, "best_cycle"));
  ASSERT_EQ(best_cycle, 15);

  // centres.vtp: one point per neuron at the centre, with the width and weight of model.yaml.
  vtkNew<vtkXMLPolyDataReader> centres_reader;
  centres_reader->SetFileName((out / "centres.vtp").c_str());
  centres_reader->Update();
  vtkPolyData* centres = centres_reader->GetOutput();
  ASSERT_EQ(centres->GetNumberOfPoints(), 16);
  const std::vector<double> widths = point_array(centres->GetPointData(), "width"),
                            weights = point_array(centres->GetPointData(), "weight");
  ASSERT_EQ(widths.size(), 16u);
  ASSERT_EQ(weights.size(), 16u);
  for (int k = 0; k < 16; ++k) {
    double p[3];
    centres->GetPoint(k, p);
    EXPECT_CLOSE(p[0], params.centres[2 * k], 1e-15, std::abs(params.centres[2 * k]) + 1e-300);
    EXPECT_CLOSE(p[1], params.centres[2 * k + 1], 1e-15,
                 std::abs(params.centres[2 * k + 1]) + 1e-300);
    EXPECT_CLOSE(widths[k], params.widths[k], 1e-15, std::abs(params.widths[k]));
    EXPECT_CLOSE(weights[k], params.weights[k], 1e-15, std::abs(params.weights[k]) + 1e-300);
  }

  // collocation.vtp: the last batch, 40 interior + 16 boundary points with their residuals.
  vtkNew<vtkXMLPolyDataReader> colloc_reader;
  colloc_reader->SetFileName((out / "collocation.vtp").c_str());
  colloc_reader->Update();
  vtkPolyData* colloc = colloc_reader->GetOutput();
  EXPECT_EQ(colloc->GetNumberOfPoints(), 40 + 16);
  EXPECT_NE(colloc->GetPointData()->GetArray("residual"), nullptr);

  // Every snapshot the .pvd lists is a readable grid with the same points as solution.vtu.
  for (const auto& e : fs::directory_iterator(out)) {
    const std::string name = e.path().filename();
    if (name.rfind("training_", 0) != 0) continue;
    vtkNew<vtkXMLUnstructuredGridReader> snap;
    snap->SetFileName(e.path().c_str());
    snap->Update();
    EXPECT_EQ(snap->GetOutput()->GetNumberOfPoints(), n) << name;
    EXPECT_NE(snap->GetOutput()->GetPointData()->GetArray("u"), nullptr) << name;
  }
  // The snapshot of best_cycle is the state written: the same u as solution.vtu.
  char snapshot[32];
  std::snprintf(snapshot, sizeof snapshot, "training_%06ld.vtu", best_cycle);
  ASSERT_TRUE(fs::exists(out / snapshot)) << snapshot;
  vtkNew<vtkXMLUnstructuredGridReader> snap;
  snap->SetFileName((out / snapshot).c_str());
  snap->Update();
  EXPECT_EQ(point_array(snap->GetOutput()->GetPointData(), "u"), u);
}

#endif  // RBFPDE_HAVE_VTK

TEST(CliGoodRun, SameSeedGivesByteIdenticalModel) {
  TempDir dir;
  write_text(dir / "c.yaml", kTinyConfig);
  const RunResult a = run_rbfpde({"solve", "c.yaml", "-q", "--set", "output.directory=a"},
                                 dir.path());
  const RunResult b = run_rbfpde({"solve", "c.yaml", "-q", "--set", "output.directory=b"},
                                 dir.path());
  const RunResult c = run_rbfpde(
      {"solve", "c.yaml", "-q", "--set", "output.directory=c", "--set", "training.seed=2"},
      dir.path());
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(c.exit_code, 0) << c.err;
  ASSERT_TRUE(fs::is_regular_file(dir / "a/model.yaml"));
  const std::string model_a = read_text(dir / "a/model.yaml");
  EXPECT_EQ(model_a, read_text(dir / "b/model.yaml"));
  EXPECT_NE(model_a, read_text(dir / "c/model.yaml")) << "the seed should change the batches";
}

TEST(CliGoodRun, FloatPrecisionRunsAndIsRecorded) {
  TempDir dir;
  write_text(dir / "c.yaml", kTinyConfig);
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--quiet", "--precision", "float"},
                                 dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_TRUE(fs::is_regular_file(dir / "out/summary.json"));
  const std::string summary = read_text(dir / "out/summary.json");
  EXPECT_EQ(json_raw(summary, "precision"), "\"float\"");
  EXPECT_EQ(json_raw(summary, "diverged"), "false");
  const double rel_l2 = json_number(summary, "relative_l2_error");
  EXPECT_TRUE(std::isfinite(rel_l2));
  EXPECT_LT(rel_l2, 1.0);
  EXPECT_NE(read_text(dir / "out/model.yaml").find("precision: float"), std::string::npos);
  const RbfParameters<double> p = read_model_yaml(dir / "out/model.yaml");
  EXPECT_EQ(p.neurons(), 16);
}

// A config that gives only the problem: variable projection with its defaults, shrunk by --set
// to a quick run. The result is sound, with an error estimate, the report whose state was
// written, and the validation residuals in summary.json and history.csv.
TEST(CliVarpro, ProblemOnlyConfigRunsQuicklyAndSoundly) {
  TempDir dir;
  const std::string tiny = kTinyConfig;
  write_text(dir / "c.yaml", tiny.substr(0, tiny.find("model:\n")) + "output:\n  directory: out\n");
  const RunResult r = run_rbfpde(
      {"solve", "c.yaml", "--backend", "cpu", "--set", "training.max_cycles=15", "--set",
       "training.points.interior=300", "--set", "training.points.boundary=80", "--set",
       "model.neurons=16"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string summary = read_text(dir / "out/summary.json");
  EXPECT_EQ(json_raw(summary, "method"), "\"varpro\"");
  EXPECT_EQ(json_raw(summary, "sound"), "true") << summary;
  EXPECT_EQ(summary.find("\"unsound\""), std::string::npos) << summary;
  EXPECT_EQ(json_number(summary, "neurons"), 16);
  EXPECT_EQ(json_number(summary, "interior_points"), 300);
  EXPECT_EQ(json_number(summary, "boundary_points"), 80);
  // 15 iterations are too few to converge or plateau; the last state is the best.
  EXPECT_EQ(json_raw(summary, "stop_reason"), "\"max_cycles\"");
  EXPECT_EQ(json_number(summary, "cycles"), 15);
  const double estimate = json_number(summary, "error_estimate");
  EXPECT_TRUE(std::isfinite(estimate)) << summary;
  EXPECT_GT(estimate, 0.0);
  const double best = json_number(summary, "best_cycle");
  EXPECT_EQ(best, 15);
  // The estimate appears twice (top level and in "final") with one value.
  const std::size_t final_at = summary.find("\"final\":");
  ASSERT_NE(final_at, std::string::npos);
  EXPECT_EQ(json_number(summary.substr(final_at), "error_estimate"), estimate);
  const double val_interior = json_number(summary, "validation_rms_interior_residual");
  const double val_boundary = json_number(summary, "validation_rms_boundary_residual");
  EXPECT_TRUE(std::isfinite(val_interior) && val_interior > 0) << summary;
  EXPECT_TRUE(std::isfinite(val_boundary) && val_boundary > 0) << summary;
  // With the exact solution known, the estimate is within 10x of the true error.
  const double rel_l2 = json_number(summary, "relative_l2_error");
  EXPECT_LT(rel_l2, 10 * estimate);
  EXPECT_GT(rel_l2, 0.1 * estimate);

  // history.csv: every row has its validation residuals, the last two columns.
  const std::string history = read_text(dir / "out/history.csv");
  const std::vector<std::string> lines = lines_of(history);
  ASSERT_GE(lines.size(), 2u) << history;
  EXPECT_NE(lines.front().find(",val_rms_interior,val_rms_boundary"), std::string::npos);
  EXPECT_EQ(lines.front().substr(lines.front().size() - 34), ",val_rms_interior,val_rms_boundary");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::size_t last = line.rfind(','), before = line.rfind(',', last - 1);
    const std::string vi = line.substr(before + 1, last - before - 1), vb = line.substr(last + 1);
    ASSERT_FALSE(vi.empty() || vb.empty()) << line;
    EXPECT_GT(std::stod(vi), 0.0) << line;
    EXPECT_GT(std::stod(vb), 0.0) << line;
  }
  // Rows at 0 (the width search's fit), at 10 and at the end; the row of the state written
  // carries the summary's validation figures.
  ASSERT_EQ(lines.size(), 4u) << history;
  EXPECT_EQ(lines[1].substr(0, 2), "0,") << history;
  EXPECT_GT(json_number(summary, "initial_width"), 1.5) << summary;
  const auto written = history_row(history, long(best));
  ASSERT_EQ(written.count("val_rms_interior"), 1u) << history;
  EXPECT_CLOSE(std::stod(written.at("val_rms_interior")), val_interior, 1e-9, val_interior);
  EXPECT_CLOSE(std::stod(written.at("val_rms_boundary")), val_boundary, 1e-9, val_boundary);
  // The result lines.
  EXPECT_NE(r.out.find("varpro"), std::string::npos) << r.out;
  char expected[64];
  std::snprintf(expected, sizeof expected, "estimated relative L2 error %.2e", estimate);
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
}

// Plain LM on all parameters with fewer residuals than twice the parameters: without a width
// floor, neurons collapsed below a tenth of the point spacing and every report was unsound
// (seed 3 ended "no report found a sound state", exit 3). With the floor of one point spacing
// the run ends sound.
TEST(CliLm, WidthFloorKeepsASoundState) {
  TempDir dir;
  write_text(dir / "c.yaml", "name: lm_floor\n"
                             "problem:\n"
                             "  domain: { type: rectangle, min: [0, 0], max: [1, 1] }\n"
                             "  equation: { type: poisson, f: \"sin(pi*x)*sin(pi*y)\" }\n"
                             "  boundary: [ { type: dirichlet, value: \"0\" } ]\n"
                             "  exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"\n"
                             "model: { neurons: 64 }\n"
                             "training:\n"
                             "  method: lm\n"
                             "  points: { interior: 150, boundary: 40 }\n"
                             "  max_cycles: 300\n"
                             "  seed: 3\n"
                             "output: { directory: out, resolution: [31, 31], pictures: false }\n");
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string summary = read_text(dir / "out/summary.json");
  EXPECT_EQ(json_raw(summary, "sound"), "true") << summary;
  const double rel_l2 = json_number(summary, "relative_l2_error");
  std::printf("lm, 64 neurons, 150 + 40 points, seed 3: relative L2 %.3e (bound 1e-2)\n", rel_l2);
  EXPECT_LT(rel_l2, 1e-2) << summary;
}

TEST(CliCheck, PrintsAConfigThatCheckAcceptsAgainAndWritesNothing) {
  TempDir dir;
  write_text(dir / "c.yaml", kTinyConfig);
  const RunResult first = run_rbfpde({"check", "c.yaml"}, dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.err, "");
  EXPECT_EQ(files_in(dir.path()), std::vector<std::string>{"c.yaml"}) << "check wrote something";
  // Every key is resolved, defaults included.
  for (const char* key : {"neurons: 16", "method: gdcg", "penalty: 100", "resolution: [101, 101]",
                          "where: \"1\"", "seed: 1", "precision: double", "patience: 0"})
    EXPECT_NE(first.out.find(key), std::string::npos) << key << " not in\n" << first.out;
  // patience follows time_limit.
  EXPECT_NE(first.out.find("  time_limit: 0\n  patience: 0\n"), std::string::npos) << first.out;

  write_text(dir / "resolved.yaml", first.out);
  const RunResult second = run_rbfpde({"check", "resolved.yaml"}, dir.path());
  ASSERT_EQ(second.exit_code, 0) << second.err << "\n" << first.out;
  EXPECT_EQ(second.err, "");
  // Apart from the comment naming the file, the second resolution is the first one.
  auto body = [](const std::string& text) {
    std::string b;
    for (const std::string& line : lines_of(text))
      if (line.rfind("#", 0) != 0) b += line + "\n";
    return b;
  };
  EXPECT_EQ(body(second.out), body(first.out));
  EXPECT_EQ(files_in(dir.path()), (std::vector<std::string>{"c.yaml", "resolved.yaml"}));
}

TEST(CliVersion, PrintsNameAndVersion) {
  TempDir dir;
  const RunResult r = run_rbfpde({"--version"}, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  // The name and version, then whether this build runs over MPI ranks.
  const std::string first = std::string("rbfpde ") + RBFPDE_VERSION + "\n";
  EXPECT_EQ(r.out.substr(0, first.size()), first);
  EXPECT_EQ(r.out.substr(first.size(), 18), "distributed runs: ") << r.out;
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.err, "");
}

TEST(CliProgress, PrintsCycleLinesWhenStderrIsNoTerminal) {
  TempDir dir;
  write_text(dir / "c.yaml", replace_once(kTinyConfig, "max_cycles: 3", "max_cycles: 20"));
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu"}, dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << "no redrawing when stderr is a file";
  EXPECT_EQ(r.err.find('\033'), std::string::npos) << "no escape codes when stderr is a file";
  const std::regex progress_line(
      "cycle ([0-9]+)/20  loss [0-9.e+-]+  validation [0-9.e+-]+/[0-9.e+-]+  L2 error "
      "[0-9.e+-]+  [0-9.]+ s  [0-9]+ cycles/s");
  std::vector<long> cycles;
  for (const std::string& line : lines_of(r.err)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, progress_line)) << "unexpected stderr line: " << line;
    cycles.push_back(std::stol(m[1]));
  }
  ASSERT_FALSE(cycles.empty());
  EXPECT_EQ(cycles.back(), 20) << "the final line always appears";
  EXPECT_TRUE(std::is_sorted(cycles.begin(), cycles.end()));

  // stdout: the result summary.
  EXPECT_NE(r.out.find("relative L2 error "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("tiny: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("20 cycles (max_cycles)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output: out/"), std::string::npos) << r.out;
  const std::string summary = read_text(dir / "out/summary.json");
  char expected[128];
  std::snprintf(expected, sizeof expected, "relative L2 error %.2e",
                json_number(summary, "relative_l2_error"));
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  std::snprintf(expected, sizeof expected,
                "loss %.2e, validation residual %.2e (interior), %.2e (boundary)",
                json_number(summary, "loss"), json_number(summary, "validation_rms_interior_residual"),
                json_number(summary, "validation_rms_boundary_residual"));
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  std::snprintf(expected, sizeof expected, "estimated relative L2 error %.2e",
                json_number(summary, "error_estimate"));
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("unsound"), std::string::npos) << r.out;

  // --quiet silences progress and results alike.
  const RunResult q = run_rbfpde({"solve", "c.yaml", "--quiet", "--set", "output.directory=q"},
                                 dir.path());
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "");
  EXPECT_EQ(q.err, "");
}

// Adam with an absurd learning rate: the MLP's weights overflow within a few steps. (The RBF
// network's gradient steps are limited to a quarter width per step, so an absurd learning rate
// cannot make it diverge; see Divergence.* in tests/train.)
std::string diverging_config() {
  std::string c = replace_once(kTinyConfig, "  type: rbf\n  neurons: 16\n",
                               "  type: mlp\n  layers: [8, 8]\n");
  c = replace_once(c, "method: gdcg", "method: adam");
  return replace_once(c, "  max_cycles: 3",
                      "  max_cycles: 60\n  adam: { learning_rate: 1.0e30 }");
}

TEST(CliDivergence, ExitsWithThreeAndStillWritesEveryOutput) {
  TempDir dir;
  write_text(dir / "c.yaml", diverging_config());
  const RunResult r = run_rbfpde({"solve", "c.yaml"}, dir.path());
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("diverged"), std::string::npos) << r.out;

  const fs::path out = dir / "out";
  std::vector<std::string> expected_files = {"history.csv", "model.yaml", "summary.json"};
#ifdef RBFPDE_HAVE_VTK
  expected_files.insert(expected_files.end(), {"collocation.vtp", "solution.vtu"});
#endif
  for (const std::string& name : expected_files)
    EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
  for (const std::string& name : files_in(out))
    EXPECT_NE(name.front(), '.') << "temporary file left behind: " << name;

  const std::string summary = read_text(out / "summary.json");
  EXPECT_EQ(json_raw(summary, "diverged"), "true");
  EXPECT_EQ(json_raw(summary, "stop_reason"), "\"diverged\"");
  const double cycles = json_number(summary, "cycles");
  EXPECT_GE(cycles, 1);
  EXPECT_LT(cycles, 60) << "training should stop at the divergence";
  // The outputs hold the last finite parameters.
  const MlpModel model = read_mlp_model_yaml(out / "model.yaml");
  ASSERT_EQ(model.shape.hidden, std::vector<int>({8, 8}));
  ASSERT_FALSE(model.parameters.empty());
  for (double v : model.parameters) EXPECT_TRUE(std::isfinite(v));
  EXPECT_TRUE(std::isfinite(json_number(summary, "relative_l2_error")));
}

// Exit code 3 is a failure; with --quiet ("print nothing but errors") stderr must still say why.
TEST(CliDivergence, QuietRunStillSaysItDivergedOnStderr) {
  TempDir dir;
  write_text(dir / "c.yaml", diverging_config());
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--quiet"}, dir.path());
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << "expected one error line, got:\n" << r.err;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("diverged"), std::string::npos) << lines[0];
  EXPECT_EQ(json_raw(read_text(dir / "out/summary.json"), "diverged"), "true");
}

// Where the GPU cannot be used, `--backend cuda` is refused with the reason (no driver, no
// device, the library not loadable), and `auto` runs on the CPU saying the same reason.
TEST(CliBackend, NoGpuSaysWhy) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  const std::string why = cuda_unavailable_reason();
  ASSERT_FALSE(why.empty());
  TempDir dir;
  write_text(dir / "c.yaml", good_config());
  const RunResult cuda = run_rbfpde({"solve", "c.yaml", "--backend", "cuda"}, dir.path());
  EXPECT_EQ(cuda.exit_code, 2) << cuda.err;
  EXPECT_NE(cuda.err.find("cuda was asked for, but " + why), std::string::npos) << cuda.err;
  const RunResult automatic = run_rbfpde(
      {"solve", "c.yaml", "--backend", "auto", "--set", "training.max_cycles=2"}, dir.path());
  EXPECT_EQ(automatic.exit_code, 0) << automatic.err;
  EXPECT_NE(automatic.err.find("note: running on the CPU: " + why), std::string::npos)
      << automatic.err;
}

}  // namespace
}  // namespace rbfpde::cli_test
