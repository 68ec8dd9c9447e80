// DeviceSampler: CUDA source for one problem's batch drawing, compiled with NVRTC and loaded with
// the runtime's library API (cudaLibraryLoadData), so no driver-API linking is needed.
//
// The generated kernel, one thread per point (256 per block), everything in double:
//   interior  rectangle/box: lo + (hi − lo)·U per axis; disk/ball: centre + r·U^(1/d)·direction
//             (direction: angle 2πU in 2D; z = 2U − 1 and an azimuth in 3D, Archimedes);
//             polygon: a triangle of the triangulation by area (CDF), then a uniform point in it
//             (u + v > 1 reflected);
//   boundary  rectangle/box: a face by measure (CDF), uniform on it; disk/ball: r·direction;
//             polygon: an edge by length (CDF), uniform on it; outward unit normals;
//   union / difference / intersection: drawn by rejection on the device, interior from the
//             bounding box, boundary from the primitives' boundaries, with the composite's inside
//             test generated as CUDA source (composite_code below);
//   points    the cloud compiled in as constant arrays; a point is a uniform index into them
//             (cloud_code below; clouds over 20000 points are left to the host);
//   targets   f at interior points, the first boundary entry whose `where` holds at boundary
//             points (NaN when none, as Problem::sample), evaluated at the point as stored (T).
//   napkin math: per point ≈ 2–4 Philox blocks (≈ 40 integer ops each) + the user expression; at
//   18432 points a few µs, launch-bound.
#include "kernels/cuda/common/device_sampler.hpp"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/common/cuda_check.hpp"
#include "problems/expression_codegen.hpp"

#ifndef RBFPDE_CUDA_INCLUDE_DIRS
#define RBFPDE_CUDA_INCLUDE_DIRS ""
#endif

