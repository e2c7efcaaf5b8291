#!/usr/bin/env python3
"""A scene run under mpirun on N ranks gives the bits of the run in one process.

Runs `dem run SCENE` in one process, then under `MPIEXEC -np N` for each N of --ranks, and
compares each folder with the first: every CSV file byte for byte, every particle snapshot field by
field after ordering by id (one process writes the particles in its engine's order, the ranks in
increasing id), the polyhedra's faces likewise, every mesh snapshot byte for byte, and summary.json's physics (particles, steps,
status, removals); summary.json must say how many ranks ran. --mpi-device omp runs the ranks on the
device engine (Thrust's OpenMP system) against the host engine in one process. With --restart-ranks R, the run is
also stopped halfway on R ranks with a checkpoint and continued from it in one process and on each
N: the continued runs end with the first run's bits. With --interrupt-ranks R, a run on R ranks is
interrupted (SIGINT to the launcher) once under way: it must stop saying so, with a checkpoint, and
the run continued from it must end with the same bits. With --expect-code C every run must stop with
exit code C and the same error line (a health check failing on some rank stops them all).

    run_equal.py --dem build/dem --mpiexec "mpirun --oversubscribe" --scene S --ranks 2 3 [--set k=v ...]
"""
import argparse
import filecmp
import json
import os
import shlex
import subprocess
import sys
import signal
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import dem_vtu  # noqa: E402


EXPECT_CODE = 0


def run(cmd, what):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != EXPECT_CODE:
        print(r.stdout[-4000:])
        sys.exit(f"FAIL: {what} exited with {r.returncode}, expected {EXPECT_CODE}: {' '.join(cmd)}")
    return r.stdout


def error_line(output):
    lines = [x for x in output.splitlines() if x.startswith("dem: error:")]
    return lines[-1] if lines else None


def continues(cmd, ref, label):
    """The run `cmd` (a --restart; its last argument the output folder) ends with the reference's
    last snapshot and diagnostics row."""
    out = cmd[-1]
    run(cmd, label)
    why = same_particles(snapshots(ref)[-1].file, snapshots(out)[-1].file)
    rows_ref = open(os.path.join(ref, "diagnostics.csv")).read().splitlines()
    rows = open(os.path.join(out, "diagnostics.csv")).read().splitlines()
    if not why and rows[-1] != rows_ref[-1]:
        why = "the last diagnostics row differs"
    if why:
        print(f"FAIL {label}: {why}")
        return False
    print(f"ok: {label} ends with the same bits")
    return True


def snapshots(folder):
    return [e for e in dem_vtu.read_pvd(os.path.join(folder, "particles.pvd"))]


def same_particles(a_file, b_file):
    a, b = dem_vtu.read_vtu(a_file), dem_vtu.read_vtu(b_file)
    ia, ib = np.argsort(a.point_data["id"]), np.argsort(b.point_data["id"])
    if len(ia) != len(ib):
        return f"{len(ia)} particles against {len(ib)}"
    if not np.array_equal(a.points[ia], b.points[ib]):
        return "positions differ"
    for k in a.point_data:
        if not np.array_equal(a.point_data[k][ia], b.point_data[k][ib]):
            return f"field {k} differs"
    return None


def same_polyhedra(a_file, b_file):
    """The polyhedra's faces (polygon cells, each particle's in its shape's order) after ordering
    the particles by id: every corner and cell field."""
    def cells(path):
        v = dem_vtu.read_vtu(path)
        order = np.argsort(v.cell_data["id"], kind="stable")
        starts = np.concatenate(([0], v.offsets[:-1]))
        corners = [v.points[v.connectivity[starts[c]:v.offsets[c]]] for c in order]
        return order, corners, v
    oa, ca, a = cells(a_file)
    ob, cb, b = cells(b_file)
    if len(oa) != len(ob):
        return f"{len(oa)} faces against {len(ob)}"
    for k in a.cell_data:
        if not np.array_equal(a.cell_data[k][oa], b.cell_data[k][ob]):
            return f"face field {k} differs"
    if any(not np.array_equal(x, y) for x, y in zip(ca, cb)):
        return "face corners differ"
    return None


