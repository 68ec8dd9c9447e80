// The evaluation grid behind solution.vtu: a lattice over the bounding box cut at the domain's
// boundary, so that ParaView shows the solution over the domain with its curved edges curved.
// VTK's clip filter does the cutting on the signed distance; the points it creates, linear
// interpolations of the distance along lattice edges, are then moved onto the boundary by
// bisection on their edge with the domain's exact inside test.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "problems/space_time.hpp"
#include "solver/output/output.hpp"

#ifdef RBFPDE_HAVE_VTK
#include <vtkCellArray.h>
#include <vtkCellType.h>
#include <vtkDelaunay2D.h>
#include <vtkDelaunay3D.h>
#include <vtkDoubleArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkTableBasedClipDataSet.h>
#include <vtkUnstructuredGrid.h>
#endif

namespace rbfpde {
namespace {

struct Lattice {
  int dim = 2;
  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};
  std::array<long long, 3> n{1, 1, 1};

  // lo·(1−t) + hi·t hits both ends of the box exactly, so boundary lattice points of a box domain
  // test as inside.
  double coordinate(int axis, long long i) const {
    const double t = static_cast<double>(i) / static_cast<double>(n[axis] - 1);
    return lo[axis] * (1.0 - t) + hi[axis] * t;
  }
  long long id(long long i, long long j, long long k) const { return i + n[0] * (j + n[1] * k); }
  // Where x lies on `axis` in lattice units (i + fraction).
  double lattice_units(int axis, double x) const {
    return (x - lo[axis]) / (hi[axis] - lo[axis]) * static_cast<double>(n[axis] - 1);
  }
  // The lattice cell interval [i, i + 1] on `axis` that holds x.
  long long interval_of(int axis, double x) const {
    const double t = lattice_units(axis, x);
    long long i = std::clamp<long long>(static_cast<long long>(std::floor(t)), 0, n[axis] - 2);
    if (i > 0 && x < coordinate(axis, i)) --i;
    if (i + 2 < n[axis] && x > coordinate(axis, i + 1)) ++i;
    return i;
  }
};

Lattice lattice_of(const double* lo, const double* hi, int dim,
                   const std::vector<int>& resolution) {
  if (dim != 2 && dim != 3) {
    throw std::invalid_argument("evaluation grid: domain dimension must be 2 or 3, got " +
                                std::to_string(dim));
  }
  if (static_cast<int>(resolution.size()) != dim) {
    throw std::invalid_argument("evaluation grid: resolution has " +
                                std::to_string(resolution.size()) + " entries, the domain is " +
                                std::to_string(dim) + "D");
  }
  for (int r : resolution) {
    if (r < 2) {
      throw std::invalid_argument("evaluation grid: resolution must be at least 2 per axis, got " +
                                  std::to_string(r));
    }
  }
  Lattice l;
  l.dim = dim;
  for (int a = 0; a < dim; ++a) {
    l.lo[a] = lo[a];
    l.hi[a] = hi[a];
    l.n[a] = resolution[a];
  }
  return l;
}

// Every lattice point in lattice order (x fastest) and every lattice cell, vertices in VTK order:
// the bottom face counter-clockwise seen from +z (quad), then the top face in the same order
// (hexahedron).
EvaluationGrid full_lattice(const Lattice& l) {
  EvaluationGrid grid;
  grid.dim = l.dim;
  const long long nk = l.dim == 3 ? l.n[2] : 1;
  grid.points.reserve(static_cast<std::size_t>(l.n[0] * l.n[1] * nk * l.dim));
  for (long long k = 0; k < nk; ++k)
    for (long long j = 0; j < l.n[1]; ++j)
      for (long long i = 0; i < l.n[0]; ++i) {
        grid.points.push_back(l.coordinate(0, i));
        grid.points.push_back(l.coordinate(1, j));
        if (l.dim == 3) grid.points.push_back(l.coordinate(2, k));
      }
  const int corners = l.dim == 2 ? 4 : 8;
  const CellType type = l.dim == 2 ? CellType::quad : CellType::hexahedron;
  const long long cell_layers = l.dim == 3 ? l.n[2] - 1 : 1;
  for (long long k = 0; k < cell_layers; ++k)
    for (long long j = 0; j + 1 < l.n[1]; ++j)
      for (long long i = 0; i + 1 < l.n[0]; ++i) {
        const long long v[8] = {l.id(i, j, k),
                                l.id(i + 1, j, k),
                                l.id(i + 1, j + 1, k),
                                l.id(i, j + 1, k),
                                l.id(i, j, k + 1),
                                l.id(i + 1, j, k + 1),
                                l.id(i + 1, j + 1, k + 1),
                                l.id(i, j + 1, k + 1)};
        grid.add_cell(type, v, corners);
      }
  return grid;
}

// Drops the points no cell uses, keeping the order of the others.
void drop_unused_points(EvaluationGrid& grid) {
  std::vector<long long> new_id(grid.n_points(), -1);
  for (long long v : grid.cells) new_id[static_cast<std::size_t>(v)] = 0;
  std::vector<double> kept;
  kept.reserve(grid.points.size());
  long long next = 0;
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    if (new_id[p] < 0) continue;
    new_id[p] = next++;
    kept.insert(kept.end(), grid.points.begin() + p * grid.dim,
                grid.points.begin() + (p + 1) * grid.dim);
  }
  grid.points.swap(kept);
  for (long long& v : grid.cells) v = new_id[static_cast<std::size_t>(v)];
}

