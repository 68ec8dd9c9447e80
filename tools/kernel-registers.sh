#!/usr/bin/env bash
# Registers and spills of every kernel in one CUDA file, at several commits, side by side: the
# first thing to compare when a kernel's speed changes with no change to its instructions
# (bench/RESULTS.md, "What we learned"). Runs here, without a GPU (nvcc -Xptxas -v, sm_90).
#
#   bash tools/kernel-registers.sh FILE [REV[:PATH]]...
#
# FILE is the .cu file's path in the working tree; REV:PATH names its path at REV where it has
# moved. With no REV, the working tree alone. "tree" is the working tree among the REVs.
# Prints one row a kernel (demangled, namespaces dropped): registers and spill stores/loads in
# bytes at each REV, then "!" where they differ.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bash tools/kernel-registers.sh FILE [REV[:PATH]]..." >&2; exit 2; }
file=$1
shift
revs=("$@")
[ ${#revs[@]} -ge 1 ] || revs=(tree)
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

i=0
for spec in "${revs[@]}"; do
  rev=${spec%%:*}
  path=$file
  [[ "$spec" == *:* ]] && path=${spec#*:}
  src=$root
  if [ "$rev" != tree ]; then
    src="$work/src$i"
    mkdir -p "$src"
    git -C "$root" archive "$rev" | tar -x -C "$src"
  fi
  (cd "$src" && nvcc -O3 -arch=sm_90 --expt-relaxed-constexpr -std=c++17 -I. \
    -isystem /usr/include/eigen3 -Xptxas -v -c "$path" -o "$work/obj$i.o") \
    >"$work/log$i" 2>&1 || { cat "$work/log$i" >&2; exit 1; }
  i=$((i + 1))
done

python3 - "$work" "${revs[@]%%:*}" <<'EOF'
import re, subprocess, sys
work, revs = sys.argv[1], sys.argv[2:]


def short(mangled):
    # Demangled, without namespaces or parameters: the same at every commit (the file's
    # anonymous namespace has a per-build name in the mangled form).
    text = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
    text = re.sub(r"\(anonymous namespace\)::|\w+::", "", text)
    return re.sub(r"\(.*", "", text)


tables = []
for i in range(len(revs)):
    rows, name = {}, None
    for line in open(f"{work}/log{i}"):
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            name = short(m.group(1))
            rows[name] = [None, 0, 0]
            continue
        if name is None:
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and rows[name][0] is None:
            rows[name][1:] = [int(m.group(1)), int(m.group(2))]
        m = re.search(r"Used (\d+) registers", line)
        if m:
            rows[name][0] = int(m.group(1))
    tables.append(rows)
print("| kernel | " + " | ".join(f"{r}: regs, spill st/ld" for r in revs) + " | |")
print("|---|" + "---|" * len(revs) + "---|")
for name in sorted(set().union(*tables)):
    cells = [t.get(name) for t in tables]
    text = ["–" if c is None else f"{c[0]}, {c[1]}/{c[2]}" for c in cells]
    differ = len({str(c) for c in cells}) > 1
    print(f"| {name} | " + " | ".join(text) + (" | ! |" if differ else " | |"))
EOF
