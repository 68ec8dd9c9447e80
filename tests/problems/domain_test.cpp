#include "problems/domain.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

using Vertices = std::vector<std::array<double, 2>>;

const Vertices kLShape = {{0, 0}, {2, 0}, {2, 1}, {1, 1}, {1, 2}, {0, 2}};

Vertices reversed(Vertices v) { return Vertices(v.rbegin(), v.rend()); }

// Properties every domain must have: interior samples inside, boundary samples on the boundary
// with outward unit normals.
void check_samples(const Domain& domain, std::size_t n = 4000) {
  const int d = domain.dim();
  Rng rng(7);
  std::vector<double> in(n * d);
  domain.sample_interior(rng, n, in.data());
  double lo[3], hi[3];
  domain.bounding_box(lo, hi);
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = &in[i * d];
    ASSERT_TRUE(domain.contains(x)) << domain.type() << " interior sample " << i;
    EXPECT_GE(domain.distance_to_boundary(x), 0.0);
    for (int k = 0; k < d; ++k) {
      EXPECT_GE(x[k], lo[k]);
      EXPECT_LE(x[k], hi[k]);
    }
  }
  std::vector<double> bp(n * d), bn(n * d);
  domain.sample_boundary(rng, n, bp.data(), bn.data());
  const double eps = 1e-6;
  std::size_t smooth = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = &bp[i * d];
    const double* nrm = &bn[i * d];
    EXPECT_LT(domain.distance_to_boundary(x), 1e-12) << domain.type() << " boundary sample " << i;
    EXPECT_TRUE(domain.contains(x));
    double len2 = 0;
    for (int k = 0; k < d; ++k) len2 += nrm[k] * nrm[k];
    EXPECT_NEAR(std::sqrt(len2), 1.0, 1e-12);
    double out[3], back[3];
    for (int k = 0; k < d; ++k) out[k] = x[k] + eps * nrm[k], back[k] = x[k] - eps * nrm[k];
    // Only points further than eps from a corner or vertex have a well-defined local picture.
    if (std::abs(domain.distance_to_boundary(out) - eps) > 1e-9 ||
        std::abs(domain.distance_to_boundary(back) - eps) > 1e-9)
      continue;
    ++smooth;
    EXPECT_FALSE(domain.contains(out)) << domain.type() << " normal points inward at sample " << i;
    EXPECT_TRUE(domain.contains(back)) << domain.type() << " sample " << i;
  }
  EXPECT_GT(smooth, n * 9 / 10) << "too few smooth boundary samples to test normals";
}

// Fraction of boundary samples whose normal is ±e_axis.
double fraction_with_normal_axis(const Domain& domain, int axis, std::size_t n) {
  const int d = domain.dim();
  Rng rng(11);
  std::vector<double> bp(n * d), bn(n * d);
  domain.sample_boundary(rng, n, bp.data(), bn.data());
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) count += std::abs(bn[i * d + axis]) == 1.0;
  return static_cast<double>(count) / n;
}

TEST(Box, RectangleSamplesAndNormals) {
  auto r = make_box({0, 0}, {1, 3});
  EXPECT_EQ(r->type(), "rectangle");
  EXPECT_EQ(r->dim(), 2);
  EXPECT_DOUBLE_EQ(r->measure(), 3.0);
  check_samples(*r);
}

TEST(Box, RectangleBoundaryProportionalToLength) {
  // Long sides (length 3) have normals ±x and carry 6 of the 8 units of perimeter.
  auto r = make_box({0, 0}, {1, 3});
  EXPECT_NEAR(fraction_with_normal_axis(*r, 0, 20000), 0.75, 0.015);
}

TEST(Box, BoxSamplesAndFaceAreas) {
  auto b = make_box({0, 0, 0}, {1, 2, 3});
  EXPECT_EQ(b->type(), "box");
  EXPECT_DOUBLE_EQ(b->measure(), 6.0);
  check_samples(*b);
  // Face areas: ±x faces 2·3, ±y faces 1·3, ±z faces 1·2; total 22.
  EXPECT_NEAR(fraction_with_normal_axis(*b, 0, 20000), 12.0 / 22, 0.015);
  EXPECT_NEAR(fraction_with_normal_axis(*b, 1, 20000), 6.0 / 22, 0.015);
  EXPECT_NEAR(fraction_with_normal_axis(*b, 2, 20000), 4.0 / 22, 0.015);
}