// The cells whose corners are all inside (the grid when VTK is not built).
[[maybe_unused]] EvaluationGrid inside_cells(const Domain& domain, const Lattice& l) {
  const EvaluationGrid lattice = full_lattice(l);
  std::vector<char> inside(lattice.n_points());
  for (std::size_t p = 0; p < lattice.n_points(); ++p)
    inside[p] = domain.contains(&lattice.points[p * l.dim]) ? 1 : 0;
  EvaluationGrid grid;
  grid.dim = l.dim;
  grid.points = lattice.points;
  for (std::size_t c = 0; c < lattice.n_cells(); ++c) {
    const long long* v = lattice.cell(c);
    bool keep = true;
    for (std::size_t k = 0; k < lattice.cell_size(c) && keep; ++k) keep = inside[v[k]] != 0;
    if (keep) grid.add_cell(lattice.cell_types[c], v, lattice.cell_size(c));
  }
  drop_unused_points(grid);
  return grid;
}

// A point the clip created on a lattice edge (all coordinates but one on the lattice) moves onto
// the boundary: bisection between the edge's ends with the exact inside test, ending at the last
// inside point, at most a few units in the last place from the boundary. Lattice points are
// snapped onto the lattice; the centre points the 3D clip tables add inside some cells stay. VTK
// interpolates the coordinates that are the same at both ends of an edge too, so they come back
// within rounding of the lattice, not exactly on it: kLatticeTolerance (in lattice units) says
// "on it".
constexpr double kLatticeTolerance = 1e-9;

[[maybe_unused]] void move_onto_boundary(const Domain& domain, const Lattice& l, double* x) {
  int off_axis = -1;
  for (int a = 0; a < l.dim; ++a) {
    const double t = l.lattice_units(a, x[a]);
    if (std::abs(t - std::round(t)) <= kLatticeTolerance) continue;
    if (off_axis >= 0) return;  // off the lattice on two axes: not an edge point
    off_axis = a;
  }
  if (off_axis < 0) {  // a lattice point
    for (int k = 0; k < l.dim; ++k) x[k] = l.coordinate(k, std::llround(l.lattice_units(k, x[k])));
    return;
  }
  const long long i = l.interval_of(off_axis, x[off_axis]);
  // The edge's ends: the other coordinates snapped to their lattice values.
  double a[3] = {0, 0, 0};
  for (int k = 0; k < l.dim; ++k)
    a[k] = k == off_axis ? 0.0 : l.coordinate(k, std::llround(l.lattice_units(k, x[k])));
  double b[3] = {a[0], a[1], a[2]};
  a[off_axis] = l.coordinate(off_axis, i);
  b[off_axis] = l.coordinate(off_axis, i + 1);
  const bool a_in = domain.contains(a), b_in = domain.contains(b);
  if (a_in == b_in) return;  // the inside test sees no crossing: keep VTK's point
  double in = a_in ? a[off_axis] : b[off_axis], out = a_in ? b[off_axis] : a[off_axis];
  double p[3] = {a[0], a[1], a[2]};
  for (int it = 0; it < 200; ++it) {
    const double mid = 0.5 * (in + out);
    if (mid == in || mid == out) break;
    p[off_axis] = mid;
    (domain.contains(p) ? in : out) = mid;
  }
  for (int k = 0; k < l.dim; ++k) x[k] = a[k];
  x[off_axis] = in;
}

