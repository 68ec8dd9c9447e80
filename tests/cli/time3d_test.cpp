// A problem over a 3D domain with time (four coordinates), end to end: configs/heat3d.yaml's
// defaults, a small CPU solve to a stated bound with a finite error estimate, its solution.pvd
// series of 3D grids, snapshots and eval's x, y, z, t columns; an empty time interval refused.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "tests/cli/cli_test_util.hpp"

#ifdef RBFPDE_HAVE_VTK
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

std::string heat3d_config() {
  return read_text(fs::path(RBFPDE_SOURCE_DIR) / "configs/heat3d.yaml");
}

double exact(const double* x) {
  return std::exp(-0.3 * kPi * kPi * x[3]) * std::sin(kPi * x[0]) * std::sin(kPi * x[1]) *
         std::sin(kPi * x[2]);
}

TEST(Time3dCli, CheckGivesTheFourCoordinateDefaults) {
  TempDir dir;
  write_text(dir / "c.yaml", heat3d_config());
  const RunResult r = run_rbfpde({"check", "c.yaml"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  neurons: 625\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  resolution: [21, 21, 21, 11]\n"), std::string::npos) << r.out;
  // 5 interior points per parameter: 625 · (4 + 2) · 5.
  EXPECT_NE(r.out.find("    interior: 18750\n"), std::string::npos) << r.out;
}

TEST(Time3dCli, EmptyIntervalIsOneLineExitTwoNothingWritten) {
  TempDir dir;
  write_text(dir / "c.yaml",
             replace_once(heat3d_config(), "time: {start: 0, end: 1}", "time: {start: 1, end: 1}"));
  const auto before = tree(dir.path());
  const RunResult r = run_rbfpde({"solve", "c.yaml", "--backend", "cpu"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("c.yaml:12:25: problem.time.end: expected a value greater than start"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(tree(dir.path()), before) << "solve wrote something";
}

// One small solve shared by the suite (about 5 s on two cores): 40 neurons, 800 + 800 points,
// 30 iterations, a 6³ grid at 3 times, a snapshot every 10 iterations.
struct Time3dRun {
  static constexpr const char* kName = "Time3dSolve";
  static std::string config() { return heat3d_config(); }
  static std::vector<std::string> arguments() {
    return {"--set", "model.neurons=40",
            "--set", "training.points.interior=800",
            "--set", "training.points.boundary=800",
            "--set", "training.max_cycles=30",
            "--set", "output.resolution=[6,6,6,3]",
            "--set", "output.snapshot_every=10",
            "--set", "output.directory=out"};
  }
};

class Time3dSolve : public SharedRunTest<Time3dRun> {
 protected:
  static fs::path out() { return run_dir() / "out"; }
};

// Measured: relative L2 error 7.0e-2, estimate 5.2e-2 (seed 1). The bound leaves room for
// rounding across machines, not for a broken solve (u = 0 gives 1).
TEST_F(Time3dSolve, ReachesItsBoundWithAFiniteErrorEstimate) {
  const std::string summary = read_text(out() / "summary.json");
  const double error = json_number(summary, "relative_l2_error");
  const double estimate = json_number(summary, "error_estimate");
  EXPECT_LT(error, 0.15) << summary;
  ASSERT_TRUE(std::isfinite(estimate)) << summary;
  // The estimate (an auxiliary 5⁴ lattice basis) is within a factor 3 of the true error.
  EXPECT_GT(estimate, error / 3) << summary;
  EXPECT_LT(estimate, error * 3) << summary;
  EXPECT_EQ(json_number(summary, "dimension"), 4);
  EXPECT_EQ(json_number(summary, "grid_points"), 6 * 6 * 6 * 3);
}

TEST_F(Time3dSolve, WritesASeriesOf3dGridsAndNoSolutionVtu) {
  std::set<std::string> files;
  for (const auto& entry : fs::directory_iterator(out())) files.insert(entry.path().filename());
  EXPECT_EQ(files.count("solution.vtu"), 0u);
  for (const char* name :
       {"solution.pvd", "solution_0000.vtu", "solution_0001.vtu", "solution_0002.vtu",
        "training.pvd", "training_000010.vtu", "training_000030.vtu", "model.yaml",
        "collocation.vtp", "centres.vtp", "summary.json"})
    EXPECT_EQ(files.count(name), 1u) << name;
  EXPECT_EQ(files.count("solution_0003.vtu"), 0u);
  const std::string pvd = read_text(out() / "solution.pvd");
  EXPECT_NE(pvd.find("<DataSet timestep=\"0\" file=\"solution_0000.vtu\"/>"), std::string::npos);
  EXPECT_NE(pvd.find("<DataSet timestep=\"0.5\" file=\"solution_0001.vtu\"/>"), std::string::npos);
  EXPECT_NE(pvd.find("<DataSet timestep=\"1\" file=\"solution_0002.vtu\"/>"), std::string::npos);
#ifdef RBFPDE_HAVE_PLPLOT
  EXPECT_EQ(files.count("solution.png"), 1u);
  EXPECT_EQ(files.count("error.png"), 1u);
#endif
#ifdef RBFPDE_HAVE_VTK
  // Each file is the cube's 6³ lattice (hexahedra), and u_exact there is the exact solution at
  // that file's time: level l holds t = l/2; a training snapshot holds t = 1.
  const auto check = [](const fs::path& path, double t) {
    SCOPED_TRACE(path.filename().string());
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    vtkUnstructuredGrid* g = reader->GetOutput();
    ASSERT_EQ(g->GetNumberOfPoints(), 216);
    ASSERT_EQ(g->GetNumberOfCells(), 125);
    EXPECT_EQ(g->GetCellType(0), VTK_HEXAHEDRON);
    double bounds[6];
    g->GetBounds(bounds);
    EXPECT_EQ(bounds[4], 0.0);
    EXPECT_EQ(bounds[5], 1.0);  // a 3D grid: z spans the cube
    vtkDataArray* u_exact = g->GetPointData()->GetArray("u_exact");
    ASSERT_NE(u_exact, nullptr);
    for (vtkIdType p = 0; p < g->GetNumberOfPoints(); ++p) {
      double x[4];
      g->GetPoint(p, x);
      x[3] = t;
      ASSERT_NEAR(u_exact->GetComponent(p, 0), exact(x), 1e-15) << p;
    }
  };
  check(out() / "solution_0000.vtu", 0.0);
  check(out() / "solution_0001.vtu", 0.5);
  check(out() / "solution_0002.vtu", 1.0);
  check(out() / "training_000010.vtu", 1.0);
#endif
}

TEST_F(Time3dSolve, EvalReadsAndWritesXYZT) {
  TempDir dir;
  const std::string model = (out() / "model.yaml").string();
  write_text(dir / "p.csv", "t,z,x,y\n0.5,0.25,0.75,0.5\n1,0.5,0.5,0.5\n");
  const RunResult r = run_rbfpde(
      {"eval", model, "--points", "p.csv", "--output", "e.csv", "--gradient", "-q"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = read_text(dir / "e.csv");
  const std::vector<std::string> lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 3u) << csv;
  EXPECT_EQ(lines[0], "x,y,z,t,u,grad_u_x,grad_u_y,grad_u_z,grad_u_t,u_exact,error,residual");
  EXPECT_EQ(lines[1].rfind("0.75,0.5,0.25,0.5,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("0.5,0.5,0.5,1,", 0), 0u) << lines[2];
  // u_exact (column 10) is the exact solution at (x, y, z, t).
  std::vector<double> cells;
  std::stringstream row(lines[2]);
  for (std::string cell; std::getline(row, cell, ',');) cells.push_back(std::stod(cell));
  ASSERT_EQ(cells.size(), 12u);
  EXPECT_NEAR(cells[9], exact(cells.data()), 1e-15);

  // A file without t is not a model with time's points.
  write_text(dir / "q.csv", "x,y,z\n0.5,0.5,0.5\n");
  const RunResult no_t =
      run_rbfpde({"eval", model, "--points", "q.csv", "--output", "f.csv"}, dir.path());
  EXPECT_EQ(no_t.exit_code, 2);
  EXPECT_NE(no_t.err.find("no column t"), std::string::npos) << no_t.err;
  // No VTK cell spans four coordinates: .vtu is refused, .vtp carries t as a point array.
  const RunResult vtu =
      run_rbfpde({"eval", model, "--points", "p.csv", "--output", "g.vtu"}, dir.path());
  EXPECT_EQ(vtu.exit_code, 2);
  EXPECT_NE(vtu.err.find("expected a .csv or .vtp output for a 4D model"), std::string::npos)
      << vtu.err;
  EXPECT_FALSE(fs::exists(dir / "g.vtu"));
#ifdef RBFPDE_HAVE_VTK
  const RunResult vtp =
      run_rbfpde({"eval", model, "--points", "p.csv", "--output", "h.vtp", "-q"}, dir.path());
  ASSERT_EQ(vtp.exit_code, 0) << vtp.err;
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((dir / "h.vtp").c_str());
  reader->Update();
  vtkDataArray* t = reader->GetOutput()->GetPointData()->GetArray("t");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->GetNumberOfTuples(), 2);
  EXPECT_EQ(t->GetComponent(0, 0), 0.5);
  EXPECT_EQ(t->GetComponent(1, 0), 1.0);
  // Read back as points (t from its array), they give the same u.
  const RunResult again =
      run_rbfpde({"eval", model, "--points", "h.vtp", "--output", "i.csv", "-q"}, dir.path());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::vector<std::string> back = lines_of(read_text(dir / "i.csv"));
  ASSERT_EQ(back.size(), 3u);
  const std::vector<std::string> first = lines_of(read_text(dir / "e.csv"));
  for (int i = 1; i < 3; ++i) {
    std::stringstream a(back[i]), b(first[i]);
    std::string ca, cb;
    for (int c = 0; c < 5; ++c) {  // x, y, z, t, u
      std::getline(a, ca, ',');
      std::getline(b, cb, ',');
      EXPECT_EQ(ca, cb) << i << " " << c;
    }
  }
#endif
}

// The MLP takes the same problem (Δₛ over x, y, z; the input map over the 4D box) and writes the
// same series. 20 Adam steps prove the plumbing, not accuracy: the error is only required finite
// and the values at each time to be the network's.
TEST(Time3dCli, MlpWritesTheSeries) {
  TempDir dir;
  write_text(dir / "c.yaml", heat3d_config());
  const RunResult r = run_rbfpde({"solve",     "c.yaml",
                                  "--backend", "cpu",
                                  "-q",        "--no-pictures",
                                  "--set",     "model.type=mlp",
                                  "--set",     "model.layers=[8,8]",
                                  "--set",     "training.max_cycles=20",
                                  "--set",     "training.points.interior=200",
                                  "--set",     "training.points.boundary=200",
                                  "--set",     "output.resolution=[4,4,4,2]",
                                  "--set",     "output.directory=out"},
                                 dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string summary = read_text(dir / "out/summary.json");
  EXPECT_TRUE(std::isfinite(json_number(summary, "relative_l2_error"))) << summary;
  EXPECT_EQ(json_number(summary, "grid_points"), 4 * 4 * 4 * 2);
  EXPECT_FALSE(fs::exists(dir / "out/solution.vtu"));
  EXPECT_TRUE(fs::exists(dir / "out/solution.pvd"));
#ifdef RBFPDE_HAVE_VTK
  // The series' u at t = 1 is the model's u there, as eval computes it.
  write_text(dir / "p.csv", "x,y,z,t\n0,0,0,1\n1,1,1,1\n");
  ASSERT_EQ(run_rbfpde({"eval", "out/model.yaml", "--points", "p.csv", "--output", "e.csv", "-q"},
                       dir.path())
                .exit_code,
            0);
  const std::vector<std::string> rows = lines_of(read_text(dir / "e.csv"));
  ASSERT_EQ(rows.size(), 3u);
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName((dir / "out/solution_0001.vtu").c_str());
  reader->Update();
  vtkUnstructuredGrid* g = reader->GetOutput();
  ASSERT_EQ(g->GetNumberOfPoints(), 64);
  vtkDataArray* u = g->GetPointData()->GetArray("u");
  ASSERT_NE(u, nullptr);
  // Lattice order, x fastest: point 0 is (0, 0, 0), point 63 is (1, 1, 1).
  for (const auto& [row, point] : {std::pair{1, 0}, std::pair{2, 63}}) {
    std::stringstream cells(rows[row]);
    std::string cell;
    for (int c = 0; c < 5; ++c) std::getline(cells, cell, ',');
    EXPECT_NEAR(u->GetComponent(point, 0), std::stod(cell), 1e-12) << row;
  }
#endif
}

}  // namespace
}  // namespace rbfpde::cli_test
