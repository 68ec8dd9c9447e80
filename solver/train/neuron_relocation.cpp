#include "solver/train/neuron_relocation.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "kernels/rbf_math.hpp"

namespace rbfpde {
namespace {

template <int D>
void column_squares(const RbfParameters<double>& p, const CollocationBatch& batch, double penalty,
                    double n_total, double k_total, std::vector<double>& out) {
  const int m = p.neurons();
  const int ds = batch.laplacian_dims();
  const std::size_t n = batch.n_interior(), k = batch.n_boundary();
  const double scale_i = 1.0 / std::max(n_total, 1.0), scale_b = penalty / std::max(k_total, 1.0);
  out.assign(std::size_t(m), 0.0);
#pragma omp parallel for schedule(static)
  for (int q = 0; q < m; ++q) {
    const double* c = &p.centres[std::size_t(q) * D];
    const double a = p.widths[std::size_t(q)];
    double si = 0, sb = 0, diff[D];
    for (std::size_t i = 0; i < n; ++i) {
      const double r2 = squared_distance<D>(&batch.interior[i * D], c, diff);
      const double v = operator_row_value<D>(diff, r2, a, ds, batch.a.empty() ? 1.0 : batch.a[i],
                                             batch.b.empty() ? nullptr : &batch.b[i * D],
                                             batch.c.empty() ? 0.0 : batch.c[i]);
      si += v * v;
    }
    for (std::size_t j = 0; j < k; ++j) {
      const double r2 = squared_distance<D>(&batch.boundary[j * D], c, diff);
      const double beta = batch.beta.empty() ? 0.0 : batch.beta[j];
      const double v =
          boundary_row_value<D>(diff, r2, a, beta != 0.0 ? &batch.normals[j * D] : nullptr,
                                batch.alpha.empty() ? 1.0 : batch.alpha[j], beta);
      sb += v * v;
    }
    out[std::size_t(q)] = scale_i * si + scale_b * sb;
  }
}

}  // namespace

int relocated_count(int neurons, int restarts_so_far) {
  const long first = std::max(1L, std::lround(kRelocatedShare * neurons));
  const long doubled = first << std::min(restarts_so_far, 20);
  return int(std::min<long>(doubled, std::max(1, neurons / 2)));
}

std::vector<double> feature_column_squares(const RbfParameters<double>& params,
                                           const CollocationBatch& batch, double penalty,
                                           double n_total, double k_total) {
  std::vector<double> out;
  switch (params.dim) {
    case 2:
      column_squares<2>(params, batch, penalty, n_total, k_total, out);
      break;
    case 3:
      column_squares<3>(params, batch, penalty, n_total, k_total, out);
      break;
    case 4:
      column_squares<4>(params, batch, penalty, n_total, k_total, out);
      break;
    default:
      throw std::invalid_argument("feature_column_squares: the dimension must be 2, 3 or 4");
  }
  return out;
}

std::vector<int> least_useful_neurons(const std::vector<double>& weights,
                                      const std::vector<double>& squares, int count) {
  const int m = int(weights.size());
  std::vector<double> use(std::size_t(m), 0.0);
  for (int k = 0; k < m; ++k)
    use[std::size_t(k)] = std::abs(weights[std::size_t(k)]) * std::sqrt(squares[std::size_t(k)]);
  std::vector<int> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return use[std::size_t(x)] < use[std::size_t(y)]; });
  order.resize(std::size_t(std::clamp(count, 0, m)));
  return order;
}

std::vector<double> residual_peaks(const CollocationBatch& batch, const std::vector<double>& e,
                                   const std::vector<double>& b, double penalty, double n_total,
                                   double k_total, int count) {
  const int d = batch.dim;
  const std::size_t n = e.size(), k = b.size();
  const double scale_i = 1.0 / std::sqrt(std::max(n_total, 1.0));
  const double scale_b = std::sqrt(penalty / std::max(k_total, 1.0));
  std::vector<double> score(n + k);
  for (std::size_t i = 0; i < n; ++i) score[i] = scale_i * std::abs(e[i]);
  for (std::size_t j = 0; j < k; ++j) score[n + j] = scale_b * std::abs(b[j]);
  std::vector<std::size_t> order(n + k);
  std::iota(order.begin(), order.end(), std::size_t(0));
  const std::size_t take = std::min(order.size(), std::size_t(std::max(count, 0)));
  std::partial_sort(order.begin(), order.begin() + long(take), order.end(),
                    [&](std::size_t x, std::size_t y) {
                      return score[x] > score[y] || (score[x] == score[y] && x < y);
                    });
  std::vector<double> rows(std::size_t(std::max(count, 0)) * std::size_t(d + 1), 0.0);
  for (int r = 0; r < count; ++r) {
    double* row = &rows[std::size_t(r) * std::size_t(d + 1)];
    if (std::size_t(r) >= take) {
      row[0] = -1;
      continue;
    }
    const std::size_t q = order[std::size_t(r)];
    row[0] = score[q];
    const double* x = q < n ? &batch.interior[q * d] : &batch.boundary[(q - n) * d];
    std::copy(x, x + d, row + 1);
  }
  return rows;
}

std::vector<double> choose_targets(const std::vector<double>& candidates, int dim, int count,
                                   double separation) {
  const std::size_t stride = std::size_t(dim + 1), rows = candidates.size() / stride;
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return candidates[x * stride] > candidates[y * stride];
  });
  std::vector<double> chosen;
  for (std::size_t q : order) {
    if (int(chosen.size()) / dim >= count) break;
    const double* row = &candidates[q * stride];
    if (!(row[0] >= 0)) break;
    bool apart = true;
    for (std::size_t t = 0; apart && t < chosen.size(); t += std::size_t(dim)) {
      double r2 = 0;
      for (int j = 0; j < dim; ++j)
        r2 += (row[1 + j] - chosen[t + j]) * (row[1 + j] - chosen[t + j]);
      apart = r2 >= separation * separation;
    }
    if (apart) chosen.insert(chosen.end(), row + 1, row + 1 + dim);
  }
  return chosen;
}

}  // namespace rbfpde
