#!/usr/bin/env python3
"""Meshes for the mixer scenes: the helical ribbon mixer of santasusana2016 Sect. 6.2
(scenes/mixer/) and the container of the internal-mixer benchmark (scenes/internal_mixer/).

Usage:
    python3 tools/mixer_gen.py                      # writes both sets (paths below, from the repo root)
    python3 tools/mixer_gen.py --outdir DIR         # ribbon mixer files into DIR (default scenes/mixer)
    python3 tools/mixer_gen.py --container-outdir DIR   # container.obj into DIR (default scenes/internal_mixer)
    python3 tools/mixer_gen.py --numbers            # print the derived scene numbers only, write nothing
    python3 tools/mixer_gen.py --power out/mixer/bodies.csv   # shaft torque and power over time (CSV)

Plain Python 3 standard library. Meshes are written as Wavefront OBJ ("v x y z", then "f i j k ..."
with 1-based indices; quads stay quads) and, for the ribbon mixer, also as ASCII STL (every quad
split into 2 triangles, same coordinates) for LIGGGHTS, which reads ASCII STL only. Units: m.

Ribbon mixer (santasusana2016 Sect. 6.2, Table 9; the paper gives no dimensions in its text, so
these are ours), axis x, gravity -z, centred at the origin:

  drum.obj (static, 1680 faces)
    radius 0.15 m (vertices on the circle; 40-gon, flat faces 0.14954 m from the axis),
    length 0.40 m, x in [-0.2, 0.2]. Mantle: 40 (around) x 40 (along) = 1600 planar quads,
    0.02355 m x 0.01 m. End plates x = -0.2 and x = +0.2: triangle fans of 40 triangles each
    from the plate centre to the mantle's end rings (conforming, closed mesh). All normals point
    inwards (vertices counter-clockwise seen from inside). Inner volume 0.028158 m^3.

  blades.obj (the rotor, 782 faces), centred on the x axis, turning at +18.85 rad/s about +x:
    shaft   regular octagonal prism, circumradius 0.02 m (flat faces 0.01848 m from the axis),
            x in [-0.199, 0.199] (1 mm short of each end plate: no bead fits), 8 quads, normals
            outwards, ends open (they face the plates 1 mm away).
    outer double helical ribbon: ribbons A and B, 180 deg apart, radial extent 0.115..0.14 m,
            x in [-0.1895, 0.1895] (they stop 0.0105 m = 3 bead radii short of the end plates;
            see ../shared/docs/liggghts-notes.md), one full turn each over that length (pitch
            0.379 m, right-handed: angle = 2 pi (x + 0.1895) / 0.379 measured from +y towards +z).
            With the rotor turning at +18.85 rad/s about +x the outer ribbons sweep towards -x
            (surface speed 1.137 m/s along the axis).
    inner double ribbon: ribbons C and D, 180 deg apart, radial extent 0.06..0.085 m, same x range,
            one full turn of the opposite hand (angle = -2 pi (x + 0.1895) / 0.379): they sweep
            towards +x, so the material circulates (outer ribbons one way, inner ones back).
            Each ribbon is a zero-thickness helicoid strip (the engine contacts it from both
            sides) of 96 segments of 3.75 deg; each segment is non-planar and split into
            2 triangles: 4 x 96 x 2 = 768 triangles.
    spokes  3 stations (x = -0.1895, 0, 0.1895, where all four ribbons lie on one diameter, along
            y), 2 flat-bar arms per station: quads in the plane x = const, 0.01 m wide
            (tangentially, so they move edge-on), radially from 0.015 m (inside the shaft) to
            0.14 m, crossing the inner and outer ribbons: 6 quads.
    Clearances: ribbon tips 0.14 m to the mantle faces 0.14954 m: 9.5 mm; ribbon and spoke ends
    to the end plates 10.5 mm (both more than a bead diameter, 7 mm, so no single bead is
    pinched); inner-to-outer ribbon 30 mm, shaft-to-inner ribbon 40 mm.
    Totals: 848 triangles (768 ribbon + 80 end plate, as in the paper) and 1614 quads (1600
    mantle + 8 shaft + 6 spokes; the paper has 1600).

  drum.stl, blades.stl: the same meshes as ASCII STL (3200 + 80 and 768 + 28 facets).

  Fill (mixer.yaml): 29559 beads of radius 0.0035 m = 0.0053088 m^3 of solid, 18.85 % of the drum
  volume; settled at a packing fraction of about 0.6 they occupy about 31 % of the drum (the
  bottom third).

Internal-mixer container (scenes/internal_mixer/container.obj), axis z, for the Chrono
DEM-Engine mixer mesh (scenes/internal_mixer/internal_mixer.obj, scaled by [0.5, 0.5, 1/3]: hub
radius 0.125 m, z in [-0.0833, 0.0833]; blades to r = 0.753 m, z in [-0.0799, 0.0799]):
  closed cylinder of radius 0.8 m (64-gon, flat faces 0.79904 m from the axis), z in
  [-1/6, 1.0]: the floor lies 1/12 m below the hub (the layout of Chrono DEM-Engine's demo, where
  the mixer's centre is 1/6 m above the floor), the lid leaves room for the initial random fill
  above the mixer. Mantle 64 (around) x 14 (along) = 896 quads (0.0491 m x 0.0833 m); floor and
  lid: fans of 64 triangles each. 1024 faces, normals inwards.
  Note: at this scale the mixer's blades reach r = 0.753 m, so the 0.5 m cylinder of Chrono
  DEM-Engine's demo would cut through them; we use 0.8 m, which leaves the tips a 0.046 m gap
  (more than a bead diameter) to the wall.

Checks (AssertionError otherwise): every face planar (to 1e-9 of its size) and strictly convex
(the loader's criteria, tighter), at most 16 vertices, non-degenerate; face counts as above;
normals inwards on the drum and the container; both closed meshes watertight with consistent
orientation (every edge used once in each direction); the ribbons' radial and axial extents and
clearances; the STL files read back to the same triangles.
"""
import argparse
import csv
import math
import os
import signal
import sys

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

