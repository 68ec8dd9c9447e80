// The Gaussian's derivatives (kernels/rbf_math.hpp; docs/mathematics.md) against central finite
// differences, in 2D and 3D.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/rbf_math.hpp"

namespace rbfpde {
namespace {

template <int D>
double phi_at(const double* x, const double* c, double a) {
  double diff[D];
  const double r2 = squared_distance<D>(x, c, diff);
  double phi, lap;
  gaussian_value_laplacian<D>(r2, a, phi, lap);
  return phi;
}

template <int D>
double lap_at(const double* x, const double* c, double a) {
  double diff[D];
  const double r2 = squared_distance<D>(x, c, diff);
  double phi, lap;
  gaussian_value_laplacian<D>(r2, a, phi, lap);
  return lap;
}

template <int D>
void check_derivatives(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double h = 1e-5;
  for (int trial = 0; trial < 50; ++trial) {
    double x[D], c[D], diff[D];
    for (int j = 0; j < D; ++j) {
      x[j] = u(rng);
      c[j] = u(rng);
    }
    const double a = 0.3 + 0.7 * (u(rng) + 1.0);
    const double r2 = squared_distance<D>(x, c, diff);
    const NeuronTerms<double> t = gaussian_terms<D>(r2, a);

    // Laplacian of φ by second differences in x.
    double lap_fd = 0;
    for (int j = 0; j < D; ++j) {
      double xp[D], xm[D];
      for (int i = 0; i < D; ++i) xp[i] = xm[i] = x[i];
      const double hh = 1e-4;
      xp[j] += hh;
      xm[j] -= hh;
      lap_fd += (phi_at<D>(xp, c, a) - 2 * phi_at<D>(x, c, a) + phi_at<D>(xm, c, a)) / (hh * hh);
    }
    EXPECT_NEAR(t.lap, lap_fd, 1e-5 * (1 + std::abs(t.lap))) << "Δφ, trial " << trial;
    EXPECT_NEAR(t.phi, std::exp(-r2 / (a * a)), 1e-15);

    for (int j = 0; j < D; ++j) {
      double cp[D], cm[D];
      for (int i = 0; i < D; ++i) cp[i] = cm[i] = c[i];
      cp[j] += h;
      cm[j] -= h;
      const double dphi = (phi_at<D>(x, cp, a) - phi_at<D>(x, cm, a)) / (2 * h);
      const double dlap = (lap_at<D>(x, cp, a) - lap_at<D>(x, cm, a)) / (2 * h);
      EXPECT_NEAR(t.phi_dc * diff[j], dphi, 1e-7 * (1 + std::abs(dphi))) << "∂φ/∂c" << j;
      EXPECT_NEAR(t.lap_dc * diff[j], dlap, 1e-6 * (1 + std::abs(dlap))) << "∂Δφ/∂c" << j;
    }
    const double dphi_da = (phi_at<D>(x, c, a + h) - phi_at<D>(x, c, a - h)) / (2 * h);
    const double dlap_da = (lap_at<D>(x, c, a + h) - lap_at<D>(x, c, a - h)) / (2 * h);
    EXPECT_NEAR(t.phi_da, dphi_da, 1e-7 * (1 + std::abs(dphi_da))) << "∂φ/∂a";
    EXPECT_NEAR(t.lap_da, dlap_da, 1e-6 * (1 + std::abs(dlap_da))) << "∂Δφ/∂a";

    // ∂φ/∂n along a random unit direction, against a difference in x.
    double n[D], norm = 0;
    for (int j = 0; j < D; ++j) {
      n[j] = u(rng);
      norm += n[j] * n[j];
    }
    for (int j = 0; j < D; ++j) n[j] /= std::sqrt(norm);
    double xp[D], xm[D];
    for (int j = 0; j < D; ++j) {
      xp[j] = x[j] + h * n[j];
      xm[j] = x[j] - h * n[j];
    }
    const double dn_fd = (phi_at<D>(xp, c, a) - phi_at<D>(xm, c, a)) / (2 * h);
    EXPECT_NEAR(gaussian_normal_derivative<D>(diff, n, t.phi, a), dn_fd, 1e-7 * (1 + std::abs(dn_fd)));
  }
}

TEST(RbfMath, DerivativesMatchFiniteDifferences2D) { check_derivatives<2>(7); }
TEST(RbfMath, DerivativesMatchFiniteDifferences3D) { check_derivatives<3>(11); }

TEST(RbfMath, FloatAgreesWithDouble) {
  const float xf[2] = {0.3f, -0.2f}, cf[2] = {0.1f, 0.25f};
  const double xd[2] = {0.3, -0.2}, cd[2] = {0.1, 0.25};
  float df[2];
  double dd[2];
  const NeuronTerms<float> tf = gaussian_terms<2>(squared_distance<2>(xf, cf, df), 0.4f);
  const NeuronTerms<double> td = gaussian_terms<2>(squared_distance<2>(xd, cd, dd), 0.4);
  EXPECT_NEAR(tf.lap, td.lap, 1e-5 * std::abs(td.lap));
  EXPECT_NEAR(tf.lap_da, td.lap_da, 1e-5 * std::abs(td.lap_da));
}


// The general rows: the value against finite differences of φ in x (Δₛφ, ∇φ, ∂φ/∂n), and the
// centre and width derivatives against finite differences of the value. D = 3 with ds = 2 is a
// 2D problem with time.
template <int D>
void check_rows(int ds, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double h = 1e-5;
  for (int trial = 0; trial < 40; ++trial) {
    double x[D], c[D], B[D], n[D], diff[D];
    double nn = 0;
    for (int j = 0; j < D; ++j) {
      x[j] = 0.5 * u(rng);
      c[j] = 0.5 * u(rng);
      B[j] = u(rng);
      n[j] = u(rng);
      nn += n[j] * n[j];
    }
    for (int j = 0; j < D; ++j) n[j] /= std::sqrt(nn);
    const double a = 0.4 + 0.5 * (u(rng) + 1), A = u(rng), C = u(rng), alpha = u(rng),
                 beta = u(rng);
    const double r2 = squared_distance<D>(x, c, diff);

    // Δₛφ, ∇φ and ∂φ/∂n by central differences in x.
    double lap_s = 0, grad[D], dn = 0;
    for (int j = 0; j < D; ++j) {
      double xp[D], xm[D];
      for (int k = 0; k < D; ++k) xp[k] = xm[k] = x[k];
      xp[j] += 1e-4;
      xm[j] -= 1e-4;
      const double fp = phi_at<D>(xp, c, a), fm = phi_at<D>(xm, c, a), f0 = phi_at<D>(x, c, a);
      grad[j] = (fp - fm) / 2e-4;
      if (j < ds) lap_s += (fp - 2 * f0 + fm) / 1e-8;
      dn += grad[j] * n[j];
    }
    double bg = 0;
    for (int j = 0; j < D; ++j) bg += B[j] * grad[j];
    const double phi = phi_at<D>(x, c, a);
    const RowTerms<D, double> L = operator_row_terms<D>(diff, r2, a, ds, A, B, C);
    const RowTerms<D, double> Bn = boundary_row_terms<D>(diff, r2, a, n, alpha, beta);
    EXPECT_NEAR(L.value, A * lap_s + bg + C * phi, 1e-5 * (1 + std::abs(L.value)));
    EXPECT_NEAR(operator_row_value<D>(diff, r2, a, ds, A, B, C), L.value, 1e-13);
    EXPECT_NEAR(Bn.value, alpha * phi + beta * dn, 1e-6);
    EXPECT_NEAR(boundary_row_value<D>(diff, r2, a, n, alpha, beta), Bn.value, 1e-13);
    double g2[D];
    EXPECT_NEAR(gaussian_gradient<D>(diff, r2, a, g2), phi, 1e-15);
    for (int j = 0; j < D; ++j) EXPECT_NEAR(g2[j], grad[j], 1e-6);

    // Centre and width derivatives.
    auto rows_at = [&](const double* cc, double aa, double& lv, double& bv) {
      double d2[D];
      const double rr = squared_distance<D>(x, cc, d2);
      lv = operator_row_value<D>(d2, rr, aa, ds, A, B, C);
      bv = boundary_row_value<D>(d2, rr, aa, n, alpha, beta);
    };
    for (int k = 0; k < D; ++k) {
      double cp[D], cm[D];
      for (int j = 0; j < D; ++j) cp[j] = cm[j] = c[j];
      cp[k] += h;
      cm[k] -= h;
      double lp, bp, lm, bm;
      rows_at(cp, a, lp, bp);
      rows_at(cm, a, lm, bm);
      EXPECT_NEAR(L.dc[k], (lp - lm) / (2 * h), 1e-6 * (1 + std::abs(L.dc[k])));
      EXPECT_NEAR(Bn.dc[k], (bp - bm) / (2 * h), 1e-6 * (1 + std::abs(Bn.dc[k])));
    }
    double lp, bp, lm, bm;
    rows_at(c, a + h, lp, bp);
    rows_at(c, a - h, lm, bm);
    EXPECT_NEAR(L.da, (lp - lm) / (2 * h), 1e-6 * (1 + std::abs(L.da)));
    EXPECT_NEAR(Bn.da, (bp - bm) / (2 * h), 1e-6 * (1 + std::abs(Bn.da)));

    // The Poisson/Dirichlet defaults are the Laplacian's and φ's terms.
    if (ds == D) {
      const NeuronTerms<double> t = gaussian_terms<D>(r2, a);
      const RowTerms<D, double> L0 = operator_row_terms<D>(diff, r2, a, D, 1.0, static_cast<const double*>(nullptr), 0.0);
      const RowTerms<D, double> B0 = boundary_row_terms<D>(diff, r2, a, static_cast<const double*>(nullptr), 1.0, 0.0);
      EXPECT_NEAR(L0.value, t.lap, 1e-12 * (1 + std::abs(t.lap)));
      EXPECT_NEAR(L0.da, t.lap_da, 1e-11 * (1 + std::abs(t.lap_da)));
      EXPECT_NEAR(B0.da, t.phi_da, 1e-12);
      for (int k = 0; k < D; ++k) {
        EXPECT_NEAR(L0.dc[k], t.lap_dc * diff[k], 1e-11 * (1 + std::abs(L0.dc[k])));
        EXPECT_NEAR(B0.dc[k], t.phi_dc * diff[k], 1e-12);
      }
    }
  }
}

TEST(RbfMath, GeneralRowsMatchFiniteDifferences2D) { check_rows<2>(2, 11); }
TEST(RbfMath, GeneralRowsMatchFiniteDifferences3D) { check_rows<3>(3, 12); }
TEST(RbfMath, GeneralRowsWithTimeMatchFiniteDifferences) {
  check_rows<3>(2, 13);  // x, y, t
  check_rows<4>(3, 14);  // x, y, z, t
}

// gd_step_over_limit measures the step limited_gd_step shortens: above 1 exactly where the
// limited step differs from the plain one, and the plain step's length over the limit.
TEST(RbfMath, StepOverLimitIsWhereTheLimitShortens) {
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> grad(-1, 1), log_rate(-3, 3), width(0.01, 1);
  int shortened = 0, kept = 0;
  for (int t = 0; t < 2000; ++t) {
    double gc[3] = {grad(rng), grad(rng), grad(rng)};
    const double ga = grad(rng), a = width(rng), rate = std::pow(10.0, log_rate(rng));
    double sc[3], sa;
    limited_gd_step<3>(gc, ga, a, rate, sc, sa);
    const double ratio = gd_step_over_limit(gc, 3, ga, a, rate);
    const double plain_c = rate * std::sqrt(gc[0] * gc[0] + gc[1] * gc[1] + gc[2] * gc[2]);
    EXPECT_NEAR(ratio, std::max(plain_c, rate * std::abs(ga)) / (kGdStepLimit * a), 1e-12 * ratio);
    const bool changed =
        sa != rate * ga || sc[0] != rate * gc[0] || sc[1] != rate * gc[1] || sc[2] != rate * gc[2];
    EXPECT_EQ(changed, ratio > 1) << "ratio " << ratio;
    (ratio > 1 ? shortened : kept) += 1;
  }
  // Both sides of the limit were drawn.
  EXPECT_GT(shortened, 100);
  EXPECT_GT(kept, 100);
}

}  // namespace
}  // namespace rbfpde
