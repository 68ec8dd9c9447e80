#include "problems/space_time.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace rbfpde {

namespace {

// Boundary samples of Ω for its boundary measure: the estimate's relative standard error is
// about std((x − x₀)·n) / mean / √n, below 1 % for the shapes we have; a fixed seed keeps it
// the same on every run.
constexpr std::size_t kMeasureSamples = 65536;
constexpr std::uint64_t kMeasureSeed = 0xb0da'5eed;

}  // namespace

SpaceTimeDomain::SpaceTimeDomain(std::shared_ptr<const Domain> space, double start, double end)
    : space_(std::move(space)), start_(start), end_(end) {
  if (!space_) throw std::invalid_argument("space-time domain: no spatial domain");
  if (!std::isfinite(start) || !std::isfinite(end) || !(start < end))
    throw std::invalid_argument("time: start must be less than end");
  const int d = space_->dim();
  if (d != 2 && d != 3) throw std::invalid_argument("space-time domain: space must be 2D or 3D");
  tol_ = 1e-12 * std::max({std::abs(start), std::abs(end), end - start});

  double lo[3], hi[3], x0[3];
  space_->bounding_box(lo, hi);
  for (int k = 0; k < d; ++k) x0[k] = 0.5 * (lo[k] + hi[k]);
  Rng rng(kMeasureSeed);
  std::vector<double> pts(kMeasureSamples * d), nrm(kMeasureSamples * d);
  space_->sample_boundary(rng, kMeasureSamples, pts.data(), nrm.data());
  double sum = 0;
  for (std::size_t i = 0; i < kMeasureSamples; ++i)
    for (int k = 0; k < d; ++k) sum += (pts[i * d + k] - x0[k]) * nrm[i * d + k];
  const double mean = sum / double(kMeasureSamples);
  if (!(mean > 0)) throw std::invalid_argument("space-time domain: cannot measure the boundary");
  boundary_measure_ = d * space_->measure() / mean;
  const double lateral = boundary_measure_ * (end_ - start_);
  initial_share_ = space_->measure() / (space_->measure() + lateral);
}

bool SpaceTimeDomain::contains(const double* x) const {
  const double t = x[space_->dim()];
  return t >= start_ - tol_ && t <= end_ + tol_ && space_->contains(x);
}

double SpaceTimeDomain::distance_to_boundary(const double* x) const {
  const double t = x[space_->dim()];
  const double ds = space_->distance_to_boundary(x);
  const bool in_space = space_->contains(x);
  const bool in_time = t >= start_ && t <= end_;
  const double dt_out = std::max({start_ - t, t - end_, 0.0});
  if (in_space && in_time) return std::min({ds, t - start_, end_ - t});
  if (in_space) return dt_out;  // the nearest point is on the face straight along t
  if (in_time) return ds;       // the nearest point is on the lateral boundary
  return std::hypot(ds, dt_out);
}

void SpaceTimeDomain::sample_interior(Rng& rng, std::size_t n, double* points) const {
  const int d = space_->dim(), dt = d + 1;
  std::vector<double> x(n * d);
  space_->sample_interior(rng, n, x.data());
  for (std::size_t i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) points[i * dt + k] = x[i * d + k];
    points[i * dt + d] = uniform(rng, start_, end_);
  }
}

void SpaceTimeDomain::sample_boundary(Rng& rng, std::size_t n, double* points,
                                      double* normals) const {
  const int d = space_->dim(), dt = d + 1;
  for (std::size_t i = 0; i < n; ++i) {
    double* x = points + i * dt;
    double* nrm = normals + i * dt;
    if (uniform01(rng) < initial_share_) {
      space_->sample_interior(rng, 1, x);
      for (int k = 0; k < d; ++k) nrm[k] = 0.0;
      x[d] = start_;
      nrm[d] = -1.0;
    } else {
      space_->sample_boundary(rng, 1, x, nrm);
      x[d] = uniform(rng, start_, end_);
      nrm[d] = 0.0;
    }
  }
}

void SpaceTimeDomain::bounding_box(double* lo, double* hi) const {
  space_->bounding_box(lo, hi);
  lo[space_->dim()] = start_;
  hi[space_->dim()] = end_;
}

}  // namespace rbfpde