# ---------------------------------------------------------------------------------------------
# Dimensions (m, rad/s)
# ---------------------------------------------------------------------------------------------

BEAD_RADIUS = 0.0035
BEAD_COUNT = 29559
OMEGA = 18.85                    # rad/s about +x

DRUM_RADIUS = 0.15
DRUM_HALF_LENGTH = 0.20
DRUM_AROUND = 40                 # mantle quads around
DRUM_ALONG = 40                  # mantle quads along x

SHAFT_RADIUS = 0.02              # circumradius of the octagon
SHAFT_SIDES = 8
SHAFT_END_GAP = 0.001            # shaft ends 1 mm short of the end plates

RIBBON_END_GAP = 3 * BEAD_RADIUS          # 0.0105 m, ribbons stop short of the end plates
RIBBON_HALF_LENGTH = DRUM_HALF_LENGTH - RIBBON_END_GAP   # 0.1895
RIBBON_TURNS = 1.0
RIBBON_SEGMENTS = 96                      # per ribbon per turn (3.75 deg)
OUTER_RIBBON = (0.115, 0.14)              # radial extent
INNER_RIBBON = (0.06, 0.085)

SPOKE_STATIONS = (0.0, 0.5, 1.0)          # fractions of the ribbon length
SPOKE_HALF_WIDTH = 0.005
SPOKE_INNER_RADIUS = 0.015                # inside the shaft

# Internal-mixer container
CONTAINER_RADIUS = 0.8  # the scaled blades reach r = 0.753 m: they must turn inside the wall
CONTAINER_Z = (-1.0 / 6.0, 1.0)
CONTAINER_AROUND = 64
CONTAINER_ALONG = 14

PLANAR_TOL = 1e-9     # relative to the face diameter
CONVEX_TOL = 1e-6     # sine of the turning angle at every corner must exceed this (loader: 1e-6)

# ---------------------------------------------------------------------------------------------
# Geometry helpers
# ---------------------------------------------------------------------------------------------


# Small vector helpers shared with the validation-mesh generator.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mesh_gen import clean, cross, dot, newell, norm, sub  # noqa: E402


def polar_x(x, r, theta):
    """Point at axial position x, distance r from the x axis, angle theta from +y towards +z."""
    return (x, r * math.cos(theta), r * math.sin(theta))


def polar_z(z, r, phi):
    """Point at height z, distance r from the z axis, angle phi from +x towards +y."""
    return (r * math.cos(phi), r * math.sin(phi), z)


