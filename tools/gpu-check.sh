#!/usr/bin/env bash
# Builds the GPU targets on the GPU machine and runs the GPU tests, the end-to-end timing of the
# seed problem (gdcg and lm), the GPU benchmark, the JAX reference, and compute-sanitizer
# (memcheck, racecheck) over the GPU tests. Logs go to $OUT/*.log (or ./gpu-check-logs).
# Used through the device tool:  run(command="bash tools/gpu-check.sh", carry=[".mu"])
# STEPS selects steps (default: all): any of tests mpi scaling solve resume bench jax sweep general
# cpusweep cpuharvest jaxvp baseline basebuild memcheck racecheck.
#   sweep: bench/seed_sweep.py over the problem-only configs, seeds SWEEP_SEEDS (default 1-20),
#     on the GPU in double (and the seed problem in float);
#   mpi: the MPI tests (ctest -L mpi: CPU and CUDA backends over 2 and 3 ranks);
#   scaling: bench_gpu_scaling under mpirun at 1, 2, 4 and 8 ranks (as many as the machine has
#     GPUs, one each): strong and weak scaling of a varpro and an lm cycle (SCALE_NEURONS,
#     SCALE_POINTS, SCALE_WEAK_POINTS), then the time of `rbfpde solve` of cube3d at a larger size
#     (SCALE_SOLVE_SET) to 1e-4, 1e-5 and 1e-6 at each rank count (scaling.log);
#   bench: every bench_gpu_* (BENCHES: a list of their paths instead);
#   general: the same over the Beyond-Poisson configs (GENERAL_CONFIGS overrides the list),
#     seeds GENERAL_SEEDS (default 1-10);
#   cpusweep: the Beyond-Poisson 2D configs on the CPU backend of this host, seeds CPU_SEEDS
#     (default 1-10), CPU_JOBS solves at a time (default 6) with 2 OpenMP threads each, started
#     in the background after the build and waited for at the end (cpusweep.log; CPU_CONFIGS
#     overrides the list, CPU_SWEEP_SET adds --set options);
#     CPU_DETACH=1 starts it in a session of its own (setsid) writing /tmp/cpusweep.log and does
#     not wait: it outlives the call, and a later call's step cpuharvest copies the log to $OUT;
#   jaxvp: bench/jax_varpro.py, the JAX peer of variable projection, seeds 1-5;
#   baseline: when .base/src.tar.gz (carried: `git archive` of an earlier commit) exists, its
#     bench_gpu_mlp and bench_gpu_cycle are built too (in /tmp/base, kept for later calls on the
#     same machine) and run alternately with this build's, so that two versions are compared in
#     one call; basebuild: only that build (in the background, waited for at the end).
# SKIP_BUILD=1 skips configure and build (a later call on the same machine, build-gpu/ kept);
# EXTRA_TARGETS names more targets to build (for such later calls).
# SWEEP_GPUS (e.g. 1,2,3) spreads the GPU sweeps (steps sweep and general) over those GPUs,
# one solve a GPU at a time (bench/seed_sweep.py --gpus), each GPU's solves timed as on a one-GPU
# host.
# The machine has no muParser: the carried .deb files in .mu/ are unpacked into /opt/mu.
set -uo pipefail
OUT="${OUT:-$PWD/gpu-check-logs}"
STEPS="${STEPS:-tests mpi scaling solve resume bench jax sweep general cpusweep jaxvp baseline memcheck racecheck}"
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
source "$(dirname "$0")/gpu-machine.sh"

[ "${SKIP_BUILD:-0}" = 1 ] || step configure cmake -S . -B build-gpu "${gpu_cmake_opts[@]}"
# Only what the steps below run: the whole tree is built and tested on the CPU machines.
targets="rbfpde"
if want tests || want memcheck || want racecheck; then targets="$targets test_gpu"; fi
if want mpi; then targets="$targets test_mpi mpi_failure_probe"; fi
if want scaling; then targets="$targets bench_gpu_scaling"; fi
targets="$targets ${EXTRA_TARGETS:-}"  # built now for a later call with SKIP_BUILD=1
if want bench || want baseline; then
  targets="$targets $(ls bench/bench_gpu_*.cpp 2>/dev/null | xargs -rn1 basename | sed 's/\.cpp$//')"
  [ -n "${BENCHES:-}" ] &&
    targets="rbfpde test_gpu ${EXTRA_TARGETS:-} $(for b in $BENCHES; do basename "$b"; done)"
