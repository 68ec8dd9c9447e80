// Collocation batches drawn on the device (NVRTC-generated sampler) against the host's own
// definitions: every interior point inside the domain (Domain::contains), boundary points on the
// boundary (distance_to_boundary < 1e-12), f and p equal to muParser's values at those points to
// 1e-12 relative, normals unit and outward; same (seed, index) → the same batch bit for bit, a
// different index → a different batch; boundary points spread over the edges by length. For
// every domain type (the shipped configs plus a ball and a rectangle with `where` entries). And
// the fused gdcg cycle (a CUDA graph) against the CPU backend stepping through the same batch.
// Composites (drawn by rejection on the device) are checked against the host's inside test and
// signed distance, and by the share of their boundary pieces; point clouds draw given points.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "kernels/cuda/common/device_sampler.hpp"
#include "solver/config/config.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

struct Case {
  std::string name;
  Config config;
};

const char* kBallYaml = R"yaml(
name: ball_where
problem:
  domain: { type: ball, centre: [0.5, -0.25, 1], radius: 0.75 }
  equation: { type: poisson, f: "6 + sin(x*y) - z^2" }
  boundary:
    - { type: dirichlet, value: "x^2 + y^2 + z^2", where: "z > 1" }
    - { type: dirichlet, value: "exp(x) * cos(y)" }
)yaml";

const char* kRectangleYaml = R"yaml(
name: rectangle_where
problem:
  domain: { type: rectangle, min: [-1, 0], max: [2, 0.5] }
  equation: { type: poisson, f: "x > 0 ? sqrt(x) : -x^3" }
  boundary:
    - { type: dirichlet, value: "1", where: "abs(y - 0.5) < 1e-9" }
    - { type: dirichlet, value: "x*y - 2" }
)yaml";

const char* kUnionYaml = R"yaml(
name: csg_union
problem:
  domain:
    type: union
    domains:
      - { type: disk, centre: [0, 0], radius: 1 }
      - { type: polygon, vertices: [[0.5, -0.5], [2, -0.5], [2, 0.5], [0.5, 0.5]] }
  equation: { type: poisson, f: "x + y" }
  boundary:
    - { type: dirichlet, value: "x*y" }
)yaml";

const char* kIntersectionYaml = R"yaml(
name: csg_intersection
problem:
  domain:
    type: intersection
    domains:
      - { type: box, min: [0, 0, 0], max: [2, 2, 2] }
      - type: difference
        domains:
          - { type: ball, centre: [1, 1, 0], radius: 1.2 }
          - { type: ball, centre: [1, 1, 0.6], radius: 0.3 }
  equation: { type: poisson, f: "x - z" }
  boundary:
    - { type: dirichlet, value: "x*y*z", where: "z > 0.5" }
    - { type: dirichlet, value: "1" }
)yaml";

std::vector<Case> cases() {
  std::vector<Case> out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(RBFPDE_SOURCE_DIR) + "/configs"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  // Problems with time are sampled on the host (the device sampler refuses them: solve.cpp).
  for (const auto& f : files) {
    Config config = load_config(f.string());
    if (!config.problem.time) out.push_back({f.stem().string(), std::move(config)});
  }
  out.push_back({"ball_where", load_config_text(kBallYaml, "ball_where.yaml")});
  out.push_back({"rectangle_where", load_config_text(kRectangleYaml, "rectangle_where.yaml")});
  out.push_back({"csg_union", load_config_text(kUnionYaml, "csg_union.yaml")});
  out.push_back({"csg_intersection", load_config_text(kIntersectionYaml, "csg_intersection.yaml")});
  return out;
}

double extent(const Domain& d) {
  double lo[3], hi[3], e = 0;
  d.bounding_box(lo, hi);
  for (int k = 0; k < d.dim(); ++k) e = std::max(e, hi[k] - lo[k]);
  return e;
}

bool close(double gpu, double host, double tol) {
  return std::abs(gpu - host) <= tol * std::max(1.0, std::abs(host));
}

