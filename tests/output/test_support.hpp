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
  double distance_to_boundary(const double*) const override { return 0; }
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
  double distance_to_boundary(const double*) const override { return 0; }
  void sample_interior(Rng&, std::size_t, double*) const override {}
  void sample_boundary(Rng&, std::size_t, double*, double*) const override {}
  void bounding_box(double* lo, double* hi) const override {
    for (int a = 0; a < dim(); ++a) lo[a] = c_[a] - r_, hi[a] = c_[a] + r_;
  }
  double measure() const override { return 0; }

 private:
  std::vector<double> c_;
  double r_;
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
