"""Opens every VTK output of rbfpde runs with ParaView and checks it against the run's summary.json.

Usage (ParaView's Python, a display or Xvfb for the picture; .ci/run shows the exact command):
    xvfb-run -a -s "-screen 0 1280x1024x24" pvpython tools/paraview_check.py DIR [DIR ...]

Each DIR is a run's output directory. For each, through ParaView's readers:
  solution.vtu     point count = summary counts.grid_points; arrays u, residual, and with an exact
                   solution u_exact and error, where error = |u - u_exact| at every point and the
                   max error, relative L2 error and RMSE recomputed from the arrays equal summary
                   final.max_error, final.relative_l2_error, final.rmse;
  solution.pvd     instead of solution.vtu for a problem with time (no solution.vtu then): through
                   the PVD reader, its time steps are output.resolution's last entry of evenly
                   spaced times from problem.time start to end, and at the last one (t = end) it
                   holds the arrays above on one level's points (grid_points / levels); every
                   solution_NNNN.vtu it names has the same point count and cells, and the checks
                   of solution.vtu hold over all of them together;
  centres.vtp      (RBF network) one point per neuron (counts.neurons), arrays width (> 0), weight;
  collocation.vtp  interior_points + boundary_points points, arrays residual, target, boundary
                   (boundary_points of them 1), and the RMS of the residuals over the interior
                   and the boundary points equal summary final.rms_*_residual;
  training.pvd     (when the run wrote it) its time steps are the snapshot cycles, the last one
                   counts.cycles, and every snapshot has solution.vtu's arrays, all finite, on
                   counts.grid_points points (one level's points with time: a snapshot is t = end);
and one picture, DIR/paraview_solution.png, solution.vtu (with time: solution.pvd at t = end)
coloured by u, rendered offscreen and read back (a PNG of the requested size that is not one flat
colour).

Prints one line per run and exits 1 with the list of failures when any check fails.
"""

import json
import math
import os
import sys
import xml.etree.ElementTree as ElementTree

from paraview import servermanager
from paraview import simple
from vtkmodules.numpy_interface import dataset_adapter as dsa

# Relative tolerance of a figure recomputed from float64 arrays against summary.json (written with
# 17 significant digits): the sums run in a different order.
RTOL = 1e-9

failures = []


def fail(run, what):
    failures.append(f"{run}: {what}")


def close(a, b, rtol=RTOL, atol=0.0):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def fetch(proxy):
    proxy.UpdatePipeline()
    return dsa.WrapDataObject(servermanager.Fetch(proxy))


def array(data, run, file, name):
    values = data.PointData[name]
    if values is None or isinstance(values, dsa.VTKNoneArray):
        fail(run, f"{file}: no point array '{name}'")
        return None
    return values


def check_solution_arrays(run, file, datasets, summary):
    """The solution's arrays over `datasets` (solution.vtu, or every file of the series) together
    against summary.json's final figures."""
    final = summary["final"]
    u, exact, error = [], [], []
    for label, data in datasets:
        if data.GetNumberOfCells() == 0:
            fail(run, f"{label}: no cells")
        values = array(data, run, label, "u")
        array(data, run, label, "residual")
        if values is not None:
            u.extend(float(v) for v in values)
        if final.get("max_error") is None:  # no exact solution
            continue
        e = array(data, run, label, "u_exact")
        d = array(data, run, label, "error")
        if values is None or e is None or d is None:
            return
        exact.extend(float(v) for v in e)
        error.extend(float(v) for v in d)
    if final.get("max_error") is None or not u or len(exact) != len(u):
        return
    diff = [a - b for a, b in zip(u, exact)]
    worst = max(abs(abs(d) - e) for d, e in zip(diff, error))
    if worst > 1e-12 * max(1.0, max(abs(v) for v in exact)):
        fail(run, f"{file}: error differs from |u - u_exact| by up to {worst:.3e}")
    diff2 = sum(d * d for d in diff)
    ref2 = sum(v ** 2 for v in exact)
    figures = {
        "max_error": max(abs(d) for d in diff),
        "relative_l2_error": math.sqrt(diff2 / ref2) if ref2 > 0 else math.sqrt(diff2),
        "rmse": math.sqrt(diff2 / len(diff)),
    }
    for key, value in figures.items():
        if not close(value, final[key]):
            fail(run, f"{file}: {key} from the arrays {value:.17g}, summary.json "
                      f"{final[key]!r}")


def check_solution(run, directory, summary):
    counts = summary["counts"]
    data = fetch(simple.XMLUnstructuredGridReader(FileName=[os.path.join(directory, "solution.vtu")]))
    if data.GetNumberOfPoints() != counts["grid_points"]:
        fail(run, f"solution.vtu: {data.GetNumberOfPoints()} points, summary says "
                  f"{counts['grid_points']}")
    check_solution_arrays(run, "solution.vtu", [("solution.vtu", data)], summary)