// The inside cells (on the lattice's points, ids < n_lattice) and the cut cells (on the points
// after them) as one mesh: a cut point at a lattice point becomes that point, cut points at the
// same place become one. Cut cells left without a measure go: a 2D cell loses its repeated
// corners (and becomes a triangle or quad when that is what is left) and goes when fewer than 3
// are left; a 3D cell goes with fewer than 4 distinct corners, and otherwise keeps a repeated one,
// as it still has a volume. Cut cells whose centroid (the mean of their corners) lies outside the
// domain go too. Points no cell uses are dropped.
[[maybe_unused]] EvaluationGrid merge_cut_points(const Domain& domain, const Lattice& l,
                                                 EvaluationGrid grid, std::size_t n_lattice) {
  struct CoordinateHash {
    std::size_t operator()(const std::array<double, 3>& x) const {
      std::size_t h = 0;
      for (double v : x) h = h * 1000003u ^ std::hash<double>()(v);
      return h;
    }
  };
  const int dim = grid.dim;
  std::unordered_map<std::array<double, 3>, long long, CoordinateHash> cut_index;
  std::vector<long long> new_id(grid.n_points());
  std::vector<double> points(grid.points.begin(), grid.points.begin() + n_lattice * dim);
  for (std::size_t p = 0; p < n_lattice; ++p) new_id[p] = static_cast<long long>(p);
  for (std::size_t p = n_lattice; p < grid.n_points(); ++p) {
    const double* x = &grid.points[p * dim];
    long long i[3] = {0, 0, 0};
    bool on_lattice = true;
    for (int a = 0; a < dim && on_lattice; ++a) {
      i[a] = std::llround(l.lattice_units(a, x[a]));
      on_lattice = i[a] >= 0 && i[a] < l.n[a] && l.coordinate(a, i[a]) == x[a];
    }
    if (on_lattice) {
      new_id[p] = l.id(i[0], i[1], i[2]);
      continue;
    }
    std::array<double, 3> key{0, 0, 0};
    for (int a = 0; a < dim; ++a) key[a] = x[a] + 0.0;  // −0 and 0 alike
    const auto [it, added] = cut_index.emplace(key, static_cast<long long>(points.size() / dim));
    if (added) points.insert(points.end(), key.begin(), key.begin() + dim);
    new_id[p] = it->second;
  }

  EvaluationGrid out;
  out.dim = dim;
  out.points = std::move(points);
  std::vector<long long> ids, ring;
  for (std::size_t c = 0; c < grid.n_cells(); ++c) {
    const long long* v = grid.cell(c);
    const std::size_t k = grid.cell_size(c);
    bool cut = false;
    for (std::size_t i = 0; i < k; ++i) cut = cut || static_cast<std::size_t>(v[i]) >= n_lattice;
    if (!cut) {
      out.add_cell(grid.cell_types[c], v, k);
      continue;
    }
    ids.clear();
    for (std::size_t i = 0; i < k; ++i) ids.push_back(new_id[v[i]]);
    double centroid[3] = {0, 0, 0};
    for (long long id : ids)
      for (int a = 0; a < dim; ++a) centroid[a] += out.points[id * dim + a] / double(k);
    if (!domain.contains(centroid)) continue;
    if (dim == 2) {
      ring.clear();
      for (std::size_t i = 0; i < k; ++i)
        if (ids[i] != ids[(i + 1) % k]) ring.push_back(ids[i]);
      if (ring.size() < 3) continue;
      const CellType type = ring.size() == 3   ? CellType::triangle
                            : ring.size() == 4 ? CellType::quad
                                               : CellType::polygon;
      out.add_cell(type, ring.data(), ring.size());
    } else {
      ring = ids;
      std::sort(ring.begin(), ring.end());
      if (std::unique(ring.begin(), ring.end()) - ring.begin() < 4) continue;
      out.add_cell(grid.cell_types[c], ids.data(), k);
    }
  }
  drop_unused_points(out);
  return out;
}

#ifdef RBFPDE_HAVE_VTK

vtkSmartPointer<vtkPoints> vtk_points(const EvaluationGrid& grid) {
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(static_cast<vtkIdType>(grid.n_points()));
  for (std::size_t p = 0; p < grid.n_points(); ++p) {
    const double* x = &grid.points[p * grid.dim];
    points->SetPoint(static_cast<vtkIdType>(p), x[0], x[1], grid.dim == 3 ? x[2] : 0.0);
  }
  return points;
}

