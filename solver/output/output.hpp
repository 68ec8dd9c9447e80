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

// Cell types of an EvaluationGrid, numbered as VTK numbers them (vtkCellType.h), so that the grid
// means the same with or without VTK in the build.
enum class CellType : unsigned char {
  vertex = 1,
  triangle = 5,
  polygon = 7,
  quad = 9,
  tetra = 10,
  hexahedron = 12,
  wedge = 13,
  pyramid = 14,
};

// Points with cells of mixed types: cell c uses the point ids
// cells[cell_offsets[c] .. cell_offsets[c + 1]) in VTK's vertex order for cell_types[c].
// No cells at all means bare points.
struct EvaluationGrid {
  int dim = 2;
  std::vector<double> points;           // n × dim, row-major
  std::vector<long long> cells;         // point ids of every cell, one cell after the other
  std::vector<long long> cell_offsets;  // n_cells + 1 entries (empty when there are no cells)
  std::vector<CellType> cell_types;     // one per cell
  // A grid over 2D or 3D space and time (dim 3 or 4) is one spatial grid at each of `times`
  // (ascending): points [l·m, (l + 1)·m) are the spatial grid's m points with t = times[l]
  // appended, and the cells are the spatial grid's (point ids < m), the same at every time. Empty
  // for every other grid.
  std::vector<double> times;
  bool time_sliced() const { return !times.empty(); }
  // Points of one time level (all of them when the grid is not time-sliced).
  std::size_t points_per_time() const {
    return times.empty() ? n_points() : n_points() / times.size();
  }
  std::size_t n_points() const { return dim ? points.size() / dim : 0; }
  std::size_t n_cells() const { return cell_types.size(); }
  // Appends a cell of `n` point ids.
  void add_cell(CellType type, const long long* ids, std::size_t n) {
    if (cell_offsets.empty()) cell_offsets.push_back(0);
    cells.insert(cells.end(), ids, ids + n);
    cell_offsets.push_back(static_cast<long long>(cells.size()));
    cell_types.push_back(type);
  }
  std::size_t cell_size(std::size_t c) const {
    return static_cast<std::size_t>(cell_offsets[c + 1] - cell_offsets[c]);
  }
  const long long* cell(std::size_t c) const { return cells.data() + cell_offsets[c]; }
};

// The evaluation grid of `domain` (docs/outputs.md, "solution.vtu"): a regular lattice over
// its bounding box with `resolution` points per axis (quads in 2D, hexahedra in 3D), then
//   - with VTK: clipped at the boundary by VTK's clip filter on the signed distance
//     (−distance_to_boundary inside, + outside), the points the cut creates moved onto the
//     boundary by bisection on their lattice edge with the exact inside test: cells inside stay
//     quads/hexahedra, cut cells become triangles, quads, polygons (2D) or tetrahedra, pyramids,
//     wedges, hexahedra (3D) that end on the boundary;
//   - without VTK: the cells whose corners are all inside, and the points they use.
// A point-cloud domain (geometry type "points") gives its own points instead, with a Delaunay mesh
// of them where VTK is built (cells whose centroid the domain does not contain dropped), bare
// points otherwise. Throws std::invalid_argument for a resolution that does not fit the domain.
EvaluationGrid make_evaluation_grid(const Domain& domain, const std::vector<int>& resolution);

// The lattice alone (no clipping, no point cloud): every point of the bounding box's lattice.
// With dim 4 the last axis is time (see below); 3 axes are always a 3D lattice, since a box alone
// does not say whether its last axis is t.
EvaluationGrid make_lattice(const double* lo, const double* hi, int dim,
                            const std::vector<int>& resolution);

// A domain over space and time (Ω × [start, end], problems/space_time.hpp, Ω 2D or 3D) has a
// time-sliced grid (EvaluationGrid::times): make_evaluation_grid's grid of Ω with the first
// dim − 1 entries of `resolution`, at resolution.back() evenly spaced times from start to end
// (both included). make_lattice with dim 4 likewise repeats the 3D lattice of the box's first
// three axes at resolution[3] times from lo[3] to hi[3].

// Named per-point arrays, each with n_points × components values.
struct PointArray {
  std::string name;
  int components = 1;
  std::vector<double> values;
};

// Level `level` of a time-sliced grid as a grid of its own (dim − 1 coordinates, the cells), and
// the values of `arrays` (given at every point of `grid`) at that level's points.
EvaluationGrid time_level(const EvaluationGrid& grid, std::size_t level);
std::vector<PointArray> time_level(const EvaluationGrid& grid, std::size_t level,
                                   const std::vector<PointArray>& arrays);

// True when this build writes VTK files (CMake option RBFPDE_WITH_VTK).
bool vtk_available();

// solution.vtu and training snapshots: the grid with point arrays (2D points get z = 0). A grid
// without cells is written with one vertex cell per point. A time-sliced grid is refused
// (write_grid_series writes it).
void write_grid_vtu(const std::filesystem::path& path, const EvaluationGrid& grid,
                    const std::vector<PointArray>& arrays);
// A time-sliced grid as a series: <stem>_NNNN.vtu (the level, four digits), one spatial grid (2D
// with z = 0, or 3D) per time level with its values, then <stem>.pvd, a collection of (t, file)
// entries, in `directory`.
void write_grid_series(const std::filesystem::path& directory, const std::string& stem,
                       const EvaluationGrid& grid, const std::vector<PointArray>& arrays);
// centres.vtp, collocation.vtp: points (n × dim) as vertices with point arrays; 3 coordinates
// (3D space, or 2D space and time) are x, y, z as they are. With dim 4
// (3D space and time) the points are (x, y, z) and t is written as the point array `t`.
void write_points_vtp(const std::filesystem::path& path, int dim, const std::vector<double>& points,
                      const std::vector<PointArray>& arrays);
// Points and cells of a VTK XML file (.vtu: its cells; .vtp: bare points) as a grid of
// dimension `dim` (a 2D grid requires z = 0 at every point). Throws InputError naming the file
// when it cannot be read, holds no points or does not fit `dim`.
EvaluationGrid read_vtk_grid(const std::filesystem::path& path, int dim);

// Points of a CSV file whose header names the coordinates x, y (2D) or x, y, z (3D) among its
// columns, in any order; other columns are ignored. With space_dim < dim (a problem with time) the
// last coordinate is named t: x, y, t. Throws InputError naming the file, line and
// column on a missing or extra coordinate column, a cell that is not a finite number, or a row
// with fewer cells than the header.
std::vector<double> read_points_csv(const std::filesystem::path& path, int dim,
                                    int space_dim = 0);

// Coordinates (x, y[, z], or x, y, t with time: space_dim < dim) then one column per array
// component: a scalar array under its name, a vector array as name_x, name_y[, name_z or name_t]. Numbers in the shortest form that reads back exactly.
void write_points_csv(const std::filesystem::path& path, int dim, const std::vector<double>& points,
                      const std::vector<PointArray>& arrays, int space_dim = 0);

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
