#!/usr/bin/env python3
"""Meshes for the validation scenes of santasusana2016 (Section 6.1) and for the demo mixer.

Usage:
    python3 tools/mesh_gen.py            # validation meshes -> scenes/validation/, demo -> scenes/demo/
    python3 tools/mesh_gen.py OUTDIR     # every mesh into OUTDIR
    python3 tools/mesh_gen.py --numbers  # only print the derived scene numbers (no files written)

Plain Python 3 standard library. Each mesh is written as Wavefront OBJ: "v x y z" lines, then
"f i j k ..." lines with 1-based vertex indices. Faces are planar, strictly convex polygons whose
vertices run counter-clockwise seen from the side the particles are on (so the right-hand normal
points to the particles: +y for the floors). Quads and N-gons are kept as they are; they are
never split into triangles unless the mesh is meant to be made of triangles.

After writing, every mesh is checked (and the script fails with an AssertionError otherwise):
planarity and strict convexity of every face, the face normal against the expected side, face
counts, no T-junctions (no vertex inside another face's edge), every edge shared by at most two
faces with opposite directions (consistent orientation), and the mesh-specific properties (where
the impact point lies on the drop planes, the hole inradius of the multiple-contact plate, ...).

Gravity is -y in the validation scenes, as in the paper (Tables 6 and 7).
"""
import argparse
import math
import os
import sys

# ---------------------------------------------------------------------------------------------
# Mesh container
# ---------------------------------------------------------------------------------------------


def clean(x):
    """Rounds away floating-point noise (1e-12 m) and -0.0, so shared vertices weld exactly."""
    x = round(float(x), 12)
    return 0.0 if x == 0 else x


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a):
    return math.sqrt(dot(a, a))


def newell(points):
    """Newell area vector: direction = normal of the CCW polygon, length = its area."""
    s = [0.0, 0.0, 0.0]
    for i, p in enumerate(points):
        c = cross(p, points[(i + 1) % len(points)])
        for k in range(3):
            s[k] += 0.5 * c[k]
    return tuple(s)


class Mesh:
    """Vertices (welded on exact coordinates after clean()) and polygonal faces (0-based)."""

    def __init__(self, name, header):
        self.name = name          # file stem
        self.header = header      # comment lines written at the top of the OBJ file
        self.vertices = []
        self.faces = []
        self._index = {}

    def vertex(self, p):
        key = (clean(p[0]), clean(p[1]), clean(p[2]))
        if key not in self._index:
            self._index[key] = len(self.vertices)
            self.vertices.append(key)
        return self._index[key]

    def face(self, points, normal):
        """Adds the polygon `points` (in boundary order, either direction), oriented so that its
        right-hand normal has a positive component along `normal` (the particles' side)."""
        idx = [self.vertex(p) for p in points]
        if dot(newell([self.vertices[i] for i in idx]), normal) < 0:
            idx.reverse()
        self.faces.append(idx)

    def face_points(self, f):
        return [self.vertices[i] for i in self.faces[f]]

    def write(self, path):
        with open(path, "w", newline="\n") as out:
            for line in self.header:
                out.write(("# " + line).rstrip() + "\n")
            out.write("# %d vertices, %d faces (written by tools/mesh_gen.py)\n"
                      % (len(self.vertices), len(self.faces)))
            for v in self.vertices:
                out.write("v %r %r %r\n" % v)
            for f in self.faces:
                out.write("f " + " ".join(str(i + 1) for i in f) + "\n")


# ---------------------------------------------------------------------------------------------
# Validation meshes (santasusana2016, Section 6.1)
# ---------------------------------------------------------------------------------------------

UP = (0.0, 1.0, 0.0)

# Shifts (s_x, s_z) of the drop-test grid relative to the impact point (x, z) = (0, 0). The grid
# lines lie at x = -1 + s_x + 0.2 i and z = -1 + s_z + 0.2 k (i, k = 0..10).
DROP_SHIFTS = {
    # (0, 0) sits at local (0.07, 0.13) of the cell [-0.07, 0.13] x [-0.13, 0.07], inside the
    # triangle above its diagonal, 0.07 m from both of its grid edges and 0.042 m from the diagonal.
    "facet": (-0.07, 0.07),
    # x = 0 is a grid line; z = 0 is 0.05 m from the grid vertex (0, 0.05) and 0.15 m from
    # (0, -0.15): the point is inside the edge shared by two triangles, on no diagonal.
    "edge": (0.0, 0.05),
    # Grid lines x = 0 and z = 0: the point is a grid vertex, shared by 6 triangles (all diagonals
    # run the same way, so every interior vertex has 6 triangles around it).
    "vertex": (0.0, 0.0),
}


