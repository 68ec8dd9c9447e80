// The CUDA MLP planner's rules on the host: the point kernel's static tile schedule
// (kernels/mlp_tile_schedule.hpp: every tile taken exactly once, boundary tiles first within a
// block, and never a heavier busiest block than dealing the tiles round robin, counting a
// boundary tile as `cost` interior tiles), and which kernel, tiles a block and tile size each
// shape gets (kernels/cuda/mlp/mlp_plan.hpp), with the device's occupancies given as numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/cuda/mlp/mlp_plan.hpp"
#include "kernels/mlp_tile_schedule.hpp"

namespace rbfpde {
namespace {

struct Loads {
  int busiest = 0;      // the heaviest block's tiles, a boundary tile counting `cost`
  bool exact = true;    // every tile taken by exactly one block
  bool ordered = true;  // within a block, no boundary tile after an interior one
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
  for (int b = 0; b < 10; ++b)
    EXPECT_EQ(point_tile_schedule(0, b, 10, 25, 3, 1), b < 7 ? b : 25 + 9 - b);
}

// A network of the given layer sizes (input, hidden…, output), as mlp_plan.hpp reads it.
gpu::MlpNetView<float> net_of(std::vector<int> sizes) {
  gpu::MlpNetView<float> net;
  net.dim = sizes.front();
  net.layers = int(sizes.size()) - 1;
  for (std::size_t l = 0; l < sizes.size(); ++l) net.sizes[l] = sizes[l];
  return net;
}

TEST(MlpPlanRules, PointKernelTakesTwoDimensionalNetworksOfOneWidthAndOneOutput) {
  EXPECT_TRUE(gpu::point_pass_fits(net_of({2, 50, 50, 50, 50, 1})));
  EXPECT_TRUE(gpu::point_pass_fits(net_of({2, 64, 64, 1})));
  EXPECT_TRUE(gpu::point_pass_fits(net_of({2, 7, 1})));
  EXPECT_FALSE(gpu::point_pass_fits(net_of({2, 65, 65, 1})));      // wider than 64
  EXPECT_FALSE(gpu::point_pass_fits(net_of({2, 37, 50, 29, 1})));  // unequal widths
  EXPECT_FALSE(gpu::point_pass_fits(net_of({3, 50, 50, 1})));      // 3D
  EXPECT_FALSE(gpu::point_pass_fits(net_of({2, 50, 50, 2})));      // two outputs
  EXPECT_FALSE(gpu::point_pass_fits(net_of({2, 1})));              // no hidden layer
  {
    gpu::MlpNetView<float> time_net = net_of({2, 50, 50, 1});
    time_net.lap_dims = 1;  // a Laplacian over x alone (space-time): general rows
    EXPECT_FALSE(gpu::point_pass_fits(time_net));
  }
}

TEST(MlpPlanRules, FeaturesAThreadOwns) {
  EXPECT_EQ(gpu::pt_rows<float>(64), 5);
  EXPECT_EQ(gpu::pt_rows<double>(50), 5);
  EXPECT_EQ(gpu::pt_rows<double>(60), 5);
  EXPECT_EQ(gpu::pt_rows<double>(61), 10);
  EXPECT_EQ(gpu::pt_rows<double>(64), 10);
}

TEST(MlpPlanRules, PointKernelByDefaultFromItsCrossover) {
  // 132 SMs (H100 SXM, H200). 1200 + 120 is 39 tiles, 2048 + 128 65, 4096 + 256 130.
  EXPECT_EQ(gpu::point_tiles(1200, 120, 1), 39);
  EXPECT_EQ(gpu::point_tiles(2048, 128, 1), 65);
  EXPECT_EQ(gpu::point_tiles(4096, 256, 1), 130);
  EXPECT_EQ(gpu::point_tiles(4096, 256, 2), 65);
  EXPECT_FALSE(gpu::point_kernel_by_default<float>(39, 132));
  EXPECT_TRUE(gpu::point_kernel_by_default<float>(65, 132));
  EXPECT_FALSE(gpu::point_kernel_by_default<double>(65, 132));
  EXPECT_TRUE(gpu::point_kernel_by_default<double>(130, 132));
}

TEST(MlpPlanRules, PointTilesABlockByRounds) {
  // Width 50 in float: two blocks of one tile an SM, or one of two tiles: the same rounds, so
  // one tile a block.
  EXPECT_EQ(gpu::choose_point_tiles<float>({2, 1}, 16384, 1024, 132), 1);
  EXPECT_EQ(gpu::choose_point_tiles<float>({2, 1}, 16384, 1024, 132, 2), 2);
  // Seven blocks of one tile an SM against three of two (narrow networks): 132 tiles take 7
  // rounds of one-tile blocks and 6 of two-tile blocks; 800 tiles 7 against 12.
  EXPECT_EQ(gpu::choose_point_tiles<float>({7, 3}, 132 * 32, 0, 132), 2);
  EXPECT_EQ(gpu::choose_point_tiles<float>({7, 3}, 800 * 32, 0, 132), 1);
  // Two tiles a block: float only; nothing fits: 0.
  EXPECT_EQ(gpu::choose_point_tiles<double>({1, 1}, 16384, 1024, 132), 1);
  EXPECT_EQ(gpu::choose_point_tiles<double>({1, 1}, 16384, 1024, 132, 2), 0);
  EXPECT_EQ(gpu::choose_point_tiles<float>({0, 0}, 16384, 1024, 132), 0);
}

TEST(MlpPlanRules, TiledKernelTileSizeByWaves) {
  auto up_to = [](int max) { return [max](int p) { return p <= max ? 1 : 0; }; };
  // Float fits 16 points: one wave of 10-point tiles at 1200 + 120 (132 tiles on 132 SMs).
  EXPECT_EQ(gpu::choose_tile_points(1200, 120, 132, 0, up_to(16)).points, 10);
  // Double fits 8: two waves at any size, the smallest of those tiles, 5.
  EXPECT_EQ(gpu::choose_tile_points(1200, 120, 132, 0, up_to(8)).points, 5);
  const gpu::TileChoice small = gpu::choose_tile_points(300, 30, 132, 0, up_to(16));
  EXPECT_EQ(small.points, 3);
  EXPECT_EQ(small.resident, 132);
  // Two blocks an SM double the resident blocks.
  EXPECT_EQ(gpu::choose_tile_points(300, 30, 132, 0, [](int) { return 2; }).resident, 264);
  // A forced size: the first one down from it that fits.
  EXPECT_EQ(gpu::choose_tile_points(1200, 120, 132, 8, up_to(16)).points, 8);
  EXPECT_EQ(gpu::choose_tile_points(1200, 120, 132, 12, up_to(6)).points, 6);
  EXPECT_EQ(gpu::choose_tile_points(1200, 120, 132, 0, up_to(0)).points, 0);
}

}  // namespace
}  // namespace rbfpde
