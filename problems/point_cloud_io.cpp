// Reading point clouds: CSV (always) and VTK XML PolyData / UnstructuredGrid (when built with
// VTK). Every complaint names the file and the line or array, and says what was expected.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "problems/domain.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkSmartPointer.h>
#include <vtkXMLPolyDataReader.h>
#include <vtkXMLUnstructuredGridReader.h>
#endif

namespace rbfpde {

namespace {

// A normal whose length is off by at most this much is a rounding matter and is normalised;
// beyond it the file is wrong.
constexpr double kNormalTolerance = 1e-3;

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  const std::size_t b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

std::vector<std::string> split_commas(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma == std::string::npos ? comma : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno != ERANGE && std::isfinite(value);
}

// Checks a normal's length: normalised when nearly unit, an error (returned) otherwise.
std::string normalise(double* n, int dim) {
  double s = 0;
  for (int k = 0; k < dim; ++k) s += n[k] * n[k];
  const double length = std::sqrt(s);
  if (!(length > 0)) return "expected an outward unit normal, found the zero vector";
  if (std::abs(length - 1) > kNormalTolerance) {
    return "expected an outward unit normal, found one of length " + fmt(length);
  }
  for (int k = 0; k < dim; ++k) n[k] /= length;
  return "";
}

// Interior points first, then boundary ones, each in file order.
PointCloudData assemble(int dim, const std::vector<double>& interior,
                        const std::vector<double>& boundary, const std::vector<double>& normals,
                        const std::string& path) {
  if (interior.empty()) {
    throw std::invalid_argument(path + ": expected interior points (boundary 0), found none");
  }
  if (boundary.empty()) {
    throw std::invalid_argument(path + ": expected boundary points (boundary 1), found none");
  }
  PointCloudData data;
  data.dim = dim;
  data.points = interior;
  data.points.insert(data.points.end(), boundary.begin(), boundary.end());
  data.normals = normals;
  data.boundary_begin = interior.size() / dim;
  return data;
}

PointCloudData read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read file: " + std::strerror(errno));
  const char* const kExpectedHeader = "x,y[,z],boundary,nx,ny[,nz]";
  std::string line;
  int line_number = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_number;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    header = split_commas(t);
    break;
  }
  if (header.empty()) {
    throw std::invalid_argument(path + ": expected a header " + kExpectedHeader +
                                ", found an empty file");
  }
  const int header_line = line_number;
  const auto at_line = [&](int n) { return path + ":" + std::to_string(n) + ": "; };
  std::map<std::string, std::size_t> column;
  const std::vector<std::string> known = {"x", "y", "z", "boundary", "nx", "ny", "nz"};
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (std::find(known.begin(), known.end(), header[i]) == known.end()) {
      throw std::invalid_argument(at_line(header_line) + "expected a header " + kExpectedHeader +
                                  ", found the column '" + header[i] + "'");
    }
    if (!column.emplace(header[i], i).second) {
      throw std::invalid_argument(at_line(header_line) + "column '" + header[i] +
                                  "' appears twice");
    }
  }
  const int dim = column.count("z") || column.count("nz") ? 3 : 2;
  const std::vector<std::string> coords =
      dim == 3 ? std::vector<std::string>{"x", "y", "z"} : std::vector<std::string>{"x", "y"};
  const std::vector<std::string> normal_names =
      dim == 3 ? std::vector<std::string>{"nx", "ny", "nz"} : std::vector<std::string>{"nx", "ny"};
  std::vector<std::string> required = coords;
  required.push_back("boundary");
  required.insert(required.end(), normal_names.begin(), normal_names.end());
  for (const std::string& name : required) {
    if (!column.count(name)) {
      throw std::invalid_argument(at_line(header_line) + "expected a header " + kExpectedHeader +
                                  " (" + std::to_string(dim) + "D), missing the column '" + name +
                                  "'");
    }
  }

  std::vector<double> interior, boundary, normals;
  while (std::getline(in, line)) {
    ++line_number;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::vector<std::string> fields = split_commas(t);
    if (fields.size() != header.size()) {
      throw std::invalid_argument(
          at_line(line_number) + "expected " + std::to_string(header.size()) + " values (" +
          std::to_string(dim) + "D, as the header), found " + std::to_string(fields.size()));
    }
    auto number = [&](const std::string& name) {
      double v = 0;
      const std::string& text = fields[column.at(name)];
      if (!parse_number(text, v)) {
        throw std::invalid_argument(at_line(line_number) + "column '" + name +
                                    "': expected a finite number, found '" + text + "'");
      }
      return v;
    };
    double x[3], n[3];
    for (int k = 0; k < dim; ++k) x[k] = number(coords[k]);
    const double flag = number("boundary");
    if (flag != 0 && flag != 1) {
      throw std::invalid_argument(at_line(line_number) +
                                  "column 'boundary': expected 0 or 1, found '" +
                                  fields[column.at("boundary")] + "'");
    }
    if (flag == 0) {
      interior.insert(interior.end(), x, x + dim);
      continue;
    }
    for (int k = 0; k < dim; ++k) n[k] = number(normal_names[k]);
    if (const std::string why = normalise(n, dim); !why.empty()) {
      throw std::invalid_argument(at_line(line_number) + why);
    }
    boundary.insert(boundary.end(), x, x + dim);
    normals.insert(normals.end(), n, n + dim);
  }
  if (in.bad()) throw std::invalid_argument(path + ": cannot read file: " + std::strerror(errno));
  return assemble(dim, interior, boundary, normals, path);
}