class Mesh:
    """Vertices (welded on exact coordinates after clean()) and polygonal faces (0-based)."""

    def __init__(self, name, header):
        self.name = name
        self.header = header
        self.vertices = []
        self.faces = []
        self.groups = []          # a label per face (for counts and checks)
        self._index = {}

    def vertex(self, p):
        key = (clean(p[0]), clean(p[1]), clean(p[2]))
        if key not in self._index:
            self._index[key] = len(self.vertices)
            self.vertices.append(key)
        return self._index[key]

    def face(self, points, group, normal=None):
        """Adds the polygon `points` (in boundary order). With `normal`, it is oriented so that its
        right-hand normal has a positive component along `normal`; without, as given."""
        idx = [self.vertex(p) for p in points]
        if normal is not None and dot(newell([self.vertices[i] for i in idx]), normal) < 0:
            idx.reverse()
        self.faces.append(idx)
        self.groups.append(group)

    def points(self, f):
        return [self.vertices[i] for i in self.faces[f]]

    def count(self, group=None, sides=None):
        return sum(1 for f, g in zip(self.faces, self.groups)
                   if (group is None or g == group) and (sides is None or len(f) == sides))

    def triangles(self):
        """Fan triangulation (v0, v_i, v_i+1) of every face, orientation kept."""
        for f in self.faces:
            for i in range(1, len(f) - 1):
                yield (self.vertices[f[0]], self.vertices[f[i]], self.vertices[f[i + 1]])

    def write_obj(self, path):
        with open(path, "w", newline="\n") as out:
            for line in self.header:
                out.write(("# " + line).rstrip() + "\n")
            out.write("# %d vertices, %d faces (written by tools/mixer_gen.py)\n"
                      % (len(self.vertices), len(self.faces)))
            for v in self.vertices:
                out.write("v %r %r %r\n" % v)
            for f in self.faces:
                out.write("f " + " ".join(str(i + 1) for i in f) + "\n")

    def write_stl(self, path):
        """ASCII STL; quads and N-gons as fans of triangles; the facet normal is the unit
        right-hand normal of the corner order (readers that use the order agree with it)."""
        with open(path, "w", newline="\n") as out:
            out.write("solid %s\n" % self.name)
            for a, b, c in self.triangles():
                n = cross(sub(b, a), sub(c, a))
                ln = norm(n)
                n = tuple(clean(v / ln) for v in n)
                out.write("  facet normal %r %r %r\n    outer loop\n" % n)
                for p in (a, b, c):
                    out.write("      vertex %r %r %r\n" % p)
                out.write("    endloop\n  endfacet\n")
            out.write("endsolid %s\n" % self.name)


# ---------------------------------------------------------------------------------------------
# Ribbon mixer (santasusana2016 Sect. 6.2)
# ---------------------------------------------------------------------------------------------


def drum():
    """Closed drum, axis x, radius DRUM_RADIUS, x in [-DRUM_HALF_LENGTH, DRUM_HALF_LENGTH]:
    DRUM_AROUND x DRUM_ALONG mantle quads, two end plates as fans of DRUM_AROUND triangles.
    Normals inwards."""
    n, m, R, h = DRUM_AROUND, DRUM_ALONG, DRUM_RADIUS, DRUM_HALF_LENGTH
    mesh = Mesh("drum", [
        "santasusana2016 Sect. 6.2 ribbon mixer: static drum, axis x, radius %g m (%d-gon vertices), "
        "x in [%g, %g]." % (R, n, -h, h),
        "Mantle: %d x %d = %d planar quads (around x along); end plates: fans of %d triangles each." %
        (n, m, n * m, n),
        "Normals point inwards. Generated by tools/mixer_gen.py (see its docstring for all dimensions).",
    ])
    thetas = [2 * math.pi * i / n for i in range(n)]
    xs = [-h + 2 * h * j / m for j in range(m + 1)]
    for j in range(m):
        for i in range(n):
            t0, t1 = thetas[i], thetas[(i + 1) % n]
            tm = 0.5 * (t0 + (t1 if i + 1 < n else 2 * math.pi))
            inward = (0.0, -math.cos(tm), -math.sin(tm))
            mesh.face([polar_x(xs[j], R, t0), polar_x(xs[j], R, t1),
                       polar_x(xs[j + 1], R, t1), polar_x(xs[j + 1], R, t0)], "mantle", inward)
    for x, inward in ((-h, (1.0, 0.0, 0.0)), (h, (-1.0, 0.0, 0.0))):
        c = (x, 0.0, 0.0)
        for i in range(n):
            mesh.face([c, polar_x(x, R, thetas[i]), polar_x(x, R, thetas[(i + 1) % n])],
                      "plate", inward)
    return mesh


