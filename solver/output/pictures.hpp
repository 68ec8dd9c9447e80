// Pictures of a run (docs/outputs.md, "Pictures"), drawn with PLplot's cairo driver into PNG files
// without a display: convergence.png (the history against cycles and against seconds),
// solution.png and error.png (colour maps over the domain, or over its mid-plane slices in 3D,
// with the boundary drawn), and the comparison picture of `rbfpde compare`.
//
// The drawing functions take plain data (panels of lattice values, curves) and know nothing of
// the solver; the functions below them turn the solver's data (the evaluation grid, the domain,
// history rows) into that plain data. Every picture is written atomically: drawn into a
// temporary file in the target's directory, then renamed over the target.
//
// PLplot keeps global state; every drawing function holds one process-wide lock while it draws
// into a stream of its own, so they may be called from any thread.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "problems/domain.hpp"
#include "solver/output/output.hpp"

namespace rbfpde {

// True when this build draws pictures: it was built with PLplot (CMake found libplplot-dev) and
// PLplot's pngcairo device is installed (plplot-driver-cairo).
bool pictures_available();
// Why pictures_available() is false ("" when it is true).
std::string pictures_unavailable_reason();

// One colour map: values on a regular lattice of nx × ny nodes from lo to hi (x fastest), NaN
// where there is no value (outside the domain), and the domain's boundary as the zero contour of
// a signed distance (negative inside) sampled on its own lattice over the panel's frame.
struct PicturePanel {
  std::string title;           // e.g. "z = 0.5" for a slice; may be empty
  std::string xlabel, ylabel;  // axis names
  double lo[2] = {0, 0}, hi[2] = {1, 1};
  int nx = 0, ny = 0;
  std::vector<double> values;                         // nx * ny
  double frame_lo[2] = {0, 0}, frame_hi[2] = {1, 1};  // the drawn window (contains lo..hi)
  int sd_nx = 0, sd_ny = 0;                           // 0: no boundary drawn
  std::vector<double> signed_distance;                // sd_nx * sd_ny over the frame
};

struct FieldPicture {
  std::string title;
  std::string colour_label;          // the colour bar's caption
  bool log_scale = false;            // colours by log10 of the values (values ≤ 0 are left blank)
  std::vector<PicturePanel> panels;  // side by side, one colour scale for all
};

// A line picture: panels side by side, each with a log10 y axis (and a log10 x axis with
// log_x). Points with y ≤ 0 (x ≤ 0 with log_x) or non-finite x or y are left out (the curve is
// broken there).
struct Curve {
  std::string label;
  std::vector<double> x, y;
};
struct CurvePanel {
  std::string xlabel, ylabel;
  bool log_x = false;
  std::vector<Curve> curves;
};

// Throw std::runtime_error naming the path when PLplot cannot draw or the file cannot be
// written; must only be called when pictures_available().
void write_field_picture(const std::filesystem::path& path, const FieldPicture& picture);
void write_curve_picture(const std::filesystem::path& path, const std::string& title,
                         const std::vector<CurvePanel>& panels);

// --- from the solver's data ---

// The panels of values given at the evaluation grid's points: the whole lattice in 2D, the three
// mid-plane slices (z, y, x = mid) of the bounding box in 3D. The lattice is that of
// make_evaluation_grid (`resolution` nodes per axis over the domain's bounding box); points off
// the lattice are ignored and lattice nodes without a point stay blank. The boundary is the zero
// contour of the signed distance (−distance_to_boundary inside, + outside), sampled on a lattice
// about four times finer than the evaluation grid's. `axis_names` names the coordinates
// (x, y[, z], or t for a time coordinate).
std::vector<PicturePanel> grid_panels(const Domain& domain, const EvaluationGrid& grid,
                                      const std::vector<int>& resolution,
                                      const std::vector<double>& values,
                                      const std::vector<std::string>& axis_names);

// The panels of convergence.png: loss, validation RMS residuals (interior, boundary) and the
// relative L2 error (when any row has one) against cycles, and the same against seconds.
std::vector<CurvePanel> convergence_panels(const std::vector<HistoryCsv::Row>& rows);

// Reads a history.csv written by HistoryCsv (columns by name; empty cells are NaN). Throws
// std::runtime_error naming the file when it cannot be read or has no cycle/seconds/loss columns.
std::vector<HistoryCsv::Row> read_history_csv(const std::filesystem::path& path);

}  // namespace rbfpde
