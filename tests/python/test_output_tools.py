"""Tests of the Python output tools: tools/dem_vtu.py (reader of the engine's .pvd/.vtu files) and
tools/dem-render (PNG/MP4 frames of a run folder).

Run with:  python3 -m pytest tests/python/test_output_tools.py -q
Needs numpy and matplotlib; the comparisons against VTK's own XML writer and reader run only where
the vtk module is importable (skipped otherwise).

The input files are written here by a small writer that follows the engine's layout
(host/app/io/vtk_writer.cpp): VTK XML UnstructuredGrid, byte_order LittleEndian, header_type UInt64,
every DataArray an appended raw block (UInt64 byte count + values), or, with zlib, the header
[blocks, block size, last block size (0: full), compressed sizes...] followed by the zlib
streams; FieldData (TimeValue, a name as UInt8 bytes) written inline as ascii.
"""
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools"
RENDER = TOOLS / "dem-render"
sys.path.insert(0, str(TOOLS))

import dem_vtu  # noqa: E402

VTK_TYPES = {np.dtype("<f8"): "Float64", np.dtype("<i8"): "Int64", np.dtype("u1"): "UInt8"}


# ------------------------------------------------------------------------------------------------
# A minimal writer in the engine's exact layout
# ------------------------------------------------------------------------------------------------

def _block(values, zlib_block_size):
    raw = np.ascontiguousarray(values).tobytes()
    if zlib_block_size is None:
        return np.uint64(len(raw)).astype("<u8").tobytes() + raw
    chunks = [raw[i:i + zlib_block_size] for i in range(0, len(raw), zlib_block_size)]
    streams = [zlib.compress(c, 1) for c in chunks]
    header = [len(chunks), zlib_block_size, len(raw) % zlib_block_size] + [len(s) for s in streams]
    return np.array(header, dtype="<u8").tobytes() + b"".join(streams)


def write_vtu(path, points, point_data=(), cell_data=(), cells=None, time=None, name=None,
              zlib_block_size=None, global_ids=None):
    """points (n, 3); point_data / cell_data: [(name, array)], float64, int64 or uint8, (n,) or
    (n, c); cells: (connectivity, offsets, types), default one vertex cell per point;
    zlib_block_size: None writes uncompressed blocks, else zlib with blocks of that many bytes."""
    points = np.asarray(points, dtype="<f8").reshape(-1, 3)
    n = len(points)
    if cells is None:
        cells = (np.arange(n), np.arange(1, n + 1), np.full(n, 1))
    conn, offs, types = cells
    cell_arrays = [("connectivity", np.asarray(conn, "<i8")), ("offsets", np.asarray(offs, "<i8")),
                   ("types", np.asarray(types, "u1"))]
    xml = ['<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" '
           'header_type="UInt64"' + (' compressor="vtkZLibDataCompressor"' if zlib_block_size else '') + '>\n'
           '  <UnstructuredGrid>\n']
    if time is not None or name is not None:
        xml.append("    <FieldData>\n")
        if time is not None:
            xml.append(f'      <DataArray type="Float64" Name="TimeValue" NumberOfTuples="1" format="ascii">'
                       f'{time!r}</DataArray>\n')
        if name is not None:
            b = name.encode()
            xml.append(f'      <DataArray type="UInt8" Name="name" NumberOfTuples="{len(b)}" format="ascii">'
                       + " ".join(str(c) for c in b) + "</DataArray>\n")
        xml.append("    </FieldData>\n")
    xml.append(f'    <Piece NumberOfPoints="{n}" NumberOfCells="{len(offs)}">\n')
    blocks, offset = [], 0

    def section(tag, arrays, attributes=""):
        nonlocal offset
        xml.append(f"      <{tag}{attributes}>\n")
        for array_name, a in arrays:
            a = np.asarray(a)
            a = a.astype(a.dtype.newbyteorder("<")) if a.dtype.kind in "fi" else a
            comps = 1 if a.ndim == 1 else a.shape[1]
            ids = ' IdType="1"' if array_name == global_ids else ""
            nm = f' Name="{array_name}"' if array_name else ""
            xml.append(f'        <DataArray type="{VTK_TYPES[a.dtype]}"{ids}{nm} NumberOfComponents="{comps}" '
                       f'format="appended" offset="{offset}"/>\n')
            blocks.append(_block(a, zlib_block_size))
            offset += len(blocks[-1])
        xml.append(f"      </{tag}>\n")

    section("PointData", point_data, f' GlobalIds="{global_ids}"' if global_ids else "")
    section("CellData", cell_data)
    section("Points", [("", points)])
    section("Cells", cell_arrays)
    xml.append('    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding="raw">\n_')
    with open(path, "wb") as f:
        f.write("".join(xml).encode())
        for b in blocks:
            f.write(b)
        f.write(b"\n  </AppendedData>\n</VTKFile>\n")