template <class T>
std::unique_ptr<RbfBackend<T>> sampler_backend(const Problem& problem) {
  BackendOptions options;
  options.dim = problem.dim();
  auto be = make_cuda_backend<T>(options);
  be->set_problem(problem);
  return be;
}

void check_batch(const std::string& name, const Problem& problem, const CollocationBatch& b,
                 std::size_t n_int, std::size_t n_bnd) {
  const int d = problem.dim();
  const Domain& domain = problem.domain();
  const double size = extent(domain);
  ASSERT_EQ(b.dim, d) << name;
  ASSERT_EQ(b.f.size(), n_int) << name;
  ASSERT_EQ(b.p.size(), n_bnd) << name;
  ASSERT_EQ(b.interior.size(), n_int * d) << name;
  ASSERT_EQ(b.boundary.size(), n_bnd * d) << name;
  ASSERT_EQ(b.normals.size(), n_bnd * d) << name;
  int bad_inside = 0, bad_f = 0, bad_on = 0, bad_p = 0, bad_unit = 0, bad_out = 0;
  for (std::size_t i = 0; i < n_int; ++i) {
    const double* x = &b.interior[i * d];
    bad_inside += !domain.contains(x);
    bad_f += !close(b.f[i], problem.f()(x), 1e-12);
  }
  const double h = 1e-6 * size;
  for (std::size_t j = 0; j < n_bnd; ++j) {
    const double* x = &b.boundary[j * d];
    const double* n = &b.normals[j * d];
    bad_on += !(domain.distance_to_boundary(x) < 1e-12 * std::max(1.0, size));
    const int entry = problem.boundary_entry(x);
    bad_p += entry < 0 || !close(b.p[j], problem.boundary()[entry].value(x), 1e-12);
    double norm2 = 0, out[3], in[3];
    for (int k = 0; k < d; ++k) {
      norm2 += n[k] * n[k];
      out[k] = x[k] + h * n[k];
      in[k] = x[k] - h * n[k];
    }
    bad_unit += !(std::abs(std::sqrt(norm2) - 1) < 1e-12);
    bad_out += domain.contains(out) || !domain.contains(in);
  }
  EXPECT_EQ(bad_inside, 0) << name << ": interior points outside the domain";
  EXPECT_EQ(bad_f, 0) << name << ": f differs from muParser";
  EXPECT_EQ(bad_on, 0) << name << ": boundary points off the boundary";
  EXPECT_EQ(bad_p, 0) << name << ": boundary values differ from muParser";
  EXPECT_EQ(bad_unit, 0) << name << ": normals not unit";
  EXPECT_EQ(bad_out, 0) << name << ": normals not outward";
}

TEST(CudaDeviceSampler, BatchesMatchTheProblemOnEveryDomainDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  std::vector<std::string> types;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Problem problem = Problem::build(c.config.problem);
    types.push_back(problem.domain().type());
    auto be = sampler_backend<double>(problem);
    ASSERT_TRUE(be->draws_batches());
    const std::size_t n_int = 1037, n_bnd = 389;  // not multiples of the block size
    be->draw_batch(42, 3, n_int, n_bnd);
    check_batch(c.name, problem, be->batch(), n_int, n_bnd);
  }
  for (const char* t : {"rectangle", "box", "disk", "ball", "polygon", "union", "difference",
                        "intersection", "points"})
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << "no case for " << t;
}

