#!/usr/bin/env python3
"""A model of the step time of `mpirun -np P dem run` against P, up to 1,024 GPUs (docs/scaling.md).

Each rank's step is its engine's step over its own particles and its ghosts, plus what the
decomposition adds (host/mpi/decomposition.cpp):

  T(P) = T_engine(n (1 + g)) + T_halo + T_collectives + T_hand-over / K

  n = N / P                 particles a rank
  g(n)                      ghosts per owned particle: the shell of thickness h = 2 r_max + 2 travel
                            around a box of n particles (cut along `cut_axes` axes; travel between
                            1 and 3 largest radii)
  T_engine(m) = t0 + m / R  one engine's step: a floor t0 (kernel launches and host waits, on a GPU)
                            plus m particles at the large-scene throughput R
  T_halo                    the ghost updates: 72 B a sphere ghost (x, v, w) through the link (latency
                            a for each neighbour rank, bandwidth B), and through PCIe where staged
                            through the host (as built: the boundary's states gathered on the device
                            and downloaded, the ghosts uploaded)
  T_collectives             the reductions of a step under `dem run` (the ranks' agreement on
                            their list builds; the body loads, the stops, the health verdict and
                            the travel flag in one): 2 of them, each 2 log2(P) latencies (rank 0
                            names a run of steps once); the ghost exchange is one MPI_Alltoallv,
                            which costs a latency for every rank (P), not for every neighbour
  T_hand-over / K           a hand-over every K steps (when the fastest particle has covered its
                            travel: about 80 steps in the ribbon mixer, thousands in a settled bed),
                            costing `handover_steps` engine steps (every particle's state through
                            the exchange and a new engine: 4 steps measured in the mixer)

    python3 bench/mpi_model.py                 the tables of docs/scaling.md
    python3 bench/mpi_model.py --check         the model's ghosts and bytes against the measured points
"""
import argparse
import math

GHOST_BYTES = 72  # a sphere's x, v, w (3 doubles each): forward_ghost_states (polyhedra add q and PAD: 112)

# Engines (per rank). GPU figures from bench/results/nvidia-h200/gpu.md: the 20,000-bead bed at
# 0.33 ms a step (the floor, launch- and wait-bound) and the 9.68e6-bead bed at 8.5e8
# particle-steps/s; the GPU engine's targets: a step of a handful of graph launches (t0 about
# 50 us) and 1.5e9 particle-steps/s.
ENGINES = {
    "gpu-now": dict(t0=0.31e-3, R=8.5e8, staged="ghosts",
                    label="H200 engine as measured, the halo gathered on the device and staged through the host"),
    "gpu-target": dict(t0=0.05e-3, R=1.5e9, staged="ghosts", label="graph-launched step, 1.5e9 p-steps/s, ghosts packed on the device"),
    "gpu-target-cuda-aware": dict(t0=0.05e-3, R=1.5e9, staged="none", label="as gpu-target, device pointers to a CUDA-aware MPI"),
    "gpu-planned": dict(t0=0.05e-3, R=1.5e9, staged="none", overlap=True, handover_steps=1,
                        neighbour_exchange=True,
                        label="as gpu-target-cuda-aware, the halo in flight while the interior is computed, "
                              "hand-overs of the crossing particles only, a neighbour exchange"),
}

# Links between ranks: latency a (s) a message, bandwidth B (B/s) a rank. InfiniBand NDR (400 Gb/s,
# one NIC a GPU), NVLink 4 within an 8-GPU node (450 GB/s a direction, a few us through CUDA IPC).
LINKS = {
    "ib-ndr": dict(a=2.0e-6, B=50e9, label="InfiniBand NDR, one 400 Gb/s NIC a GPU"),
    "nvlink": dict(a=3.0e-6, B=450e9, label="NVLink 4 within a node"),
}
PCIE = 25e9  # B/s, pinned copies host <-> device, one direction (PCIe 5 x16 achieves 25-50)


def ghost_fraction(n, h_over_d=3.0, phi=0.6):
    """Ghosts per owned particle for a cube of n spheres of diameter d at packing fraction phi, cut
    on all six faces, the halo h = h_over_d * d thick outside each (h = 2 r_max + 2 travel: 1.25 to 4
    diameters)."""
    side_d = (n * math.pi / 6 / phi) ** (1.0 / 3.0)
    return (1 + 2 * h_over_d / side_d) ** 3 - 1


