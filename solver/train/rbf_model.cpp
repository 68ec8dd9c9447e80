#include "solver/train/rbf_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rbfpde {

double point_spacing(const Domain& domain, long interior_points) {
  return std::pow(domain.measure() / double(std::max(1L, interior_points)), 1.0 / domain.dim());
}

double minimum_width(const Domain& domain, const TrainingConfig& training) {
  double lo[4], hi[4], d2 = 0;
  domain.bounding_box(lo, hi);
  for (int j = 0; j < domain.dim(); ++j) d2 += (hi[j] - lo[j]) * (hi[j] - lo[j]);
  const double floor = 1e-3 * std::sqrt(d2);
  const double per_spacing = training.method == "gdcg" ? kGdcgWidthPerSpacing : kWidthPerSpacing;
  return std::max(floor, per_spacing * point_spacing(domain, training.points_interior));
}

namespace {

// Cell-centred lattice points of the bounding box that lie inside the domain, about `spacing`
// apart on every axis, x fastest (2 to 4 axes).
std::vector<double> lattice_inside(const Domain& domain, double spacing, const double* lo,
                                   const double* hi) {
  const int d = domain.dim();
  long counts[4] = {1, 1, 1, 1}, total = 1;
  for (int j = 0; j < d; ++j) {
    counts[j] = std::max(1L, std::lround((hi[j] - lo[j]) / spacing));
    total *= counts[j];
  }
  std::vector<double> out;
  for (long k = 0; k < total; ++k) {
    double x[4];
    long rest = k;
    for (int j = 0; j < d; ++j) {
      const long idx = rest % counts[j];
      rest /= counts[j];
      x[j] = lo[j] + (double(idx) + 0.5) * (hi[j] - lo[j]) / double(counts[j]);
    }
    if (domain.contains(x)) out.insert(out.end(), x, x + d);
  }
  return out;
}

}  // namespace

RbfInit initial_rbf_parameters(const Domain& domain, const ModelConfig& model, Rng& rng) {
  const int d = domain.dim();
  const int m = model.neurons;
  if (m < 1) throw std::invalid_argument("the network needs at least one neuron");
  if (d < 1 || d > 4) throw std::invalid_argument("initial centres: 1 to 4 coordinates expected");
  double lo[4], hi[4];
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
