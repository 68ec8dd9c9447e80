#!/usr/bin/env bash
# The scaling benchmark of the CUDA RBF backend over ranks (bench/bench_gpu_scaling.cpp), one
# rank per GPU at 1, 2, 4 and 8 ranks (as many as this host has GPUs), and the time of a whole
# `rbfpde solve` to fixed accuracies at each rank count. Called by tools/gpu-check.sh (step
# scaling); usage: tools/scaling.sh BUILD_DIR OUT_DIR. Sizes: SCALE_NEURONS (default 512),
# SCALE_POINTS (interior points of the union for strong scaling, default 400000),
# SCALE_WEAK_POINTS (interior points per rank for weak scaling, default 200000), SCALE_METHODS
# (default "varpro lm"), SCALE_SOLVE_SET (the --set options of the timed solve of cube3d),
# SCALE_PARTS (default "bench solve": which of the two to run).
set -uo pipefail
build="$1"
out="$2"
# NVLink multicast stays off on shared hosts (NCCL would otherwise use it where it can).
export NCCL_NVLS_ENABLE=0
mpirun_() { mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$@"; }
gpus=$(nvidia-smi -L | wc -l)
counts=""
for r in 1 2 4 8; do [ "$r" -le "$gpus" ] && counts="$counts $r"; done
echo "GPUs: $gpus; rank counts:$counts"
nvidia-smi topo -m || true
neurons="${SCALE_NEURONS:-512}"
status=0
parts="${SCALE_PARTS:-bench solve}"  # bench: the cycle tables; solve: the timed solves
for weak in "" "--weak"; do
  [[ " $parts " == *" bench "* ]] || break
  points="${SCALE_POINTS:-400000}"
  [ -n "$weak" ] && points="${SCALE_WEAK_POINTS:-200000}"
  echo
  echo "| scaling | method | ranks | neurons | p | points (union) | points / rank | step ms | local ms | sum ms | sums by | efficiency |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for method in ${SCALE_METHODS:-varpro lm}; do
    base=""
    for r in $counts; do
      line=$(mpirun_ "$r" "$build/bench/bench_gpu_scaling" --method "$method" --neurons "$neurons" \
               --points "$points" $weak ${base:+--base-ms "$base"} 2>&1 | tail -n 20)
      rc=$?
      row=$(grep '^|' <<<"$line" | tail -n 1)
      if [ $rc -ne 0 ] || [ -z "$row" ]; then
        echo "$method at $r ranks failed (exit $rc): $line"
        status=1
        continue
      fi
      echo "$row"
      [ "$r" = 1 ] && base=$(awk -F'|' '{gsub(/ /, "", $9); print $9}' <<<"$row")
    done
  done
done

# A whole solve of cube3d at a size worth several GPUs: the training time to each accuracy.
set_opts="${SCALE_SOLVE_SET:---set model.neurons=512 --set training.points.interior=100000 --set training.points.boundary=20000 --set training.max_cycles=200}"
[[ " $parts " == *" solve "* ]] || exit $status
echo
echo "cube3d solve with $set_opts"
for r in $counts; do
  dir=$(mktemp -d)
  if mpirun_ "$r" "$build/rbfpde" solve configs/cube3d.yaml --backend cuda --quiet $set_opts \
       --set output.directory="$dir" --set output.report_every=5 >"$dir/log" 2>&1; then
    echo "ranks $r: $(python3 -c "import json; s=json.load(open('$dir/summary.json')); \
print('training s', round(s['seconds']['training'], 2), 'rel L2', s['final']['relative_l2_error'], 'cycles', s['counts']['cycles'], 'stop', s['stop_reason'], 'devices', s['devices'])")"
    python3 bench/first_reach.py "$dir/history.csv" 1e-4 1e-5 1e-6 | sed "s/^/ranks $r: /"
  else
    echo "ranks $r: solve failed"; tail -n 5 "$dir/log"; status=1
  fi
  rm -rf "$dir"
done
exit $status
