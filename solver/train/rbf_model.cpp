#include "solver/train/rbf_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rbfpde {

double point_spacing(const Domain& domain, long interior_points) {
  return std::pow(domain.measure() / double(std::max(1L, interior_points)), 1.0 / domain.dim());
}

double minimum_width(const Domain& domain, const TrainingConfig& training) {
  double lo[3], hi[3], d2 = 0;
  domain.bounding_box(lo, hi);
  for (int j = 0; j < domain.dim(); ++j) d2 += (hi[j] - lo[j]) * (hi[j] - lo[j]);
  const double floor = 1e-3 * std::sqrt(d2);
  if (training.method != "varpro") return floor;
  return std::max(floor, kVpWidthPerSpacing * point_spacing(domain, training.points_interior));
}

namespace {

// Cell-centred lattice points of the bounding box that lie inside the domain, with `per_unit`
// points per unit length on every axis.
std::vector<double> lattice_inside(const Domain& domain, double spacing, const double* lo,
                                   const double* hi) {
  const int d = domain.dim();
  int counts[3] = {1, 1, 1};
  for (int j = 0; j < d; ++j) counts[j] = std::max(1, int(std::lround((hi[j] - lo[j]) / spacing)));
  std::vector<double> out;
  for (int k = 0; k < (d == 3 ? counts[2] : 1); ++k)
    for (int jy = 0; jy < counts[1]; ++jy)
      for (int ix = 0; ix < counts[0]; ++ix) {
        const int idx[3] = {ix, jy, k};
        double x[3];
        for (int j = 0; j < d; ++j) x[j] = lo[j] + (idx[j] + 0.5) * (hi[j] - lo[j]) / counts[j];
        if (domain.contains(x)) out.insert(out.end(), x, x + d);
      }
  return out;
}

}  // namespace

RbfInit initial_rbf_parameters(const Domain& domain, const ModelConfig& model, Rng& rng) {
  const int d = domain.dim();
  const int m = model.neurons;
  if (m < 1) throw std::invalid_argument("the network needs at least one neuron");
  double lo[3], hi[3];
  domain.bounding_box(lo, hi);
  RbfInit init;
  init.params.dim = d;
  // The spacing that m evenly spread centres would have over the domain's measure.
  double spacing = std::pow(domain.measure() / m, 1.0 / d);
  if (model.init_centres == "grid") {
    std::vector<double> pts = lattice_inside(domain, spacing, lo, hi);
    // Refine until the lattice has at least m points inside (non-box domains lose some).
    for (int attempt = 0; int(pts.size() / d) < m && attempt < 200; ++attempt) {
      spacing *= 0.97;
      pts = lattice_inside(domain, spacing, lo, hi);
    }
    const int available = int(pts.size() / d);
    if (available < m) throw std::runtime_error("cannot place the initial centres inside the domain");
    // Take m of them spread evenly in lattice order.
    for (int k = 0; k < m; ++k) {
      const long idx = long(std::floor((double(k) + 0.5) * available / m));
      init.params.centres.insert(init.params.centres.end(), pts.begin() + idx * d,
                                 pts.begin() + (idx + 1) * d);
    }
  } else {
    init.params.centres.resize(std::size_t(m) * d);
    domain.sample_interior(rng, m, init.params.centres.data());
  }
  init.spacing = spacing;
  init.params.widths.assign(m, model.init_width * spacing);
  init.params.weights.assign(m, 0.0);
  return init;
}

}  // namespace rbfpde