TEST(CudaDeviceSampler, SameSeedAndIndexSameBatchOtherIndexOtherBatch) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Problem problem = Problem::build(c.config.problem);
    auto first = sampler_backend<double>(problem);
    auto second = sampler_backend<double>(problem);
    first->draw_batch(7, 11, 300, 100);
    second->draw_batch(7, 10, 300, 100);
    const CollocationBatch other = second->batch();
    second->draw_batch(7, 11, 300, 100);
    const CollocationBatch a = first->batch(), b = second->batch();
    EXPECT_TRUE(bitwise_equal(a.interior, b.interior));
    EXPECT_TRUE(bitwise_equal(a.boundary, b.boundary));
    EXPECT_TRUE(bitwise_equal(a.f, b.f));
    EXPECT_TRUE(bitwise_equal(a.p, b.p));
    EXPECT_TRUE(bitwise_equal(a.normals, b.normals));
    EXPECT_FALSE(bitwise_equal(a.interior, other.interior));
    EXPECT_FALSE(bitwise_equal(a.boundary, other.boundary));
    first->draw_batch(8, 11, 300, 100);  // another seed
    EXPECT_FALSE(bitwise_equal(a.interior, first->batch().interior));
  }
}

TEST(CudaDeviceSampler, FloatBatchIsTheDoubleBatchRounded) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/lshape.yaml").problem);
  auto d = sampler_backend<double>(problem);
  auto f = sampler_backend<float>(problem);
  d->draw_batch(5, 2, 500, 200);
  f->draw_batch(5, 2, 500, 200);
  const CollocationBatch bd = d->batch(), bf = f->batch();
  EXPECT_LE(relative_difference(bf.interior, bd.interior), 1e-7);
  EXPECT_LE(relative_difference(bf.boundary, bd.boundary), 1e-7);
  EXPECT_LE(relative_difference(bf.f, bd.f), 1e-6);
  EXPECT_LE(relative_difference(bf.p, bd.p), 1e-6);
}

// Boundary points per edge (polygon) or face (box) in proportion to its measure: with n points
// the count of a part of fraction q is binomial, so |observed − q| < 5·√(q(1−q)/n).
TEST(CudaDeviceSampler, BoundaryPointsSpreadByEdgeLength) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/lshape.yaml").problem);
  const DomainGeometry g = problem.domain().geometry();
  const std::size_t nv = g.vertices.size(), n = 40000;
  auto be = sampler_backend<double>(problem);
  be->draw_batch(3, 0, 1, n);
  const CollocationBatch b = be->batch();
  std::vector<double> length(nv), count(nv, 0.0);
  double perimeter = 0;
  for (std::size_t e = 0; e < nv; ++e) {
    const auto& a = g.vertices[e];
    const auto& c = g.vertices[(e + 1) % nv];
    length[e] = std::hypot(c[0] - a[0], c[1] - a[1]);
    perimeter += length[e];
  }
  for (std::size_t j = 0; j < n; ++j) {
    const double* x = &b.boundary[2 * j];
    std::size_t best = 0;
    double best_d = INFINITY;
    for (std::size_t e = 0; e < nv; ++e) {
      const auto& a = g.vertices[e];
      const auto& c = g.vertices[(e + 1) % nv];
      const double ex = c[0] - a[0], ey = c[1] - a[1];
      const double t = std::clamp(((x[0] - a[0]) * ex + (x[1] - a[1]) * ey) / (ex * ex + ey * ey),
                                  0.0, 1.0);
      const double dist = std::hypot(x[0] - a[0] - t * ex, x[1] - a[1] - t * ey);
      if (dist < best_d) best_d = dist, best = e;
    }
    count[best] += 1;
  }
  for (std::size_t e = 0; e < nv; ++e) {
    const double q = length[e] / perimeter;
    EXPECT_NEAR(count[e] / double(n), q, 5 * std::sqrt(q * (1 - q) / double(n))) << "edge " << e;
  }
  // Interior points by area: the fraction in the lower half-strip [0,1]×[0,0.5] is 2/3 of the L.
  be->draw_batch(3, 1, n, 1);
  const CollocationBatch bi = be->batch();
  double lower = 0;
  for (std::size_t i = 0; i < n; ++i) lower += bi.interior[2 * i + 1] < 0.5;
  EXPECT_NEAR(lower / double(n), 2.0 / 3.0, 5 * std::sqrt(2.0 / 9.0 / double(n)));
}

