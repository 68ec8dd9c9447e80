// Rectangle (2D) and box (3D): axis-aligned, [min, max] on every axis.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"

namespace rbfpde {

namespace {

const char kAxisNames[3] = {'x', 'y', 'z'};

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

class Box final : public Domain {
 public:
  Box(const std::vector<double>& lo, const std::vector<double>& hi)
      : dim_(static_cast<int>(lo.size())) {
    double largest = 0;
    for (int k = 0; k < dim_; ++k) {
      lo_[k] = lo[k];
      hi_[k] = hi[k];
      largest = std::max(largest, hi[k] - lo[k]);
    }
    // Points on a face computed by another route (e.g. a grid) may miss it by rounding.
    tol_ = 1e-12 * largest;
    // Face pair k is perpendicular to axis k; its measure is the product of the other extents.
    total_ = 0;
    for (int k = 0; k < dim_; ++k) {
      double m = 1;
      for (int j = 0; j < dim_; ++j)
        if (j != k) m *= hi_[j] - lo_[j];
      face_[k] = m;
      total_ += 2 * m;
    }
  }

  int dim() const override { return dim_; }
  std::string type() const override { return dim_ == 2 ? "rectangle" : "box"; }

  bool contains(const double* x) const override {
    for (int k = 0; k < dim_; ++k)
      if (x[k] < lo_[k] - tol_ || x[k] > hi_[k] + tol_) return false;
    return true;
  }

  double distance_to_boundary(const double* x) const override {
    double outside2 = 0;
    double inside = INFINITY;
    for (int k = 0; k < dim_; ++k) {
      const double below = lo_[k] - x[k], above = x[k] - hi_[k];
      const double out = std::max({below, above, 0.0});
      outside2 += out * out;
      inside = std::min(inside, std::min(-below, -above));
    }
    return outside2 > 0 ? std::sqrt(outside2) : inside;
  }

  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    for (std::size_t i = 0; i < n; ++i)
      for (int k = 0; k < dim_; ++k) points[i * dim_ + k] = uniform(rng, lo_[k], hi_[k]);
  }

  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    for (std::size_t i = 0; i < n; ++i) {
      double* x = points + i * dim_;
      double* nrm = normals + i * dim_;
      // Choose one of the 2·dim faces with probability proportional to its measure.
      double t = uniform01(rng) * total_;
      int axis = dim_ - 1;
      bool upper = true;
      for (int k = 0; k < dim_; ++k) {
        if (t < face_[k]) {
          axis = k, upper = false;
          break;
        }
        t -= face_[k];
        if (t < face_[k]) {
          axis = k, upper = true;
          break;
        }
        t -= face_[k];
      }
      for (int k = 0; k < dim_; ++k) {
        x[k] = k == axis ? (upper ? hi_[k] : lo_[k]) : uniform(rng, lo_[k], hi_[k]);
        nrm[k] = k == axis ? (upper ? 1.0 : -1.0) : 0.0;
      }
    }
  }

  void bounding_box(double* lo, double* hi) const override {
    for (int k = 0; k < dim_; ++k) lo[k] = lo_[k], hi[k] = hi_[k];
  }

  double measure() const override {
    double m = 1;
    for (int k = 0; k < dim_; ++k) m *= hi_[k] - lo_[k];
    return m;
  }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = type();
    g.dim = dim_;
    g.lo.assign(lo_, lo_ + dim_);
    g.hi.assign(hi_, hi_ + dim_);
    return g;
  }

 private:
  int dim_;
  double lo_[3] = {0, 0, 0}, hi_[3] = {0, 0, 0};
  double face_[3] = {0, 0, 0};
  double total_ = 0;
  double tol_ = 0;
};

}  // namespace

std::unique_ptr<Domain> make_box(const std::vector<double>& min, const std::vector<double>& max) {
  if (min.size() != max.size()) {
    throw std::invalid_argument("min and max must have the same number of entries, found " +
                                std::to_string(min.size()) + " and " + std::to_string(max.size()));
  }
  if (min.size() != 2 && min.size() != 3) {
    throw std::invalid_argument("min and max need 2 entries (rectangle) or 3 (box), found " +
                                std::to_string(min.size()));
  }
  for (std::size_t k = 0; k < min.size(); ++k) {
    if (!std::isfinite(min[k]) || !std::isfinite(max[k])) {
      throw std::invalid_argument(std::string("min and max must be finite on axis ") +
                                  kAxisNames[k]);
    }
    if (!(min[k] < max[k])) {
      throw std::invalid_argument(std::string("min must be less than max on every axis; axis ") +
                                  kAxisNames[k] + " has min " + fmt(min[k]) + " and max " +
                                  fmt(max[k]));
    }
  }
  return std::make_unique<Box>(min, max);
}

}  // namespace rbfpde
