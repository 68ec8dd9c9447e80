// The Gaussian's derivatives (kernels/rbf_math.hpp; docs/mathematics.md) against central finite
// differences, in 2D and 3D.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace rbfpde
