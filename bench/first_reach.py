"""Prints, from a history.csv, the first report at which the relative L2 error reached each
target (default 1e-2, 1e-3 and 1e-4): the training time a model needs to reach an accuracy.
Usage: first_reach.py HISTORY.csv [TARGET...]"""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
targets = [float(t) for t in sys.argv[2:]] or [1e-2, 1e-3, 1e-4]
for target in targets:
    hit = next((r for r in rows if r["rel_l2_error"] and float(r["rel_l2_error"]) <= target), None)
    if hit:
        print(f"reached {target:g}: cycle {hit['cycle']}, {float(hit['seconds']):.4f} s")
    else:
        print(f"reached {target:g}: never")