// The cells and points of a VTK data set as a grid of dimension `dim`.
EvaluationGrid grid_of(vtkDataSet* data, int dim) {
  EvaluationGrid grid;
  grid.dim = dim;
  const vtkIdType np = data->GetNumberOfPoints();
  grid.points.reserve(static_cast<std::size_t>(np * dim));
  for (vtkIdType p = 0; p < np; ++p) {
    double x[3];
    data->GetPoint(p, x);
    grid.points.insert(grid.points.end(), x, x + dim);
  }
  vtkNew<vtkIdList> ids;
  std::vector<long long> v;
  for (vtkIdType c = 0; c < data->GetNumberOfCells(); ++c) {
    data->GetCellPoints(c, ids);
    v.resize(static_cast<std::size_t>(ids->GetNumberOfIds()));
    for (vtkIdType k = 0; k < ids->GetNumberOfIds(); ++k) v[k] = ids->GetId(k);
    grid.add_cell(static_cast<CellType>(data->GetCellType(c)), v.data(), v.size());
  }
  return grid;
}

// The cells wholly inside are kept as they are, those wholly outside dropped, and only the cells
// the boundary crosses go through VTK's clip.
EvaluationGrid clipped_lattice(const Domain& domain, const Lattice& l) {
  const EvaluationGrid lattice = full_lattice(l);
  const std::size_t np = lattice.n_points();
  // The value clipped on: the distance to the boundary, negative where the exact inside test
  // holds. The clip keeps values strictly below 0, so a lattice point on the boundary (distance 0)
  // gets −floor, far below anything the grid resolves. Where the boundary runs through lattice
  // points this keeps too much: a cell of an L-shape's notch with three corners on the boundary
  // keeps their triangle, and a cell along a boundary on lattice lines keeps a sliver outside it;
  // those cells have their centroid outside the domain and are dropped after the clip.
  double h_min = INFINITY;
  for (int a = 0; a < l.dim; ++a) h_min = std::min(h_min, (l.hi[a] - l.lo[a]) / double(l.n[a] - 1));
  const double floor = 1e-12 * h_min;
  std::vector<double> value(np);
  bool any_outside = false;
  for (std::size_t p = 0; p < np; ++p) {
    const double* x = &lattice.points[p * l.dim];
    const double d = std::max(domain.distance_to_boundary(x), floor);
    const bool inside = domain.contains(x);
    any_outside = any_outside || !inside;
    value[p] = inside ? -d : d;
  }
  if (!any_outside) return lattice;  // a box: the clip is the lattice itself

  EvaluationGrid grid;  // the cells inside, on the lattice's points
  grid.dim = l.dim;
  grid.points = lattice.points;
  std::vector<long long> band_id(np, -1);  // lattice point → point of the cut cells' grid
  vtkNew<vtkPoints> band_points;
  band_points->SetDataTypeToDouble();
  vtkNew<vtkDoubleArray> band_value;
  band_value->SetName("signed_distance");
  vtkNew<vtkCellArray> band_cells;
  for (std::size_t c = 0; c < lattice.n_cells(); ++c) {
    const long long* v = lattice.cell(c);
    const std::size_t k = lattice.cell_size(c);
    std::size_t inside = 0;
    for (std::size_t i = 0; i < k; ++i) inside += value[v[i]] < 0;
    if (inside == k) grid.add_cell(lattice.cell_types[c], v, k);
    if (inside == 0 || inside == k) continue;
    vtkIdType ids[8];
    for (std::size_t i = 0; i < k; ++i) {
      if (band_id[v[i]] < 0) {
        const double* x = &lattice.points[v[i] * l.dim];
        band_id[v[i]] = band_points->InsertNextPoint(x[0], x[1], l.dim == 3 ? x[2] : 0.0);
        band_value->InsertNextValue(value[v[i]]);
      }
      ids[i] = band_id[v[i]];
    }
    band_cells->InsertNextCell(static_cast<vtkIdType>(k), ids);
  }
  vtkNew<vtkUnstructuredGrid> band;
  band->SetPoints(band_points);
  band->SetCells(l.dim == 2 ? VTK_QUAD : VTK_HEXAHEDRON, band_cells);
  band->GetPointData()->SetScalars(band_value);

  vtkNew<vtkTableBasedClipDataSet> clip;
  clip->SetInputData(band);
  clip->SetValue(0.0);
  clip->InsideOutOn();  // keeps the values below 0
  clip->SetOutputPointsPrecision(vtkAlgorithm::DOUBLE_PRECISION);
  clip->Update();
  EvaluationGrid cut = grid_of(clip->GetOutput(), l.dim);
  drop_unused_points(cut);
  for (std::size_t p = 0; p < cut.n_points(); ++p)
    move_onto_boundary(domain, l, &cut.points[p * l.dim]);

  // The cut cells join the inside ones; their lattice points become the same points by the merge.
  const long long offset = static_cast<long long>(grid.n_points());
  grid.points.insert(grid.points.end(), cut.points.begin(), cut.points.end());
  std::vector<long long> ids;
  for (std::size_t c = 0; c < cut.n_cells(); ++c) {
    ids.assign(cut.cell(c), cut.cell(c) + cut.cell_size(c));
    for (long long& id : ids) id += offset;
    grid.add_cell(cut.cell_types[c], ids.data(), ids.size());
  }
  return merge_cut_points(domain, l, std::move(grid), np);
}

