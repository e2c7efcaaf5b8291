#!/usr/bin/env python3
"""The GPU check's figures as records a script can compare run to run: gpu-checklist.json.

Reads the dem_run_bench logs that bench/gpu_check.sh writes (OUT/bench.<label>.log, labels such as
gpu.bed, gpu.mixer, gpu.bed.tile22) and writes one record per log of the GPU engine:

    {case, engine, particles, steps, ms_per_step, particle_steps_per_s, device_bytes_per_particle,
     state_bytes_per_particle, commit, date, device}

device_bytes_per_particle is what cudaMemGetInfo says the engines hold on the card (null where
the log has no such line: not on CUDA); state_bytes_per_particle the engine's sum of its buffers'
capacities. DEM-Engine's records (engine "DEM-Engine") are the lines bench/peers/deme/run.py
prints, saved as OUT/deme.<case>.json: they are taken as they are.

    python3 bench/gpu_checklist.py OUT --commit HASH --out bench/results/<machine>/gpu-checklist.json
"""
import argparse
import datetime
import glob
import json
import os
import re
import sys

ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([0-9.]+)\s+([0-9.eE+]+)\s+([0-9.]+)\s+\|")
ENGINE = re.compile(r"^engine (\S+) on (.*?); engine state ([0-9.]+) bytes per particle")
CARD = re.compile(r"^device memory held on the card .*?: [0-9.]+ MB, ([0-9.]+) bytes per particle")


def record(path, label, commit, date):
    particles = steps = ms = ps = None
    device = engine = None
    state = card = None
    for line in open(path, errors="replace"):
        if m := ROW.match(line):
            particles, steps, ps, ms = int(m.group(1)), int(m.group(2)), float(m.group(4)), float(m.group(5))
        elif m := ENGINE.match(line):
            engine, device, state = m.group(1), m.group(2), float(m.group(3))
        elif m := CARD.match(line):
            card = float(m.group(1))
    if particles is None or engine is None:
        return None  # (a run that failed: its log says why)
    return {"case": label, "engine": "dem", "backend": engine, "particles": particles, "steps": steps,
            "ms_per_step": ms, "particle_steps_per_s": ps, "device_bytes_per_particle": card,
            "state_bytes_per_particle": state, "commit": commit, "date": date, "device": device}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", help="the folder of bench.<label>.log files")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--out", required=True, help="the JSON file (its records of other commits are kept)")
    a = ap.parse_args()
    records = []
    for path in sorted(glob.glob(os.path.join(a.logs, "bench.gpu.*.log"))):
        label = os.path.basename(path)[len("bench.gpu."):-len(".log")]
        r = record(path, label, a.commit, a.date)
        if r:
            records.append(r)
    for path in sorted(glob.glob(os.path.join(a.logs, "deme.*.json"))):
        for line in open(path):
            if line.strip().startswith("{"):
                r = json.loads(line)
                r.setdefault("commit", a.commit)
                if not r["commit"]:
                    r["commit"] = a.commit
                records.append(r)
    if not records:
        sys.exit(f"gpu_checklist: no GPU figures in {a.logs} (bench.gpu.*.log, deme.*.json)")
    kept = []
    if os.path.exists(a.out):  # the records of other commits
        kept = [r for r in json.load(open(a.out)) if r.get("commit") != a.commit]
    with open(a.out, "w") as f:
        json.dump(kept + records, f, indent=1)
        f.write("\n")
    print(f"gpu_checklist: {len(records)} records of {a.commit} -> {a.out} ({len(kept)} of other commits kept)")


if __name__ == "__main__":
    main()
