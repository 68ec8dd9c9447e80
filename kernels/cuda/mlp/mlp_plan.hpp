// The planner's selection rules (plan_mlp_tiling in mlp_launch.cu, plan_point_tiling in
// mlp_point_kernel.cu) as functions of the network, the batch and the device's counts alone, so
// that host tests (tests/kernels/test_mlp_tile_schedule.cpp) check which kernel and tiling each
// shape gets. The occupancies (resident blocks per SM) come from the CUDA runtime in the
// planner and from the test's numbers in the tests. No CUDA types.
#pragma once

#include <algorithm>

#include "kernels/cuda/mlp/mlp_kernels.hpp"

namespace rbfpde::gpu {

// ---- The point-stationary kernel (mlp_point_kernel.cu) --------------------------------------
inline constexpr int kPtMaxWidth = 64;

// It takes 2D networks whose hidden layers all have one width ≤ kPtMaxWidth, with one output,
// and a Laplacian over both coordinates (its rows are Poisson/Dirichlet ones: the CUDA backend
// plans general batches on the tiled kernel).
template <class T>
bool point_pass_fits(const MlpNetView<T>& net) {
  const int hidden = net.layers - 1;
  if (net.dim != 2 || hidden < 1 || net.sizes[net.layers] != 1) return false;
  if (net.lap_dims != 0 && net.lap_dims != net.dim) return false;
  for (int l = 1; l <= hidden; ++l)
    if (net.sizes[l] != net.sizes[1]) return false;
  return net.sizes[1] <= kPtMaxWidth;
}

// Feature groups (warps a 32-point tile) a kernel of R features a thread and nt tiles a block
// takes: float 13 (widths ≤ 64), or 10 with two tiles a block (640 threads of 96 registers,
// widths ≤ 50); double 12 with R = 5 (widths ≤ 60) and 7 with R = 10 (widths ≤ 64).
template <class T>
constexpr int pt_max_groups(int R, int nt) {
  if (sizeof(T) == sizeof(float)) return nt == 2 ? 50 / R : (kPtMaxWidth + R - 1) / R;
  return R >= 10 ? (kPtMaxWidth + R - 1) / R : 12;
}

// Features of every hidden layer a thread owns: 5, or 10 in double for widths past 60.
template <class T>
constexpr int pt_rows(int width) {
  return sizeof(T) == sizeof(double) && (width + 4) / 5 > pt_max_groups<T>(5, 1) ? 10 : 5;
}

// 32-point tiles a block: 1 or 2 (two in float only; double's would spill).
template <class T>
inline constexpr int kPtMaxTiles = sizeof(T) == sizeof(double) ? 1 : 2;

// Tiles of a batch with nt 32-point tiles a block: interior tiles of 32·nt points, boundary tiles
// packed four points a lane (128·nt points).
inline int point_tiles(int n_int, int n_bnd, int nt) {
  return (n_int + 32 * nt - 1) / (32 * nt) + (n_bnd + 128 * nt - 1) / (128 * nt);
}

// The point kernel is the default from this many of its tiles per SM. A tile takes about 70 µs
// in float and 100 µs in double however few there are, while the tiled kernel's time grows with
// the batch. Measured crossover (bench_gpu_mlp crossover, H200, 132 SMs): float between 39 and 65
// tiles (14083 against 16417 it/s at 1200 + 120, 14489 against 11984 at 2048 + 128; about 0.4 an
// SM) and double between 65 and 130 (11000 against 9835 at 2048 + 128, 9364 against 6889 at
// 4096 + 256; about 0.6 an SM, the rule takes 0.65).
template <class T>
inline constexpr double kPtDefaultTilesPerSm = sizeof(T) == sizeof(double) ? 0.65 : 0.4;

template <class T>
bool point_kernel_by_default(int tiles, int sms) {
  return tiles >= kPtDefaultTilesPerSm<T> * sms;
}

// Tiles a block (1 … kPtMaxTiles): the count with the fewest rounds of the busiest SM, counted in
// 32-point tiles, ties to fewer tiles a block. per_sm[nt − 1]: resident blocks an SM of the
// kernel with nt tiles a block (0: it does not fit). forced (1 or 2) takes only that count.
// Returns 0 when none fits.
template <class T>
int choose_point_tiles(const int (&per_sm)[2], int n_int, int n_bnd, int sms, int forced = 0) {
  int best = 0, best_rounds = 0;
  for (int nt = 1; nt <= kPtMaxTiles<T>; ++nt) {
    if ((forced != 0 && nt != forced) || per_sm[nt - 1] < 1) continue;
    const int resident = per_sm[nt - 1] * sms;
    const int rounds =
        (point_tiles(n_int, n_bnd, nt) + resident - 1) / resident * per_sm[nt - 1] * nt;
    if (best == 0 || rounds < best_rounds) {
      best = nt;
      best_rounds = rounds;
    }
  }
  return best;
}

// ---- The tiled kernel (mlp_pass_kernel.cu) ----------------------------------------------------
// Its time per tile, as points: a + b·points with a / b ≈ 20 (H200, float, 1200 + 120: 61 µs a
// step with 16-point tiles, 51 µs with 10, one wave each).
inline constexpr int kTileFixedPoints = 20;
inline constexpr int kTileMaxPoints = 16;

struct TileChoice {
  int points = 0;    // 0: not even one point fits
  int resident = 0;  // resident blocks on the device
};

// The tile size: of 1 to kTileMaxPoints points (at most max_points when it is ≥ 1, then the
// first size down from it that fits), the one with the fewest waves of resident blocks ×
// (points + kTileFixedPoints), ties to the larger tile. A tile's time grows with its points, so
// within the fewest waves the smallest tile wins (H200, 1200 + 120: float 16 points 16.5k it/s,
// 10 points 19.6k; double 8 points 13.4k, 5 points 14.6k). per_sm(p): resident blocks an SM with
// p-point tiles (0: they do not fit).
template <class PerSm>
TileChoice choose_tile_points(int n_int, int n_bnd, int sms, int max_points, PerSm per_sm) {
  TileChoice best;
  long best_cost = 0;
  for (int p = max_points >= 1 ? std::min(max_points, kTileMaxPoints) : kTileMaxPoints; p >= 1;
       --p) {
    const int blocks = per_sm(p);
    if (blocks < 1) continue;
    const int resident = blocks * sms;
    const long tiles = (n_int + p - 1) / p + (n_bnd + p - 1) / p;
    const long cost = (tiles + resident - 1) / resident * (p + kTileFixedPoints);
    if (best.points == 0 || cost < best_cost) {
      best = {p, resident};
      best_cost = cost;
    }
    if (max_points >= 1) break;
  }
  return best;
}

}  // namespace rbfpde::gpu