// The size of Delaunay's initial bounding simplex, in multiples of the points' bounding box: VTK's
// default (2.5 in 3D) leaves out tetrahedra at the hull of a cube's corners and random points
// (10 % of the cube's volume); 10 fills it.
constexpr double kDelaunayOffset = 10;

// A point-cloud domain's points with a Delaunay mesh of them (triangles in 2D, tetrahedra in 3D),
// less the cells whose centroid lies outside the domain (the convex hull's cells across a notch);
// bare points when no mesh comes out (too few points, all on a line or a plane).
EvaluationGrid point_cloud_grid(const Domain& domain, const DomainGeometry& g) {
  EvaluationGrid cloud;
  cloud.dim = g.dim;
  cloud.points = g.points;
  vtkNew<vtkPolyData> poly;
  poly->SetPoints(vtk_points(cloud));
  EvaluationGrid mesh;
  if (g.dim == 2) {
    vtkNew<vtkDelaunay2D> delaunay;
    delaunay->SetInputData(poly);
    delaunay->SetOffset(kDelaunayOffset);
    delaunay->Update();
    mesh = grid_of(delaunay->GetOutput(), 2);
  } else {
    vtkNew<vtkDelaunay3D> delaunay;
    delaunay->SetInputData(poly);
    delaunay->SetOffset(kDelaunayOffset);
    delaunay->Update();
    mesh = grid_of(delaunay->GetOutput(), 3);
  }
  EvaluationGrid grid;
  grid.dim = g.dim;
  grid.points = cloud.points;
  if (mesh.n_points() != cloud.n_points()) return grid;  // Delaunay merged points: keep them bare
  for (std::size_t c = 0; c < mesh.n_cells(); ++c) {
    double centroid[3] = {0, 0, 0};
    const std::size_t k = mesh.cell_size(c);
    for (std::size_t v = 0; v < k; ++v)
      for (int a = 0; a < g.dim; ++a) centroid[a] += mesh.points[mesh.cell(c)[v] * g.dim + a] / k;
    if (domain.contains(centroid)) grid.add_cell(mesh.cell_types[c], mesh.cell(c), k);
  }
  return grid;
}

#else

EvaluationGrid point_cloud_grid(const Domain&, const DomainGeometry& g) {
  EvaluationGrid grid;
  grid.dim = g.dim;
  grid.points = g.points;
  return grid;
}

#endif  // RBFPDE_HAVE_VTK

// The domain's geometry when it is a point cloud.
bool point_cloud(const Domain& domain, DomainGeometry& g) {
  try {
    g = domain.geometry();
  } catch (const std::logic_error&) {
    return false;  // a domain that does not export its geometry is not a point cloud
  }
  return g.type == "points";
}

// Checks the resolution of a grid over space (`space_dim` axes) and time and splits off its time
// levels (the last entry).
std::vector<int> space_resolution(const std::vector<int>& resolution, int space_dim, int& levels) {
  if (static_cast<int>(resolution.size()) != space_dim + 1) {
    throw std::invalid_argument("evaluation grid: resolution has " +
                                std::to_string(resolution.size()) + " entries, the domain is " +
                                std::to_string(space_dim + 1) + "D (" + std::to_string(space_dim) +
                                "D and time)");
  }
  levels = resolution.back();
  if (levels < 2) {
    throw std::invalid_argument("evaluation grid: resolution must be at least 2 per axis, got " +
                                std::to_string(levels));
  }
  return {resolution.begin(), resolution.end() - 1};
}