// The fused cycle (one CUDA graph: draw, GD step, assembly, CG) against the CPU reference run
// step by step on the batch the GPU drew. Four CG iterations: beyond ~10 CG amplifies rounding
// differences chaotically (see the parity tests), so that is where the weights are compared.
template <class T>
void check_fused_cycle(int m, double tol) {
  const Config config =
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/poisson2d_seed.yaml");
  const Problem problem = Problem::build(config.problem);
  BackendOptions options;
  options.dim = 2;
  auto gpu = make_cuda_backend<T>(options);
  auto cpu = make_cpu_backend<T>(options);
  gpu->set_problem(problem);
  const RbfParameters<T> params = random_parameters<T>(2, m, 9);
  gpu->set_parameters(params);
  gpu->draw_batch(1, 0, 201, 53);
  typename RbfBackend<T>::GdcgCycle c;
  c.draw = true;
  c.seed = 1;
  c.n_interior = 201;
  c.n_boundary = 53;
  c.gd_steps = 1;
  c.learning_rate = T(1e-3);
  c.cg_iterations = 4;
  c.cg_tolerance = T(0);
  for (std::uint64_t index = 1; index <= 3; ++index) {
    // The CPU starts where the GPU is, on the batch the GPU's cycle draws.
    cpu->set_parameters(gpu->parameters());
    c.batch_index = index;
    const LossParts loss_gpu = gpu->gdcg_cycle(c);
    cpu->set_batch(gpu->batch());
    const LossParts loss_cpu = cpu->gd_steps(1, c.learning_rate);
    cpu->solve_weights_cg(4, T(0));
    EXPECT_LE(relative_difference(loss_gpu.loss, loss_cpu.loss), tol) << "cycle " << index;
    EXPECT_LE(relative_difference(flatten(gpu->parameters()), flatten(cpu->parameters())), tol)
        << "cycle " << index;
    std::vector<T> e_gpu, b_gpu, e_cpu, b_cpu;
    gpu->residual_vectors(e_gpu, b_gpu);
    cpu->residual_vectors(e_cpu, b_cpu);
    EXPECT_LE(relative_difference(e_gpu, e_cpu), tol) << "cycle " << index;
    EXPECT_LE(relative_difference(b_gpu, b_cpu), tol) << "cycle " << index;
  }
  // Same index again: the same batch (the graph reads the index the host wrote).
  const CollocationBatch third = gpu->batch();
  gpu->draw_batch(1, 3, 201, 53);
  EXPECT_TRUE(bitwise_equal(third.interior, gpu->batch().interior));
}

TEST(CudaFusedCycle, MatchesCpuStepByStepDouble) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int m : {37, 64, 129}) check_fused_cycle<double>(m, 1e-11);
}
TEST(CudaFusedCycle, MatchesCpuStepByStepFloat) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for (int m : {37, 64, 129}) check_fused_cycle<float>(m, 1e-4);
}

