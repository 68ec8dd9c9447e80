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
//   targets   f at interior points, the first boundary entry whose `where` holds at boundary
//             points (NaN when none, as Problem::sample), evaluated at the point as stored (T).
//   napkin math: per point ≈ 2–4 Philox blocks (≈ 40 integer ops each) + the user expression; at
//   18432 points a few µs, launch-bound.
#include "kernels/cuda/common/device_sampler.hpp"

#include <cuda_runtime.h>
#include <nvrtc.h>

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

// What the generator needs of a domain.
struct Geometry {
  std::string type;
  int dim = 2;
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  double centre[3] = {0, 0, 0}, radius = 0;
  std::vector<std::array<double, 2>> vertices;  // counter-clockwise
  std::vector<std::array<int, 3>> triangles;    // indices into vertices
};

Geometry geometry_of(const Domain& domain) {
  const DomainGeometry g = domain.geometry();
  Geometry out;
  out.type = g.type;
  out.dim = g.dim;
  domain.bounding_box(out.lo, out.hi);
  for (int k = 0; k < out.dim && k < int(g.lo.size()) && k < int(g.hi.size()); ++k)
    out.lo[k] = g.lo[k], out.hi[k] = g.hi[k];
  for (int k = 0; k < out.dim && k < int(g.centre.size()); ++k) out.centre[k] = g.centre[k];
  out.radius = g.radius;
  out.vertices = g.vertices;
  out.triangles = g.triangles;
  return out;
}

