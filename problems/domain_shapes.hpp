// The formulas of the domain primitives, written once for the host domains (box.cpp, ball.cpp,
// polygon.cpp, csg.cpp, point_cloud.cpp) and the device sampler, which hands this file and
// kernels/host_device.hpp to NVRTC as named headers (embedded at build time,
// kernels/cuda/common/device_sampler.cpp). Everything here takes uniforms in [0, 1] that the
// caller drew, so that each side keeps its own random numbers: the host its Mersenne twister,
// consumed in the order the comments give, the device its Philox streams.
//
// Shapes are plain structs (no std:: types): arrays of at most 3 coordinates, or pointers and
// counts for a polygon. The part below `#ifndef __CUDACC_RTC__` builds them on the host.
//
// Host and device differ where a function says so: the radial root and the angle's cosine and
// sine are std::pow and cos/sin of 2πu on the host, sqrt/cbrt and sincospi on the device (their
// draws agree to rounding, not bit for bit); the host draws a polygon's interior by rejection from
// its bounding box (polygon_contains), the device by triangle (polygon_interior_point); and the
// host places a polygon's boundary point along its edge with the remainder of the edge's uniform,
// the device with a second uniform (polygon_edge_point serves both).
#pragma once

#include "kernels/host_device.hpp"

#ifndef __CUDACC_RTC__
#include <cmath>
#endif