// The spatial grid at `levels` evenly spaced times in [start, end] (EvaluationGrid::times).
EvaluationGrid time_sliced(const EvaluationGrid& space, int levels, double start, double end) {
  EvaluationGrid grid;
  grid.dim = space.dim + 1;
  grid.cells = space.cells;
  grid.cell_offsets = space.cell_offsets;
  grid.cell_types = space.cell_types;
  const std::size_t m = space.n_points(), ds = static_cast<std::size_t>(space.dim);
  grid.points.reserve(m * static_cast<std::size_t>(levels) * (ds + 1));
  for (int l = 0; l < levels; ++l) {
    // As Lattice::coordinate: both ends exactly.
    const double s = static_cast<double>(l) / static_cast<double>(levels - 1);
    const double t = start * (1.0 - s) + end * s;
    grid.times.push_back(t);
    for (std::size_t p = 0; p < m; ++p) {
      grid.points.insert(grid.points.end(), space.points.begin() + p * ds,
                         space.points.begin() + (p + 1) * ds);
      grid.points.push_back(t);
    }
  }
  return grid;
}

}  // namespace

EvaluationGrid time_level(const EvaluationGrid& grid, std::size_t level) {
  if (!grid.time_sliced() || level >= grid.times.size())
    throw std::invalid_argument("time_level: level " + std::to_string(level) + " of a grid with " +
                                std::to_string(grid.times.size()) + " time levels");
  EvaluationGrid out;
  out.dim = grid.dim - 1;
  out.cells = grid.cells;
  out.cell_offsets = grid.cell_offsets;
  out.cell_types = grid.cell_types;
  const std::size_t m = grid.points_per_time(), d = static_cast<std::size_t>(grid.dim);
  out.points.reserve(m * (d - 1));
  for (std::size_t p = level * m; p < (level + 1) * m; ++p)
    out.points.insert(out.points.end(), grid.points.begin() + p * d,
                      grid.points.begin() + p * d + (d - 1));
  return out;
}

std::vector<PointArray> time_level(const EvaluationGrid& grid, std::size_t level,
                                   const std::vector<PointArray>& arrays) {
  if (!grid.time_sliced() || level >= grid.times.size())
    throw std::invalid_argument("time_level: level " + std::to_string(level) + " of a grid with " +
                                std::to_string(grid.times.size()) + " time levels");
  const std::size_t m = grid.points_per_time();
  std::vector<PointArray> out;
  for (const PointArray& a : arrays) {
    const std::size_t c = static_cast<std::size_t>(a.components);
    if (a.values.size() != grid.n_points() * c)
      throw std::invalid_argument("time_level: point array '" + a.name + "' has " +
                                  std::to_string(a.values.size()) + " values, expected " +
                                  std::to_string(grid.n_points() * c));
    out.push_back({a.name, a.components,
                   std::vector<double>(a.values.begin() + level * m * c,
                                       a.values.begin() + (level + 1) * m * c)});
  }
  return out;
}

EvaluationGrid make_lattice(const double* lo, const double* hi, int dim,
                            const std::vector<int>& resolution) {
  if (dim == 4) {
    int levels = 0;
    const std::vector<int> space = space_resolution(resolution, 3, levels);
    return time_sliced(full_lattice(lattice_of(lo, hi, 3, space)), levels, lo[3], hi[3]);
  }
  return full_lattice(lattice_of(lo, hi, dim, resolution));
}

EvaluationGrid make_evaluation_grid(const Domain& domain, const std::vector<int>& resolution) {
  const int dim = domain.dim();
  if (const auto* space_time = dynamic_cast<const SpaceTimeDomain*>(&domain)) {
    int levels = 0;
    const std::vector<int> space = space_resolution(resolution, dim - 1, levels);
    return time_sliced(make_evaluation_grid(space_time->space(), space), levels,
                       space_time->start(), space_time->end());
  }
  if (dim == 4)
    throw std::invalid_argument("evaluation grid: a 4D domain must be 3D space and time");
  DomainGeometry g;
  if (point_cloud(domain, g)) {
    if (g.dim != dim || g.points.size() % static_cast<std::size_t>(dim) != 0 || g.points.empty())
      throw std::invalid_argument("evaluation grid: the point cloud's points do not fit its " +
                                  std::to_string(dim) + "D domain");
    return point_cloud_grid(domain, g);
  }
  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};
  if (dim == 2 || dim == 3) domain.bounding_box(lo.data(), hi.data());
  const Lattice l = lattice_of(lo.data(), hi.data(), dim, resolution);
#ifdef RBFPDE_HAVE_VTK
  return clipped_lattice(domain, l);
#else
  return inside_cells(domain, l);
#endif
}

}  // namespace rbfpde
