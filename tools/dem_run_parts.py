"""A run continued from its checkpoints, read as one run: its first folder and each restart's folder
(`dem run ... --restart DIR/checkpoint.bin --out NEXT`), in the order they ran, joined into one
series of rows or snapshots. Used by tools/dem-report and tools/dem-render.

The rule: each part's items before the first time of the next part that has any, then that
part's. A restart continues from a checkpoint that may lie before the end of the part it came from
(an interrupted run writes past its last periodic checkpoint), so the times after the checkpoint
appear in both; the later part's are kept (the same bits where the run was only continued, the
run as it went on where something was changed at the restart, such as `end_time`).
"""
import os


class OutOfOrder(ValueError):
    """Parts given out of the order they ran."""


def join(parts, time_of, names=None):
    """parts: one list of items per part in run order, or None for a part without them; time_of(item):
    its simulated time (s). The joined list. A part that starts before the part before it started is
    refused (OutOfOrder, naming both by `names`, where given): the folders were given out of order."""
    joined = []
    previous = None  # (start, name) of the last part with items
    kept = [(k, p) for k, p in enumerate(parts) if p]
    for (k, items), nxt in zip(kept, kept[1:] + [None]):
        start = time_of(items[0])
        name = names[k] if names else f"part {k + 1}"
        if previous is not None and start < previous[0]:
            raise OutOfOrder(f"{name} starts at t = {start:g} s, before {previous[1]} (t = {previous[0]:g} s): "
                             "give a run's folders in the order they ran")
        previous = (start, name)
        end = None if nxt is None else time_of(nxt[1][0])
        joined.extend(item for item in items if end is None or time_of(item) < end)
    return joined


def folders(paths):
    """The part folders of paths (a folder, or a file in it such as its particles.pvd), checked to exist
    (ValueError naming the first that does not)."""
    out = []
    for p in paths:
        p = os.fspath(p)
        folder = (os.path.dirname(p) or ".") if os.path.isfile(p) else p
        if not os.path.isdir(folder):
            raise ValueError(f"run folder not found: {p}")
        out.append(folder)
    return out
