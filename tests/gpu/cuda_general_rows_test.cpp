// The CUDA backend's general rows (a·Δₛu + b·∇u + c·u = f inside, α·u + β·∂u/∂n = p on the
// boundary) against a plain host evaluation of the same rows from kernels/rbf_math.hpp
// (general_rows_support.hpp), in double, on random batches whose sizes are not multiples of the
// kernels' block sizes, in 2D, 3D, 3D with Δ over two coordinates and 4D (3D and time):
// residuals and loss, the gradient (= JᵀR), one GD step, the LM system JᵀJ and JᵀR, four CG
// iterations from the same start, the direct solve (its normal equations), the QR solve and
// variable projection's step, evaluate with Δₛ and evaluate_gradient, and the fused cycle
// switching between general and Poisson batches. Tolerance 1e-12 where the two evaluate the same
// formulas in another order (as the Poisson parity tests); the solves as stated at each.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "kernels/backend.hpp"
#include "tests/gpu/general_rows_support.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace rbfpde {
namespace {

using namespace gpu_test;

constexpr double kPenalty = 100.0;
constexpr double kTol = 1e-12;

// Every case of the parity tests, and 4D with Δ over the first three coordinates.
std::vector<GeneralCase> cases() {
  std::vector<GeneralCase> out(std::begin(kGeneralCases), std::end(kGeneralCases));
  out.push_back({4, 3, 45});
  return out;
}

struct Case {
  CollocationBatch batch;
  RbfParameters<double> params;
  std::unique_ptr<RbfBackend<double>> gpu;
  HostRows host;
  Case(const GeneralCase& c, unsigned seed = 1) {
    BackendOptions options;
    options.dim = c.dim;
    options.penalty = kPenalty;
    options.min_width = 0.05;
    options.laplacian_dims = c.space_dim;
    gpu = make_cuda_backend<double>(options);
    batch = general_batch(c.dim, c.space_dim, kInterior, kBoundary, seed * 13 + unsigned(c.m));
    params = random_parameters<double>(c.dim, c.m, seed * 17 + unsigned(c.m));
    gpu->set_batch(batch);
    gpu->set_parameters(params);
    host = host_rows(batch, params, kPenalty);
  }
};

template <class F>
void for_each_case(F&& check) {
  for (const GeneralCase& c : cases()) {
    SCOPED_TRACE(testing::Message()
                 << "dim " << c.dim << ", space_dim " << c.space_dim << ", m " << c.m);
    check(c);
  }
}

TEST(CudaGeneralRows, ResidualsMatchHostRows) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    const LossParts loss = s.gpu->residuals();
    EXPECT_LE(relative_difference(loss.loss, s.host.loss), kTol);
    std::vector<double> e, b;
    s.gpu->residual_vectors(e, b);
    e.insert(e.end(), b.begin(), b.end());
    EXPECT_LE(relative_difference(e, s.host.residuals), kTol);
    // The rows differ from the Poisson ones: the coefficients reached the kernels.
    CollocationBatch poisson = s.batch;
    poisson.a.clear(), poisson.b.clear(), poisson.c.clear(), poisson.alpha.clear(),
        poisson.beta.clear(), poisson.space_dim = 0;
    EXPECT_GT(
        relative_difference(host_rows(poisson, s.params, kPenalty).residuals, s.host.residuals),
        1e-2);
  });
}

TEST(CudaGeneralRows, GradientIsJacobianTransposeResiduals) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    RbfParameters<double> grad;
    const LossParts loss = s.gpu->gradient(grad);
    EXPECT_LE(relative_difference(loss.loss, s.host.loss), kTol);
    const std::vector<double> expected = jacobian_transpose_times(s.host, s.host.scaled_residuals);
    EXPECT_LE(relative_difference(flatten(grad), expected), 1e-11);
  });
}

TEST(CudaGeneralRows, GdStepMatchesHost) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    const double eta = 1e-3;
    const LossParts loss = s.gpu->gd_steps(1, eta);
    EXPECT_LE(relative_difference(loss.loss, s.host.loss), kTol);
    const std::vector<double> g = jacobian_transpose_times(s.host, s.host.scaled_residuals);
    RbfParameters<double> expected = s.params;
    const int m = c.m, d = c.dim;
    for (int k = 0; k < m; ++k) {
      double gc[4], dc[4], da;
      for (int j = 0; j < d; ++j) gc[j] = g[m + k * d + j];
      switch (d) {
        case 2:
          limited_gd_step<2>(gc, g[m * (d + 1) + k], s.params.widths[k], eta, dc, da);
          break;
        case 3:
          limited_gd_step<3>(gc, g[m * (d + 1) + k], s.params.widths[k], eta, dc, da);
          break;
        default:
          limited_gd_step<4>(gc, g[m * (d + 1) + k], s.params.widths[k], eta, dc, da);
      }
      for (int j = 0; j < d; ++j) expected.centres[k * d + j] -= dc[j];
      expected.widths[k] = std::max(expected.widths[k] - da, 0.05);
    }
    EXPECT_LE(relative_difference(flatten(s.gpu->parameters()), flatten(expected)), kTol);
  });
}

