// Variant 4's static tile schedule (kernels/mlp_tile_schedule.hpp): every tile taken exactly
// once, boundary tiles first within a block, and never a heavier busiest block than dealing
// the tiles round robin (interior, then boundary), counting a boundary tile as `cost` interior
// tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/mlp_tile_schedule.hpp"

namespace rbfpde {
namespace {

struct Loads {
  int busiest = 0;     // the heaviest block's tiles, a boundary tile counting `cost`
  bool exact = true;   // every tile taken by exactly one block
  bool ordered = true; // within a block, no boundary tile after an interior one
};

Loads schedule_loads(int G, int n_int, int n_bnd, int cost) {
  Loads r;
  std::vector<int> taken(std::size_t(n_int + n_bnd), 0);
  for (int b = 0; b < G; ++b) {
    int load = 0;
    bool interior_seen = false;
    for (int it = 0;; ++it) {
      const int t = point_tile_schedule(it, b, G, n_int, n_bnd, cost);
      if (t < 0) break;
      if (t >= n_int + n_bnd || it > n_int + n_bnd) {
        r.exact = false;
        break;
      }
      ++taken[std::size_t(t)];
      const bool boundary = t >= n_int;
      if (boundary && interior_seen) r.ordered = false;
      interior_seen = interior_seen || !boundary;
      load += boundary ? cost : 1;
    }
    r.busiest = std::max(r.busiest, load);
  }
  for (int c : taken) r.exact = r.exact && c == 1;
  return r;
}

int round_robin_busiest(int G, int n_int, int n_bnd, int cost) {
  int busiest = 0;
  for (int b = 0; b < G; ++b) {
    int load = 0;
    for (int t = b; t < n_int + n_bnd; t += G) load += t >= n_int ? cost : 1;
    busiest = std::max(busiest, load);
  }
  return busiest;
}

TEST(PointTileSchedule, TakesEveryTileOnceAndNeverLoadsABlockMoreThanRoundRobin) {
  int better = 0;
  for (int G = 1; G <= 70; ++G)
    for (int n_int = 0; n_int <= 3 * G + 2; n_int += G > 16 ? 3 : 1)
      for (int n_bnd = 0; n_bnd <= 2 * G + 3; n_bnd += G > 16 ? 5 : 1)
        for (int cost = 1; cost <= 3; ++cost) {
          if (n_int + n_bnd == 0) continue;
          const int grid = std::min(G, n_int + n_bnd);  // the planner's grid: ≤ the tiles
          const Loads l = schedule_loads(grid, n_int, n_bnd, cost);
          ASSERT_TRUE(l.exact) << grid << " blocks, " << n_int << " + " << n_bnd << " tiles";
          ASSERT_TRUE(l.ordered) << grid << " blocks, " << n_int << " + " << n_bnd << " tiles";
          const int rr = round_robin_busiest(grid, n_int, n_bnd, cost);
          ASSERT_LE(l.busiest, rr) << grid << " blocks, " << n_int << " + " << n_bnd << " tiles";
          better += l.busiest < rr;
        }
  EXPECT_GT(better, 0);
}

TEST(PointTileSchedule, BalancesTheBenchmarkBatch) {
  // 16384 + 1024 points in 32-point tiles (boundary: 128 points a tile): 512 + 8 tiles. Float
  // runs 264 blocks (two an SM on 132 SMs), double 132. Round robin put the boundary tiles on
  // blocks that also had a full share of interior tiles.
  EXPECT_EQ(schedule_loads(264, 512, 8, 2).busiest, 2);
  EXPECT_EQ(round_robin_busiest(264, 512, 8, 2), 3);
  EXPECT_EQ(schedule_loads(132, 512, 8, 2).busiest, 4);
  EXPECT_EQ(round_robin_busiest(132, 512, 8, 2), 5);
  // 12288 + 768: 384 + 6 tiles on 264 blocks.
  EXPECT_EQ(schedule_loads(264, 384, 6, 2).busiest, 2);
  // cost 1 deals interior tiles as round robin does, the boundary tiles on the last blocks.
  for (int b = 0; b < 10; ++b) EXPECT_EQ(point_tile_schedule(0, b, 10, 25, 3, 1), b < 7 ? b : 25 + 9 - b);
}

}  // namespace
}  // namespace rbfpde