def write_pvd(path, datasets):
    """datasets: [(time, part, name or None, relative file)]."""
    lines = ['<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1" byte_order="LittleEndian">\n'
             '  <Collection>\n']
    for t, part, name, file in datasets:
        nm = f' name="{name}"' if name else ""
        lines.append(f'    <DataSet timestep="{t!r}" group="" part="{part}"{nm} file="{file}"/>\n')
    lines.append("  </Collection>\n</VTKFile>\n")
    Path(path).write_text("".join(lines))


def particle_arrays(n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, 3)),
            [("velocity", rng.normal(size=(n, 3))), ("angular_velocity", rng.normal(size=(n, 3))),
             ("radius", rng.uniform(0.01, 0.02, n)), ("id", np.arange(n, dtype=np.int64) * 7 + 3),
             ("material", rng.integers(0, 3, n).astype(np.int64))])


# A mesh with a triangle, a quad and a pentagon (VTK_POLYGON cells of 3, 4 and 5 corners).
MESH_POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [2, 1, 0], [3, 0.5, 0],
                        [2.5, 1.5, 0]], dtype=float)
MESH_FACES = [[0, 1, 2], [1, 4, 5, 2], [4, 6, 7, 5, 2]]


def mesh_cells(faces):
    return (np.concatenate(faces), np.cumsum([len(f) for f in faces]), np.full(len(faces), 7))


# ------------------------------------------------------------------------------------------------
# Reader
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("zlib_block_size", [None, 256, 1 << 20], ids=["raw", "zlib-multiblock", "zlib"])
def test_read_particles(tmp_path, zlib_block_size):
    n = 101  # 101 * 24 bytes: several 256-byte zlib blocks, the last one partial
    points, arrays = particle_arrays(n)
    path = tmp_path / "particles_000000.vtu"
    write_vtu(path, points, arrays, time=0.25, zlib_block_size=zlib_block_size, global_ids="id")
    v = dem_vtu.read_vtu(path)
    assert v.points.shape == (n, 3) and v.points.dtype == np.float64
    np.testing.assert_array_equal(v.points, points)
    assert list(v.point_data) == [a for a, _ in arrays]
    for name, a in arrays:
        assert v.point_data[name].shape == a.shape, name
        assert v.point_data[name].dtype == a.dtype, name
        np.testing.assert_array_equal(v.point_data[name], a)
    np.testing.assert_array_equal(v.connectivity, np.arange(n))
    np.testing.assert_array_equal(v.offsets, np.arange(1, n + 1))
    assert v.types.dtype == np.uint8 and np.all(v.types == dem_vtu.VTK_VERTEX)
    assert v.cell_data == {}
    assert v.field_data["TimeValue"].tolist() == [0.25]
    assert v.n_points == n and v.n_cells == n
    assert v["points"] is v.points  # dict-style access
    # Only the arrays asked for are decoded.
    only = dem_vtu.read_vtu(path, arrays=["radius"])
    assert list(only.point_data) == ["radius"]


def test_zlib_block_exactly_full(tmp_path):
    # 32 Float64 radii = 256 bytes: one full 256-byte block, the header's last size is 0.
    points = np.zeros((32, 3))
    write_vtu(tmp_path / "a.vtu", points, [("radius", np.linspace(0, 1, 32))], zlib_block_size=256)
    np.testing.assert_array_equal(dem_vtu.read_vtu(tmp_path / "a.vtu").point_data["radius"], np.linspace(0, 1, 32))


@pytest.mark.parametrize("zlib_block_size", [None, 64])
def test_read_mesh_polygons_and_field_data(tmp_path, zlib_block_size):
    path = tmp_path / "meshes_000003_1.vtu"
    body = np.full(len(MESH_FACES), 1, dtype=np.int64)
    write_vtu(path, MESH_POINTS, cell_data=[("body", body)], cells=mesh_cells(MESH_FACES), time=1.5e-4,
              name="drum wall", zlib_block_size=zlib_block_size)
    m = dem_vtu.read_vtu(path)
    np.testing.assert_array_equal(m.points, MESH_POINTS)
    assert [p.tolist() for p in m.polygons()] == MESH_FACES
    assert [c.tolist() for c in m.cells()] == MESH_FACES
    np.testing.assert_array_equal(m.cell_data["body"], body)
    assert m.point_data == {}
    assert m.field_data["TimeValue"].tolist() == [1.5e-4]
    assert m.field_data["name"].dtype == np.uint8
    assert m.field_text("name") == "drum wall"
    assert m.field_text("missing") is None


