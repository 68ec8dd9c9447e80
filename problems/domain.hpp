// Domains: where the problem lives. Each samples its interior and boundary uniformly, gives
// outward normals, and answers the inside test. Points are stored row-major, n × dim.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "problems/random.hpp"

namespace rbfpde {

// A plain description of a domain, for code that samples it elsewhere (e.g. a kernel generated at
// run time that draws points on the device) and so cannot call the virtual functions below.
struct DomainGeometry {
  std::string type;  // rectangle | box | disk | ball | polygon | union | difference |
                     // intersection | points
  int dim = 2;
  std::vector<double> lo, hi;                   // box: min/max; others: bounding box
  std::vector<double> centre;                   // disk, ball
  double radius = 0;                            // disk, ball
  std::vector<std::array<double, 2>> vertices;  // polygon, counter-clockwise
  std::vector<std::array<int, 3>> triangles;    // polygon: ear-clipping triangulation, each
                                                // counter-clockwise (indices into vertices)
  std::vector<DomainGeometry> parts;            // union | difference | intersection: the operands
                                                // (difference: the first minus all the others)
  std::vector<double> points;                   // points: the given points, n × dim, the
                                                // interior ones first, then the boundary ones
  std::vector<double> normals;                  // points: outward normals of the boundary ones
  std::size_t boundary_begin = 0;               // points: index of the first boundary point
};

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

  // The domain's shape as data. Not pure: test doubles elsewhere derive from Domain without it, and
  // a domain that cannot describe itself must fail loudly rather than be sampled as something else.
  virtual DomainGeometry geometry() const {
    throw std::logic_error("domain type '" + type() + "' does not export its geometry");
  }
};

// Factories. They check their arguments (throw std::invalid_argument with a readable message:
// min < max on every axis, radius > 0, polygon with ≥ 3 vertices, non-zero area, no
// self-intersection).
std::unique_ptr<Domain> make_box(const std::vector<double>& min, const std::vector<double>& max);  // 2D rectangle or 3D box
std::unique_ptr<Domain> make_ball(const std::vector<double>& centre, double radius);              // 2D disk or 3D ball
std::unique_ptr<Domain> make_polygon(const std::vector<std::array<double, 2>>& vertices);         // 2D, any orientation, non-convex allowed

}  // namespace rbfpde