def step_time(N, P, engine, link, h_over_d=3.0, K=80, neighbours=26):
    e, l = ENGINES[engine], LINKS[link]
    handover_steps = e.get("handover_steps", 4)
    n = N / P
    g = ghost_fraction(n, h_over_d=h_over_d) if P > 1 else 0.0
    t_engine = e["t0"] + n * (1 + g) / e["R"]
    t_halo = t_coll = t_ho = 0.0
    if P > 1:
        ghost_bytes = g * n * GHOST_BYTES
        m = min(P - 1, neighbours)
        t_halo = m * l["a"] + ghost_bytes / l["B"]
        if e["staged"] == "all":  # every particle down, the ghosts up
            t_halo += (n * (1 + g) + g * n) * GHOST_BYTES / PCIE
        elif e["staged"] == "ghosts":  # the boundary's particles down, the ghosts up
            t_halo += 2 * ghost_bytes / PCIE
        if not e.get("neighbour_exchange"):
            t_halo += (P - 1 - m) * 0.25e-6  # MPI_Alltoallv's zero-size entries: a quarter us each
        t_coll = e.get("collectives", 2) * 2 * math.log2(P) * l["a"]
        t_ho = handover_steps * t_engine / K
    total = t_engine + t_halo + t_coll + t_ho
    if e.get("overlap"):  # the ghosts' updates hidden behind the owned particles' work
        total = e["t0"] + max(t_engine - e["t0"], t_halo) + t_coll + t_ho
    return dict(n=n, g=g, engine=t_engine, halo=t_halo, coll=t_coll, ho=t_ho, total=total)