def drop_plane(kind):
    """plane_facet / plane_edge / plane_vertex: the horizontal plane y = 0 meshed with 200 triangles.

    A 10 x 10 grid of 0.2 m x 0.2 m squares over [-1 + s_x, 1 + s_x] x [-1 + s_z, 1 + s_z] (x, z),
    each square split by its diagonal from (x0, z0) to (x0 + 0.2, z0 + 0.2) into two triangles. The
    shift (s_x, s_z) = DROP_SHIFTS[kind] only moves the mesh relative to the impact point (0, 0):
    a facet, an edge or a vertex lies under the falling sphere. The plane is the same in all
    three files; the covered square moves by at most 0.07 m, while the contact patch of the drop
    test has a radius of about 0.24 m around the origin, so it always lies well inside the mesh.
    Normals +y.
    """
    sx, sz = DROP_SHIFTS[kind]
    mesh = Mesh("plane_" + kind, [
        "santasusana2016 Sec. 6.1.1 (Fig. 18, Table 6): drop of a sphere on a %s." % kind,
        "Plane y = 0, 10 x 10 squares of 0.2 m, each split into 2 triangles (200 triangles), normals +y.",
        "Grid shifted by (s_x, s_z) = (%g, %g): x in [%g, %g], z in [%g, %g]; impact point (0, 0, 0)."
        % (sx, sz, clean(-1 + sx), clean(1 + sx), clean(-1 + sz), clean(1 + sz)),
    ])
    for i in range(10):
        for k in range(10):
            x0, x1 = -1 + sx + 0.2 * i, -1 + sx + 0.2 * (i + 1)
            z0, z1 = -1 + sz + 0.2 * k, -1 + sz + 0.2 * (k + 1)
            a, b, c, d = (x0, 0, z0), (x1, 0, z0), (x1, 0, z1), (x0, 0, z1)
            mesh.face([a, b, c], UP)
            mesh.face([a, c, d], UP)
    return mesh


def continuity():
    """continuity: two quads meeting at a convex 90-degree edge (Fig. 20).

    f1: top facet y = 0, x in [-1, 0], z in [-0.5, 0.5], normal +y.
    f2: side facet x = 0, y in [-1, 0], z in [-0.5, 0.5], normal +x.
    The shared edge runs along z at x = 0, y = 0 (vertices (0, 0, -0.5) and (0, 0, 0.5)).
    """
    mesh = Mesh("continuity", [
        "santasusana2016 Sec. 6.1.2 (Fig. 20): continuity of the contact force around a convex edge.",
        "f1: y = 0, x in [-1, 0], z in [-0.5, 0.5], normal +y; f2: x = 0, y in [-1, 0], normal +x.",
        "Shared edge: x = 0, y = 0, z in [-0.5, 0.5].",
    ])
    mesh.face([(-1, 0, -0.5), (0, 0, -0.5), (0, 0, 0.5), (-1, 0, 0.5)], UP)
    mesh.face([(0, 0, -0.5), (0, -1, -0.5), (0, -1, 0.5), (0, 0, 0.5)], (1.0, 0.0, 0.0))
    return mesh


# Holes of the multiple-contact plate: (tile centre x, number of sides, angle of the first hole
# vertex in the x-z plane, measured from +x towards +z). The orientations are chosen so that the
# rays through the hole vertices (see hole_tile) meet each tile side shared by two tiles at the
# same point from both tiles, (-0.5, 0, 0) and (0.5, 0, 0): the plate is conforming (no
# T-junctions), which the strict convexity of the pieces would otherwise forbid (a vertex in the
# middle of a straight side is a straight corner).
HOLE_INRADIUS = 0.2   # m, distance from the hole centre to every hole edge
HOLES = [
    (-1.0, 3, 0.0),          # triangle, a vertex pointing +x: its ray meets x = -0.5 at z = 0
    (0.0, 4, 0.0),           # square as a diamond: rays meet the tile sides at their midpoints
    (1.0, 5, math.pi),       # pentagon, a vertex pointing -x: its ray meets x = 0.5 at z = 0
]