def test_read_pvd(tmp_path):
    (tmp_path / "sub").mkdir()
    write_pvd(tmp_path / "sub" / "meshes.pvd",
              [(0.5, 0, "drum", "m_1_0.vtu"), (0.5, 1, "blade", "m_1_1.vtu"),
               (0.0, 0, "drum", "m_0_0.vtu"), (0.0, 1, None, "m_0_1.vtu")])
    entries = dem_vtu.read_pvd(tmp_path / "sub" / "meshes.pvd")
    assert [(e.time, e.part, e.name) for e in entries] == [(0.0, 0, "drum"), (0.0, 1, None),
                                                            (0.5, 0, "drum"), (0.5, 1, "blade")]
    time, part, name, file = entries[0]  # a plain tuple too
    assert file == str(tmp_path / "sub" / "m_0_0.vtu") and os.path.isabs(file)
    groups = dem_vtu.group_by_time(entries)
    assert [(t, [e.part for e in g]) for t, g in groups] == [(0.0, [0, 1]), (0.5, [0, 1])]


def test_errors_name_the_file(tmp_path):
    points, arrays = particle_arrays(40)
    for zlib_block_size in (None, 128):
        good = tmp_path / "good.vtu"
        write_vtu(good, points, arrays, time=0.0, zlib_block_size=zlib_block_size)
        data = good.read_bytes()
        data_start = data.index(b"_", data.index(b"<AppendedData")) + 1
        cuts = [0, 50, data.index(b"<AppendedData") + 5, data_start, data_start + 7, data_start + 500,
                len(data) - 40]
        for cut in cuts:
            bad = tmp_path / f"cut_{cut}.vtu"
            bad.write_bytes(data[:cut])
            with pytest.raises(ValueError, match=str(bad).replace("\\", "\\\\")):
                dem_vtu.read_vtu(bad)
        # Complete file, but an offset past the end of the data.
        bad = tmp_path / "offset.vtu"
        bad.write_bytes(data.replace(b'offset="0"', b'offset="99999999"', 1))
        with pytest.raises(ValueError, match="bad|offset|truncated|past the end"):
            dem_vtu.read_vtu(bad)
    # A corrupt zlib stream.
    bad = tmp_path / "corrupt.vtu"
    data = good.read_bytes()
    i = data.index(b"_", data.index(b"<AppendedData")) + 1 + 4 * 8 + 10
    bad.write_bytes(data[:i] + bytes(b ^ 0x5A for b in data[i:i + 20]) + data[i + 20:])
    with pytest.raises(ValueError, match="corrupt.vtu"):
        dem_vtu.read_vtu(bad)
    pvd = tmp_path / "particles.pvd"
    write_pvd(pvd, [(0.0, 0, None, "a.vtu")])
    pvd.write_bytes(pvd.read_bytes()[:-30])
    with pytest.raises(ValueError, match="particles.pvd"):
        dem_vtu.read_pvd(pvd)
    with pytest.raises(FileNotFoundError):
        dem_vtu.read_vtu(tmp_path / "nope.vtu")


