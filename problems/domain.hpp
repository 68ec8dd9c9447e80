// Domains: where the problem lives. Each samples its interior and boundary uniformly, gives
// outward normals, and answers the inside test. Points are stored row-major, n × dim.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "problems/random.hpp"

namespace rbfpde {

class Domain {
 public:
  virtual ~Domain() = default;

  virtual int dim() const = 0;
  virtual std::string type() const = 0;  // "rectangle", "box", "disk", "ball", "polygon"

  // Closed domain: points on the boundary count as inside.
  virtual bool contains(const double* x) const = 0;
  // Euclidean distance from x to the boundary (≥ 0, whether x is inside or not).
  virtual double distance_to_boundary(const double* x) const = 0;

  // n points uniform in the interior.
  virtual void sample_interior(Rng& rng, std::size_t n, double* points) const = 0;
  // n points uniform on the boundary (by length in 2D, area in 3D) and their outward unit normals.
  virtual void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const = 0;

  // Axis-aligned bounding box; lo and hi hold dim() values.
  virtual void bounding_box(double* lo, double* hi) const = 0;
  // Area (2D) or volume (3D) of the domain.
  virtual double measure() const = 0;
};

// Factories. They check their arguments (throw std::invalid_argument with a readable message:
// min < max on every axis, radius > 0, polygon with ≥ 3 vertices, non-zero area, no
// self-intersection).
std::unique_ptr<Domain> make_box(const std::vector<double>& min, const std::vector<double>& max);  // 2D rectangle or 3D box
std::unique_ptr<Domain> make_ball(const std::vector<double>& centre, double radius);              // 2D disk or 3D ball
std::unique_ptr<Domain> make_polygon(const std::vector<std::array<double, 2>>& vertices);         // 2D, any orientation, non-convex allowed

}  // namespace rbfpde
