#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kernels/comm.hpp"

namespace rbfpde {
namespace {

TEST(MpiComm, RunsUnderSeveralRanks) {
  // The ctest entries start 2 and 3 ranks: one rank here means mpirun did not start them.
  EXPECT_GE(world_communicator()->size(), 2);
  EXPECT_EQ(world_communicator()->name(), "mpi");
}

TEST(MpiComm, AllreduceBroadcastAllgather) {
  auto comm = world_communicator();
  const int r = comm->rank(), n = comm->size();
  std::vector<double> d = {double(r), 1.0, double(r * r)};
  comm->allreduce_sum(d.data(), d.size());
  EXPECT_EQ(d[0], n * (n - 1) / 2.0);
  EXPECT_EQ(d[1], double(n));
  std::vector<float> f = {float(r + 1)};
  comm->allreduce_sum(f.data(), 1);
  EXPECT_EQ(f[0], float(n * (n + 1) / 2));

  long value = r == n - 1 ? 4242 : -1;
  comm->broadcast(&value, sizeof value, n - 1);
  EXPECT_EQ(value, 4242);

  const double mine[2] = {double(r), double(10 * r)};
  std::vector<double> all(std::size_t(2 * n));
  comm->allgather(mine, 2, all.data());
  for (int k = 0; k < n; ++k) {
    EXPECT_EQ(all[std::size_t(2 * k)], k);
    EXPECT_EQ(all[std::size_t(2 * k + 1)], 10.0 * k);
  }
  const float fm = float(r);
  std::vector<float> fall(static_cast<std::size_t>(n));
  comm->allgather(&fm, 1, fall.data());
  for (int k = 0; k < n; ++k) EXPECT_EQ(fall[std::size_t(k)], float(k));
  comm->barrier();
}

TEST(MpiComm, SharesCoverTheUnionFirstRanksOneMore) {
  for (std::size_t total : {0u, 1u, 7u, 100u, 101u})
    for (int size = 1; size <= 5; ++size) {
      std::size_t next = 0;
      for (int r = 0; r < size; ++r) {
        const Share s = share_of(total, r, size);
        EXPECT_EQ(s.offset, next);
        const std::size_t q = total / std::size_t(size);
        EXPECT_EQ(s.count, q + (std::size_t(r) < total % std::size_t(size) ? 1 : 0));
        next += s.count;
      }
      EXPECT_EQ(next, total);
    }
}

TEST(MpiComm, RankSeedsDifferAndRankZeroKeepsTheSeed) {
  EXPECT_EQ(rank_seed(1234, 0), 1234u);
  EXPECT_NE(rank_seed(1234, 1), rank_seed(1234, 2));
  EXPECT_NE(rank_seed(1234, 1), 1234u);
  EXPECT_NE(rank_seed(1234, 1), rank_seed(1235, 1));
}

}  // namespace
}  // namespace rbfpde
