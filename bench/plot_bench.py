#!/usr/bin/env python3
"""Plots dem_run_bench CSV files: throughput against particle count, and the phase breakdown.

    python3 bench/plot_bench.py RESULTS.csv [OUTDIR]

Writes OUTDIR/<scene>_throughput.png and OUTDIR/<scene>_phases.png (OUTDIR defaults to the CSV's
folder). Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_bench: matplotlib is missing (apt-get install python3-matplotlib, or pip install matplotlib)")

# Phase columns, in drawing order; CSVs written before gather and integration were fused have
# gather_s and integrate_s instead of gather_integrate_s.
PHASES = ["broad_phase_s", "pair_contacts_s", "mesh_bins_s", "mesh_contacts_s", "gather_integrate_s", "gather_s",
          "integrate_s", "mesh_motion_s"]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(path))
    with open(path) as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot_bench: {path} has no rows")
    for scene in sorted({r["scene"] for r in rows}):
        sel = sorted((r for r in rows if r["scene"] == scene), key=lambda r: float(r["particles"]))
        label = f'{sel[0]["machine"]}, {sel[0]["device"]}, {sel[0]["threads"]} threads'
        n = [float(r["particles"]) for r in sel]
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.loglog(n, [float(r["particle_steps_per_s"]) for r in sel], "o-", label=label)
        ax.set_xlabel("particles")
        ax.set_ylabel("particle-steps per second")
        ax.set_title(f"{scene}: throughput")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f"{scene}_throughput.png"), dpi=120)
        plt.close(fig)

        fig, ax = plt.subplots(figsize=(6, 4))
        bottom = [0.0] * len(sel)
        x = range(len(sel))
        for phase in [p for p in PHASES if p in sel[0]]:
            share = [float(r[phase]) / float(r["wall_s"]) * 100 for r in sel]
            ax.bar(x, share, bottom=bottom, label=phase[:-2].replace("_", " "))
            bottom = [b + s for b, s in zip(bottom, share)]
        ax.set_xticks(list(x))
        ax.set_xticklabels([f"{int(v)}" for v in n])
        ax.set_xlabel("particles")
        ax.set_ylabel("% of step time")
        ax.set_title(f"{scene}: time per phase ({label})")
        ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, f"{scene}_phases.png"), dpi=120)
        plt.close(fig)
        print(f"plot_bench: wrote {scene}_throughput.png and {scene}_phases.png in {outdir}")


if __name__ == "__main__":
    main()
