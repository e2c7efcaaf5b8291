"""A run continued from its checkpoints, read as one run: its first folder and each restart's folder
(`dem run ... --restart DIR/checkpoint.bin --out NEXT`), in the order they ran, joined into one
series of rows or snapshots. Used by tools/dem-report and tools/dem-render.

The rule: each part's items before the time the next part starts, then that part's. A restart
continues from a checkpoint that may lie before the end of the part it came from (a run killed
past its last periodic checkpoint), so the times after the checkpoint appear in both; the later
part's are kept (the same bits where the run was only continued, the run as it went on where
something was changed at the restart, such as `end_time`). A part starts at its first periodic
output (part_start), else at the first item it holds of the series being joined.
"""
import csv
import os

# The outputs written at every probe time, from the run's start on: the first row of any is the
# part's start (a restart writes them at its checkpoint's time, which is a probe time).
PERIODIC_CSV = ("diagnostics.csv", "probes.csv", "bodies.csv", "outlets.csv", "mixing.csv")


class OutOfOrder(ValueError):
    """Parts given out of the order they ran, or one folder given twice."""


def folders(paths):
    """The part folders of paths (a folder, or a file in it such as its particles.pvd), checked to exist
    and to be distinct (ValueError naming the first that does not exist, OutOfOrder for one given twice)."""
    out = []
    for p in paths:
        p = os.fspath(p)
        folder = (os.path.dirname(p) or ".") if os.path.isfile(p) else p
        if not os.path.isdir(folder):
            raise ValueError(f"run folder not found: {p}")
        if any(os.path.samefile(folder, f) for f in out):
            raise OutOfOrder(f"{folder} is given twice")
        out.append(folder)
    return out


def part_start(folder):
    """The time (s) of the first row of the part's periodic CSV files, or of its first particle snapshot,
    whichever is earlier; None where it wrote neither. ValueError naming a file whose first row has no
    readable t."""
    times = []
    for name in PERIODIC_CSV:
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            continue
        try:
            with open(path, newline="") as f:
                row = next(csv.DictReader(f), None)
        except (OSError, csv.Error, UnicodeDecodeError) as e:
            raise ValueError(f"{path}: {e}")
        if row is None:
            continue
        try:
            times.append(float(row["t"]))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{path}: column t: {e}")
    pvd = os.path.join(folder, "particles.pvd")
    if os.path.exists(pvd):
        import dem_vtu
        entries = dem_vtu.read_pvd(pvd)
        if entries:
            times.append(entries[0].time)
    return min(times) if times else None


def check_order(starts, names):
    """Refuses (OutOfOrder) a part that starts before a part given before it (None: unknown)."""
    previous = None
    for start, name in zip(starts, names):
        if start is None:
            continue
        if previous is not None and start < previous[0]:
            raise OutOfOrder(f"{name} starts at t = {start:g} s, before {previous[1]} (t = {previous[0]:g} s): "
                             "give a run's folders in the order they ran")
        previous = (start, name)


def join(parts, time_of, starts=None, names=None):
    """parts: one list of items per part in run order, or None for a part without them; time_of(item):
    its simulated time (s); starts: each part's start (part_start; None where unknown, or no list: the
    first item of each part). The joined list. Parts out of order are refused (OutOfOrder, naming them
    by `names`, where given)."""
    names = names or [f"part {k + 1}" for k in range(len(parts))]
    starts = list(starts) if starts is not None else [None] * len(parts)
    starts = [s if s is not None else (time_of(p[0]) if p else None) for s, p in zip(starts, parts)]
    check_order(starts, names)
    joined = []
    for k, items in enumerate(parts):
        if not items:
            continue
        end = next((s for s in starts[k + 1:] if s is not None), None)
        joined.extend(item for item in items if end is None or time_of(item) < end)
    return joined
