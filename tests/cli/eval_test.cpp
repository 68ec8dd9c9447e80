// `rbfpde eval` through the real binary: the model of a tiny run evaluated at the points of its
// own solution.vtu (a round trip), of a CSV and of a .vtp, and on a grid; every kind of bad input
// is one line with exit code 2 and writes nothing. And the body-fitted solution.vtu of a disk: its
// boundary points lie on the circle and its arrays are the model's values there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/expression.hpp"
#include "solver/train/model_file.hpp"
#include "tests/cli/cli_test_util.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkCellArray.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde::cli_test {
namespace {

const char* const kExact = "-sin(pi*x)*sin(pi*y)/(2*pi^2)";
const char* const kF = "sin(pi*x)*sin(pi*y)";

// A CSV file as header → column of numbers.
std::map<std::string, std::vector<double>> read_csv(const fs::path& path) {
  const std::vector<std::string> lines = lines_of(read_text(path));
  std::map<std::string, std::vector<double>> columns;
  if (lines.empty()) return columns;
  std::vector<std::string> header;
  {
    std::stringstream s(lines[0]);
    for (std::string cell; std::getline(s, cell, ',');) header.push_back(cell);
  }
  for (std::size_t l = 1; l < lines.size(); ++l) {
    std::stringstream s(lines[l]);
    std::size_t c = 0;
    for (std::string cell; std::getline(s, cell, ','); ++c)
      columns[header.at(c)].push_back(std::strtod(cell.c_str(), nullptr));
  }
  for (const std::string& h : header) columns[h];  // present even with no rows
  return columns;
}

// The RBF network of a model.yaml: u, ∇u and Δu summed in the test from the Gaussian's formulas
// φ = exp(−r²/a²), ∇φ = −2(x − c)/a²·φ, Δφ = (4r²/a⁴ − 2d/a²)·φ.
struct Network {
  RbfParameters<double> p;
  double u(const double* x) const {
    double s = 0;
    for (int k = 0; k < p.neurons(); ++k) s += p.weights[k] * phi(k, x);
    return s;
  }
  void gradient(const double* x, double* g) const {
    for (int j = 0; j < p.dim; ++j) g[j] = 0;
    for (int k = 0; k < p.neurons(); ++k) {
      const double a2 = p.widths[k] * p.widths[k], w = p.weights[k] * phi(k, x);
      for (int j = 0; j < p.dim; ++j) g[j] += -2 * (x[j] - p.centres[k * p.dim + j]) / a2 * w;
    }
  }
  double laplacian(const double* x) const {
    double s = 0;
    for (int k = 0; k < p.neurons(); ++k) {
      const double a2 = p.widths[k] * p.widths[k];
      s += p.weights[k] * (4 * r2(k, x) / (a2 * a2) - 2.0 * p.dim / a2) * phi(k, x);
    }
    return s;
  }
  double r2(int k, const double* x) const {
    double s = 0;
    for (int j = 0; j < p.dim; ++j)
      s += (x[j] - p.centres[k * p.dim + j]) * (x[j] - p.centres[k * p.dim + j]);
    return s;
  }
  double phi(int k, const double* x) const {
    return std::exp(-r2(k, x) / (p.widths[k] * p.widths[k]));
  }
};

// One tiny run shared by the suite: its output directory holds solution.vtu and model.yaml.
struct EvalRun {
  static constexpr const char* kName = "Eval";
  static std::string config() { return kTinyConfig; }
  static std::vector<std::string> arguments() { return {}; }
};

class Eval : public SharedRunTest<EvalRun> {
 protected:
  static std::string model() { return (run_dir() / "out/model.yaml").string(); }
  static Network network() { return Network{read_model_yaml(model())}; }
};

TEST_F(Eval, CsvPointsWithReorderedAndExtraColumns) {
  TempDir dir;
  write_text(dir / "p.csv", "label,y,x\na,0.5,0.25\nb,0.125,0.75\nc,1,0\n");
  const RunResult r = run_rbfpde(
      {"eval", model(), "--points", "p.csv", "--output", "e.csv", "--gradient", "--laplacian"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::string text = read_text(dir / "e.csv");
  EXPECT_EQ(lines_of(text).at(0), "x,y,u,grad_u_x,grad_u_y,laplacian_u,u_exact,error,residual");
  auto c = read_csv(dir / "e.csv");
  ASSERT_EQ(c["x"].size(), 3u);
  EXPECT_EQ(c["x"], (std::vector<double>{0.25, 0.75, 0}));
  EXPECT_EQ(c["y"], (std::vector<double>{0.5, 0.125, 1}));
  const Network net = network();
  const Expression exact(kExact, 2), f(kF, 2);
  for (std::size_t i = 0; i < 3; ++i) {
    const double x[2] = {c["x"][i], c["y"][i]};
    const double scale = 1e-12 * std::max(1.0, std::abs(net.u(x)));
    EXPECT_NEAR(c["u"][i], net.u(x), scale);
    double g[2];
    net.gradient(x, g);
    EXPECT_NEAR(c["grad_u_x"][i], g[0], 1e-10);
    EXPECT_NEAR(c["grad_u_y"][i], g[1], 1e-10);
    EXPECT_NEAR(c["laplacian_u"][i], net.laplacian(x), 1e-9);
    // The derivatives against central differences of u.
    const double h = 1e-5;
    for (int a = 0; a < 2; ++a) {
      double xp[2] = {x[0], x[1]}, xm[2] = {x[0], x[1]};
      xp[a] += h;
      xm[a] -= h;
      EXPECT_NEAR(c[a ? "grad_u_y" : "grad_u_x"][i], (net.u(xp) - net.u(xm)) / (2 * h), 1e-7);
    }
    double lap_fd = 0;
    const double h2 = 1e-4;
    for (int a = 0; a < 2; ++a) {
      double xp[2] = {x[0], x[1]}, xm[2] = {x[0], x[1]};
      xp[a] += h2;
      xm[a] -= h2;
      lap_fd += (net.u(xp) - 2 * net.u(x) + net.u(xm)) / (h2 * h2);
    }
    EXPECT_NEAR(c["laplacian_u"][i], lap_fd, 1e-4 * std::max(1.0, std::abs(lap_fd)));
    EXPECT_NEAR(c["u_exact"][i], exact(x), 1e-15);
    EXPECT_NEAR(c["error"][i], std::abs(c["u"][i] - exact(x)), 1e-15);
    EXPECT_NEAR(c["residual"][i], c["laplacian_u"][i] - f(x), 1e-9);
  }
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
}

TEST_F(Eval, CsvOutputReadsBackAsInput) {
  TempDir dir;
  write_text(dir / "p.csv", "x,y\n0.1,0.2\n0.3,0.4\n");
  ASSERT_EQ(
      run_rbfpde({"eval", model(), "--points", "p.csv", "--output", "a.csv", "-q"}, dir.path())
          .exit_code,
      0);
  const RunResult r =
      run_rbfpde({"eval", model(), "--points", "a.csv", "--output", "b.csv", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_text(dir / "a.csv"), read_text(dir / "b.csv"));
}

#ifdef RBFPDE_HAVE_VTK

std::vector<double> point_array(vtkPointData* pd, const char* name) {
  vtkDataArray* a = pd->GetArray(name);
  std::vector<double> v;
  if (!a) return v;
  for (vtkIdType i = 0; i < a->GetNumberOfTuples(); ++i) v.push_back(a->GetComponent(i, 0));
  return v;
}

vtkSmartPointer<vtkUnstructuredGrid> read_vtu(const fs::path& path) {
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  return reader->GetOutput();
}

void write_vtp(const fs::path& path, const std::vector<std::array<double, 3>>& points) {
  vtkNew<vtkPoints> pts;
  for (const auto& p : points) pts->InsertNextPoint(p.data());
  vtkNew<vtkPolyData> poly;
  poly->SetPoints(pts);
  vtkNew<vtkXMLPolyDataWriter> writer;
  writer->SetFileName(path.c_str());
  writer->SetInputData(poly);
  ASSERT_EQ(writer->Write(), 1);
}

// The values at solution.vtu's points equal the ones in the file, and the cells come along.
TEST_F(Eval, RoundTripAtTheSolutionPoints) {
  TempDir dir;
  const fs::path solution = run_dir() / "out/solution.vtu";
  const RunResult r =
      run_rbfpde({"eval", model(), "--points", solution.string(), "--output", "e.vtu"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = read_vtu(solution), b = read_vtu(dir / "e.vtu");
  ASSERT_EQ(a->GetNumberOfPoints(), b->GetNumberOfPoints());
  ASSERT_EQ(a->GetNumberOfCells(), b->GetNumberOfCells());
  for (vtkIdType c = 0; c < a->GetNumberOfCells(); ++c)
    ASSERT_EQ(a->GetCellType(c), b->GetCellType(c));
  for (vtkIdType p = 0; p < a->GetNumberOfPoints(); ++p) {
    double x[3], y[3];
    a->GetPoint(p, x);
    b->GetPoint(p, y);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(x[k], y[k]);
  }
  for (const char* name : {"u", "u_exact", "error", "residual"}) {
    const auto va = point_array(a->GetPointData(), name), vb = point_array(b->GetPointData(), name);
    ASSERT_EQ(va.size(), vb.size()) << name;
    ASSERT_FALSE(va.empty()) << name;
    double scale = 0;
    for (double v : va) scale = std::max(scale, std::abs(v));
    for (std::size_t i = 0; i < va.size(); ++i)
      ASSERT_NEAR(va[i], vb[i], 1e-13 * scale) << name << " at point " << i;
  }
}

TEST_F(Eval, VtpPointsToVtp) {
  TempDir dir;
  write_vtp(dir / "p.vtp", {{0.1, 0.9, 0}, {0.5, 0.5, 0}, {0.0, 0.3, 0}, {1, 1, 0}});
  const RunResult r = run_rbfpde(
      {"eval", model(), "--points", "p.vtp", "--output", "e.vtp", "--gradient"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((dir / "e.vtp").c_str());
  reader->Update();
  vtkPolyData* out = reader->GetOutput();
  ASSERT_EQ(out->GetNumberOfPoints(), 4);
  const Network net = network();
  const std::vector<double> u = point_array(out->GetPointData(), "u");
  vtkDataArray* grad = out->GetPointData()->GetArray("grad_u");
  ASSERT_NE(grad, nullptr);
  ASSERT_EQ(grad->GetNumberOfComponents(), 2);
  for (vtkIdType p = 0; p < 4; ++p) {
    double x[3], g[2];
    out->GetPoint(p, x);
    EXPECT_NEAR(u[p], net.u(x), 1e-12);
    net.gradient(x, g);
    EXPECT_NEAR(grad->GetComponent(p, 0), g[0], 1e-10);
    EXPECT_NEAR(grad->GetComponent(p, 1), g[1], 1e-10);
  }
}

TEST_F(Eval, GridOfTheModelsDomain) {
  TempDir dir;
  const RunResult r =
      run_rbfpde({"eval", model(), "--resolution", "11", "6", "--output", "g.vtu"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto g = read_vtu(dir / "g.vtu");
  ASSERT_EQ(g->GetNumberOfPoints(), 11 * 6);  // the unit square's lattice
  ASSERT_EQ(g->GetNumberOfCells(), 10 * 5);
  const Network net = network();
  const std::vector<double> u = point_array(g->GetPointData(), "u");
  for (vtkIdType p = 0; p < g->GetNumberOfPoints(); ++p) {
    double x[3];
    g->GetPoint(p, x);
    EXPECT_NEAR(u[p], net.u(x), 1e-12);
  }
}

TEST(EvalMlp, RoundTripAtTheSolutionPoints) {
  TempDir dir;
  write_text(dir / "c.yaml", tiny_mlp_config());
  ASSERT_EQ(run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "-q"}, dir.path()).exit_code, 0);
  const RunResult r = run_rbfpde(
      {"eval", "out/model.yaml", "--points", "out/solution.vtu", "--output", "e.vtu"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto a = read_vtu(dir / "out/solution.vtu"), b = read_vtu(dir / "e.vtu");
  const auto ua = point_array(a->GetPointData(), "u"), ub = point_array(b->GetPointData(), "u");
  ASSERT_EQ(ua.size(), ub.size());
  ASSERT_FALSE(ua.empty());
  for (std::size_t i = 0; i < ua.size(); ++i) ASSERT_NEAR(ua[i], ub[i], 1e-13) << i;
}

// A model of a problem with time: the CSV names the coordinates x, y, t, reads them back, and the
// residual is the heat equation's row (the exact solution's row residual is 0, so the model's
// residual at a point is small where the model is accurate).
TEST(EvalTime, CsvColumnsAreXYT) {
  TempDir dir;
  const std::string config = read_text(fs::path(RBFPDE_SOURCE_DIR) / "configs/heat2d.yaml");
  write_text(dir / "c.yaml", config);
  ASSERT_EQ(run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "-q", "--set",
                        "training.max_cycles=5", "--set", "model.neurons=27", "--set",
                        "training.points.interior=300", "--set", "training.points.boundary=150",
                        "--set", "output.resolution=[6,6,6]", "--set",
                        "output.directory=out"},
                       dir.path())
                .exit_code,
            0);
  write_text(dir / "p.csv", "t,x,y\n0.5,0.25,0.75\n0,0.5,0.5\n");
  const RunResult r = run_rbfpde(
      {"eval", "out/model.yaml", "--points", "p.csv", "--output", "e.csv", "--gradient", "-q"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_text(dir / "e.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "x,y,t,u,grad_u_x,grad_u_y,grad_u_t,u_exact,error,residual");
  EXPECT_NE(csv.find("\n0.25,0.75,0.5,"), std::string::npos) << csv;
  // A column z is not a coordinate of this model: it is ignored, and t is still required.
  write_text(dir / "q.csv", "x,y,z\n0.5,0.5,0.5\n");
  const RunResult bad =
      run_rbfpde({"eval", "out/model.yaml", "--points", "q.csv", "--output", "f.csv"}, dir.path());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("no column t"), std::string::npos) << bad.err;
}

// solution.vtu of a disk is body-fitted: its points lie inside the circle or on it within 1e-9,
// the cut created points on it, and the arrays there are the model and the exact solution
// evaluated at those very points.
TEST(BodyFittedSolution, DiskBoundaryPointsCarryTheModelsValues) {
  TempDir dir;
  std::string yaml =
      replace_once(kTinyConfig, "    type: rectangle\n    min: [0, 0]\n    max: [1, 1]\n",
                   "    type: disk\n    centre: [0.5, 0.5]\n    radius: 0.5\n");
  yaml = replace_once(yaml, "output:\n", "output:\n  resolution: [21, 21]\n");
  write_text(dir / "c.yaml", yaml);
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto g = read_vtu(dir / "out/solution.vtu");
  const Network net{read_model_yaml(dir / "out/model.yaml")};
  const Expression exact(kExact, 2);
  const auto u = point_array(g->GetPointData(), "u"),
             ue = point_array(g->GetPointData(), "u_exact");
  int on_circle = 0;
  double area = 0;
  for (vtkIdType p = 0; p < g->GetNumberOfPoints(); ++p) {
    double x[3];
    g->GetPoint(p, x);
    const double rad = std::hypot(x[0] - 0.5, x[1] - 0.5);
    ASSERT_LE(rad, 0.5 + 1e-9) << "point " << p;
    if (std::abs(rad - 0.5) > 1e-9) continue;
    ++on_circle;
    EXPECT_NEAR(u[p], net.u(x), 1e-13) << "point " << p;
    EXPECT_NEAR(ue[p], exact(x), 1e-15) << "point " << p;
  }
  // 21 × 21 over the box: h = 0.05; the circle crosses well over perimeter/h lattice edges.
  EXPECT_GT(on_circle, int(M_PI / 0.05));
  for (vtkIdType c = 0; c < g->GetNumberOfCells(); ++c) {
    vtkIdType n;
    const vtkIdType* ids;
    g->GetCellPoints(c, n, ids);
    for (vtkIdType k = 0; k < n; ++k) {  // shoelace: 2D cells are simple polygons in VTK order
      double a[3], b[3];
      g->GetPoint(ids[k], a);
      g->GetPoint(ids[(k + 1) % n], b);
      area += 0.5 * (a[0] * b[1] - b[0] * a[1]);
    }
  }
  const double h = 0.05;
  EXPECT_LE(area, M_PI * 0.25 * (1 + 1e-12));
  EXPECT_GE(area, M_PI * 0.25 - M_PI * h * h / 3);
  EXPECT_EQ(json_number(read_text(dir / "out/summary.json"), "grid_points"),
            g->GetNumberOfPoints());
}

// The same in 3D: a ball's solution.vtu has its cut points on the sphere, carrying the model's
// values there, and eval at those points reproduces the file.
TEST(BodyFittedSolution, BallBoundaryPointsCarryTheModelsValues) {
  TempDir dir;
  std::string yaml =
      replace_once(kTinyConfig, "    type: rectangle\n    min: [0, 0]\n    max: [1, 1]\n",
                   "    type: ball\n    centre: [0, 0, 0]\n    radius: 1\n");
  yaml = replace_once(yaml, "f: \"sin(pi*x)*sin(pi*y)\"", "f: \"6\"");
  yaml = replace_once(yaml, "value: \"0\"", "value: \"1\"");
  yaml =
      replace_once(yaml, "exact: \"-sin(pi*x)*sin(pi*y)/(2*pi^2)\"", "exact: \"x^2 + y^2 + z^2\"");
  yaml = replace_once(yaml, "output:\n", "output:\n  resolution: [11, 11, 11]\n");
  write_text(dir / "c.yaml", yaml);
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto g = read_vtu(dir / "out/solution.vtu");
  const Network net{read_model_yaml(dir / "out/model.yaml")};
  ASSERT_EQ(net.p.dim, 3);
  const auto u = point_array(g->GetPointData(), "u"),
             ue = point_array(g->GetPointData(), "u_exact");
  int on_sphere = 0;
  for (vtkIdType p = 0; p < g->GetNumberOfPoints(); ++p) {
    double x[3];
    g->GetPoint(p, x);
    const double rad = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    ASSERT_LE(rad, 1 + 1e-9) << "point " << p;
    if (std::abs(rad - 1) > 1e-9) continue;
    ++on_sphere;
    EXPECT_NEAR(u[p], net.u(x), 1e-13) << "point " << p;
    EXPECT_NEAR(ue[p], x[0] * x[0] + x[1] * x[1] + x[2] * x[2], 1e-14) << "point " << p;
  }
  // h = 0.2: the sphere (area 4π) crosses more than area/h² lattice edges.
  EXPECT_GT(on_sphere, int(4 * M_PI / 0.04));
  std::set<int> types;
  for (vtkIdType c = 0; c < g->GetNumberOfCells(); ++c) types.insert(g->GetCellType(c));
  EXPECT_TRUE(types.count(VTK_HEXAHEDRON));
  EXPECT_GE(types.size(), 3u) << "no cut cells";

  const RunResult e = run_rbfpde(
      {"eval", "out/model.yaml", "--points", "out/solution.vtu", "--output", "e.csv"}, dir.path());
  ASSERT_EQ(e.exit_code, 0) << e.err;
  auto c = read_csv(dir / "e.csv");
  ASSERT_EQ(c["u"].size(), u.size());
  for (std::size_t i = 0; i < u.size(); ++i) ASSERT_NEAR(c["u"][i], u[i], 1e-13) << i;
}

#endif  // RBFPDE_HAVE_VTK

// Bad input: one line "error: ..." on stderr, exit code 2, nothing on stdout, nothing written.
struct BadEval {
  std::string name;
  std::vector<std::string> args;  // after "eval"; MODEL stands for the suite's model.yaml
  std::string contains;           // a part of the message
  std::map<std::string, std::string> files = {};  // written into the working directory first
};

// gtest names a failing case by this rather than by its bytes.
void PrintTo(const BadEval& c, std::ostream* os) { *os << c.name; }

std::vector<BadEval> bad_evals() {
  std::vector<BadEval> cases = {
      {"MissingModel", {"nothere.yaml", "--output", "e.csv"}, "nothere.yaml: cannot read file"},
      {"NotAModel",
       {"c.yaml", "--output", "e.csv"},
       "format: expected an rbfpde model file",
       {{"c.yaml", kTinyConfig}}},
      {"MissingPoints",
       {"MODEL", "--points", "nothere.csv", "--output", "e.csv"},
       "nothere.csv: cannot read file"},
      {"CsvWithoutY",
       {"MODEL", "--points", "p.csv", "--output", "e.csv"},
       "p.csv:1:1: expected the columns x,y of a 2D model, found no column y",
       {{"p.csv", "x,v\n1,2\n"}}},
      {"CsvOf3DPoints",
       {"MODEL", "--points", "p.csv", "--output", "e.csv"},
       "p.csv:1:5: expected the columns x,y of a 2D model, found a column z",
       {{"p.csv", "x,y,z\n0.1,0.2,0.3\n"}}},
      {"CsvNotANumber",
       {"MODEL", "--points", "p.csv", "--output", "e.csv"},
       "p.csv:3:5: expected a finite number for y, found \"abc\"",
       {{"p.csv", "x,y\n0.1,0.2\n0.3,abc\n"}}},
      {"CsvShortRow",
       {"MODEL", "--points", "p.csv", "--output", "e.csv"},
       "p.csv:2:4: expected 2 columns, found 1",
       {{"p.csv", "x,y\n0.1\n"}}},
      {"CsvNoRows",
       {"MODEL", "--points", "p.csv", "--output", "e.csv"},
       "expected at least one point, found none",
       {{"p.csv", "x,y\n"}}},
      {"PointsUnknownExtension",
       {"MODEL", "--points", "p.dat", "--output", "e.csv"},
       "--points: expected a file ending in .csv, .vtu or .vtp",
       {{"p.dat", "x,y\n0,0\n"}}},
      {"OutputUnknownExtension",
       {"MODEL", "--resolution", "3", "3", "--output", "e.txt"},
       "--output: expected a file ending in .vtu, .vtp or .csv, found \"e.txt\""},
      {"OutputDirectoryMissing",
       {"MODEL", "--resolution", "3", "3", "--output", "no/e.csv"},
       "--output: expected an existing directory"},
      {"ResolutionOfWrongDimension",
       {"MODEL", "--resolution", "3", "3", "3", "--output", "e.csv"},
       "--resolution: expected 2 values for a 2D model, found 3"},
      {"ResolutionTooSmall",
       {"MODEL", "--resolution", "1", "3", "--output", "e.csv"},
       "--resolution: expected at least 2 points per axis, found 1"},
      {"PointsAndResolution",
       {"MODEL", "--points", "p.csv", "--resolution", "3", "3", "--output", "e.csv"},
       "expected either --points or --resolution, found both",
       {{"p.csv", "x,y\n0,0\n"}}},
      {"NoOutput", {"MODEL", "--resolution", "3", "3"}, "--output is required"},
      {"ModelOfUnknownType",
       {"m.yaml", "--output", "e.csv"},
       "m.yaml:2:7: type: expected rbf or mlp, found \"svm\"",
       {{"m.yaml", "format: rbfpde-model-1\ntype: svm\n"}}},
  };
#ifdef RBFPDE_HAVE_VTK
  cases.push_back({"VtuNotVtk",
                   {"MODEL", "--points", "p.vtu", "--output", "e.csv"},
                   "p.vtu: expected a VTK XML UnstructuredGrid file",
                   {{"p.vtu", "not xml\n"}}});
  cases.push_back({"VtpOf3DPoints",
                   {"MODEL", "--points", "p.vtp", "--output", "e.csv"},
                   "p.vtp: expected the points of a 2D model (z = 0), found z = 0.3 at point 0",
                   {{"p.vtp",
                     "<?xml version=\"1.0\"?>\n"
                     "<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                     "<PolyData><Piece NumberOfPoints=\"1\" NumberOfVerts=\"0\" "
                     "NumberOfLines=\"0\" NumberOfStrips=\"0\" NumberOfPolys=\"0\">\n"
                     "<Points><DataArray type=\"Float64\" NumberOfComponents=\"3\" "
                     "format=\"ascii\">0.1 0.2 0.3</DataArray></Points>\n"
                     "</Piece></PolyData></VTKFile>\n"}}});
#endif
  return cases;
}

class BadEvalTest : public Eval, public ::testing::WithParamInterface<BadEval> {};

TEST_P(BadEvalTest, OneLineExitTwoNothingWritten) {
  const BadEval& c = GetParam();
  TempDir dir;
  for (const auto& [name, text] : c.files) write_text(dir / name, text);
  std::vector<std::string> args = {"eval"};
  for (const std::string& a : c.args) args.push_back(a == "MODEL" ? model() : a);
  const auto before = tree(dir.path());
  const RunResult r = run_rbfpde(args, dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(c.contains), std::string::npos) << r.err;
  EXPECT_EQ(tree(dir.path()), before) << "eval wrote something";
}

INSTANTIATE_TEST_SUITE_P(Cli, BadEvalTest, ::testing::ValuesIn(bad_evals()),
                         [](const ::testing::TestParamInfo<BadEval>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace rbfpde::cli_test