TEST(Box, DistanceAndContains) {
  auto r = make_box({0, 0}, {1, 3});
  const double a[2] = {0.5, 0.5}, b[2] = {2, 5}, c[2] = {1, 1.5}, d[2] = {1 + 1e-9, 1.5};
  EXPECT_DOUBLE_EQ(r->distance_to_boundary(a), 0.5);
  EXPECT_DOUBLE_EQ(r->distance_to_boundary(b), std::sqrt(5.0));
  EXPECT_TRUE(r->contains(c));
  EXPECT_FALSE(r->contains(d));
  EXPECT_FALSE(r->contains(b));
  double lo[2], hi[2];
  r->bounding_box(lo, hi);
  EXPECT_EQ(lo[0], 0);
  EXPECT_EQ(hi[1], 3);
}

TEST(Box, ArgumentErrors) {
  EXPECT_THROW(make_box({0, 0}, {1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(make_box({0}, {1}), std::invalid_argument);
  EXPECT_THROW(make_box({0, 0, 0, 0}, {1, 1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(make_box({0, 1}, {1, 1}), std::invalid_argument);
  try {
    make_box({0, 2}, {1, 1});
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("axis y"), std::string::npos) << e.what();
  }
}

TEST(Ball, DiskSamplesAndUniformity) {
  auto disk = make_ball({1, -1}, 2);
  EXPECT_EQ(disk->type(), "disk");
  EXPECT_NEAR(disk->measure(), 4 * kPi, 1e-12);
  check_samples(*disk);
  const std::size_t n = 20000;
  Rng rng(3);
  std::vector<double> p(2 * n), nrm(2 * n);
  disk->sample_interior(rng, n, p.data());
  std::size_t inner = 0;
  for (std::size_t i = 0; i < n; ++i) inner += std::hypot(p[2 * i] - 1, p[2 * i + 1] + 1) < 1.0;
  EXPECT_NEAR(static_cast<double>(inner) / n, 0.25, 0.015);  // area ratio (1/2)²
  disk->sample_boundary(rng, n, p.data(), nrm.data());
  std::size_t first_quadrant = 0;
  for (std::size_t i = 0; i < n; ++i) first_quadrant += nrm[2 * i] > 0 && nrm[2 * i + 1] > 0;
  EXPECT_NEAR(static_cast<double>(first_quadrant) / n, 0.25, 0.015);
}

TEST(Ball, BallSamplesAndUniformity) {
  auto ball = make_ball({0, 0, 0}, 1);
  EXPECT_EQ(ball->type(), "ball");
  EXPECT_NEAR(ball->measure(), 4.0 / 3.0 * kPi, 1e-12);
  check_samples(*ball);
  const std::size_t n = 20000;
  Rng rng(5);
  std::vector<double> p(3 * n), nrm(3 * n);
  ball->sample_interior(rng, n, p.data());
  std::size_t inner = 0;
  for (std::size_t i = 0; i < n; ++i)
    inner += std::sqrt(p[3 * i] * p[3 * i] + p[3 * i + 1] * p[3 * i + 1] +
                       p[3 * i + 2] * p[3 * i + 2]) < 0.5;
  EXPECT_NEAR(static_cast<double>(inner) / n, 0.125, 0.01);  // volume ratio (1/2)³
  ball->sample_boundary(rng, n, p.data(), nrm.data());
  std::size_t cap = 0, octant = 0;
  for (std::size_t i = 0; i < n; ++i) {
    cap += p[3 * i + 2] > 0.5;  // cap area 2π·0.5 out of 4π
    octant += p[3 * i] > 0 && p[3 * i + 1] > 0 && p[3 * i + 2] > 0;
  }
  EXPECT_NEAR(static_cast<double>(cap) / n, 0.25, 0.015);
  EXPECT_NEAR(static_cast<double>(octant) / n, 0.125, 0.01);
}

TEST(Ball, DistanceAndContains) {
  auto disk = make_ball({1, 1}, 2);
  const double c[2] = {1, 1}, out[2] = {5, 1}, edge[2] = {3, 1};
  EXPECT_DOUBLE_EQ(disk->distance_to_boundary(c), 2.0);
  EXPECT_DOUBLE_EQ(disk->distance_to_boundary(out), 2.0);
  EXPECT_TRUE(disk->contains(edge));
  EXPECT_FALSE(disk->contains(out));
}

TEST(Ball, ArgumentErrors) {
  EXPECT_THROW(make_ball({0, 0}, 0), std::invalid_argument);
  EXPECT_THROW(make_ball({0, 0}, -1), std::invalid_argument);
  EXPECT_THROW(make_ball({0}, 1), std::invalid_argument);
  EXPECT_THROW(make_ball({0, 0, 0, 0}, 1), std::invalid_argument);
  EXPECT_THROW(make_ball({0, NAN}, 1), std::invalid_argument);
}

TEST(Polygon, LShapeInsideTestBothOrientations) {
  for (const Vertices& v : {kLShape, reversed(kLShape)}) {
    auto poly = make_polygon(v);
    const double notch[2] = {1.5, 1.5}, arm[2] = {0.5, 1.5}, foot[2] = {1.5, 0.5};
    const double corner[2] = {1, 1}, on_edge[2] = {1.5, 1}, far[2] = {-1, 0.5};
    EXPECT_FALSE(poly->contains(notch));
    EXPECT_TRUE(poly->contains(arm));
    EXPECT_TRUE(poly->contains(foot));
    EXPECT_TRUE(poly->contains(corner));
    EXPECT_TRUE(poly->contains(on_edge));
    EXPECT_FALSE(poly->contains(far));
    EXPECT_DOUBLE_EQ(poly->distance_to_boundary(notch), 0.5);
    EXPECT_DOUBLE_EQ(poly->distance_to_boundary(far), 1.0);
    EXPECT_DOUBLE_EQ(poly->measure(), 3.0);
    check_samples(*poly);
  }
}

TEST(Polygon, LShapeSamplingAvoidsNotchAndFollowsLength) {
  for (const Vertices& v : {kLShape, reversed(kLShape)}) {
    auto poly = make_polygon(v);
    const std::size_t n = 20000;
    Rng rng(9);
    std::vector<double> p(2 * n), nrm(2 * n);
    poly->sample_interior(rng, n, p.data());
    std::size_t in_notch = 0, in_arm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      in_notch += p[2 * i] > 1 && p[2 * i + 1] > 1;
      in_arm += p[2 * i] < 1 && p[2 * i + 1] > 1;
    }
    EXPECT_EQ(in_notch, 0u);
    EXPECT_NEAR(static_cast<double>(in_arm) / n, 1.0 / 3, 0.015);
    // The bottom edge, length 2 of a perimeter of 8, is the only one with normal (0, -1).
    poly->sample_boundary(rng, n, p.data(), nrm.data());
    std::size_t bottom = 0;
    for (std::size_t i = 0; i < n; ++i) bottom += nrm[2 * i + 1] == -1.0;
    EXPECT_NEAR(static_cast<double>(bottom) / n, 0.25, 0.015);
  }
}

TEST(Polygon, TriangleNormals) {
  auto tri = make_polygon({{0, 0}, {0, 1}, {1, 0}});  // clockwise
  check_samples(*tri);
  EXPECT_DOUBLE_EQ(tri->measure(), 0.5);
}

TEST(Polygon, ArgumentErrors) {
  EXPECT_THROW(make_polygon({{0, 0}, {1, 0}}), std::invalid_argument);
  EXPECT_THROW(make_polygon({{0, 0}, {1, 0}, {2, 0}}), std::invalid_argument);  // zero area
  EXPECT_THROW(make_polygon({{0, 0}, {1, 0}, {1, 0}, {0, 1}}), std::invalid_argument);
  // An edge that folds back over the previous one.
  EXPECT_THROW(make_polygon({{0, 0}, {2, 0}, {1, 0}, {1, 1}}), std::invalid_argument);
}

TEST(Polygon, BowtieIsRejectedAsSelfIntersecting) {
  try {
    make_polygon({{0, 0}, {1, 1}, {1, 0}, {0, 1}});
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("self-intersecting"), std::string::npos) << e.what();
  }
  // Touching without crossing is also a self-intersection: vertex (1, 1) visited twice.
  EXPECT_THROW(make_polygon({{0, 0}, {2, 0}, {1, 1}, {2, 2}, {0, 2}, {1, 1}}),
               std::invalid_argument);
}

TEST(Sampling, SameSeedSameSamples) {
  std::vector<std::unique_ptr<Domain>> domains;
  domains.push_back(make_box({0, 0}, {1, 3}));
  domains.push_back(make_box({0, 0, 0}, {1, 2, 3}));
  domains.push_back(make_ball({0, 0}, 1));
  domains.push_back(make_ball({0, 0, 0}, 1));
  domains.push_back(make_polygon(kLShape));
  for (const auto& domain : domains) {
    const int d = domain->dim();
    const std::size_t n = 100;
    auto draw = [&](std::uint64_t seed) {
      Rng rng(seed);
      std::vector<double> out((3 * n) * d);
      domain->sample_interior(rng, n, out.data());
      domain->sample_boundary(rng, n, out.data() + n * d, out.data() + 2 * n * d);
      return out;
    };
    EXPECT_EQ(draw(42), draw(42)) << domain->type();
    EXPECT_NE(draw(42), draw(43)) << domain->type();
  }
}

}  // namespace
}  // namespace rbfpde