namespace rbfpde::gpu {
namespace {

constexpr int kSamplerThreads = 256;

std::string literal(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return "(" + s + ")";
}

std::string array_literal(const std::vector<double>& values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + literal(values[i]);
  return s + "}";
}

// A point's draws for one batch must fit in its stride of the Philox stream (device_sampler.hpp):
// a primitive uses at most 8 32-bit draws; a composite proposal at most 12 (4 to pick a
// primitive, ≤ 8 on it), so 2²⁰ proposals need < 2²⁴.
constexpr int kCompositeMaxTries = 1 << 20;
constexpr unsigned long long kPrimitiveStride = 16;
constexpr unsigned long long kCompositeStride = 1ull << 24;
// A point cloud is compiled into the kernel as constant arrays up to this many points; a larger
// one makes the constructor throw, and the host samples (solve.cpp falls back on runtime_error).
constexpr std::size_t kMaxCloudPoints = 20000;

std::string int_array(const std::vector<int>& values) {
  std::string r = "{";
  for (std::size_t i = 0; i < values.size(); ++i) r += (i ? ", " : "") + std::to_string(values[i]);
  return r + "}";
}

bool is_composite(const DomainGeometry& g) {
  return g.type == "union" || g.type == "difference" || g.type == "intersection";
}

// Device functions <pfx>sample_interior(st, p), <pfx>sample_boundary(st, p, n) and
// <pfx>contains(p) for a primitive, with the host's inside test (closed, with the same relative
// tolerance as problems/box.cpp, ball.cpp, polygon.cpp).
std::string primitive_code(const DomainGeometry& g, const std::string& pfx) {
  std::ostringstream s;
  const int d = g.dim;
  if (g.type == "rectangle" || g.type == "box") {
    const std::vector<double>& lo = g.lo;
    const std::vector<double>& hi = g.hi;
    std::vector<double> face_cdf;
    double total = 0, largest = 0;
    for (int k = 0; k < d; ++k) {
      double m = 1;
      for (int j = 0; j < d; ++j)
        if (j != k) m *= hi[j] - lo[j];
      total += m;  // lower face of axis k
      face_cdf.push_back(total);
      total += m;  // upper face
      face_cdf.push_back(total);
      largest = std::max(largest, hi[k] - lo[k]);
    }
    for (double& c : face_cdf) c /= total;
    face_cdf.back() = 1.0;
    s << "__device__ const double " << pfx << "kLo[" << d << "] = " << array_literal(lo) << ";\n"
      << "__device__ const double " << pfx << "kHi[" << d << "] = " << array_literal(hi) << ";\n"
      << "__device__ const double " << pfx << "kFaceCdf[" << 2 * d
      << "] = " << array_literal(face_cdf) << ";\n"
      << "__device__ void " << pfx << "sample_interior(Rng* st, double* p) {\n"
      << "  double u[" << d << "];\n"
      << "  draw_uniforms<" << d << ">(st, u);\n"
      << "  for (int k = 0; k < " << d << "; ++k) p[k] = " << pfx << "kLo[k] + (" << pfx
      << "kHi[k] - " << pfx << "kLo[k]) * u[k];\n"
      << "}\n"
      << "__device__ void " << pfx << "sample_boundary(Rng* st, double* p, double* n) {\n"
      << "  double u[" << d + 1 << "];\n"
      << "  draw_uniforms<" << d + 1 << ">(st, u);\n"
      << "  int face = 0;\n"
      << "  while (face < " << 2 * d - 1 << " && u[0] > " << pfx << "kFaceCdf[face]) ++face;\n"
      << "  const int axis = face / 2; const bool upper = (face & 1) != 0;\n"
      << "  for (int k = 0; k < " << d << "; ++k) {\n"
      << "    p[k] = k == axis ? (upper ? " << pfx << "kHi[k] : " << pfx << "kLo[k]) : " << pfx
      << "kLo[k] + (" << pfx << "kHi[k] - " << pfx << "kLo[k]) * u[k + 1];\n"
      << "    n[k] = k == axis ? (upper ? 1.0 : -1.0) : 0.0;\n"
      << "  }\n"
      << "}\n"
      << "__device__ bool " << pfx << "contains(const double* p) {\n"
      << "  for (int k = 0; k < " << d << "; ++k)\n"
      << "    if (p[k] < " << pfx << "kLo[k] - " << literal(1e-12 * largest) << " || p[k] > " << pfx
      << "kHi[k] + " << literal(1e-12 * largest) << ") return false;\n"
      << "  return true;\n"
      << "}\n";
  } else if (g.type == "disk" || g.type == "ball") {
    s << "__device__ const double " << pfx << "kCentre[" << d << "] = " << array_literal(g.centre)
      << ";\n"
      << "__device__ const double " << pfx << "kRadius = " << literal(g.radius) << ";\n"
      << "__device__ void " << pfx << "direction(const double* u, double* e) {\n";
    if (d == 2) {
      s << "  double sn, cs; sincospi(2.0 * u[0], &sn, &cs); e[0] = cs; e[1] = sn;\n";
    } else {
      s << "  const double z = 2.0 * u[1] - 1.0; const double r = sqrt(fmax(0.0, 1.0 - z * z));\n"
        << "  double sn, cs; sincospi(2.0 * u[0], &sn, &cs); e[0] = r * cs; e[1] = r * sn; e[2] = z;\n";
    }
    s << "}\n"
      << "__device__ void " << pfx << "sample_interior(Rng* st, double* p) {\n"
      << "  double u[" << d + 1 << "], e[" << d << "];\n"
      << "  draw_uniforms<" << d + 1 << ">(st, u);\n"
      << "  " << pfx << "direction(u + 1, e);\n"
      << "  const double rho = " << pfx << "kRadius * " << (d == 2 ? "sqrt(u[0])" : "cbrt(u[0])")
      << ";\n"
      << "  for (int k = 0; k < " << d << "; ++k) p[k] = " << pfx << "kCentre[k] + rho * e[k];\n"
      << "}\n"
      << "__device__ void " << pfx << "sample_boundary(Rng* st, double* p, double* n) {\n"
      << "  double u[" << d << "], e[" << d << "];\n"
      << "  draw_uniforms<" << d << ">(st, u);\n"
      << "  " << pfx << "direction(u, e);\n"
      << "  for (int k = 0; k < " << d << "; ++k) { p[k] = " << pfx << "kCentre[k] + " << pfx
      << "kRadius * e[k]; n[k] = e[k]; }\n"
      << "}\n"
      << "__device__ bool " << pfx << "contains(const double* p) {\n"
      << "  double s = 0.0;\n"
      << "  for (int k = 0; k < " << d << "; ++k) s += (p[k] - " << pfx << "kCentre[k]) * (p[k] - "
      << pfx << "kCentre[k]);\n"
      << "  return sqrt(s) <= " << literal(g.radius * (1 + 1e-12)) << ";\n"
      << "}\n";
  } else if (g.type == "polygon") {
    const auto& v = g.vertices;
    const std::size_t nv = v.size(), nt = g.triangles.size();
    if (nv < 3 || nt == 0) throw std::runtime_error("polygon without a triangulation");
    std::vector<double> vx, vy, edge_cdf, tri_cdf;
    for (const auto& p : v) vx.push_back(p[0]), vy.push_back(p[1]);
    double perimeter = 0, area = 0;
    for (std::size_t i = 0; i < nv; ++i) {
      const auto& a = v[i];
      const auto& b = v[(i + 1) % nv];
      perimeter += std::hypot(b[0] - a[0], b[1] - a[1]);
      edge_cdf.push_back(perimeter);
    }
    std::vector<int> ta, tb, tc;
    for (const auto& t : g.triangles) {
      const auto& a = v[t[0]];
      const auto& b = v[t[1]];
      const auto& c = v[t[2]];
      area += 0.5 * std::abs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
      tri_cdf.push_back(area);
      ta.push_back(t[0]), tb.push_back(t[1]), tc.push_back(t[2]);
    }
    for (double& c : edge_cdf) c /= perimeter;
    for (double& c : tri_cdf) c /= area;
    edge_cdf.back() = tri_cdf.back() = 1.0;
    const double tol = 1e-12 * std::hypot(g.hi[0] - g.lo[0], g.hi[1] - g.lo[1]);
    const std::string P = pfx;
    s << "__device__ const double " << P << "kVx[" << nv << "] = " << array_literal(vx) << ";\n"
      << "__device__ const double " << P << "kVy[" << nv << "] = " << array_literal(vy) << ";\n"
      << "__device__ const double " << P << "kEdgeCdf[" << nv << "] = " << array_literal(edge_cdf)
      << ";\n"
      << "__device__ const double " << P << "kTriCdf[" << nt << "] = " << array_literal(tri_cdf)
      << ";\n"
      << "__device__ const int " << P << "kTa[" << nt << "] = " << int_array(ta) << ";\n"
      << "__device__ const int " << P << "kTb[" << nt << "] = " << int_array(tb) << ";\n"
      << "__device__ const int " << P << "kTc[" << nt << "] = " << int_array(tc) << ";\n"
      << "__device__ void " << P << "sample_interior(Rng* st, double* p) {\n"
      << "  double u[3];\n"
      << "  draw_uniforms<3>(st, u);\n"
      << "  int t = 0;\n"
      << "  while (t < " << nt - 1 << " && u[0] > " << P << "kTriCdf[t]) ++t;\n"
      << "  double a = u[1], b = u[2];\n"
      << "  if (a + b > 1.0) { a = 1.0 - a; b = 1.0 - b; }\n"
      << "  const int i0 = " << P << "kTa[t], i1 = " << P << "kTb[t], i2 = " << P << "kTc[t];\n"
      << "  p[0] = " << P << "kVx[i0] + a * (" << P << "kVx[i1] - " << P << "kVx[i0]) + b * (" << P
      << "kVx[i2] - " << P << "kVx[i0]);\n"
      << "  p[1] = " << P << "kVy[i0] + a * (" << P << "kVy[i1] - " << P << "kVy[i0]) + b * (" << P
      << "kVy[i2] - " << P << "kVy[i0]);\n"
      << "}\n"
      << "__device__ void " << P << "sample_boundary(Rng* st, double* p, double* n) {\n"
      << "  double u[2];\n"
      << "  draw_uniforms<2>(st, u);\n"
      << "  int e = 0;\n"
      << "  while (e < " << nv - 1 << " && u[0] > " << P << "kEdgeCdf[e]) ++e;\n"
      << "  const int i0 = e, i1 = e + 1 == " << nv << " ? 0 : e + 1;\n"
      << "  const double ex = " << P << "kVx[i1] - " << P << "kVx[i0], ey = " << P << "kVy[i1] - "
      << P << "kVy[i0];\n"
      << "  const double len = sqrt(ex * ex + ey * ey);\n"
      << "  const double s = u[1];\n"
      << "  p[0] = " << P << "kVx[i0] + s * ex; p[1] = " << P << "kVy[i0] + s * ey;\n"
      << "  n[0] = ey / len; n[1] = -ex / len;\n"
      << "}\n"
      // Crossing number, or within the tolerance of an edge (the domain is closed).
      << "__device__ bool " << P << "contains(const double* p) {\n"
      << "  bool inside = false; double d2 = 1e300;\n"
      << "  for (int i = 0, j = " << nv - 1 << "; i < " << nv << "; j = i++) {\n"
      << "    const double ax = " << P << "kVx[j], ay = " << P << "kVy[j], bx = " << P
      << "kVx[i], by = " << P << "kVy[i];\n"
      << "    if ((ay > p[1]) != (by > p[1])) {\n"
      << "      const double xc = ax + (p[1] - ay) * (bx - ax) / (by - ay);\n"
      << "      if (p[0] < xc) inside = !inside;\n"
      << "    }\n"
      << "    const double ex = bx - ax, ey = by - ay, px = p[0] - ax, py = p[1] - ay;\n"
      << "    const double t = fmin(1.0, fmax(0.0, (px * ex + py * ey) / (ex * ex + ey * ey)));\n"
      << "    const double qx = px - t * ex, qy = py - t * ey;\n"
      << "    d2 = fmin(d2, qx * qx + qy * qy);\n"
      << "  }\n"
      << "  return inside || sqrt(d2) <= " << literal(tol) << ";\n"
      << "}\n";
  } else {
    throw std::runtime_error("the device sampler does not know domain type '" + g.type + "'");
  }
  return s.str();
}

// The primitives at the leaves of a composite, in the host's leaf order (problems/csg.cpp), and
// the composite's membership as a C expression over in[leaf].
void flatten(const DomainGeometry& g, std::vector<const DomainGeometry*>& leaves,
             std::string& expression) {
  if (!is_composite(g)) {
    expression = "in[" + std::to_string(leaves.size()) + "]";
    leaves.push_back(&g);
    return;
  }
  std::string out = "(";
  for (std::size_t i = 0; i < g.parts.size(); ++i) {
    std::string part;
    flatten(g.parts[i], leaves, part);
    if (i == 0) {
      out += part;
    } else if (g.type == "union") {
      out += " || " + part;
    } else if (g.type == "intersection") {
      out += " && " + part;
    } else {
      out += " && !" + part;
    }
  }
  expression = out + ")";
}

double leaf_boundary_measure(const DomainGeometry& g) {
  if (g.type == "rectangle" || g.type == "box") {
    double total = 0;
    for (int k = 0; k < g.dim; ++k) {
      double m = 1;
      for (int j = 0; j < g.dim; ++j)
        if (j != k) m *= g.hi[j] - g.lo[j];
      total += 2 * m;
    }
    return total;
  }
  const double pi = 3.14159265358979323846;
  if (g.type == "disk") return 2 * pi * g.radius;
  if (g.type == "ball") return 4 * pi * g.radius * g.radius;
  double total = 0;
  for (std::size_t i = 0; i < g.vertices.size(); ++i) {
    const auto& a = g.vertices[i];
    const auto& b = g.vertices[(i + 1) % g.vertices.size()];
    total += std::hypot(b[0] - a[0], b[1] - a[1]);
  }
  return total;
}

// A composite drawn by rejection on the device, by the host's method (problems/csg.cpp):
//   interior: uniform in the bounding box until the primitives' membership, combined by the
//     tree, says inside (boolean membership, so points on a hole's rim count as outside: a set of
//     measure zero);
//   boundary: a primitive by its whole boundary measure (CDF), a uniform point x on it with its
//     normal m; probes x ∓ h·m (h = 10⁻⁹ of the box diagonal) with the proposing primitive in at
//     the first and out at the second; kept when exactly one probe is inside the result, no
//     earlier primitive's boundary crosses x, and x itself is in the closed result (the proposing
//     primitive counted on the result's side); the normal is m, or −m when the outer probe is the
//     inside one (a subtracted part).
// Failure mode: a point still unaccepted after 2²⁰ proposals is written as NaN (with a NaN
// normal), so that the batch's residuals are NaN and training reports divergence rather than
// train on a wrong point. The host refuses composites that accept less than 10⁻³ of proposals
// (problems/csg.cpp), which bounds that chance by (1 − 10⁻³)^(2²⁰) < 10⁻⁴⁵⁰ per point; a
// proposal costs a few dozen flops per primitive, so even 10³ of them per point stay cheap.
std::string composite_code(const DomainGeometry& g) {
  std::vector<const DomainGeometry*> leaves;
  std::string expression;
  flatten(g, leaves, expression);
  const int d = g.dim;
  const std::size_t nl = leaves.size();
  std::ostringstream s;
  std::vector<double> cdf;
  double total = 0;
  for (std::size_t i = 0; i < nl; ++i) {
    s << primitive_code(*leaves[i], "leaf" + std::to_string(i) + "_");
    total += leaf_boundary_measure(*leaves[i]);
    cdf.push_back(total);
  }
  for (double& c : cdf) c /= total;
  cdf.back() = 1.0;
  double diag2 = 0;
  for (int k = 0; k < d; ++k) diag2 += (g.hi[k] - g.lo[k]) * (g.hi[k] - g.lo[k]);
  const double probe = 1e-9 * std::sqrt(diag2);
  s << "__device__ const double kLo[" << d << "] = " << array_literal(g.lo) << ";\n"
    << "__device__ const double kHi[" << d << "] = " << array_literal(g.hi) << ";\n"
    << "__device__ const double kLeafCdf[" << nl << "] = " << array_literal(cdf) << ";\n"
    << "__device__ bool csg_inside(const bool* in) { return " << expression << "; }\n"
    << "__device__ void leaf_membership(const double* p, bool* in) {\n";
  for (std::size_t i = 0; i < nl; ++i) s << "  in[" << i << "] = leaf" << i << "_contains(p);\n";
  s << "}\n"
    << "__device__ void set_nan(double* v) {\n"
    << "  for (int k = 0; k < " << d
    << "; ++k) v[k] = __longlong_as_double(0x7ff8000000000000ll);\n"
    << "}\n"
    << "__device__ void sample_interior(Rng* st, double* p) {\n"
    << "  for (int t = 0; t < " << kCompositeMaxTries << "; ++t) {\n"
    << "    double u[" << d << "];\n"
    << "    draw_uniforms<" << d << ">(st, u);\n"
    << "    for (int k = 0; k < " << d << "; ++k) p[k] = kLo[k] + (kHi[k] - kLo[k]) * u[k];\n"
    << "    bool in[" << nl << "];\n"
    << "    leaf_membership(p, in);\n"
    << "    if (csg_inside(in)) return;\n"
    << "  }\n"
    << "  set_nan(p);\n"
    << "}\n"
    << "__device__ void sample_boundary(Rng* st, double* p, double* n) {\n"
    << "  for (int t = 0; t < " << kCompositeMaxTries << "; ++t) {\n"
    << "    double u[1];\n"
    << "    draw_uniforms<1>(st, u);\n"
    << "    int leaf = 0;\n"
    << "    while (leaf < " << nl - 1 << " && u[0] > kLeafCdf[leaf]) ++leaf;\n"
    << "    double m[3] = {0.0, 0.0, 0.0};\n"
    << "    switch (leaf) {\n";
  for (std::size_t i = 0; i < nl; ++i)
    s << "      case " << i << ": leaf" << i << "_sample_boundary(st, p, m); break;\n";
  s << "    }\n"
    << "    double a[3], b[3];\n"
    << "    for (int k = 0; k < " << d << "; ++k) { a[k] = p[k] - " << literal(probe)
    << " * m[k]; b[k] = p[k] + " << literal(probe) << " * m[k]; }\n"
    << "    bool in_a[" << nl << "], in_b[" << nl << "];\n"
    << "    leaf_membership(a, in_a);\n"
    << "    leaf_membership(b, in_b);\n"
    << "    in_a[leaf] = true; in_b[leaf] = false;\n"
    << "    bool owned = true;\n"
    << "    for (int j = 0; j < leaf; ++j) owned = owned && in_a[j] == in_b[j];\n"
    << "    if (!owned) continue;\n"
    << "    const bool inside_a = csg_inside(in_a), inside_b = csg_inside(in_b);\n"
    << "    if (inside_a == inside_b) continue;\n"
    << "    bool in_x[" << nl << "];\n"
    << "    leaf_membership(p, in_x);\n"
    << "    in_x[leaf] = inside_a;\n"
    << "    if (!csg_inside(in_x)) continue;\n"
    << "    const double sign = inside_a ? 1.0 : -1.0;\n"
    << "    for (int k = 0; k < " << d << "; ++k) n[k] = sign * m[k];\n"
    << "    return;\n"
    << "  }\n"
    << "  set_nan(p); set_nan(n);\n"
    << "}\n";
  return s.str();
}

// A point cloud: its points compiled in; a draw picks one uniformly (one uniform per point).
std::string cloud_code(const DomainGeometry& g) {
  const int d = g.dim;
  const std::size_t n = g.points.size() / d, nb = n - g.boundary_begin, ni = g.boundary_begin;
  if (n > kMaxCloudPoints) {
    throw std::runtime_error("the point cloud has " + std::to_string(n) +
                             " points, more than the device sampler compiles in (" +
                             std::to_string(kMaxCloudPoints) + ")");
  }
  const std::vector<double> interior(g.points.begin(), g.points.begin() + ni * d);
  const std::vector<double> boundary(g.points.begin() + ni * d, g.points.end());
  std::ostringstream s;
  s << "__device__ const double kInterior[" << ni * d << "] = " << array_literal(interior) << ";\n"
    << "__device__ const double kBoundary[" << nb * d << "] = " << array_literal(boundary) << ";\n"
    << "__device__ const double kNormals[" << nb * d << "] = " << array_literal(g.normals)
    << ";\n"
    << "__device__ int pick(Rng* st, int count) {\n"
    << "  double u[1];\n"
    << "  draw_uniforms<1>(st, u);  // (0, 1]\n"
    << "  return min(count - 1, (int)(u[0] * count));\n"
    << "}\n"
    << "__device__ void sample_interior(Rng* st, double* p) {\n"
    << "  const int i = pick(st, " << ni << ");\n"
    << "  for (int k = 0; k < " << d << "; ++k) p[k] = kInterior[i * " << d << " + k];\n"
    << "}\n"
    << "__device__ void sample_boundary(Rng* st, double* p, double* n) {\n"
    << "  const int i = pick(st, " << nb << ");\n"
    << "  for (int k = 0; k < " << d << "; ++k) { p[k] = kBoundary[i * " << d
    << " + k]; n[k] = kNormals[i * " << d << " + k]; }\n"
    << "}\n";
  return s.str();
}

// Device functions sample_interior(st, p) and sample_boundary(st, p, n) for the domain, and the
// stride kDrawStride of a point's Philox stream per batch (device_sampler.hpp).
std::string domain_code(const DomainGeometry& g) {
  if (is_composite(g)) {
    return "__device__ const unsigned long long kDrawStride = " +
           std::to_string(kCompositeStride) + "ull;\n" + composite_code(g);
  }
  const std::string stride =
      "__device__ const unsigned long long kDrawStride = " + std::to_string(kPrimitiveStride) +
      "ull;\n";
  if (g.type == "points") return stride + cloud_code(g);
  return stride + primitive_code(g, "");
}

// The coordinates a generated point function takes: x, y, z always (unused ones are 0), t as well
// for a space-time problem (dim 4).
std::string point_parameters(int dim) {
  return dim > 3 ? "double x, double y, double z, double t" : "double x, double y, double z";
}
std::string point_arguments(int dim) {
  return dim > 3 ? "p[0], p[1], p[2], p[3]" : "p[0], p[1], p[2]";
}

std::string point_function(const std::string& name, const std::string& text, int dim) {
  return "__device__ double " + name + "(" + point_parameters(dim) + ") { return " +
         expression_to_c(text, dim) + "; }\n";
}

// A coefficient: its text, or the default when the text is empty.
std::string coefficient_function(const std::string& name, const std::string& text, double fallback,
                                 int dim) {
  if (text.empty())
    return "__device__ double " + name + "(" + point_parameters(dim) + ") { return " +
           literal(fallback) + "; }\n";
  return point_function(name, text, dim);
}

bool everywhere(const std::string& where) {
  std::size_t b = where.find_first_not_of(" \t"), e = where.find_last_not_of(" \t");
  return b == std::string::npos || where.substr(b, e - b + 1) == "1";
}

std::vector<std::string> include_options() {
  std::vector<std::string> out;
  std::string dirs = RBFPDE_CUDA_INCLUDE_DIRS;
  std::size_t pos = 0;
  while (pos <= dirs.size()) {
    const std::size_t end = std::min(dirs.find('|', pos), dirs.size());
    const std::string dir = dirs.substr(pos, end - pos);
    if (!dir.empty()) {
      out.push_back("-I" + dir);
      // CUDA 13 keeps libcu++ (cuda/std, which curand_kernel.h includes) there.
      if (dir.size() < 5 || dir.compare(dir.size() - 5, 5, "/cccl") != 0)
        out.push_back("-I" + dir + "/cccl");
    }
    pos = end + 1;
  }
  return out;
}

struct CompiledImage {
  std::vector<char> cubin;
};

// Compiles `source` for `arch` (e.g. 90); cached per (source, arch).
const std::vector<char>& compile(const std::string& source, int arch) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int>, std::vector<char>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(source, arch);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;

