// The body-fitted evaluation grid (built with VTK): the lattice clipped at the domain's boundary,
// the points of the cut moved onto the boundary; and the grid of a point-cloud domain.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkCell.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPoints.h>
#include <vtkUnstructuredGrid.h>
#endif

namespace rbfpde {
namespace {

using test::TestBall;
using test::TestBox;
using test::TestCloud;
using test::TestLShape;

#ifdef RBFPDE_HAVE_VTK

// Area (2D) or volume (3D) of the grid's cells, from VTK's own triangulation of each cell into
// triangles or tetrahedra.
double measure_of(const EvaluationGrid& grid) {
  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    const double* x = &grid.points[p * grid.dim];
    points->InsertNextPoint(x[0], x[1], grid.dim == 3 ? x[2] : 0.0);
  }
  vtkNew<vtkUnstructuredGrid> ugrid;
  ugrid->SetPoints(points);
  ugrid->Allocate(static_cast<vtkIdType>(grid.n_cells()));
  std::vector<vtkIdType> ids;
  for (std::size_t c = 0; c < grid.n_cells(); ++c) {
    ids.assign(grid.cell(c), grid.cell(c) + grid.cell_size(c));
    ugrid->InsertNextCell(static_cast<int>(grid.cell_types[c]), static_cast<vtkIdType>(ids.size()),
                          ids.data());
  }
  double total = 0;
  vtkNew<vtkIdList> simplex_ids;
  vtkNew<vtkPoints> simplex_points;
  simplex_points->SetDataTypeToDouble();
  for (vtkIdType c = 0; c < ugrid->GetNumberOfCells(); ++c) {
    vtkCell* cell = ugrid->GetCell(c);
    cell->Triangulate(0, simplex_ids, simplex_points);
    const int k = grid.dim + 1;
    for (vtkIdType s = 0; s + k <= simplex_points->GetNumberOfPoints(); s += k) {
      double v[4][3];
      for (int j = 0; j < k; ++j) simplex_points->GetPoint(s + j, v[j]);
      double e[3][3];
      for (int j = 1; j < k; ++j)
        for (int a = 0; a < 3; ++a) e[j - 1][a] = v[j][a] - v[0][a];
      if (grid.dim == 2) {
        total += std::abs(e[0][0] * e[1][1] - e[0][1] * e[1][0]) / 2;
      } else {
        const double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                           e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                           e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
        total += std::abs(det) / 6;
      }
    }
  }
  return total;
}

double distance_from_centre(const TestBall& ball, const double* x) {
  double d2 = 0;
  for (int a = 0; a < ball.dim(); ++a) d2 += (x[a] - ball.centre()[a]) * (x[a] - ball.centre()[a]);
  return std::sqrt(d2);
}

// How many coordinates of x are not lattice coordinates lo + i·h (h = (hi − lo)/(n − 1)).
int off_lattice_axes(const double* x, int dim, const double* lo, const double* hi, int n) {
  int off = 0;
  for (int a = 0; a < dim; ++a) {
    const double t = (x[a] - lo[a]) / (hi[a] - lo[a]) * (n - 1);
    off += std::abs(t - std::round(t)) > 1e-9;
  }
  return off;
}

void expect_every_point_used(const EvaluationGrid& grid) {
  std::vector<int> uses(grid.n_points(), 0);
  for (long long v : grid.cells) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, static_cast<long long>(grid.n_points()));
    ++uses[static_cast<std::size_t>(v)];
  }
  for (std::size_t p = 0; p < grid.n_points(); ++p) EXPECT_GE(uses[p], 1) << "unused point " << p;
}

// Every point inside the ball or on its sphere within 1e-9, and the points the cut created (on a
// lattice edge: off the lattice on one axis) on the sphere within 1e-9. Returns how many there are.
std::size_t expect_points_inside_or_on_sphere(const TestBall& ball, const EvaluationGrid& grid,
                                              int n) {
  const int dim = ball.dim();
  double lo[3], hi[3];
  ball.bounding_box(lo, hi);
  std::size_t on_boundary = 0;
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    const double* x = &grid.points[p * dim];
    const double r = distance_from_centre(ball, x);
    EXPECT_LE(r, ball.radius() + 1e-9) << "point " << p << " outside";
    if (off_lattice_axes(x, dim, lo, hi, n) == 1) {
      EXPECT_NEAR(r, ball.radius(), 1e-9) << "cut point " << p << " off the boundary";
      ++on_boundary;
    }
  }
  return on_boundary;
}

