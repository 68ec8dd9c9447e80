// The solver's data as the pictures' plain data: lattice panels from the evaluation grid, the
// domain's boundary as a signed distance, curves from the history. No PLplot here.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "solver/output/pictures.hpp"

namespace rbfpde {
namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// "name = v" to four digits; v within rounding of zero, relative to the axis's extent, is 0
// (lo + i·h computed with a fused multiply-add can be −5.6e-17 where the lattice crosses 0).
std::string format_coordinate(const std::string& name, double v, double extent) {
  if (std::abs(v) <= 1e-12 * extent) v = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s = %.4g", name.c_str(), v);
  return buf;
}

}  // namespace

std::vector<PicturePanel> grid_panels(const Domain& domain, const EvaluationGrid& grid,
                                      const std::vector<int>& resolution,
                                      const std::vector<double>& values,
                                      const std::vector<std::string>& axis_names) {
  const int dim = grid.dim;
  if (dim != 2 && dim != 3) return {};
  if (static_cast<int>(resolution.size()) != dim || static_cast<int>(axis_names.size()) != dim)
    throw std::invalid_argument("grid_panels: resolution and axis names need one entry per axis");
  if (values.size() != grid.n_points())
    throw std::invalid_argument("grid_panels: one value per grid point expected");
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, h[3] = {1, 1, 1};
  domain.bounding_box(lo, hi);
  for (int a = 0; a < dim; ++a) h[a] = (hi[a] - lo[a]) / std::max(1, resolution[a] - 1);

  // The slices: in-plane axes (p, q) and the fixed axis with its lattice index (−1: none).
  struct Slice {
    int p, q, fixed, index;
  };
  std::vector<Slice> slices;
  if (dim == 2) {
    slices.push_back({0, 1, -1, -1});
  } else {
    slices.push_back({0, 1, 2, (resolution[2] - 1) / 2});
    slices.push_back({0, 2, 1, (resolution[1] - 1) / 2});
    slices.push_back({1, 2, 0, (resolution[0] - 1) / 2});
  }

  std::vector<PicturePanel> panels(slices.size());
  for (std::size_t s = 0; s < slices.size(); ++s) {
    const Slice& sl = slices[s];
    PicturePanel& panel = panels[s];
    panel.xlabel = axis_names[sl.p];
    panel.ylabel = axis_names[sl.q];
    if (sl.fixed >= 0)
      panel.title = format_coordinate(axis_names[sl.fixed], lo[sl.fixed] + sl.index * h[sl.fixed],
                                      hi[sl.fixed] - lo[sl.fixed]);
    panel.lo[0] = lo[sl.p];
    panel.hi[0] = hi[sl.p];
    panel.lo[1] = lo[sl.q];
    panel.hi[1] = hi[sl.q];
    panel.nx = resolution[sl.p];
    panel.ny = resolution[sl.q];
    panel.values.assign(std::size_t(panel.nx) * panel.ny, kNaN);
    // The frame: the bounding box with a margin, so that a boundary on the box is drawn whole.
    const double margin = 0.04 * std::max(hi[sl.p] - lo[sl.p], hi[sl.q] - lo[sl.q]);
    panel.frame_lo[0] = lo[sl.p] - margin;
    panel.frame_hi[0] = hi[sl.p] + margin;
    panel.frame_lo[1] = lo[sl.q] - margin;
    panel.frame_hi[1] = hi[sl.q] + margin;
  }

  // Each grid point on the lattice lands in the panels whose plane holds it.
  for (std::size_t i = 0; i < grid.n_points(); ++i) {
    const double* x = &grid.points[i * dim];
    long idx[3] = {0, 0, 0};
    bool on_lattice = true;
    for (int a = 0; a < dim && on_lattice; ++a) {
      const double t = (x[a] - lo[a]) / h[a];
      idx[a] = std::lround(t);
      on_lattice = idx[a] >= 0 && idx[a] < resolution[a] && std::abs(t - idx[a]) <= 1e-6;
    }
    if (!on_lattice) continue;
    for (std::size_t s = 0; s < slices.size(); ++s) {
      const Slice& sl = slices[s];
      if (sl.fixed >= 0 && idx[sl.fixed] != sl.index) continue;
      panels[s].values[idx[sl.p] + std::size_t(panels[s].nx) * idx[sl.q]] = values[i];
    }
  }

  // The signed distance on a lattice about four times finer than the grid's, over the frame.
  for (std::size_t s = 0; s < slices.size(); ++s) {
    const Slice& sl = slices[s];
    PicturePanel& panel = panels[s];
    panel.sd_nx = std::clamp(4 * (panel.nx - 1) + 1, 101, 801);
    panel.sd_ny = std::clamp(4 * (panel.ny - 1) + 1, 101, 801);
    panel.signed_distance.resize(std::size_t(panel.sd_nx) * panel.sd_ny);
    double x[3] = {0, 0, 0};
    if (sl.fixed >= 0) x[sl.fixed] = lo[sl.fixed] + sl.index * h[sl.fixed];
    for (int j = 0; j < panel.sd_ny; ++j) {
      x[sl.q] = panel.frame_lo[1] + (panel.frame_hi[1] - panel.frame_lo[1]) * j / (panel.sd_ny - 1);
      for (int i = 0; i < panel.sd_nx; ++i) {
        x[sl.p] =
            panel.frame_lo[0] + (panel.frame_hi[0] - panel.frame_lo[0]) * i / (panel.sd_nx - 1);
        const double d = domain.distance_to_boundary(x);
        panel.signed_distance[i + std::size_t(panel.sd_nx) * j] = domain.contains(x) ? -d : d;
      }
    }
  }
  return panels;
}

