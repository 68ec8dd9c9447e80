// Space-time problems over a 3D domain (four coordinates x, y, z, t): the domain Ω × [start, end]
// samples inside, puts its lateral boundary points on ∂Ω × [start, end] with outward normals whose
// t component is 0 and its initial-face points at t = start, and the heat row and its refusals
// are those of the 2D case.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "problems/problem.hpp"
#include "problems/space_time.hpp"

namespace rbfpde {
namespace {

constexpr double kPi = 3.14159265358979323846;

ExprSpec expr(const std::string& text, const std::string& key) {
  return ExprSpec{text, key, SourceLoc{"h.yaml", 4, 9}};
}

// ∂u/∂t = κΔu + f on [0, 1] × [0, 2] × [0, 1] over t ∈ [start, end].
ProblemSpec heat_box_spec(double start, double end) {
  ProblemSpec s;
  s.dim = 4;
  s.domain.type = "box";
  s.domain.min = {0, 0, 0};
  s.domain.max = {1, 2, 1};
  s.domain.loc = SourceLoc{"h.yaml", 2, 3};
  s.boundary_loc = SourceLoc{"h.yaml", 9, 3};
  s.time = TimeSpec{start, end, SourceLoc{"h.yaml", 6, 9}};
  s.equation = "heat";
  s.diffusivity = expr("0.25", "problem.equation.diffusivity");
  s.f = expr("x*z*t", "problem.equation.f");
  s.initial = expr("sin(pi*x)*sin(pi*z)", "problem.initial");
  BoundarySpec b;
  b.type = "dirichlet";
  b.value = expr("y + t", "problem.boundary[0].value");
  b.where = expr("1", "problem.boundary[0].where");
  b.loc = SourceLoc{"h.yaml", 10, 7};
  s.boundary = {b};
  return s;
}

// True when x lies on a face of the box [lo, hi] (to rounding) and inside it.
bool on_box_face(const double* x, const double* lo, const double* hi) {
  bool face = false;
  for (int a = 0; a < 3; ++a) {
    if (x[a] < lo[a] - 1e-12 || x[a] > hi[a] + 1e-12) return false;
    face = face || std::abs(x[a] - lo[a]) < 1e-12 || std::abs(x[a] - hi[a]) < 1e-12;
  }
  return face;
}

TEST(SpaceTime3d, HeatOnABoxIsAFourCoordinateRowWithAnInitialFace) {
  const Problem p = Problem::build(heat_box_spec(0.5, 1.5));
  EXPECT_EQ(p.dim(), 4);
  EXPECT_EQ(p.space_dim(), 3);
  EXPECT_TRUE(p.has_time());
  EXPECT_FALSE(p.poisson_dirichlet());
  const auto& domain = dynamic_cast<const SpaceTimeDomain&>(p.domain());
  EXPECT_EQ(domain.space().dim(), 3);
  EXPECT_NEAR(domain.space_boundary_measure(), 10.0, 0.05);  // 2·(1·2 + 1·1 + 2·1)
  EXPECT_DOUBLE_EQ(domain.measure(), 2.0);

  Rng rng(17);
  CollocationBatch b;
  const std::size_t n = 300, k = 6000;
  p.sample(rng, n, k, b);
  EXPECT_EQ(b.dim, 4);
  EXPECT_EQ(b.laplacian_dims(), 3);
  ASSERT_EQ(b.a.size(), n);
  ASSERT_EQ(b.b.size(), 4 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = &b.interior[4 * i];
    EXPECT_TRUE(p.domain().contains(x));
    EXPECT_GE(x[3], 0.5);
    EXPECT_LE(x[3], 1.5);
    EXPECT_EQ(b.a[i], 0.25);
    EXPECT_EQ(b.b[4 * i + 0], 0.0);
    EXPECT_EQ(b.b[4 * i + 2], 0.0);
    EXPECT_EQ(b.b[4 * i + 3], -1.0);
    EXPECT_DOUBLE_EQ(b.f[i], -x[0] * x[2] * x[3]);  // the row's right side is −f
  }
  const double lo[3] = {0, 0, 0}, hi[3] = {1, 2, 1};
  int initial = 0;
  for (std::size_t j = 0; j < k; ++j) {
    const double* x = &b.boundary[4 * j];
    const double* nrm = &b.normals[4 * j];
    if (nrm[3] == -1.0) {
      ++initial;
      EXPECT_EQ(x[3], 0.5);
      EXPECT_EQ(nrm[0], 0.0);
      EXPECT_EQ(nrm[1], 0.0);
      EXPECT_EQ(nrm[2], 0.0);
      EXPECT_NEAR(b.p[j], std::sin(kPi * x[0]) * std::sin(kPi * x[2]), 1e-15);
      continue;
    }
    EXPECT_EQ(nrm[3], 0.0);
    EXPECT_NEAR(std::sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]), 1.0, 1e-15);
    EXPECT_TRUE(on_box_face(x, lo, hi)) << x[0] << " " << x[1] << " " << x[2];
    EXPECT_GE(x[3], 0.5);
    EXPECT_LE(x[3], 1.5);
    // Outward: a step along the normal leaves the domain, a step against it stays inside.
    double out[4], in[4];
    for (int a = 0; a < 4; ++a) {
      out[a] = x[a] + 1e-6 * nrm[a];
      in[a] = x[a] - 1e-6 * nrm[a];
    }
    EXPECT_FALSE(p.domain().contains(out));
    EXPECT_TRUE(p.domain().contains(in));
    EXPECT_EQ(b.p[j], x[1] + x[3]);  // the lateral Dirichlet value y + t
  }
  // The initial face is |Ω| / (|Ω| + |∂Ω|·T) = 2 / (2 + 10·1) of the boundary.
  EXPECT_NEAR(initial / double(k), 1.0 / 6.0, 0.015);
}