def test_reader_imports_no_third_party_module():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import dem_vtu; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'vtk', 'vtkmodules', 'meshio', 'pyvista', "
            "'matplotlib', 'scipy', 'pandas'}))")
    r = subprocess.run([sys.executable, "-c", code, str(TOOLS)], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"


# --- against VTK's own writer and reader, where vtk is installed --------------------------------

def _vtk_array(vtk_np, a, name):
    arr = vtk_np.numpy_to_vtk(np.ascontiguousarray(a), deep=True)
    arr.SetName(name)
    return arr


def _vtk_grid(vtk, vtk_np, points, cell_type, cells, point_data=(), cell_data=(), field_data=()):
    grid = vtk.vtkUnstructuredGrid()
    pts = vtk.vtkPoints()
    pts.SetData(vtk_np.numpy_to_vtk(np.ascontiguousarray(points), deep=True))
    grid.SetPoints(pts)
    grid.Allocate(len(cells))
    for c in cells:
        grid.InsertNextCell(cell_type, len(c), [int(i) for i in c])
    for name, a in point_data:
        grid.GetPointData().AddArray(_vtk_array(vtk_np, a, name))
    for name, a in cell_data:
        grid.GetCellData().AddArray(_vtk_array(vtk_np, a, name))
    for name, a in field_data:
        grid.GetFieldData().AddArray(_vtk_array(vtk_np, a, name))
    return grid


@pytest.mark.parametrize("compress", [False, True], ids=["raw", "zlib"])
def test_reader_against_vtk_writer(tmp_path, compress):
    vtk = pytest.importorskip("vtk")
    vtk_np = pytest.importorskip("vtk.util.numpy_support")
    n = 3000  # more than one of VTK's compression blocks when the block size can be set small
    points, arrays = particle_arrays(n, seed=5)
    flags = ("flag", (np.arange(n) % 3).astype(np.uint8))
    grid = _vtk_grid(vtk, vtk_np, points, vtk.VTK_VERTEX, [[i] for i in range(n)], arrays + [flags],
                     field_data=[("TimeValue", np.array([0.125]))])
    mesh = _vtk_grid(vtk, vtk_np, MESH_POINTS, vtk.VTK_POLYGON, MESH_FACES,
                     cell_data=[("body", np.array([4, 4, 4], dtype=np.int64))])
    for g, name in ((grid, "p.vtu"), (mesh, "m.vtu")):
        w = vtk.vtkXMLUnstructuredGridWriter()
        w.SetFileName(str(tmp_path / name))
        w.SetInputData(g)
        w.SetDataModeToAppended()
        w.SetEncodeAppendedData(False)
        w.SetHeaderTypeToUInt64()
        if compress:
            w.SetCompressorTypeToZLib()
            if hasattr(w, "SetBlockSize"):
                w.SetBlockSize(4096)
        else:
            w.SetCompressorTypeToNone()
        assert w.Write() == 1
    head = (tmp_path / "p.vtu").read_bytes()[:400]
    assert (b"vtkZLibDataCompressor" in head) == compress and b'header_type="UInt64"' in head
    v = dem_vtu.read_vtu(tmp_path / "p.vtu")
    np.testing.assert_array_equal(v.points, points)
    for name, a in arrays + [flags]:
        np.testing.assert_array_equal(v.point_data[name], a)
        assert v.point_data[name].shape == a.shape
    np.testing.assert_array_equal(v.connectivity, np.arange(n))
    np.testing.assert_array_equal(v.offsets, np.arange(1, n + 1))
    assert np.all(v.types == dem_vtu.VTK_VERTEX)
    assert v.field_data["TimeValue"].tolist() == [0.125]
    m = dem_vtu.read_vtu(tmp_path / "m.vtu")
    np.testing.assert_array_equal(m.points, MESH_POINTS)
    assert [p.tolist() for p in m.polygons()] == MESH_FACES
    assert np.all(m.types == dem_vtu.VTK_POLYGON)
    assert m.cell_data["body"].tolist() == [4, 4, 4]


@pytest.mark.parametrize("zlib_block_size", [None, 200], ids=["raw", "zlib"])
def test_test_writer_layout_is_what_vtk_reads(tmp_path, zlib_block_size):
    """VTK's reader reads this file's writer: its layout is the real one, not only what
    dem_vtu expects."""
    vtk = pytest.importorskip("vtk")
    vtk_np = pytest.importorskip("vtk.util.numpy_support")
    points, arrays = particle_arrays(77, seed=2)
    write_vtu(tmp_path / "p.vtu", points, arrays, time=0.5, zlib_block_size=zlib_block_size, global_ids="id")
    write_vtu(tmp_path / "m.vtu", MESH_POINTS, cell_data=[("body", np.zeros(3, np.int64))],
              cells=mesh_cells(MESH_FACES), name="lid", zlib_block_size=zlib_block_size)
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(str(tmp_path / "p.vtu"))
    r.Update()
    g = r.GetOutput()
    np.testing.assert_array_equal(vtk_np.vtk_to_numpy(g.GetPoints().GetData()), points)
    for name, a in arrays:
        np.testing.assert_array_equal(vtk_np.vtk_to_numpy(g.GetPointData().GetArray(name)), a)
    assert g.GetFieldData().GetArray("TimeValue").GetValue(0) == 0.5
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(str(tmp_path / "m.vtu"))
    r.Update()
    g = r.GetOutput()
    assert [[g.GetCell(c).GetPointId(k) for k in range(g.GetCell(c).GetNumberOfPoints())]
            for c in range(g.GetNumberOfCells())] == MESH_FACES
    name = vtk_np.vtk_to_numpy(g.GetFieldData().GetArray("name"))
    assert bytes(name.astype(np.uint8)).decode() == "lid"


# ------------------------------------------------------------------------------------------------
# Renderer
# ------------------------------------------------------------------------------------------------

BIG_RADIUS = 1.0   # the sphere at the centre
BIG_SPEED = 2.0    # the fastest: drawn in the top colour of the scale (viridis(1.0), yellow)
TIMES = (0.0, 0.25)


def make_run(folder, n_small=49, times=TIMES, last_extra=None):
    """A run folder: a big sphere at the origin, n_small small ones on a ring of radius 3 in the
    z = 0 plane, a floor square at z = -1.5 (body 0) and a wall at x = 4 (body 1), at two times
    (or `times`); last_extra: the position of one more small sphere in the last snapshot only.
    Snapshot 0 is written with zlib, snapshot 1 uncompressed."""
    folder.mkdir(parents=True, exist_ok=True)
    particles, meshes = [], []
    for k, t in enumerate(times):
        zb = 4096 if k == 0 else None
        angle = np.linspace(0, 2 * np.pi, n_small, endpoint=False) + 0.3 * t
        pos = np.vstack([[0.0, 0.0, 0.0], np.column_stack([3 * np.cos(angle), 3 * np.sin(angle), 0 * angle])])
        vel = np.vstack([[BIG_SPEED, 0.0, 0.0], np.column_stack([0.4 * np.sin(angle), 0 * angle, 0 * angle])])
        radius = np.concatenate([[BIG_RADIUS], np.full(n_small, 0.15)])
        if last_extra is not None and k == len(times) - 1:
            pos = np.vstack([pos, last_extra])
            vel = np.vstack([vel, [0.0, 0.0, 0.0]])
            radius = np.append(radius, 0.15)
        f = f"particles_{k:06d}.vtu"
        write_vtu(folder / f, pos, [("velocity", vel), ("radius", radius),
                                    ("id", np.arange(len(pos), dtype=np.int64))],
                  time=t, zlib_block_size=zb, global_ids="id")
        particles.append((t, 0, None, f))
        floor = np.array([[-4, -4, -1.5], [4, -4, -1.5], [4, 4, -1.5], [-4, 4, -1.5]], float)
        wall = np.array([[4, -4, -1.5], [4, 4, -1.5], [4, 4, 1.5], [4, -4, 1.5], [4, 0, 2.5]], float)
        for b, (name, pts, faces) in enumerate([("floor", floor, [[0, 1, 2, 3]]),
                                                 ("wall", wall, [[0, 1, 2], [0, 2, 3], [3, 2, 4]])]):
            f = f"meshes_{k:06d}_{b}.vtu"
            write_vtu(folder / f, pts, cell_data=[("body", np.full(len(faces), b, np.int64))],
                      cells=mesh_cells(faces), time=t, name=name, zlib_block_size=zb)
            meshes.append((t, b, name, f))
    write_pvd(folder / "particles.pvd", particles)
    write_pvd(folder / "meshes.pvd", meshes)
    return folder


def render(args, env=None, **kw):
    return subprocess.run([sys.executable, str(RENDER), *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=300, **kw)


def no_third_party_env(tmp_path):
    """An environment in which importing vtk, meshio or pyvista fails: the renderer must not need them."""
    block = tmp_path / "blockers"
    block.mkdir(exist_ok=True)
    for m in ("vtk", "vtkmodules", "meshio", "pyvista"):
        (block / f"{m}.py").write_text("raise ImportError('blocked by the test')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(block) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_render_frames(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import colormaps
    from matplotlib.image import imread

    run = make_run(tmp_path / "run")
    out = tmp_path / "frames"
    r = render([run, "--view", "z", "--size", "320x240", "--out", out], env=no_third_party_env(tmp_path))
    assert r.returncode == 0, r.stderr
    pngs = sorted(out.glob("frame_*.png"))
    assert [p.name for p in pngs] == ["frame_000000.png", "frame_000001.png"]
    for p in pngs:
        assert str(p) in r.stdout
    view = json.loads((out / "view.json").read_text())
    assert view["vmax"] == pytest.approx(BIG_SPEED)  # 99th percentile of 100 speeds, 2 of them BIG_SPEED
    x0, y0, x1, y1 = view["axes_box_px"]  # pixels, from the image's bottom-left corner
    (xa, xb), (ya, yb) = view["xlim"], view["ylim"]
    sx, sy = (x1 - x0) / (xb - xa), (y1 - y0) / (yb - ya)  # pixels per data unit
    assert sx == pytest.approx(sy, rel=0.02)  # equal aspect: spheres are round
    # The limits hold the whole first snapshot: the floor square and the wall (|x|, |y| <= 4).
    assert xa < -4 and xb > 4 and ya < -4 and yb > 4
    top = np.array(colormaps["viridis"](1.0)[:3])
    for p in pngs:
        img = imread(p)
        assert img.shape[:2] == (240, 320)
        rgb = img[..., :3]
        background = rgb[0, 0]
        differs = np.abs(rgb - background).max(axis=2) > 0.25
        assert differs.mean() > 0.02, "the frame is (nearly) uniform"
        # The big sphere: the pixels of the top colour inside the axes box (the colour bar, which
        # also ends in that colour, is outside it).
        rows, cols = np.mgrid[0:240, 0:320]
        inside = (cols >= x0) & (cols < x1) & (240 - rows > y0) & (240 - rows <= y1)
        yellow = inside & (np.abs(rgb - top).max(axis=2) < 0.12)
        expected = np.pi * BIG_RADIUS ** 2 * sx * sy
        # expected is about 1100 px (radius ~19 px). Antialiasing and the sphere's darker rim take
        # a ring of ~1-2 px off the counted disc (10-20 % of its area); nothing else overlaps it
        # (the floor is behind it, the small spheres and the wall are away from the centre). A
        # factor 1.5 either way tolerates that but catches a radius drawn as a diameter (x4), in
        # points instead of data units, or a scale off by more than ~22 %.
        assert expected / 1.5 < yellow.sum() < expected * 1.5, (yellow.sum(), expected)
        # ... centred on the projection of the origin, and round.
        cx, cy = x0 + (0 - xa) * sx, 240 - (y0 + (0 - ya) * sy)
        r_, c_ = np.nonzero(yellow)
        assert abs(c_.mean() + 0.5 - cx) < 2 and abs(r_.mean() + 0.5 - cy) < 2
        assert abs((c_.max() - c_.min()) - (r_.max() - r_.min())) <= 2
    # The small spheres are coloured by speed too: several distinct colours besides the top one.
    assert len(np.unique((imread(pngs[0])[..., :3] * 8).astype(int).reshape(-1, 3), axis=0)) > 8


def test_render_options(tmp_path):
    from matplotlib.image import imread

    run = make_run(tmp_path / "run")
    r = render([run, "--last", "--size", "320x240", "--view", "iso"])
    assert r.returncode == 0, r.stderr
    assert [p.name for p in sorted((run / "frames").glob("*.png"))] == ["frame_000000.png"]
    assert "t = 0.250 s" in r.stdout
    assert imread(run / "frames" / "frame_000000.png").shape[:2] == (240, 320)
    # --every 2 keeps snapshots 0, 2, ...; a run folder given as its particles.pvd works too.
    r = render([run / "particles.pvd", "--every", "2", "--size", "200x100", "--view", "x"])
    assert r.returncode == 0, r.stderr
    assert imread(run / "frames" / "frame_000000.png").shape[:2] == (100, 200)
    # Without ffmpeg on PATH, --mp4 says so and still succeeds with the PNGs.
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    env = dict(os.environ, PATH=str(empty))
    r = render([run, "--size", "160x120", "--mp4", "--view", "y", "--vmax", "1"], env=env)
    assert r.returncode == 0, r.stderr
    assert "ffmpeg" in r.stderr
    assert len(list((run / "frames").glob("frame_*.png"))) == 2
    assert not (run / "frames" / "movie.mp4").exists()


def test_render_errors(tmp_path):
    missing = tmp_path / "no_such_run"
    r = render([missing])
    assert r.returncode == 2
    assert str(missing) in r.stderr
    empty = tmp_path / "empty_run"
    empty.mkdir()
    r = render([empty])
    assert r.returncode == 2
    assert "particles.pvd" in r.stderr and str(empty) in r.stderr
    run = make_run(tmp_path / "run")
    (run / "particles_000001.vtu").write_bytes((run / "particles_000001.vtu").read_bytes()[:300])
    r = render([run, "--size", "160x120"])
    assert r.returncode == 1
    assert "particles_000001.vtu" in r.stderr and "Traceback" not in r.stderr
    r = render([run, "--size", "10"])
    assert r.returncode == 2


def test_render_joins_a_run_and_its_restarts_and_frames_them_all(tmp_path):
    """A run, its restart from t = 0.25 (which repeats that snapshot, with another count of
    spheres: the later part's is drawn) and a sphere far out in the last snapshot only: one
    sequence of three frames whose limits hold that sphere."""
    first = make_run(tmp_path / "run", n_small=49, times=(0.0, 0.25))
    second = make_run(tmp_path / "run_from_step_5", n_small=30, times=(0.25, 0.5), last_extra=[9.0, 0.0, 0.0])
    out = tmp_path / "frames"
    r = render([first, second, "--view", "z", "--size", "320x240", "--out", out])
    assert r.returncode == 0, r.stderr
    assert [p.name for p in sorted(out.glob("frame_*.png"))] == ["frame_000000.png", "frame_000001.png",
                                                                 "frame_000002.png"]
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("[")]
    assert ["t = 0.000 s, spheres: 50" in lines[0], "t = 0.250 s, spheres: 31" in lines[1],
            "t = 0.500 s, spheres: 32" in lines[2]] == [True] * 3, lines
    view = json.loads((out / "view.json").read_text())
    assert view["xlim"][1] > 9.15  # the far sphere, seen only at the end, is inside the frame
    # Without --out the frames go to the first folder's frames/.
    assert render([first, second, "--last", "--size", "160x120"]).returncode == 0
    assert (first / "frames" / "frame_000000.png").exists()
    # Out of order, or a folder twice: refused, naming them.
    r = render([second, first, "--size", "160x120"])
    assert r.returncode == 2
    assert f"{first} starts at t = 0 s, before {second} (t = 0.25 s)" in r.stderr
    r = render([first, first / "particles.pvd", "--size", "160x120"])
    assert r.returncode == 2 and "given twice" in r.stderr
    r = render([first, tmp_path / "missing"])
    assert r.returncode == 2 and "missing" in r.stderr


def test_run_parts_join_keeps_the_later_part_where_parts_overlap():
    import dem_run_parts
    at = lambda item: item[0]  # noqa: E731
    first = [(0.0, "a"), (0.1, "a"), (0.2, "a"), (0.3, "a")]  # ran past its checkpoint at 0.2
    second = [(0.2, "b"), (0.3, "b"), (0.4, "b")]
    third = [(0.4, "c"), (0.5, "c")]
    assert dem_run_parts.join([first, second, third], at) == [
        (0.0, "a"), (0.1, "a"), (0.2, "b"), (0.3, "b"), (0.4, "c"), (0.5, "c")]
    # A part without the file, or with none of its rows, is passed over.
    assert dem_run_parts.join([first, None, [], third], at) == first + third
    assert dem_run_parts.join([None, None], at) == []
    # Where the parts' starts are known, each part is cut where the next starts, also where that
    # one has no item of this series (events: a restart that has removed nothing yet).
    assert dem_run_parts.join([first, None], at, starts=[0.0, 0.15]) == [(0.0, "a"), (0.1, "a")]
    assert dem_run_parts.join([first, [], third], at, starts=[0.0, 0.25, None]) == first[:3] + third
    with pytest.raises(dem_run_parts.OutOfOrder, match=r"second .*t = 0.2 s.*before first"):
        dem_run_parts.join([third, second], at, names=["first", "second"])


# ------------------------------------------------------------------------------------------------
# tools/dem-report
# ------------------------------------------------------------------------------------------------

REPORT = TOOLS / "dem-report"


def _report(*args):
    return subprocess.run([sys.executable, str(REPORT), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "MPLBACKEND": "Agg"})


def test_report_draws_what_the_run_wrote_and_says_what_it_did_not(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    t = np.arange(0, 0.1, 0.01)
    (run / "bodies.csv").write_text("t,body,fx,fy,fz,tx,ty,tz,power\n" + "".join(
        f"{x},blade,0,0,0,0,0,{-0.2 - x},{10 * (0.2 + x)}\n{x},\"drum, outer\",0,0,0,0,0,0,0\n" for x in t))
    (run / "diagnostics.csv").write_text(
        "t,particles,inserted,removed,kinetic_translational,kinetic_rotational,mean_speed,max_speed,"
        "touching_pairs,mesh_contacts,coordination,max_overlap\n" + "".join(
            f"{x},100,0,0,{1e-3 + x},{1e-4},0.1,0.2,200,10,4.0,0.01\n" for x in t))
    (run / "mixing.csv").write_text(
        "t,tag,fraction,cells,particles,variance,variance_segregated,variance_random,lacey,rsd,contacts,"
        "unlike_contacts,contact_index\n" + "".join(
            f"{x},{k},0.5,10,100,0.1,0.25,0.01,{x * 5},0.6,200,20,{x * 3}\n" for x in t for k in (0, 1)))
    (run / "summary.json").write_text(json.dumps({"scene": "s", "status": "completed", "particles": 100}))
    out = tmp_path / "report"
    (out).mkdir()
    (out / "residence.png").write_bytes(b"stale")  # an earlier report's plot of data this run lacks
    r = _report(run, "--out", out)
    assert r.returncode == 0, r.stderr
    for name in ("torque_power.png", "energy_coordination.png", "mixing.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
    assert not (out / "residence.png").exists()
    page = (out / "index.html").read_text()
    assert "<img src='mixing.png'" in page and "residence.png: no residence.csv" in page
    assert "<td>scene</td><td>s</td>" in page


def test_report_joins_a_run_and_its_restart(tmp_path):
    """Two parts: the first ran past the checkpoint at 0.05 s its restart continued from; the report
    joins their rows by time (the later part's where they overlap), names each part's own file when
    a value is bad, sums the wall time of the parts with a summary.json, and refuses them out of order."""
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader("dem_report", str(REPORT))
    report = importlib.util.module_from_spec(importlib.util.spec_from_loader("dem_report", loader))
    loader.exec_module(report)
    header = ("t,particles,inserted,removed,kinetic_translational,kinetic_rotational,mean_speed,max_speed,"
              "touching_pairs,mesh_contacts,coordination,max_overlap\n")
    first, second = tmp_path / "run", tmp_path / "run_from_step_5000"
    first.mkdir()
    second.mkdir()
    (first / "diagnostics.csv").write_text(header + "".join(
        f"{x:.2f},100,0,0,1,0,0.1,0.2,200,10,4.0,0.01\n" for x in np.arange(0, 0.08, 0.01)))
    (second / "diagnostics.csv").write_text(header + "".join(
        f"{x:.2f},100,0,0,2,0,0.1,0.2,200,10,4.0,0.01\n" for x in np.arange(0.05, 0.1, 0.01)))
    # residence.csv: removals at 0.03 and, past the checkpoint, 0.06 in the first part; none yet in
    # the second, which starts at 0.05 (its first diagnostics row): the 0.06 removal is not the run's
    (first / "residence.csv").write_text("t,outlet,id,inserted,residence\n0.03,out,7,0,0.03\n0.06,out,8,0,0.06\n")
    (second / "residence.csv").write_text("t,outlet,id,inserted,residence\n")
    run = report.Parts([str(first), str(second)], [report.dem_run_parts.part_start(str(f)) for f in (first, second)])
    assert run.starts == [0.0, 0.05]
    rows, path = report.joined_csv(run, "diagnostics.csv")
    assert [(r["t"], r["kinetic_translational"]) for r in rows] == (
        [(f"{x:.2f}", "1") for x in (0, 0.01, 0.02, 0.03, 0.04)] + [(f"{x:.2f}", "2") for x in (0.05, 0.06, 0.07, 0.08, 0.09)])
    assert path == str(second / "diagnostics.csv")
    rows, _ = report.joined_csv(run, "residence.csv")
    assert [r["id"] for r in rows] == ["7"]
    (first / "summary.json").write_text(json.dumps({"scene": "s", "steps": 4000, "wall_seconds": 30.0}))
    (second / "summary.json").write_text(json.dumps({"scene": "s", "steps": 9000, "wall_seconds": 12.5,
                                                     "particle_steps_per_second": 7.0}))
    r = _report(first, second)
    assert r.returncode == 0, r.stderr
    page = (first / "report" / "index.html").read_text()
    assert "<td>steps</td><td>9000</td>" in page
    assert "<td>wall_seconds (the 2 of 2 parts with a summary.json)</td><td>42.5</td>" in page
    assert "<td>parts</td><td>run, run_from_step_5000</td>" in page
    assert "energy_coordination.png" in page and "and 1 restart(s)" in page
    r = _report(second, first, "--out", tmp_path / "refused")
    assert r.returncode == 2 and f"{first} starts at t = 0 s, before {second} (t = 0.05 s)" in r.stderr
    assert not (tmp_path / "refused").exists()  # (refused before anything is drawn)
    assert _report(first, first).returncode == 2
    (first / "diagnostics.csv").write_text(header + "0.00,100,0,0,abc,0,0.1,0.2,200,10,4.0,0.01\n")
    r = _report(first, second)
    assert r.returncode == 1 and str(first / "diagnostics.csv") in r.stderr


def test_report_refuses_a_missing_folder_and_names_an_unreadable_file(tmp_path):
    assert _report(tmp_path / "nowhere").returncode == 2
    run = tmp_path / "run"
    run.mkdir()
    (run / "diagnostics.csv").write_text("t,kinetic_translational\n0.0,abc\n")
    r = _report(run)
    assert r.returncode == 1 and "diagnostics.csv" in r.stderr


@pytest.mark.skipif(not os.environ.get("DEM_BINARY"), reason="needs the dem binary (DEM_BINARY; ctest sets it)")
def test_report_draws_a_slice_of_the_fields_a_run_wrote(tmp_path):
    """A short run of the demo with its coarse-grained fields: the report draws their slice."""
    run = tmp_path / "demo"
    r = subprocess.run([os.environ["DEM_BINARY"], "run", str(ROOT / "scenes/demo/demo.yaml"), "--out", str(run), "-q",
                        "--device", "cpu", "--set", "simulation.end_time=0.02", "--set", "fills.0.count=200"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    vti = dem_vtu.read_vti(sorted(run.glob("fields_*.vti"))[-1])
    assert vti.cell_data["velocity"].shape == (vti.cells[2], vti.cells[1], vti.cells[0], 3)
    assert vti.cell_data["stress"].shape == (vti.cells[2], vti.cells[1], vti.cells[0], 9)  # (drawn as the pressure)
    r = _report(run, "--slice", "z")
    assert r.returncode == 0, r.stderr
    assert (run / "report" / "fields.png").read_bytes()[:4] == b"\x89PNG"
    assert "<img src='fields.png'" in (run / "report" / "index.html").read_text()