  nvrtcProgram program = nullptr;
  auto check = [&](nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS)
      throw std::runtime_error(std::string("NVRTC: ") + what + ": " + nvrtcGetErrorString(r));
  };
  check(nvrtcCreateProgram(&program, source.c_str(), "rbfpde_sampler.cu", 0, nullptr, nullptr),
        "nvrtcCreateProgram");
  std::vector<std::string> options = include_options();
  options.push_back("--gpu-architecture=sm_" + std::to_string(arch));
  options.push_back("--std=c++17");
  options.push_back("-default-device");
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult result = nvrtcCompileProgram(program, int(argv.size()), argv.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) nvrtcGetProgramLog(program, log.data());
  if (result != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&program);
    throw std::runtime_error(std::string("NVRTC could not compile the device sampler (") +
                             nvrtcGetErrorString(result) + "):\n" + log);
  }
  std::size_t size = 0;
  check(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
  std::vector<char> cubin(size);
  check(nvrtcGetCUBIN(program, cubin.data()), "nvrtcGetCUBIN");
  nvrtcDestroyProgram(&program);
  return cache.emplace(key, std::move(cubin)).first->second;
}

}  // namespace

bool OperatorText::poisson_dirichlet(int dim) const {
  if ((space_dim != 0 && space_dim != dim) || !a.empty() || !c.empty() || !b.empty()) return false;
  for (const Boundary& e : boundary)
    if (!e.alpha.empty() || !e.beta.empty()) return false;
  return true;
}

