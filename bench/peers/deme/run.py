#!/usr/bin/env python3
"""DEM-Engine (deme 3.0.19) on our ribbon mixer or settled bed, from the same state, timed.

The state is a LIGGGHTS/LAMMPS data file that `dem_run_bench --write-peer-data` writes (ids,
diameters, densities, positions, velocities and spins); the meshes are our OBJ files. The physics
is the scene's: Hertz-Mindlin with the scene's Young's modulus, Poisson ratio, restitution,
friction and rolling friction, the same time step and gravity. What differs, stated in the result:
a wall's Young's modulus is 2e11 Pa (ours is rigid: DEME needs a finite one), and DEME has no
periodic boundary, so the bed's periodic sides become walls of its box (BoundingBC "all").
DEME runs at its own best settings: its adaptive contact-detection frequency and bins, no force
record, the safety margin widened by the mixer blade's tip speed.

Prints one JSON record (bench/gpu_check.sh's gpu-checklist.json format):
  {case, engine: "DEM-Engine", particles, steps, ms_per_step, particle_steps_per_s,
   device_bytes_per_particle, commit, date, device}

    PYTHONPATH=PREFIX python3 bench/peers/deme/run.py --case mixer --data mixer.data --steps 2000
(PREFIX: bench/peers/deme/unpack.sh's.) Written against deme 3.0.19's Python API (its signatures
read from the package); not yet run on a GPU.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# The scenes' materials (scenes/mixer/mixer.yaml, scenes/bed/bed.yaml).
CASES = {
    "mixer": dict(dt=5e-5, gravity=[0, 0, -9.81], E=1e7, nu=0.2, cor=0.4, mu=0.5, mu_wall=0.75, crr=0.001,
                  meshes=[("scenes/mixer/drum.obj", None), ("scenes/mixer/blades.obj", [18.85, 0, 0])],
                  tip_speed=18.85 * 0.15),
    "bed": dict(dt=2e-5, gravity=[0, 0, -9.81], E=5e6, nu=0.25, cor=0.5, mu=0.5, mu_wall=0.5, crr=0.01,
                meshes=[], tip_speed=0.0),
}
WALL_E = 2e11


def read_data(path):
    """Positions, radii, densities, velocities and spins from a LAMMPS data file (atom_style sphere)."""
    lines = open(path).read().splitlines()
    box, atoms, vel, section = {}, {}, {}, None
    for line in lines[1:]:
        s = line.split()
        if not s:
            continue
        if len(s) == 4 and s[2].endswith("lo") and s[3].endswith("hi"):
            box[s[2][0]] = (float(s[0]), float(s[1]))
        elif s[0] in ("Atoms", "Velocities"):
            section = s[0]
        elif section == "Atoms" and len(s) == 7:
            atoms[int(s[0])] = (float(s[2]) / 2, float(s[3]), [float(s[4]), float(s[5]), float(s[6])])
        elif section == "Velocities" and len(s) == 7:
            vel[int(s[0])] = ([float(s[1]), float(s[2]), float(s[3])], [float(s[4]), float(s[5]), float(s[6])])
    ids = sorted(atoms)
    return box, ids, atoms, vel


def describe_device():
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:  # noqa: BLE001 (no nvidia-smi: say so)
        return "unknown"


def device_used_bytes():
    """Memory in use on the GPU (nvidia-smi), or None."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
        return float(out) * 1024 * 1024
    except Exception:  # noqa: BLE001
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=sorted(CASES), required=True)
    ap.add_argument("--data", required=True, help="the state: dem_run_bench --write-peer-data")
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--commit", default="")
    args = ap.parse_args()
    # DEME finds its kernel sources under <site-packages>/share/DEME, asking site.getsitepackages()
    # when it is imported: point it at the folder it is imported from (the unpacked bundle).
    import importlib.util
    import site
    spec = importlib.util.find_spec("deme")
    if spec is None:
        sys.exit("run.py: no deme on PYTHONPATH (bench/peers/deme/unpack.sh DIR PREFIX; PYTHONPATH=PREFIX)")
    prefix = os.path.dirname(list(spec.submodule_search_locations)[0])
    found = site.getsitepackages()
    site.getsitepackages = lambda *a: [prefix] + found
    import deme  # (after argparse: --help works without the bundle)

    c = CASES[args.case]
    box, ids, atoms, vel = read_data(args.data)
    before = device_used_bytes()
    sim = deme.DEMSolver()
    sim.SetVerbosity("ERROR")
    sim.SetNoForceRecord()
    bead = sim.LoadMaterial({"E": c["E"], "nu": c["nu"], "CoR": c["cor"], "mu": c["mu"], "Crr": c["crr"]})
    wall = sim.LoadMaterial({"E": WALL_E, "nu": c["nu"], "CoR": c["cor"], "mu": c["mu_wall"], "Crr": c["crr"]})
    sim.SetMaterialPropertyPair("mu", bead, wall, c["mu_wall"])
    sim.InstructBoxDomainDimension(box["x"], box["y"], box["z"])
    sim.InstructBoxDomainBoundingBC("all" if args.case == "bed" else "none", wall)
    for k, (obj, spin) in enumerate(c["meshes"]):
        mesh = sim.AddWavefrontMeshObject(os.path.join(ROOT, obj), wall)
        family = 10 + k
        mesh.SetFamily(family)
        if spin is None:
            sim.SetFamilyFixed(family)
        else:  # about the mesh's own origin, ours (the scene's centre [0, 0, 0])
            sim.SetFamilyPrescribedAngVel(family, str(spin[0]), str(spin[1]), str(spin[2]))
    # one sphere template per distinct radius and density (the same particles, polydisperse or not)
    templates, kinds = {}, []
    for i in ids:
        r, rho, _ = atoms[i]
        key = (r, rho)
        if key not in templates:
            templates[key] = sim.LoadSphereType(rho * 4.0 / 3.0 * 3.141592653589793 * r ** 3, r, bead)
        kinds.append(templates[key])
    batch = sim.AddClumps(kinds, [atoms[i][2] for i in ids])
    batch.SetVel([vel[i][0] for i in ids])
    sim.SetInitTimeStep(c["dt"])
    sim.SetGravitationalAcceleration(c["gravity"])
    if c["tip_speed"] > 0:
        sim.SetExpandSafetyAdder(c["tip_speed"])
    sim.Initialize()
    sim.DoDynamicsThenSync(args.warmup * c["dt"])
    start = time.perf_counter()
    sim.DoDynamicsThenSync(args.steps * c["dt"])
    wall_s = time.perf_counter() - start
    after = device_used_bytes()
    n = len(ids)
    record = {
        "case": args.case, "engine": "DEM-Engine", "particles": n, "steps": args.steps,
        "ms_per_step": 1e3 * wall_s / args.steps, "particle_steps_per_s": n * args.steps / wall_s,
        "device_bytes_per_particle": (after - before) / n if before is not None and after is not None else None,
        "commit": args.commit, "date": datetime.date.today().isoformat(), "device": describe_device(),
        "notes": "deme 3.0.19; walls E = %g Pa%s" % (WALL_E, "; periodic sides as walls" if args.case == "bed" else ""),
    }
    print(json.dumps(record))


if __name__ == "__main__":
    sys.exit(main())
