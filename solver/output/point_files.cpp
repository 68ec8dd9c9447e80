// Points from the user's files (CSV, VTK XML) for `rbfpde eval`, and values at points as CSV.
// Every problem with an input file is an InputError naming the file (and line and column for a
// CSV), raised before anything is written.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "problems/errors.hpp"
#include "solver/output/output.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkObject.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPolyData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde {
namespace {

const char* const kAxes[3] = {"x", "y", "z"};

std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The cells of one CSV line with the 1-based column where each starts.
std::vector<std::pair<std::string, int>> split_csv(const std::string& line) {
  std::vector<std::pair<std::string, int>> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    const std::size_t end = comma == std::string::npos ? line.size() : comma;
    cells.emplace_back(trim(line.substr(start, end - start)), static_cast<int>(start) + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cells;
}

// Coordinate a's column name: x, y, z over space, t for the last coordinate of a problem with
// time (space_dim < dim) and for a fourth coordinate (3D space and time).
std::string axis_name(int a, int dim, int space_dim) {
  if ((space_dim > 0 && space_dim < dim && a == dim - 1) || a >= 3) return "t";
  return kAxes[a];
}

std::string axes_list(int dim, int space_dim) {
  std::string s;
  for (int a = 0; a < dim; ++a) s += (a ? "," : "") + axis_name(a, dim, space_dim);
  return s;
}

}  // namespace

std::vector<double> read_points_csv(const std::filesystem::path& path, int dim, int space_dim) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw InputError(file + ": cannot read file");
  std::string line;
  int line_no = 1;
  if (!std::getline(in, line))
    throw InputError(
        SourceLoc{file, 1, 1}, "",
        "expected a header line with the columns " + axes_list(dim, space_dim) + ", found an empty file");
  const auto header = split_csv(line);
  // The coordinate columns: x, y[, z] exactly as the model's dimension asks; others are ignored.
  int column_of[4] = {-1, -1, -1, -1};
  for (std::size_t c = 0; c < header.size(); ++c) {
    for (int a = 0; a < std::max(dim, 3); ++a) {
      const std::string name = a < dim ? axis_name(a, dim, space_dim) : kAxes[a];
      if (header[c].first != name) continue;
      if (a >= dim)
        throw InputError(SourceLoc{file, 1, header[c].second}, "",
                         "expected the columns " + axes_list(dim, space_dim) + " of a " +
                             std::to_string(dim) + "D model, found a column " + name);
      if (column_of[a] >= 0)
        throw InputError(SourceLoc{file, 1, header[c].second}, "",
                         "expected one column " + name + ", found two");
      column_of[a] = static_cast<int>(c);
    }
  }
  for (int a = 0; a < dim; ++a)
    if (column_of[a] < 0)
      throw InputError(SourceLoc{file, 1, 1}, "",
                       "expected the columns " + axes_list(dim, space_dim) + " of a " + std::to_string(dim) +
                           "D model, found no column " + axis_name(a, dim, space_dim) +
                           " in the header \"" +
                           trim(line) + "\"");
  std::vector<double> points;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const auto cells = split_csv(line);
    for (int a = 0; a < dim; ++a) {
      const std::size_t c = static_cast<std::size_t>(column_of[a]);
      if (c >= cells.size())
        throw InputError(SourceLoc{file, line_no, static_cast<int>(line.size()) + 1}, "",
                         "expected " + std::to_string(header.size()) + " columns, found " +
                             std::to_string(cells.size()));
      const std::string& text = cells[c].first;
      double v = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() ||
          !std::isfinite(v))
        throw InputError(
            SourceLoc{file, line_no, cells[c].second}, "",
            "expected a finite number for " + axis_name(a, dim, space_dim) + ", found \"" + text +
                "\"");
      points.push_back(v);
    }
  }
  if (points.empty())
    throw InputError(SourceLoc{file, line_no, 1}, "", "expected at least one point, found none");
  return points;
}

void write_points_csv(const std::filesystem::path& path, int dim, const std::vector<double>& points,
                      const std::vector<PointArray>& arrays, int space_dim) {
  const std::size_t n = points.size() / static_cast<std::size_t>(dim);
  std::string text = axes_list(dim, space_dim);
  for (const PointArray& a : arrays) {
    if (a.values.size() != n * static_cast<std::size_t>(a.components))
      throw std::invalid_argument("cannot write " + path.string() + ": point array '" + a.name +
                                  "' does not have " + std::to_string(n) + " points");
    if (a.components == 1) {
      text += "," + a.name;
    } else {
      for (int k = 0; k < a.components; ++k)
        text += "," + a.name + "_" + (k < dim ? axis_name(k, dim, space_dim) : std::to_string(k));
    }
  }
  text += "\n";
  for (std::size_t p = 0; p < n; ++p) {
    for (int a = 0; a < dim; ++a) text += (a ? "," : "") + shortest(points[p * dim + a]);
    for (const PointArray& a : arrays)
      for (int k = 0; k < a.components; ++k) text += "," + shortest(a.values[p * a.components + k]);
    text += "\n";
  }
  write_file_atomic(path, text);
}

