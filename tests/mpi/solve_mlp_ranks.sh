#!/bin/sh
# A whole MLP solve over NP ranks (configs/poisson2d_seed_mlp.yaml with a 16×16 network on
# 300 + 80 points), against the single process:
#   LM (training.method lm, one fixed batch, 60 iterations): the single process and the ranks
#   both reach relative L2 error < 2e-3 (7.1e-4 single, 2.7e-4 over 2 ranks, 6.0e-4 over 3 on
#   the 2-core build machine: the ranks draw other points than the single process);
#   summary.json records the ranks and a device per rank; rank 0 alone printed the result and
#   wrote model.yaml;
#   Adam then L-BFGS over the ranks, stopped after 150 Adam steps and resumed with the same
#   count, ends where the uninterrupted run over the ranks ends (every rank continues its own
#   stream, Adam's moments and the L-BFGS stage), below 3e-2 (9.6e-3 over 2 ranks, 1.2e-2 over
#   3 on the CPU: 200 Adam steps and 300 L-BFGS iterations leave this network far from LM's
#   error); rank 0 alone printed the result and wrote model.yaml; summary.json names the
#   backend that trained;
#   --resume with another rank count is refused (exit 2, naming the count).
# BACKEND is cpu (the default) or cuda; with cuda and no CUDA device the test is skipped (77).
# With cuda, LM still trains on the CPU (the MLP's Jacobian is the CPU backend's): Adam and
# L-BFGS run on the CUDA backend's distributed path.
# Usage: solve_mlp_ranks.sh MPIEXEC NP RBFPDE SOURCE_DIR WORK_DIR [BACKEND]
set -eu
MPIEXEC=$1 NP=$2 RBFPDE=$3 SRC=$4 WORK=$5 BACKEND=${6:-cpu}
if [ "$BACKEND" = cuda ] && ! nvidia-smi -L > /dev/null 2>&1; then
  echo "skipped: no CUDA device"
  exit 77
fi
CONFIG=$SRC/configs/poisson2d_seed_mlp.yaml
RUN="$MPIEXEC --oversubscribe --allow-run-as-root --bind-to none"
SMALL="--set compute.backend=$BACKEND --set model.layers=[16,16] --set training.points.interior=300
  --set training.points.boundary=80 --set output.resolution=[41,41] --set output.pictures=false"
LM="$SMALL --set training.method=lm --set training.max_cycles=60 --set training.points.resample_every=0
  --set output.report_every=10"
ADAM="$SMALL --set training.adam.learning_rate=1e-2 --set training.points.resample_every=100
  --set output.report_every=50"
rm -rf "$WORK"
mkdir -p "$WORK"
"$RBFPDE" solve "$CONFIG" $LM --set output.directory="$WORK/single" -q
$RUN -np "$NP" "$RBFPDE" solve "$CONFIG" $LM --set output.directory="$WORK/ranks" > "$WORK/ranks.out"
lines=$(grep -c "^output: " "$WORK/ranks.out")
[ "$lines" -eq 1 ] || { echo "expected one result from rank 0, found $lines"; exit 1; }
[ -f "$WORK/ranks/model.yaml" ] || { echo "rank 0 wrote no model.yaml"; exit 1; }

# Adam then L-BFGS: uninterrupted, and stopped inside the Adam steps then resumed.
$RUN -np "$NP" "$RBFPDE" solve "$CONFIG" $ADAM --set training.max_cycles=200 \
  --set training.lbfgs.iterations=300 --set output.directory="$WORK/whole" > "$WORK/whole.out"
lines=$(grep -c "^output: " "$WORK/whole.out")
[ "$lines" -eq 1 ] || { echo "expected one Adam result from rank 0, found $lines"; exit 1; }
[ -f "$WORK/whole/model.yaml" ] || { echo "rank 0 wrote no model.yaml after Adam"; exit 1; }
$RUN -np "$NP" "$RBFPDE" solve "$CONFIG" $ADAM --set training.max_cycles=150 \
  --set training.lbfgs.iterations=0 --set output.directory="$WORK/resumed" -q
set +e
"$RBFPDE" solve "$CONFIG" $ADAM --set training.max_cycles=200 --set training.lbfgs.iterations=300 \
  --set output.directory="$WORK/resumed" --resume -q 2> "$WORK/refused.err"
code=$?
set -e
[ "$code" -eq 2 ] || { echo "resume with 1 process: expected exit 2, found $code"; cat "$WORK/refused.err"; exit 1; }
grep -q "written by a run of $NP ranks" "$WORK/refused.err" || { cat "$WORK/refused.err"; exit 1; }
$RUN -np "$NP" "$RBFPDE" solve "$CONFIG" $ADAM --set training.max_cycles=200 \
  --set training.lbfgs.iterations=300 --set output.directory="$WORK/resumed" --resume -q

/usr/bin/python3 - "$WORK" "$NP" "$BACKEND" <<'PY'
import json, sys
work, np_, backend = sys.argv[1], int(sys.argv[2]), sys.argv[3]
load = lambda d: json.load(open(f"{work}/{d}/summary.json"))
single, ranks, whole, resumed = load("single"), load("ranks"), load("whole"), load("resumed")
es, er = single["final"]["relative_l2_error"], ranks["final"]["relative_l2_error"]
print(f"LM, relative L2 error: single process {es:.3e}, {np_} ranks {er:.3e}")
assert single["ranks"] == 1 and len(single["devices"]) == 1, single["ranks"]
for s in (ranks, whole, resumed):
    assert s["ranks"] == np_ and len(s["devices"]) == np_, (s["ranks"], s["devices"])
assert es < 2e-3, "the single process misses the bound"
assert single["backend"] == "cpu" and ranks["backend"] == "cpu", "LM trains on the CPU"
for s in (whole, resumed):
    assert s["backend"] == backend, (s["backend"], backend)
assert er < 2e-3, "the ranks' run misses the single-process bound"
lw, lr = whole["final"]["loss"], resumed["final"]["loss"]
ew = whole["final"]["relative_l2_error"]
print(f"Adam + L-BFGS over {np_} ranks: loss {lw:.6e} uninterrupted, {lr:.6e} resumed; "
      f"relative L2 error {ew:.3e}")
assert whole["counts"]["cycles"] == 500 and resumed["counts"]["cycles"] == 500
assert abs(lw - lr) <= 1e-9 * lw, "the resumed run left the uninterrupted one's path"
assert ew < 3e-2, "Adam + L-BFGS over the ranks misses its bound"
PY
echo "PASS"