def compare(ref, other, label, ranks):
    problems = []
    for f in sorted(os.listdir(ref)):
        if f.endswith(".csv") and not filecmp.cmp(os.path.join(ref, f), os.path.join(other, f), shallow=False):
            problems.append(f"{f} differs")
        if f.startswith("meshes_") and f.endswith(".vtu") and \
                not filecmp.cmp(os.path.join(ref, f), os.path.join(other, f), shallow=False):
            problems.append(f"{f} differs")
    def series(pvd, what, same):
        """Each snapshot of the series `pvd` (in both folders or neither) compared by `same`."""
        a, b = os.path.join(ref, pvd), os.path.join(other, pvd)
        if os.path.exists(a) != os.path.exists(b):
            problems.append(f"{pvd} written by one run only")
            return 0
        if not os.path.exists(a):
            return 0
        ea, eb = dem_vtu.read_pvd(a), dem_vtu.read_pvd(b)
        if len(ea) != len(eb):
            problems.append(f"{len(ea)} {what} snapshots against {len(eb)}")
        for x, y in zip(ea, eb):
            why = same(x.file, y.file)
            if why:
                problems.append(f"{os.path.basename(y.file)}: {why}")
        return len(eb)
    count = series("particles.pvd", "particle", same_particles)
    if count == 0:
        problems.append("no particle snapshots")
    with_polyhedra = series("polyhedra.pvd", "polyhedra", same_polyhedra) > 0
    ja = json.load(open(os.path.join(ref, "summary.json")))
    jb = json.load(open(os.path.join(other, "summary.json")))
    for k in ("particles", "steps", "simulated_time", "status", "reason", "removed_particles"):
        if ja.get(k) != jb.get(k):
            problems.append(f"summary.json {k}: {ja.get(k)} against {jb.get(k)}")
    if jb.get("ranks") != ranks:
        problems.append(f"summary.json ranks: {jb.get('ranks')}, expected {ranks}")
    if problems:
        print(f"FAIL {label}:\n  " + "\n  ".join(problems[:20]))
        return False
    print(f"ok {label}: {count} snapshots{' with the polyhedra' if with_polyhedra else ''}, every CSV and mesh "
          "file, the same bits"
          + (f" (mpi: {json.dumps(jb.get('mpi'))})" if "mpi" in jb else ""))
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dem", required=True)
    ap.add_argument("--mpiexec", required=True, help="the launcher with its flags, e.g. 'mpirun --oversubscribe'")
    ap.add_argument("--np-flag", default="-np")
    ap.add_argument("--scene", required=True)
    ap.add_argument("--ranks", type=int, nargs="+", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--restart-ranks", type=int, default=0,
                    help="also stop halfway on this many ranks and continue in one process and on each --ranks")
    ap.add_argument("--min-cuts", type=int, default=0, help="the largest run must have cut the domain this often")
    ap.add_argument("--mpi-device", default="cpu",
                    help="the engine of the runs under the launcher (--device; the one-process run: cpu)")
    ap.add_argument("--expect-code", type=int, default=0,
                    help="every run must exit with this code (3: stopped on a problem) and the same error line")
    ap.add_argument("--interrupt-ranks", type=int, default=0,
                    help="also interrupt a run on this many ranks (SIGINT to the launcher) and continue it")
    args = ap.parse_args()
    global EXPECT_CODE
    EXPECT_CODE = args.expect_code
    sets = [x for s in args.set for x in ("--set", s)]
    base = [args.dem, "run", args.scene, "--threads", str(args.threads), "-q"] + sets
    launcher = shlex.split(args.mpiexec)
    ok = True
    with tempfile.TemporaryDirectory(prefix="dem_mpi_") as tmp:
        ref = os.path.join(tmp, "one")
        ref_error = error_line(run(base + ["--out", ref], "the one-process run"))
        for n in args.ranks:
            out = os.path.join(tmp, f"ranks_{n}")
            error = error_line(run(launcher + [args.np_flag, str(n)] + base + ["--device", args.mpi_device, "--out", out],
                                   f"the run on {n} ranks"))
            ok = compare(ref, out, f"{n} ranks", n) and ok
            if error != ref_error:
                print(f"FAIL {n} ranks: the error line\n  {error}\nagainst one process's\n  {ref_error}")
                ok = False
            elif error:
                print(f"ok {n} ranks: stopped as one process did: {error}")
        if args.min_cuts:
            js = json.load(open(os.path.join(tmp, f"ranks_{max(args.ranks)}", "summary.json")))
            cuts = js.get("mpi", {}).get("cuts", 0)
            if cuts < args.min_cuts:
                print(f"FAIL: {cuts} cuts on {max(args.ranks)} ranks, expected at least {args.min_cuts} (a re-cut mid-run)")
                ok = False
            else:
                print(f"ok: the domain was cut {cuts} times on {max(args.ranks)} ranks")
        if args.restart_ranks:
            summary = json.load(open(os.path.join(ref, "summary.json")))
            half = 0.5 * summary["simulated_time"]
            first = os.path.join(tmp, f"first_half_{args.restart_ranks}")
            run(launcher + [args.np_flag, str(args.restart_ranks)] + base +
                ["--set", f"simulation.end_time={half}", "--set", f"output.checkpoint_interval={half}", "--out", first],
                f"the first half on {args.restart_ranks} ranks")
            checkpoint = os.path.join(first, "checkpoint.bin")
            for n in [1] + list(args.ranks):
                out = os.path.join(tmp, f"continued_{n}")
                cmd = ([] if n == 1 else launcher + [args.np_flag, str(n)]) + base + ["--restart", checkpoint, "--out", out]
                ok = continues(cmd, ref, f"the checkpoint of {args.restart_ranks} ranks continued on {n}") and ok
        if args.interrupt_ranks:
            n = args.interrupt_ranks
            out = os.path.join(tmp, f"interrupted_{n}")
            proc = subprocess.Popen(launcher + [args.np_flag, str(n)] + base + ["--out", out],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            rows = os.path.join(out, "diagnostics.csv")
            deadline = time.time() + 300
            while time.time() < deadline and proc.poll() is None:  # a few rows written: well under way
                if os.path.exists(rows) and len(open(rows).read().splitlines()) > 3:
                    break
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            text = proc.communicate()[0]
            checkpoint = os.path.join(out, "checkpoint.bin")
            said = [x for x in text.splitlines() if x.startswith("dem: interrupted")]
            # (Open MPI's mpirun passes a SIGINT on to the ranks as SIGTERM and exits 1 itself)
            if proc.returncode == 0 or not said or not os.path.exists(checkpoint):
                print(text[-3000:])
                print(f"FAIL: interrupted on {n} ranks: exit {proc.returncode}, {'no ' if not said else ''}interrupt "
                      f"message, checkpoint {'written' if os.path.exists(checkpoint) else 'missing'}")
                ok = False
            else:
                print(f"ok: interrupted on {n} ranks (exit {proc.returncode}): {said[-1]}")
                cmd = launcher + [args.np_flag, str(n)] + base + ["--restart", checkpoint, "--out", out + "_continued"]
                ok = continues(cmd, ref, f"the interrupted run continued on {n} ranks") and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