#ifdef RBFPDE_HAVE_VTK

namespace {

// VTK's readers report errors on their own output window; reading quietly keeps the one-line
// error rule, and the checks below say what was wrong.
class QuietVtk {
 public:
  QuietVtk() : was_(vtkObject::GetGlobalWarningDisplay()) { vtkObject::GlobalWarningDisplayOff(); }
  ~QuietVtk() { vtkObject::SetGlobalWarningDisplay(was_); }
  QuietVtk(const QuietVtk&) = delete;
  QuietVtk& operator=(const QuietVtk&) = delete;

 private:
  int was_;
};

template <class Reader>
EvaluationGrid read_with(const std::string& file, int dim, bool keep_cells) {
  QuietVtk quiet;
  vtkNew<Reader> reader;
  if (!reader->CanReadFile(file.c_str()))
    throw InputError(file + ": expected a VTK XML " +
                     (keep_cells ? std::string("UnstructuredGrid") : std::string("PolyData")) +
                     " file, found something else");
  reader->SetFileName(file.c_str());
  reader->Update();
  vtkDataSet* data = reader->GetOutputAsDataSet();
  if (reader->GetErrorCode() != 0 || !data)
    throw InputError(file + ": the VTK reader failed on it");
  const vtkIdType np = data->GetNumberOfPoints();
  if (np == 0) throw InputError(file + ": expected points, found none");
  EvaluationGrid grid;
  grid.dim = dim;
  grid.points.reserve(static_cast<std::size_t>(np * dim));
  for (vtkIdType p = 0; p < np; ++p) {
    double x[3];
    data->GetPoint(p, x);
    for (int a = 0; a < 3; ++a) {
      if (!std::isfinite(x[a]))
        throw InputError(file + ": point " + std::to_string(p) + " is not finite");
    }
    if (dim == 2 && x[2] != 0)
      throw InputError(file + ": expected the points of a 2D model (z = 0), found z = " +
                       shortest(x[2]) + " at point " + std::to_string(p));
    grid.points.insert(grid.points.end(), x, x + std::min(dim, 3));
    if (dim == 4) grid.points.push_back(0.0);  // t, from the point array below
  }
  if (dim == 4) {
    // 3D space and time: VTK points are 3D, t is the point array `t` (as write_points_vtp writes
    // it); the cells of a 4D model's points mean nothing, so the points are read bare.
    vtkDataArray* t = data->GetPointData()->GetArray("t");
    if (!t || t->GetNumberOfComponents() != 1 || t->GetNumberOfTuples() != np)
      throw InputError(file +
                       ": expected a point array t (one time per point) for a model with "
                       "time, found " +
                       std::string(t ? "a t of another shape" : "none"));
    for (vtkIdType p = 0; p < np; ++p) {
      const double v = t->GetTuple1(p);
      if (!std::isfinite(v))
        throw InputError(file + ": t at point " + std::to_string(p) + " is not finite");
      grid.points[static_cast<std::size_t>(p) * 4 + 3] = v;
    }
    return grid;
  }
  if (keep_cells) {
    vtkNew<vtkIdList> ids;
    std::vector<long long> v;
    for (vtkIdType c = 0; c < data->GetNumberOfCells(); ++c) {
      data->GetCellPoints(c, ids);
      v.resize(static_cast<std::size_t>(ids->GetNumberOfIds()));
      for (vtkIdType k = 0; k < ids->GetNumberOfIds(); ++k) v[k] = ids->GetId(k);
      grid.add_cell(static_cast<CellType>(data->GetCellType(c)), v.data(), v.size());
    }
  }
  return grid;
}

}  // namespace

EvaluationGrid read_vtk_grid(const std::filesystem::path& path, int dim) {
  const std::string file = path.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(file + ": cannot read file");
  const std::string ext = path.extension().string();
  if (ext == ".vtu") return read_with<vtkXMLUnstructuredGridReader>(file, dim, true);
  if (ext == ".vtp") return read_with<vtkXMLPolyDataReader>(file, dim, false);
  throw InputError(file + ": expected a .vtu or .vtp file, found \"" + ext + "\"");
}

#else

EvaluationGrid read_vtk_grid(const std::filesystem::path& path, int) {
  throw InputError(path.string() + ": this build has no VTK and cannot read VTK files");
}

#endif  // RBFPDE_HAVE_VTK

}  // namespace rbfpde