def ribbon_angle(s, hand, phase):
    return phase + hand * 2 * math.pi * RIBBON_TURNS * s


def add_ribbon(mesh, radii, hand, phase, group):
    """A zero-thickness helicoid strip: radial lines from radii[0] to radii[1] at angle
    phase + hand 2 pi turns s, s = (x + RIBBON_HALF_LENGTH) / (2 RIBBON_HALF_LENGTH) in [0, 1].
    Each of the RIBBON_SEGMENTS segments (non-planar) becomes 2 triangles; all triangles of one
    ribbon have the same orientation (right-hand normal along d(point)/dr x d(point)/ds)."""
    segments = int(round(RIBBON_SEGMENTS * RIBBON_TURNS))
    length = 2 * RIBBON_HALF_LENGTH
    r0, r1 = radii
    for k in range(segments):
        s0, s1 = k / segments, (k + 1) / segments
        x0, x1 = -RIBBON_HALF_LENGTH + length * s0, -RIBBON_HALF_LENGTH + length * s1
        t0, t1 = ribbon_angle(s0, hand, phase), ribbon_angle(s1, hand, phase)
        p00, p01 = polar_x(x0, r0, t0), polar_x(x0, r1, t0)
        p10, p11 = polar_x(x1, r0, t1), polar_x(x1, r1, t1)
        mesh.face([p00, p01, p11], group)
        mesh.face([p00, p11, p10], group)


def blades():
    """The rotor: octagonal shaft, outer and inner double helical ribbons, spokes."""
    mesh = Mesh("blades", [
        "santasusana2016 Sect. 6.2 ribbon mixer: rotor, axis x, turning about +x (18.85 rad/s in mixer.yaml).",
        "Shaft: octagonal prism, circumradius %g m, x in [%g, %g], %d quads (normals outwards)." %
        (SHAFT_RADIUS, -(DRUM_HALF_LENGTH - SHAFT_END_GAP), DRUM_HALF_LENGTH - SHAFT_END_GAP, SHAFT_SIDES),
        "Outer double ribbon r in [%g, %g], inner double ribbon (opposite hand) r in [%g, %g], x in [%g, %g],"
        % (OUTER_RIBBON + INNER_RIBBON + (-RIBBON_HALF_LENGTH, RIBBON_HALF_LENGTH)),
        "one turn each, %d segments x 2 triangles per ribbon (zero thickness, contacted from both sides)."
        % RIBBON_SEGMENTS,
        "Spokes: flat bars (quads) in the planes x = %s, along y, r in [%g, %g], %g m wide." %
        (", ".join("%g" % clean(-RIBBON_HALF_LENGTH + 2 * RIBBON_HALF_LENGTH * s) for s in SPOKE_STATIONS),
         SPOKE_INNER_RADIUS, OUTER_RIBBON[1], 2 * SPOKE_HALF_WIDTH),
        "Generated by tools/mixer_gen.py (see its docstring for all dimensions).",
    ])
    # Shaft.
    xe = DRUM_HALF_LENGTH - SHAFT_END_GAP
    n = SHAFT_SIDES
    for i in range(n):
        t0, t1 = 2 * math.pi * (i + 0.5) / n, 2 * math.pi * (i + 1.5) / n
        tm = 0.5 * (t0 + t1)
        mesh.face([polar_x(-xe, SHAFT_RADIUS, t0), polar_x(-xe, SHAFT_RADIUS, t1),
                   polar_x(xe, SHAFT_RADIUS, t1), polar_x(xe, SHAFT_RADIUS, t0)],
                  "shaft", (0.0, math.cos(tm), math.sin(tm)))
    # Ribbons: outer A, B (right-handed), inner C, D (left-handed).
    add_ribbon(mesh, OUTER_RIBBON, +1, 0.0, "outer")
    add_ribbon(mesh, OUTER_RIBBON, +1, math.pi, "outer")
    add_ribbon(mesh, INNER_RIBBON, -1, 0.0, "inner")
    add_ribbon(mesh, INNER_RIBBON, -1, math.pi, "inner")
    # Spokes, where all four ribbons lie on one diameter.
    for s in SPOKE_STATIONS:
        x = -RIBBON_HALF_LENGTH + 2 * RIBBON_HALF_LENGTH * s
        theta = ribbon_angle(s, +1, 0.0)
        for t in (theta, theta + math.pi):
            er = (0.0, math.cos(t), math.sin(t))
            et = (0.0, -math.sin(t), math.cos(t))
            corners = []
            for r, w in ((SPOKE_INNER_RADIUS, -1), (OUTER_RIBBON[1], -1),
                         (OUTER_RIBBON[1], 1), (SPOKE_INNER_RADIUS, 1)):
                corners.append((x, r * er[1] + w * SPOKE_HALF_WIDTH * et[1],
                                r * er[2] + w * SPOKE_HALF_WIDTH * et[2]))
            mesh.face(corners, "spoke", (1.0, 0.0, 0.0))
    return mesh