fi
if { want baseline || want basebuild; } && [ -f .base/src.tar.gz ] &&
   [ ! -x /tmp/base/build/bench/bench_gpu_cycle ]; then
  # The earlier version's benchmarks, built beside this one (in the background, while this
  # build runs; its log is baseline_build.log).
  rm -rf /tmp/base && mkdir -p /tmp/base && tar -xzf .base/src.tar.gz -C /tmp/base
  (cmake -S /tmp/base -B /tmp/base/build "${gpu_cmake_opts[@]}" -DRBFPDE_BUILD_TESTS=OFF &&
     cmake --build /tmp/base/build -j"$(nproc)" --target bench_gpu_mlp \
     bench_gpu_cycle) >"$OUT/baseline_build.log" 2>&1 &
  base_pid=$!
fi
[ "${SKIP_BUILD:-0}" = 1 ] || step build_gpu cmake --build build-gpu -j"$(nproc)" --target $targets
gpu_opts=""
if [ -n "${SWEEP_GPUS:-}" ]; then
  gpu_opts="--gpus $SWEEP_GPUS --jobs $(tr ',' '\n' <<<"$SWEEP_GPUS" | wc -l)"
fi
GENERAL2D="configs/helmholtz_robin.yaml configs/mixed_neumann.yaml configs/linear_variable.yaml \
  configs/square_holes.yaml configs/square_holes_dirichlet.yaml configs/disk_cloud.yaml"
if want cpusweep && [ "${CPU_DETACH:-0}" = 1 ]; then
  setsid nohup env PYTHONUNBUFFERED=1 timeout "${CPU_SWEEP_TIMEOUT:-1500}" python3 bench/seed_sweep.py \
    --binary build-gpu/rbfpde --backend cpu --seeds "${CPU_SEEDS:-1-10}" --jobs "${CPU_JOBS:-6}" \
    --threads 2 ${CPU_SWEEP_SET:-} ${CPU_CONFIGS:-$GENERAL2D} >/tmp/cpusweep.log 2>&1 </dev/null &
  echo "=== cpusweep started in the background (/tmp/cpusweep.log)"
elif want cpusweep; then
  (PYTHONUNBUFFERED=1 timeout "${CPU_SWEEP_TIMEOUT:-500}" python3 bench/seed_sweep.py \
     --binary build-gpu/rbfpde --backend cpu --seeds "${CPU_SEEDS:-1-10}" --jobs "${CPU_JOBS:-6}" \
     --threads 2 ${CPU_SWEEP_SET:-} ${CPU_CONFIGS:-$GENERAL2D} >"$OUT/cpusweep.log" 2>&1) &
  cpu_pid=$!
fi

if want tests; then
  step ctest ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 300 ${CTEST_ARGS:-}
fi
if want mpi; then
  # Several ranks on this machine's GPU(s): host-staged sums with one GPU, NCCL with several.
  step mpi ctest --test-dir build-gpu -L mpi --output-on-failure --timeout 300
fi
if want scaling; then
  step scaling bash tools/scaling.sh build-gpu "$OUT"
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
  for b in ${BENCHES:-build-gpu/bench/bench_gpu_*}; do
    [[ "$b" == *bench_gpu_scaling ]] && continue  # runs under mpirun: the scaling step
    [ -x "$b" ] && step "$(basename "$b")" timeout 300 "$b"
  done
fi
if want jax; then
  step jax timeout 300 env PYTHONUNBUFFERED=1 python3 bench/jax_rbf_cycle.py both
fi
# SWEEP_KINDS picks the sweeps (default "2d 3d float"); SWEEP_OPTS adds seed_sweep.py options
# (e.g. --keep DIR, --levels); SWEEP_SET (key=value …) is given to every solve of them as --set,
# and SWEEP_TAG names the logs (sweep$SWEEP_TAG.log, …), so that several settings can sweep side
# by side on different GPUs.
sweep_set=""
for kv in ${SWEEP_SET:-}; do sweep_set="$sweep_set --set $kv"; done
sweep_kind() { [[ " ${SWEEP_KINDS:-2d 3d float} " == *" $1 "* ]]; }
# sweep_step LOG TIMEOUT SEEDS ARGS...: bench/seed_sweep.py on the CUDA backend of this build.
sweep_step() {
  local log=$1 limit=$2 seeds=$3
  shift 3
  step "$log" env PYTHONUNBUFFERED=1 timeout "$limit" python3 bench/seed_sweep.py \
    --binary build-gpu/rbfpde --backend cuda --seeds "$seeds" $gpu_opts "$@"
}
if want sweep && sweep_kind 2d; then
  sweep_step "sweep${SWEEP_TAG:-}" "${SWEEP_TIMEOUT:-400}" "${SWEEP_SEEDS:-1-20}" $sweep_set \
    ${SWEEP_OPTS:-} ${SWEEP_CONFIGS:-configs/poisson2d.yaml configs/lshape.yaml configs/disk.yaml configs/peak.yaml}