def hole_tile(mesh, cx, n, theta0, a=HOLE_INRADIUS, half=0.5):
    """Adds the 1 m x 1 m tile centred at (cx, 0, 0) minus a regular n-gon hole of inradius a,
    decomposed into n convex polygons.

    Hole vertices h_k at angle theta_k = theta0 + 2 pi k / n, distance a / cos(pi / n) from the
    centre. The ray from the centre through h_k meets the tile boundary at b_k. Piece k is the
    region between rays k and k+1 minus the hole: (h_k, b_k, [tile corners between], b_k+1, h_k+1).
    It is convex: its angle at h_k is 180 deg minus the (acute or obtuse, < 180) angle of triangle
    (centre, h_k, h_k+1), its angles at b_k and at the corners are those of the convex tile.
    """
    def boundary_point(angle):
        dx, dz = math.cos(angle), math.sin(angle)
        t = half / max(abs(dx), abs(dz))
        return tuple(clean(v) for v in (cx + t * dx, 0.0, t * dz))

    circum = a / math.cos(math.pi / n)
    thetas = [theta0 + 2 * math.pi * k / n for k in range(n)]
    hole = [(cx + circum * math.cos(t), 0.0, circum * math.sin(t)) for t in thetas]
    corners = [(math.atan2(sz, sx) % (2 * math.pi), (cx + sx * half, 0.0, sz * half))
               for sx, sz in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    for k in range(n):
        t0, t1 = thetas[k], thetas[(k + 1) % n]
        span = (t1 - t0) % (2 * math.pi)
        b0, b1 = boundary_point(t0), boundary_point(t1)
        between = []
        for angle, corner in corners:
            rel = (angle - t0) % (2 * math.pi)
            if 1e-9 < rel < span - 1e-9:   # strictly between the rays (a ray through a corner hits it)
                between.append((rel, corner))
        between.sort()
        polygon = [hole[k], b0] + [c for _, c in between] + [b1, hole[(k + 1) % n]]
        mesh.face(polygon, UP)


def multiple_contact():
    """multiple_contact: plate y = 0 with a triangular, a square and a pentagonal hole (Fig. 22).

    Three 1 m x 1 m tiles side by side along x, centred at x = -1, 0, 1 (z in [-0.5, 0.5]), so the
    plate spans x in [-1.5, 1.5]. Each tile has a regular hole centred on it with inradius 0.2 m
    (a sphere of radius 0.3 rests on the hole edges, its centre 0.2236 m above the plate): a
    triangle (circumradius 0.4), a square (0.2828) and a pentagon (0.2472). Each tile is split
    into convex polygons by rays from its centre through the hole vertices (hole_tile): 3 + 4 + 5
    = 12 faces. Rays meet the two shared tile sides x = -0.5 and x = 0.5 at z = 0 from both tiles,
    so the plate has no T-junction. Normals +y.
    """
    mesh = Mesh("multiple_contact", [
        "santasusana2016 Sec. 6.1.3 (Fig. 22, Table 7): three spheres resting in holes of a plate.",
        "Plate y = 0, x in [-1.5, 1.5], z in [-0.5, 0.5]; holes of inradius 0.2 m centred at x = -1 (triangle),",
        "x = 0 (square) and x = 1 (pentagon), z = 0. Convex pieces from rays through the hole vertices; normals +y.",
    ])
    for cx, n, theta0 in HOLES:
        hole_tile(mesh, cx, n, theta0)
    return mesh


def sliding_quad():
    """sliding_quad: one quad, y = 0, x in [-1, 9], z in [-1, 1], normal +y (Fig. 24b)."""
    mesh = Mesh("sliding_quad", [
        "santasusana2016 Sec. 6.1.4 (Fig. 24b, Table 8): sliding sphere on a plane meshed with one quad.",
        "y = 0, x in [-1, 9], z in [-1, 1], normal +y.",
    ])
    mesh.face([(-1, 0, -1), (9, 0, -1), (9, 0, 1), (-1, 0, 1)], UP)
    return mesh


def sliding_triangles():
    """sliding_triangles: the rectangle of sliding_quad as 80 triangles.

    20 columns of 0.5 m along x (x in [-1, 9]) x 2 rows along z ([-1, 0] and [0, 1]) x 2 triangles
    per cell. The row boundary z = 0 is the sphere's path: the sphere rolls along a line of
    internal edges. The diagonals alternate direction like a checkerboard ((column + row) even:
    from (x0, z0) to (x1, z1); odd: from (x1, z0) to (x0, z1)). Normals +y.
    """
    mesh = Mesh("sliding_triangles", [
        "santasusana2016 Sec. 6.1.4 (Fig. 24b, Table 8): sliding sphere on a plane meshed with 80 triangles.",
        "y = 0, x in [-1, 9], z in [-1, 1]: 20 x 2 cells of 0.5 m x 1 m, 2 triangles each, alternating diagonals;",
        "the internal edges at z = 0 lie on the sphere's path. Normals +y.",
    ])
    for i in range(20):
        for k in range(2):
            x0, x1 = -1 + 0.5 * i, -1 + 0.5 * (i + 1)
            z0, z1 = -1.0 + k, float(k)
            a, b, c, d = (x0, 0, z0), (x1, 0, z0), (x1, 0, z1), (x0, 0, z1)
            if (i + k) % 2 == 0:
                mesh.face([a, b, c], UP)
                mesh.face([a, c, d], UP)
            else:
                mesh.face([a, b, d], UP)
                mesh.face([b, c, d], UP)
    return mesh


# ---------------------------------------------------------------------------------------------
# Demo mixer (README): a closed drum and a two-paddle blade, axis z, centred at the origin
# ---------------------------------------------------------------------------------------------

DRUM_RADIUS = 0.1       # m, radius of the mantle's vertices (the flat quads are 0.0998 m from the axis)
DRUM_LENGTH = 0.1       # m, z in [-0.05, 0.05]
DRUM_SEGMENTS = 48
PADDLE_R = (0.01, 0.09)         # m, radial extent of each paddle
# Paddles span the whole drum length, z in [-0.05, 0.05]. With a gap to the end caps smaller than a
# bead diameter (z in [-0.045, 0.045] leaves 5 mm for beads of 7-9 mm) the paddle ends pinch
# beads against the caps: overlaps of 30 % of the radius in the demo, against 5 % without a gap.
PADDLE_HALF_LENGTH = DRUM_LENGTH / 2   # m
PADDLE_ANGLES_DEG = (0.0, 90.0)  # angle of each paddle about z, from +x towards +y
SHAFT_HALF_WIDTH = 0.008        # m, square shaft, spanning the whole drum length


def drum():
    """scenes/demo/drum.obj: a closed horizontal drum, axis z, radius 0.1 m, length 0.1 m.

    Mantle: 48 quads between z = -0.05 and z = 0.05 on the vertices of a regular 48-gon of radius
    0.1 m (faces at 0.1 cos(3.75 deg) = 0.0998 m from the axis). End caps z = -0.05 and z = 0.05:
    48 triangles each, fanned from the cap centre. Normals point into the drum.
    """
    h = DRUM_LENGTH / 2
    mesh = Mesh("drum", [
        "Demo mixer drum: closed cylinder, axis z, radius %g m (48-gon vertices), z in [-%g, %g]." % (DRUM_RADIUS, h, h),
        "Mantle: 48 quads; end caps: 48 triangles each, fanned from the cap centres. Normals point inwards.",
    ])
    ring = [(DRUM_RADIUS * math.cos(2 * math.pi * j / DRUM_SEGMENTS),
             DRUM_RADIUS * math.sin(2 * math.pi * j / DRUM_SEGMENTS)) for j in range(DRUM_SEGMENTS)]
    for j in range(DRUM_SEGMENTS):
        (xa, ya), (xb, yb) = ring[j], ring[(j + 1) % DRUM_SEGMENTS]
        mid = (-(xa + xb) / 2, -(ya + yb) / 2, 0.0)   # towards the axis
        mesh.face([(xa, ya, -h), (xb, yb, -h), (xb, yb, h), (xa, ya, h)], mid)
        mesh.face([(0.0, 0.0, -h), (xa, ya, -h), (xb, yb, -h)], (0.0, 0.0, 1.0))
        mesh.face([(0.0, 0.0, h), (xa, ya, h), (xb, yb, h)], (0.0, 0.0, -1.0))
    return mesh


def blade():
    """scenes/demo/blade.obj: two flat paddles and a square shaft on the z axis.

    Paddles: zero-thickness quads in the planes through the z axis at 0 and 90 degrees (the
    half-planes y = 0, x > 0 and x = 0, y > 0), radius 0.01 to 0.09 m, z in [-0.05, 0.05] (the whole
    drum length, see PADDLE_HALF_LENGTH); contact with them is double-sided. Shaft: 4 quads, square cross-section of half-width
    0.008 m, z in [-0.05, 0.05] (the full drum length, so no open shaft end is reachable), normals
    outwards. Rotate it with the mesh motion about the z axis through the origin.
    """
    h = DRUM_LENGTH / 2
    mesh = Mesh("blade", [
        "Demo mixer blade: paddles at %s deg about z (radius %g..%g m, z in [-%g, %g], zero thickness)"
        % (" and ".join("%g" % a for a in PADDLE_ANGLES_DEG), PADDLE_R[0], PADDLE_R[1],
           PADDLE_HALF_LENGTH, PADDLE_HALF_LENGTH),
        "and a square shaft (half-width %g m, z in [-%g, %g], 4 quads, normals outwards)." % (SHAFT_HALF_WIDTH, h, h),
    ])
    for angle in PADDLE_ANGLES_DEG:
        c, s = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        r0, r1, zh = PADDLE_R[0], PADDLE_R[1], PADDLE_HALF_LENGTH
        mesh.face([(r0 * c, r0 * s, -zh), (r1 * c, r1 * s, -zh), (r1 * c, r1 * s, zh), (r0 * c, r0 * s, zh)],
                  (-s, c, 0.0))
    w = SHAFT_HALF_WIDTH
    square = [(w, -w), (w, w), (-w, w), (-w, -w)]
    for j in range(4):
        (xa, ya), (xb, yb) = square[j], square[(j + 1) % 4]
        mesh.face([(xa, ya, -h), (xb, yb, -h), (xb, yb, h), (xa, ya, h)], ((xa + xb) / 2, (ya + yb) / 2, 0.0))
    return mesh


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------

REL_TOL = 1e-9   # relative to the face diameter (the engine's loader uses 1e-6)


def check_face(points, expected_normal=None):
    """Asserts that a face is non-degenerate, planar and strictly convex, and (optionally) that
    its right-hand normal points along expected_normal. Returns (unit normal, area)."""
    k = len(points)
    assert k >= 3, "face with %d vertices" % k
    diameter = max(norm(sub(p, q)) for p in points for q in points)
    a = newell(points)
    area = norm(a)
    assert area > 1e-9 * diameter * diameter, "degenerate face %r" % (points,)
    n = tuple(c / area for c in a)
    centroid = tuple(sum(p[c] for p in points) / k for c in range(3))
    for p in points:
        assert abs(dot(sub(p, centroid), n)) <= REL_TOL * diameter, "non-planar face %r" % (points,)
    turning = 0.0
    for i in range(k):
        e0, e1 = sub(points[i], points[i - 1]), sub(points[(i + 1) % k], points[i])
        sin_turn = dot(cross(e0, e1), n) / (norm(e0) * norm(e1))
        assert sin_turn > 1e-6, "not strictly convex at vertex %d of %r" % (i, points)
        turning += math.atan2(sin_turn, dot(e0, e1) / (norm(e0) * norm(e1)))
    assert abs(turning - 2 * math.pi) < 1e-9, "face winds %g times: %r" % (turning / (2 * math.pi), points)
    if expected_normal is not None:
        assert dot(n, expected_normal) > 0, "face %r faces away from %r" % (points, expected_normal)
    return n, area


def check_mesh(mesh, n_faces, expected_normal=None, closed=False):
    """Per-face checks, the face count, edge sharing and orientation, and T-junctions.
    expected_normal: None, a vector, or a function (face points) -> vector."""
    assert len(mesh.faces) == n_faces, "%s: %d faces, expected %d" % (mesh.name, len(mesh.faces), n_faces)
    total_area = 0.0
    for f in range(len(mesh.faces)):
        pts = mesh.face_points(f)
        want = expected_normal(pts) if callable(expected_normal) else expected_normal
        total_area += check_face(pts, want)[1]
    # Directed edges: an undirected edge is used by at most two faces, in opposite directions.
    directed = {}
    for f, face in enumerate(mesh.faces):
        for i in range(len(face)):
            e = (face[i], face[(i + 1) % len(face)])
            assert e not in directed, "%s: edge %r used twice in the same direction" % (mesh.name, e)
            directed[e] = f
    undirected = {tuple(sorted(e)) for e in directed}
    if closed:
        for a, b in undirected:
            assert (a, b) in directed and (b, a) in directed, "%s: open edge %r" % (mesh.name, (a, b))
    # No vertex lies inside an edge (a T-junction: the faces would not share that edge).
    for a, b in undirected:
        pa, pb = mesh.vertices[a], mesh.vertices[b]
        d = sub(pb, pa)
        length2 = dot(d, d)
        for v, p in enumerate(mesh.vertices):
            if v in (a, b):
                continue
            t = dot(sub(p, pa), d) / length2
            if 1e-9 < t < 1 - 1e-9:
                off = sub(sub(p, pa), tuple(t * c for c in d))
                assert norm(off) > 1e-9, "%s: T-junction: vertex %d inside edge %r" % (mesh.name, v, (a, b))
    return total_area


def point_in_triangle_margin(p, tri):
    """Distance of p = (x, z) to the nearest edge line of the triangle tri (3D points, y ignored),
    signed: > 0 strictly inside, 0 on an edge, < 0 outside. Either vertex order."""
    pts = [(q[0], q[2]) for q in tri]
    area2 = (pts[1][0] - pts[0][0]) * (pts[2][1] - pts[0][1]) - (pts[1][1] - pts[0][1]) * (pts[2][0] - pts[0][0])
    sign = 1 if area2 > 0 else -1
    margin = float("inf")
    for i in range(3):
        (ax, az), (bx, bz) = pts[i], pts[(i + 1) % 3]
        ex, ez = bx - ax, bz - az
        margin = min(margin, sign * (ex * (p[1] - az) - ez * (p[0] - ax)) / math.hypot(ex, ez))
    return margin


def check_drop_plane(mesh, kind):
    check_mesh(mesh, 2 * 10 * 10, UP)   # 10 x 10 squares of 0.2 m, 2 triangles each
    for v in mesh.vertices:
        assert v[1] == 0.0
    tris = [mesh.face_points(f) for f in range(len(mesh.faces))]
    margins = sorted((point_in_triangle_margin((0.0, 0.0), t), f) for f, t in enumerate(tris))
    containing = [f for m, f in margins if m >= -1e-12]
    if kind == "facet":
        assert len(containing) == 1 and margins[-1][0] > 0.03, "facet: impact point not well inside one triangle"
    elif kind == "edge":
        assert len(containing) == 2, "edge: impact point should be on exactly two triangles"
        assert (0.0, 0.0, 0.0) not in mesh._index
        assert all(abs(margins[-1 - j][0]) < 1e-12 for j in range(2))
        # the two triangles share the edge through the point: the grid line x = 0
        shared = set(mesh.faces[containing[0]]) & set(mesh.faces[containing[1]])
        assert len(shared) == 2 and all(mesh.vertices[v][0] == 0.0 for v in shared)
    else:
        assert (0.0, 0.0, 0.0) in mesh._index, "vertex: the impact point must be a mesh vertex"
        origin = mesh._index[(0.0, 0.0, 0.0)]
        assert sum(origin in face for face in mesh.faces) == 6, "vertex: 6 triangles around the impact point"
        assert len(containing) == 6


def check_multiple_contact(mesh):
    area = check_mesh(mesh, 3 + 4 + 5, UP)
    hole_area = sum(n * HOLE_INRADIUS ** 2 * math.tan(math.pi / n) for _, n, _ in HOLES)
    assert abs(area - (3.0 - hole_area)) < 1e-9, "plate area %r != 3 - holes %r" % (area, 3 - hole_area)
    # Boundary edges (used once) are the plate outline and the holes' edges; each hole edge is at
    # distance HOLE_INRADIUS from its hole centre.
    directed = {(f[i], f[(i + 1) % len(f)]) for f in mesh.faces for i in range(len(f))}
    boundary = [(a, b) for a, b in directed if (b, a) not in directed]
    hole_edges = 0
    for a, b in boundary:
        pa, pb = mesh.vertices[a], mesh.vertices[b]
        on_outline = (pa[0] == pb[0] and abs(pa[0]) == 1.5) or (pa[2] == pb[2] and abs(pa[2]) == 0.5)
        if on_outline:
            continue
        cx = min((cx for cx, _, _ in HOLES), key=lambda c: abs(c - (pa[0] + pb[0]) / 2))
        ex, ez = pb[0] - pa[0], pb[2] - pa[2]
        dist = abs(ex * (0 - pa[2]) - ez * (cx - pa[0])) / math.hypot(ex, ez)
        assert abs(dist - HOLE_INRADIUS) < 1e-9, "hole edge %r at distance %r" % ((pa, pb), dist)
        hole_edges += 1
    assert hole_edges == 3 + 4 + 5


def check_sliding(quad, tris):
    assert abs(check_mesh(quad, 1, UP) - 20.0) < 1e-9
    assert abs(check_mesh(tris, 80, UP) - 20.0) < 1e-9
    path_edges = {tuple(sorted((tris.vertices[a][0], tris.vertices[b][0])))
                  for f in tris.faces for a, b in zip(f, f[1:] + f[:1])
                  if tris.vertices[a][2] == 0.0 and tris.vertices[b][2] == 0.0}
    assert sorted(path_edges) == [(-1 + 0.5 * i, -0.5 + 0.5 * i) for i in range(20)], "no edges along z = 0"


def check_demo(drum_mesh, blade_mesh):
    inwards = lambda pts: tuple(-c for c in (
        (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts),
         sum(p[2] for p in pts) / len(pts))))
    check_mesh(drum_mesh, 3 * DRUM_SEGMENTS, inwards, closed=True)
    w = SHAFT_HALF_WIDTH
    outwards = lambda pts: (tuple(sum(p[c] for p in pts) for c in range(3))   # shaft faces: away from the axis
                            if all(max(abs(p[0]), abs(p[1])) == w for p in pts) else None)  # paddles: 2-sided
    check_mesh(blade_mesh, len(PADDLE_ANGLES_DEG) + 4, outwards)
    for v in blade_mesh.vertices:   # the blade stays inside the drum
        assert math.hypot(v[0], v[1]) < DRUM_RADIUS * math.cos(math.pi / DRUM_SEGMENTS)
        assert abs(v[2]) <= DRUM_LENGTH / 2