OperatorText operator_text(const Problem& problem) {
  if (problem.has_time())
    throw std::runtime_error("the device sampler does not draw space-time batches (the initial "
                             "face and the lateral boundary)");
  OperatorText op;
  op.f = problem.f().text();
  const bool general = !problem.poisson_dirichlet();
  if (general) {
    op.a = problem.a().text();
    op.c = problem.c().text();
    for (const Expression& b : problem.b()) op.b.push_back(b.text());
  }
  for (const BoundaryCondition& bc : problem.boundary()) {
    OperatorText::Boundary e;
    e.value = bc.value.text();
    if (!bc.everywhere) e.where = bc.where.text();
    if (general) {
      e.alpha = bc.alpha.text();
      e.beta = bc.beta.text();
    }
    op.boundary.push_back(e);
  }
  return op;
}

std::string sampler_source(const Problem& problem, bool double_precision) {
  return sampler_source(problem, operator_text(problem), double_precision);
}

// General operators add, per interior point, a, b[d], c and, per boundary point, α and β of the
// entry that holds there (NaN with the value when none does), all evaluated at the point as
// stored (T), like the targets.
std::string sampler_source(const Problem& problem, const OperatorText& op, bool double_precision) {
  const int d = problem.dim();
  if (d > 3)
    throw std::runtime_error("the device sampler draws batches of 2D and 3D domains, not of " +
                             std::to_string(d) + " coordinates");
  const bool general = !op.poisson_dirichlet(d);
  if (!op.b.empty() && int(op.b.size()) != d)
    throw std::runtime_error("the operator's b has " + std::to_string(op.b.size()) +
                             " components for a problem of " + std::to_string(d) + " coordinates");
  const DomainGeometry g = problem.domain().geometry();
  const std::string args = point_arguments(d);
  std::ostringstream s;
  s << "// generated by rbfpde for one problem: collocation batches on the device\n"
    << "#include <curand_kernel.h>\n"
    << "typedef " << (double_precision ? "double" : "float") << " T;\n"
    << "typedef curandStatePhilox4_32_10_t Rng;\n"
    << "template <int N> __device__ __forceinline__ void draw_uniforms(Rng* st, double* u) {\n"
    << "  for (int k = 0; k < N; k += 2) {\n"
    << "    const double2 v = curand_uniform2_double(st);  // (0, 1]\n"
    << "    u[k] = v.x; if (k + 1 < N) u[k + 1] = v.y;\n"
    << "  }\n"
    << "}\n"
    << "__device__ __forceinline__ bool holds(double v) { return v != 0.0 && !isnan(v); }\n";
  s << domain_code(g);
  s << point_function("f_value", op.f.empty() ? problem.f().text() : op.f, d);
  const auto& bcs = op.boundary;
  for (std::size_t i = 0; i < bcs.size(); ++i) {
    const std::string n = std::to_string(i);
    s << point_function("bc_value_" + n, bcs[i].value, d);
    if (!everywhere(bcs[i].where)) s << point_function("bc_where_" + n, bcs[i].where, d);
    if (general) {
      s << coefficient_function("bc_alpha_" + n, bcs[i].alpha, 1.0, d);
      s << coefficient_function("bc_beta_" + n, bcs[i].beta, 0.0, d);
    }
  }
  // The first entry whose `where` holds: its value (and α, β), NaN when none.
  s << "__device__ double boundary_value(" << point_parameters(d)
    << (general ? ", double* alpha, double* beta" : "") << ") {\n";
  const std::string call = d > 3 ? "(x, y, z, t)" : "(x, y, z)";
  for (std::size_t i = 0; i < bcs.size(); ++i) {
    const std::string n = std::to_string(i);
    const std::string take = general ? "{ *alpha = bc_alpha_" + n + call + "; *beta = bc_beta_" +
                                           n + call + "; return bc_value_" + n + call + "; }"
                                     : "return bc_value_" + n + call + ";";
    if (everywhere(bcs[i].where))
      s << "  " << take << "\n";
    else
      s << "  if (holds(bc_where_" << n << call << ")) " << take << "\n";
  }
  s << "  const double nan = __longlong_as_double(0x7ff8000000000000ll);\n";
  if (general) s << "  *alpha = nan; *beta = nan;\n";
  s << "  return nan;\n}\n";
  if (general) {
    s << coefficient_function("coef_a", op.a, 1.0, d);
    for (int k = 0; k < d; ++k)
      s << coefficient_function("coef_b_" + std::to_string(k),
                                op.b.empty() ? std::string() : op.b[k], 0.0, d);
    s << coefficient_function("coef_c", op.c, 0.0, d);
  }
  s << "extern \"C\" __global__ void __launch_bounds__(" << kSamplerThreads << ")\n"
    << "rbfpde_draw_batch(const unsigned long long* __restrict__ index, unsigned long long seed,\n"
    << "                  int n_int, int n_bnd, T* __restrict__ x, T* __restrict__ target,\n"
    << "                  T* __restrict__ normals, const int* __restrict__ halt, int step,\n"
    << "                  T* __restrict__ a, T* __restrict__ b, T* __restrict__ c,\n"
    << "                  T* __restrict__ alpha, T* __restrict__ beta) {\n"
    << "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    << "  if (i >= n_int + n_bnd) return;\n"
    << "  if (halt != nullptr && halt[0] < step) return;  // a halted chunk draws nothing more\n"
    << "  const bool interior = i < n_int;\n"
    << "  const unsigned long long sub = interior ? (unsigned long long)i\n"
    << "                                          : (1ull << 32) + (unsigned long long)(i - n_int);\n"
    << "  Rng st;\n"
    << "  curand_init(seed, sub, kDrawStride * index[0], &st);\n"
    << "  double p[3] = {0.0, 0.0, 0.0}, n[3] = {0.0, 0.0, 0.0};\n"
    << "  if (interior) sample_interior(&st, p); else sample_boundary(&st, p, n);\n"
    << "  for (int k = 0; k < " << d << "; ++k) { const T v = T(p[k]); x[(long long)i * " << d
    << " + k] = v; p[k] = double(v); }\n"
    << "  if (interior) {\n"
    << "    target[i] = T(f_value(" << args << "));\n";
  if (general) {
    s << "    a[i] = T(coef_a(" << args << "));\n";
    for (int k = 0; k < d; ++k)
      s << "    b[(long long)i * " << d << " + " << k << "] = T(coef_b_" << k << "(" << args
        << "));\n";
    s << "    c[i] = T(coef_c(" << args << "));\n";
  }
  s << "  } else {\n";
  if (general) {
    s << "    double al, be;\n"
      << "    target[i] = T(boundary_value(" << args << ", &al, &be));\n"
      << "    alpha[i - n_int] = T(al);\n"
      << "    beta[i - n_int] = T(be);\n";
  } else {
    s << "    target[i] = T(boundary_value(" << args << "));\n";
  }
  s << "    for (int k = 0; k < " << d << "; ++k) normals[(long long)(i - n_int) * " << d
    << " + k] = T(n[k]);\n"
    << "  }\n"
    << "}\n";
  return s.str();
}

