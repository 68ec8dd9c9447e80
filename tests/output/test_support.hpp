// Test-only domains and helpers for the output tests, so they do not depend on problems/*.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "problems/domain.hpp"

namespace rbfpde::test {

// Axis-aligned box in 2D or 3D (closed).
class TestBox : public Domain {
 public:
  TestBox(std::vector<double> lo, std::vector<double> hi)
      : lo_(std::move(lo)), hi_(std::move(hi)) {}
  int dim() const override { return static_cast<int>(lo_.size()); }
  std::string type() const override { return dim() == 2 ? "rectangle" : "box"; }
  bool contains(const double* x) const override {
    for (int a = 0; a < dim(); ++a)
      if (x[a] < lo_[a] || x[a] > hi_[a]) return false;
    return true;
  }
  double distance_to_boundary(const double* x) const override {
    if (contains(x)) {
      double d = INFINITY;
      for (int a = 0; a < dim(); ++a) d = std::min({d, x[a] - lo_[a], hi_[a] - x[a]});
      return d;
    }
    double d2 = 0;
    for (int a = 0; a < dim(); ++a) {
      const double out = std::max({lo_[a] - x[a], x[a] - hi_[a], 0.0});
      d2 += out * out;
    }
    return std::sqrt(d2);
  }
  void sample_interior(Rng&, std::size_t, double*) const override {}
  void sample_boundary(Rng&, std::size_t, double*, double*) const override {}
  void bounding_box(double* lo, double* hi) const override {
    for (int a = 0; a < dim(); ++a) lo[a] = lo_[a], hi[a] = hi_[a];
  }
  double measure() const override { return 0; }

 private:
  std::vector<double> lo_, hi_;
};

// Disk (2D) or ball (3D) about `centre` (closed).
class TestBall : public Domain {
 public:
  TestBall(std::vector<double> centre, double radius) : c_(std::move(centre)), r_(radius) {}
  int dim() const override { return static_cast<int>(c_.size()); }
  std::string type() const override { return dim() == 2 ? "disk" : "ball"; }
  bool contains(const double* x) const override {
    double d2 = 0;
    for (int a = 0; a < dim(); ++a) d2 += (x[a] - c_[a]) * (x[a] - c_[a]);
    return d2 <= r_ * r_;
  }
  double distance_to_boundary(const double* x) const override {
    double d2 = 0;
    for (int a = 0; a < dim(); ++a) d2 += (x[a] - c_[a]) * (x[a] - c_[a]);
    return std::abs(std::sqrt(d2) - r_);
  }
  void sample_interior(Rng&, std::size_t, double*) const override {}
  void sample_boundary(Rng&, std::size_t, double*, double*) const override {}
  void bounding_box(double* lo, double* hi) const override {
    for (int a = 0; a < dim(); ++a) lo[a] = c_[a] - r_, hi[a] = c_[a] + r_;
  }
  const std::vector<double>& centre() const { return c_; }
  double radius() const { return r_; }
  double measure() const override { return 0; }

 private:
  std::vector<double> c_;
  double r_;
};

// A point-cloud domain: its geometry() is of type "points" with the given points; its inside
// test is that of `shape` (the region the points sample).
class TestCloud : public Domain {
 public:
  TestCloud(std::vector<double> points, std::size_t boundary_begin, const Domain& shape)
      : points_(std::move(points)), boundary_begin_(boundary_begin), shape_(shape) {}
  int dim() const override { return shape_.dim(); }
  std::string type() const override { return "points"; }
  bool contains(const double* x) const override { return shape_.contains(x); }
  double distance_to_boundary(const double* x) const override {
    return shape_.distance_to_boundary(x);
  }
  void sample_interior(Rng&, std::size_t, double*) const override {}
  void sample_boundary(Rng&, std::size_t, double*, double*) const override {}
  void bounding_box(double* lo, double* hi) const override { shape_.bounding_box(lo, hi); }
  double measure() const override { return 0; }
  DomainGeometry geometry() const override {
    DomainGeometry g;
    g.type = "points";
    g.dim = dim();
    g.points = points_;
    g.boundary_begin = boundary_begin_;
    g.normals.assign(points_.size() - boundary_begin_ * dim(), 0.0);
    std::vector<double> lo(dim()), hi(dim());
    bounding_box(lo.data(), hi.data());
    g.lo = lo;
    g.hi = hi;
    return g;
  }

 private:
  std::vector<double> points_;
  std::size_t boundary_begin_;
  const Domain& shape_;
};

// The L-shape [0, 2]² less (1, 2]², closed.
class TestLShape : public Domain {
 public:
  int dim() const override { return 2; }
  std::string type() const override { return "polygon"; }
  bool contains(const double* x) const override {
    const bool in_square = x[0] >= 0 && x[0] <= 2 && x[1] >= 0 && x[1] <= 2;
    return in_square && !(x[0] > 1 && x[1] > 1);
  }
  double distance_to_boundary(const double* x) const override {
    // Distance to the six edges.
    const double e[6][4] = {{0, 0, 2, 0}, {2, 0, 2, 1}, {2, 1, 1, 1},
                            {1, 1, 1, 2}, {1, 2, 0, 2}, {0, 2, 0, 0}};
    double best = INFINITY;
    for (const auto& s : e) {
      const double dx = s[2] - s[0], dy = s[3] - s[1];
      double t = ((x[0] - s[0]) * dx + (x[1] - s[1]) * dy) / (dx * dx + dy * dy);
      t = std::clamp(t, 0.0, 1.0);
      best = std::min(best, std::hypot(x[0] - s[0] - t * dx, x[1] - s[1] - t * dy));
    }
    return best;
  }
  void sample_interior(Rng&, std::size_t, double*) const override {}
  void sample_boundary(Rng&, std::size_t, double*, double*) const override {}
  void bounding_box(double* lo, double* hi) const override {
    lo[0] = lo[1] = 0;
    hi[0] = hi[1] = 2;
  }
  double measure() const override { return 3; }
};

// A fresh, empty directory under RBFPDE_TEST_TMP for one test.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(RBFPDE_TEST_TMP) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> directory_listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace rbfpde::test