#ifdef RBFPDE_HAVE_VTK
template <class Reader>
PointCloudData read_vtk(const std::string& path, const char* what) {
  auto reader = vtkSmartPointer<Reader>::New();
  if (!reader->CanReadFile(path.c_str())) {
    throw std::invalid_argument(path + ": expected a VTK XML " + what + " file, found none");
  }
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkPointSet* set = vtkPointSet::SafeDownCast(reader->GetOutputDataObject(0));
  if (reader->GetErrorCode() != 0 || set == nullptr || set->GetPoints() == nullptr) {
    throw std::invalid_argument(path + ": cannot read it as VTK XML " + what);
  }
  const vtkIdType n = set->GetNumberOfPoints();
  vtkDataArray* flags = set->GetPointData()->GetArray("boundary");
  if (flags == nullptr) {
    throw std::invalid_argument(path +
                                ": expected a point array \"boundary\" (0 or 1), found none");
  }
  if (flags->GetNumberOfComponents() != 1) {
    throw std::invalid_argument(path + ": array \"boundary\": expected 1 component, found " +
                                std::to_string(flags->GetNumberOfComponents()));
  }
  vtkDataArray* normal_array = set->GetPointData()->GetArray("Normals");
  if (normal_array == nullptr) normal_array = set->GetPointData()->GetNormals();
  if (normal_array == nullptr) {
    throw std::invalid_argument(path + ": expected a point array \"Normals\", found none");
  }
  const int nc = normal_array->GetNumberOfComponents();
  if (nc != 2 && nc != 3) {
    throw std::invalid_argument(path + ": array \"Normals\": expected 3 components, found " +
                                std::to_string(nc));
  }
  // VTK stores 3 coordinates per point: the cloud is 2D when every z is 0.
  int dim = 2;
  for (vtkIdType i = 0; i < n && dim == 2; ++i)
    if (set->GetPoint(i)[2] != 0) dim = 3;
  if (dim == 3 && nc == 2) {
    throw std::invalid_argument(
        path + ": array \"Normals\": expected 3 components for 3D points, found 2");
  }
  std::vector<double> interior, boundary, normals;
  for (vtkIdType i = 0; i < n; ++i) {
    const double* p = set->GetPoint(i);
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(p[k])) {
        throw std::invalid_argument(path + ": point " + std::to_string(i) +
                                    ": expected finite coordinates");
      }
    }
    const double flag = flags->GetComponent(i, 0);
    if (flag != 0 && flag != 1) {
      throw std::invalid_argument(path + ": array \"boundary\", point " + std::to_string(i) +
                                  ": expected 0 or 1, found " + fmt(flag));
    }
    if (flag == 0) {
      interior.insert(interior.end(), p, p + dim);
      continue;
    }
    double m[3] = {0, 0, 0};
    for (int k = 0; k < nc; ++k) m[k] = normal_array->GetComponent(i, k);
    if (dim == 2 && nc == 3 && m[2] != 0) {
      throw std::invalid_argument(path + ": array \"Normals\", point " + std::to_string(i) +
                                  ": expected nz = 0 for a 2D cloud (every z is 0), found " +
                                  fmt(m[2]));
    }
    if (const std::string why = normalise(m, dim); !why.empty()) {
      throw std::invalid_argument(path + ": array \"Normals\", point " + std::to_string(i) + ": " +
                                  why);
    }
    boundary.insert(boundary.end(), p, p + dim);
    normals.insert(normals.end(), m, m + dim);
  }
  return assemble(dim, interior, boundary, normals, path);
}
#endif

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  std::string tail = s.substr(s.size() - suffix.size());
  for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return tail == suffix;
}

}  // namespace

PointCloudData read_point_cloud(const std::string& path) {
  const bool vtp = ends_with(path, ".vtp"), vtu = ends_with(path, ".vtu");
  if (!vtp && !vtu && !ends_with(path, ".csv")) {
    throw std::invalid_argument(path + ": expected a .csv, .vtp or .vtu file");
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw std::invalid_argument(path + ": cannot read file: it is a directory");
  }
  {
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw std::invalid_argument(path + ": cannot read file: " + std::strerror(errno));
  }
  if (!vtp && !vtu) return read_csv(path);
#ifdef RBFPDE_HAVE_VTK
  if (vtp) return read_vtk<vtkXMLPolyDataReader>(path, "PolyData (.vtp)");
  return read_vtk<vtkXMLUnstructuredGridReader>(path, "UnstructuredGrid (.vtu)");
#else
  throw std::invalid_argument(path +
                              ": this build has no VTK, so it cannot read .vtp or .vtu files; "
                              "give the cloud as CSV");
#endif
}

}  // namespace rbfpde
