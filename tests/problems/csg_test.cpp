// Constructive solid geometry: samples on exactly the boundary of the result, spread over its
// pieces in proportion to their measure, with the result's outward normals; interior samples
// inside; measures exact or within their documented Monte-Carlo accuracy.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "problems/domain.hpp"

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr std::size_t kBoundarySamples = 20000;

std::vector<std::unique_ptr<Domain>> parts_of(std::unique_ptr<Domain> a,
                                              std::unique_ptr<Domain> b) {
  std::vector<std::unique_ptr<Domain>> parts;
  parts.push_back(std::move(a));
  parts.push_back(std::move(b));
  return parts;
}

// The square [0,1]² minus four disks of radius 0.1 (configs/square_holes_dirichlet.yaml).
const double kHoles[4][2] = {{0.3, 0.3}, {0.7, 0.3}, {0.3, 0.7}, {0.7, 0.7}};

std::unique_ptr<Domain> square_minus_disks() {
  std::vector<std::unique_ptr<Domain>> parts;
  parts.push_back(make_box({0, 0}, {1, 1}));
  for (const auto& c : kHoles) parts.push_back(make_ball({c[0], c[1]}, 0.1));
  return make_csg("difference", std::move(parts));
}

// A piece of the result's boundary: its share of the boundary measure and a test for membership.
struct Piece {
  std::string name;
  double measure;
  std::function<bool(const double*)> on;
};

bool on_circle(const double* x, double cx, double cy, double r) {
  return std::abs(std::hypot(x[0] - cx, x[1] - cy) - r) < 1e-9;
}

// Interior samples inside; boundary samples on the boundary (|signed distance| < 1e-9), with unit
// normals pointing out (x + h·n outside, x − h·n inside), and spread over `pieces` as their
// measures say: each count within 4 binomial standard deviations of its expectation.
void check_composite(const Domain& domain, const std::vector<Piece>& pieces) {
  const int d = domain.dim();
  const std::size_t n = kBoundarySamples;
  Rng rng(11);
  std::vector<double> in(n * d);
  domain.sample_interior(rng, n, in.data());
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(domain.contains(&in[i * d])) << domain.type() << " interior sample " << i;
  }
  std::vector<double> bp(n * d), bn(n * d);
  domain.sample_boundary(rng, n, bp.data(), bn.data());
  double total = 0;
  for (const Piece& p : pieces) total += p.measure;
  std::vector<std::size_t> count(pieces.size(), 0);
  const double h = 1e-6;
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = &bp[i * d];
    const double* nrm = &bn[i * d];
    ASSERT_LT(domain.distance_to_boundary(x), 1e-9) << domain.type() << " boundary sample " << i;
    ASSERT_TRUE(domain.contains(x))
        << "boundary sample " << i << " (" << x[0] << ", " << x[1] << ")";
    double len2 = 0;
    for (int k = 0; k < d; ++k) len2 += nrm[k] * nrm[k];
    ASSERT_NEAR(std::sqrt(len2), 1.0, 1e-12);
    double out[3], back[3];
    for (int k = 0; k < d; ++k) out[k] = x[k] + h * nrm[k], back[k] = x[k] - h * nrm[k];
    // Within h of an edge or corner the step may leave through another face: skip those.
    const bool smooth = std::abs(domain.distance_to_boundary(out) - h) < 1e-9 &&
                        std::abs(domain.distance_to_boundary(back) - h) < 1e-9;
    if (smooth) {
      EXPECT_FALSE(domain.contains(out))
          << "normal points inward at sample " << i << " (" << x[0] << ", " << x[1] << ")";
      EXPECT_TRUE(domain.contains(back)) << "sample " << i;
    }
    int piece = -1;
    for (std::size_t p = 0; p < pieces.size(); ++p) {
      if (pieces[p].on(x)) {
        piece = static_cast<int>(p);
        break;
      }
    }
    ASSERT_GE(piece, 0) << "boundary sample " << i << " on no piece";
    ++count[piece];
  }
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const double share = pieces[p].measure / total;
    const double expected = share * n;
    const double sigma = std::sqrt(n * share * (1 - share));
    EXPECT_LE(std::abs(count[p] - expected), 4 * sigma + 1)
        << domain.type() << " piece " << pieces[p].name << ": " << count[p] << " samples, expected "
        << expected;
  }
}

