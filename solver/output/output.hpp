// Files a run leaves behind (docs/outputs.md). Every writer writes to a temporary file in the target
// directory and renames it over the target, so a reader sees the old file or the new one, never
// a torn one. Writers throw std::runtime_error naming the path on failure.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "problems/domain.hpp"

namespace rbfpde {

// Writes `content` to `path` atomically (temp file in the same directory, fsync, rename).
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

// The evaluation grid: a regular lattice over the domain's bounding box with `resolution` points
// per axis; cells (quads in 2D, hexahedra in 3D) whose vertices are all inside the domain are
// kept, and only the points those cells use.
struct EvaluationGrid {
  int dim = 2;
  std::vector<double> points;          // n × dim, row-major
  std::vector<long long> cells;        // 4 (2D) or 8 (3D) point ids per cell, VTK vertex order
  std::size_t n_points() const { return dim ? points.size() / dim : 0; }
  std::size_t n_cells() const { return cells.size() / (dim == 2 ? 4 : 8); }
};
EvaluationGrid make_evaluation_grid(const Domain& domain, const std::vector<int>& resolution);

// Named per-point arrays, each with n_points × components values.
struct PointArray {
  std::string name;
  int components = 1;
  std::vector<double> values;
};

// True when this build writes VTK files (CMake option RBFPDE_WITH_VTK).
bool vtk_available();

// solution.vtu and training snapshots: the grid with point arrays (2D points get z = 0).
void write_grid_vtu(const std::filesystem::path& path, const EvaluationGrid& grid,
                    const std::vector<PointArray>& arrays);
// centres.vtp, collocation.vtp: points (n × dim) as vertices with point arrays.
void write_points_vtp(const std::filesystem::path& path, int dim, const std::vector<double>& points,
                      const std::vector<PointArray>& arrays);
// training.pvd: a collection of (time, file name relative to the .pvd) entries.
void write_pvd(const std::filesystem::path& path,
               const std::vector<std::pair<double, std::string>>& entries);

// A small JSON builder for summary.json: objects keep insertion order.
class Json {
 public:
  Json();                                   // null
  Json(double v);                           // number (NaN/Inf become null)
  Json(long long v);
  Json(int v) : Json(static_cast<long long>(v)) {}
  Json(unsigned long long v);
  Json(bool v);
  Json(const char* s);
  Json(const std::string& s);
  static Json object();
  static Json array();
  Json& set(const std::string& key, Json value);  // object
  Json& push(Json value);                          // array
  std::string dump(int indent = 2) const;

 private:
  enum class Kind { Null, Number, Integer, Bool, String, Object, Array } kind_ = Kind::Null;
  double number_ = 0;
  long long integer_ = 0;
  bool unsigned_ = false;
  bool bool_ = false;
  std::string string_;
  std::vector<std::pair<std::string, Json>> members_;
  std::vector<Json> items_;
  void dump_to(std::string& out, int indent, int depth) const;
};

// history.csv: header "cycle,seconds,loss,rms_interior,rms_boundary,rel_l2_error,max_error";
// NaN cells (no exact solution) are written empty. Rewritten whole (atomically) on flush().
class HistoryCsv {
 public:
  struct Row {
    long cycle;
    double seconds, loss, rms_interior, rms_boundary, rel_l2_error, max_error;
    double val_rms_interior, val_rms_boundary;  // on the validation set
  };
  void add(const Row& row) { rows_.push_back(row); }
  const std::vector<Row>& rows() const { return rows_; }
  std::string str() const;
  void flush(const std::filesystem::path& path) const { write_file_atomic(path, str()); }

 private:
  std::vector<Row> rows_;
};

}  // namespace rbfpde
