// A problem over a 2D domain with time (three coordinates x, y, t), end to end:
// configs/heat2d.yaml's default grid, a small CPU solve writing the solution.pvd series of 2D grids
// (no solution.vtu), snapshots at t = end, summary.json's grid_points, and eval's grid mode (x, y,
// t columns; a .vtu refused as for 4D). A plain 3D domain keeps its one solution.vtu.
#include <cmath>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde::cli_test {
namespace {

constexpr double kPi = 3.14159265358979323846;

std::string heat2d_config() {
  return read_text(fs::path(RBFPDE_SOURCE_DIR) / "configs/heat2d.yaml");
}

// configs/heat2d.yaml's exact solution at (x, y, t).
double exact(double x, double y, double t) {
  return std::exp(-0.2 * kPi * kPi * t) * std::sin(kPi * x) * std::sin(kPi * y);
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.insert(entry.path().filename());
  return files;
}

TEST(Time2dCli, CheckGivesA2dGridAt21Times) {
  TempDir dir;
  write_text(dir / "c.yaml", heat2d_config());
  const RunResult r = run_rbfpde({"check", "c.yaml"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  resolution: [41, 41, 21]\n"), std::string::npos) << r.out;
}

// One small solve shared by the suite (about a second on two cores): 27 neurons, 300 + 150
// points, 5 iterations, a 6² grid at 4 times, a snapshot every 5 iterations.
struct Time2dRun {
  static constexpr const char* kName = "Time2dSolve";
  static std::string config() { return heat2d_config(); }
  static std::vector<std::string> arguments() {
    return {"--set", "model.neurons=27",
            "--set", "training.points.interior=300",
            "--set", "training.points.boundary=150",
            "--set", "training.max_cycles=5",
            "--set", "output.resolution=[6,6,4]",
            "--set", "output.snapshot_every=5",
            "--set", "output.directory=out"};
  }
};

class Time2dSolve : public SharedRunTest<Time2dRun> {
 protected:
  static fs::path out() { return run_dir() / "out"; }
};

TEST_F(Time2dSolve, SummaryCountsEveryLevelsPoints) {
  const std::string summary = read_text(out() / "summary.json");
  EXPECT_EQ(json_number(summary, "dimension"), 3);
  EXPECT_EQ(json_number(summary, "grid_points"), 6 * 6 * 4);
  EXPECT_TRUE(std::isfinite(json_number(summary, "relative_l2_error"))) << summary;
}

TEST_F(Time2dSolve, WritesASeriesOf2dGridsAndNoSolutionVtu) {
  const std::set<std::string> files = files_in(out());
  EXPECT_EQ(files.count("solution.vtu"), 0u);
#ifdef RBFPDE_HAVE_PLPLOT
  // The pictures show the square at t = end: one panel (620 + 240 pixels wide), not the three
  // slices of a 3D grid.
  for (const char* name : {"solution.png", "error.png"}) {
    const std::string png = read_text(out() / name);
    ASSERT_GT(png.size(), 24u) << name;
    std::uint32_t width = 0;
    for (int i = 16; i < 20; ++i) width = (width << 8) | std::uint8_t(png[i]);
    EXPECT_EQ(width, 860u) << name;
  }
#endif
#ifndef RBFPDE_HAVE_VTK
  EXPECT_EQ(files.count("solution.pvd"), 0u);  // a build without VTK writes no VTK files
#else
  for (const char* name :
       {"solution.pvd", "solution_0000.vtu", "solution_0001.vtu", "solution_0002.vtu",
        "solution_0003.vtu", "training.pvd", "training_000005.vtu", "model.yaml", "collocation.vtp",
        "centres.vtp", "summary.json"})
    EXPECT_EQ(files.count(name), 1u) << name;
  EXPECT_EQ(files.count("solution_0004.vtu"), 0u);
  // Four times from start to end, both included: 0, 1/3, 2/3, 1.
  const std::string pvd = read_text(out() / "solution.pvd");
  std::size_t entries = 0;
  for (std::size_t at = pvd.find("<DataSet "); at != std::string::npos;
       at = pvd.find("<DataSet ", at + 1))
    ++entries;
  EXPECT_EQ(entries, 4u) << pvd;
  EXPECT_NE(pvd.find("<DataSet timestep=\"0\" file=\"solution_0000.vtu\"/>"), std::string::npos);
  EXPECT_NE(pvd.find("<DataSet timestep=\"0.3333333333333333\" file=\"solution_0001.vtu\"/>"),
            std::string::npos)
      << pvd;
  EXPECT_NE(pvd.find("<DataSet timestep=\"1\" file=\"solution_0003.vtu\"/>"), std::string::npos);
  // Each file is the square's 6² lattice (quads, z = 0), and u_exact there is the exact solution
  // at that file's time; a training snapshot holds t = 1.
  const auto check = [](const fs::path& path, double t) {
    SCOPED_TRACE(path.filename().string());
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    vtkUnstructuredGrid* g = reader->GetOutput();
    ASSERT_EQ(g->GetNumberOfPoints(), 36);
    ASSERT_EQ(g->GetNumberOfCells(), 25);
    for (vtkIdType c = 0; c < g->GetNumberOfCells(); ++c) EXPECT_EQ(g->GetCellType(c), VTK_QUAD);
    double bounds[6];
    g->GetBounds(bounds);
    EXPECT_EQ(bounds[1], 1.0);
    EXPECT_EQ(bounds[3], 1.0);
    EXPECT_EQ(bounds[4], 0.0);
    EXPECT_EQ(bounds[5], 0.0);  // a 2D grid: z = 0, t is the file's time
    for (const char* name : {"u", "u_exact", "error", "residual"})
      EXPECT_NE(g->GetPointData()->GetArray(name), nullptr) << name;
    vtkDataArray* u_exact = g->GetPointData()->GetArray("u_exact");
    ASSERT_NE(u_exact, nullptr);
    for (vtkIdType p = 0; p < g->GetNumberOfPoints(); ++p) {
      double x[3];
      g->GetPoint(p, x);
      ASSERT_NEAR(u_exact->GetComponent(p, 0), exact(x[0], x[1], t), 1e-15) << p;
    }
  };
  check(out() / "solution_0000.vtu", 0.0);
  check(out() / "solution_0001.vtu", 1.0 / 3.0);
  check(out() / "solution_0002.vtu", 2.0 / 3.0);
  check(out() / "solution_0003.vtu", 1.0);
  check(out() / "training_000005.vtu", 1.0);
#endif
}

// eval's grid mode on the model: the recorded problem's default grid (41² at 21 times; the model
// file keeps the problem, not the output section), or --resolution's, as points x, y, t.
TEST_F(Time2dSolve, EvalGridIsEveryLevelsPointsWithT) {
  TempDir dir;
  const std::string model = (out() / "model.yaml").string();
  const RunResult whole = run_rbfpde({"eval", model, "--output", "d.csv", "-q"}, dir.path());
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  EXPECT_EQ(lines_of(read_text(dir / "d.csv")).size(), 1u + 41 * 41 * 21);
  const RunResult r = run_rbfpde(
      {"eval", model, "--resolution", "6", "6", "4", "--output", "e.csv", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(read_text(dir / "e.csv"));
  ASSERT_EQ(lines.size(), 1u + 6 * 6 * 4);
  EXPECT_EQ(lines[0], "x,y,t,u,u_exact,error,residual");
  std::set<double> times;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::vector<double> cells;
    std::stringstream row(lines[i]);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(std::stod(cell));
    ASSERT_EQ(cells.size(), 7u) << lines[i];
    times.insert(cells[2]);
    ASSERT_NEAR(cells[4], exact(cells[0], cells[1], cells[2]), 1e-15) << lines[i];
  }
  EXPECT_EQ(times, (std::set<double>{0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0}));

  // A .vtu holds one grid: a model with time writes .csv or .vtp, as a 4D model does.
  const RunResult vtu = run_rbfpde({"eval", model, "--output", "g.vtu"}, dir.path());
  EXPECT_EQ(vtu.exit_code, 2);
  EXPECT_EQ(lines_of(vtu.err).size(), 1u) << vtu.err;
  EXPECT_FALSE(fs::exists(dir / "g.vtu"));
#ifdef RBFPDE_HAVE_VTK  // without VTK every .vtu output is refused, for that reason
  EXPECT_NE(vtu.err.find("expected a .csv or .vtp output for a 3D model with time"),
            std::string::npos)
      << vtu.err;
  // .vtp: the points as they are, t the third coordinate.
  const RunResult vtp = run_rbfpde(
      {"eval", model, "--resolution", "6", "6", "4", "--output", "h.vtp", "-q"}, dir.path());
  ASSERT_EQ(vtp.exit_code, 0) << vtp.err;
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((dir / "h.vtp").c_str());
  reader->Update();
  vtkPolyData* poly = reader->GetOutput();
  ASSERT_EQ(poly->GetNumberOfPoints(), 6 * 6 * 4);
  double bounds[6];
  poly->GetBounds(bounds);
  EXPECT_EQ(bounds[4], 0.0);
  EXPECT_EQ(bounds[5], 1.0);
#endif
}

// A domain of three space coordinates has no time: one solution.vtu of hexahedra over x, y, z.
TEST(Time2dCli, Plain3dDomainWritesOneSolutionVtu) {
  TempDir dir;
  write_text(dir / "c.yaml", read_text(fs::path(RBFPDE_SOURCE_DIR) / "configs/cube3d.yaml"));
  const RunResult r =
      run_rbfpde({"solve", "c.yaml", "--backend", "cpu", "-q", "--no-pictures", "--set",
                  "model.neurons=27", "--set", "training.points.interior=300", "--set",
                  "training.points.boundary=150", "--set", "training.max_cycles=3", "--set",
                  "output.resolution=[4,4,4]", "--set", "output.directory=out"},
                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> files = files_in(dir / "out");
  EXPECT_EQ(files.count("solution.pvd"), 0u);
  EXPECT_EQ(files.count("solution_0000.vtu"), 0u);
  EXPECT_EQ(json_number(read_text(dir / "out/summary.json"), "grid_points"), 64);
#ifdef RBFPDE_HAVE_VTK
  EXPECT_EQ(files.count("solution.vtu"), 1u);
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName((dir / "out/solution.vtu").c_str());
  reader->Update();
  vtkUnstructuredGrid* g = reader->GetOutput();
  ASSERT_EQ(g->GetNumberOfPoints(), 64);
  ASSERT_EQ(g->GetNumberOfCells(), 27);
  EXPECT_EQ(g->GetCellType(0), VTK_HEXAHEDRON);
  double bounds[6];
  g->GetBounds(bounds);
  EXPECT_EQ(bounds[5], 1.0);
#endif
}

}  // namespace
}  // namespace rbfpde::cli_test
