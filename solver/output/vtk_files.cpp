// solution.vtu, centres.vtp, collocation.vtp (VTK's XML writers), training.pvd and the
// solution.pvd series of a problem with time (plain XML).
// VTK writes into memory; write_file_atomic then puts the bytes on disk, so the VTK files get the
// same temp-file-and-rename guarantee and the same error messages as every other output.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <system_error>

#include "solver/output/output.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkCellArray.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPolyDataWriter.h>
#include <vtkXMLUnstructuredGridWriter.h>
#endif

namespace rbfpde {
namespace {

void check_arrays(const std::filesystem::path& path, std::size_t n_points,
                  const std::vector<PointArray>& arrays) {
  for (const PointArray& a : arrays) {
    if (a.name.empty()) {
      throw std::invalid_argument("cannot write " + path.string() + ": a point array has no name");
    }
    if (a.components < 1 || a.values.size() != n_points * static_cast<std::size_t>(a.components)) {
      throw std::invalid_argument("cannot write " + path.string() + ": point array '" + a.name +
                                  "' has " + std::to_string(a.values.size()) +
                                  " values, expected " + std::to_string(n_points) + " points × " +
                                  std::to_string(a.components) + " components");
    }
  }
}

void check_dim(const std::filesystem::path& path, int dim) {
  if (dim != 2 && dim != 3) {
    throw std::invalid_argument("cannot write " + path.string() +
                                ": dimension must be 2 or 3, got " + std::to_string(dim));
  }
}

#ifdef RBFPDE_HAVE_VTK

vtkSmartPointer<vtkPoints> make_points(int dim, const std::vector<double>& coords) {
  const vtkIdType n = static_cast<vtkIdType>(coords.size() / dim);
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(n);
  for (vtkIdType p = 0; p < n; ++p) {
    const double* x = coords.data() + p * dim;
    points->SetPoint(p, x[0], x[1], dim == 3 ? x[2] : 0.0);
  }
  return points;
}

void add_point_arrays(vtkPointData* point_data, const std::vector<PointArray>& arrays) {
  for (const PointArray& a : arrays) {
    vtkNew<vtkDoubleArray> array;
    array->SetName(a.name.c_str());
    array->SetNumberOfComponents(a.components);
    array->SetNumberOfTuples(static_cast<vtkIdType>(a.values.size() / a.components));
    std::copy(a.values.begin(), a.values.end(), array->GetPointer(0));
    point_data->AddArray(array);
  }
}

// Binary appended data, zlib-compressed (VTK's default compressor), raw rather than base64, with
// 64-bit headers so that large grids fit.
template <class Writer>
void write_vtk_xml(const std::filesystem::path& path, Writer* writer) {
  writer->SetDataModeToAppended();
  writer->EncodeAppendedDataOff();
  writer->SetCompressorTypeToZLib();
  writer->SetHeaderTypeToUInt64();
  writer->WriteToOutputStringOn();
  if (writer->Write() != 1) {
    throw std::runtime_error("cannot write " + path.string() + ": VTK writer failed");
  }
  write_file_atomic(path, writer->GetOutputString());
}

#endif  // RBFPDE_HAVE_VTK

std::string xml_attribute(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Shortest text that reads back as the same double.
std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

}  // namespace

void write_grid_vtu(const std::filesystem::path& path, const EvaluationGrid& grid,
                    const std::vector<PointArray>& arrays) {
  if (grid.time_sliced())
    throw std::invalid_argument("cannot write " + path.string() +
                                ": a grid over space and time is a series (write_grid_series)");
  check_dim(path, grid.dim);
  check_arrays(path, grid.n_points(), arrays);
#ifdef RBFPDE_HAVE_VTK
  vtkNew<vtkUnstructuredGrid> ugrid;
  ugrid->SetPoints(make_points(grid.dim, grid.points));
  const std::size_t n_points = grid.n_points();
  if (grid.n_cells() == 0) {
    ugrid->Allocate(static_cast<vtkIdType>(n_points));
    for (vtkIdType p = 0; p < static_cast<vtkIdType>(n_points); ++p)
      ugrid->InsertNextCell(VTK_VERTEX, 1, &p);
  } else {
    ugrid->Allocate(static_cast<vtkIdType>(grid.n_cells()));
    std::vector<vtkIdType> ids;
    for (std::size_t c = 0; c < grid.n_cells(); ++c) {
      ids.assign(grid.cell(c), grid.cell(c) + grid.cell_size(c));
      for (vtkIdType v : ids) {
        if (v < 0 || v >= static_cast<vtkIdType>(n_points))
          throw std::invalid_argument("cannot write " + path.string() + ": cell " +
                                      std::to_string(c) + " uses point " + std::to_string(v) +
                                      " of " + std::to_string(n_points));
      }
      ugrid->InsertNextCell(static_cast<int>(grid.cell_types[c]),
                            static_cast<vtkIdType>(ids.size()), ids.data());
    }
  }
  add_point_arrays(ugrid->GetPointData(), arrays);

  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->SetInputData(ugrid);
  write_vtk_xml(path, writer.Get());
#else
  throw std::runtime_error("built without VTK: cannot write " + path.string());
#endif
}

void write_points_vtp(const std::filesystem::path& path, int dim, const std::vector<double>& points,
                      const std::vector<PointArray>& arrays) {
  if (dim != 4) check_dim(path, dim);
  if (points.size() % dim != 0) {
    throw std::invalid_argument("cannot write " + path.string() + ": " +
                                std::to_string(points.size()) +
                                " coordinates is not a multiple of " + std::to_string(dim));
  }
  const std::size_t n = points.size() / dim;
  check_arrays(path, n, arrays);
  if (dim == 4) {
    // 3D space and time: VTK points are 3D, so t travels as a point array.
    std::vector<double> space(n * 3);
    PointArray t{"t", 1, std::vector<double>(n)};
    for (std::size_t p = 0; p < n; ++p) {
      std::copy(points.begin() + p * 4, points.begin() + p * 4 + 3, space.begin() + p * 3);
      t.values[p] = points[p * 4 + 3];
    }
    std::vector<PointArray> with_t = arrays;
    with_t.push_back(std::move(t));
    write_points_vtp(path, 3, space, with_t);
    return;
  }
#ifdef RBFPDE_HAVE_VTK
  // One vertex cell per point: without cells ParaView's default Surface view draws nothing.
  vtkNew<vtkCellArray> verts;
  verts->AllocateExact(static_cast<vtkIdType>(n), static_cast<vtkIdType>(n));
  for (vtkIdType p = 0; p < static_cast<vtkIdType>(n); ++p) verts->InsertNextCell(1, &p);
  vtkNew<vtkPolyData> poly;
  poly->SetPoints(make_points(dim, points));
  poly->SetVerts(verts);
  add_point_arrays(poly->GetPointData(), arrays);

  vtkNew<vtkXMLPolyDataWriter> writer;
  writer->SetInputData(poly);
  write_vtk_xml(path, writer.Get());
#else
  throw std::runtime_error("built without VTK: cannot write " + path.string());
#endif
}

bool vtk_available() {
#ifdef RBFPDE_HAVE_VTK
  return true;
#else
  return false;
#endif
}

void write_grid_series(const std::filesystem::path& directory, const std::string& stem,
                       const EvaluationGrid& grid, const std::vector<PointArray>& arrays) {
  const std::filesystem::path pvd = directory / (stem + ".pvd");
  if (!grid.time_sliced())
    throw std::invalid_argument("cannot write " + pvd.string() + ": the grid has no time levels");
  check_arrays(pvd, grid.n_points(), arrays);
  std::vector<std::pair<double, std::string>> entries;
  for (std::size_t l = 0; l < grid.times.size(); ++l) {
    char name[32];
    std::snprintf(name, sizeof name, "_%04zu.vtu", l);
    const std::string file = stem + name;
    write_grid_vtu(directory / file, time_level(grid, l), time_level(grid, l, arrays));
    entries.emplace_back(grid.times[l], file);
  }
  write_pvd(pvd, entries);
}

void write_pvd(const std::filesystem::path& path,
               const std::vector<std::pair<double, std::string>>& entries) {
  std::string xml =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"0.1\">\n"
      "  <Collection>\n";
  for (const auto& [time, file] : entries) {
    xml +=
        "    <DataSet timestep=\"" + shortest(time) + "\" file=\"" + xml_attribute(file) + "\"/>\n";
  }
  xml +=
      "  </Collection>\n"
      "</VTKFile>\n";
  write_file_atomic(path, xml);
}

}  // namespace rbfpde
