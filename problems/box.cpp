// Rectangle (2D) and box (3D): axis-aligned, [min, max] on every axis.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"
#include "problems/domain_shapes.hpp"

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
      : shape_(make_box_shape(static_cast<int>(lo.size()), lo.data(), hi.data())) {}

  int dim() const override { return shape_.dim; }
  std::string type() const override { return dim() == 2 ? "rectangle" : "box"; }

  bool contains(const double* x) const override { return box_contains(shape_, x); }

  double distance_to_boundary(const double* x) const override { return box_distance(shape_, x); }

  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    double u[3];
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < dim(); ++k) u[k] = uniform01(rng);
      box_interior_point(shape_, u, points + i * dim());
    }
  }

  // A face by measure, then one uniform per axis along it (dim − 1 of them, in axis order).
  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    double u[3];
    for (std::size_t i = 0; i < n; ++i) {
      int axis;
      bool upper;
      box_face(shape_, uniform01(rng) * shape_.total, &axis, &upper);
      for (int k = 0; k < dim(); ++k) u[k] = k == axis ? 0.0 : uniform01(rng);
      box_face_point(shape_, axis, upper, u, points + i * dim(), normals + i * dim());
    }
  }

  void bounding_box(double* lo, double* hi) const override {
    for (int k = 0; k < dim(); ++k) lo[k] = shape_.lo[k], hi[k] = shape_.hi[k];
  }

  double measure() const override {
    double m = 1;
    for (int k = 0; k < dim(); ++k) m *= shape_.hi[k] - shape_.lo[k];
    return m;
  }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = type();
    g.dim = dim();
    g.lo.assign(shape_.lo, shape_.lo + dim());
    g.hi.assign(shape_.hi, shape_.hi + dim());
    return g;
  }

 private:
  BoxShape shape_;
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
