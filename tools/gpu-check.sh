#!/usr/bin/env bash
# Builds the GPU targets on the GPU machine and runs the GPU tests, the end-to-end timing of the
# seed problem (gdcg and lm), the GPU benchmark, the JAX reference, and compute-sanitizer
# (memcheck, racecheck) over the GPU tests. Logs go to $OUT/*.log (or ./gpu-check-logs).
# Used through the device tool:  run(command="bash tools/gpu-check.sh", carry=[".mu"])
# STEPS selects steps (default: all): any of tests solve resume bench jax memcheck racecheck.
# The machine has no muParser: the carried .deb files in .mu/ are unpacked into /opt/mu.
set -uo pipefail
OUT="${OUT:-$PWD/gpu-check-logs}"
STEPS="${STEPS:-tests solve resume bench jax memcheck racecheck}"
mkdir -p "$OUT"
status=0
want() { [[ " $STEPS " == *" $1 "* ]]; }
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

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/device.log"
if [ -d .mu ]; then
  mkdir -p /opt/mu
  for f in .mu/*.deb; do dpkg -x "$f" /opt/mu; done
fi

step configure cmake -S . -B build-gpu -DRBFPDE_WITH_VTK=OFF -DCMAKE_PREFIX_PATH=/opt/mu/usr \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DRBFPDE_BUILD_BENCH=ON -DCMAKE_BUILD_TYPE=Release
# Only what the steps below run: the whole tree is built and tested on the CPU machines.
targets="rbfpde"
if want tests || want memcheck || want racecheck; then targets="$targets test_gpu"; fi
if want bench; then
  targets="$targets $(ls bench/bench_gpu_*.cpp 2>/dev/null | xargs -rn1 basename | sed 's/\.cpp$//')"
fi
step build_gpu cmake --build build-gpu -j16 --target $targets
export LD_LIBRARY_PATH="/opt/mu/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"

if want tests; then
  step ctest ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 180
fi
if want solve; then
  # End-to-end: training seconds from summary.json (the CLI's own phase timing).
  for cfg in poisson2d_seed_lm poisson2d_seed cube3d poisson2d_seed_mlp; do
    step "solve_$cfg" bash -c "./build-gpu/rbfpde solve configs/$cfg.yaml --backend cuda --quiet \
      --set output.directory=$OUT/$cfg --set output.report_every=5 && python3 bench/first_reach.py $OUT/$cfg/history.csv && python3 -c \"import json; s=json.load(open('$OUT/$cfg/summary.json')); \
print('$cfg', 'seconds', s['seconds'], 'final', s['final'], 'cycles', s['counts']['cycles'])\""
    rm -rf "$OUT/$cfg"
  done
fi
if want resume; then
  # Checkpoint/resume on the CUDA backend: a run stopped at max_cycles 60 and resumed to 150
  # must end with the same model.yaml as a run straight to 150 (device-drawn batches included).
  for cfg in poisson2d_seed poisson2d_seed_lm; do
    step "resume_$cfg" bash -c "set -e; r=\$(mktemp -d); \
      ./build-gpu/rbfpde solve configs/$cfg.yaml --backend cuda --quiet --set training.max_cycles=150 --set training.tolerance=0 --set output.directory=\$r/full; \
      ./build-gpu/rbfpde solve configs/$cfg.yaml --backend cuda --quiet --set training.max_cycles=60 --set training.tolerance=0 --set output.directory=\$r/part; \
      ./build-gpu/rbfpde solve configs/$cfg.yaml --backend cuda --quiet --resume --set training.max_cycles=150 --set training.tolerance=0 --set output.directory=\$r/part; \
      cmp \$r/full/model.yaml \$r/part/model.yaml && echo '$cfg: resumed run identical to the uninterrupted one'"
  done
  # The MLP: stopped in the Adam stage, resumed into the L-BFGS stage, resumed again with more
  # L-BFGS iterations; the same model.yaml as one run of 100 Adam steps + 60 L-BFGS iterations.
  step resume_poisson2d_seed_mlp bash -c "set -e; r=\$(mktemp -d); c=configs/poisson2d_seed_mlp.yaml; \
    s='--backend cuda --quiet --set training.tolerance=0'; b=./build-gpu/rbfpde; \
    \$b solve \$c \$s --set training.max_cycles=100 --set training.lbfgs.iterations=60 --set output.directory=\$r/full; \
    \$b solve \$c \$s --set training.max_cycles=40 --set training.lbfgs.iterations=0 --set output.directory=\$r/part; \
    \$b solve \$c \$s --resume --set training.max_cycles=100 --set training.lbfgs.iterations=20 --set output.directory=\$r/part; \
    \$b solve \$c \$s --resume --set training.max_cycles=100 --set training.lbfgs.iterations=60 --set output.directory=\$r/part; \
    cmp \$r/full/model.yaml \$r/part/model.yaml && echo 'poisson2d_seed_mlp: resumed run identical to the uninterrupted one'"
fi
if want bench; then
  for b in build-gpu/bench/bench_gpu_*; do
    [ -x "$b" ] && step "$(basename "$b")" timeout 300 "$b"
  done
fi
if want jax; then
  step jax timeout 300 env PYTHONUNBUFFERED=1 python3 bench/jax_rbf_cycle.py both
fi
# The sanitizers are slow: one precision covers every kernel. The allocation test is left out:
# its deliberate cudaMalloc failure would count as an API error.
SAN_FILTER="${SAN_FILTER:-CudaBackendParity.*Double:CudaBackendBehaviour.NanWidth*:CudaBackendBehaviour.SameInputs*Float:CudaFusedCycle.*Double:CudaDeviceSampler.Same*:CudaMlp*:-*SeedProblem*}"
if want memcheck; then
  step memcheck timeout 150 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
    ./build-gpu/tests/test_gpu --gtest_filter="$SAN_FILTER"
fi
if want racecheck; then
  step racecheck timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 \
    ./build-gpu/tests/test_gpu --gtest_filter="CudaBackendParity.*Double:CudaFusedCycle.*Double:CudaMlpParity/0.AdamSteps:CudaMlpParity/0.TrainStepsGraph:CudaMlpBackend.TinyNetworkEveryKernel:-*Fifty*:*SeedProblem*"
fi
exit $status
