// A rank's share of a collocation batch, for the tests that compare a run over ranks with one
// process on the union of the ranks' points.
#pragma once

#include <vector>

#include "kernels/comm.hpp"
#include "problems/problem.hpp"

namespace rbfpde {

// Rows [s.offset, s.offset + s.count) of every per-point vector of `all` (stride per point).
inline CollocationBatch share_batch(const CollocationBatch& all, int rank, int size) {
  const Share si = share_of(all.n_interior(), rank, size),
              sb = share_of(all.n_boundary(), rank, size);
  const auto slice = [](const std::vector<double>& v, const Share& s, std::size_t total) {
    if (v.empty()) return v;
    const std::size_t stride = v.size() / total;
    return std::vector<double>(v.begin() + long(s.offset * stride),
                               v.begin() + long((s.offset + s.count) * stride));
  };
  CollocationBatch b;
  b.dim = all.dim;
  b.space_dim = all.space_dim;
  const std::size_t ni = all.n_interior(), nb = all.n_boundary();
  b.interior = slice(all.interior, si, ni);
  b.f = slice(all.f, si, ni);
  b.a = slice(all.a, si, ni);
  b.b = slice(all.b, si, ni);
  b.c = slice(all.c, si, ni);
  b.boundary = slice(all.boundary, sb, nb);
  b.normals = slice(all.normals, sb, nb);
  b.p = slice(all.p, sb, nb);
  b.alpha = slice(all.alpha, sb, nb);
  b.beta = slice(all.beta, sb, nb);
  return b;
}

}  // namespace rbfpde
