// The pictures: their data (lattice panels from the evaluation grid, the boundary's signed
// distance, the convergence curves, history.csv read back) and, in a build with PLplot, the PNG
// files themselves: valid, of the stated size, atomic, and different for different data.
#include "solver/output/pictures.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "solver/output/output.hpp"
#include "tests/output/test_support.hpp"

namespace rbfpde {
namespace {

namespace fs = std::filesystem;
using test::directory_listing;
using test::fresh_dir;
using test::read_text;

// A disk or ball whose distance to the boundary is the true one.
class RoundDomain : public test::TestBall {
 public:
  RoundDomain(std::vector<double> centre, double radius)
      : TestBall(centre, radius), c_(std::move(centre)), r_(radius) {}
  double distance_to_boundary(const double* x) const override {
    double d2 = 0;
    for (int a = 0; a < dim(); ++a) d2 += (x[a] - c_[a]) * (x[a] - c_[a]);
    return std::abs(std::sqrt(d2) - r_);
  }

 private:
  std::vector<double> c_;
  double r_;
};

std::uint32_t big_endian(const std::string& s, std::size_t at) {
  return (std::uint32_t(std::uint8_t(s[at])) << 24) |
         (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

// A PNG file: the 8-byte signature, an IHDR chunk first (width, height), an IEND chunk last.
void expect_png(const std::string& bytes, std::uint32_t width, std::uint32_t height) {
  ASSERT_GT(bytes.size(), 8u + 25u + 12u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(big_endian(bytes, 8), 13u) << "IHDR length";
  EXPECT_EQ(bytes.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian(bytes, 16), width);
  EXPECT_EQ(big_endian(bytes, 20), height);
  EXPECT_EQ(bytes.substr(bytes.size() - 8, 4), "IEND");
}

double value_at(const PicturePanel& p, int i, int j) { return p.values[i + std::size_t(p.nx) * j]; }

TEST(PictureData, DiskPanelHoldsTheGridValuesAtTheirLatticeNodes) {
  const RoundDomain disk({0.5, 0.5}, 0.5);
  const EvaluationGrid grid = make_evaluation_grid(disk, {21, 21});
  std::vector<double> values(grid.n_points());
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = grid.points[2 * i] + 10 * grid.points[2 * i + 1];
  const std::vector<PicturePanel> panels = grid_panels(disk, grid, {21, 21}, values, {"x", "y"});
  ASSERT_EQ(panels.size(), 1u);
  const PicturePanel& p = panels[0];
  EXPECT_EQ(p.nx, 21);
  EXPECT_EQ(p.ny, 21);
  EXPECT_EQ(p.xlabel, "x");
  EXPECT_EQ(p.ylabel, "y");
  std::size_t defined = 0;
  for (int j = 0; j < 21; ++j)
    for (int i = 0; i < 21; ++i) {
      const double v = value_at(p, i, j);
      if (std::isnan(v)) continue;
      ++defined;
      EXPECT_NEAR(v, 0.05 * i + 10 * 0.05 * j, 1e-12) << i << ", " << j;
      // The body-fitted grid keeps lattice nodes on the circle (to rounding) as well.
      const double r = std::hypot(0.05 * i - 0.5, 0.05 * j - 0.5);
      EXPECT_LE(r, 0.5 + 1e-9) << "a value outside the disk at " << i << ", " << j;
    }
  // Every grid point at a lattice node lands on its node; the cut points between nodes (on the
  // circle) are not lattice nodes and are left out.
  std::size_t on_nodes = 0;
  for (std::size_t k = 0; k < grid.n_points(); ++k) {
    const double ti = grid.points[2 * k] / 0.05, tj = grid.points[2 * k + 1] / 0.05;
    on_nodes += std::abs(ti - std::round(ti)) <= 1e-6 && std::abs(tj - std::round(tj)) <= 1e-6;
  }
  EXPECT_EQ(defined, on_nodes) << "every grid point at a node lands on its node";
  EXPECT_LT(on_nodes, grid.n_points()) << "the clipped grid has cut points between the nodes";
  EXPECT_TRUE(std::isnan(value_at(p, 0, 0))) << "the box's corner is outside the disk";
  EXPECT_FALSE(std::isnan(value_at(p, 10, 10)));

  // The signed distance: negative inside, positive outside, zero on the circle.
  ASSERT_EQ(p.signed_distance.size(), std::size_t(p.sd_nx) * p.sd_ny);
  EXPECT_LT(p.frame_lo[0], 0.0);
  EXPECT_GT(p.frame_hi[0], 1.0);
  const int ci = (p.sd_nx - 1) / 2, cj = (p.sd_ny - 1) / 2;
  EXPECT_NEAR(p.signed_distance[ci + std::size_t(p.sd_nx) * cj], -0.5, 1e-12);
  EXPECT_GT(p.signed_distance[0], 0.0);
  for (int j = 0; j < p.sd_ny; j += 7)
    for (int i = 0; i < p.sd_nx; i += 7) {
      const double x = p.frame_lo[0] + (p.frame_hi[0] - p.frame_lo[0]) * i / (p.sd_nx - 1);
      const double y = p.frame_lo[1] + (p.frame_hi[1] - p.frame_lo[1]) * j / (p.sd_ny - 1);
      EXPECT_NEAR(p.signed_distance[i + std::size_t(p.sd_nx) * j],
                  std::hypot(x - 0.5, y - 0.5) - 0.5, 1e-12);
    }
}

TEST(PictureData, BallGivesThreeMidPlaneSlices) {
  const RoundDomain ball({0, 0, 0}, 1);
  const EvaluationGrid grid = make_evaluation_grid(ball, {11, 13, 15});
  std::vector<double> values(grid.n_points());
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = grid.points[3 * i] + 10 * grid.points[3 * i + 1] + 100 * grid.points[3 * i + 2];
  const std::vector<PicturePanel> panels =
      grid_panels(ball, grid, {11, 13, 15}, values, {"x", "y", "z"});
  ASSERT_EQ(panels.size(), 3u);
  EXPECT_EQ(panels[0].title, "z = 0");
  EXPECT_EQ(panels[1].title, "y = 0");
  EXPECT_EQ(panels[2].title, "x = 0");
  EXPECT_EQ(panels[0].nx, 11);
  EXPECT_EQ(panels[0].ny, 13);
  EXPECT_EQ(panels[1].nx, 11);
  EXPECT_EQ(panels[1].ny, 15);
  EXPECT_EQ(panels[2].nx, 13);
  EXPECT_EQ(panels[2].ny, 15);
  EXPECT_EQ(panels[1].xlabel, "x");
  EXPECT_EQ(panels[1].ylabel, "z");
  // Centre nodes: value 0 at the origin in every slice; one node off-centre in each plane.
  EXPECT_NEAR(value_at(panels[0], 5, 6), 0, 1e-12);
  EXPECT_NEAR(value_at(panels[0], 6, 6), 0.2, 1e-12);             // x = 0.2, y = 0
  EXPECT_NEAR(value_at(panels[1], 5, 8), 100 * 2.0 / 14, 1e-12);  // z = 1/7
  EXPECT_NEAR(value_at(panels[2], 7, 7), 10 * 2.0 / 12, 1e-12);   // y = 1/6
  for (const PicturePanel& p : panels) {
    EXPECT_TRUE(std::isnan(value_at(p, 0, 0)));
    EXPECT_LT(p.signed_distance[(p.sd_nx - 1) / 2 + std::size_t(p.sd_nx) * ((p.sd_ny - 1) / 2)],
              -0.99);
  }
}

TEST(PictureData, PointsOffTheLatticeAreIgnored) {
  const RoundDomain disk({0, 0}, 1);
  EvaluationGrid grid;
  grid.dim = 2;
  grid.points = {0, 0, 0.013, 0.0};  // the centre node, and a point between nodes
  const std::vector<PicturePanel> panels = grid_panels(disk, grid, {11, 11}, {7, 9}, {"x", "y"});
  std::size_t defined = 0;
  for (double v : panels[0].values) defined += !std::isnan(v);
  EXPECT_EQ(defined, 1u);
  EXPECT_EQ(value_at(panels[0], 5, 5), 7);
  EXPECT_THROW(grid_panels(disk, grid, {11, 11}, {7}, {"x", "y"}), std::invalid_argument);
}

std::vector<HistoryCsv::Row> some_rows(double scale, bool with_error) {
  std::vector<HistoryCsv::Row> rows;
  for (long c = 0; c <= 50; c += 10) {
    const double e = with_error ? scale * std::exp(-0.1 * c) : NAN;
    rows.push_back(
        {c, 0.01 * c, scale * std::exp(-0.2 * c), 1, 1, e, e, scale * 0.5, scale * 0.25});
  }
  return rows;
}

TEST(PictureData, ConvergencePanelsPlotTheHistoryAgainstCyclesAndSeconds) {
  const auto rows = some_rows(1.0, true);
  const std::vector<CurvePanel> panels = convergence_panels(rows);
  ASSERT_EQ(panels.size(), 2u);
  EXPECT_EQ(panels[0].xlabel, "cycle");
  EXPECT_EQ(panels[1].xlabel, "training time [s]");
  ASSERT_EQ(panels[0].curves.size(), 4u);
  EXPECT_EQ(panels[0].curves[0].label, "loss");
  EXPECT_EQ(panels[0].curves[3].label, "relative L2 error");
  EXPECT_EQ(panels[0].curves[1].y[2], rows[2].val_rms_interior);
  EXPECT_EQ(panels[0].curves[2].y[2], rows[2].val_rms_boundary);
  EXPECT_EQ(panels[0].curves[3].y[5], rows[5].rel_l2_error);
  EXPECT_EQ(panels[0].curves[0].x[3], 30.0);
  EXPECT_EQ(panels[1].curves[0].x[3], rows[3].seconds);
  // Without an exact solution there is no error curve.
  EXPECT_EQ(convergence_panels(some_rows(1.0, false))[0].curves.size(), 3u);
}

TEST(PictureData, HistoryCsvReadsBackWhatHistoryCsvWrites) {
  const fs::path dir = fresh_dir("PictureData.HistoryCsv");
  HistoryCsv h;
  for (const auto& r : some_rows(2.0, false)) h.add(r);
  h.flush(dir / "history.csv");
  const std::vector<HistoryCsv::Row> back = read_history_csv(dir / "history.csv");
  ASSERT_EQ(back.size(), h.rows().size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].cycle, h.rows()[i].cycle);
    EXPECT_NEAR(back[i].seconds, h.rows()[i].seconds, 1e-9);
    EXPECT_NEAR(back[i].loss, h.rows()[i].loss, 1e-9 * h.rows()[i].loss);
    EXPECT_NEAR(back[i].val_rms_boundary, 0.5, 1e-12);
    EXPECT_TRUE(std::isnan(back[i].rel_l2_error));
  }
  std::ofstream(dir / "bad.csv") << "a,b\n1,2\n";
  EXPECT_THROW(read_history_csv(dir / "bad.csv"), std::runtime_error);
  EXPECT_THROW(read_history_csv(dir / "missing.csv"), std::runtime_error);
}

FieldPicture disk_picture(double scale, bool log_scale) {
  const RoundDomain disk({0.5, 0.5}, 0.5);
  const EvaluationGrid grid = make_evaluation_grid(disk, {41, 41});
  std::vector<double> values(grid.n_points());
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = scale * std::sin(3 * grid.points[2 * i]) * grid.points[2 * i + 1] + 1e-3;
  FieldPicture picture;
  picture.title = "test";
  picture.colour_label = "u";
  picture.log_scale = log_scale;
  picture.panels = grid_panels(disk, grid, {41, 41}, values, {"x", "y"});
  return picture;
}

#ifdef RBFPDE_HAVE_PLPLOT

TEST(Pictures, FieldPictureIsAPngAndChangesWithTheData) {
  ASSERT_TRUE(pictures_available()) << pictures_unavailable_reason();
  const fs::path dir = fresh_dir("Pictures.Field");
  write_field_picture(dir / "a.png", disk_picture(1.0, false));
  write_field_picture(dir / "b.png", disk_picture(1.0, false));
  write_field_picture(dir / "c.png", disk_picture(2.0, false));
  write_field_picture(dir / "d.png", disk_picture(1.0, true));
  const std::string a = read_text(dir / "a.png"), b = read_text(dir / "b.png");
  const std::string c = read_text(dir / "c.png"), d = read_text(dir / "d.png");
  expect_png(a, 860, 680);
  expect_png(c, 860, 680);
  expect_png(d, 860, 680);
  const std::hash<std::string> hash;
  EXPECT_EQ(hash(a), hash(b)) << "the same data draws the same picture";
  EXPECT_NE(hash(a), hash(c)) << "different data draws a different picture";
  EXPECT_NE(hash(a), hash(d)) << "a log scale draws a different picture";
  EXPECT_EQ(directory_listing(dir), (std::vector<std::string>{"a.png", "b.png", "c.png", "d.png"}))
      << "no temporary file left behind";
}

TEST(Pictures, ThreeSlicePictureIsWiderThanOnePanel) {
  const RoundDomain ball({0, 0, 0}, 1);
  const EvaluationGrid grid = make_evaluation_grid(ball, {9, 9, 9});
  FieldPicture picture;
  picture.title = "ball";
  picture.panels = grid_panels(ball, grid, {9, 9, 9}, std::vector<double>(grid.n_points(), 1.0),
                               {"x", "y", "z"});
  const fs::path dir = fresh_dir("Pictures.Slices");
  write_field_picture(dir / "s.png", picture);
  expect_png(read_text(dir / "s.png"), 620 * 3 + 160, 680);
}

TEST(Pictures, CurvePictureIsAPngAndChangesWithTheData) {
  const fs::path dir = fresh_dir("Pictures.Curves");
  write_curve_picture(dir / "a.png", "run", convergence_panels(some_rows(1.0, true)));
  write_curve_picture(dir / "b.png", "run", convergence_panels(some_rows(3.0, true)));
  const std::string a = read_text(dir / "a.png"), b = read_text(dir / "b.png");
  expect_png(a, 1440, 560 + 30 * 2);
  expect_png(b, 1440, 560 + 30 * 2);
  EXPECT_NE(std::hash<std::string>()(a), std::hash<std::string>()(b));
  // Degenerate data (one row, no positive values, a log x axis) still draws a picture.
  CurvePanel empty;
  empty.log_x = true;
  empty.curves = {{"nothing", {0, 1}, {0, -1}}, {"one point", {2}, {1e-3}}};
  write_curve_picture(dir / "c.png", "degenerate", {empty});
  expect_png(read_text(dir / "c.png"), 720, 590);
}

TEST(Pictures, UnwritableTargetThrowsAndLeavesNothing) {
  const fs::path dir = fresh_dir("Pictures.Unwritable");
  try {
    write_curve_picture(dir / "missing" / "c.png", "x", convergence_panels(some_rows(1, true)));
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("c.png"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_field_picture(dir / "f.png", FieldPicture{}), std::invalid_argument);
  EXPECT_TRUE(directory_listing(dir).empty());
}

#else

TEST(Pictures, BuildWithoutPlplotDrawsNothingAndSaysWhy) {
  EXPECT_FALSE(pictures_available());
  EXPECT_NE(pictures_unavailable_reason().find("PLplot"), std::string::npos);
  const fs::path dir = fresh_dir("Pictures.NoPlplot");
  EXPECT_THROW(write_field_picture(dir / "a.png", disk_picture(1.0, false)), std::runtime_error);
  EXPECT_TRUE(directory_listing(dir).empty());
}

#endif

}  // namespace
}  // namespace rbfpde