# ---------------------------------------------------------------------------------------------
# Internal-mixer container
# ---------------------------------------------------------------------------------------------


def container():
    """Closed cylinder, axis z, radius CONTAINER_RADIUS, z in CONTAINER_Z; mantle quads, floor and
    lid as triangle fans. Normals inwards."""
    n, m, R = CONTAINER_AROUND, CONTAINER_ALONG, CONTAINER_RADIUS
    z0, z1 = CONTAINER_Z
    mesh = Mesh("container", [
        "Container for the internal-mixer benchmark (scenes/internal_mixer): closed cylinder, axis z,",
        "radius %g m (%d-gon vertices), z in [%.6f, %g]; mantle %d x %d = %d quads, floor and lid fans of"
        % (R, n, z0, z1, n, m, n * m),
        "%d triangles each; normals inwards. Generated by tools/mixer_gen.py." % n,
    ])
    phis = [2 * math.pi * i / n for i in range(n)]
    zs = [z0 + (z1 - z0) * j / m for j in range(m + 1)]
    for j in range(m):
        for i in range(n):
            p0, p1 = phis[i], phis[(i + 1) % n]
            pm = 0.5 * (p0 + (p1 if i + 1 < n else 2 * math.pi))
            mesh.face([polar_z(zs[j], R, p0), polar_z(zs[j], R, p1),
                       polar_z(zs[j + 1], R, p1), polar_z(zs[j + 1], R, p0)],
                      "mantle", (-math.cos(pm), -math.sin(pm), 0.0))
    for z, inward in ((z0, (0.0, 0.0, 1.0)), (z1, (0.0, 0.0, -1.0))):
        c = (0.0, 0.0, z)
        for i in range(n):
            mesh.face([c, polar_z(z, R, phis[i]), polar_z(z, R, phis[(i + 1) % n])],
                      "floor" if z == z0 else "lid", inward)
    return mesh


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


def check_faces(mesh):
    """Every face: at most 16 vertices, non-degenerate, planar, strictly convex."""
    for f in range(len(mesh.faces)):
        p = mesh.points(f)
        k = len(p)
        assert 3 <= k <= 16, (mesh.name, f, k)
        diameter = max(norm(sub(a, b)) for a in p for b in p)
        a = newell(p)
        area = norm(a)
        assert area > 1e-9 * diameter * diameter, (mesh.name, f, "degenerate")
        nrm = tuple(c / area for c in a)
        centroid = tuple(sum(q[c] for q in p) / k for c in range(3))
        off = max(abs(dot(sub(q, centroid), nrm)) for q in p)
        assert off <= PLANAR_TOL * diameter, (mesh.name, f, "not planar", off)
        turning = 0.0
        for i in range(k):
            e0, e1 = sub(p[i], p[i - 1]), sub(p[(i + 1) % k], p[i])
            s = dot(cross(e0, e1), nrm) / (norm(e0) * norm(e1))
            assert s > CONVEX_TOL, (mesh.name, f, "not strictly convex at corner", i, s)
            turning += math.atan2(s, dot(e0, e1) / (norm(e0) * norm(e1)))
        assert abs(turning - 2 * math.pi) < 1e-9, (mesh.name, f, "winds", turning)