namespace rbfpde {

constexpr double kShapePi = 3.14159265358979323846;
// Primitives in one composite: the composite's evaluation keeps a stack of this many values.
constexpr int kMaxCsgLeaves = 64;

RBFPDE_HD double shape_infinity() {
#ifdef __CUDA_ARCH__
  return __longlong_as_double(0x7ff0000000000000ll);
#else
  return HUGE_VAL;
#endif
}

// The index of the piece that t falls in, for `cumulative` (count + 1 entries, from 0) the
// pieces' measures summed: the last e with cumulative[e] ≤ t, at most count − 1.
RBFPDE_HD int piece_of(const double* cumulative, int count, double t) {
  int e = 0;
  while (e + 1 < count && cumulative[e + 1] <= t) ++e;
  return e;
}

// One of count items, uniformly: u in [0, 1] (1 maps to the last).
RBFPDE_HD long long pick_index(double u, long long count) {
  const long long i = static_cast<long long>(u * double(count));
  return i < count - 1 ? i : count - 1;
}

// ---- rectangle (2D) and box (3D) ---------------------------------------------------------------

struct BoxShape {
  int dim;
  double lo[3], hi[3];
  double face[3];  // measure of each of the two faces perpendicular to axis k
  double total;    // the whole boundary's measure
  double tol;      // the inside test's slack: points on a face computed another way may miss it
};

RBFPDE_HD BoxShape make_box_shape(int dim, const double* lo, const double* hi) {
  BoxShape s{};
  s.dim = dim;
  double largest = 0;
  for (int k = 0; k < dim; ++k) {
    s.lo[k] = lo[k];
    s.hi[k] = hi[k];
    largest = largest < hi[k] - lo[k] ? hi[k] - lo[k] : largest;
  }
  s.tol = 1e-12 * largest;
  s.total = 0;
  for (int k = 0; k < dim; ++k) {
    double m = 1;
    for (int j = 0; j < dim; ++j)
      if (j != k) m *= hi[j] - lo[j];
    s.face[k] = m;
    s.total += 2 * m;
  }
  return s;
}

// u: dim uniforms, one per axis.
RBFPDE_HD void box_interior_point(const BoxShape& s, const double* u, double* p) {
  for (int k = 0; k < s.dim; ++k) p[k] = s.lo[k] + (s.hi[k] - s.lo[k]) * u[k];
}

// The face that t in [0, total) falls on, faces ordered lower then upper per axis.
RBFPDE_HD void box_face(const BoxShape& s, double t, int* axis, bool* upper) {
  *axis = s.dim - 1;
  *upper = true;
  for (int k = 0; k < s.dim; ++k) {
    if (t < s.face[k]) {
      *axis = k, *upper = false;
      return;
    }
    t -= s.face[k];
    if (t < s.face[k]) {
      *axis = k, *upper = true;
      return;
    }
    t -= s.face[k];
  }
}

// A point on a face with its outward normal; u[k] is read for every axis k but the face's.
RBFPDE_HD void box_face_point(const BoxShape& s, int axis, bool upper, const double* u, double* p,
                              double* n) {
  for (int k = 0; k < s.dim; ++k) {
    p[k] = k == axis ? (upper ? s.hi[k] : s.lo[k]) : s.lo[k] + (s.hi[k] - s.lo[k]) * u[k];
    n[k] = k == axis ? (upper ? 1.0 : -1.0) : 0.0;
  }
}

// u: dim + 1 uniforms, the face by measure, then one per axis.
RBFPDE_HD void box_boundary_point(const BoxShape& s, const double* u, double* p, double* n) {
  int axis;
  bool upper;
  box_face(s, u[0] * s.total, &axis, &upper);
  box_face_point(s, axis, upper, u + 1, p, n);
}

RBFPDE_HD bool box_contains(const BoxShape& s, const double* x) {
  for (int k = 0; k < s.dim; ++k)
    if (x[k] < s.lo[k] - s.tol || x[k] > s.hi[k] + s.tol) return false;
  return true;
}

RBFPDE_HD double box_distance(const BoxShape& s, const double* x) {
  double outside2 = 0;
  double inside = shape_infinity();
  for (int k = 0; k < s.dim; ++k) {
    const double below = s.lo[k] - x[k], above = x[k] - s.hi[k];
    double out = below < above ? above : below;
    out = out < 0.0 ? 0.0 : out;
    outside2 += out * out;
    const double nearer = -above < -below ? -above : -below;
    inside = nearer < inside ? nearer : inside;
  }
  return outside2 > 0 ? sqrt(outside2) : inside;
}

// ---- disk (2D) and ball (3D) -------------------------------------------------------------------

struct BallShape {
  int dim;
  double centre[3];
  double radius;
  double tol;
};

RBFPDE_HD BallShape make_ball_shape(int dim, const double* centre, double radius) {
  BallShape s{};
  s.dim = dim;
  for (int k = 0; k < dim; ++k) s.centre[k] = centre[k];
  s.radius = radius;
  s.tol = 1e-12 * radius;
  return s;
}

// cos and sin of 2πu.
RBFPDE_HD void cos_sin_2pi(double u, double* c, double* s) {
#ifdef __CUDA_ARCH__
  sincospi(2.0 * u, s, c);
#else
  const double phi = 2 * kShapePi * u;
  *c = cos(phi), *s = sin(phi);
#endif
}

// u^(1/dim): the mass within radius ρ grows as ρ^dim, so ρ = r·u^(1/dim) is uniform in volume.
RBFPDE_HD double radial_root(double u, int dim) {
#ifdef __CUDA_ARCH__
  return dim == 2 ? sqrt(u) : cbrt(u);
#else
  return pow(u, 1.0 / dim);
#endif
}

// A unit vector uniform on the circle (u: the angle) or sphere (u: the azimuth, then z = 2u − 1:
// uniform in z with a uniform azimuth is uniform on the sphere, Archimedes' hat-box theorem).
RBFPDE_HD void unit_direction(int dim, const double* u, double* e) {
  double c, s;
  cos_sin_2pi(u[0], &c, &s);
  if (dim == 2) {
    e[0] = c, e[1] = s;
    return;
  }
  const double z = -1.0 + 2.0 * u[1];
  const double q = 1 - z * z;
  const double r = sqrt(0.0 < q ? q : 0.0);
  e[0] = r * c, e[1] = r * s, e[2] = z;
}

// u: dim uniforms, the radius's, then the direction's.
RBFPDE_HD void ball_interior_point(const BallShape& s, const double* u, double* p) {
  const double rho = s.radius * radial_root(u[0], s.dim);
  double e[3];
  unit_direction(s.dim, u + 1, e);
  for (int k = 0; k < s.dim; ++k) p[k] = s.centre[k] + rho * e[k];
}

// u: dim − 1 uniforms, the direction's.
RBFPDE_HD void ball_boundary_point(const BallShape& s, const double* u, double* p, double* n) {
  double e[3];
  unit_direction(s.dim, u, e);
  for (int k = 0; k < s.dim; ++k) {
    p[k] = s.centre[k] + s.radius * e[k];
    n[k] = e[k];
  }
}

RBFPDE_HD double distance_to_centre(const BallShape& s, const double* x) {
  double q = 0;
  for (int k = 0; k < s.dim; ++k) q += (x[k] - s.centre[k]) * (x[k] - s.centre[k]);
  return sqrt(q);
}

RBFPDE_HD bool ball_contains(const BallShape& s, const double* x) {
  return distance_to_centre(s, x) <= s.radius + s.tol;
}

RBFPDE_HD double ball_distance(const BallShape& s, const double* x) {
  return fabs(s.radius - distance_to_centre(s, x));
}

// ---- polygon (2D, simple, counter-clockwise) ---------------------------------------------------

struct PolygonShape {
  int vertices;
  const double* xy;         // x0, y0, x1, y1, …
  const double* perimeter;  // vertices + 1 entries: the boundary's length up to vertex i
  int triangles;            // a triangulation, each counter-clockwise
  const int* corners;       // 3 vertex indices per triangle
  const double* area;       // triangles + 1 entries: the area up to triangle i
  double tol;               // the inside test's slack
};

RBFPDE_HD double segment_distance(const double* x, const double* a, const double* b) {
  const double ex = b[0] - a[0], ey = b[1] - a[1];
  const double px = x[0] - a[0], py = x[1] - a[1];
  double t = (px * ex + py * ey) / (ex * ex + ey * ey);
  t = t < 0.0 ? 0.0 : 1.0 < t ? 1.0 : t;
  return hypot(px - t * ex, py - t * ey);
}

RBFPDE_HD double polygon_distance(const PolygonShape& s, const double* x) {
  double d = shape_infinity();
  for (int i = 0; i < s.vertices; ++i) {
    const int j = i + 1 == s.vertices ? 0 : i + 1;
    const double e = segment_distance(x, s.xy + 2 * i, s.xy + 2 * j);
    d = e < d ? e : d;
  }
  return d;
}

// Crossing number (a ray to +x crosses the boundary an odd number of times from inside), or
// within the slack of an edge: the parity test is arbitrary exactly on an edge, and the domain is
// closed.
RBFPDE_HD bool polygon_contains(const PolygonShape& s, const double* x) {
  bool inside = false;
  for (int i = 0, j = s.vertices - 1; i < s.vertices; j = i++) {
    const double* a = s.xy + 2 * j;
    const double* b = s.xy + 2 * i;
    if ((a[1] > x[1]) != (b[1] > x[1])) {
      const double xc = a[0] + (x[1] - a[1]) * (b[0] - a[0]) / (b[1] - a[1]);
      if (x[0] < xc) inside = !inside;
    }
  }
  return inside || polygon_distance(s, x) <= s.tol;
}

// The point at fraction f of edge e (from vertex e to e + 1) and the edge's outward normal.
RBFPDE_HD void polygon_edge_point(const PolygonShape& s, int e, double f, double* p, double* n) {
  const double* a = s.xy + 2 * e;
  const double* b = s.xy + 2 * (e + 1 == s.vertices ? 0 : e + 1);
  const double len = s.perimeter[e + 1] - s.perimeter[e];
  p[0] = a[0] + f * (b[0] - a[0]);
  p[1] = a[1] + f * (b[1] - a[1]);
  n[0] = (b[1] - a[1]) / len;
  n[1] = -(b[0] - a[0]) / len;
}

// u: 2 uniforms, the edge by length, then the fraction along it.
RBFPDE_HD void polygon_boundary_point(const PolygonShape& s, const double* u, double* p,
                                      double* n) {
  const int e = piece_of(s.perimeter, s.vertices, u[0] * s.perimeter[s.vertices]);
  polygon_edge_point(s, e, u[1], p, n);
}

// u: 3 uniforms, a triangle by area, then a uniform point in it (a + b > 1 reflected).
RBFPDE_HD void polygon_interior_point(const PolygonShape& s, const double* u, double* p) {
  const int t = piece_of(s.area, s.triangles, u[0] * s.area[s.triangles]);
  double a = u[1], b = u[2];
  if (a + b > 1.0) a = 1.0 - a, b = 1.0 - b;
  const double* v0 = s.xy + 2 * s.corners[3 * t];
  const double* v1 = s.xy + 2 * s.corners[3 * t + 1];
  const double* v2 = s.xy + 2 * s.corners[3 * t + 2];
  for (int k = 0; k < 2; ++k) p[k] = v0[k] + a * (v1[k] - v0[k]) + b * (v2[k] - v0[k]);
}

// ---- one interface over the primitives, for generic samplers ------------------------------------

// The uniforms the device draws for one point: in pairs from Philox, and for a disk or ball one
// more than its formula reads. The counts fix where a composite's next proposal starts in a
// point's stream, so they stay as they are.
RBFPDE_HD int interior_draws(const BoxShape& s) { return s.dim; }
RBFPDE_HD int boundary_draws(const BoxShape& s) { return s.dim + 1; }
RBFPDE_HD int interior_draws(const BallShape& s) { return s.dim + 1; }
RBFPDE_HD int boundary_draws(const BallShape& s) { return s.dim; }
RBFPDE_HD int interior_draws(const PolygonShape&) { return 3; }
RBFPDE_HD int boundary_draws(const PolygonShape&) { return 2; }
constexpr int kMaxShapeDraws = 4;

RBFPDE_HD void interior_point(const BoxShape& s, const double* u, double* p) {
  box_interior_point(s, u, p);
}
RBFPDE_HD void interior_point(const BallShape& s, const double* u, double* p) {
  ball_interior_point(s, u, p);
}
RBFPDE_HD void interior_point(const PolygonShape& s, const double* u, double* p) {
  polygon_interior_point(s, u, p);
}
RBFPDE_HD void boundary_point(const BoxShape& s, const double* u, double* p, double* n) {
  box_boundary_point(s, u, p, n);
}
RBFPDE_HD void boundary_point(const BallShape& s, const double* u, double* p, double* n) {
  ball_boundary_point(s, u, p, n);
}
RBFPDE_HD void boundary_point(const PolygonShape& s, const double* u, double* p, double* n) {
  polygon_boundary_point(s, u, p, n);
}
RBFPDE_HD bool shape_contains(const BoxShape& s, const double* x) { return box_contains(s, x); }
RBFPDE_HD bool shape_contains(const BallShape& s, const double* x) { return ball_contains(s, x); }
RBFPDE_HD bool shape_contains(const PolygonShape& s, const double* x) {
  return polygon_contains(s, x);
}

// The whole boundary's length (2D) or area (3D).
RBFPDE_HD double boundary_measure(const BoxShape& s) { return s.total; }
RBFPDE_HD double boundary_measure(const BallShape& s) {
  return s.dim == 2 ? 2 * kShapePi * s.radius : 4 * kShapePi * s.radius * s.radius;
}
RBFPDE_HD double boundary_measure(const PolygonShape& s) { return s.perimeter[s.vertices]; }

// ---- composites --------------------------------------------------------------------------------
//
// A composite is a program in postfix over its primitives (leaves, in depth-first order): an entry
// j ≥ 0 pushes leaf j's value, an operation combines the two values on top. The n-ary parts of a
// node fold from the left: part0 part1 op part2 op …

enum CsgOp : int { kCsgUnion = -1, kCsgDifference = -2, kCsgIntersection = -3 };

// Membership: or, and, and-not.
RBFPDE_HD bool csg_combine(int op, bool r, bool t) {
  return op == kCsgUnion ? (r || t) : op == kCsgIntersection ? (r && t) : (r && !t);
}
// Signed distance (negative inside): min, max, max with the negated subtrahend.
RBFPDE_HD double csg_combine(int op, double r, double t) {
  return op == kCsgUnion          ? (t < r ? t : r)
         : op == kCsgIntersection ? (r < t ? t : r)
                                  : (r < -t ? -t : r);
}

// The composite's value given each leaf's, leaf(j) (bool: membership; double: signed distance).
template <class T, class Leaf>
RBFPDE_HD T csg_evaluate(const int* program, int length, const Leaf& leaf) {
  T stack[kMaxCsgLeaves] = {};
  int top = 0;
  for (int i = 0; i < length; ++i) {
    if (program[i] >= 0) {
      stack[top++] = leaf(program[i]);
    } else {
      --top;
      stack[top - 1] = csg_combine(program[i], stack[top - 1], stack[top]);
    }
  }
  return stack[0];
}

// A composite's data for its samplers: the program over its leaves, the leaves' whole boundary
// measures summed (leaves + 1 entries, from 0), and the probe distance h of boundary proposals.
struct CsgShape {
  const int* program;
  int length;
  int leaves;
  const double* cumulative;
  int dim;
  double h;
};

// One boundary proposal of a composite: x on leaf `leaf`'s boundary with that primitive's outward
// normal m. The result is probed at x − h·m and x + h·m, with the proposing leaf taken as inside at
// the first and outside at the second; x is kept when exactly one probe is inside, no earlier
// leaf's boundary also passes through x (a shared piece belongs to the first leaf), and x itself is
// in the closed result with the proposing leaf on the result's side. Writes the result's outward
// normal (m, or −m when the outer probe is the inside one). contains(j, p): leaf j's inside test.
template <class Contains>
RBFPDE_HD bool csg_boundary_accept(const CsgShape& c, int leaf, const double* x, const double* m,
                                   const Contains& contains, double* normal) {
  double minus[3], plus[3];
  for (int k = 0; k < c.dim; ++k) minus[k] = x[k] - c.h * m[k], plus[k] = x[k] + c.h * m[k];
  bool in_minus[kMaxCsgLeaves], in_plus[kMaxCsgLeaves];
  for (int j = 0; j < c.leaves; ++j) {
    if (j == leaf) {
      in_minus[j] = true, in_plus[j] = false;
      continue;
    }
    in_minus[j] = contains(j, minus);
    in_plus[j] = contains(j, plus);
    if (j < leaf && in_minus[j] != in_plus[j]) return false;
  }
  auto evaluate = [&](const auto& leaf_value) {
    return csg_evaluate<bool>(c.program, c.length, leaf_value);
  };
  const bool inside_minus = evaluate([&](int j) { return in_minus[j]; });
  const bool inside_plus = evaluate([&](int j) { return in_plus[j]; });
  if (inside_minus == inside_plus) return false;
  // The probes alone would keep points within h of another leaf's boundary near where the two
  // touch (tangent circles, a disk touching an edge).
  if (!evaluate([&](int j) { return j == leaf ? inside_minus : contains(j, x); })) return false;
  const double sign = inside_minus ? 1.0 : -1.0;
  for (int k = 0; k < c.dim; ++k) normal[k] = sign * m[k];
  return true;
}

// A boundary proposal from uniform u: a leaf by its whole boundary measure, a point x on it from
// leaf_boundary(leaf, x, m) (m: the leaf's outward normal), judged by csg_boundary_accept.
template <class Boundary, class Contains>
RBFPDE_HD bool csg_propose_boundary(const CsgShape& c, double u, const Boundary& leaf_boundary,
                                    const Contains& contains, double* x, double* normal) {
  const int leaf = piece_of(c.cumulative, c.leaves, u * c.cumulative[c.leaves]);
  double m[3] = {0.0, 0.0, 0.0};
  leaf_boundary(leaf, x, m);
  return csg_boundary_accept(c, leaf, x, m, contains, normal);
}

}  // namespace rbfpde

