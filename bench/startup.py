#!/usr/bin/env python3
"""Start-up cost of the rbfpde command: the wall time of processes that do little work.

  python3 bench/startup.py BINARY [BINARY ...] [--runs N]

For each binary (e.g. two builds of different commits), alternately, N times each:
  check     `rbfpde check configs/poisson2d.yaml` (parse and validate, no solve)
  bad-solve `rbfpde solve` of a config missing `problem:` (exit 2 before any work)
and prints the median and the worst wall time of each. Run on an otherwise idle machine.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0, r.returncode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write("name: bad\n")
        cases = {
            "check": (["check", os.path.join(ROOT, "configs/poisson2d.yaml")], 0),
            "bad-solve": (["solve", bad], 2),
        }
        times = {(b, c): [] for b in args.binaries for c in cases}
        for _ in range(args.runs):
            for case, (argv, want) in cases.items():
                for b in args.binaries:
                    t, rc = timed([b] + argv)
                    if rc != want:
                        sys.exit(f"{b} {' '.join(argv)}: exit {rc}, expected {want}")
                    times[(b, case)].append(t)
    print(f"{'binary':40s} {'case':10s} {'median s':>9s} {'worst s':>9s}")
    for (b, case), ts in times.items():
        print(f"{b:40s} {case:10s} {statistics.median(ts):9.3f} {max(ts):9.3f}")


if __name__ == "__main__":
    main()