def check_closed(mesh):
    """Watertight with consistent orientation: every directed edge once, its reverse once."""
    directed = {}
    for f in mesh.faces:
        for i in range(len(f)):
            e = (f[i], f[(i + 1) % len(f)])
            directed[e] = directed.get(e, 0) + 1
    for (a, b), c in directed.items():
        assert c == 1 and directed.get((b, a)) == 1, (mesh.name, "edge", a, b)


def check_inward(mesh, inward_of):
    """The right-hand normal of every face points along inward_of(centroid, group)."""
    for f, g in zip(range(len(mesh.faces)), mesh.groups):
        p = mesh.points(f)
        a = newell(p)
        c = tuple(sum(q[k] for q in p) / len(p) for k in range(3))
        d = inward_of(c, g)
        assert dot(a, d) > 0.99 * norm(a) * norm(d), (mesh.name, f, g, "normal not inwards")


def apothem(radius, sides):
    return radius * math.cos(math.pi / sides)


def check_mixer(d, b):
    check_faces(d)
    check_faces(b)
    check_closed(d)

    def drum_inward(c, g):
        if g == "mantle":
            return (0.0, -c[1], -c[2])
        return (-c[0], 0.0, 0.0)
    check_inward(d, drum_inward)
    # Counts.
    assert d.count("mantle", 4) == DRUM_AROUND * DRUM_ALONG == 1600
    assert d.count("plate", 3) == 2 * DRUM_AROUND == 80
    assert len(d.faces) == 1680
    assert b.count("shaft", 4) == SHAFT_SIDES
    assert b.count("outer", 3) == b.count("inner", 3) == 2 * 2 * RIBBON_SEGMENTS
    assert b.count("spoke", 4) == 2 * len(SPOKE_STATIONS)
    assert d.count(sides=3) + b.count(sides=3) == 848, "the paper's triangle count"
    assert len(b.faces) == 4 * 2 * RIBBON_SEGMENTS + SHAFT_SIDES + 2 * len(SPOKE_STATIONS) == 782
    # Shaft normals outwards.
    for f, g in enumerate(b.groups):
        if g == "shaft":
            p = b.points(f)
            c = tuple(sum(q[k] for q in p) / 4 for k in range(3))
            assert dot(newell(p), (0.0, c[1], c[2])) > 0
    # Extents and clearances.
    tol = 1e-12
    for f, g in enumerate(b.groups):
        for p in b.points(f):
            r = math.hypot(p[1], p[2])
            if g in ("outer", "inner"):
                lo, hi = OUTER_RIBBON if g == "outer" else INNER_RIBBON
                assert lo - tol <= r <= hi + tol
                assert abs(p[0]) <= DRUM_HALF_LENGTH - RIBBON_END_GAP + tol
            elif g == "spoke":
                assert abs(p[0]) <= DRUM_HALF_LENGTH - RIBBON_END_GAP + tol
                assert r <= math.hypot(OUTER_RIBBON[1], SPOKE_HALF_WIDTH) + tol
            else:
                assert abs(p[0]) <= DRUM_HALF_LENGTH - SHAFT_END_GAP + tol
                assert abs(r - SHAFT_RADIUS) < tol
    xs_ribbon = [p[0] for f, g in enumerate(b.groups) if g in ("outer", "inner") for p in b.points(f)]
    assert abs(DRUM_HALF_LENGTH - max(xs_ribbon) - 3 * BEAD_RADIUS) < 1e-12
    assert abs(DRUM_HALF_LENGTH + min(xs_ribbon) - 3 * BEAD_RADIUS) < 1e-12
    # Spoke tips (0.14 m radially, plus the half width) stay a bead diameter from the mantle faces.
    tip = math.hypot(OUTER_RIBBON[1], SPOKE_HALF_WIDTH)
    assert apothem(DRUM_RADIUS, DRUM_AROUND) - tip > 2 * BEAD_RADIUS
    assert RIBBON_END_GAP > 2 * BEAD_RADIUS and SHAFT_END_GAP < BEAD_RADIUS
    assert INNER_RIBBON[0] - SHAFT_RADIUS > 2 * BEAD_RADIUS
    assert OUTER_RIBBON[0] - INNER_RIBBON[1] > 2 * BEAD_RADIUS
    # Spokes lie where all four ribbons are on the spoke's diameter.
    for s in SPOKE_STATIONS:
        a = ribbon_angle(s, +1, 0.0)
        for t in (ribbon_angle(s, -1, 0.0), ribbon_angle(s, -1, math.pi)):
            assert abs(math.sin(a - t)) < 1e-12


