// The evaluation grid of a problem with time (2D or 3D space and t): one spatial grid at each
// time level (EvaluationGrid::times), its levels taken apart by time_level, and written as a
// series of .vtu files (2D or 3D) with a .pvd collection; 4D points with t as a .vtp point array.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "problems/errors.hpp"
#include "problems/space_time.hpp"
#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde {
namespace {

using test::directory_listing;
using test::fresh_dir;
using test::read_text;

TEST(TimeSlicedGrid, LatticeOfFourAxesRepeatsThe3dLatticeAtEachTime) {
  const double lo[4] = {0, -1, 2, 0.5}, hi[4] = {1, 1, 3, 2};
  const EvaluationGrid g = make_lattice(lo, hi, 4, {3, 4, 2, 4});
  const EvaluationGrid space = make_lattice(lo, hi, 3, {3, 4, 2});
  ASSERT_TRUE(g.time_sliced());
  EXPECT_FALSE(space.time_sliced());
  EXPECT_EQ(g.dim, 4);
  EXPECT_EQ(g.times, (std::vector<double>{0.5, 1.0, 1.5, 2.0}));
  EXPECT_EQ(g.points_per_time(), space.n_points());
  EXPECT_EQ(g.n_points(), 4 * space.n_points());
  EXPECT_EQ(g.n_cells(), space.n_cells());  // 2·3·1 hexahedra, shared by every level
  for (std::size_t l = 0; l < 4; ++l) {
    const EvaluationGrid level = time_level(g, l);
    EXPECT_EQ(level.dim, 3);
    EXPECT_FALSE(level.time_sliced());
    EXPECT_EQ(level.points, space.points);
    EXPECT_EQ(level.cells, space.cells);
    EXPECT_EQ(level.cell_types, space.cell_types);
    for (std::size_t p = 0; p < g.points_per_time(); ++p)
      EXPECT_EQ(g.points[(l * g.points_per_time() + p) * 4 + 3], g.times[l]);
  }
  EXPECT_THROW(time_level(g, 4), std::invalid_argument);
  EXPECT_THROW(time_level(space, 0), std::invalid_argument);
  EXPECT_THROW(make_lattice(lo, hi, 4, {3, 4, 2}), std::invalid_argument);
  EXPECT_THROW(make_lattice(lo, hi, 4, {3, 4, 2, 1}), std::invalid_argument);
}

TEST(TimeSlicedGrid, ArraysOfALevelAreThatLevelsValues) {
  const double lo[4] = {0, 0, 0, 0}, hi[4] = {1, 1, 1, 1};
  const EvaluationGrid g = make_lattice(lo, hi, 4, {2, 2, 2, 3});
  const std::size_t n = g.n_points(), m = g.points_per_time();
  PointArray u{"u", 1, {}}, grad{"grad_u", 4, {}};
  for (std::size_t i = 0; i < n; ++i) {
    u.values.push_back(double(i));
    for (int c = 0; c < 4; ++c) grad.values.push_back(10.0 * i + c);
  }
  const std::vector<PointArray> level = time_level(g, 2, {u, grad});
  ASSERT_EQ(level.size(), 2u);
  ASSERT_EQ(level[0].values.size(), m);
  ASSERT_EQ(level[1].values.size(), 4 * m);
  EXPECT_EQ(level[1].components, 4);
  for (std::size_t p = 0; p < m; ++p) {
    EXPECT_EQ(level[0].values[p], double(2 * m + p));
    EXPECT_EQ(level[1].values[4 * p + 3], 10.0 * (2 * m + p) + 3);
  }
  u.values.pop_back();
  EXPECT_THROW(time_level(g, 0, {u}), std::invalid_argument);
}

// A ball × [0, 1]: each level is the ball's own body-fitted grid, at times 0 … 1 exactly.
TEST(TimeSlicedGrid, EvaluationGridOfABallOverTimeIsTheBallsGridAtEachTime) {
  const SpaceTimeDomain domain(make_ball({0, 0, 0}, 1), 0, 1);
  const EvaluationGrid g = make_evaluation_grid(domain, {9, 9, 9, 5});
  const EvaluationGrid ball = make_evaluation_grid(domain.space(), {9, 9, 9});
  ASSERT_TRUE(g.time_sliced());
  EXPECT_EQ(g.times, (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(g.points_per_time(), ball.n_points());
  const EvaluationGrid last = time_level(g, 4);
  EXPECT_EQ(last.points, ball.points);
  EXPECT_EQ(last.cells, ball.cells);
  for (std::size_t p = 0; p < g.n_points(); ++p) EXPECT_TRUE(domain.contains(&g.points[4 * p]));
  EXPECT_THROW(make_evaluation_grid(domain, {9, 9, 9}), std::invalid_argument);
}

// Three axes of a box alone are a plain 3D lattice (hexahedra over all three, no levels): only a
// domain over space and time says that its last axis is t.
TEST(TimeSlicedGrid, LatticeOfThreeAxesIsNotSliced) {
  const double lo[3] = {0, -1, 0.5}, hi[3] = {1, 1, 2};
  const EvaluationGrid box = make_lattice(lo, hi, 3, {3, 4, 4});
  EXPECT_FALSE(box.time_sliced());
  EXPECT_EQ(box.n_points(), 3u * 4u * 4u);
  EXPECT_EQ(box.n_cells(), 2u * 3u * 3u);
  EXPECT_EQ(box.cell_types[0], CellType::hexahedron);
}

// A disk × [0, 2]: each level is the disk's own body-fitted 2D grid, at times 0 … 2 exactly; a
// plain 3D domain keeps its one grid.
TEST(TimeSlicedGrid, EvaluationGridOfADiskOverTimeIsTheDisksGridAtEachTime) {
  const SpaceTimeDomain domain(make_ball({0.5, 0.5}, 0.5), 0, 2);
  const EvaluationGrid g = make_evaluation_grid(domain, {11, 11, 3});
  const EvaluationGrid disk = make_evaluation_grid(domain.space(), {11, 11});
  ASSERT_TRUE(g.time_sliced());
  EXPECT_EQ(g.dim, 3);
  EXPECT_EQ(g.times, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(g.points_per_time(), disk.n_points());
  EXPECT_EQ(g.n_points(), 3 * disk.n_points());
  for (std::size_t l = 0; l < 3; ++l) {
    const EvaluationGrid level = time_level(g, l);
    EXPECT_EQ(level.points, disk.points);
    EXPECT_EQ(level.cells, disk.cells);
    EXPECT_EQ(level.cell_types, disk.cell_types);
  }
  for (std::size_t p = 0; p < g.n_points(); ++p) EXPECT_TRUE(domain.contains(&g.points[3 * p]));
  EXPECT_THROW(make_evaluation_grid(domain, {11, 11}), std::invalid_argument);
  EXPECT_THROW(make_evaluation_grid(domain, {11, 11, 3, 3}), std::invalid_argument);
  EXPECT_THROW(make_evaluation_grid(domain, {11, 11, 1}), std::invalid_argument);
  const auto cube = make_box({0, 0, 0}, {1, 1, 1});
  const EvaluationGrid box = make_evaluation_grid(*cube, {3, 3, 3});
  EXPECT_FALSE(box.time_sliced());
  EXPECT_EQ(box.n_points(), 27u);
}

TEST(TimeSlicedGrid, SingleFileWriterRefusesASlicedGrid) {
  const double lo[4] = {0, 0, 0, 0}, hi[4] = {1, 1, 1, 1};
  const EvaluationGrid g = make_lattice(lo, hi, 4, {2, 2, 2, 2});
  const auto dir = fresh_dir("TimeSlicedGrid.SingleFileWriterRefusesASlicedGrid");
  EXPECT_THROW(write_grid_vtu(dir / "solution.vtu", g, {}), std::invalid_argument);
  EXPECT_TRUE(directory_listing(dir).empty());
}

#ifdef RBFPDE_HAVE_VTK

TEST(TimeSlicedGrid, SeriesIsOne3dVtuPerTimeAndAPvd) {
  const double lo[4] = {0, 0, 0, -1}, hi[4] = {1, 2, 1, 0.5};
  const EvaluationGrid g = make_lattice(lo, hi, 4, {3, 3, 4, 3});
  const std::size_t n = g.n_points(), m = g.points_per_time();
  PointArray u{"u", 1, {}};
  for (std::size_t i = 0; i < n; ++i) u.values.push_back(std::sin(1.0 + i));
  const auto dir = fresh_dir("TimeSlicedGrid.SeriesIsOne3dVtuPerTimeAndAPvd");
  write_grid_series(dir, "solution", g, {u});
  EXPECT_EQ(directory_listing(dir),
            (std::vector<std::string>{"solution.pvd", "solution_0000.vtu", "solution_0001.vtu",
                                      "solution_0002.vtu"}));
  EXPECT_EQ(read_text(dir / "solution.pvd"),
            "<?xml version=\"1.0\"?>\n"
            "<VTKFile type=\"Collection\" version=\"0.1\">\n"
            "  <Collection>\n"
            "    <DataSet timestep=\"-1\" file=\"solution_0000.vtu\"/>\n"
            "    <DataSet timestep=\"-0.25\" file=\"solution_0001.vtu\"/>\n"
            "    <DataSet timestep=\"0.5\" file=\"solution_0002.vtu\"/>\n"
            "  </Collection>\n"
            "</VTKFile>\n");
  const EvaluationGrid space = make_lattice(lo, hi, 3, {3, 3, 4});
  for (int l = 0; l < 3; ++l) {
    const std::string name = "solution_000" + std::to_string(l) + ".vtu";
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    reader->SetFileName((dir / name).c_str());
    reader->Update();
    vtkUnstructuredGrid* read = reader->GetOutput();
    ASSERT_EQ(read->GetNumberOfPoints(), static_cast<vtkIdType>(m)) << name;
    ASSERT_EQ(read->GetNumberOfCells(), static_cast<vtkIdType>(space.n_cells())) << name;
    for (vtkIdType c = 0; c < read->GetNumberOfCells(); ++c)
      EXPECT_EQ(read->GetCellType(c), VTK_HEXAHEDRON);
    for (std::size_t p = 0; p < m; ++p) {
      double x[3];
      read->GetPoint(static_cast<vtkIdType>(p), x);
      for (int a = 0; a < 3; ++a) EXPECT_EQ(x[a], space.points[3 * p + a]);
    }
    vtkDataArray* values = read->GetPointData()->GetArray("u");
    ASSERT_NE(values, nullptr);
    for (std::size_t p = 0; p < m; ++p)
      ASSERT_EQ(values->GetComponent(static_cast<vtkIdType>(p), 0), u.values[l * m + p]);
    // The grid reads back as a 3D one, as eval's --points reads it.
    EXPECT_EQ(read_vtk_grid(dir / name, 3).n_points(), m);
  }
}

// A 2D grid over time: one 2D .vtu (z = 0, quads) per time, with that level's values.
TEST(TimeSlicedGrid, SeriesOfA2dGridIsOne2dVtuPerTime) {
  const SpaceTimeDomain domain(make_box({0, 0}, {2, 1}), 0, 1);
  const EvaluationGrid g = make_evaluation_grid(domain, {4, 3, 2});
  const double lo[2] = {0, 0}, hi[2] = {2, 1};
  const EvaluationGrid space = make_lattice(lo, hi, 2, {4, 3});
  ASSERT_EQ(g.times, (std::vector<double>{0, 1}));
  const std::size_t n = g.n_points(), m = g.points_per_time();
  PointArray u{"u", 1, {}};
  for (std::size_t i = 0; i < n; ++i) u.values.push_back(std::cos(0.5 + i));
  const auto dir = fresh_dir("TimeSlicedGrid.SeriesOfA2dGridIsOne2dVtuPerTime");
  write_grid_series(dir, "solution", g, {u});
  EXPECT_EQ(directory_listing(dir),
            (std::vector<std::string>{"solution.pvd", "solution_0000.vtu", "solution_0001.vtu"}));
  EXPECT_NE(
      read_text(dir / "solution.pvd").find("<DataSet timestep=\"1\" file=\"solution_0001.vtu\"/>"),
      std::string::npos);
  for (int l = 0; l < 2; ++l) {
    const std::string name = "solution_000" + std::to_string(l) + ".vtu";
    vtkNew<vtkXMLUnstructuredGridReader> reader;
    reader->SetFileName((dir / name).c_str());
    reader->Update();
    vtkUnstructuredGrid* read = reader->GetOutput();
    ASSERT_EQ(read->GetNumberOfPoints(), static_cast<vtkIdType>(m)) << name;
    ASSERT_EQ(read->GetNumberOfCells(), 6) << name;
    for (vtkIdType c = 0; c < read->GetNumberOfCells(); ++c)
      EXPECT_EQ(read->GetCellType(c), VTK_QUAD);
    for (std::size_t p = 0; p < m; ++p) {
      double x[3];
      read->GetPoint(static_cast<vtkIdType>(p), x);
      EXPECT_EQ(x[0], space.points[2 * p]);
      EXPECT_EQ(x[1], space.points[2 * p + 1]);
      EXPECT_EQ(x[2], 0.0);
    }
    vtkDataArray* values = read->GetPointData()->GetArray("u");
    ASSERT_NE(values, nullptr);
    for (std::size_t p = 0; p < m; ++p)
      ASSERT_EQ(values->GetComponent(static_cast<vtkIdType>(p), 0), u.values[l * m + p]);
    EXPECT_EQ(read_vtk_grid(dir / name, 2).n_points(), m);
  }
}

TEST(TimeSlicedGrid, PointsWithTimeGoToVtpWithATArrayAndReadBack) {
  const std::vector<double> pts = {0.1, 0.2, 0.3, 0.4, 1.5, -2.5, 3.5, 9.0};
  const auto dir = fresh_dir("TimeSlicedGrid.PointsWithTimeGoToVtpWithATArrayAndReadBack");
  write_points_vtp(dir / "p.vtp", 4, pts, {{"u", 1, {7, 8}}});
  const EvaluationGrid back = read_vtk_grid(dir / "p.vtp", 4);
  EXPECT_EQ(back.dim, 4);
  EXPECT_EQ(back.points, pts);
  // A 3D point file has no t: a model with time cannot take its points.
  write_points_vtp(dir / "q.vtp", 3, {0, 0, 0}, {});
  EXPECT_THROW(read_vtk_grid(dir / "q.vtp", 4), InputError);
}

#endif  // RBFPDE_HAVE_VTK

}  // namespace
}  // namespace rbfpde
