#!/usr/bin/env python3
"""Whole step and broad phase per particle-step against the width omega of the size distribution,
from dem_cooling_bench --csv rows (3D gases, one detection scheme).

    python3 bench/plot_cooling.py cooling_sweep.csv cooling_sweep.png

One column per alpha: top, the whole step (ns per particle-step) of each broad phase, with the
goal (1.5 times the monodisperse cost of `auto`) dashed; bottom, the broad phase's share of it
(the time in rebuilds, per particle-step)."""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = [r for r in csv.DictReader(open(src)) if r["dim"] == "3"]
    if not rows:
        sys.exit(f"{src}: no 3D rows")
    alphas = sorted({float(r["alpha"]) for r in rows})
    fig, axes = plt.subplots(2, len(alphas), figsize=(6 * len(alphas), 8), squeeze=False)
    for col, alpha in enumerate(alphas):
        series = defaultdict(list)
        for r in rows:
            if float(r["alpha"]) != alpha:
                continue
            name = "auto" if r["method"].startswith("auto") else r["method"]
            n = float(r["n"])
            series[name].append((float(r["omega"]), float(r["ns_per_particle_step"]),
                                 1e6 * float(r["broad_ms_per_step"]) / n))
        for name, pts in sorted(series.items()):
            pts.sort()
            style = dict(marker="o", lw=2.5 if name == "auto" else 1.2)
            axes[0][col].plot([p[0] for p in pts], [p[1] for p in pts], label=name, **style)
            axes[1][col].plot([p[0] for p in pts], [p[2] for p in pts], label=name, **style)
        mono = [p[1] for p in series.get("auto", []) if p[0] == 1.0]
        if mono:
            axes[0][col].axhline(1.5 * mono[0], ls="--", color="k", lw=1, label="goal: 1.5 x monodisperse")
        for row, what in enumerate(("whole step", "broad phase (rebuilds)")):
            ax = axes[row][col]
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("omega = r_max / r_min")
            ax.set_ylabel(f"{what}, ns per particle-step")
            ax.set_title(f"alpha = {alpha:g}: {what}")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("Polydisperse 3D gases (dem_cooling_bench, adaptive skins)")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
