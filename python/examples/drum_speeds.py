#!/usr/bin/env python3
"""A rotating drum at three speeds, from Python: the beads settle in the drum at rest, then a
callback starts the drum at each speed; the drive torque (minus the beads' torque on the drum
about its axis) is recorded every 5 ms and plotted.

    PYTHONPATH=build/python python3 python/examples/drum_speeds.py [--out drum_torque.png] [--device auto]

Needs numpy and matplotlib (tools/install-deps installs both). About two minutes on 2 CPU cores.
"""
import argparse
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import dem

ROOT = Path(__file__).resolve().parents[2]


def drive_torque(speed, device, settle=0.25, spin=1.0):
    sim = dem.Simulation(ROOT / "scenes/drum/drum.yaml", device=device)
    sim.set_body_motion("drum", angular_velocity=[0, 0, 0])  # at rest while the beads settle
    sim.run(until=settle)
    sim.set_body_motion("drum", angular_velocity=[0, 0, speed])
    t, torque = [], []

    def record(s):
        t.append(s.time - settle)
        torque.append(-s.body_torques()[0, 2])  # drive torque about +z, N m

    sim.run(until=settle + spin, every=0.005, callback=record)
    return np.array(t), np.array(torque), sim.engine


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="drum_torque.png")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    fig, ax = plt.subplots(figsize=(7, 4))
    for speed in (1.0, 3.0, 6.0):
        t, torque, engine = drive_torque(speed, args.device)
        steady = torque[t > 0.5].mean()
        print(f"{speed:.0f} rad/s: mean drive torque after 0.5 s {steady * 1e3:.2f} mN m ({engine})")
        ax.plot(t, torque * 1e3, label=f"{speed:.0f} rad/s (mean {steady * 1e3:.1f} mN m)")
    ax.set_xlabel("time since the drum started (s)")
    ax.set_ylabel("drive torque (mN m)")
    ax.set_title("600 beads in a rotating drum")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
