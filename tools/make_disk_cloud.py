#!/usr/bin/env python3
"""Writes configs/disk_cloud.csv: the unit disk as a point cloud for configs/disk_cloud.yaml.

Interior: a sunflower (Vogel) spiral, r = sqrt((i + 1/2) / N), angle i times the golden angle,
which spreads N points evenly over the disk without touching the circle. Boundary: M points
equally spaced on the unit circle, with the outward normal (cos t, sin t).

Usage: tools/make_disk_cloud.py [--interior N] [--boundary M] [--out PATH]
"""
import argparse
import math
import os


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interior", type=int, default=4000)
    parser.add_argument("--boundary", type=int, default=600)
    parser.add_argument("--out", default=os.path.join(here, "..", "configs", "disk_cloud.csv"))
    args = parser.parse_args()
    golden = math.pi * (3 - math.sqrt(5))
    with open(args.out, "w") as out:
        out.write("# The unit disk as a point cloud (tools/make_disk_cloud.py): %d interior points "
                  "(sunflower spiral), %d boundary points with outward normals.\n"
                  % (args.interior, args.boundary))
        out.write("x,y,boundary,nx,ny\n")
        for i in range(args.interior):
            r = math.sqrt((i + 0.5) / args.interior)
            t = i * golden
            out.write("%.15g,%.15g,0,,\n" % (r * math.cos(t), r * math.sin(t)))
        for j in range(args.boundary):
            t = 2 * math.pi * j / args.boundary
            c, s = math.cos(t), math.sin(t)
            out.write("%.15g,%.15g,1,%.15g,%.15g\n" % (c, s, c, s))


if __name__ == "__main__":
    main()
