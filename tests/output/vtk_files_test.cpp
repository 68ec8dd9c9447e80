#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkCell.h>
#include <vtkCellArray.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde {
namespace {

using test::directory_listing;
using test::fresh_dir;
using test::read_text;

#ifdef RBFPDE_HAVE_VTK

// Values that need all 64 bits: a float32 path would not reproduce them.
double awkward(std::size_t i, int c) {
  return std::sin(0.1 + 1.2345678901234567 * i + 0.7 * c) * std::exp(0.001 * i) / 3.0;
}

std::vector<PointArray> arrays_for(std::size_t n) {
  PointArray u{"u", 1, {}}, err{"error", 1, {}}, grad{"grad_u", 3, {}};
  for (std::size_t i = 0; i < n; ++i) {
    u.values.push_back(awkward(i, 0));
    err.values.push_back(awkward(i, 1) * 1e-300);  // tiny magnitudes survive too
    for (int c = 0; c < 3; ++c) grad.values.push_back(awkward(i, 2 + c) * 1e12);
  }
  return {u, err, grad};
}

void expect_arrays_equal(vtkPointData* pd, const std::vector<PointArray>& arrays, std::size_t n) {
  ASSERT_EQ(pd->GetNumberOfArrays(), static_cast<int>(arrays.size()));
  for (const PointArray& a : arrays) {
    vtkDataArray* read = pd->GetArray(a.name.c_str());
    ASSERT_NE(read, nullptr) << a.name;
    EXPECT_EQ(read->GetDataType(), VTK_DOUBLE) << a.name;
    ASSERT_EQ(read->GetNumberOfComponents(), a.components) << a.name;
    ASSERT_EQ(read->GetNumberOfTuples(), static_cast<vtkIdType>(n)) << a.name;
    for (std::size_t i = 0; i < n; ++i)
      for (int c = 0; c < a.components; ++c)
        ASSERT_EQ(read->GetComponent(i, c), a.values[i * a.components + c])
            << a.name << " point " << i << " component " << c;
  }
}

void expect_grid_round_trip(const EvaluationGrid& grid, const std::filesystem::path& path) {
  const auto arrays = arrays_for(grid.n_points());
  write_grid_vtu(path, grid, arrays);

  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkUnstructuredGrid* out = reader->GetOutput();
  ASSERT_EQ(out->GetNumberOfPoints(), static_cast<vtkIdType>(grid.n_points()));
  ASSERT_EQ(out->GetNumberOfCells(), static_cast<vtkIdType>(grid.n_cells()));
  EXPECT_EQ(out->GetPoints()->GetDataType(), VTK_DOUBLE);
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    double x[3];
    out->GetPoint(p, x);
    for (int a = 0; a < 3; ++a) {
      const double expected = a < grid.dim ? grid.points[p * grid.dim + a] : 0.0;
      ASSERT_EQ(x[a], expected) << "point " << p << " axis " << a;
    }
  }
  // Cells of every type the clipped grid holds, each with its own type and point ids.
  for (std::size_t c = 0; c < grid.n_cells(); ++c) {
    ASSERT_EQ(out->GetCellType(c), static_cast<int>(grid.cell_types[c])) << "cell " << c;
    vtkIdType npts;
    const vtkIdType* ids;
    out->GetCellPoints(c, npts, ids);
    ASSERT_EQ(npts, static_cast<vtkIdType>(grid.cell_size(c)));
    for (vtkIdType v = 0; v < npts; ++v) ASSERT_EQ(ids[v], grid.cell(c)[v]);
  }
  expect_arrays_equal(out->GetPointData(), arrays, grid.n_points());
}

TEST(VtkFiles, GridVtuRoundTripsExactly2D) {
  const auto dir = fresh_dir("vtu2d");
  const test::TestBall disk({0.1, 0.2}, 0.9);
  const EvaluationGrid grid = make_evaluation_grid(disk, {41, 41});
  ASSERT_GT(grid.n_cells(), 900u);
  // The clipped disk mixes interior quads with the cut cells.
  std::set<CellType> types(grid.cell_types.begin(), grid.cell_types.end());
  EXPECT_TRUE(types.count(CellType::quad));
  EXPECT_TRUE(types.count(CellType::triangle));
  expect_grid_round_trip(grid, dir / "solution.vtu");
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"solution.vtu"});
  // Binary appended, compressed: the XML header says so.
  const std::string text = read_text(dir / "solution.vtu");
  EXPECT_NE(text.find("type=\"UnstructuredGrid\""), std::string::npos);
  EXPECT_NE(text.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos);
  EXPECT_NE(text.find("<AppendedData encoding=\"raw\">"), std::string::npos);
}