// The square minus four disks (configs/square_holes_dirichlet.yaml): boundary points on the holes
// in proportion to the holes' share of the boundary length, their normals towards the holes'
// centres; interior points in a hole-free corner in proportion to its share of the area.
TEST(CudaDeviceSampler, CompositeDrawsSpreadByMeasure) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/square_holes_dirichlet.yaml")
          .problem);
  const DomainGeometry g = problem.domain().geometry();
  ASSERT_EQ(g.parts.size(), 5u);
  const std::size_t n = 40000;
  auto be = sampler_backend<double>(problem);
  be->draw_batch(9, 4, n, n);
  const CollocationBatch b = be->batch();
  const double pi = 3.14159265358979323846;
  const double holes = 4 * 2 * pi * 0.1, q = holes / (4 + holes);
  double on_holes = 0;
  int bad_normals = 0;
  for (std::size_t j = 0; j < n; ++j) {
    const double* x = &b.boundary[2 * j];
    const double* m = &b.normals[2 * j];
    for (std::size_t h = 1; h < 5; ++h) {
      const double cx = g.parts[h].centre[0], cy = g.parts[h].centre[1];
      if (std::abs(std::hypot(x[0] - cx, x[1] - cy) - 0.1) > 1e-9) continue;
      on_holes += 1;
      bad_normals += std::abs(m[0] - (cx - x[0]) / 0.1) > 1e-9 || std::abs(m[1] - (cy - x[1]) / 0.1) > 1e-9;
    }
  }
  EXPECT_NEAR(on_holes / double(n), q, 5 * std::sqrt(q * (1 - q) / double(n)));
  EXPECT_EQ(bad_normals, 0);
  const double corner = 0.04 / (1 - 4 * pi * 0.01);
  double in_corner = 0;
  for (std::size_t i = 0; i < n; ++i) in_corner += b.interior[2 * i] < 0.2 && b.interior[2 * i + 1] < 0.2;
  EXPECT_NEAR(in_corner / double(n), corner, 5 * std::sqrt(corner * (1 - corner) / double(n)));
  check_batch("square_holes_dirichlet", problem, b, n, n);
}

// A point cloud draws its given points (and their normals) only.
TEST(CudaDeviceSampler, PointCloudDrawsGivenPoints) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  const Problem problem = Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/disk_cloud.yaml").problem);
  const DomainGeometry g = problem.domain().geometry();
  auto be = sampler_backend<double>(problem);
  const std::size_t n_int = 3001, n_bnd = 1003;
  be->draw_batch(2, 5, n_int, n_bnd);
  const CollocationBatch b = be->batch();
  std::map<std::pair<double, double>, std::size_t> given;
  for (std::size_t i = 0; i < g.points.size() / 2; ++i) given[{g.points[2 * i], g.points[2 * i + 1]}] = i;
  for (std::size_t i = 0; i < n_int; ++i) {
    const auto it = given.find({b.interior[2 * i], b.interior[2 * i + 1]});
    ASSERT_NE(it, given.end()) << "interior draw " << i;
    EXPECT_LT(it->second, g.boundary_begin);
  }
  for (std::size_t j = 0; j < n_bnd; ++j) {
    const auto it = given.find({b.boundary[2 * j], b.boundary[2 * j + 1]});
    ASSERT_NE(it, given.end()) << "boundary draw " << j;
    ASSERT_GE(it->second, g.boundary_begin);
    const std::size_t k = it->second - g.boundary_begin;
    EXPECT_EQ(b.normals[2 * j], g.normals[2 * k]);
    EXPECT_EQ(b.normals[2 * j + 1], g.normals[2 * k + 1]);
  }
  check_batch("disk_cloud", problem, b, n_int, n_bnd);
}

// The generated source of a composite: one inside test per primitive, the program over them, and the
// composite's stride of the random stream (no device needed).
TEST(CudaDeviceSampler, CompositeSourceHasTheTreeAndItsStride) {
  const Problem holes = Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/square_holes_dirichlet.yaml")
          .problem);
  const std::string source = gpu::sampler_source(holes, true);
  // The square minus four disks: leaf 0 minus leaves 1 to 4, folded from the left.
  EXPECT_NE(source.find("kProgram[] = {0, 1, -2, 2, -2, 3, -2, 4, -2}"), std::string::npos);
  EXPECT_NE(source.find("case 4: return shape_contains(leaf4(), p);"), std::string::npos);
  EXPECT_NE(source.find("kDrawStride = 16777216ull"), std::string::npos);
  const Problem cloud = Problem::build(
      load_config(std::string(RBFPDE_SOURCE_DIR) + "/configs/disk_cloud.yaml").problem);
  const std::string cloud_source = gpu::sampler_source(cloud, true);
  EXPECT_NE(cloud_source.find("kInterior[8000]"), std::string::npos);
  EXPECT_NE(cloud_source.find("kDrawStride = 16ull"), std::string::npos);
}

}  // namespace
}  // namespace rbfpde