struct DeviceSampler::Impl {
  int dim = 2;
  bool general = false;
  int space_dim = 2;
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
};

DeviceSampler::DeviceSampler(const Problem& problem, bool double_precision)
    : DeviceSampler(problem, operator_text(problem), double_precision) {}

DeviceSampler::DeviceSampler(const Problem& problem, const OperatorText& op, bool double_precision)
    : impl_(std::make_unique<Impl>()) {
  impl_->dim = problem.dim();
  impl_->general = !op.poisson_dirichlet(problem.dim());
  impl_->space_dim =
      op.space_dim > 0 && op.space_dim < problem.dim() ? op.space_dim : problem.dim();
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::string source;
  try {
    source = sampler_source(problem, op, double_precision);
  } catch (const std::exception& e) {
    // A domain that cannot describe itself or an expression that cannot be translated: the
    // caller falls back to host batches.
    throw std::runtime_error(std::string("cannot generate the device sampler: ") + e.what());
  }
  const std::vector<char>& cubin = compile(source, prop.major * 10 + prop.minor);
  CUDA_CHECK(cudaLibraryLoadData(&impl_->library, cubin.data(), nullptr, nullptr, 0, nullptr,
                                 nullptr, 0));
  CUDA_CHECK(cudaLibraryGetKernel(&impl_->kernel, impl_->library, "rbfpde_draw_batch"));
}

