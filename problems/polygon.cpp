// Simple polygon (2D), convex or not, given in either orientation; stored counter-clockwise so
// that the outward normal of edge a→b is (b − a) turned clockwise.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"
#include "problems/domain_shapes.hpp"

namespace rbfpde {

namespace {

using Vec2 = std::array<double, 2>;

double cross(const Vec2& a, const Vec2& b, const Vec2& c) {
  return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
}

// c lies within the bounding box of segment ab (used only when a, b, c are collinear).
bool within(const Vec2& a, const Vec2& b, const Vec2& c) {
  return std::min(a[0], b[0]) <= c[0] && c[0] <= std::max(a[0], b[0]) &&
         std::min(a[1], b[1]) <= c[1] && c[1] <= std::max(a[1], b[1]);
}

// Closed segments ab and cd share at least one point (touching counts).
bool segments_meet(const Vec2& a, const Vec2& b, const Vec2& c, const Vec2& d) {
  const double d1 = cross(c, d, a), d2 = cross(c, d, b);
  const double d3 = cross(a, b, c), d4 = cross(a, b, d);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
    return true;
  return (d1 == 0 && within(c, d, a)) || (d2 == 0 && within(c, d, b)) ||
         (d3 == 0 && within(a, b, c)) || (d4 == 0 && within(a, b, d));
}

std::string point_str(const Vec2& v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%g, %g)", v[0], v[1]);
  return buf;
}

double signed_area(const std::vector<Vec2>& v) {
  double s = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const Vec2& a = v[i];
    const Vec2& b = v[(i + 1) % v.size()];
    s += a[0] * b[1] - b[0] * a[1];
  }
  return 0.5 * s;
}

// Closed triangle abc (counter-clockwise) contains p.
bool in_triangle(const Vec2& a, const Vec2& b, const Vec2& c, const Vec2& p) {
  return cross(a, b, p) >= 0 && cross(b, c, p) >= 0 && cross(c, a, p) >= 0;
}

// Ear clipping of a simple counter-clockwise polygon: O(n³) worst case, fine for hand-written
// polygons, and it handles non-convex ones (the L-shape). Every triangle is counter-clockwise with
// positive area; collinear vertices are dropped without a (zero-area) triangle.
std::vector<std::array<int, 3>> triangulate(const std::vector<Vec2>& v) {
  std::vector<int> ring(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) ring[i] = static_cast<int>(i);
  std::vector<std::array<int, 3>> triangles;
  while (ring.size() > 3) {
    const std::size_t m = ring.size();
    bool clipped = false;
    for (std::size_t i = 0; i < m && !clipped; ++i) {
      const int ia = ring[(i + m - 1) % m], ib = ring[i], ic = ring[(i + 1) % m];
      const Vec2 &a = v[ia], &b = v[ib], &c = v[ic];
      if (cross(a, b, c) <= 0) continue;  // reflex or straight: not an ear
      // An ear holds no other remaining vertex, not even on its edges (the diagonal ac must lie
      // strictly inside the polygon).
      bool empty = true;
      for (int j : ring) {
        if (j == ia || j == ib || j == ic) continue;
        if (in_triangle(a, b, c, v[j])) {
          empty = false;
          break;
        }
      }
      if (!empty) continue;
      triangles.push_back({ia, ib, ic});
      ring.erase(ring.begin() + i);
      clipped = true;
    }
    if (clipped) continue;
    // No ear: a simple polygon always has two, unless straight vertices hide them. Such a vertex
    // encloses no area, so drop it without a triangle.
    for (std::size_t i = 0; i < m && !clipped; ++i) {
      if (cross(v[ring[(i + m - 1) % m]], v[ring[i]], v[ring[(i + 1) % m]]) == 0) {
        ring.erase(ring.begin() + i);
        clipped = true;
      }
    }
    if (!clipped) throw std::logic_error("polygon triangulation found no ear (not simple?)");
  }
  if (cross(v[ring[0]], v[ring[1]], v[ring[2]]) > 0)
    triangles.push_back({ring[0], ring[1], ring[2]});
  return triangles;
}

class Polygon final : public Domain {
 public:
  explicit Polygon(std::vector<Vec2> vertices)
      : v_(counter_clockwise(std::move(vertices))), arrays_(v_, triangulate(v_)) {
    area_ = signed_area(v_);
    lo_ = hi_ = v_[0];
    for (const Vec2& p : v_) {
      for (int k = 0; k < 2; ++k) lo_[k] = std::min(lo_[k], p[k]), hi_[k] = std::max(hi_[k], p[k]);
    }
  }

  int dim() const override { return 2; }
  std::string type() const override { return "polygon"; }

  bool contains(const double* x) const override { return polygon_contains(arrays_.shape(), x); }