def read_obj(path):
    """(vertices, faces) of an OBJ file written by Mesh.write (faces 0-based)."""
    vertices, faces = [], []
    with open(path) as f:
        for line in f:
            tok = line.split("#")[0].split()
            if tok and tok[0] == "v":
                vertices.append(tuple(float(t) for t in tok[1:4]))
            elif tok and tok[0] == "f":
                faces.append([int(t.split("/")[0]) - 1 for t in tok[1:]])
    return vertices, faces


# ---------------------------------------------------------------------------------------------
# Derived numbers quoted in the scene files
# ---------------------------------------------------------------------------------------------

def hertz_contact_time(e_star, r_star, m_star, v):
    """Duration of an elastic Hertz impact at normal speed v (s): 2.868 (m*^2 / (R* E*^2 v))^(1/5)."""
    return 2.868265699 * (m_star ** 2 / (r_star * e_star ** 2 * v)) ** 0.2


def derived_numbers():
    """The values quoted in scenes/validation/*.yaml and scenes/demo/demo.yaml, as text lines."""
    g, R, rho, nu = 9.81, 0.3, 100.0, 0.2
    m = rho * 4.0 / 3.0 * math.pi * R ** 3
    lines = ["validation sphere: R = 0.3 m, density 100 -> m = %.10g kg, weight %.10g N" % (m, m * g)]
    # Table 6: E = 1e5 (drops, continuity)
    e6 = 1e5 / (1 - nu ** 2)
    f_cont = 4.0 / 3.0 * e6 * math.sqrt(R) * 0.01 ** 1.5
    lines.append("continuity: E* = %.10g Pa, F = 4/3 E* sqrt(R) delta^1.5 at delta = 0.01: %.10g N (paper: 76.063 N)"
                 % (e6, f_cont))
    v_imp = math.sqrt(2 * g * 0.7)
    # Deepest point: the elastic energy 2/5 K delta^(5/2) equals the work of gravity m g (0.7 + delta).
    k6, lo, hi = 4.0 / 3.0 * e6 * math.sqrt(R), 0.0, R
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if 0.4 * k6 * mid ** 2.5 < m * g * (0.7 + mid) else (lo, mid)
    delta_max = lo
    t_fall = math.sqrt(2 * 0.7 / g)
    t_c = hertz_contact_time(e6, R, m, v_imp)
    lines.append("drop: fall 0.7 m in %.4g s, impact %.4g m/s, contact %.4g s, max indentation %.4g m (%.0f%% of R),"
                 " back at the apex at t = %.4g s" % (t_fall, v_imp, t_c, delta_max, 100 * delta_max / R,
                                                      2 * t_fall + t_c))
    # Table 7: E = 1e6 (multiple contact, sliding)
    e7 = 1e6 / (1 - nu ** 2)
    delta_s = (m * g / (4.0 / 3.0 * e7 * math.sqrt(R))) ** (2.0 / 3.0)
    lines.append("sliding: E* = %.10g Pa, delta_s = (m g / (4/3 E* sqrt(R)))^(2/3) = %.10g m, centre y = %.10g m"
                 % (e7, delta_s, R - delta_s))
    mu, v0 = 0.3, 5.0
    tc = 2 * v0 / (7 * mu * g)
    x1 = 12 * v0 ** 2 / (49 * mu * g) + 5.0 / 7.0 * v0 * (1 - tc)
    lines.append("sliding analytical (Eqs. 36-39): t_c = %.6g s, x(1) = %.6g m, v(1) = %.6g m/s, omega_z(1) = %.6g rad/s"
                 % (tc, x1, 5.0 / 7.0 * v0, -5 * v0 / (7 * R)))
    # Demo: glass-like, E = 5e6, nu = 0.25, density 2500, r in [0.0035, 0.0045], wall rigid
    E, nu_d, rho_d, dt = 5e6, 0.25, 2500.0, 2e-5
    for r in (0.0035, 0.0045):
        md = rho_d * 4.0 / 3.0 * math.pi * r ** 3
        for v in (1.0, 2.0, 5.0):
            t_pp = hertz_contact_time(E / (2 * (1 - nu_d ** 2)), r / 2, md / 2, v)
            t_pw = hertz_contact_time(E / (1 - nu_d ** 2), r, md, v)
            lines.append("demo r = %g m, v = %g m/s: contact time particle-particle %.3g s (%.0f dt),"
                         " particle-wall %.3g s (%.0f dt)" % (r, v, t_pp, t_pp / dt, t_pw, t_pw / dt))
    G = E / (2 * (1 + nu_d))
    t_rayleigh = math.pi * 0.0035 * math.sqrt(rho_d / G) / (0.1631 * nu_d + 0.8766)
    lines.append("demo Rayleigh time (r = 0.0035): %.3g s, dt = %.3g of it" % (t_rayleigh, dt / t_rayleigh))
    return lines