fi
if want sweep && sweep_kind 3d; then
  sweep_step "sweep3d${SWEEP_TAG:-}" "${SWEEP_TIMEOUT:-400}" "${SWEEP3D_SEEDS:-1-20}" $sweep_set \
    ${SWEEP_OPTS:-} configs/cube3d.yaml configs/ball3d.yaml
fi
if want sweep && sweep_kind float; then
  sweep_step "sweep_float${SWEEP_TAG:-}" 120 1-5 --precision float $sweep_set ${SWEEP_OPTS:-} \
    configs/poisson2d.yaml
fi
if want general; then
  sweep_step general "${GENERAL_TIMEOUT:-300}" "${GENERAL_SEEDS:-1-10}" \
    ${GENERAL_CONFIGS:-$GENERAL2D configs/heat2d.yaml configs/box_ball.yaml configs/heat3d.yaml}
fi
if want jaxvp; then
  step jaxvp timeout 300 env PYTHONUNBUFFERED=1 python3 bench/jax_varpro.py --seeds "${JAXVP_SEEDS:-1-5}"
fi
[ -n "${base_pid:-}" ] && wait "$base_pid"
# Old and new alternately, two rounds, into one log (baseline.log).
baseline_rounds() {
  for round in 1 2; do
    for b in bench_gpu_mlp bench_gpu_cycle; do
      args=""; [ "$b" = bench_gpu_mlp ] && args=quick
      for version in old new; do
        bin="build-gpu/bench/$b"; [ "$version" = old ] && bin="/tmp/base/build/bench/$b"
        [ -x "$bin" ] || continue
        echo "=== $version $b round $round"
        timeout 120 "$bin" $args || echo "=== $version $b FAILED"
      done
    done
  done
}
if want baseline && [ -x /tmp/base/build/bench/bench_gpu_cycle ]; then
  step baseline baseline_rounds
fi
# The sanitizers are slow: one precision covers every kernel. The allocation test is left out:
# its deliberate cudaMalloc failure would count as an API error. racecheck leaves out
# CudaVarproLookahead (the kernels of CudaVarproParity many times over: over 200 s under it) and
# CudaVarproPreconditioned.FactorFromTrialGivesQrsSystem (over 300 s under it: the trial factor's
# cuBLAS GEMMs and TRMM, cuSOLVER potrs; our kernels on that path are those of CudaVarproParity);
# memcheck runs both.
SAN_FILTER="${SAN_FILTER:-CudaBackendParity.*Double:CudaVarproParity.*:CudaVarproLookahead.*:CudaVarproPreconditioned.*:CudaBackendBehaviour.NanWidth*:CudaBackendBehaviour.SameInputs*Float:CudaFusedCycle.*Double:CudaDeviceSampler.Same*:CudaMlp*:CudaGeneralParity.*:CudaGeneralRows.*:CudaGeneralSampler.*:-*SeedProblem*}"
if want memcheck; then
  step memcheck timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool memcheck --leak-check full --error-exitcode 1 \
    ./build-gpu/tests/test_gpu --gtest_filter="$SAN_FILTER"
fi
if want racecheck; then
  step racecheck timeout "${SAN_TIMEOUT:-240}" compute-sanitizer --tool racecheck --error-exitcode 1 \
    ./build-gpu/tests/test_gpu --gtest_filter="${RACE_FILTER:-CudaBackendParity.*Double:CudaVarproParity.*:CudaFusedCycle.*Double:CudaMlpParity/0.AdamSteps:CudaMlpParity/0.TrainStepsGraph:CudaMlpBackend.TinyNetworkEveryKernel:CudaGeneralParity.*:CudaMlpGeneralRows/0.*:-*Fifty*:*SeedProblem*}"
fi
if want cpuharvest; then
  cp /tmp/cpusweep.log "$OUT/cpusweep.log" && cat "$OUT/cpusweep.log"
fi
if [ -n "${cpu_pid:-}" ]; then
  wait "$cpu_pid" || { echo "=== cpusweep FAILED or timed out"; }
  cat "$OUT/cpusweep.log"
fi
exit $status
