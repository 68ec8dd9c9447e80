// The shared domain formulas (problems/domain_shapes.hpp) run on the host: the paths only the
// device sampler takes (a polygon's interior by triangle, its boundary from two uniforms, a
// box's face from the first of its uniforms, the uniforms in (0, 1] that Philox gives) against
// the host domains' inside test and distance; the piece search against std::upper_bound; a
// composite's program against its definition.
#include "problems/domain_shapes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <vector>

#include "problems/domain.hpp"

namespace rbfpde {
namespace {

// Uniforms in (0, 1], as the device draws them (1 included, 0 not).
double device_uniform(Rng& rng) { return 1.0 - uniform01(rng); }

const std::vector<std::array<double, 2>> kLShape = {{0, 0},     {1, 0},   {1, 0.5},
                                                    {0.5, 0.5}, {0.5, 1}, {0, 1}};

TEST(DomainShapes, PolygonDevicePathsLieInsideAndOnTheBoundary) {
  const auto polygon = make_polygon(kLShape);
  const DomainGeometry g = polygon->geometry();
  const PolygonArrays arrays(g.vertices, g.triangles);
  const PolygonShape shape = arrays.shape();
  Rng rng(11);
  int in_upper_arm = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    double u[3] = {device_uniform(rng), device_uniform(rng), device_uniform(rng)};
    double p[2], q[2], normal[2];
    polygon_interior_point(shape, u, p);
    ASSERT_TRUE(polygon->contains(p)) << p[0] << ", " << p[1];
    in_upper_arm += p[1] > 0.5;
    boundary_point(shape, u, q, normal);
    ASSERT_LT(polygon->distance_to_boundary(q), 1e-12);
    ASSERT_NEAR(std::hypot(normal[0], normal[1]), 1.0, 1e-14);
    const double out[2] = {q[0] + 1e-6 * normal[0], q[1] + 1e-6 * normal[1]};
    const double in[2] = {q[0] - 1e-6 * normal[0], q[1] - 1e-6 * normal[1]};
    ASSERT_FALSE(polygon->contains(out));
    ASSERT_TRUE(polygon->contains(in));
  }
  // Uniform by area: the arm above y = 0.5 is a third of the L.
  EXPECT_NEAR(in_upper_arm / double(n), 1.0 / 3.0, 5 * std::sqrt(2.0 / 9.0 / n));
  EXPECT_DOUBLE_EQ(shape.area[shape.triangles], polygon->measure());
}

TEST(DomainShapes, BoxAndBallDevicePathsMatchTheHostDomains) {
  const double lo[3] = {-1, 0, 2}, hi[3] = {1, 0.5, 5};
  const double centre[3] = {0.5, -0.25, 1};
  for (int dim = 2; dim <= 3; ++dim) {
    const auto box = make_box({lo, lo + dim}, {hi, hi + dim});
    const auto ball = make_ball({centre, centre + dim}, 0.75);
    const BoxShape b = make_box_shape(dim, lo, hi);
    const BallShape s = make_ball_shape(dim, centre, 0.75);
    EXPECT_DOUBLE_EQ(boundary_measure(s), primitive_boundary_measure(ball->geometry()));
    EXPECT_DOUBLE_EQ(boundary_measure(b), primitive_boundary_measure(box->geometry()));
    Rng rng(5);
    for (int i = 0; i < 5000; ++i) {
      double u[kMaxShapeDraws];
      for (double& v : u) v = device_uniform(rng);
      double p[3], n[3];
      interior_point(b, u, p);
      ASSERT_TRUE(box->contains(p));
      interior_point(s, u, p);
      ASSERT_TRUE(ball->contains(p));
      boundary_point(b, u, p, n);
      ASSERT_LT(box->distance_to_boundary(p), 1e-12);
      ASSERT_TRUE(shape_contains(b, p));
      boundary_point(s, u, p, n);
      ASSERT_LT(ball->distance_to_boundary(p), 1e-12);
      double r2 = 0;
      for (int k = 0; k < dim; ++k) r2 += (p[k] - centre[k]) * n[k];
      ASSERT_NEAR(r2, 0.75, 1e-12);  // the normal points away from the centre
    }
  }
}

TEST(DomainShapes, PieceOfIsTheLastCumulativeAtOrBelow) {
  const std::vector<double> cumulative = {0, 1, 1.5, 4, 4.25};
  const int count = int(cumulative.size()) - 1;
  for (double t : {0.0, 0.5, 1.0, 1.25, 1.5, 3.999, 4.0, 4.2, 4.25, 5.0}) {
    const long expected =
        std::min<long>(count - 1, std::upper_bound(cumulative.begin(), cumulative.end(), t) -
                                      cumulative.begin() - 1);
    EXPECT_EQ(piece_of(cumulative.data(), count, t), expected) << t;
  }
  EXPECT_EQ(pick_index(0.0, 7), 0);
  EXPECT_EQ(pick_index(0.999, 7), 6);
  EXPECT_EQ(pick_index(1.0, 7), 6);
}

TEST(DomainShapes, CompositeProgramFoldsFromTheLeft) {
  // (a − b − c) ∪ d over leaves a, b, c, d.
  auto node = [](const char* type, std::vector<DomainGeometry> parts) {
    DomainGeometry g;
    g.type = type;
    g.parts = std::move(parts);
    return g;
  };
  const DomainGeometry disk = node("disk", {});
  const DomainGeometry result = node("union", {node("difference", {disk, disk, disk}), disk});
  std::vector<const DomainGeometry*> leaves;
  const std::vector<int> program = csg_program(result, leaves);
  EXPECT_EQ(program, (std::vector<int>{0, 1, kCsgDifference, 2, kCsgDifference, 3, kCsgUnion}));
  ASSERT_EQ(leaves.size(), 4u);
  for (int bits = 0; bits < 16; ++bits) {
    const bool in[4] = {bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8)};
    const bool expected = (in[0] && !in[1] && !in[2]) || in[3];
    EXPECT_EQ(csg_evaluate<bool>(program.data(), int(program.size()), [&](int j) { return in[j]; }),
              expected)
        << bits;
    // Signed distances −1 (inside) or 1 (outside): the same membership by min and max.
    const double s = csg_evaluate<double>(program.data(), int(program.size()),
                                          [&](int j) { return in[j] ? -1.0 : 1.0; });
    EXPECT_EQ(s < 0, expected) << bits;
  }
}

}  // namespace
}  // namespace rbfpde