// Device functions sample_interior(st, p) and sample_boundary(st, p, n) for the domain.
std::string domain_code(const Geometry& g) {
  std::ostringstream s;
  const int d = g.dim;
  if (g.type == "rectangle" || g.type == "box") {
    std::vector<double> lo(g.lo, g.lo + d), hi(g.hi, g.hi + d), face_cdf;
    double total = 0;
    for (int k = 0; k < d; ++k) {
      double m = 1;
      for (int j = 0; j < d; ++j)
        if (j != k) m *= hi[j] - lo[j];
      total += m;  // lower face of axis k
      face_cdf.push_back(total);
      total += m;  // upper face
      face_cdf.push_back(total);
    }
    for (double& c : face_cdf) c /= total;
    face_cdf.back() = 1.0;
    s << "__device__ const double kLo[" << d << "] = " << array_literal(lo) << ";\n"
      << "__device__ const double kHi[" << d << "] = " << array_literal(hi) << ";\n"
      << "__device__ const double kFaceCdf[" << 2 * d << "] = " << array_literal(face_cdf)
      << ";\n"
      << "__device__ void sample_interior(Rng* st, double* p) {\n"
      << "  double u[" << d << "];\n"
      << "  draw_uniforms<" << d << ">(st, u);\n"
      << "  for (int k = 0; k < " << d << "; ++k) p[k] = kLo[k] + (kHi[k] - kLo[k]) * u[k];\n"
      << "}\n"
      << "__device__ void sample_boundary(Rng* st, double* p, double* n) {\n"
      << "  double u[" << d + 1 << "];\n"
      << "  draw_uniforms<" << d + 1 << ">(st, u);\n"
      << "  int face = 0;\n"
      << "  while (face < " << 2 * d - 1 << " && u[0] > kFaceCdf[face]) ++face;\n"
      << "  const int axis = face / 2; const bool upper = (face & 1) != 0;\n"
      << "  for (int k = 0; k < " << d << "; ++k) {\n"
      << "    p[k] = k == axis ? (upper ? kHi[k] : kLo[k]) : kLo[k] + (kHi[k] - kLo[k]) * u[k + 1];\n"
      << "    n[k] = k == axis ? (upper ? 1.0 : -1.0) : 0.0;\n"
      << "  }\n"
      << "}\n";
  } else if (g.type == "disk" || g.type == "ball") {
    std::vector<double> c(g.centre, g.centre + d);
    s << "__device__ const double kCentre[" << d << "] = " << array_literal(c) << ";\n"
      << "__device__ const double kRadius = " << literal(g.radius) << ";\n"
      << "__device__ void direction(const double* u, double* e) {\n";
    if (d == 2) {
      s << "  double sn, cs; sincospi(2.0 * u[0], &sn, &cs); e[0] = cs; e[1] = sn;\n";
    } else {
      s << "  const double z = 2.0 * u[1] - 1.0; const double r = sqrt(fmax(0.0, 1.0 - z * z));\n"
        << "  double sn, cs; sincospi(2.0 * u[0], &sn, &cs); e[0] = r * cs; e[1] = r * sn; e[2] = z;\n";
    }
    s << "}\n"
      << "__device__ void sample_interior(Rng* st, double* p) {\n"
      << "  double u[" << d + 1 << "], e[" << d << "];\n"
      << "  draw_uniforms<" << d + 1 << ">(st, u);\n"
      << "  direction(u + 1, e);\n"
      << "  const double rho = kRadius * " << (d == 2 ? "sqrt(u[0])" : "cbrt(u[0])") << ";\n"
      << "  for (int k = 0; k < " << d << "; ++k) p[k] = kCentre[k] + rho * e[k];\n"
      << "}\n"
      << "__device__ void sample_boundary(Rng* st, double* p, double* n) {\n"
      << "  double u[" << d << "], e[" << d << "];\n"
      << "  draw_uniforms<" << d << ">(st, u);\n"
      << "  direction(u, e);\n"
      << "  for (int k = 0; k < " << d << "; ++k) { p[k] = kCentre[k] + kRadius * e[k]; n[k] = e[k]; }\n"
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
    std::vector<double> ta, tb, tc;
    for (const auto& t : g.triangles) {
      const auto& a = v[t[0]];
      const auto& b = v[t[1]];
      const auto& c = v[t[2]];
      area += 0.5 * std::abs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
      tri_cdf.push_back(area);
      ta.push_back(double(t[0])), tb.push_back(double(t[1])), tc.push_back(double(t[2]));
    }
    for (double& c : edge_cdf) c /= perimeter;
    for (double& c : tri_cdf) c /= area;
    edge_cdf.back() = tri_cdf.back() = 1.0;
    auto int_array = [](const std::vector<double>& values) {
      std::string r = "{";
      for (std::size_t i = 0; i < values.size(); ++i)
        r += (i ? ", " : "") + std::to_string(int(values[i]));
      return r + "}";
    };
    s << "__device__ const double kVx[" << nv << "] = " << array_literal(vx) << ";\n"
      << "__device__ const double kVy[" << nv << "] = " << array_literal(vy) << ";\n"
      << "__device__ const double kEdgeCdf[" << nv << "] = " << array_literal(edge_cdf) << ";\n"
      << "__device__ const double kTriCdf[" << nt << "] = " << array_literal(tri_cdf) << ";\n"
      << "__device__ const int kTa[" << nt << "] = " << int_array(ta) << ";\n"
      << "__device__ const int kTb[" << nt << "] = " << int_array(tb) << ";\n"
      << "__device__ const int kTc[" << nt << "] = " << int_array(tc) << ";\n"
      << "__device__ void sample_interior(Rng* st, double* p) {\n"
      << "  double u[3];\n"
      << "  draw_uniforms<3>(st, u);\n"
      << "  int t = 0;\n"
      << "  while (t < " << nt - 1 << " && u[0] > kTriCdf[t]) ++t;\n"
      << "  double a = u[1], b = u[2];\n"
      << "  if (a + b > 1.0) { a = 1.0 - a; b = 1.0 - b; }\n"
      << "  const int i0 = kTa[t], i1 = kTb[t], i2 = kTc[t];\n"
      << "  p[0] = kVx[i0] + a * (kVx[i1] - kVx[i0]) + b * (kVx[i2] - kVx[i0]);\n"
      << "  p[1] = kVy[i0] + a * (kVy[i1] - kVy[i0]) + b * (kVy[i2] - kVy[i0]);\n"
      << "}\n"
      << "__device__ void sample_boundary(Rng* st, double* p, double* n) {\n"
      << "  double u[2];\n"
      << "  draw_uniforms<2>(st, u);\n"
      << "  int e = 0;\n"
      << "  while (e < " << nv - 1 << " && u[0] > kEdgeCdf[e]) ++e;\n"
      << "  const int i0 = e, i1 = e + 1 == " << nv << " ? 0 : e + 1;\n"
      << "  const double ex = kVx[i1] - kVx[i0], ey = kVy[i1] - kVy[i0];\n"
      << "  const double len = sqrt(ex * ex + ey * ey);\n"
      << "  const double s = u[1];\n"
      << "  p[0] = kVx[i0] + s * ex; p[1] = kVy[i0] + s * ey;\n"
      << "  n[0] = ey / len; n[1] = -ex / len;\n"
      << "}\n";
  } else {
    throw std::runtime_error("the device sampler does not know domain type '" + g.type + "'");
  }
  return s.str();
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
  OperatorText op;
  op.f = problem.f().text();
  for (const BoundaryCondition& bc : problem.boundary()) {
    OperatorText::Boundary e;
    e.value = bc.value.text();
    if (!bc.everywhere) e.where = bc.where.text();
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
  const Geometry g = geometry_of(problem.domain());
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
    << "  curand_init(seed, sub, 16ull * index[0], &st);\n"
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
