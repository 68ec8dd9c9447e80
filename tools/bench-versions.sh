#!/usr/bin/env bash
# One benchmark at several commits, built and run in one call on the GPU machine, so that a
# change in speed can be pinned to a commit (the machine has no git history: the sources travel
# as archives).
#
# Here (a checkout with git history):
#   bash tools/bench-versions.sh pack REV...      # .versions/<REV>.tar.gz for each REV (git archive)
# (any source tree packed as .versions/<NAME>.tar.gz, e.g. a patched copy, is a version too)
# On the GPU machine (through the device tool, carry [".versions", ".mu"]):
#   bash tools/bench-versions.sh run              # builds every packed version and the working tree
#
# run builds BENCH (default bench_gpu_mlp) of each version in /tmp/versions/<REV>/build, JOBS at a
# time (default 4) with nproc/JOBS compile jobs each, then runs each binary with BENCH_ARGS
# (default quick) in turn, version after version, ROUNDS times (default 2), into
# $OUT/versions.log (build logs: $OUT/versions_build_<REV>.log). The working tree is the version
# named "tree" (TREE=0 leaves it out). The build options and muParser (from the
# carried .mu/) are tools/gpu-machine.sh's.
set -uo pipefail
mode=${1:-}
shift || true
case "$mode" in
  pack)
    [ $# -ge 1 ] || { echo "usage: bash tools/bench-versions.sh pack REV..." >&2; exit 2; }
    mkdir -p .versions
    for rev in "$@"; do
      short=$(git rev-parse --short "$rev") || exit 2
      git archive "$short" | gzip >".versions/$short.tar.gz" && echo ".versions/$short.tar.gz"
    done
    exit 0
    ;;
  run) ;;
  *)
    echo "usage: bash tools/bench-versions.sh pack REV... | run" >&2
    exit 2
    ;;
esac

OUT="${OUT:-$PWD/bench-versions-logs}"
BENCH="${BENCH:-bench_gpu_mlp}"
BENCH_ARGS="${BENCH_ARGS-quick}"
JOBS="${JOBS:-4}"
mkdir -p "$OUT"
source "$(dirname "$0")/gpu-machine.sh"
per_build=$(( $(nproc) / JOBS )); [ "$per_build" -ge 1 ] || per_build=1

versions=()
for archive in .versions/*.tar.gz; do
  [ -f "$archive" ] || continue
  v=$(basename "$archive" .tar.gz)
  rm -rf "/tmp/versions/$v" && mkdir -p "/tmp/versions/$v/src"
  tar -xzf "$archive" -C "/tmp/versions/$v/src"
  versions+=("$v")
done
[ "${TREE:-1}" = 0 ] || versions+=(tree)

build() {  # build VERSION SOURCE_DIR
  if cmake -S "$2" -B "/tmp/versions/$1/build" "${gpu_cmake_opts[@]}" >"$OUT/versions_build_$1.log" 2>&1 &&
     cmake --build "/tmp/versions/$1/build" -j"$per_build" --target "$BENCH" \
       >>"$OUT/versions_build_$1.log" 2>&1; then
    echo "=== built $1"
  else
    echo "=== build of $1 FAILED (versions_build_$1.log)"
  fi
}
t0=$SECONDS
for v in "${versions[@]}"; do
  src="/tmp/versions/$v/src"
  [ "$v" = tree ] && src=$PWD
  build "$v" "$src" &
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do sleep 2; done
done
wait
echo "=== builds took $((SECONDS - t0)) s"

for round in $(seq 1 "${ROUNDS:-2}"); do
  for v in "${versions[@]}"; do
    bin="/tmp/versions/$v/build/bench/$BENCH"
    [ -x "$bin" ] || { echo "=== $v: no $BENCH"; continue; }
    echo "=== $v round $round"
    # shellcheck disable=SC2086  # BENCH_ARGS is a word list
    timeout 300 "$bin" $BENCH_ARGS || echo "=== $v FAILED"
  done
done 2>&1 | tee "$OUT/versions.log"