DeviceSampler::~DeviceSampler() {
  if (impl_ && impl_->library) {
    const cudaError_t status = cudaLibraryUnload(impl_->library);
    if (status != cudaSuccess)
      std::fprintf(stderr, "rbfpde: cudaLibraryUnload failed: %s\n", cudaGetErrorString(status));
  }
}

int DeviceSampler::dim() const { return impl_->dim; }
bool DeviceSampler::general() const { return impl_->general; }
int DeviceSampler::space_dim() const { return impl_->space_dim; }

void DeviceSampler::launch(Stream stream, const std::uint64_t* index, std::uint64_t seed, int n_int,
                           int n_bnd, void* x, void* target, void* normals, const int* halt,
                           int step, const SampledCoefficients* coefficients) const {
  const int rows = n_int + n_bnd;
  if (rows == 0) return;
  if (impl_->general && coefficients == nullptr)
    throw std::logic_error("DeviceSampler::launch: a general operator needs coefficient arrays");
  SampledCoefficients coef = impl_->general ? *coefficients : SampledCoefficients{};
  const unsigned long long* index_arg = reinterpret_cast<const unsigned long long*>(index);
  unsigned long long seed_arg = seed;
  void* args[] = {&index_arg, &seed_arg, &n_int,  &n_bnd,  &x,      &target,     &normals,
                  &halt,      &step,     &coef.a, &coef.b, &coef.c, &coef.alpha, &coef.beta};
  CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(impl_->kernel),
                              dim3((rows + kSamplerThreads - 1) / kSamplerThreads),
                              dim3(kSamplerThreads), args, 0, stream));
}

}  // namespace rbfpde::gpu
