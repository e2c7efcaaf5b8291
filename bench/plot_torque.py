#!/usr/bin/env python3
"""Shaft torque and drive power of a mixer run, from its bodies.csv, as a PNG.

    python3 bench/plot_torque.py OUT/bodies.csv BODY OMEGA PNG [--title TEXT]

BODY is the rotor's mesh name (scenes/mixer: blades), OMEGA its angular speed in rad/s about +x.
The drive torque is minus the particles' torque on the rotor about x; power = drive torque * OMEGA.
A 0.05 s moving average is drawn over the raw samples. Needs matplotlib.
"""
import argparse
import csv
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_torque: matplotlib is missing (apt-get install python3-matplotlib, or pip install matplotlib)")


def moving_average(t, y, window):
    out, start, acc = [], 0, 0.0
    for i in range(len(y)):
        acc += y[i]
        while t[i] - t[start] > window:
            acc -= y[start]
            start += 1
        out.append(acc / (i - start + 1))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("body")
    ap.add_argument("omega", type=float)
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    t, drive = [], []
    with open(a.csv) as f:
        for row in csv.DictReader(f):
            if row["body"] == a.body:
                t.append(float(row["t"]))
                drive.append(-float(row["tx"]))
    if not t:
        sys.exit(f"plot_torque: no rows for body '{a.body}' in {a.csv}")
    power = [d * a.omega for d in drive]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    ax1.plot(t, drive, lw=0.4, alpha=0.4, color="tab:blue")
    ax1.plot(t, moving_average(t, drive, 0.05), lw=1.5, color="tab:blue")
    ax1.set_ylabel("drive torque (N m)")
    ax1.grid(alpha=0.3)
    ax2.plot(t, power, lw=0.4, alpha=0.4, color="tab:red")
    ax2.plot(t, moving_average(t, power, 0.05), lw=1.5, color="tab:red")
    ax2.set_ylabel("power (W)")
    ax2.set_xlabel("t (s)")
    ax2.grid(alpha=0.3)
    if a.title:
        ax1.set_title(a.title)
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)
    print(f"plot_torque: wrote {a.png} ({len(t)} samples, mean drive torque {sum(drive) / len(drive):.4g} N m)")


if __name__ == "__main__":
    main()