def time_levels(summary):
    """The times of the solution.pvd series that summary.json's config asks for: the last entry of
    output.resolution evenly spaced times from problem.time's start to its end, both included."""
    config = summary["config"]
    start, end = float(config["problem"]["time"]["start"]), float(config["problem"]["time"]["end"])
    levels = int(config["output"]["resolution"][-1])
    return [start * (1 - s) + end * s for s in (k / (levels - 1) for k in range(levels))]


def check_series(run, directory, summary):
    """solution.pvd of a problem with time; returns the points of one level (None when the series
    is not as expected)."""
    counts = summary["counts"]
    if os.path.exists(os.path.join(directory, "solution.vtu")):
        fail(run, "solution.vtu written beside solution.pvd")
    path = os.path.join(directory, "solution.pvd")
    expected = time_levels(summary)
    try:
        entries = [(float(d.get("timestep")), d.get("file"))
                   for d in ElementTree.parse(path).getroot().iter("DataSet")]
    except (OSError, ElementTree.ParseError, TypeError, ValueError) as e:
        fail(run, f"solution.pvd: {e}")
        return None
    reader = simple.PVDReader(FileName=path)
    times = list(reader.TimestepValues) if reader.TimestepValues else []
    if len(times) != len(expected) or not all(
            close(a, b, rtol=1e-12, atol=1e-12) for a, b in zip(times, expected)):
        fail(run, f"solution.pvd: time steps {times}, expected {expected}")
        return None
    if len(entries) != len(times) or not all(
            close(a, b, rtol=1e-15) for a, (b, _) in zip(times, entries)):
        fail(run, f"solution.pvd: the reader's time steps {times} are not the file's "
                  f"{[t for t, _ in entries]}")
        return None
    if counts["grid_points"] % len(times) != 0:
        fail(run, f"solution.pvd: {counts['grid_points']} grid points is not {len(times)} levels")
        return None
    per_level = counts["grid_points"] // len(times)
    # Every file of the series, read on its own: one level's points and cells each.
    datasets = []
    for t, file in entries:
        data = fetch(simple.XMLUnstructuredGridReader(FileName=[os.path.join(directory, file)]))
        if data.GetNumberOfPoints() != per_level:
            fail(run, f"{file} (t = {t}): {data.GetNumberOfPoints()} points, expected {per_level}")
        if datasets and data.GetNumberOfCells() != datasets[0][1].GetNumberOfCells():
            fail(run, f"{file}: {data.GetNumberOfCells()} cells, {entries[0][1]} has "
                      f"{datasets[0][1].GetNumberOfCells()}")
        datasets.append((file, data))
    check_solution_arrays(run, "solution.pvd", datasets, summary)
    # The PVD reader at the last time step (t = end) serves that step's file.
    reader.UpdatePipeline(times[-1])
    info = reader.GetDataInformation()
    if info.GetNumberOfPoints() != per_level:
        fail(run, f"solution.pvd at t = {times[-1]}: {info.GetNumberOfPoints()} points, expected "
                  f"{per_level}")
    names = ["u", "residual"] + (["u_exact", "error"]
                                 if summary["final"].get("max_error") is not None else [])
    present = set(reader.PointData.keys())
    for name in names:
        values = datasets[-1][1].PointData[name]
        if name not in present:
            fail(run, f"solution.pvd at t = {times[-1]}: no point array '{name}'")
        elif values is not None and not isinstance(values, dsa.VTKNoneArray):
            direct = (float(min(values)), float(max(values)))
            served = tuple(reader.PointData[name].GetRange(0))
            if not all(close(a, b, rtol=1e-12) for a, b in zip(direct, served)):
                fail(run, f"solution.pvd at t = {times[-1]}: '{name}' spans {served}, "
                          f"{entries[-1][1]} {direct}")
    return per_level


def check_centres(run, directory, summary):
    path = os.path.join(directory, "centres.vtp")
    if summary["model"] != "rbf":
        if os.path.exists(path):
            fail(run, "centres.vtp written for a model without centres")
        return
    data = fetch(simple.XMLPolyDataReader(FileName=[path]))
    neurons = summary["counts"]["neurons"]
    if data.GetNumberOfPoints() != neurons:
        fail(run, f"centres.vtp: {data.GetNumberOfPoints()} points, summary says {neurons} neurons")
    width = array(data, run, "centres.vtp", "width")
    array(data, run, "centres.vtp", "weight")
    if width is not None and not all(float(w) > 0 for w in width):
        fail(run, "centres.vtp: a width is not positive")


def rms(values):
    return math.sqrt(sum(float(v) ** 2 for v in values) / len(values)) if values else 0.0


