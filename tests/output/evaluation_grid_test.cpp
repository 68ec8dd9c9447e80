#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

namespace rbfpde {
namespace {

using test::TestBall;
using test::TestBox;

// Every quad is counter-clockwise with edges h along x then h along y: VTK_QUAD order.
void expect_quads_in_vtk_order(const EvaluationGrid& g, double hx, double hy) {
  for (std::size_t c = 0; c < g.n_cells(); ++c) {
    ASSERT_EQ(g.cell_types[c], CellType::quad);
    const long long* v = g.cell(c);
    auto x = [&](int k) { return g.points[2 * v[k]]; };
    auto y = [&](int k) { return g.points[2 * v[k] + 1]; };
    ASSERT_NEAR(x(1) - x(0), hx, 1e-12) << "cell " << c;
    ASSERT_NEAR(y(1) - y(0), 0, 1e-12) << "cell " << c;
    ASSERT_NEAR(x(2) - x(0), hx, 1e-12) << "cell " << c;
    ASSERT_NEAR(y(2) - y(0), hy, 1e-12) << "cell " << c;
    ASSERT_NEAR(x(3) - x(0), 0, 1e-12) << "cell " << c;
    ASSERT_NEAR(y(3) - y(0), hy, 1e-12) << "cell " << c;
  }
}

// Without VTK the grid is not clipped: the cells wholly inside are kept (with VTK,
// clipped_grid_test.cpp checks the body-fitted grid).

TEST(EvaluationGrid, UnitSquareKeepsTheWholeLattice) {
  const TestBox square({0, 0}, {1, 1});
  const EvaluationGrid grid = make_evaluation_grid(square, {101, 101});
  EXPECT_EQ(grid.dim, 2);
  ASSERT_EQ(grid.n_points(), 10201u);
  ASSERT_EQ(grid.n_cells(), 10000u);
  ASSERT_EQ(grid.cells.size(), 40000u);
  // Lattice order, x fastest, ends of the box hit exactly.
  EXPECT_EQ(grid.points[0], 0.0);
  EXPECT_EQ(grid.points[1], 0.0);
  EXPECT_EQ(grid.points[2 * 100 + 0], 1.0);
  EXPECT_EQ(grid.points[2 * 100 + 1], 0.0);
  EXPECT_EQ(grid.points[2 * 10200 + 0], 1.0);
  EXPECT_EQ(grid.points[2 * 10200 + 1], 1.0);
  EXPECT_DOUBLE_EQ(grid.points[2 * 101 + 1], 0.01);
  // First cell: VTK_QUAD order (i,j) (i+1,j) (i+1,j+1) (i,j+1).
  EXPECT_EQ(grid.cells[0], 0);
  EXPECT_EQ(grid.cells[1], 1);
  EXPECT_EQ(grid.cells[2], 102);
  EXPECT_EQ(grid.cells[3], 101);
  // A box is its own clip: the whole lattice of quads, whether VTK is built or not.
  for (CellType t : grid.cell_types) ASSERT_EQ(t, CellType::quad);
  expect_quads_in_vtk_order(grid, 0.01, 0.01);
}

TEST(EvaluationGrid, RectangleWithDifferentResolutionsPerAxis) {
  const TestBox rect({-1, 2}, {3, 4});
  const EvaluationGrid grid = make_evaluation_grid(rect, {5, 3});
  ASSERT_EQ(grid.n_points(), 15u);
  ASSERT_EQ(grid.n_cells(), 8u);
  const std::vector<double> expected_row0 = {-1, 2, 0, 2, 1, 2, 2, 2, 3, 2};
  for (std::size_t i = 0; i < expected_row0.size(); ++i)
    EXPECT_EQ(grid.points[i], expected_row0[i]);
  EXPECT_EQ(grid.points[2 * 14], 3.0);
  EXPECT_EQ(grid.points[2 * 14 + 1], 4.0);
  EXPECT_EQ(grid.points[2 * 5 + 1], 3.0);
}

TEST(EvaluationGrid, WithoutVtkDiskKeepsInsideCellsAndOnlyUsedPoints) {
  if (vtk_available()) GTEST_SKIP() << "built with VTK: the grid is clipped";
  const TestBall disk({0.5, -0.25}, 2.0);
  const int n = 201;
  const EvaluationGrid grid = make_evaluation_grid(disk, {n, n});
  const double h = 4.0 / (n - 1);

  // Brute force over the lattice: cells with all four corners inside.
  std::size_t expected_cells = 0;
  for (int j = 0; j + 1 < n; ++j) {
    for (int i = 0; i + 1 < n; ++i) {
      bool all = true;
      for (int dj = 0; dj < 2; ++dj)
        for (int di = 0; di < 2; ++di) {
          const double x[2] = {-1.5 + h * (i + di), -2.25 + h * (j + dj)};
          all = all && (x[0] - 0.5) * (x[0] - 0.5) + (x[1] + 0.25) * (x[1] + 0.25) <= 4.0 + 1e-12;
        }
      expected_cells += all;
    }
  }
  // Lattice points that fall exactly on the circle may go either way by a rounding error.
  EXPECT_NEAR(static_cast<double>(grid.n_cells()), static_cast<double>(expected_cells), 8.0);
  // Plausible: the inscribed cells cover the disk minus a rim about one or two cells wide.
  const double area_cells = grid.n_cells() * h * h;
  const double area_disk = M_PI * 4.0;
  EXPECT_LT(area_cells, area_disk);
  EXPECT_GT(area_cells, area_disk - 2.0 * (2 * M_PI * 2.0) * h * std::sqrt(2.0));

  std::vector<int> uses(grid.n_points(), 0);
  for (long long v : grid.cells) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, static_cast<long long>(grid.n_points()));
    ++uses[v];
  }
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    EXPECT_GE(uses[p], 1) << "unused point " << p;
    EXPECT_TRUE(disk.contains(&grid.points[2 * p])) << "point " << p << " outside";
    EXPECT_LE(uses[p], 4);
  }
  // No duplicate points.
  std::set<std::pair<double, double>> distinct;
  for (std::size_t p = 0; p < grid.n_points(); ++p)
    distinct.insert({grid.points[2 * p], grid.points[2 * p + 1]});
  EXPECT_EQ(distinct.size(), grid.n_points());
  expect_quads_in_vtk_order(grid, h, h);
}