TEST(SpaceTime3d, BallTimesAnIntervalFollowsTheProduct) {
  const SpaceTimeDomain d(make_ball({0, 0, 0}, 0.5), 0, 2);
  EXPECT_EQ(d.dim(), 4);
  EXPECT_NEAR(d.space_boundary_measure(), kPi, 1e-9);  // 4π r², (x − c)·n = r exactly
  EXPECT_NEAR(d.measure(), 4.0 / 3.0 * kPi * 0.125 * 2.0, 1e-12);
  double lo[4], hi[4];
  d.bounding_box(lo, hi);
  EXPECT_EQ(lo[2], -0.5);
  EXPECT_EQ(hi[2], 0.5);
  EXPECT_EQ(lo[3], 0.0);
  EXPECT_EQ(hi[3], 2.0);
  const double inside[4] = {0.1, 0, 0, 1.95}, late[4] = {0.1, 0, 0, 2.25};
  EXPECT_TRUE(d.contains(inside));
  EXPECT_FALSE(d.contains(late));
  EXPECT_NEAR(d.distance_to_boundary(inside), 0.05, 1e-12);
  EXPECT_NEAR(d.distance_to_boundary(late), 0.25, 1e-12);

  Rng rng(3);
  const std::size_t n = 2000;
  std::vector<double> pts(4 * n), nrm(4 * n);
  d.sample_interior(rng, n, pts.data());
  for (std::size_t i = 0; i < n; ++i) EXPECT_TRUE(d.contains(&pts[4 * i]));
  d.sample_boundary(rng, n, pts.data(), nrm.data());
  int initial = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* x = &pts[4 * i];
    const double* m = &nrm[4 * i];
    EXPECT_TRUE(d.contains(x));
    if (d.on_initial_face(m)) {
      ++initial;
      EXPECT_EQ(x[3], 0.0);
      continue;
    }
    EXPECT_EQ(m[3], 0.0);
    EXPECT_NEAR(std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]), 0.5, 1e-12);
    // The ball's normal is the radial direction, outward.
    for (int a = 0; a < 3; ++a) EXPECT_NEAR(m[a], x[a] / 0.5, 1e-12);
  }
  // |Ω| / (|Ω| + |∂Ω|·T) = (π/6) / (π/6 + 2π) = 1/13.
  EXPECT_NEAR(initial / double(n), 1.0 / 13.0, 0.02);
}

TEST(SpaceTime3d, EmptyIntervalIsRefusedForA3dDomainToo) {
  for (const auto& [start, end] : {std::pair{1.0, 1.0}, std::pair{2.0, 1.0}}) {
    try {
      Problem::build(heat_box_spec(start, end));
      ADD_FAILURE() << "time [" << start << ", " << end << "] was accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "problem.time");
      EXPECT_NE(std::string(e.what()).find("expected start < end"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(SpaceTimeDomain(make_box({0, 0, 0}, {1, 1, 1}), 1, 0), std::invalid_argument);
}

TEST(SpaceTime3d, ExpressionsUseXYZAndT) {
  ProblemSpec s = heat_box_spec(0, 1);
  s.exact = expr("x + 2*y + 3*z + 4*t", "problem.exact");
  const Problem p = Problem::build(s);
  const double x[4] = {1, 10, 100, 1000};
  EXPECT_EQ(p.exact()(x), 1 + 20 + 300 + 4000);
  // A name that is no coordinate is refused on its key.
  s.exact = expr("w", "problem.exact");
  try {
    Problem::build(s);
    ADD_FAILURE() << "w was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "problem.exact");
  }
}

}  // namespace
}  // namespace rbfpde
