#!/usr/bin/env python3
"""Broad-phase cost per particle against the width omega of the radius distribution, from the CSV of
build/bench/dem_hgrid_bench: measured time per particle of one list build for each method (solid),
and the Top-Down work that Eq. 27 of krijgsman2014 predicts for each HGrid variant (dashed, right
axis), for alpha = 0 and alpha = -3.

    python3 bench/plot_hgrid.py results/<machine>/hgrid_sweep.csv hgrid_sweep.png
"""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(path, out):
    rows = [r for r in csv.DictReader(line for line in open(path) if not line.startswith("#"))]
    methods = ["grid", "bsp", "hgrid-L1", "hgrid-auto", "hgrid-L2", "hgrid-L3", "hgrid-L4"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, alpha in zip(axes, ["0", "-3"]):
        twin = ax.twinx()
        for m in methods:
            sel = [r for r in rows if r["alpha"] == alpha and r["method"] == m]
            om = [float(r["omega"]) for r in sel if float(r["seconds_per_particle"]) > 0]
            t = [1e6 * float(r["seconds_per_particle"]) for r in sel if float(r["seconds_per_particle"]) > 0]
            line, = ax.plot(om, t, marker="o", label=m)
            if m.startswith("hgrid"):
                twin.plot([float(r["omega"]) for r in sel], [float(r["model_work_per_particle"]) for r in sel],
                          ls="--", color=line.get_color(), alpha=0.6)
        ax.set_xscale("log")
        ax.set_yscale("log")
        twin.set_yscale("log")
        ax.set_xlabel("omega = r_max / r_min")
        ax.set_title(f"alpha = {alpha}")
        twin.set_ylabel("Eq. 27 work per particle (dashed)")
    axes[0].set_ylabel("list build, us per particle (measured)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "hgrid_sweep.png")
