// Domain::geometry(): the data a device-side sampler needs matches what the domain was built from,
// and the polygon's triangulation covers the polygon exactly.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "problems/domain.hpp"
#include "problems/random.hpp"

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

using Vertices = std::vector<std::array<double, 2>>;

double signed_area(const std::array<double, 2>& a, const std::array<double, 2>& b,
                   const std::array<double, 2>& c) {
  return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

TEST(DomainGeometry, Rectangle) {
  const auto d = make_box({-1, 2}, {3, 5});
  const DomainGeometry g = d->geometry();
  EXPECT_EQ(g.type, "rectangle");
  EXPECT_EQ(g.dim, 2);
  EXPECT_EQ(g.lo, (std::vector<double>{-1, 2}));
  EXPECT_EQ(g.hi, (std::vector<double>{3, 5}));
  EXPECT_TRUE(g.centre.empty());
  EXPECT_TRUE(g.vertices.empty());
  EXPECT_TRUE(g.triangles.empty());
}

TEST(DomainGeometry, Box) {
  const DomainGeometry g = make_box({0, 0, -1}, {1, 2, 1})->geometry();
  EXPECT_EQ(g.type, "box");
  EXPECT_EQ(g.dim, 3);
  EXPECT_EQ(g.lo, (std::vector<double>{0, 0, -1}));
  EXPECT_EQ(g.hi, (std::vector<double>{1, 2, 1}));
}

TEST(DomainGeometry, DiskAndBall) {
  const DomainGeometry disk = make_ball({0.5, -1}, 2)->geometry();
  EXPECT_EQ(disk.type, "disk");
  EXPECT_EQ(disk.dim, 2);
  EXPECT_EQ(disk.centre, (std::vector<double>{0.5, -1}));
  EXPECT_EQ(disk.radius, 2);
  EXPECT_EQ(disk.lo, (std::vector<double>{-1.5, -3}));
  EXPECT_EQ(disk.hi, (std::vector<double>{2.5, 1}));

  const DomainGeometry ball = make_ball({1, 2, 3}, 0.5)->geometry();
  EXPECT_EQ(ball.type, "ball");
  EXPECT_EQ(ball.dim, 3);
  EXPECT_EQ(ball.centre, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(ball.radius, 0.5);
  EXPECT_EQ(ball.lo, (std::vector<double>{0.5, 1.5, 2.5}));
  EXPECT_EQ(ball.hi, (std::vector<double>{1.5, 2.5, 3.5}));
}

// The triangles are counter-clockwise, use each index range correctly, sum to the polygon's area
// and each centroid lies inside: together, a cover of the polygon without overlap.
void check_triangulation(const Domain& d, const Vertices& input) {
  const DomainGeometry g = d.geometry();
  EXPECT_EQ(g.type, "polygon");
  EXPECT_EQ(g.dim, 2);
  ASSERT_EQ(g.vertices.size(), input.size());
  // Counter-clockwise: the shoelace sum of the exported vertices is positive.
  double area = 0;
  for (std::size_t i = 0; i < g.vertices.size(); ++i) {
    const auto& a = g.vertices[i];
    const auto& b = g.vertices[(i + 1) % g.vertices.size()];
    area += 0.5 * (a[0] * b[1] - b[0] * a[1]);
  }
  EXPECT_GT(area, 0);
  EXPECT_NEAR(area, d.measure(), 1e-12 * d.measure());
  // Same vertex set as the input, in either orientation.
  for (const auto& v : input) {
    bool found = false;
    for (const auto& w : g.vertices) found = found || (v == w);
    EXPECT_TRUE(found) << v[0] << ", " << v[1];
  }
  double lo[2], hi[2];
  d.bounding_box(lo, hi);
  EXPECT_EQ(g.lo, (std::vector<double>{lo[0], lo[1]}));
  EXPECT_EQ(g.hi, (std::vector<double>{hi[0], hi[1]}));

  ASSERT_EQ(g.triangles.size(), input.size() - 2);  // no collinear vertices in these polygons
  double sum = 0;
  for (const auto& t : g.triangles) {
    for (int k : t) {
      ASSERT_GE(k, 0);
      ASSERT_LT(k, static_cast<int>(g.vertices.size()));
    }
    const auto &a = g.vertices[t[0]], &b = g.vertices[t[1]], &c = g.vertices[t[2]];
    const double s = signed_area(a, b, c);
    EXPECT_GT(s, 0) << "triangle not counter-clockwise";
    sum += s;
    const double centroid[2] = {(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3};
    EXPECT_TRUE(d.contains(centroid)) << centroid[0] << ", " << centroid[1];
  }
  EXPECT_NEAR(sum, d.measure(), 1e-12 * d.measure());
}

TEST(DomainGeometry, LShapeTriangulation) {
  const Vertices l = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};
  const auto d = make_polygon(l);
  check_triangulation(*d, l);
  EXPECT_NEAR(d->measure(), 3.0, 1e-15);
  // Clockwise input: exported counter-clockwise all the same.
  const Vertices cw(l.rbegin(), l.rend());
  check_triangulation(*make_polygon(cw), cw);
}

TEST(DomainGeometry, RandomStarTriangulation) {
  Rng rng(2024);
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    // Star-shaped about the origin, radii varying by a factor up to 5: far from convex.
    const int n = 5 + trial * 3;
    Vertices v;
    for (int i = 0; i < n; ++i) {
      const double angle = 2 * kPi * (i + 0.8 * uniform01(rng)) / n;
      const double r = uniform(rng, 0.2, 1.0);
      v.push_back({r * std::cos(angle), r * std::sin(angle)});
    }
    check_triangulation(*make_polygon(v), v);
  }
}

TEST(DomainGeometry, CollinearVertexAddsNoTriangle) {
  // (1, 0) lies on the bottom edge: the square still triangulates, without a degenerate triangle.
  const auto d = make_polygon({{0, 0}, {1, 0}, {2, 0}, {2, 2}, {0, 2}});
  const DomainGeometry g = d->geometry();
  double sum = 0;
  for (const auto& t : g.triangles) {
    const double s = signed_area(g.vertices[t[0]], g.vertices[t[1]], g.vertices[t[2]]);
    EXPECT_GT(s, 0);
    sum += s;
  }
  EXPECT_NEAR(sum, 4.0, 1e-12);
}

}  // namespace
}  // namespace rbfpde
