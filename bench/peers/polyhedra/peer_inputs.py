#!/usr/bin/env python3
"""The polyhedra peers' inputs from one state of dem (bench/peers/polyhedra/compare.sh).

dem_run_bench --write-polyhedra-state writes the state: per particle its id, mass, size, centroid,
velocity and angular velocity, and its vertices (offsets from the centroid, world frame) and faces.
`read_state` reads it (the YADE script imports it); `peer_inputs.py lammps STATE DATA --rounding D`
writes it as a LAMMPS data file of rounded polyhedra (atom_style body rounded/polyhedron) in
millimetres, grams and milliseconds (LAMMPS's `units lj` with those as its units: its body pair style
takes absolute geometric tolerances of 1e-3, which in metres would exceed the contacts' overlaps;
speeds stay m/s = mm/ms). Each body's core is the polyhedron shrunk towards its centroid so that core plus rounding keeps
the faces where dem has them (a cube's faces stay put, its edges and corners are rounded off).
"""
import argparse
import sys

import numpy as np


def read_state(path):
    """The particles of a state file: a list of dicts (id, mass, size, x, v, w, vertices, faces)."""
    with open(path) as f:
        header = f.readline().split()
        if header[:3] != ["dem", "polyhedra", "state"]:
            sys.exit(f"{path}: not a dem polyhedra state (dem_run_bench --write-polyhedra-state)")
        particles = []
        for line in f:
            t = line.split()
            if not t:
                continue
            nv, nf = int(t[12]), int(t[13])
            verts = np.array([[float(c) for c in f.readline().split()] for _ in range(nv)])
            faces = [[int(k) for k in f.readline().split()] for _ in range(nf)]
            particles.append(dict(id=int(t[0]), mass=float(t[1]), size=float(t[2]),
                                  x=np.array(list(map(float, t[3:6]))), v=np.array(list(map(float, t[6:9]))),
                                  w=np.array(list(map(float, t[9:12]))), vertices=verts, faces=faces))
    return particles


def inertia(vertices, faces, mass):
    """The inertia tensor about the centroid (world frame) of a convex polyhedron of that mass, by
    tetrahedra from the centroid to each face's fan of triangles (vertices are centroid offsets)."""
    cov = np.zeros((3, 3))
    volume = 0.0
    canon = np.array([[2, 1, 1], [1, 2, 1], [1, 1, 2]]) / 120.0  # the unit tetrahedron's covariance
    for face in faces:
        for k in range(1, len(face) - 1):
            a = np.stack([vertices[face[0]], vertices[face[k]], vertices[face[k + 1]]])  # rows: the edges from 0
            det = np.linalg.det(a)
            volume += det / 6
            cov += det * a.T @ canon @ a
    cov *= mass / volume
    return np.trace(cov) * np.eye(3) - cov


def edges_of(faces):
    seen, edges = set(), []
    for face in faces:
        for k in range(len(face)):
            e = tuple(sorted((face[k], face[(k + 1) % len(face)])))
            if e not in seen:
                seen.add(e)
                edges.append(e)
    return edges


# SI to LAMMPS's units here: mm, g, ms
LENGTH, MASS, TIME = 1e3, 1e3, 1e3


def write_lammps(particles, path, rounding, box):
    """The particles as a LAMMPS data file; rounding (diameter) and box (xlo xhi ylo yhi zlo zhi) in m."""
    rounding *= LENGTH
    box = [b * LENGTH for b in box]
    with open(path, "w") as f:
        f.write(f"LAMMPS data file of rounded polyhedra (rounding diameter {rounding} mm; units mm, g, ms) from a dem state\n\n")
        f.write(f"{len(particles)} atoms\n{len(particles)} bodies\n1 atom types\n\n")
        for k, axis in enumerate("xyz"):
            f.write(f"{box[2 * k]!r} {box[2 * k + 1]!r} {axis}lo {axis}hi\n")
        f.write("\nAtoms\n\n")
        for p in particles:
            x = p["x"] * LENGTH
            f.write(f"{p['id'] + 1} 1 1 {p['mass'] * MASS!r} {x[0]!r} {x[1]!r} {x[2]!r}\n")
        f.write("\nBodies\n\n")
        for p in particles:
            v, faces = p["vertices"] * LENGTH, p["faces"]
            if max(len(fc) for fc in faces) > 4:
                sys.exit("LAMMPS's rounded polyhedra take faces of at most 4 vertices")
            # the faces' distance from the centroid: the core moves each in by the rounding radius
            inradius = min(abs(np.dot(np.cross(v[fc[1]] - v[fc[0]], v[fc[2]] - v[fc[0]]), v[fc[0]]))
                           / np.linalg.norm(np.cross(v[fc[1]] - v[fc[0]], v[fc[2]] - v[fc[0]])) for fc in faces)
            core = v * (inradius - rounding / 2) / inradius
            edges = edges_of(faces)
            i = inertia(v, faces, p["mass"] * MASS)
            doubles = [i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2]] + list(core.ravel())
            doubles += [float(k) for e in edges for k in e]
            doubles += [float(fc[k]) if k < len(fc) else -1.0 for fc in faces for k in range(4)]
            doubles.append(rounding)
            f.write(f"{p['id'] + 1} 3 {len(doubles)}\n{len(v)} {len(edges)} {len(faces)}\n")
            f.write("\n".join(" ".join(repr(float(d)) for d in doubles[k:k + 3]) for k in range(0, len(doubles), 3)))
            f.write("\n")
        # atom_style body: velocities with angular momenta (I w)
        f.write("\nVelocities\n\n")
        for p in particles:
            lmom = inertia(p["vertices"] * LENGTH, p["faces"], p["mass"] * MASS) @ (p["w"] / TIME)
            vel = p["v"] * LENGTH / TIME
            f.write(f"{p['id'] + 1} {vel[0]!r} {vel[1]!r} {vel[2]!r} {lmom[0]!r} {lmom[1]!r} {lmom[2]!r}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    lm = sub.add_parser("lammps", help="a LAMMPS data file of rounded polyhedra")
    lm.add_argument("state")
    lm.add_argument("data")
    lm.add_argument("--rounding", type=float, required=True, help="the bodies' rounded diameter (m)")
    lm.add_argument("--box", type=float, nargs=6, required=True, metavar=("XLO", "XHI", "YLO", "YHI", "ZLO", "ZHI"))
    args = ap.parse_args()
    particles = read_state(args.state)
    write_lammps(particles, args.data, args.rounding, args.box)
    print(f"peer_inputs: {len(particles)} rounded polyhedra to {args.data}")


if __name__ == "__main__":
    main()
