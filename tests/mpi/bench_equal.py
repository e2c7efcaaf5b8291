#!/usr/bin/env python3
"""bench/dem_run_bench under mpirun times the run decomposed over the ranks, with the bits of one process.

Runs dem_run_bench on SCENE in one process, then under `MPIEXEC -np N` for each N of --ranks, with
--torque-body BODY: the mean torque on the body over the window (printed to 17 digits, the body
loads summed exactly across the ranks) and the particle count must equal the one process's, and
each run under mpirun must report its ranks (imbalance, ghosts, bytes).

    bench_equal.py --bench build/bench/dem_run_bench --mpiexec "mpirun --oversubscribe" --scene S --body B --ranks 2 3
"""
import argparse
import re
import shlex
import subprocess
import sys


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print(r.stdout[-4000:])
        sys.exit(f"FAIL: exited with {r.returncode}: {' '.join(cmd)}")
    return r.stdout


def line(output, pattern, cmd):
    m = re.search(pattern, output, re.M)
    if not m:
        print(output[-4000:])
        sys.exit(f"FAIL: no line matching {pattern!r} from {' '.join(cmd)}")
    return m.group(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np-flag", default="-np")
    ap.add_argument("--scene", required=True)
    ap.add_argument("--body", required=True)
    ap.add_argument("--ranks", type=int, nargs="+", required=True)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=40)
    a = ap.parse_args()
    args = [a.bench, "--scene", a.scene, "--steps", str(a.steps), "--warmup", str(a.warmup), "--threads", "1",
            "--torque-body", a.body]
    one = run(args)
    torque = line(one, r"^mean torque on .*$", args)
    count = line(one, r"^ +\d+ +%d " % a.steps, args).split()[0]
    if re.search(r"^ranks \d+:", one, re.M):
        sys.exit("FAIL: one process reported ranks")
    for n in a.ranks:
        cmd = shlex.split(a.mpiexec) + [a.np_flag, str(n)] + args
        out = run(cmd)
        got = line(out, r"^mean torque on .*$", cmd)
        if got != torque:
            sys.exit(f"FAIL: {n} ranks: {got!r}, one process: {torque!r}")
        if line(out, r"^ +\d+ +%d " % a.steps, cmd).split()[0] != count:
            sys.exit(f"FAIL: {n} ranks timed another particle count")
        line(out, r"^ranks %d: imbalance [0-9.]+, [0-9.]+ ghosts per particle" % n, cmd)
        print(f"{n} ranks: {got}")
    print("PASS")


if __name__ == "__main__":
    main()
