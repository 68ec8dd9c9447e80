#!/usr/bin/env python3
"""Accuracy over training seeds: runs `rbfpde solve` for each config and seed and prints a
Markdown table per config — median and worst relative L2 error, median and worst estimate
ratio (estimate / true error), median training time, and the median time at which the
relative L2 error first reached each of --levels (default 1e-4, 1e-5, 1e-6, 1e-7; from
history.csv, reports every --report-every iterations; training time including those reports;
'-' when fewer than half the seeds reached it, with the count in parentheses). Each seed's line
on stderr gives its error, estimate, exit code, time, cycles, stop reason, best cycle and the
times at which it reached each level.

  python3 bench/seed_sweep.py --binary build/rbfpde --backend cpu --seeds 1-20 \
      configs/poisson2d.yaml configs/lshape.yaml

--jobs N runs N solves at a time, each with OMP_NUM_THREADS=--threads (for CPU sweeps on a host
with more cores than one run uses; the times are then those of --threads cores under that load).
--gpus 0,1,2 runs each solve on one of the listed GPUs (CUDA_VISIBLE_DEVICES of the child
process), at most one solve a GPU at a time: with --jobs 3 a sweep takes a third of the time and
each solve has a GPU to itself, as on a one-GPU host.
"""
import argparse
import concurrent.futures
import csv
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile


def seeds_of(text):
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def first_reach(history, level):
    for row in history:
        e = row.get("rel_l2_error", "")
        if e and float(e) <= level:
            return float(row["seconds"])
    return None


def fmt(v):
    return "-" if v is None else f"{v:.3g}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default="build/rbfpde")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--precision", default="double")
    ap.add_argument("--seeds", default="1-20")
    ap.add_argument("--report-every", type=int, default=5)
    ap.add_argument("--set", action="append", default=[], help="extra --set for every run")
    ap.add_argument("--jobs", type=int, default=1, help="solves run at a time")
    ap.add_argument("--threads", type=int, default=0,
                    help="OMP_NUM_THREADS of each solve (0: the environment's)")
    ap.add_argument("--gpus", default="",
                    help="comma-separated GPU ids to spread the solves over, one solve a GPU at a time")
    ap.add_argument("--levels", default="1e-4,1e-5,1e-6,1e-7",
                    help="comma-separated error levels whose first-reach times are tabled")
    ap.add_argument("--keep", default="",
                    help="a folder to copy each run's summary.json and history.csv into "
                         "(<config>_<seed>_<file>)")
    ap.add_argument("configs", nargs="+")
    args = ap.parse_args()
    free_gpus = queue.Queue()
    gpus = [g for g in args.gpus.split(",") if g]
    for g in gpus:
        free_gpus.put(g)
    levels = [float(l) for l in args.levels.split(",")]
    print(f"| config | seeds | median L2 | worst L2 | exit≠0 | estimate/true (median, range) "
          f"| median s | " + " | ".join(f"to {l:g} (s)" for l in levels) + " |")
    print("|---|---|---|---|---|---|---|" + "---|" * len(levels))
    for cfg in args.configs:
        errs, ratios, secs, bad = [], [], [], 0
        reach = {l: [] for l in levels}
        seeds = seeds_of(args.seeds)
        env = dict(os.environ)
        if args.threads > 0:
            env["OMP_NUM_THREADS"] = str(args.threads)

        def run(seed):
            with tempfile.TemporaryDirectory() as d:
                cmd = [args.binary, "solve", cfg, "--backend", args.backend, "--precision",
                       args.precision, "--quiet", "--set", f"training.seed={seed}", "--set",
                       f"output.report_every={args.report_every}", "--set",
                       f"output.directory={d}/out"]
                for s in args.set:
                    cmd += ["--set", s]
                run_env = env
                gpu = free_gpus.get() if gpus else None
                if gpu is not None:
                    run_env = dict(env, CUDA_VISIBLE_DEVICES=gpu)
                try:
                    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True, env=run_env).returncode
                finally:
                    if gpu is not None:
                        free_gpus.put(gpu)
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                    stem = os.path.splitext(os.path.basename(cfg))[0]
                    for name in ("summary.json", "history.csv"):
                        if os.path.exists(f"{d}/out/{name}"):
                            shutil.copy(f"{d}/out/{name}", f"{args.keep}/{stem}_{seed}_{name}")
                try:
                    summary = json.load(open(f"{d}/out/summary.json"))
                    history = list(csv.DictReader(open(f"{d}/out/history.csv")))
                except OSError:
                    return seed, rc, None, None
                return seed, rc, summary, history

        pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
        # map yields in seed order as the runs end, so a sweep cut short still prints its seeds.
        for seed, rc, summary, history in pool.map(run, seeds):
            if summary is None:
                print(f"{cfg} seed {seed}: no outputs (exit {rc})", file=sys.stderr)
                bad += 1
                continue
            if rc != 0:
                bad += 1
            err = summary["final"]["relative_l2_error"]
            est = summary.get("error_estimate")
            errs.append(err)
            if est and err:
                ratios.append(est / err)
            secs.append(summary["seconds"]["training"])
            for l in levels:
                reach[l].append(first_reach(history, l))
            reached = ", ".join(f"{l:g} at {reach[l][-1]:.3g} s" for l in levels
                                if reach[l][-1] is not None)
            print(f"{os.path.basename(cfg)} seed {seed}: L2 {err:.3e} estimate {est} "
                  f"exit {rc} {summary['seconds']['training']:.3f} s, "
                  f"{summary['counts']['cycles']} cycles ({summary['stop_reason']}), best at "
                  f"{summary.get('best_cycle')}; reached {reached or 'none'}",
                  file=sys.stderr, flush=True)
        pool.shutdown()
        if not errs:
            continue
        cells = []
        for l in levels:
            got = [t for t in reach[l] if t is not None]
            med = statistics.median(got) if len(got) * 2 >= len(seeds) else None
            cells.append(f"{fmt(med)} ({len(got)}/{len(seeds)})")
        ratio = (f"{statistics.median(ratios):.2g} ({min(ratios):.2g}–{max(ratios):.2g})"
                 if ratios else "-")
        print(f"| {os.path.basename(cfg)} | {args.seeds} | {statistics.median(errs):.2e} | "
              f"{max(errs):.2e} | {bad} | {ratio} | {statistics.median(secs):.3g} | "
              + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
