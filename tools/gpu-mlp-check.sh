#!/usr/bin/env bash
# The CUDA MLP backend on the GPU machine: its tests (CudaMlp*), the benchmark (bench_gpu_mlp),
# the JAX reference (bench/jax_mlp.py), the seed problem's time to accuracy (RBF lm and the MLP
# through the CLI), and compute-sanitizer memcheck and racecheck over MLP tests. Logs go to
# $OUT/*.log (or ./gpu-mlp-check-logs).
# Used through the device tool:  run(command="bash tools/gpu-mlp-check.sh", carry=[".mu"])
# (logs grouped by step prefix: device, configure, build, tests, bench, jax, solve, sanitizers).
# STEPS selects steps (default: all): any of tests baseline bench draws crossover tiles pdl
# jax jaxhighest solve adam memcheck racecheck (draws: bench_gpu_mlp draws, a fresh
# batch every step drawn on the device against one sampled on the host; adam: the seed MLP
# with Adam alone under longer schedules, ADAM_RUNS overriding the list of runs,
# ';'-separated; baseline: when BASELINE names another build's bench_gpu_mlp, or an .xz of one,
# `bench_gpu_mlp quick` of it and of this build, alternating, twice: versions compared in one
# call; crossover: bench_gpu_mlp crossover, the point kernel against the
# tiled kernel by batch size; tiles: the tiled kernel's tile sizes; pdl: `bench_gpu_mlp quick`
# and `bench_gpu_mlp nopdl` (without the programmatic dependent launch), alternating;
# jaxhighest: the JAX reference in float32 with true float32 matmuls, not TF32 — rbfpde's
# arithmetic).
# BUDGET (seconds, default 420): steps that would start after it are skipped, so that a call
# stays inside the session's device time.
# Binaries: built here (build-gpu-mlp, -j16); when .mlpbin/ (carried) holds test_gpu,
# bench_gpu_mlp and rbfpde built elsewhere for sm_90 (Release, CUDA 13.0), with .mlpbin/lib for
# libraries the machine lacks (the build machine's libyaml-cpp), and they resolve and run, those
# are used instead and the build is skipped, saving device time (they embed /work/main as the
# source directory: linked to the checkout here). To prepare: build the three targets, then
#   mkdir -p .mlpbin/lib && cp build/tests/test_gpu build/bench/bench_gpu_mlp build/rbfpde .mlpbin/
#   cp -L /lib/x86_64-linux-gnu/libyaml-cpp.so.0.7 .mlpbin/lib/; echo /.mlpbin/ >>.git/info/exclude
# and add ".mlpbin" to carry.
set -uo pipefail
OUT="${OUT:-$PWD/gpu-mlp-check-logs}"
STEPS="${STEPS:-tests baseline bench draws crossover tiles pdl jax jaxhighest solve adam memcheck racecheck}"
BUDGET="${BUDGET:-420}"
mkdir -p "$OUT"
status=0
want() { [[ " $STEPS " == *" $1 "* ]]; }
# step NAME COMMAND...: runs, appends to $OUT/GROUP.log (GROUP: NAME up to its first '_'; the
# device tool brings back 8 files at most), remembers a failure.
step() {
  local name="$1"
  shift
  local log="$OUT/${name%%_*}.log"
  if ((SECONDS > BUDGET)); then
    echo "=== $name SKIPPED (budget ${BUDGET} s spent)" | tee -a "$log"
    return
  fi
  echo "=== $name: $*" | tee -a "$log"
  local t0=$SECONDS
  if ! "$@" 2>&1 | tee -a "$log"; then
    echo "=== $name FAILED" | tee -a "$log"
    status=1
  fi
  echo "=== $name took $((SECONDS - t0)) s" | tee -a "$log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader | tee "$OUT/device.log"
source "$(dirname "$0")/gpu-machine.sh"

TEST=build-gpu-mlp/tests/test_gpu
BENCH=build-gpu-mlp/bench/bench_gpu_mlp
CLI=build-gpu-mlp/rbfpde
prebuilt=0
if [ -x .mlpbin/test_gpu ] && [ -x .mlpbin/bench_gpu_mlp ] && [ -x .mlpbin/rbfpde ]; then
  export LD_LIBRARY_PATH="$PWD/.mlpbin/lib:$LD_LIBRARY_PATH"
  [ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
  if [ "$(readlink -f /work/main)" = "$(readlink -f "$PWD")" ] &&
    ! ldd .mlpbin/test_gpu .mlpbin/bench_gpu_mlp .mlpbin/rbfpde | grep "not found" &&
    .mlpbin/test_gpu --gtest_list_tests >/dev/null 2>&1; then
    prebuilt=1
    TEST=.mlpbin/test_gpu BENCH=.mlpbin/bench_gpu_mlp CLI=.mlpbin/rbfpde
    # the carried test binary's RBFPDE_TEST_TMP (<its build folder>/tests/tmp_gpu)
    tmp=$(strings .mlpbin/test_gpu | grep -m1 -o '/work/main/[A-Za-z0-9_-]*/tests/tmp_gpu')
    mkdir -p "${tmp:-build-mlpcuda/tests/tmp_gpu}"
    echo "using the carried binaries in .mlpbin"
  else
    echo "the carried binaries do not run here: building"
  fi
fi
if ((!prebuilt)); then
  step configure cmake -S . -B build-gpu-mlp "${gpu_cmake_opts[@]}"
  step build cmake --build build-gpu-mlp -j16 --target test_gpu rbfpde bench_gpu_mlp
fi

# The tests run the planner's choices and force each kernel themselves (MlpTuning: the tiled
# kernel, the point kernel with one and two tiles a block, a capped grid).
if want tests; then
  # Every test of the gpu label (the RBF backend's too: the loss sums the kernels share changed).
  step tests_default timeout 300 "$TEST"
fi
if want baseline && [ -n "${BASELINE:-}" ] && [ -e "$BASELINE" ]; then
  base="$BASELINE"
  if [[ "$BASELINE" == *.xz ]]; then
    base="$(mktemp -d)/bench_baseline"
    xz -dc "$BASELINE" >"$base" && chmod +x "$base"
  fi
  for round in 1 2; do
    # The first 7 lines: the device and the default table (a binary older than `quick` would
    # go on with its other tables).
    step "baseline_old$round" bash -c "timeout 60 '$base' quick | head -7"
    step "baseline_new$round" bash -c "timeout 60 '$BENCH' quick | head -7"
  done
fi
if want bench; then
  step bench timeout 150 "$BENCH"
fi
if want draws; then
  step bench_draws timeout 150 "$BENCH" draws
fi
if want crossover; then
  step bench_crossover timeout 120 "$BENCH" crossover
fi
if want tiles; then
  step bench_tiles timeout 150 "$BENCH" tiles
fi
if want pdl; then  # the defaults with and without the programmatic dependent launch, alternating
  for round in 1 2; do
    step "bench_pdl$round" bash -c "timeout 60 '$BENCH' quick | head -7"
    step "bench_nopdl$round" bash -c "timeout 60 '$BENCH' nopdl | head -7"
  done
fi
if want jax; then
  step jax timeout 150 env PYTHONUNBUFFERED=1 python3 bench/jax_mlp.py both
fi
if want jaxhighest; then
  step jax_highest timeout 120 env PYTHONUNBUFFERED=1 python3 bench/jax_mlp.py float32 --highest
fi
if want solve || want adam; then
  # Time to a relative L2 error ≤ 1e-3 (history.csv: cycle,seconds,...,rel_l2_error,...): the
  # first report below it, else the best the run reached.
  to_accuracy() {  # NAME CONFIG [--set …]
    local name="$1" cfg="$2"
    shift 2
    "$CLI" solve "configs/$cfg.yaml" --backend cuda --quiet --set output.directory="$OUT/$name" "$@" ||
      return 1
    python3 - "$OUT/$name" "$name" <<'EOF'
import csv, json, sys
d, name = sys.argv[1], sys.argv[2]
s = json.load(open(d + "/summary.json"))
rows = list(csv.DictReader(open(d + "/history.csv")))
hit = next((r for r in rows if float(r["rel_l2_error"]) <= 1e-3), None)
best = min(rows, key=lambda r: float(r["rel_l2_error"]))
print(name, "device", s.get("device"), "seconds", s.get("seconds"), "final", s.get("final"))
if hit:
    print(name, "reached rel L2 1e-3 at cycle", hit["cycle"], "after", hit["seconds"], "s")
else:
    print(name, "never reached 1e-3: best", best["rel_l2_error"], "at cycle", best["cycle"],
          "after", best["seconds"], "s")
EOF
    rm -rf "${OUT:?}/$name"
  }
fi
if want solve; then
  step solve_lm to_accuracy lm poisson2d_seed_lm
  step solve_mlpdouble to_accuracy mlp_double poisson2d_seed_mlp --set compute.precision=double
  step solve_mlpfloat to_accuracy mlp_float poisson2d_seed_mlp --set compute.precision=float
fi
if want adam; then
  # The seed MLP with Adam alone (no L-BFGS stage) under longer learning-rate schedules: does
  # Adam by itself reach 1e-3, and when? Each run: PRECISION LR DECAY STEPS INTERIOR BOUNDARY
  # RESAMPLE_EVERY [SEED].
  adam_only() {
    local p="$1" lr="$2" decay="$3" steps="$4" n="$5" k="$6" every="$7" seed="${8:-1}"
    to_accuracy "adam_${p}_lr${lr}_d${decay}_${steps}_${n}+${k}_r${every}_s${seed}" poisson2d_seed_mlp \
      --set training.seed="$seed" \
      --set compute.precision="$p" --set training.lbfgs.iterations=0 \
      --set training.adam.learning_rate="$lr" --set training.adam.decay="$decay" \
      --set training.max_cycles="$steps" --set training.points.interior="$n" \
      --set training.points.boundary="$k" --set training.points.resample_every="$every" \
      --set training.time_limit=60
  }
  IFS=';' read -ra runs <<<"${ADAM_RUNS:-double 1e-3 0.7 20000 1000 200 1000;\
double 1e-3 0.9 30000 1000 200 1000;double 1e-3 0.9 30000 4000 400 1000;\
double 2e-3 0.85 30000 1000 200 1000;double 1e-3 0.95 50000 1000 200 1000;\
double 1e-3 0.9 30000 4000 400 1;float 1e-3 0.9 30000 1000 200 1000;\
float 1e-3 0.9 30000 4000 400 1000}"
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # the run's fields are the function's arguments
    step solve_adam adam_only $run
  done
fi
# The sanitizers are slow: small tests that still run every kernel (pass with and without the
# backward pass, evaluation, the reduction with and without Adam, the graph, the early stop);
# the tiled kernel in both precisions, the point kernel (forced by the tests: float on the FMA
# units, double on the tensor cores), and the batches drawn on the device (the sampler inside
# the training graphs).
MEMCHECK_FILTER='CudaMlpBackend.TinyNetworkEveryKernel:CudaMlpParity/*.TrainStepsStopEarly:CudaMlpParity/0.LossGradient*'
POINT_FILTER='CudaMlpPointPass*SmallNetworks*:CudaMlpPointPass*TrainSteps*'
if want memcheck; then
  step sanitizers_memcheck_tiled timeout 150 compute-sanitizer --tool memcheck --leak-check full \
    --error-exitcode 1 "$TEST" --gtest_filter="$MEMCHECK_FILTER"
  step sanitizers_memcheck_point timeout 150 compute-sanitizer --tool memcheck --leak-check full \
    --error-exitcode 1 "$TEST" --gtest_filter="$POINT_FILTER"
  step sanitizers_memcheck_draws timeout 150 compute-sanitizer --tool memcheck --leak-check full \
    --error-exitcode 1 "$TEST" --gtest_filter='CudaMlpDraws*'
fi
if want racecheck; then
  step sanitizers_racecheck_draws timeout 200 compute-sanitizer --tool racecheck \
    --error-exitcode 1 "$TEST" --gtest_filter='CudaMlpDraws*'
  step sanitizers_racecheck_point timeout 200 compute-sanitizer --tool racecheck \
    --error-exitcode 1 "$TEST" --gtest_filter="$POINT_FILTER"
  step sanitizers_racecheck_tiled timeout 200 compute-sanitizer --tool racecheck \
    --error-exitcode 1 "$TEST" --gtest_filter='CudaMlpBackend.TinyNetworkEveryKernel'
fi
echo "=== total $SECONDS s"
exit $status