std::vector<CurvePanel> convergence_panels(const std::vector<HistoryCsv::Row>& rows) {
  bool has_error = false;
  for (const auto& r : rows) has_error = has_error || std::isfinite(r.rel_l2_error);
  std::vector<CurvePanel> panels(2);
  panels[0].xlabel = "cycle";
  panels[1].xlabel = "training time [s]";
  for (int k = 0; k < 2; ++k) {
    std::vector<Curve>& curves = panels[k].curves;
    curves = {{"loss", {}, {}},
              {"validation RMS residual, interior", {}, {}},
              {"validation RMS residual, boundary", {}, {}}};
    if (has_error) curves.push_back({"relative L2 error", {}, {}});
    for (const auto& r : rows) {
      const double x = k == 0 ? double(r.cycle) : r.seconds;
      const double y[] = {r.loss, r.val_rms_interior, r.val_rms_boundary, r.rel_l2_error};
      for (std::size_t c = 0; c < curves.size(); ++c) {
        curves[c].x.push_back(x);
        curves[c].y.push_back(y[c]);
      }
    }
  }
  return panels;
}

std::vector<HistoryCsv::Row> read_history_csv(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::string line;
  if (!std::getline(in, line)) throw std::runtime_error(path.string() + ": empty");
  std::map<std::string, int> column;
  {
    std::stringstream header(line);
    std::string name;
    for (int c = 0; std::getline(header, name, ','); ++c) column[name] = c;
  }
  for (const char* required : {"cycle", "seconds", "loss"})
    if (!column.count(required))
      throw std::runtime_error(path.string() + ": no column \"" + required + "\"");
  auto cell = [&](const std::vector<std::string>& cells, const char* name) {
    const auto it = column.find(name);
    if (it == column.end() || it->second >= int(cells.size()) || cells[it->second].empty())
      return kNaN;
    char* end = nullptr;
    const double v = std::strtod(cells[it->second].c_str(), &end);
    return end && *end == '\0' ? v : kNaN;
  };
  std::vector<HistoryCsv::Row> rows;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) cells.push_back(c);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    const double cycle = cell(cells, "cycle");
    rows.push_back({std::isfinite(cycle) ? long(cycle) : -1, cell(cells, "seconds"),
                    cell(cells, "loss"), cell(cells, "rms_interior"), cell(cells, "rms_boundary"),
                    cell(cells, "rel_l2_error"), cell(cells, "max_error"),
                    cell(cells, "val_rms_interior"), cell(cells, "val_rms_boundary")});
  }
  return rows;
}

}  // namespace rbfpde
