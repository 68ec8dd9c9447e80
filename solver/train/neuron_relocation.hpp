// Neuron relocation, variable projection's restart (docs/mathematics.md, "Restarts"): when the
// iterations stall on their fixed batch with the loss far above its rounding floor, the least
// useful neurons move to the points of largest residual. Pure functions of host copies of the
// parameters, the batch and its residuals, so that every backend gets the same rule through
// RbfBackend's parameters() and set_parameters().
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/backend.hpp"
#include "problems/problem.hpp"

namespace rbfpde {

// The share of the neurons the first restart relocates (at least one neuron); each later restart
// of the run moves twice as many as the one before, at most half the network: a minimum that one
// restart's few neurons did not leave needs a larger move.
constexpr double kRelocatedShare = 0.05;
// How many neurons the restart that follows `restarts_so_far` earlier ones relocates.
int relocated_count(int neurons, int restarts_so_far);

// For every neuron k, this batch's part of |F_k|², the squared norm of its scaled feature column
// F_k = [L φ_k / √N ; √(λ/K)·B φ_k] (L, B the batch's interior and boundary rows, N and K the
// union's point counts, λ the penalty): summed over the ranks, it is the whole column's.
std::vector<double> feature_column_squares(const RbfParameters<double>& params,
                                           const CollocationBatch& batch, double penalty,
                                           double n_total, double k_total);

// The `count` neurons of least usefulness |w_k|·|F_k| (`squares` the |F_k|²), least useful first,
// ties to the lower index.
std::vector<int> least_useful_neurons(const std::vector<double>& weights,
                                      const std::vector<double>& squares, int count);

// This batch's candidate targets: up to `count` points of largest scaled residual |e_i|/√N
// (interior) or √(λ/K)·|b_j| (boundary), as `count` rows (score, x₁ … x_d), largest score first;
// rows past the batch's points are padded with score −1.
std::vector<double> residual_peaks(const CollocationBatch& batch, const std::vector<double>& e,
                                   const std::vector<double>& b, double penalty, double n_total,
                                   double k_total, int count);

// Up to `count` targets from candidate rows (score, x₁ … x_d) — every rank's residual_peaks
// together — largest score first, each at least `separation` from those already chosen; rows of
// negative score are padding. Returns the chosen points (row-major, d each).
std::vector<double> choose_targets(const std::vector<double>& candidates, int dim, int count,
                                   double separation);

}  // namespace rbfpde