TEST(CudaGeneralRows, LmSystemMatchesHostJacobian) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    const LossParts loss = s.gpu->lm_prepare();
    EXPECT_LE(relative_difference(loss.loss, s.host.loss), kTol);
    std::vector<double> jtj, jtr;
    s.gpu->lm_system(jtj, jtr);
    EXPECT_LE(relative_difference(jtr, jacobian_transpose_times(s.host, s.host.scaled_residuals)),
              1e-11);
    EXPECT_LE(relative_difference(jtj, jacobian_gram_lower(s.host)), 1e-11);
    // A damped step lowers the loss, and lm_reject restores θ exactly.
    EXPECT_LT(s.gpu->lm_try(1e2).loss, loss.loss);
    s.gpu->lm_reject();
    EXPECT_EQ(flatten(s.gpu->parameters()), flatten(s.params));
  });
}

// The scaled system A = FsᵀFs, s = Fsᵀys with Fs = the Jacobian's weight columns.
struct HostSystem {
  int m;
  std::vector<double> a, s;  // a: m × m, row-major
  std::vector<double> apply(const std::vector<double>& v) const {
    std::vector<double> out(m, 0.0);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) out[i] += a[std::size_t(i) * m + j] * v[j];
    return out;
  }
};
HostSystem host_system(const HostRows& h, const CollocationBatch& batch, double penalty) {
  HostSystem sys;
  sys.m = h.m;
  const int m = h.m, cols = h.parameters();
  const double si = 1 / std::sqrt(double(std::max(h.n_int, 1)));
  const double sb = std::sqrt(penalty / double(std::max(h.n_bnd, 1)));
  sys.a.assign(std::size_t(m) * m, 0.0);
  sys.s.assign(m, 0.0);
  for (int row = 0; row < h.rows(); ++row) {
    const bool interior = row < h.n_int;
    const double y = interior ? si * batch.f[row] : sb * batch.p[row - h.n_int];
    const double* f = &h.jacobian[std::size_t(row) * cols];
    for (int i = 0; i < m; ++i) {
      sys.s[i] += f[i] * y;
      for (int j = 0; j < m; ++j) sys.a[std::size_t(i) * m + j] += f[i] * f[j];
    }
  }
  return sys;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

TEST(CudaGeneralRows, FourCgIterationsMatchHost) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    const HostSystem sys = host_system(s.host, s.batch, kPenalty);
    // The CPU backend's CG, warm-started from the current weights.
    std::vector<double> w = s.params.weights, r = sys.s, d;
    const std::vector<double> aw = sys.apply(w);
    for (int i = 0; i < c.m; ++i) r[i] -= aw[i];
    d = r;
    double rr = norm(r) * norm(r);
    for (int it = 0; it < 4; ++it) {
      const std::vector<double> ad = sys.apply(d);
      double dad = 0;
      for (int i = 0; i < c.m; ++i) dad += d[i] * ad[i];
      const double alpha = rr / dad;
      for (int i = 0; i < c.m; ++i) w[i] += alpha * d[i], r[i] -= alpha * ad[i];
      const double rr_new = norm(r) * norm(r);
      for (int i = 0; i < c.m; ++i) d[i] = r[i] + rr_new / rr * d[i];
      rr = rr_new;
    }
    const CgResult result = s.gpu->solve_weights_cg(4, 0.0);
    EXPECT_EQ(result.iterations, 4);
    EXPECT_LE(relative_difference(s.gpu->parameters().weights, w), 1e-11);
    EXPECT_LE(relative_difference(result.relative_residual, norm(r) / norm(sys.s)), 1e-10);
  });
}

TEST(CudaGeneralRows, DirectSolveSatisfiesNormalEquations) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    const double ridge = 1e-2;
    const double before = s.gpu->residuals().loss;
    s.gpu->solve_weights_direct(ridge);
    const HostSystem sys = host_system(s.host, s.batch, kPenalty);
    const std::vector<double> w = s.gpu->parameters().weights;
    std::vector<double> res = sys.apply(w);
    for (int i = 0; i < c.m; ++i) res[i] += ridge * w[i] - sys.s[i];
    // Backward stable Cholesky: ‖(A + ρI)w − s‖ ≲ ε·‖A + ρI‖·‖w‖.
    double a_norm = 0;
    for (double v : sys.a) a_norm += v * v;
    EXPECT_LE(norm(res), 1e-12 * (std::sqrt(a_norm) + ridge) * norm(w) + 1e-12 * norm(sys.s));
    EXPECT_LT(s.gpu->residuals().loss, 0.5 * before);
  });
}

