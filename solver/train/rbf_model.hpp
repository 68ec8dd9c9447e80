// The RBF network's initial state (DESIGN.md §2): centres on a lattice over the domain (or
// drawn at random inside it), widths a multiple of the centre spacing, zero weights (the
// trainer then solves for least-squares weights).
#pragma once

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

// Smallest width training may produce: a thousandth of the bounding-box diagonal.
double minimum_width(const Domain& domain);

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