def check_container(c):
    check_faces(c)
    check_closed(c)

    def inward(p, g):
        if g == "mantle":
            return (-p[0], -p[1], 0.0)
        return (0.0, 0.0, 1.0 if g == "floor" else -1.0)
    check_inward(c, inward)
    assert c.count("mantle", 4) == CONTAINER_AROUND * CONTAINER_ALONG
    assert c.count("floor", 3) == c.count("lid", 3) == CONTAINER_AROUND


def read_stl_ascii(path):
    tris, cur = [], []
    with open(path) as f:
        for line in f:
            t = line.split()
            if t and t[0] == "vertex":
                cur.append(tuple(float(v) for v in t[1:4]))
                if len(cur) == 3:
                    tris.append(tuple(cur))
                    cur = []
    return tris


def check_stl(mesh, path):
    got = read_stl_ascii(path)
    want = list(mesh.triangles())
    assert len(got) == len(want), (path, len(got), len(want))
    for g, w in zip(got, want):
        assert g == w, (path, g, w)


# ---------------------------------------------------------------------------------------------
# Derived numbers
# ---------------------------------------------------------------------------------------------


def hertz_contact_time(m_eff, r_eff, e_eff, v):
    """Duration of an elastic Hertz impact, t_c = 2.868 (m*^2 / (R* E*^2 v))^(1/5)."""
    return 2.868 * (m_eff ** 2 / (r_eff * e_eff ** 2 * v)) ** 0.2


def numbers():
    lines = []
    n = DRUM_AROUND
    drum_area = 0.5 * n * DRUM_RADIUS ** 2 * math.sin(2 * math.pi / n)
    v_drum = drum_area * 2 * DRUM_HALF_LENGTH
    v_bead = 4.0 / 3.0 * math.pi * BEAD_RADIUS ** 3
    solid = BEAD_COUNT * v_bead
    lines.append("ribbon mixer: drum volume %.6f m^3 (40-gon), flat faces %.5f m from the axis"
                 % (v_drum, apothem(DRUM_RADIUS, n)))
    lines.append("  %d beads of r = %g m: solid %.7f m^3 = %.2f %% of the drum; settled at 0.6: %.1f %%"
                 % (BEAD_COUNT, BEAD_RADIUS, solid, 100 * solid / v_drum, 100 * solid / 0.6 / v_drum))
    lines.append("  axial sweep speed of the ribbon surfaces: %.3f m/s; ribbon tip speed %.3f m/s"
                 % (2 * RIBBON_HALF_LENGTH * OMEGA / (2 * math.pi), OUTER_RIBBON[1] * OMEGA))
    m = 1000 * v_bead
    E, nu, v = 1e7, 0.2, OUTER_RIBBON[1] * OMEGA
    tc_ww = hertz_contact_time(m, BEAD_RADIUS, E / (1 - nu * nu), v)
    tc_bb = hertz_contact_time(m / 2, BEAD_RADIUS / 2, E / (2 * (1 - nu * nu)), v)
    lines.append("  Hertz contact time at %.2f m/s: bead-wall %.3e s (%.1f steps of 5e-5), bead-bead %.3e s (%.1f)"
                 % (v, tc_ww, tc_ww / 5e-5, tc_bb, tc_bb / 5e-5))
    # Internal mixer.
    r0, r1 = 0.01, 0.014
    mean_r3 = (r1 ** 4 - r0 ** 4) / (4 * (r1 - r0))
    v_mean = 4.0 / 3.0 * math.pi * mean_r3
    E, nu, rho = 1e7, 0.3, 1000.0
    m = rho * 4.0 / 3.0 * math.pi * r0 ** 3
    v = 5.0
    tc_ww = hertz_contact_time(m, r0, E / (1 - nu * nu), v)
    tc_bb = hertz_contact_time(m / 2, r0 / 2, E / (2 * (1 - nu * nu)), v)
    G = E / (2 * (1 + nu))
    t_rayleigh = math.pi * r0 * math.sqrt(rho / G) / (0.1631 * nu + 0.8766)
    fill_len = 0.9
    fill_r = 0.78
    v_fill = math.pi * fill_r ** 2 * fill_len
    lines.append("internal mixer: container flat faces %.5f m from the axis"
                 % apothem(CONTAINER_RADIUS, CONTAINER_AROUND))
    lines.append("  20000 beads r in [0.01, 0.014]: solid %.4f m^3 = %.1f %% of the fill cylinder (r %g, length %g)"
                 % (20000 * v_mean, 100 * 20000 * v_mean / v_fill, fill_r, fill_len))
    lines.append("  settled bed (packing 0.6) %.3f m deep" % (20000 * v_mean / 0.6 / (math.pi * CONTAINER_RADIUS ** 2)))
    lines.append("  smallest bead (m = %.4e kg) at %g m/s: t_c bead-wall %.3e s, bead-bead %.3e s; Rayleigh %.3e s"
                 % (m, v, tc_ww, tc_bb, t_rayleigh))
    lines.append("  dt = 2.5e-5: %.1f steps per bead-wall contact, %.1f bead-bead, %.3f of the Rayleigh time"
                 % (tc_ww / 2.5e-5, tc_bb / 2.5e-5, 2.5e-5 / t_rayleigh))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Torque and power from bodies.csv
