// Drawing with PLplot's C API: one stream per picture (plmkstrm … plend1), the pngcairo device,
// under one process-wide lock. PLplot's recoverable errors (plabort) are caught by a handler
// and turned into exceptions after the stream is closed.
#include "solver/output/pictures.hpp"

#include <unistd.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#ifdef RBFPDE_HAVE_PLPLOT
#include <plplot.h>
#endif

namespace rbfpde {
namespace fs = std::filesystem;

#ifndef RBFPDE_HAVE_PLPLOT

bool pictures_available() { return false; }
std::string pictures_unavailable_reason() { return "this build has no PLplot"; }

void write_field_picture(const fs::path& path, const FieldPicture&) {
  throw std::runtime_error("cannot write " + path.string() + ": this build has no PLplot");
}
void write_curve_picture(const fs::path& path, const std::string&, const std::vector<CurvePanel>&) {
  throw std::runtime_error("cannot write " + path.string() + ": this build has no PLplot");
}

#else

namespace {

constexpr const char* kDevice = "pngcairo";

std::mutex& plplot_mutex() {
  static std::mutex m;
  return m;
}

// plabort's message of the picture being drawn (guarded by plplot_mutex).
std::string& abort_message() {
  static std::string message;
  return message;
}
void on_plabort(PLCHAR_VECTOR message) {
  if (abort_message().empty()) abort_message() = message ? message : "PLplot error";
}

bool device_installed_locked() {
  int n = 128;
  std::vector<PLCHAR_VECTOR> menu_store(n), name_store(n);
  PLCHAR_VECTOR* menus = menu_store.data();
  PLCHAR_VECTOR* names = name_store.data();
  plgDevs(&menus, &names, &n);
  for (int i = 0; i < n; ++i)
    if (names[i] && std::string(names[i]) == kDevice) return true;
  return false;
}

bool device_installed() {
  std::lock_guard<std::mutex> lock(plplot_mutex());
  static const bool installed = device_installed_locked();
  return installed;
}

// A stream of its own for one picture, drawn into `file`; the previous current stream is
// restored when it ends.
class Stream {
 public:
  Stream(const fs::path& file, int width, int height) {
    abort_message().clear();
    plsabort(on_plabort);
    plgstrm(&previous_);
    plmkstrm(&stream_);
    if (stream_ < 0) throw std::runtime_error("PLplot has no free stream");
    plsdev(kDevice);
    plsfnam(file.c_str());
    plspage(0, 0, width, height, 0, 0);
    plscolbg(255, 255, 255);
    plinit();
    // Palette 0: background, black, then the line colours.
    static const int rgb[][3] = {{255, 255, 255}, {0, 0, 0},       {31, 119, 180},  {214, 39, 40},
                                 {44, 160, 44},   {255, 127, 14},  {148, 103, 189}, {140, 86, 75},
                                 {227, 119, 194}, {127, 127, 127}, {23, 190, 207}};
    plscmap0n(16);
    for (int i = 0; i < int(sizeof rgb / sizeof rgb[0]); ++i)
      plscol0(i, rgb[i][0], rgb[i][1], rgb[i][2]);
    plcol0(1);
    plfontld(1);
    plschr(0, 0.9);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    plend1();
    plsstrm(previous_);
  }

