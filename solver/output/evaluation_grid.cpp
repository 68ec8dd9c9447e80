// The evaluation grid behind solution.vtu: a lattice over the bounding box, trimmed to the cells
// that lie wholly inside the domain, so ParaView shows the solution over the domain only.
#include <array>
#include <stdexcept>
#include <string>

#include "solver/output/output.hpp"

namespace rbfpde {

EvaluationGrid make_evaluation_grid(const Domain& domain, const std::vector<int>& resolution) {
  const int dim = domain.dim();
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

  std::array<double, 3> lo{0, 0, 0}, hi{0, 0, 0};
  domain.bounding_box(lo.data(), hi.data());
  std::array<long long, 3> n{1, 1, 1};
  for (int a = 0; a < dim; ++a) n[a] = resolution[a];
  // lo·(1−t) + hi·t hits both ends of the box exactly, so boundary lattice points of a box domain
  // test as inside.
  auto coordinate = [&](int axis, long long i) {
    const double t = static_cast<double>(i) / static_cast<double>(n[axis] - 1);
    return lo[axis] * (1.0 - t) + hi[axis] * t;
  };
  auto lattice_id = [&](long long i, long long j, long long k) {
    return i + n[0] * (j + n[1] * k);
  };

  const long long n_lattice = n[0] * n[1] * n[2];
  std::vector<char> inside(static_cast<std::size_t>(n_lattice));
  for (long long k = 0; k < n[2]; ++k) {
    for (long long j = 0; j < n[1]; ++j) {
      for (long long i = 0; i < n[0]; ++i) {
        const double x[3] = {coordinate(0, i), coordinate(1, j), dim == 3 ? coordinate(2, k) : 0.0};
        inside[lattice_id(i, j, k)] = domain.contains(x) ? 1 : 0;
      }
    }
  }

  // Cells in lattice order, vertices as lattice ids in VTK order: the bottom face counter-clockwise
  // seen from +z (VTK_QUAD), then the top face in the same order (VTK_HEXAHEDRON).
  EvaluationGrid grid;
  grid.dim = dim;
  const int corners = dim == 2 ? 4 : 8;
  const long long nk = dim == 3 ? n[2] - 1 : 1;
  for (long long k = 0; k < nk; ++k) {
    for (long long j = 0; j + 1 < n[1]; ++j) {
      for (long long i = 0; i + 1 < n[0]; ++i) {
        const long long v[8] = {lattice_id(i, j, k),
                                lattice_id(i + 1, j, k),
                                lattice_id(i + 1, j + 1, k),
                                lattice_id(i, j + 1, k),
                                lattice_id(i, j, k + 1),
                                lattice_id(i + 1, j, k + 1),
                                lattice_id(i + 1, j + 1, k + 1),
                                lattice_id(i, j + 1, k + 1)};
        bool keep = true;
        for (int c = 0; c < corners && keep; ++c) keep = inside[v[c]] != 0;
        if (keep) grid.cells.insert(grid.cells.end(), v, v + corners);
      }
    }
  }

  // Keep the used points only, numbered in lattice order.
  std::vector<long long> new_id(static_cast<std::size_t>(n_lattice), -1);
  for (long long v : grid.cells) new_id[v] = 0;
  long long next = 0;
  for (long long k = 0; k < n[2]; ++k) {
    for (long long j = 0; j < n[1]; ++j) {
      for (long long i = 0; i < n[0]; ++i) {
        const long long id = lattice_id(i, j, k);
        if (new_id[id] < 0) continue;
        new_id[id] = next++;
        grid.points.push_back(coordinate(0, i));
        grid.points.push_back(coordinate(1, j));
        if (dim == 3) grid.points.push_back(coordinate(2, k));
      }
    }
  }
  for (long long& v : grid.cells) v = new_id[v];
  return grid;
}

}  // namespace rbfpde