# ---------------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", help="write every mesh here (default: scenes/validation/ and scenes/demo/)")
    parser.add_argument("--numbers", action="store_true", help="only print the derived scene numbers")
    args = parser.parse_args(argv)
    if args.numbers:
        print("\n".join(derived_numbers()))
        return 0

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    validation_dir = args.outdir or os.path.join(root, "scenes", "validation")
    demo_dir = args.outdir or os.path.join(root, "scenes", "demo")

    meshes = {kind: drop_plane(kind) for kind in DROP_SHIFTS}
    for kind, mesh in meshes.items():
        check_drop_plane(mesh, kind)
    cont = continuity()
    check_mesh(cont, 2, lambda pts: UP if all(p[1] == 0 for p in pts) else (1.0, 0.0, 0.0))
    plate = multiple_contact()
    check_multiple_contact(plate)
    quad, tris = sliding_quad(), sliding_triangles()
    check_sliding(quad, tris)
    drum_mesh, blade_mesh = drum(), blade()
    check_demo(drum_mesh, blade_mesh)

    outputs = [(validation_dir, m) for m in list(meshes.values()) + [cont, plate, quad, tris]]
    outputs += [(demo_dir, drum_mesh), (demo_dir, blade_mesh)]
    for directory, mesh in outputs:
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, mesh.name + ".obj")
        mesh.write(path)
        assert read_obj(path) == (mesh.vertices, mesh.faces), "%s: file does not round-trip" % path
        print("wrote %s (%d vertices, %d faces)" % (os.path.relpath(path), len(mesh.vertices), len(mesh.faces)))
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