  double distance_to_boundary(const double* x) const override {
    return polygon_distance(arrays_.shape(), x);
  }

  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    // Rejection from the bounding box: expected trials per point = box area / polygon area.
    for (std::size_t i = 0; i < n; ++i) {
      double* x = points + 2 * i;
      do {
        x[0] = uniform(rng, lo_[0], hi_[0]);
        x[1] = uniform(rng, lo_[1], hi_[1]);
      } while (!contains(x));
    }
  }

  // One uniform per point: it picks the edge by length, and its remainder the place on the edge.
  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    const PolygonShape shape = arrays_.shape();
    const double* cumulative = shape.perimeter;
    for (std::size_t i = 0; i < n; ++i) {
      const double t = uniform01(rng) * cumulative[shape.vertices];
      const int e = piece_of(cumulative, shape.vertices, t);
      const double len = cumulative[e + 1] - cumulative[e];
      const double f = std::clamp((t - cumulative[e]) / len, 0.0, 1.0);
      polygon_edge_point(shape, e, f, points + 2 * i, normals + 2 * i);
    }
  }

  void bounding_box(double* lo, double* hi) const override {
    lo[0] = lo_[0], lo[1] = lo_[1], hi[0] = hi_[0], hi[1] = hi_[1];
  }

  double measure() const override { return area_; }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = "polygon";
    g.dim = 2;
    g.lo = {lo_[0], lo_[1]};
    g.hi = {hi_[0], hi_[1]};
    g.vertices = v_;
    for (std::size_t t = 0; t < arrays_.corners.size(); t += 3)
      g.triangles.push_back({arrays_.corners[t], arrays_.corners[t + 1], arrays_.corners[t + 2]});
    return g;
  }

 private:
  static std::vector<Vec2> counter_clockwise(std::vector<Vec2> v) {
    if (signed_area(v) < 0) std::reverse(v.begin(), v.end());
    return v;
  }

  std::vector<Vec2> v_;   // counter-clockwise
  PolygonArrays arrays_;  // v_'s coordinates, perimeter and triangulation for the shared formulas
  Vec2 lo_{}, hi_{};
  double area_ = 0;
};

}  // namespace

std::unique_ptr<Domain> make_polygon(const std::vector<std::array<double, 2>>& vertices) {
  const std::size_t n = vertices.size();
  if (n < 3) {
    throw std::invalid_argument("a polygon needs at least 3 vertices, found " + std::to_string(n));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(vertices[i][0]) || !std::isfinite(vertices[i][1]))
      throw std::invalid_argument("vertex " + std::to_string(i) + " is not finite");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Vec2& a = vertices[i];
    const Vec2& b = vertices[(i + 1) % n];
    if (a == b) {
      throw std::invalid_argument("vertices " + std::to_string(i) + " and " +
                                  std::to_string((i + 1) % n) + " coincide at " + point_str(a) +
                                  " (zero-length edge)");
    }
  }
  // Adjacent edges share their common vertex only: collinear and pointing back means they overlap.
  for (std::size_t i = 0; i < n; ++i) {
    const Vec2& a = vertices[i];
    const Vec2& b = vertices[(i + 1) % n];
    const Vec2& c = vertices[(i + 2) % n];
    const double dot = (b[0] - a[0]) * (c[0] - b[0]) + (b[1] - a[1]) * (c[1] - b[1]);
    if (cross(a, b, c) == 0 && dot < 0) {
      throw std::invalid_argument("the polygon is self-intersecting: edges " + std::to_string(i) +
                                  " and " + std::to_string((i + 1) % n) + " fold back at " +
                                  point_str(b));
    }
  }
  // Non-adjacent edges must not meet at all. O(n²) is fine for hand-written polygons.
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 2; j < n; ++j) {
      if (i == 0 && j == n - 1) continue;  // adjacent through the closing vertex
      if (segments_meet(vertices[i], vertices[(i + 1) % n], vertices[j], vertices[(j + 1) % n])) {
        throw std::invalid_argument("the polygon is self-intersecting: edge " + std::to_string(i) +
                                    " " + point_str(vertices[i]) + "-" +
                                    point_str(vertices[(i + 1) % n]) + " meets edge " +
                                    std::to_string(j) + " " + point_str(vertices[j]) + "-" +
                                    point_str(vertices[(j + 1) % n]));
      }
    }
  }
  double lo[2] = {vertices[0][0], vertices[0][1]}, hi[2] = {lo[0], lo[1]};
  for (const Vec2& p : vertices)
    for (int k = 0; k < 2; ++k) lo[k] = std::min(lo[k], p[k]), hi[k] = std::max(hi[k], p[k]);
  const double diag2 = (hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]);
  if (std::abs(signed_area(vertices)) <= 1e-14 * diag2) {
    throw std::invalid_argument("the polygon has zero area (all vertices on one line?)");
  }
  return std::make_unique<Polygon>(vertices);
}

}  // namespace rbfpde
