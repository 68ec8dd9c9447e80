// The generated sampler (sampler_source.hpp): one thread per point, everything in double. The
// domain's formulas are the host's (problems/domain_shapes.hpp, NVRTC includes it); the source adds
// the per-problem glue: the primitives' shapes as constants, how many Philox uniforms each draw
// takes, and
//   union / difference / intersection: drawn by rejection on the device, interior from the
//             bounding box, boundary from the primitives' boundaries, membership by the
//             composite's program (composite_code below);
//   points    the cloud compiled in as constant arrays; a point is a uniform index into them
//             (cloud_code below; clouds over 20000 points are left to the host);
//   targets   f at interior points, the first boundary entry whose `where` holds at boundary
//             points (NaN when none, as Problem::sample), evaluated at the point as stored (T).
//   napkin math: per point ≈ 2–4 Philox blocks (≈ 40 integer ops each) + the user expression; at
//   18432 points a few µs, launch-bound.
#include "kernels/sampler_source.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "problems/domain_shapes.hpp"
#include "problems/expression_codegen.hpp"

namespace rbfpde::gpu {
namespace {

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

// A point's draws for one batch must fit in its stride of the Philox stream (sampler_source.hpp):
// a primitive uses at most 8 32-bit draws; a composite proposal at most 12 (4 to pick a
// primitive, ≤ 8 on it), so 2²⁰ proposals need < 2²⁴.
constexpr int kCompositeMaxTries = 1 << 20;
constexpr unsigned long long kPrimitiveStride = 16;
constexpr unsigned long long kCompositeStride = 1ull << 24;
// A point cloud is compiled into the kernel as constant arrays up to this many points; a larger
// one makes the constructor throw, and the host samples (solve.cpp falls back on runtime_error).
constexpr std::size_t kMaxCloudPoints = 20000;

// The fixed part of every generated sampler: the shared formulas (domain_shapes.hpp, handed to
// NVRTC with the headers it includes), Philox uniforms in (0, 1], and a primitive's point drawn
// with the number of uniforms its formula takes on the device (interior_draws, boundary_draws).
const char* const kSamplerPrelude = R"cuda(#include <curand_kernel.h>
#include "problems/domain_shapes.hpp"
using namespace rbfpde;
typedef curandStatePhilox4_32_10_t Rng;
__device__ void draw_uniforms(Rng* st, double* u, int count) {
  for (int k = 0; k < count; k += 2) {
    const double2 v = curand_uniform2_double(st);
    u[k] = v.x;
    if (k + 1 < count) u[k + 1] = v.y;
  }
}
template <class S> __device__ void draw_interior(const S& shape, Rng* st, double* p) {
  double u[kMaxShapeDraws];
  draw_uniforms(st, u, interior_draws(shape));
  interior_point(shape, u, p);
}
template <class S> __device__ void draw_boundary(const S& shape, Rng* st, double* p, double* n) {
  double u[kMaxShapeDraws];
  draw_uniforms(st, u, boundary_draws(shape));
  boundary_point(shape, u, p, n);
}
__device__ __forceinline__ bool holds(double v) { return v != 0.0 && !isnan(v); }
)cuda";

template <class V>
std::string int_array(const std::vector<V>& values) {
  std::string r = "{";
  for (std::size_t i = 0; i < values.size(); ++i) r += (i ? ", " : "") + std::to_string(values[i]);
  return r + "}";
}

std::string array3(const double* v) { return array_literal({v[0], v[1], v[2]}); }

std::string box_code(int dim, const double* lo, const double* hi, const std::string& name) {
  const BoxShape b = make_box_shape(dim, lo, hi);
  return "__device__ BoxShape " + name + "() { return BoxShape{" + std::to_string(b.dim) + ", " +
         array3(b.lo) + ", " + array3(b.hi) + ", " + array3(b.face) + ", " + literal(b.total) +
         ", " + literal(b.tol) + "}; }\n";
}

// A device function `name()` returning the primitive's shape (problems/domain_shapes.hpp), built
// on the host by the same constructors as the host domains and compiled in as constants.
std::string shape_code(const DomainGeometry& g, const std::string& name) {
  std::ostringstream s;
  if (g.type == "rectangle" || g.type == "box") {
    s << box_code(g.dim, g.lo.data(), g.hi.data(), name);
  } else if (g.type == "disk" || g.type == "ball") {
    const BallShape b = make_ball_shape(g.dim, g.centre.data(), g.radius);
    s << "__device__ BallShape " << name << "() { return BallShape{" << b.dim << ", "
      << array3(b.centre) << ", " << literal(b.radius) << ", " << literal(b.tol) << "}; }\n";
  } else if (g.type == "polygon") {
    if (g.vertices.size() < 3 || g.triangles.empty())
      throw std::runtime_error("polygon without a triangulation");
    const PolygonArrays p(g.vertices, g.triangles);
    const PolygonShape shape = p.shape();
    s << "__device__ const double " << name << "_xy[] = " << array_literal(p.xy) << ";\n"
      << "__device__ const double " << name << "_perimeter[] = " << array_literal(p.perimeter)
      << ";\n"
      << "__device__ const int " << name << "_corners[] = " << int_array(p.corners) << ";\n"
      << "__device__ const double " << name << "_area[] = " << array_literal(p.area) << ";\n"
      << "__device__ PolygonShape " << name << "() { return PolygonShape{" << shape.vertices << ", "
      << name << "_xy, " << name << "_perimeter, " << shape.triangles << ", " << name
      << "_corners, " << name << "_area, " << literal(p.tol) << "}; }\n";
  } else {
    throw std::runtime_error("the device sampler does not know domain type '" + g.type + "'");
  }
  return s.str();
}

// A composite drawn by rejection on the device, by the host's method (problems/csg.cpp, with the
// composite's program and boundary test from domain_shapes.hpp):
//   interior: uniform in the bounding box until the primitives' membership, combined by the
//     program, says inside (boolean membership, so points on a hole's rim count as outside: a set
//     of measure zero);
//   boundary: a primitive by its whole boundary measure, a uniform point on it, kept by
//     csg_boundary_accept.
// Failure mode: a point still unaccepted after 2²⁰ proposals is written as NaN (with a NaN
// normal), so that the batch's residuals are NaN and training reports divergence rather than
// train on a wrong point. The host refuses composites that accept less than 10⁻³ of proposals
// (problems/csg.cpp), which bounds that chance by (1 − 10⁻³)^(2²⁰) < 10⁻⁴⁵⁰ per point; a
// proposal costs a few dozen flops per primitive, so even 10³ of them per point stay cheap.
const char* const kCompositeSampler = R"cuda(
__device__ void set_nan(double* v) {
  for (int k = 0; k < kDim; ++k) v[k] = __longlong_as_double(0x7ff8000000000000ll);
}
__device__ void sample_interior(Rng* st, double* p) {
  const BoxShape box = bounding_box();
  for (int t = 0; t < kMaxTries; ++t) {
    double u[3];
    draw_uniforms(st, u, kDim);
    box_interior_point(box, u, p);
    if (csg_evaluate<bool>(kProgram, kProgramLength, [&](int j) { return leaf_contains(j, p); }))
      return;
  }
  set_nan(p);
}
__device__ void sample_boundary(Rng* st, double* p, double* n) {
  const CsgShape shape{kProgram, kProgramLength, kLeaves, kLeafCumulative, kDim, kProbe};
  for (int t = 0; t < kMaxTries; ++t) {
    double u[1];
    draw_uniforms(st, u, 1);
    if (csg_propose_boundary(
            shape, u[0], [&](int leaf, double* x, double* m) { leaf_boundary(leaf, st, x, m); },
            [](int j, const double* x) { return leaf_contains(j, x); }, p, n))
      return;
  }
  set_nan(p);
  set_nan(n);
}
)cuda";