TEST(CudaGeneralRows, QrWeightsBeatDirectWeights) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    s.gpu->solve_weights_direct(1e-2);
    const double ridge_loss = s.gpu->residuals().loss;
    s.gpu->solve_weights_qr();
    const double qr_loss = s.gpu->residuals().loss;
    // Least squares at a 1e-12 relative ridge: at most the ridge-1e-2 solution's loss.
    EXPECT_LE(qr_loss, ridge_loss * (1 + 1e-6));
    // And the residuals left are those of the new weights (host rows at the new θ); the
    // least-squares weights are large and the residuals small, so the sums cancel: 1e-6, as the
    // QR parity test.
    std::vector<double> e, b;
    s.gpu->residual_vectors(e, b);
    e.insert(e.end(), b.begin(), b.end());
    const HostRows after = host_rows(s.batch, s.gpu->parameters(), kPenalty);
    EXPECT_LE(relative_difference(e, after.residuals), 1e-6);
    // vp_prepare at the least-squares weights: JᵀR of the projected system is finite and a
    // strongly damped step does not raise the loss.
    const LossParts prepared = s.gpu->vp_prepare();
    EXPECT_LE(relative_difference(prepared.loss, after.loss), 1e-6);
    std::vector<double> jtj, jtr;
    s.gpu->lm_system(jtj, jtr);
    ASSERT_EQ(jtr.size(), std::size_t(c.m * (c.dim + 1)));
    EXPECT_TRUE(std::isfinite(norm(jtr)) && norm(jtr) > 0);
    EXPECT_LE(s.gpu->vp_try(1e3).loss, prepared.loss * (1 + 1e-7));
  });
}

TEST(CudaGeneralRows, EvaluateOverSpaceCoordinatesAndGradient) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case s(c);
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> u(-0.2, 1.2);
    const int n = 301;
    std::vector<double> points(std::size_t(n) * c.dim);
    for (double& v : points) v = u(rng);
    // Δₛu and u: host rows of a batch with a = 1 and nothing else, over the same points.
    CollocationBatch lap;
    lap.dim = c.dim;
    lap.space_dim = c.space_dim;
    lap.interior = points;
    lap.f.assign(n, 0.0);
    const HostRows h = host_rows(lap, s.params, kPenalty);
    CollocationBatch val;
    val.dim = c.dim;
    val.boundary = points;
    val.normals.assign(points.size(), 0.0);
    val.p.assign(n, 0.0);
    const HostRows hv = host_rows(val, s.params, kPenalty);
    std::vector<double> uu, ll;
    s.gpu->evaluate(points, uu, ll);
    EXPECT_LE(relative_difference(ll, h.residuals), kTol);
    EXPECT_LE(relative_difference(uu, hv.residuals), kTol);
    std::vector<double> g_gpu, g_host;
    s.gpu->evaluate_gradient(points, g_gpu);
    s.gpu->RbfBackend<double>::evaluate_gradient(points, g_host);  // the host sum
    EXPECT_LE(relative_difference(g_gpu, g_host), kTol);
  });
}

// The fused cycle on a host batch (no drawing): one GD step then CG, one CUDA graph. The loss it
// returns (before the step) is the host's; the parameters are those of the same steps called one
// by one, each of which the tests above check against the host.
TEST(CudaGeneralRows, FusedCycleEqualsItsSteps) {
  RBFPDE_REQUIRE_CUDA_DEVICE();
  for_each_case([](const GeneralCase& c) {
    Case fused(c), steps(c);
    RbfBackend<double>::GdcgCycle cycle;
    cycle.gd_steps = 1;
    cycle.learning_rate = 1e-3;
    cycle.cg_iterations = 4;
    cycle.cg_tolerance = 0.0;
    const LossParts l_fused = fused.gpu->gdcg_cycle(cycle);
    EXPECT_LE(relative_difference(l_fused.loss, fused.host.loss), kTol);
    steps.gpu->gd_steps(1, 1e-3);
    steps.gpu->solve_weights_cg(4, 0.0);
    EXPECT_LE(
        relative_difference(flatten(fused.gpu->parameters()), flatten(steps.gpu->parameters())),
        kTol);
    // The same cycle on the Poisson/Dirichlet batch of the same points: a graph of the same
    // shapes, which must not be the general one (its loss is the Poisson rows' loss).
    CollocationBatch poisson = fused.batch;
    poisson.a.clear(), poisson.b.clear(), poisson.c.clear(), poisson.alpha.clear(),
        poisson.beta.clear(), poisson.space_dim = 0;
    fused.gpu->set_batch(poisson);
    fused.gpu->set_parameters(fused.params);
    const LossParts l_poisson = fused.gpu->gdcg_cycle(cycle);
    EXPECT_LE(relative_difference(l_poisson.loss, host_rows(poisson, fused.params, kPenalty).loss),
              kTol);
    // And back to the general rows.
    fused.gpu->set_batch(fused.batch);
    fused.gpu->set_parameters(fused.params);
    EXPECT_LE(relative_difference(fused.gpu->gdcg_cycle(cycle).loss, fused.host.loss), kTol);
  });
}

}  // namespace
}  // namespace rbfpde