# ---------------------------------------------------------------------------------------------


def power(path, body, omega, out):
    """t, drive torque (-tx: the torque the motor must supply, the opposite of the particles'
    torque on the rotor), power = drive torque * omega."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["t", "torque_x_on_rotor", "drive_torque", "power"])
    rows = 0
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["body"] != body:
                continue
            tx = float(row["tx"])
            drive = -tx + 0.0   # + 0.0: no "-0"
            w.writerow([row["t"], "%.9g" % tx, "%.9g" % drive, "%.9g" % (drive * omega + 0.0)])
            rows += 1
    if rows == 0:
        sys.exit("%s: no rows for body '%s'" % (path, body))


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--outdir", default=os.path.join(REPO, "scenes", "mixer"),
                    help="directory for drum.obj, blades.obj, drum.stl, blades.stl (default scenes/mixer)")
    ap.add_argument("--container-outdir", default=os.path.join(REPO, "scenes", "internal_mixer"),
                    help="directory for container.obj (default scenes/internal_mixer)")
    ap.add_argument("--numbers", action="store_true", help="print the derived numbers, write nothing")
    ap.add_argument("--power", metavar="BODIES_CSV",
                    help="print t, torque, drive torque and power of the rotor from a bodies.csv, write nothing")
    ap.add_argument("--body", default="blades", help="body name for --power (default blades)")
    ap.add_argument("--omega", type=float, default=OMEGA, help="rotor speed for --power, rad/s (default 18.85)")
    args = ap.parse_args()

    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # quiet under `| head`
    if args.power:
        power(args.power, args.body, args.omega, sys.stdout)
        return
    d, b, c = drum(), blades(), container()
    check_mixer(d, b)
    check_container(c)
    if args.numbers:
        print(numbers())
        return
    os.makedirs(args.outdir, exist_ok=True)
    os.makedirs(args.container_outdir, exist_ok=True)
    for mesh, outdir in ((d, args.outdir), (b, args.outdir), (c, args.container_outdir)):
        mesh.write_obj(os.path.join(outdir, mesh.name + ".obj"))
    for mesh in (d, b):
        path = os.path.join(args.outdir, mesh.name + ".stl")
        mesh.write_stl(path)
        check_stl(mesh, path)
    for mesh, outdir in ((d, args.outdir), (b, args.outdir), (c, args.container_outdir)):
        tri, quad = mesh.count(sides=3), mesh.count(sides=4)
        print("%s: %d vertices, %d faces (%d triangles, %d quads) -> %s"
              % (mesh.name, len(mesh.vertices), len(mesh.faces), tri, quad,
                 os.path.relpath(os.path.join(outdir, mesh.name + ".obj"))))
    print(numbers())


if __name__ == "__main__":
    main()