def strong_table(N, ranks, engine, link, **kw):
    rows = []
    base = None
    for P in ranks:
        t = step_time(N, P, engine, link, **kw)
        if base is None:
            base = (P, t["total"])
        eff = base[1] * base[0] / (P * t["total"])
        rows.append((P, t, eff))
    print(f"\nstrong scaling, N = {N:.0e}, {ENGINES[engine]['label']}; {LINKS[link]['label']}")
    print("| ranks | spheres a rank | ghosts/particle | engine ms | halo ms | collectives ms | hand-overs ms | step ms | p-steps/s | efficiency |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for P, t, eff in rows:
        print(f"| {P} | {t['n']:.3g} | {t['g']:.2f} | {1e3 * t['engine']:.3f} | {1e3 * t['halo']:.3f} | "
              f"{1e3 * t['coll']:.3f} | {1e3 * t['ho']:.3f} | {1e3 * t['total']:.3f} | {N / t['total']:.3g} | {100 * eff:.0f} % |")


def weak_table(n, ranks, engine, link, **kw):
    print(f"\nweak scaling, {n:.0e} spheres a rank, {ENGINES[engine]['label']}; {LINKS[link]['label']}")
    print("| ranks | ghosts/particle | step ms | efficiency |")
    print("|---:|---:|---:|---:|")
    t1 = step_time(n, 1, engine, link, **kw)["total"]
    for P in ranks:
        t = step_time(n * P, P, engine, link, **kw)
        print(f"| {P} | {t['g']:.2f} | {1e3 * t['total']:.3f} | {100 * t1 / t['total']:.0f} % |")


def bed_ghosts(P, side=0.7, h=5.5e-3):
    """Ghosts per owned bead of the settled bed repeated 7 x 7 times (bench/mpi_scaling.sh: 0.7 m
    square, periodic in x and y, 0.11 m deep) on P ranks: RCB halves the longer side, so the boxes
    are nx x ny with nx * ny = P; a cut axis (more than one box along it) adds a halo h on both
    faces of every box (h = 2 r_max + 2 travel = 5.5 mm for beads at rest)."""
    nx, ny = 1, 1
    while nx * ny < P:
        if side / nx >= side / ny:
            nx *= 2
        else:
            ny *= 2
    g = 1.0
    for k in (nx, ny):
        if k > 1:
            g *= 1 + 2 * h / (side / k)
    return g - 1


def bed_strong_cpu(ranks=(1, 2, 4, 8, 16), R_core=5.1e6, N=980000, a=0.5e-6, B=5e9, K=10000, handover_steps=4):
    """bench/mpi_scaling.sh's strong scaling on a 16-core machine, predicted: one thread a rank at
    R_core particle-steps/s (dev-2core-epyc's bed, 1.02e7 on two threads), ghosts at the cost of an
    owned bead, the halo through shared memory (latency a, bandwidth B), a hand-over every K steps."""
    print(f"\nstrong scaling on one 16-core node (bench/mpi_scaling.sh, predicted): the bed 7 x 7, {N:.0f} beads, "
          f"one thread a rank at {R_core:.2g} p-steps/s")
    print("| ranks | ghosts/particle | step ms | efficiency |")
    print("|---:|---:|---:|---:|")
    t1 = N / R_core
    for P in ranks:
        g = bed_ghosts(P) if P > 1 else 0.0
        n = N / P
        eng = n * (1 + g) / R_core
        t = eng
        if P > 1:
            t += min(P - 1, 8) * a + g * n * GHOST_BYTES / B + 2 * 2 * math.log2(P) * a + handover_steps * eng / K
        print(f"| {P} | {g:.3f} | {1e3 * t:.1f} | {100 * t1 / (P * t):.0f} % |")


def check():
    """The model's geometric parts against bench/results/dev-2core-epyc/mpi_ranks.md (2 ranks).

    The settled bed: 20,000 beads (radius 1.8 to 2.2 mm) in a 0.1 x 0.1 m periodic box, about
    0.11 m deep; two ranks cut it across its depth (the longest side), so the ghosts are the
    beads within h of the one cut, on both sides: g = 2 h / H, with h = 2 r_max + 2 travel and
    travel = a quarter largest radius for beads at rest (its lower clamp).
    """
    r_max, H = 2.2e-3, 0.11
    h = 2 * r_max + 2 * 0.25 * r_max
    g = 2 * h / H
    measured_g, measured_bytes, n = 0.0976, 140544, 20000
    print("the settled bed on 2 ranks (dev-2core-epyc, bench/results/dev-2core-epyc/mpi_ranks.md):")
    print(f"  ghosts per particle: model 2 h / H = {g:.3f} (h = {1e3 * h:.1f} mm, H = {1e3 * H:.0f} mm), measured {measured_g}")
    print(f"  ghost bytes a step: model {GHOST_BYTES} B x ghosts = {GHOST_BYTES * measured_g * n:.0f} from the measured ghosts, "
          f"{GHOST_BYTES * g * n:.0f} from the model's; measured {measured_bytes}")
    mixer_g, mixer_bytes, mixer_n = 0.163, 317688, 29559
    print("the ribbon mixer on 2 ranks:")
    print(f"  ghost bytes a step: model {GHOST_BYTES * mixer_g * mixer_n:.0f} from the measured ghosts, measured {mixer_bytes} "
          "(the ghosts counted at the last hand-over, the bytes averaged over the run)")
    # `dem run` under mpirun, commit 64ac839 (bench/mpi_ranks.sh's last mixer run): 12 hand-overs
    # in 1000 steps taking 0.229 s of 5.04 s
    handovers, seconds, wall, steps = 12, 0.229, 5.04, 1000
    per_step = (wall - seconds) / steps
    print(f"  a hand-over every {steps / handovers:.0f} steps costs {seconds / handovers * 1e3:.1f} ms, "
          f"{seconds / handovers / per_step:.1f} steps of the rest: the model's K = 80 and handover_steps = 4")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="the model against the measured points")
    a = ap.parse_args()
    if a.check:
        check()
        return
    ranks = [8, 16, 32, 64, 128, 256, 512, 1024]
    for engine in ENGINES:
        strong_table(1e8, ranks, engine, "ib-ndr")
    for engine in ("gpu-now", "gpu-target-cuda-aware", "gpu-planned"):
        weak_table(1e6, [1, 8, 64, 512, 1024], engine, "ib-ndr")
    weak_table(1e5, [1, 8, 64, 512, 1024], "gpu-planned", "ib-ndr")
    bed_strong_cpu()


if __name__ == "__main__":
    main()