#ifndef __CUDACC_RTC__
#include <array>
#include <vector>

namespace rbfpde {

// A polygon's arrays, and its shape pointing into them (valid while this lives and is unchanged).
struct PolygonArrays {
  std::vector<double> xy, perimeter, area;
  std::vector<int> corners;
  double tol = 0;

  // vertices counter-clockwise; triangles counter-clockwise, indices into vertices.
  PolygonArrays(const std::vector<std::array<double, 2>>& vertices,
                const std::vector<std::array<int, 3>>& triangles) {
    double lo[2] = {vertices[0][0], vertices[0][1]}, hi[2] = {lo[0], lo[1]};
    perimeter.push_back(0);
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      const std::array<double, 2>& a = vertices[i];
      const std::array<double, 2>& b = vertices[(i + 1) % vertices.size()];
      xy.push_back(a[0]), xy.push_back(a[1]);
      perimeter.push_back(perimeter.back() + std::hypot(b[0] - a[0], b[1] - a[1]));
      for (int k = 0; k < 2; ++k) lo[k] = std::fmin(lo[k], a[k]), hi[k] = std::fmax(hi[k], a[k]);
    }
    tol = 1e-12 * std::hypot(hi[0] - lo[0], hi[1] - lo[1]);
    area.push_back(0);
    for (const std::array<int, 3>& t : triangles) {
      const auto& a = vertices[t[0]];
      const auto& b = vertices[t[1]];
      const auto& c = vertices[t[2]];
      area.push_back(area.back() +
                     0.5 * std::abs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])));
      corners.insert(corners.end(), t.begin(), t.end());
    }
  }

  PolygonShape shape() const {
    const int vertices = int(xy.size() / 2), count = int(area.size()) - 1;
    return {vertices, xy.data(), perimeter.data(), count, corners.data(), area.data(), tol};
  }
};

}  // namespace rbfpde
#endif
