// A domain given as points: interior points, and boundary points with outward unit normals.
// Training draws from the given points. The inside test and the distance to the boundary come
// from the oriented boundary points, as in Hoppe et al.'s surface reconstruction: the signed
// distance at x is (x − b)·n_b with b the boundary point nearest to x, i.e. the distance to b's
// tangent plane (a k-d tree finds b in O(log n)). Near a smooth boundary sampled at spacing s it
// errs by at most about s²/(8ρ), ρ the radius of curvature.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

#include "problems/domain.hpp"
#include "problems/domain_shapes.hpp"
#include "problems/sample_util.hpp"

namespace rbfpde {

namespace {

// Monte-Carlo measure: fixed seed, 2¹⁶ draws in the bounding box.
constexpr std::size_t kMeasureSamples = std::size_t(1) << 16;
constexpr std::uint64_t kMeasureSeed = 0xc10d'5eedULL;

// Nearest-neighbour search over a fixed set of points: an implicit k-d tree over a permutation
// of their indices (the median of each range is the node, split on the axis of widest spread).
class KdTree {
 public:
  KdTree(const double* points, int dim, std::size_t begin, std::size_t end)
      : points_(points), dim_(dim), ids_(end - begin), axis_(end - begin, 0) {
    std::iota(ids_.begin(), ids_.end(), begin);
    build(0, ids_.size());
  }

  // Index (into the point array) of the point nearest to x.
  std::size_t nearest(const double* x) const {
    std::size_t best = ids_.front();
    double best_d2 = INFINITY;
    search(0, ids_.size(), x, best, best_d2);
    return best;
  }

 private:
  const double* at(std::size_t id) const { return points_ + id * dim_; }

  void build(std::size_t lo, std::size_t hi) {
    if (hi - lo <= 1) return;
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::size_t i = lo; i < hi; ++i)
      for (int k = 0; k < dim_; ++k)
        mn[k] = std::min(mn[k], at(ids_[i])[k]), mx[k] = std::max(mx[k], at(ids_[i])[k]);
    int axis = 0;
    for (int k = 1; k < dim_; ++k)
      if (mx[k] - mn[k] > mx[axis] - mn[axis]) axis = k;
    const std::size_t mid = lo + (hi - lo) / 2;
    std::nth_element(ids_.begin() + lo, ids_.begin() + mid, ids_.begin() + hi,
                     [&](std::size_t a, std::size_t b) { return at(a)[axis] < at(b)[axis]; });
    axis_[mid] = static_cast<std::int8_t>(axis);
    build(lo, mid);
    build(mid + 1, hi);
  }

  void search(std::size_t lo, std::size_t hi, const double* x, std::size_t& best,
              double& best_d2) const {
    if (lo >= hi) return;
    const std::size_t mid = lo + (hi - lo) / 2;
    const double* p = at(ids_[mid]);
    double d2 = 0;
    for (int k = 0; k < dim_; ++k) d2 += (x[k] - p[k]) * (x[k] - p[k]);
    if (d2 < best_d2) best_d2 = d2, best = ids_[mid];
    const int axis = axis_[mid];
    const double diff = x[axis] - p[axis];
    if (diff < 0) {
      search(lo, mid, x, best, best_d2);
      if (diff * diff < best_d2) search(mid + 1, hi, x, best, best_d2);
    } else {
      search(mid + 1, hi, x, best, best_d2);
      if (diff * diff < best_d2) search(lo, mid, x, best, best_d2);
    }
  }

  const double* points_;
  int dim_;
  std::vector<std::size_t> ids_;
  std::vector<std::int8_t> axis_;  // split axis of the node at each position of ids_
};

class PointCloud final : public Domain {
 public:
  explicit PointCloud(PointCloudData data)
      : data_(std::move(data)),
        dim_(data_.dim),
        n_(data_.points.size() / data_.dim),
        boundary_(data_.points.data(), dim_, data_.boundary_begin, n_) {
    for (int k = 0; k < dim_; ++k) lo_[k] = INFINITY, hi_[k] = -INFINITY;
    for (std::size_t i = 0; i < n_; ++i)
      for (int k = 0; k < dim_; ++k) {
        lo_[k] = std::min(lo_[k], data_.points[i * dim_ + k]);
        hi_[k] = std::max(hi_[k], data_.points[i * dim_ + k]);
      }
    double diag2 = 0;
    for (int k = 0; k < dim_; ++k) diag2 += (hi_[k] - lo_[k]) * (hi_[k] - lo_[k]);
    tol_ = 1e-12 * std::sqrt(diag2);
    for (int k = 0; k < dim_; ++k) {
      if (!(hi_[k] - lo_[k] > tol_)) {
        throw std::invalid_argument(std::string("the points are flat: all share one ") + "xyz"[k] +
                                    " coordinate");
      }
    }
    Rng rng(kMeasureSeed);
    const std::size_t inside = count_inside(rng, kMeasureSamples, lo_, hi_, dim_,
                                            [this](const double* x) { return contains(x); });
    double box = 1;
    for (int k = 0; k < dim_; ++k) box *= hi_[k] - lo_[k];
    measure_ = box * double(inside) / double(kMeasureSamples);
  }

