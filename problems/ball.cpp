// Disk (2D) and ball (3D): |x − c| ≤ r.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"

namespace rbfpde {

namespace {

constexpr double kPi = 3.14159265358979323846;

class Ball final : public Domain {
 public:
  Ball(const std::vector<double>& centre, double radius)
      : dim_(static_cast<int>(centre.size())), radius_(radius), tol_(1e-12 * radius) {
    for (int k = 0; k < dim_; ++k) centre_[k] = centre[k];
  }

  int dim() const override { return dim_; }
  std::string type() const override { return dim_ == 2 ? "disk" : "ball"; }

  bool contains(const double* x) const override { return distance_to_centre(x) <= radius_ + tol_; }

  double distance_to_boundary(const double* x) const override {
    return std::abs(radius_ - distance_to_centre(x));
  }

  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    double u[3];
    for (std::size_t i = 0; i < n; ++i) {
      // The mass within radius ρ grows as ρ^d, so ρ = r·U^(1/d) is uniform in the volume.
      const double rho = radius_ * std::pow(uniform01(rng), 1.0 / dim_);
      sample_direction(rng, u);
      for (int k = 0; k < dim_; ++k) points[i * dim_ + k] = centre_[k] + rho * u[k];
    }
  }

  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    double u[3];
    for (std::size_t i = 0; i < n; ++i) {
      sample_direction(rng, u);
      for (int k = 0; k < dim_; ++k) {
        points[i * dim_ + k] = centre_[k] + radius_ * u[k];
        normals[i * dim_ + k] = u[k];
      }
    }
  }

  void bounding_box(double* lo, double* hi) const override {
    for (int k = 0; k < dim_; ++k) lo[k] = centre_[k] - radius_, hi[k] = centre_[k] + radius_;
  }

  double measure() const override {
    return dim_ == 2 ? kPi * radius_ * radius_ : 4.0 / 3.0 * kPi * radius_ * radius_ * radius_;
  }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = type();
    g.dim = dim_;
    g.lo.resize(dim_);
    g.hi.resize(dim_);
    bounding_box(g.lo.data(), g.hi.data());
    g.centre.assign(centre_, centre_ + dim_);
    g.radius = radius_;
    return g;
  }

 private:
  double distance_to_centre(const double* x) const {
    double s = 0;
    for (int k = 0; k < dim_; ++k) s += (x[k] - centre_[k]) * (x[k] - centre_[k]);
    return std::sqrt(s);
  }

  // A unit vector uniform on the circle or sphere. In 3D, z uniform in [−1, 1] with a uniform
  // azimuth is uniform on the sphere (Archimedes' hat-box theorem): two draws, no rejection.
  void sample_direction(Rng& rng, double* u) const {
    const double phi = 2 * kPi * uniform01(rng);
    if (dim_ == 2) {
      u[0] = std::cos(phi), u[1] = std::sin(phi);
      return;
    }
    const double z = uniform(rng, -1.0, 1.0);
    const double s = std::sqrt(std::max(0.0, 1 - z * z));
    u[0] = s * std::cos(phi), u[1] = s * std::sin(phi), u[2] = z;
  }

  int dim_;
  double centre_[3] = {0, 0, 0};
  double radius_;
  double tol_;
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
