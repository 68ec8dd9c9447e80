// The RBF network's initial state (docs/mathematics.md): centres on a lattice over the domain (or
// drawn at random inside it), widths a multiple of the centre spacing, zero weights (the
// trainer then solves for least-squares weights).
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/domain.hpp"
#include "problems/random.hpp"
#include "solver/config/config.hpp"

namespace rbfpde {

struct RbfInit {
  RbfParameters<double> params;
  double spacing = 0;  // the centre spacing the widths were scaled by
};

RbfInit initial_rbf_parameters(const Domain& domain, const ModelConfig& model, Rng& rng);

// The mean spacing of `interior_points` points spread evenly over the domain: (|Ω|/N)^(1/d).
double point_spacing(const Domain& domain, long interior_points);

// Variable projection and LM keep every width at least this many interior point spacings: a
// narrower Gaussian can fit the collocation points with a spike between them.
constexpr double kWidthPerSpacing = 1.0;
// gdcg's floor: above the soundness check's kNarrowPerSpacing, so that no width it reaches is
// unsound, and below the widths its limited gradient steps use on the seed problem, whose
// results a floor of one spacing makes worse.
constexpr double kGdcgWidthPerSpacing = 0.25;

// Smallest width training may produce: the larger of a thousandth of the bounding-box diagonal
// and kWidthPerSpacing interior point spacings (kGdcgWidthPerSpacing for gdcg).
double minimum_width(const Domain& domain, const TrainingConfig& training);

// Non-empty when neurons that matter are far narrower than the collocation points' spacing: a
// Gaussian of width a < kNarrowPerSpacing × `spacing` that reaches the domain's bounding box
// [lo, hi] (its value there, |w|·exp(−dist²/a²), above 1e-6 × `max_abs_u`) is a spike the points
// cannot see. A narrow neuron far outside the box adds nothing inside it.
constexpr double kNarrowPerSpacing = 0.1;
static_assert(kGdcgWidthPerSpacing > kNarrowPerSpacing && kWidthPerSpacing > kNarrowPerSpacing,
              "a width at a floor must pass the narrow-neuron check");
template <class T>
std::string narrow_neurons(const RbfParameters<T>& p, double spacing, double max_abs_u,
                           const std::vector<double>& lo, const std::vector<double>& hi) {
  int narrow = 0;
  const int d = p.dim;
  for (int k = 0; k < p.neurons(); ++k) {
    const double a = double(p.widths[k]);
    if (!(a < kNarrowPerSpacing * spacing)) continue;
    double dist2 = 0;
    for (int j = 0; j < d; ++j) {
      const double c = double(p.centres[std::size_t(k) * d + j]);
      const double out = c < lo[j] ? lo[j] - c : (c > hi[j] ? c - hi[j] : 0.0);
      dist2 += out * out;
    }
    if (std::abs(double(p.weights[k])) * std::exp(-dist2 / (a * a)) > 1e-6 * max_abs_u) ++narrow;
  }
  if (narrow == 0) return "";
  return std::to_string(narrow) + " of " + std::to_string(p.neurons()) +
         " neurons are narrower than a tenth of the collocation points' spacing";
}

template <class T>
RbfParameters<T> convert_parameters(const RbfParameters<double>& p) {
  RbfParameters<T> q;
  q.dim = p.dim;
  q.weights.assign(p.weights.begin(), p.weights.end());
  q.centres.assign(p.centres.begin(), p.centres.end());
  q.widths.assign(p.widths.begin(), p.widths.end());
  return q;
}

}  // namespace rbfpde