TEST(EvaluationGrid, BoxHexahedraInVtkOrder) {
  const TestBox box({0, 0, 0}, {1, 2, 3});
  const EvaluationGrid grid = make_evaluation_grid(box, {3, 5, 4});
  EXPECT_EQ(grid.dim, 3);
  ASSERT_EQ(grid.n_points(), 60u);
  ASSERT_EQ(grid.n_cells(), 2u * 4u * 3u);
  const double h[3] = {0.5, 0.5, 1.0};
  // Bottom face counter-clockwise seen from +z, then the top face in the same order.
  const int offset[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                            {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  for (std::size_t c = 0; c < grid.n_cells(); ++c) {
    ASSERT_EQ(grid.cell_types[c], CellType::hexahedron);
    const long long* v = grid.cell(c);
    for (int k = 0; k < 8; ++k)
      for (int a = 0; a < 3; ++a)
        ASSERT_NEAR(grid.points[3 * v[k] + a] - grid.points[3 * v[0] + a], offset[k][a] * h[a],
                    1e-12)
            << "cell " << c << " vertex " << k << " axis " << a;
  }
}

TEST(EvaluationGrid, WithoutVtkBallDropsOutsideCells) {
  if (vtk_available()) GTEST_SKIP() << "built with VTK: the grid is clipped";
  const TestBall ball({0, 0, 0}, 1.0);
  const EvaluationGrid grid = make_evaluation_grid(ball, {21, 21, 21});
  const double h = 0.1;
  const double volume_cells = grid.n_cells() * h * h * h;
  EXPECT_LT(volume_cells, 4.0 / 3.0 * M_PI);
  EXPECT_GT(volume_cells, 4.0 / 3.0 * M_PI * std::pow(1.0 - std::sqrt(3.0) * h, 3));
  std::vector<char> used(grid.n_points(), 0);
  for (long long v : grid.cells) used[v] = 1;
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    EXPECT_TRUE(used[p]);
    EXPECT_TRUE(ball.contains(&grid.points[3 * p]));
  }
}

TEST(EvaluationGrid, RejectsBadResolution) {
  const TestBox square({0, 0}, {1, 1});
  EXPECT_THROW(make_evaluation_grid(square, {101}), std::invalid_argument);
  EXPECT_THROW(make_evaluation_grid(square, {101, 101, 101}), std::invalid_argument);
  EXPECT_THROW(make_evaluation_grid(square, {1, 101}), std::invalid_argument);
}

}  // namespace
}  // namespace rbfpde