 private:
  PLINT previous_ = 0, stream_ = -1;
};

constexpr int kLineColours = 9;  // palette entries 2 … 10

// Draws with `draw` into a temporary file beside `path`, then writes it over `path` atomically.
template <class Draw>
void draw_picture(const fs::path& path, int width, int height, Draw draw) {
  std::lock_guard<std::mutex> lock(plplot_mutex());
  const fs::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const fs::path tmp =
      dir / ("." + path.filename().string() + ".plot." + std::to_string(::getpid()));
  // PLplot ends the process when it cannot open its output file: the file is made here first.
  {
    std::ofstream probe(tmp, std::ios::binary | std::ios::trunc);
    if (!probe)
      throw std::runtime_error("cannot write " + path.string() + ": cannot create " + tmp.string());
  }
  std::string failure;
  try {
    Stream stream(tmp, width, height);
    draw();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (failure.empty()) failure = abort_message();
  std::string bytes;
  if (failure.empty()) {
    std::ifstream in(tmp, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    bytes = content.str();
    if (!in || bytes.empty()) failure = "PLplot wrote no picture";
  }
  std::error_code ec;
  fs::remove(tmp, ec);
  if (!failure.empty()) throw std::runtime_error("cannot write " + path.string() + ": " + failure);
  write_file_atomic(path, bytes);
}

// Perceptually uniform colours from dark blue through green to yellow (close to viridis).
void set_colour_map() {
  const PLFLT pos[] = {0.0, 0.25, 0.5, 0.75, 1.0};
  const PLFLT r[] = {0.267, 0.229, 0.128, 0.369, 0.993};
  const PLFLT g[] = {0.005, 0.322, 0.567, 0.789, 0.906};
  const PLFLT b[] = {0.329, 0.546, 0.551, 0.383, 0.144};
  plscmap1n(256);
  plscmap1l(1, 5, pos, r, g, b, nullptr);
}

// [lo, hi] with lo < hi: an empty or degenerate range is widened.
void widen(double& lo, double& hi, double pad) {
  if (!(lo <= hi)) {
    lo = 0;
    hi = 1;
  } else if (hi - lo <= 1e-12 * std::max(1.0, std::max(std::abs(lo), std::abs(hi)))) {
    lo -= pad;
    hi += pad;
  }
}

}  // namespace

bool pictures_available() { return device_installed(); }

std::string pictures_unavailable_reason() {
  return pictures_available() ? ""
                              : std::string("PLplot's ") + kDevice +
                                    " device is not installed (plplot-driver-cairo)";
}

void write_field_picture(const fs::path& path, const FieldPicture& picture) {
  const int n = static_cast<int>(picture.panels.size());
  if (n == 0) throw std::invalid_argument("write_field_picture: no panels");
  auto shown = [&](double v) { return picture.log_scale ? (v > 0 ? std::log10(v) : NAN) : v; };
  double vmin = HUGE_VAL, vmax = -HUGE_VAL;
  for (const PicturePanel& p : picture.panels)
    for (double v : p.values) {
      const double s = shown(v);
      if (std::isfinite(s)) {
        vmin = std::min(vmin, s);
        vmax = std::max(vmax, s);
      }
    }
  // A log scale shows four decades below the largest value; smaller values take the lowest colour.
  if (picture.log_scale && vmax - vmin > 4) vmin = vmax - 4;
  widen(vmin, vmax, 0.5);

  const int width = n == 1 ? 860 : 620 * n + 160, height = 680;
  draw_picture(path, width, height, [&] {
    set_colour_map();
    pladv(0);
    // Each panel in its share of the page's width; the colour bar to the right of the last.
    const double share = 0.88 / n;
    for (int k = 0; k < n; ++k) {
      const PicturePanel& p = picture.panels[k];
      const double fx0 = p.frame_lo[0], fx1 = p.frame_hi[0];
      const double fy0 = p.frame_lo[1], fy1 = p.frame_hi[1];
      plvpas(0.02 + k * share + 0.07, 0.02 + (k + 1) * share - 0.01, 0.1, 0.88,
             (fy1 - fy0) / (fx1 - fx0));
      plwind(fx0, fx1, fy0, fy1);
      if (p.nx > 0 && p.ny > 0 && p.values.size() == std::size_t(p.nx) * p.ny) {
        // Pixel (i, j) is centred on lattice node (i, j): plimagefr draws pixel i from
        // xmin + i·dx to xmin + (i + 1)·dx with dx = (xmax − xmin)/(nx − 1). Blank pixels lie
        // below zmin.
        std::vector<PLFLT> data(p.values.size());
        std::vector<const PLFLT*> columns(p.nx);
        for (int i = 0; i < p.nx; ++i) {
          for (int j = 0; j < p.ny; ++j) {
            const double s = shown(p.values[i + std::size_t(p.nx) * j]);
            data[std::size_t(i) * p.ny + j] = std::isfinite(s) ? s : -DBL_MAX;
          }
          columns[i] = data.data() + std::size_t(i) * p.ny;
        }
        const double hx = p.nx > 1 ? (p.hi[0] - p.lo[0]) / (p.nx - 1) : 0;
        const double hy = p.ny > 1 ? (p.hi[1] - p.lo[1]) / (p.ny - 1) : 0;
        plimagefr(columns.data(), p.nx, p.ny, p.lo[0] - hx / 2, p.hi[0] - hx / 2, p.lo[1] - hy / 2,
                  p.hi[1] - hy / 2, -DBL_MAX / 2, DBL_MAX / 2, vmin, vmax, nullptr, nullptr);
      }
      if (p.sd_nx > 1 && p.sd_ny > 1 &&
          p.signed_distance.size() == std::size_t(p.sd_nx) * p.sd_ny) {
        std::vector<PLFLT> xg(p.sd_nx), yg(p.sd_ny), f(p.signed_distance.size());
        for (int i = 0; i < p.sd_nx; ++i) xg[i] = fx0 + (fx1 - fx0) * i / (p.sd_nx - 1);
        for (int j = 0; j < p.sd_ny; ++j) yg[j] = fy0 + (fy1 - fy0) * j / (p.sd_ny - 1);
        std::vector<const PLFLT*> columns(p.sd_nx);
        for (int i = 0; i < p.sd_nx; ++i) {
          for (int j = 0; j < p.sd_ny; ++j)
            f[std::size_t(i) * p.sd_ny + j] = p.signed_distance[i + std::size_t(p.sd_nx) * j];
          columns[i] = f.data() + std::size_t(i) * p.sd_ny;
        }
        PLcGrid grid{xg.data(), yg.data(), nullptr, p.sd_nx, p.sd_ny, 0};
        const PLFLT level = 0;
        plcol0(1);
        plwidth(2.0);
        plcont(columns.data(), p.sd_nx, p.sd_ny, 1, p.sd_nx, 1, p.sd_ny, &level, 1, pltr1, &grid);
        plwidth(1.0);
      }
      plcol0(1);
      plbox("bcnst", 0, 0, "bcnstv", 0, 0);
      const std::string title = picture.title + (p.title.empty() ? "" : ", " + p.title);
      pllab(p.xlabel.c_str(), p.ylabel.c_str(), title.c_str());
    }
    // The colour bar, right of the last panel's viewport.
    PLFLT bar_w = 0, bar_h = 0;
    const char* label = picture.colour_label.c_str();
    const PLINT label_opt = PL_COLORBAR_LABEL_TOP;
    const char* axis = picture.log_scale ? "bcvtml" : "bcvtm";
    const PLFLT tick = 0;
    const PLINT sub_tick = 0, n_values = 2;
    const PLFLT range[] = {vmin, vmax};
    const PLFLT* values[] = {range};
    plcolorbar(&bar_w, &bar_h, PL_COLORBAR_IMAGE,
               PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.04, 0, 0.04, 0.9,
               0, 1, 1, 0, 0, 0, 0, 1, &label_opt, &label, 1, &axis, &tick, &sub_tick, &n_values,
               values);
  });
}

void write_curve_picture(const fs::path& path, const std::string& title,
                         const std::vector<CurvePanel>& panels) {
  const int n = static_cast<int>(panels.size());
  if (n == 0) throw std::invalid_argument("write_curve_picture: no panels");
  // The legend (the first panel's curves, by colour) goes below the panels, two entries a row.
  const int legend_rows = (static_cast<int>(panels[0].curves.size()) + 1) / 2;
  const double bottom = 0.22 + 0.045 * legend_rows;
  draw_picture(path, 720 * n, 560 + 30 * legend_rows, [&] {
    pladv(0);
    const double share = 1.0 / n;
    for (int k = 0; k < n; ++k) {
      const CurvePanel& panel = panels[k];
      // Valid points, log10 of y; NaN breaks a curve.
      std::vector<std::vector<PLFLT> > xs(panel.curves.size()), ys(panel.curves.size());
      double x0 = HUGE_VAL, x1 = -HUGE_VAL, y0 = HUGE_VAL, y1 = -HUGE_VAL;
      for (std::size_t c = 0; c < panel.curves.size(); ++c) {
        const Curve& curve = panel.curves[c];
        for (std::size_t i = 0; i < std::min(curve.x.size(), curve.y.size()); ++i) {
          const double y = curve.y[i];
          const double x =
              panel.log_x ? (curve.x[i] > 0 ? std::log10(curve.x[i]) : NAN) : curve.x[i];
          const bool ok = std::isfinite(x) && std::isfinite(y) && y > 0;
          xs[c].push_back(ok ? x : NAN);
          ys[c].push_back(ok ? std::log10(y) : NAN);
          if (ok) {
            x0 = std::min(x0, x);
            x1 = std::max(x1, x);
            y0 = std::min(y0, std::log10(y));
            y1 = std::max(y1, std::log10(y));
          }
        }
      }
      widen(x0, x1, 0.5);
      if (y0 <= y1) {
        y0 = std::floor(y0);
        y1 = std::ceil(y1);
      }
      widen(y0, y1, 1.0);
      plvpor(k * share + 0.1 * share, (k + 1) * share - 0.04 * share, bottom, 0.9);
      plwind(x0, x1, y0, y1);
      plcol0(1);
      plbox(panel.log_x ? "bcnstgl" : "bcnstg", 0, 0, "bcnstvlg", 0, 0);
      pllab(panel.xlabel.c_str(), panel.ylabel.c_str(), k == 0 ? title.c_str() : "");
      for (std::size_t c = 0; c < panel.curves.size(); ++c) {
        plcol0(2 + PLINT(c % kLineColours));
        plwidth(2.0);
        std::size_t i = 0;
        while (i < xs[c].size()) {
          while (i < xs[c].size() && std::isnan(xs[c][i])) ++i;
          std::size_t j = i;
          while (j < xs[c].size() && !std::isnan(xs[c][j])) ++j;
          if (j - i == 1) plpoin(1, &xs[c][i], &ys[c][i], 17);
          if (j - i > 1) plline(PLINT(j - i), &xs[c][i], &ys[c][i]);
          i = j;
        }
        plwidth(1.0);
      }
    }
    std::vector<PLINT> opts, text_colours, line_colours, line_styles;
    std::vector<PLFLT> line_widths;
    std::vector<const char*> texts;
    for (std::size_t c = 0; c < panels[0].curves.size(); ++c) {
      opts.push_back(PL_LEGEND_LINE);
      text_colours.push_back(1);
      line_colours.push_back(2 + PLINT(c % kLineColours));
      line_styles.push_back(1);
      line_widths.push_back(2.0);
      texts.push_back(panels[0].curves[c].label.c_str());
    }
    if (!texts.empty()) {
      plvpor(0.05, 0.95, bottom, 0.9);
      plwind(0, 1, 0, 1);
      PLFLT legend_w = 0, legend_h = 0;
      pllegend(&legend_w, &legend_h, PL_LEGEND_BACKGROUND,
               PL_POSITION_BOTTOM | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0, 0.27, 0.05, 0, 1,
               1, legend_rows, 2, PLINT(texts.size()), opts.data(), 1.0, 0.9, 2.0, 0.0,
               text_colours.data(), texts.data(), nullptr, nullptr, nullptr, nullptr,
               line_colours.data(), line_styles.data(), line_widths.data(), nullptr, nullptr,
               nullptr, nullptr);
    }
    plcol0(1);
  });
}

#endif  // RBFPDE_HAVE_PLPLOT

}  // namespace rbfpde
