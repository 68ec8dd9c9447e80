#!/usr/bin/env bash
# Builds the whole tree on the GPU machine and runs the GPU tests, compute-sanitizer (memcheck,
# racecheck) over them, and the GPU benchmarks. Logs go to $OUT/*.log (or ./gpu-check-logs).
# Used through the device tool:  run(command="bash tools/gpu-check.sh", carry=[".mu"])
# The machine has no muParser: the carried .deb files in .mu/ are unpacked into /opt/mu.
set -uo pipefail
OUT="${OUT:-$PWD/gpu-check-logs}"
mkdir -p "$OUT"
status=0
step() {  # step NAME COMMAND...: runs, tees into $OUT/NAME.log, remembers a failure
  local name="$1"
  shift
  echo "=== $name: $*"
  local t0=$SECONDS
  if ! "$@" 2>&1 | tee "$OUT/$name.log"; then
    echo "=== $name FAILED"
    status=1
  fi
  echo "=== $name took $((SECONDS - t0)) s"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.log"
if [ -d .mu ]; then
  mkdir -p /opt/mu
  for f in .mu/*.deb; do dpkg -x "$f" /opt/mu; done
fi

step configure cmake -S . -B build-gpu -DRBFPDE_WITH_VTK=OFF -DCMAKE_PREFIX_PATH=/opt/mu/usr \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DRBFPDE_BUILD_BENCH=ON
# Build the GPU tests and benchmarks first so that a failure elsewhere in the tree does not hide them.
step build_gpu cmake --build build-gpu -j16 --target test_gpu $(ls bench/bench_gpu_*.cpp 2>/dev/null | xargs -rn1 basename | sed 's/\.cpp$//')
step build_all cmake --build build-gpu -j16
export LD_LIBRARY_PATH="/opt/mu/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
step ctest ctest --test-dir build-gpu -L gpu --output-on-failure
# The sanitizers are slow: one precision covers every kernel. The allocation test is left out:
# its deliberate cudaMalloc failure would count as an API error.
SAN_FILTER="${SAN_FILTER:-CudaBackendParity.*Double:CudaBackendBehaviour.NanWidth*:CudaBackendBehaviour.SameInputs*Float}"
step memcheck compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
  ./build-gpu/tests/test_gpu --gtest_filter="$SAN_FILTER"
step racecheck compute-sanitizer --tool racecheck --error-exitcode 1 \
  ./build-gpu/tests/test_gpu --gtest_filter="CudaBackendParity.*Double:-*Fifty*"
for b in build-gpu/bench/bench_gpu_*; do
  [ -x "$b" ] && step "$(basename "$b")" timeout 240 "$b"
done
exit $status
