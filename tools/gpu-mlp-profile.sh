#!/usr/bin/env bash
# Nsight Compute over the CUDA MLP pass kernels at 16384 + 1024 points (bench_gpu_mlp profile),
# one launch per kernel (tiled, point) and precision given in KERNELS / PRECISIONS. Logs in $OUT.
# Used through the device tool after tools/gpu-mlp-check.sh has built build-gpu-mlp (or builds).
set -uo pipefail
OUT="${OUT:-$PWD/gpu-mlp-profile-logs}"
KERNELS="${KERNELS:-tiled point}"
PRECISIONS="${PRECISIONS:-float double}"
mkdir -p "$OUT"
source "$(dirname "$0")/gpu-machine.sh"
if [ ! -x build-gpu-mlp/bench/bench_gpu_mlp ]; then
  cmake -S . -B build-gpu-mlp "${gpu_cmake_opts[@]}" >"$OUT/configure.log" 2>&1
  cmake --build build-gpu-mlp -j16 --target bench_gpu_mlp >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
fi
NCU="$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
[ -n "$NCU" ] || { echo "no ncu on this machine"; exit 1; }
for p in $PRECISIONS; do
  for v in $KERNELS; do
    echo "=== $v kernel, $p"
    "$NCU" -k regex:'mlp_(pass|point)_kernel' --launch-skip 2 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
      --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section LaunchStats \
      --section SourceCounters \
      --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
      build-gpu-mlp/bench/bench_gpu_mlp profile "$p" "$v" >"$OUT/ncu_${p}_$v.log" 2>&1
    grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Dynamic Shared|Executed Ipc|Bank|Stall|stall" "$OUT/ncu_${p}_$v.log"
  done
done