TEST(VtkFiles, GridVtuRoundTripsExactly3D) {
  const auto dir = fresh_dir("vtu3d");
  const test::TestBall ball({0, 0, 0}, 1.0);
  const EvaluationGrid grid = make_evaluation_grid(ball, {11, 12, 13});
  ASSERT_GT(grid.n_cells(), 100u);
  std::set<CellType> types(grid.cell_types.begin(), grid.cell_types.end());
  EXPECT_TRUE(types.count(CellType::hexahedron));
  EXPECT_GE(types.size(), 3u) << "no cut cells";
  expect_grid_round_trip(grid, dir / "snapshot_0001.vtu");
}

TEST(VtkFiles, GridWithoutCellsIsWrittenAsVertices) {
  const auto dir = fresh_dir("vtu_vertices");
  EvaluationGrid grid;
  grid.dim = 3;
  grid.points = {0, 0, 0, 1, 0, 0, 0.5, 0.25, 2};
  const auto arrays = arrays_for(3);
  write_grid_vtu(dir / "p.vtu", grid, arrays);
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName((dir / "p.vtu").c_str());
  reader->Update();
  vtkUnstructuredGrid* out = reader->GetOutput();
  ASSERT_EQ(out->GetNumberOfPoints(), 3);
  ASSERT_EQ(out->GetNumberOfCells(), 3);
  for (vtkIdType c = 0; c < 3; ++c) {
    EXPECT_EQ(out->GetCellType(c), VTK_VERTEX);
    EXPECT_EQ(out->GetCell(c)->GetPointId(0), c);
  }
  expect_arrays_equal(out->GetPointData(), arrays, 3);
}

TEST(VtkFiles, GridVtuReplacesExistingFile) {
  const auto dir = fresh_dir("vtu_replace");
  const test::TestBox square({0, 0}, {1, 1});
  { std::ofstream(dir / "solution.vtu") << "old"; }
  expect_grid_round_trip(make_evaluation_grid(square, {6, 7}), dir / "solution.vtu");
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"solution.vtu"});
}

TEST(VtkFiles, PointsVtpRoundTripsExactly) {
  for (int dim : {2, 3}) {
    const auto dir = fresh_dir("vtp" + std::to_string(dim));
    const std::size_t n = 257;
    std::vector<double> points;
    for (std::size_t i = 0; i < n * dim; ++i) points.push_back(awkward(i, 7) * 10);
    const auto arrays = arrays_for(n);
    const auto path = dir / "centres.vtp";
    write_points_vtp(path, dim, points, arrays);
    EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"centres.vtp"});

    vtkNew<vtkXMLPolyDataReader> reader;
    reader->SetFileName(path.c_str());
    reader->Update();
    vtkPolyData* out = reader->GetOutput();
    ASSERT_EQ(out->GetNumberOfPoints(), static_cast<vtkIdType>(n));
    for (std::size_t p = 0; p < n; ++p) {
      double x[3];
      out->GetPoint(p, x);
      for (int a = 0; a < 3; ++a)
        ASSERT_EQ(x[a], a < dim ? points[p * dim + a] : 0.0) << "point " << p << " axis " << a;
    }
    // One vertex per point, so ParaView draws them.
    ASSERT_EQ(out->GetNumberOfVerts(), static_cast<vtkIdType>(n));
    ASSERT_EQ(out->GetNumberOfCells(), static_cast<vtkIdType>(n));
    for (vtkIdType c = 0; c < static_cast<vtkIdType>(n); ++c) {
      ASSERT_EQ(out->GetCellType(c), VTK_VERTEX);
      vtkIdType npts;
      const vtkIdType* ids;
      out->GetCellPoints(c, npts, ids);
      ASSERT_EQ(npts, 1);
      ASSERT_EQ(ids[0], c);
    }
    expect_arrays_equal(out->GetPointData(), arrays, n);
  }
}