TEST(ClippedGrid, DiskPointsLieInsideOrOnTheCircle) {
  const TestBall disk({0.5, -0.25}, 2.0);
  const int n = 41;  // h = 0.1
  const EvaluationGrid grid = make_evaluation_grid(disk, {n, n});
  const std::size_t cut = expect_points_inside_or_on_sphere(disk, grid, n);
  // The circle crosses about 4·(perimeter/h)/√2·… lattice edges; at least one per h of its length.
  EXPECT_GT(cut, static_cast<std::size_t>(2 * M_PI * 2.0 / 0.1));
  expect_every_point_used(grid);
  for (CellType t : grid.cell_types)
    EXPECT_TRUE(t == CellType::quad || t == CellType::triangle || t == CellType::polygon)
        << static_cast<int>(t);
}

// The clipped disk is a polygon inscribed in the circle whose edges are chords of length at most
// a cell diagonal √2·h: each chord c cuts off a segment of area ≈ c³/(12R), so the area lost is at
// most (perimeter / c)·c³/(12R) = π·c²/6 ≤ π·h²/3. The staircase of whole cells lost about
// perimeter·h.
TEST(ClippedGrid, DiskAreaMatchesWithinTheGridResolution) {
  const TestBall disk({0.5, -0.25}, 2.0);
  const double exact = M_PI * 4.0;
  for (int n : {21, 41, 81}) {
    const double h = 4.0 / (n - 1);
    const double area = measure_of(make_evaluation_grid(disk, {n, n}));
    EXPECT_LE(area, exact * (1 + 1e-12)) << "n = " << n;
    EXPECT_GE(area, exact - M_PI * h * h / 3) << "n = " << n;
    std::printf("[ measured ] disk R=2, %d×%d (h=%g): area %.12f, exact %.12f, short by %.3e\n", n,
                n, h, area, exact, exact - area);
  }
}

// In 3D the cut surface is triangulated with vertices on the sphere and triangles of diameter at
// most a cell diagonal √3·h, whose caps are at most d²/(8R) = 3h²/(8R) thick: the volume lost is
// at most 4πR²·3h²/(8R) = 1.5·π·R·h².
TEST(ClippedGrid, BallPointsOnTheSphereAndVolume) {
  const TestBall ball({0.1, -0.2, 0.3}, 1.0);
  const double exact = 4.0 / 3.0 * M_PI;
  for (int n : {11, 21}) {
    const double h = 2.0 / (n - 1);
    const EvaluationGrid grid = make_evaluation_grid(ball, {n, n, n});
    const std::size_t cut = expect_points_inside_or_on_sphere(ball, grid, n);
    EXPECT_GT(cut, static_cast<std::size_t>(4 * M_PI / (h * h)));
    expect_every_point_used(grid);
    const double volume = measure_of(grid);
    EXPECT_LE(volume, exact * (1 + 1e-12)) << "n = " << n;
    EXPECT_GE(volume, exact - 1.5 * M_PI * h * h) << "n = " << n;
    std::printf("[ measured ] ball R=1, %d³ (h=%g): volume %.12f, exact %.12f, short by %.3e\n", n,
                h, volume, exact, exact - volume);
  }
}

// A polygon whose corners and edges fall on the lattice comes out exact; when the reentrant
// corner falls inside a cell, that cell's cut is a chord across the corner: at most h² short.
TEST(ClippedGrid, LShape) {
  const TestLShape l;
  const EvaluationGrid on_lattice = make_evaluation_grid(l, {21, 21});
  EXPECT_NEAR(measure_of(on_lattice), 3.0, 1e-12);
  const EvaluationGrid off_lattice = make_evaluation_grid(l, {20, 20});
  const double h = 2.0 / 19;
  const double area = measure_of(off_lattice);
  EXPECT_LE(area, 3.0 + 1e-12);
  EXPECT_GE(area, 3.0 - h * h);
  for (const EvaluationGrid* g : {&on_lattice, &off_lattice})
    for (std::size_t p = 0; p < g->n_points(); ++p)
      EXPECT_TRUE(l.contains(&g->points[2 * p])) << "point " << p;
}