std::string composite_code(const DomainGeometry& g) {
  std::vector<const DomainGeometry*> leaves;
  const std::vector<int> program = csg_program(g, leaves);
  const std::size_t nl = leaves.size();
  std::ostringstream s;
  std::vector<double> cumulative{0.0};
  for (std::size_t i = 0; i < nl; ++i) {
    s << shape_code(*leaves[i], "leaf" + std::to_string(i));
    cumulative.push_back(cumulative.back() + primitive_boundary_measure(*leaves[i]));
  }
  double diag2 = 0;
  for (int k = 0; k < g.dim; ++k) diag2 += (g.hi[k] - g.lo[k]) * (g.hi[k] - g.lo[k]);
  s << "__device__ bool leaf_contains(int j, const double* p) {\n  switch (j) {\n";
  for (std::size_t i = 0; i < nl; ++i)
    s << "    case " << i << ": return shape_contains(leaf" << i << "(), p);\n";
  s << "  }\n  return false;\n}\n"
    << "__device__ void leaf_boundary(int j, Rng* st, double* p, double* n) {\n  switch (j) {\n";
  for (std::size_t i = 0; i < nl; ++i)
    s << "    case " << i << ": draw_boundary(leaf" << i << "(), st, p, n); return;\n";
  s << "  }\n}\n"
    << box_code(g.dim, g.lo.data(), g.hi.data(), "bounding_box")
    << "__device__ const int kDim = " << g.dim << ";\n"
    << "__device__ const int kLeaves = " << nl << ";\n"
    << "__device__ const int kMaxTries = " << kCompositeMaxTries << ";\n"
    << "__device__ const double kProbe = " << literal(1e-9 * std::sqrt(diag2)) << ";\n"
    << "__device__ const double kLeafCumulative[] = " << array_literal(cumulative) << ";\n"
    << "__device__ const int kProgramLength = " << program.size() << ";\n"
    << "__device__ const int kProgram[] = " << int_array(program) << ";\n"
    << kCompositeSampler;
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
    << "__device__ const double kNormals[" << nb * d << "] = " << array_literal(g.normals) << ";\n"
    << "__device__ int pick(Rng* st, int count) {\n"
    << "  double u[1];\n"
    << "  draw_uniforms(st, u, 1);\n"
    << "  return int(pick_index(u[0], count));\n"
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
// stride kDrawStride of a point's Philox stream per batch (sampler_source.hpp).
std::string domain_code(const DomainGeometry& g) {
  const bool composite = g.type == "union" || g.type == "difference" || g.type == "intersection";
  std::string s = "__device__ const unsigned long long kDrawStride = " +
                  std::to_string(composite ? kCompositeStride : kPrimitiveStride) + "ull;\n";
  if (composite) return s + composite_code(g);
  if (g.type == "points") return s + cloud_code(g);
  return s + shape_code(g, "domain_shape") +
         "__device__ void sample_interior(Rng* st, double* p) {\n"
         "  draw_interior(domain_shape(), st, p);\n}\n"
         "__device__ void sample_boundary(Rng* st, double* p, double* n) {\n"
         "  draw_boundary(domain_shape(), st, p, n);\n}\n";
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

}  // namespace

bool OperatorText::poisson_dirichlet(int dim) const {
  if ((space_dim != 0 && space_dim != dim) || !a.empty() || !c.empty() || !b.empty()) return false;
  for (const Boundary& e : boundary)
    if (!e.alpha.empty() || !e.beta.empty()) return false;
  return true;
}

OperatorText operator_text(const Problem& problem) {
  if (problem.has_time())
    throw std::runtime_error(
        "the device sampler does not draw space-time batches (the initial "
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
    << "typedef " << (double_precision ? "double" : "float") << " T;\n"
    << kSamplerPrelude;
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
    << "                                          : (1ull << 32) + (unsigned long long)(i - "
       "n_int);\n"
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

}  // namespace rbfpde::gpu