TEST(Csg, SquareMinusFourDisks) {
  const auto domain = square_minus_disks();
  EXPECT_EQ(domain->type(), "difference");
  EXPECT_EQ(domain->dim(), 2);
  std::vector<Piece> pieces;
  pieces.push_back({"square", 4.0, [](const double* x) {
                      return std::min({x[0], x[1], 1 - x[0], 1 - x[1]}) < 1e-12;
                    }});
  for (int h = 0; h < 4; ++h) {
    const double cx = kHoles[h][0], cy = kHoles[h][1];
    pieces.push_back({"hole " + std::to_string(h), 2 * kPi * 0.1,
                      [cx, cy](const double* x) { return on_circle(x, cx, cy, 0.1); }});
  }
  check_composite(*domain, pieces);
  // Exact: the disks lie inside the square and apart.
  EXPECT_DOUBLE_EQ(domain->measure(), 1 - 4 * kPi * 0.01);
  double lo[2], hi[2];
  domain->bounding_box(lo, hi);
  EXPECT_EQ(lo[0], 0.0);
  EXPECT_EQ(hi[1], 1.0);
}

TEST(Csg, HoleNormalsPointIntoTheHole) {
  const auto domain = square_minus_disks();
  Rng rng(3);
  std::vector<double> p(2 * 2000), n(2 * 2000);
  domain->sample_boundary(rng, 2000, p.data(), n.data());
  int on_holes = 0;
  for (int i = 0; i < 2000; ++i) {
    for (const auto& c : kHoles) {
      if (!on_circle(&p[2 * i], c[0], c[1], 0.1)) continue;
      ++on_holes;
      // Towards the hole's centre.
      EXPECT_NEAR(n[2 * i], (c[0] - p[2 * i]) / 0.1, 1e-12);
      EXPECT_NEAR(n[2 * i + 1], (c[1] - p[2 * i + 1]) / 0.1, 1e-12);
    }
  }
  EXPECT_GT(on_holes, 500);
}

TEST(Csg, BoxMinusBall) {
  const double r = 0.25;
  const auto domain = make_csg(
      "difference", parts_of(make_box({0, 0, 0}, {1, 1, 1}), make_ball({0.5, 0.5, 0.5}, r)));
  EXPECT_EQ(domain->dim(), 3);
  std::vector<Piece> pieces;
  pieces.push_back({"box", 6.0, [](const double* x) {
                      return std::min({x[0], x[1], x[2], 1 - x[0], 1 - x[1], 1 - x[2]}) < 1e-12;
                    }});
  pieces.push_back({"ball", 4 * kPi * r * r, [r](const double* x) {
                      const double s =
                          std::sqrt((x[0] - 0.5) * (x[0] - 0.5) + (x[1] - 0.5) * (x[1] - 0.5) +
                                    (x[2] - 0.5) * (x[2] - 0.5));
                      return std::abs(s - r) < 1e-9;
                    }});
  check_composite(*domain, pieces);
  EXPECT_DOUBLE_EQ(domain->measure(), 1 - 4.0 / 3.0 * kPi * r * r * r);
}

// Two overlapping disks of different radii: each contributes its arc outside the other.
TEST(Csg, UnionOfOverlappingDisks) {
  const double ra = 1, rb = 0.6, dist = 1.2;
  const auto domain = make_csg("union", parts_of(make_ball({0, 0}, ra), make_ball({dist, 0}, rb)));
  // Half-angles of the arcs of each circle that lie inside the other.
  const double aa = std::acos((dist * dist + ra * ra - rb * rb) / (2 * dist * ra));
  const double ab = std::acos((dist * dist + rb * rb - ra * ra) / (2 * dist * rb));
  std::vector<Piece> pieces;
  pieces.push_back({"big disk", (2 * kPi - 2 * aa) * ra,
                    [=](const double* x) { return on_circle(x, 0, 0, ra); }});
  pieces.push_back({"small disk", (2 * kPi - 2 * ab) * rb,
                    [=](const double* x) { return on_circle(x, dist, 0, rb); }});
  check_composite(*domain, pieces);
  const double lens = ra * ra * (aa - std::sin(2 * aa) / 2) + rb * rb * (ab - std::sin(2 * ab) / 2);
  const double exact = kPi * (ra * ra + rb * rb) - lens;
  // Monte Carlo over the bounding box [−1, 1.8] × [−1, 1] with 2²⁰ draws: 4 standard errors.
  const double box = 2.8 * 2, p = exact / box;
  EXPECT_NEAR(domain->measure(), exact, 4 * box * std::sqrt(p * (1 - p) / (1 << 20)));
  double lo[2], hi[2];
  domain->bounding_box(lo, hi);
  EXPECT_DOUBLE_EQ(lo[0], -1.0);
  EXPECT_DOUBLE_EQ(hi[0], 1.8);
}

