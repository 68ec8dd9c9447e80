// Disk (2D) and ball (3D): |x − c| ≤ r.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"
#include "problems/domain_shapes.hpp"

namespace rbfpde {

namespace {

class Ball final : public Domain {
 public:
  Ball(const std::vector<double>& centre, double radius)
      : shape_(make_ball_shape(static_cast<int>(centre.size()), centre.data(), radius)) {}

  int dim() const override { return shape_.dim; }
  std::string type() const override { return dim() == 2 ? "disk" : "ball"; }

  bool contains(const double* x) const override { return ball_contains(shape_, x); }

  double distance_to_boundary(const double* x) const override { return ball_distance(shape_, x); }

  // The radius's uniform, then the direction's dim − 1 (ball_interior_point).
  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    double u[3];
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < dim(); ++k) u[k] = uniform01(rng);
      ball_interior_point(shape_, u, points + i * dim());
    }
  }

  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    double u[2];
    for (std::size_t i = 0; i < n; ++i) {
      for (int k = 0; k < dim() - 1; ++k) u[k] = uniform01(rng);
      ball_boundary_point(shape_, u, points + i * dim(), normals + i * dim());
    }
  }

  void bounding_box(double* lo, double* hi) const override {
    for (int k = 0; k < dim(); ++k)
      lo[k] = shape_.centre[k] - shape_.radius, hi[k] = shape_.centre[k] + shape_.radius;
  }

  double measure() const override {
    const double r = shape_.radius;
    return dim() == 2 ? kShapePi * r * r : 4.0 / 3.0 * kShapePi * r * r * r;
  }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = type();
    g.dim = dim();
    g.lo.resize(dim());
    g.hi.resize(dim());
    bounding_box(g.lo.data(), g.hi.data());
    g.centre.assign(shape_.centre, shape_.centre + dim());
    g.radius = shape_.radius;
    return g;
  }

 private:
  BallShape shape_;
};

}  // namespace

std::unique_ptr<Domain> make_ball(const std::vector<double>& centre, double radius) {
  if (centre.size() != 2 && centre.size() != 3) {
    throw std::invalid_argument("centre needs 2 entries (disk) or 3 (ball), found " +
                                std::to_string(centre.size()));
  }
  for (double c : centre)
    if (!std::isfinite(c)) throw std::invalid_argument("centre must be finite");
  if (!(radius > 0) || !std::isfinite(radius)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "radius must be positive and finite, found %g", radius);
    throw std::invalid_argument(buf);
  }
  return std::make_unique<Ball>(centre, radius);
}

}  // namespace rbfpde
