// The cost of general rows on the CUDA backend: each training operation timed on one random batch
// with Poisson/Dirichlet rows and on the same points with general rows (a·Δₛu + b·∇u + c·u inside
// with non-constant a, b, c; Dirichlet, Neumann and Robin rows on the boundary), wall clock of
// the call (each ends with one synchronisation), median of 20 runs after 3 warm-up runs, double.
//
// residual = residuals(); gd = gd_steps(1, 1e-3) (residual pass + gradient with the step);
// cg = solve_weights_cg(50, 0) (assembly of A and s + 50 CG iterations); lm = lm_prepare()
// (Jacobian, JᵀJ by SYRK, JᵀR); vp = vp_prepare() (Jacobian, QR of the features, Qᵀ[J_ca | R],
// BᵀB). General rows cost a division and ≈ 10 + 4d FLOPs more per pair in the residual and feature
// kernels and ≈ 30 + 8d more in the gradient and Jacobian (the kernel files' headers); the
// dense algebra (SYRK, QR, CG) is the same, so the ratio falls as m grows.
// Usage: bench_gpu_general [dim]   (2 or 3; both when omitted)
#if !defined(RBFPDE_HAVE_CUDA_BACKEND)
#include <cstdio>
int main() {
  std::printf("built without the CUDA backend: nothing to time\n");
  return 0;
}
#else
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include "bench/median_time.hpp"
#include "kernels/backend.hpp"

namespace {

using namespace rbfpde;

constexpr int kRuns = 20, kWarmup = 3;

double median_ms(const std::function<void()>& call) {
  return bench::median_ms(call, kWarmup, kRuns);
}

// Points in the unit cube, f and p in [−0.5, 0.5]; with `general`, a ∈ [0.5, 1.5],
// b ∈ [−1, 1]^d, c ∈ [−2, 0.5], unit normals, boundary rows Dirichlet, Neumann and Robin in turn.
CollocationBatch make_batch(int dim, int n_int, int n_bnd, bool general) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  CollocationBatch b;
  b.dim = dim;
  for (int i = 0; i < n_int * dim; ++i) b.interior.push_back(u(rng));
  for (int i = 0; i < n_int; ++i) b.f.push_back(u(rng) - 0.5);
  for (int i = 0; i < n_bnd * dim; ++i) b.boundary.push_back(u(rng));
  for (int i = 0; i < n_bnd; ++i) b.p.push_back(u(rng) - 0.5);
  for (int i = 0; i < n_bnd; ++i) {
    double v[3], norm = 0;
    for (int j = 0; j < dim; ++j) {
      v[j] = g(rng);
      norm += v[j] * v[j];
    }
    for (int j = 0; j < dim; ++j) b.normals.push_back(v[j] / std::sqrt(norm));
  }
  if (!general) return b;
  for (int i = 0; i < n_int; ++i) {
    b.a.push_back(0.5 + u(rng));
    for (int j = 0; j < dim; ++j) b.b.push_back(2 * u(rng) - 1);
    b.c.push_back(-2 + 2.5 * u(rng));
  }
  for (int i = 0; i < n_bnd; ++i) {
    const int kind = i % 3;
    b.alpha.push_back(kind == 0 ? 1.0 : kind == 1 ? 0.0 : 0.5 + u(rng));
    b.beta.push_back(kind == 0 ? 0.0 : kind == 1 ? 1.0 : 0.2 + 0.8 * u(rng));
  }
  return b;
}

RbfParameters<double> make_parameters(int dim, int m) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  RbfParameters<double> p;
  p.dim = dim;
  for (int k = 0; k < m; ++k) p.weights.push_back(u(rng) - 0.5);
  for (int k = 0; k < m * dim; ++k) p.centres.push_back(1.2 * u(rng) - 0.1);
  for (int k = 0; k < m; ++k) p.widths.push_back(0.1 + 0.1 * u(rng));
  return p;
}

struct Times {
  double residual, gd, cg, lm, vp;
};

Times time_operations(int dim, int m, int n_int, int n_bnd, bool general) {
  BackendOptions options;
  options.dim = dim;
  auto be = make_cuda_backend<double>(options);
  const RbfParameters<double> params = make_parameters(dim, m);
  be->set_batch(make_batch(dim, n_int, n_bnd, general));
  Times t{};
  t.residual = median_ms([&] { be->residuals(); });
  t.gd = median_ms([&] {
    be->set_parameters(params);
    be->gd_steps(1, 1e-3);
  });
  t.cg = median_ms([&] {
    be->set_parameters(params);
    be->solve_weights_cg(50, 0.0);
  });
  be->set_parameters(params);
  t.lm = median_ms([&] { be->lm_prepare(); });
  t.vp = median_ms([&] { be->vp_prepare(); });
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_device_available()) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  const int only_dim = argc > 1 ? std::atoi(argv[1]) : 0;
  struct Size {
    int dim, m, n_int, n_bnd;
  };
  // The varpro defaults at m = 100 (2D) and 216 (3D), and a large gdcg-like batch.
  const Size sizes[] = {
      {2, 100, 2000, 358}, {2, 1024, 18432, 1024}, {3, 216, 5400, 3694}, {3, 1024, 18432, 3072}};
  std::printf("%-3s %5s %6s | %-8s %8s %8s %8s %8s %8s   (ms, median of %d)\n", "d", "m", "n",
              "rows", "residual", "gd", "cg50", "lm_prep", "vp_prep", kRuns);
  for (const Size& s : sizes) {
    if (only_dim && s.dim != only_dim) continue;
    const Times p = time_operations(s.dim, s.m, s.n_int, s.n_bnd, false);
    const Times g = time_operations(s.dim, s.m, s.n_int, s.n_bnd, true);
    const int n = s.n_int + s.n_bnd;
    std::printf("%-3d %5d %6d | %-8s %8.3f %8.3f %8.3f %8.3f %8.3f\n", s.dim, s.m, n, "poisson",
                p.residual, p.gd, p.cg, p.lm, p.vp);
    std::printf("%-3d %5d %6d | %-8s %8.3f %8.3f %8.3f %8.3f %8.3f\n", s.dim, s.m, n, "general",
                g.residual, g.gd, g.cg, g.lm, g.vp);
    std::printf("%-3s %5s %6s | %-8s %8.2f %8.2f %8.2f %8.2f %8.2f\n", "", "", "", "ratio",
                g.residual / p.residual, g.gd / p.gd, g.cg / p.cg, g.lm / p.lm, g.vp / p.vp);
  }
  return 0;
}
#endif
