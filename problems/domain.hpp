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
  virtual std::string type() const = 0;  // "rectangle", "box", "disk", "ball", "polygon",
                                         // "union", "difference", "intersection", "points"

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

// Constructive solid geometry (problems/csg.cpp): op is "union", "difference" (the first part
// minus all the others) or "intersection"; parts are primitives or composites, all of one
// dimension, no point clouds. Throws std::invalid_argument when the parts differ in dimension,
// when the result is empty, or when it fills so little of its bounding box (< 0.1 %) that
// rejection sampling would crawl.
//   contains / distance_to_boundary: through a signed distance built from the parts' (min for a
//     union, max for an intersection, max(first, −others) for a difference). Its sign and zero
//     level are exact; its magnitude is a lower bound of the true distance (exact outside a union
//     of primitives and inside an intersection of them).
//   measure: exact when the parts are provably disjoint (a union) or the subtracted parts
//     provably inside the first and disjoint from each other (a difference); otherwise a
//     Monte-Carlo estimate with 2²⁰ fixed-seed draws in the bounding box (relative standard
//     error √((1 − p)/(p·2²⁰)), p the filled fraction of the box: 0.1 % at p = 1/2).
//   sample_interior: rejection from the bounding box. sample_boundary: a primitive chosen by its
//     whole boundary measure, a uniform point on it, kept when it bounds the result (see csg.cpp).
std::unique_ptr<Domain> make_csg(const std::string& op, std::vector<std::unique_ptr<Domain>> parts);

// A composite's (or a primitive's) membership as a program over its primitives
// (problems/domain_shapes.hpp, csg_evaluate); `leaves` receives the primitives in the program's
// order, pointers into g.
std::vector<int> csg_program(const DomainGeometry& g, std::vector<const DomainGeometry*>& leaves);
// The length (2D) or area (3D) of a primitive's whole boundary: rectangle, box, disk, ball or
// polygon (throws std::invalid_argument for the others).
double primitive_boundary_measure(const DomainGeometry& g);

// A domain given as points (problems/point_cloud.cpp).
struct PointCloudData {
  int dim = 2;
  std::vector<double> points;      // n × dim: the interior points first, then the boundary ones
  std::vector<double> normals;     // (n − boundary_begin) × dim, outward unit normals
  std::size_t boundary_begin = 0;  // index of the first boundary point
};

// Reads a point cloud: CSV with the header x,y[,z],boundary,nx,ny[,nz] (columns in any order;
// boundary 0 or 1; normals read on boundary rows), or, when the build has VTK, a .vtp/.vtu file
// with point arrays "boundary" and "Normals" (2D when every z is 0). Throws std::invalid_argument
// whose message names the file, the line (CSV) or the array (VTK) and what was expected.
PointCloudData read_point_cloud(const std::string& path);

// The cloud as a domain: samples draw given points uniformly with replacement; the signed
// distance at x is (x − b)·n_b, b the boundary point nearest to x (the distance to b's tangent
// plane: exact for flat pieces, off by about s²/(8ρ) near a smooth boundary sampled at spacing s
// with radius of curvature ρ); contains() is that signed distance ≤ 0 within the bounding box,
// distance_to_boundary() its absolute value; measure() a Monte-Carlo estimate (2¹⁶ fixed-seed
// draws in the bounding box). Throws std::invalid_argument without interior or boundary points.
std::unique_ptr<Domain> make_point_cloud(PointCloudData data);

}  // namespace rbfpde