  int dim() const override { return dim_; }
  std::string type() const override { return "points"; }

  bool contains(const double* x) const override {
    for (int k = 0; k < dim_; ++k)
      if (x[k] < lo_[k] - tol_ || x[k] > hi_[k] + tol_) return false;
    return plane_offset(boundary_.nearest(x), x) <= tol_;
  }

  double distance_to_boundary(const double* x) const override {
    return std::abs(plane_offset(boundary_.nearest(x), x));
  }

  void sample_interior(Rng& rng, std::size_t n, double* points) const override {
    draw(rng, n, 0, data_.boundary_begin, points, nullptr);
  }

  void sample_boundary(Rng& rng, std::size_t n, double* points, double* normals) const override {
    draw(rng, n, data_.boundary_begin, n_, points, normals);
  }

  void bounding_box(double* lo, double* hi) const override {
    for (int k = 0; k < dim_; ++k) lo[k] = lo_[k], hi[k] = hi_[k];
  }

  double measure() const override { return measure_; }

  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = "points";
    g.dim = dim_;
    g.lo.assign(lo_, lo_ + dim_);
    g.hi.assign(hi_, hi_ + dim_);
    g.points = data_.points;
    g.normals = data_.normals;
    g.boundary_begin = data_.boundary_begin;
    return g;
  }

 private:
  // (x − b)·n_b for boundary point b: the signed distance from x to b's tangent plane.
  double plane_offset(std::size_t b, const double* x) const {
    const double* p = data_.points.data() + b * dim_;
    const double* nb = data_.normals.data() + (b - data_.boundary_begin) * dim_;
    double s = 0;
    for (int k = 0; k < dim_; ++k) s += (x[k] - p[k]) * nb[k];
    return s;
  }

  // n draws, uniform with replacement over the given points [begin, end).
  void draw(Rng& rng, std::size_t n, std::size_t begin, std::size_t end, double* points,
            double* normals) const {
    const std::size_t count = end - begin;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = begin + std::size_t(pick_index(uniform01(rng), (long long)count));
      std::copy_n(data_.points.data() + j * dim_, dim_, points + i * dim_);
      if (normals) {
        std::copy_n(data_.normals.data() + (j - data_.boundary_begin) * dim_, dim_,
                    normals + i * dim_);
      }
    }
  }

  PointCloudData data_;
  int dim_;
  std::size_t n_;
  KdTree boundary_;
  double lo_[3] = {0, 0, 0}, hi_[3] = {0, 0, 0};
  double tol_ = 0;
  double measure_ = 0;
};

}  // namespace

std::unique_ptr<Domain> make_point_cloud(PointCloudData data) {
  if (data.dim != 2 && data.dim != 3) {
    throw std::invalid_argument("a point cloud is 2D or 3D, found " + std::to_string(data.dim) +
                                "D");
  }
  const std::size_t d = static_cast<std::size_t>(data.dim);
  if (data.points.size() % d != 0) throw std::invalid_argument("the points are not n × dim");
  const std::size_t n = data.points.size() / d;
  if (data.boundary_begin == 0) throw std::invalid_argument("the cloud has no interior points");
  if (data.boundary_begin >= n) throw std::invalid_argument("the cloud has no boundary points");
  if (data.normals.size() != (n - data.boundary_begin) * d) {
    throw std::invalid_argument("the cloud needs one normal per boundary point");
  }
  for (double v : data.points)
    if (!std::isfinite(v)) throw std::invalid_argument("the cloud has a non-finite coordinate");
  for (std::size_t i = 0; i < n - data.boundary_begin; ++i) {
    double s = 0;
    for (std::size_t k = 0; k < d; ++k) s += data.normals[i * d + k] * data.normals[i * d + k];
    if (!(std::abs(std::sqrt(s) - 1) <= 1e-6)) {
      throw std::invalid_argument("boundary normal " + std::to_string(i) + " is not unit length");
    }
  }
  return std::make_unique<PointCloud>(std::move(data));
}

}  // namespace rbfpde