TEST(ClippedGrid, BoxIsTheLatticeIn3D) {
  const TestBox box({0, 0, 0}, {1, 2, 3});
  const EvaluationGrid grid = make_evaluation_grid(box, {3, 5, 4});
  EXPECT_EQ(grid.n_points(), 60u);
  EXPECT_EQ(grid.n_cells(), 24u);
  EXPECT_NEAR(measure_of(grid), 6.0, 1e-12);
}

// Point clouds: the given points, in their order, with a Delaunay mesh.
TEST(PointCloudGrid, DiskCloudGetsADelaunayTriangulation) {
  const TestBall disk({0, 0}, 1.0);
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> pts;
  while (pts.size() < 2 * 200) {
    const double x = 0.95 * u(gen), y = 0.95 * u(gen);
    if (x * x + y * y < 0.9) pts.insert(pts.end(), {x, y});
  }
  const int nb = 64;
  for (int k = 0; k < nb; ++k)
    pts.insert(pts.end(), {std::cos(2 * M_PI * k / nb), std::sin(2 * M_PI * k / nb)});
  const TestCloud cloud(pts, 200, disk);
  const EvaluationGrid grid = make_evaluation_grid(cloud, {101, 101});
  ASSERT_EQ(grid.points, pts);
  ASSERT_GT(grid.n_cells(), 0u);
  for (CellType t : grid.cell_types) ASSERT_EQ(t, CellType::triangle);
  expect_every_point_used(grid);
  // The triangulation covers the convex hull: the regular 64-gon.
  EXPECT_NEAR(measure_of(grid), 0.5 * nb * std::sin(2 * M_PI / nb), 1e-9);
}

TEST(PointCloudGrid, CellsOutsideANonConvexDomainAreDropped) {
  const TestLShape l;
  std::vector<double> pts;
  for (int j = 0; j <= 8; ++j)
    for (int i = 0; i <= 8; ++i) {
      const double x[2] = {0.25 * i, 0.25 * j};
      if (l.contains(x)) pts.insert(pts.end(), {x[0], x[1]});
    }
  const TestCloud cloud(pts, 0, l);
  const EvaluationGrid grid = make_evaluation_grid(cloud, {});
  ASSERT_EQ(grid.points, pts);
  // The hull's triangles across the notch are gone; what is left is the L.
  EXPECT_NEAR(measure_of(grid), 3.0, 1e-9);
}

TEST(PointCloudGrid, CubeCloudGetsTetrahedra) {
  const TestBox cube({0, 0, 0}, {1, 1, 1});
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(0.05, 0.95);
  std::vector<double> pts;
  for (int c = 0; c < 8; ++c)
    pts.insert(pts.end(), {double(c & 1), double(c >> 1 & 1), double(c >> 2)});
  for (int k = 0; k < 40; ++k) pts.insert(pts.end(), {u(gen), u(gen), u(gen)});
  const TestCloud cloud(pts, 0, cube);
  const EvaluationGrid grid = make_evaluation_grid(cloud, {});
  ASSERT_EQ(grid.points, pts);
  ASSERT_GT(grid.n_cells(), 0u);
  for (CellType t : grid.cell_types) ASSERT_EQ(t, CellType::tetra);
  EXPECT_NEAR(measure_of(grid), 1.0, 1e-9);
}

TEST(PointCloudGrid, TooFewPointsStayBare) {
  const TestBall disk({0, 0}, 1.0);
  const std::vector<double> pts = {0, 0, 0.5, 0.5};
  const TestCloud cloud(pts, 1, disk);
  const EvaluationGrid grid = make_evaluation_grid(cloud, {11, 11});
  EXPECT_EQ(grid.points, pts);
  EXPECT_EQ(grid.n_cells(), 0u);
}

#endif  // RBFPDE_HAVE_VTK

}  // namespace
}  // namespace rbfpde