TEST(VtkFiles, EmptyPointSetIsWritten) {
  const auto dir = fresh_dir("vtp_empty");
  write_points_vtp(dir / "collocation.vtp", 2, {}, {PointArray{"residual", 1, {}}});
  vtkNew<vtkXMLPolyDataReader> reader;
  reader->SetFileName((dir / "collocation.vtp").c_str());
  reader->Update();
  EXPECT_EQ(reader->GetOutput()->GetNumberOfPoints(), 0);
}

TEST(VtkFiles, MissingDirectoryThrowsNamingThePath) {
  const auto dir = fresh_dir("vtk_missing");
  const auto path = dir / "no_such_dir" / "solution.vtu";
  const test::TestBox square({0, 0}, {1, 1});
  const EvaluationGrid grid = make_evaluation_grid(square, {3, 3});
  try {
    write_grid_vtu(path, grid, {});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot write " + path.string() + ": No such file or directory");
  }
  EXPECT_THROW(write_points_vtp(dir / "no_such_dir" / "c.vtp", 2, {0, 0}, {}), std::runtime_error);
  EXPECT_TRUE(directory_listing(dir).empty());
}

#else  // !RBFPDE_HAVE_VTK

TEST(VtkFiles, WithoutVtkTheWritersSaySo) {
  const auto dir = fresh_dir("novtk");
  const test::TestBox square({0, 0}, {1, 1});
  try {
    write_grid_vtu(dir / "solution.vtu", make_evaluation_grid(square, {3, 3}), {});
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "built without VTK: cannot write " + (dir / "solution.vtu").string());
  }
  EXPECT_THROW(write_points_vtp(dir / "c.vtp", 2, {0, 0}, {}), std::runtime_error);
  EXPECT_TRUE(directory_listing(dir).empty());
}

#endif  // RBFPDE_HAVE_VTK

TEST(VtkFiles, ArraySizeMismatchIsRejected) {
  const auto dir = fresh_dir("vtk_mismatch");
  const test::TestBox square({0, 0}, {1, 1});
  const EvaluationGrid grid = make_evaluation_grid(square, {3, 3});
  EXPECT_THROW(write_grid_vtu(dir / "s.vtu", grid, {PointArray{"u", 1, std::vector<double>(8)}}),
               std::invalid_argument);
  EXPECT_THROW(write_points_vtp(dir / "c.vtp", 2, {0, 0, 1, 1}, {PointArray{"w", 2, {1, 2}}}),
               std::invalid_argument);
  EXPECT_THROW(write_points_vtp(dir / "c.vtp", 2, {0, 0, 1}, {}), std::invalid_argument);
  EXPECT_TRUE(directory_listing(dir).empty());
}

TEST(PvdFile, ListsTheSnapshotsInOrder) {
  const auto dir = fresh_dir("pvd");
  write_pvd(dir / "training.pvd",
            {{0.0, "training_0000.vtu"}, {10.0, "training_0010.vtu"}, {0.1, "a&b\"<c>.vtu"}});
  EXPECT_EQ(read_text(dir / "training.pvd"),
            "<?xml version=\"1.0\"?>\n"
            "<VTKFile type=\"Collection\" version=\"0.1\">\n"
            "  <Collection>\n"
            "    <DataSet timestep=\"0\" file=\"training_0000.vtu\"/>\n"
            "    <DataSet timestep=\"10\" file=\"training_0010.vtu\"/>\n"
            "    <DataSet timestep=\"0.1\" file=\"a&amp;b&quot;&lt;c&gt;.vtu\"/>\n"
            "  </Collection>\n"
            "</VTKFile>\n");
  EXPECT_EQ(directory_listing(dir), std::vector<std::string>{"training.pvd"});
}

TEST(PvdFile, EmptyCollection) {
  const auto dir = fresh_dir("pvd_empty");
  write_pvd(dir / "training.pvd", {});
  EXPECT_EQ(read_text(dir / "training.pvd"),
            "<?xml version=\"1.0\"?>\n"
            "<VTKFile type=\"Collection\" version=\"0.1\">\n"
            "  <Collection>\n"
            "  </Collection>\n"
            "</VTKFile>\n");
}

}  // namespace
}  // namespace rbfpde