// [0, 2] × [0, 1] ∩ the unit disk around (1, 0): the upper half disk, bounded by the disk's arc and
// the rectangle's bottom edge (the other edges touch the disk at single points only).
TEST(Csg, IntersectionIsAHalfDisk) {
  const auto domain =
      make_csg("intersection", parts_of(make_box({0, 0}, {2, 1}), make_ball({1, 0}, 1)));
  std::vector<Piece> pieces;
  pieces.push_back({"arc", kPi, [](const double* x) { return on_circle(x, 1, 0, 1); }});
  pieces.push_back({"diameter", 2.0, [](const double* x) { return std::abs(x[1]) < 1e-12; }});
  check_composite(*domain, pieces);
  const double exact = kPi / 2, box = 2, p = exact / box;
  EXPECT_NEAR(domain->measure(), exact, 4 * box * std::sqrt(p * (1 - p) / (1 << 20)));
}

// Coincident faces: the L-shape [0,1]² minus [0.5,1]² shares two half-edges between the parts;
// they bound nothing and must not be drawn. The subtracted square's other edges bound the L with
// flipped normals.
TEST(Csg, DifferenceWithSharedEdges) {
  const auto domain =
      make_csg("difference", parts_of(make_box({0, 0}, {1, 1}), make_box({0.5, 0.5}, {1, 1})));
  std::vector<Piece> pieces;
  pieces.push_back({"outer", 3.0, [](const double* x) {
                      return x[0] < 1e-12 || x[1] < 1e-12 ||
                             (std::abs(x[0] - 1) < 1e-12 && x[1] <= 0.5) ||
                             (std::abs(x[1] - 1) < 1e-12 && x[0] <= 0.5);
                    }});
  pieces.push_back({"notch", 1.0, [](const double* x) {
                      return (std::abs(x[0] - 0.5) < 1e-12 && x[1] >= 0.5) ||
                             (std::abs(x[1] - 0.5) < 1e-12 && x[0] >= 0.5);
                    }});
  check_composite(*domain, pieces);
  EXPECT_DOUBLE_EQ(domain->measure(), 0.75);
}

// A union whose parts share part of an edge: the shared piece is drawn as often as any other.
TEST(Csg, UnionWithSharedEdgeIsUniform) {
  const auto domain =
      make_csg("union", parts_of(make_box({0, 0}, {1, 1}), make_box({0, 0.5}, {1, 2})));
  std::vector<Piece> pieces;
  pieces.push_back({"shared left", 0.5,
                    [](const double* x) { return x[0] < 1e-12 && x[1] >= 0.5 && x[1] <= 1; }});
  pieces.push_back({"shared right", 0.5, [](const double* x) {
                      return std::abs(x[0] - 1) < 1e-12 && x[1] >= 0.5 && x[1] <= 1;
                    }});
  pieces.push_back({"rest", 5.0, [](const double*) { return true; }});
  check_composite(*domain, pieces);
  double lo[2], hi[2];
  domain->bounding_box(lo, hi);
  EXPECT_EQ(hi[1], 2.0);
}