def check_collocation(run, directory, summary):
    counts, final = summary["counts"], summary["final"]
    data = fetch(simple.XMLPolyDataReader(FileName=[os.path.join(directory, "collocation.vtp")]))
    expected = counts["interior_points"] + counts["boundary_points"]
    if data.GetNumberOfPoints() != expected:
        fail(run, f"collocation.vtp: {data.GetNumberOfPoints()} points, summary says {expected}")
    residual = array(data, run, "collocation.vtp", "residual")
    array(data, run, "collocation.vtp", "target")
    boundary = array(data, run, "collocation.vtp", "boundary")
    if residual is None or boundary is None:
        return
    on_boundary = [float(b) == 1.0 for b in boundary]
    if sum(on_boundary) != counts["boundary_points"]:
        fail(run, f"collocation.vtp: {sum(on_boundary)} boundary points, summary says "
                  f"{counts['boundary_points']}")
    interior = [r for r, b in zip(residual, on_boundary) if not b]
    edge = [r for r, b in zip(residual, on_boundary) if b]
    for key, value in (("rms_interior_residual", rms(interior)),
                       ("rms_boundary_residual", rms(edge))):
        if not close(value, final[key], rtol=1e-6):
            fail(run, f"collocation.vtp: {key} from the arrays {value:.17g}, summary.json "
                      f"{final[key]!r}")


def check_snapshots(run, directory, summary, grid_points):
    path = os.path.join(directory, "training.pvd")
    if not os.path.exists(path):
        if summary["config"]["output"]["snapshot_every"] > 0:
            fail(run, "snapshot_every > 0 but no training.pvd")
        return 0
    reader = simple.PVDReader(FileName=path)
    times = list(reader.TimestepValues) if reader.TimestepValues else []
    if not times:
        fail(run, "training.pvd: no time steps")
        return 0
    if times[-1] != summary["counts"]["cycles"]:
        fail(run, f"training.pvd: last time step {times[-1]}, summary says "
                  f"{summary['counts']['cycles']} cycles")
    every = summary["config"]["output"]["snapshot_every"]
    for t in times[:-1]:
        if every > 0 and int(t) % every != 0:
            fail(run, f"training.pvd: time step {t} is not a multiple of snapshot_every {every}")
    names = ["u", "residual"] + (["u_exact", "error"] if summary["final"].get("max_error") is not None
                                 else [])
    for t in times:
        reader.UpdatePipeline(t)
        data = dsa.WrapDataObject(servermanager.Fetch(reader))
        if grid_points is not None and data.GetNumberOfPoints() != grid_points:
            fail(run, f"training.pvd at {t}: {data.GetNumberOfPoints()} points, expected "
                      f"{grid_points}")
        for name in names:
            values = array(data, run, f"training.pvd at {t}", name)
            if values is not None and not all(math.isfinite(float(v)) for v in values):
                fail(run, f"training.pvd at {t}: '{name}' is not finite")
    return len(times)


def render(run, directory, series):
    picture = os.path.join(directory, "paraview_solution.png")
    view = simple.CreateView("RenderView")
    if series:
        reader = simple.PVDReader(FileName=os.path.join(directory, "solution.pvd"))
    else:
        reader = simple.XMLUnstructuredGridReader(
            FileName=[os.path.join(directory, "solution.vtu")])
    display = simple.Show(reader, view)
    if series:  # the last time step (t = end): a view asks its sources for data at its ViewTime
        view.ViewTime = reader.TimestepValues[-1]
    simple.ColorBy(display, ("POINTS", "u"))
    display.RescaleTransferFunctionToDataRange(True, False)
    view.ResetCamera()
    simple.SaveScreenshot(picture, view, ImageResolution=[640, 480])
    simple.Delete(view)
    # Read it back: the requested size, and more than one colour.
    from vtkmodules.vtkIOImage import vtkPNGReader
    png = vtkPNGReader()
    png.SetFileName(picture)
    png.Update()
    image = png.GetOutput()
    dims = image.GetDimensions()
    if (dims[0], dims[1]) != (640, 480):
        fail(run, f"{picture}: {dims[0]}x{dims[1]}, expected 640x480")
        return
    scalars = image.GetPointData().GetScalars()
    lo, hi = scalars.GetRange(0) if scalars else (0, 0)
    if hi - lo < 16:
        fail(run, f"{picture}: one flat colour (red {lo}..{hi})")


def main(directories):
    if not directories:
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)
        return 2
    for directory in directories:
        run = directory.rstrip("/")
        try:
            with open(os.path.join(directory, "summary.json")) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            fail(run, f"summary.json: {e}")
            continue
        before = len(failures)
        series = summary["config"]["problem"].get("time") is not None
        if series:
            grid_points = check_series(run, directory, summary)
        else:
            check_solution(run, directory, summary)
            grid_points = summary["counts"]["grid_points"]
        check_centres(run, directory, summary)
        check_collocation(run, directory, summary)
        snapshots = check_snapshots(run, directory, summary, grid_points)
        if grid_points is not None:
            render(run, directory, series)
        status = "ok" if len(failures) == before else "FAILED"
        print(f"paraview_check: {run}: {summary['counts']['dimension']}D {summary['model']}, "
              f"{summary['counts']['grid_points']} grid points, {snapshots} snapshots: {status}",
              flush=True)
    for line in failures:
        print(f"paraview_check: {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
