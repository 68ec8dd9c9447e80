// A rank's share of a collocation batch, for the tests that compare a run over ranks with one
// process on the union of the ranks' points, and the comparisons those tests make.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

// max |a − b| ≤ rel · max |a|, with max |a| > 0 (a comparison of zeros proves nothing).
inline void expect_close_to_union(const std::vector<double>& a, const std::vector<double>& b,
                                  double rel, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double scale = 0, err = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::abs(a[i]));
    err = std::max(err, std::abs(a[i] - b[i]));
  }
  EXPECT_GT(scale, 0.0) << what;
  EXPECT_LE(err, rel * scale) << what << ": max difference " << err << " against max |value| "
                              << scale;
}

// Every rank holds the same `mine`, bit for bit (a collective).
inline void expect_identical_on_every_rank(Communicator& comm, const std::vector<double>& mine) {
  std::vector<double> all(mine.size() * std::size_t(comm.size()));
  comm.allgather(mine.data(), mine.size(), all.data());
  for (int r = 1; r < comm.size(); ++r)
    for (std::size_t i = 0; i < mine.size(); ++i)
      ASSERT_EQ(all[i], all[std::size_t(r) * mine.size() + i]) << "rank " << r << ", entry " << i;
}

}  // namespace rbfpde