// Nested: a square minus the union of two overlapping disks; the measure is a Monte-Carlo estimate.
TEST(Csg, NestedDifferenceOfAUnion) {
  const auto holes =
      make_csg("union", parts_of(make_ball({0.4, 0.5}, 0.2), make_ball({0.6, 0.5}, 0.2)));
  const auto geometry = holes->geometry();
  std::vector<std::unique_ptr<Domain>> parts;
  parts.push_back(make_box({0, 0}, {1, 1}));
  parts.push_back(
      make_csg("union", parts_of(make_ball({0.4, 0.5}, 0.2), make_ball({0.6, 0.5}, 0.2))));
  const auto domain = make_csg("difference", std::move(parts));
  const double a = std::acos(0.2 / (2 * 0.2));  // half-angle inside the other disk
  std::vector<Piece> pieces;
  pieces.push_back({"square", 4.0, [](const double* x) {
                      return std::min({x[0], x[1], 1 - x[0], 1 - x[1]}) < 1e-12;
                    }});
  pieces.push_back({"left arc", (2 * kPi - 2 * a) * 0.2,
                    [](const double* x) { return on_circle(x, 0.4, 0.5, 0.2); }});
  pieces.push_back({"right arc", (2 * kPi - 2 * a) * 0.2,
                    [](const double* x) { return on_circle(x, 0.6, 0.5, 0.2); }});
  check_composite(*domain, pieces);
  const double lens = 2 * 0.04 * (a - std::sin(2 * a) / 2);
  const double exact = 1 - (2 * kPi * 0.04 - lens), p = exact;
  EXPECT_NEAR(domain->measure(), exact, 4 * std::sqrt(p * (1 - p) / (1 << 20)));
  const DomainGeometry g = domain->geometry();
  ASSERT_EQ(g.parts.size(), 2u);
  EXPECT_EQ(g.parts[0].type, "rectangle");
  EXPECT_EQ(g.parts[1].type, "union");
  ASSERT_EQ(g.parts[1].parts.size(), 2u);
  EXPECT_EQ(g.parts[1].parts[1].radius, 0.2);
  EXPECT_EQ(geometry.type, "union");
}

TEST(Csg, SignedDistanceIsExactOutsideAUnionAndABoundInside) {
  const auto domain = make_csg("union", parts_of(make_ball({0, 0}, 1), make_ball({3, 0}, 1)));
  const double outside[2] = {1.5, 0};
  EXPECT_FALSE(domain->contains(outside));
  EXPECT_DOUBLE_EQ(domain->distance_to_boundary(outside), 0.5);
  const double inside[2] = {0.2, 0};
  EXPECT_TRUE(domain->contains(inside));
  EXPECT_DOUBLE_EQ(domain->distance_to_boundary(inside), 0.8);
  // A hole's boundary belongs to the (closed) domain.
  const auto holed = square_minus_disks();
  const double rim[2] = {0.4, 0.3};
  EXPECT_TRUE(holed->contains(rim));
  const double centre[2] = {0.3, 0.3};
  EXPECT_FALSE(holed->contains(centre));
  EXPECT_NEAR(holed->distance_to_boundary(centre), 0.1, 1e-15);
}

TEST(Csg, SameSeedSameSamples) {
  const auto domain = square_minus_disks();
  std::vector<double> a(200), b(200), na(200), nb(200);
  Rng r1(5), r2(5);
  domain->sample_boundary(r1, 100, a.data(), na.data());
  domain->sample_boundary(r2, 100, b.data(), nb.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(na, nb);
}

TEST(Csg, RejectsBadCompositions) {
  EXPECT_THROW(make_csg("union", parts_of(make_box({0, 0}, {1, 1}), make_ball({0, 0, 0}, 1))),
               std::invalid_argument);
  EXPECT_THROW(make_csg("xor", parts_of(make_box({0, 0}, {1, 1}), make_ball({0, 0}, 1))),
               std::invalid_argument);
  std::vector<std::unique_ptr<Domain>> one;
  one.push_back(make_box({0, 0}, {1, 1}));
  EXPECT_THROW(make_csg("union", std::move(one)), std::invalid_argument);
  // Disjoint bounding boxes: nothing in common.
  try {
    make_csg("intersection", parts_of(make_box({0, 0}, {1, 1}), make_ball({5, 5}, 1)));
    ADD_FAILURE() << "no error for an empty intersection";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
  }
  // Everything subtracted.
  EXPECT_THROW(make_csg("difference", parts_of(make_ball({0, 0}, 1), make_box({-2, -2}, {2, 2}))),
               std::invalid_argument);
  // A sliver left of the square: rejection from its bounding box would crawl.
  try {
    make_csg("difference", parts_of(make_box({0, 0}, {1, 1}), make_box({0.0005, -1}, {2, 2})));
    ADD_FAILURE() << "no error for a sliver";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("bounding box"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rbfpde
