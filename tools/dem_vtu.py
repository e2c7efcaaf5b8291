"""Reader for the engine's ParaView output: particles.pvd / meshes.pvd collections and their .vtu files.

Plain Python 3 with numpy; no VTK needed. It reads what host/app/io/vtk_writer.cpp writes (and what
VTK's own vtkXMLUnstructuredGridWriter writes in the same mode):

* .pvd: <VTKFile type="Collection"><Collection><DataSet timestep="T" group="" part="P" file="F"
  [name="N"]/>... with F relative to the .pvd's folder. particles.pvd has one DataSet per time,
  meshes.pvd one per mesh body per time (part = body index, name = body name).
* .vtu: a VTK XML UnstructuredGrid with one Piece whose DataArrays are format="appended" blocks
  of one <AppendedData encoding="raw"> section (the data starts after the '_' that follows the
  start tag; offsets count from the byte after the '_'), byte_order LittleEndian (BigEndian is
  read too), header_type UInt64 (or UInt32). Uncompressed, a block is a byte count then the
  values; with compressor="vtkZLibDataCompressor" it is the header [blocks, block size, size of
  the last block (0: full), compressed size of each block] then the zlib streams. Small arrays
  (FieldData: TimeValue, a body name as UInt8 bytes) are written inline as format="ascii".

    import dem_vtu
    for time, entries in dem_vtu.group_by_time(dem_vtu.read_pvd("out/demo/particles.pvd")):
        vtu = dem_vtu.read_vtu(entries[0].file)
        vtu.points                   # (n, 3) float64
        vtu.point_data["velocity"]   # (n, 3); vtu.point_data["radius"]: (n,)
        vtu.field_data["TimeValue"]  # array([t])
    mesh = dem_vtu.read_vtu(".../meshes_000000_0.vtu")
    mesh.polygons()                  # list of vertex-index arrays, one per polygon
    mesh.field_text("name")          # the body name

Malformed or truncated files raise ValueError with the file's path in the message; a missing
file raises the usual OSError (FileNotFoundError).
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
import zlib
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

import numpy as np

__all__ = ["PvdEntry", "Vtu", "read_pvd", "group_by_time", "read_vtu", "VTK_VERTEX", "VTK_POLYGON"]

VTK_VERTEX, VTK_TRIANGLE, VTK_POLYGON, VTK_QUAD = 1, 5, 7, 9  # VTK cell type ids
_FLAT_POLYGON_TYPES = (VTK_TRIANGLE, VTK_POLYGON, VTK_QUAD)

# VTK type name -> numpy type (byte order added per file).
_TYPES = {
    "Float64": "f8", "Float32": "f4",
    "Int64": "i8", "Int32": "i4", "Int16": "i2", "Int8": "i1",
    "UInt64": "u8", "UInt32": "u4", "UInt16": "u2", "UInt8": "u1",
}


class PvdEntry(NamedTuple):
    """One DataSet of a .pvd: simulated time (s), part index, name (None if absent) and the
    absolute path of its .vtu file."""
    time: float
    part: int
    name: Optional[str]
    file: str


def read_pvd(path: str) -> List[PvdEntry]:
    """The DataSets of a ParaView collection, sorted by (time, part) (stable: file order within
    equal keys). File paths are resolved against the .pvd's folder and made absolute."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise ValueError(f"{path}: malformed or truncated .pvd file: {e}") from None
    if root.tag != "VTKFile" or root.get("type") != "Collection":
        raise ValueError(f"{path}: not a VTK Collection (.pvd) file")
    collection = root.find("Collection")
    if collection is None:
        raise ValueError(f"{path}: no <Collection> element")
    folder = os.path.dirname(os.path.abspath(path))
    entries = []
    for k, ds in enumerate(collection.findall("DataSet")):
        try:
            time = float(ds.attrib["timestep"])
            file = ds.attrib["file"]
            part = int(ds.get("part") or 0)
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: DataSet {k} has a missing or bad attribute: {e}") from None
        name = ds.get("name") or None
        entries.append(PvdEntry(time, part, name, os.path.normpath(os.path.join(folder, file))))
    entries.sort(key=lambda e: (e.time, e.part))
    return entries


def group_by_time(entries: Iterable[PvdEntry]) -> List[Tuple[float, List[PvdEntry]]]:
    """[(time, [entries at that time, by part]), ...] in increasing time."""
    groups: Dict[float, List[PvdEntry]] = {}
    for e in entries:
        groups.setdefault(e.time, []).append(e)
    return [(t, sorted(groups[t], key=lambda e: e.part)) for t in sorted(groups)]


class Vtu:
    """The contents of one .vtu file. Also readable as a dict (vtu["points"])."""

    def __init__(self, path, points, point_data, cell_data, field_data, connectivity, offsets, types):
        self.path = path
        self.points = points            # (n, 3) float
        self.point_data = point_data    # name -> (n,) or (n, components)
        self.cell_data = cell_data      # name -> (cells,) or (cells, components)
        self.field_data = field_data    # name -> (tuples,) or (tuples, components)
        self.connectivity = connectivity  # int64, the point indices of all cells back to back
        self.offsets = offsets          # int64, the end of each cell in connectivity
        self.types = types              # uint8, VTK cell type of each cell

    def __getitem__(self, key):
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return ("points", "point_data", "cell_data", "field_data", "connectivity", "offsets", "types")

    @property
    def n_points(self) -> int:
        return len(self.points)

    @property
    def n_cells(self) -> int:
        return len(self.offsets)

    def cells(self) -> List[np.ndarray]:
        """The point indices of every cell, one array per cell."""
        return np.split(self.connectivity, self.offsets[:-1]) if len(self.offsets) else []

    def polygons(self) -> List[np.ndarray]:
        """The point indices of every flat polygon cell (polygon, triangle or quad), in order."""
        return [c for c, t in zip(self.cells(), self.types) if t in _FLAT_POLYGON_TYPES]

    def field_text(self, name: str) -> Optional[str]:
        """A field-data array of bytes (as the engine writes a body "name") as text; None if absent."""
        a = self.field_data.get(name)
        if a is None:
            return None
        return bytes(np.asarray(a, dtype=np.uint8).ravel()).decode("utf-8", errors="replace")

    def __repr__(self):
        return (f"Vtu({self.path!r}, {self.n_points} points, {self.n_cells} cells, point_data="
                f"{list(self.point_data)}, cell_data={list(self.cell_data)}, field_data={list(self.field_data)})")


class _Layout:
    """What the VTKFile element says about the binary data, and where the appended data lies."""

    def __init__(self, path, root, raw):
        self.path = path
        order = root.get("byte_order", "LittleEndian")
        if order not in ("LittleEndian", "BigEndian"):
            raise ValueError(f"{path}: unknown byte_order {order!r}")
        self.endian = "<" if order == "LittleEndian" else ">"
        header_type = root.get("header_type", "UInt32")
        if header_type not in ("UInt32", "UInt64"):
            raise ValueError(f"{path}: unsupported header_type {header_type!r}")
        self.header = np.dtype(self.endian + _TYPES[header_type])
        compressor = root.get("compressor", "")
        if compressor not in ("", "vtkZLibDataCompressor"):
            raise ValueError(f"{path}: unsupported compressor {compressor!r} (only vtkZLibDataCompressor)")
        self.zlib = compressor == "vtkZLibDataCompressor"
        self.raw = raw  # memoryview of the appended data, or None

    def _need(self, end, what):
        if end > len(self.raw):
            raise ValueError(f"{self.path}: truncated file: {what} runs past the end of the appended data "
                             f"({end} > {len(self.raw)} bytes)")

    def _ints(self, offset, count, what):
        self._need(offset + count * self.header.itemsize, what)
        return [int(x) for x in np.frombuffer(self.raw, self.header, count, offset)]

    def appended_bytes(self, offset, what):
        """The uncompressed bytes of the block at offset."""
        if self.raw is None:
            raise ValueError(f"{self.path}: {what} is format=\"appended\" but the file has no <AppendedData>")
        if offset < 0:
            raise ValueError(f"{self.path}: {what} has a negative offset")
        hs = self.header.itemsize
        if not self.zlib:
            (n,) = self._ints(offset, 1, what)
            self._need(offset + hs + n, what)
            return self.raw[offset + hs:offset + hs + n]
        blocks, block_size, last_size = self._ints(offset, 3, what)
        sizes = self._ints(offset + 3 * hs, blocks, what)
        pos = offset + (3 + blocks) * hs
        self._need(pos + sum(sizes), what)
        out = []
        for b, size in enumerate(sizes):
            expected = last_size if (b == blocks - 1 and last_size != 0) else block_size
            try:
                chunk = zlib.decompress(self.raw[pos:pos + size])
            except zlib.error as e:
                raise ValueError(f"{self.path}: {what}: zlib block {b} is corrupt: {e}") from None
            if len(chunk) != expected:
                raise ValueError(f"{self.path}: {what}: zlib block {b} holds {len(chunk)} bytes, "
                                 f"the header says {expected}")
            out.append(chunk)
            pos += size
        return b"".join(out)


def _data_array(layout: _Layout, el, tuples: Optional[int], what: str) -> np.ndarray:
    """Decodes one <DataArray>; tuples is the expected number of tuples (None: any)."""
    name = el.get("Name")
    what = f"{what} array {name!r}" if name else f"{what} array"
    vtk_type = el.get("type")
    if vtk_type not in _TYPES:
        raise ValueError(f"{layout.path}: {what} has unsupported type {vtk_type!r}")
    dtype = np.dtype(layout.endian + _TYPES[vtk_type])
    try:
        components = int(el.get("NumberOfComponents", "1"))
        if tuples is None and el.get("NumberOfTuples") is not None:
            tuples = int(el.get("NumberOfTuples"))
    except ValueError:
        raise ValueError(f"{layout.path}: {what} has a bad NumberOfComponents/NumberOfTuples") from None
    if components < 1:
        raise ValueError(f"{layout.path}: {what} has NumberOfComponents={components}")
    fmt = el.get("format", "ascii")
    if fmt == "appended":
        try:
            offset = int(el.attrib["offset"])
        except (KeyError, ValueError):
            raise ValueError(f"{layout.path}: {what} has no valid offset") from None
        buf = layout.appended_bytes(offset, what)
        if len(buf) % dtype.itemsize:
            raise ValueError(f"{layout.path}: {what} holds {len(buf)} bytes, not a whole number of {vtk_type}")
        values = np.frombuffer(buf, dtype).astype(dtype.newbyteorder("="))
    elif fmt == "ascii":
        tokens = (el.text or "").split()
        try:
            if dtype.kind == "f":
                values = np.array([float(s) for s in tokens], dtype=dtype.newbyteorder("="))
            else:
                values = np.array([int(s) for s in tokens], dtype=dtype.newbyteorder("="))
        except (ValueError, OverflowError):
            raise ValueError(f"{layout.path}: {what} has a value that is not a {vtk_type}") from None
    else:
        raise ValueError(f"{layout.path}: {what} has unsupported format {fmt!r} (appended or ascii)")
    if tuples is None:
        if len(values) % components:
            raise ValueError(f"{layout.path}: {what} holds {len(values)} values, not a multiple of "
                             f"{components} components")
        tuples = len(values) // components
    if len(values) != tuples * components:
        raise ValueError(f"{layout.path}: {what} holds {len(values)} values; expected {tuples} tuples of "
                         f"{components} components")
    return values.reshape(tuples, components) if components > 1 else values


def _arrays(layout, section, tuples, what, wanted=None):
    out = {}
    if section is None:
        return out
    for k, el in enumerate(section.findall("DataArray")):
        name = el.get("Name") or f"array{k}"
        if wanted is not None and name not in wanted:
            continue
        out[name] = _data_array(layout, el, tuples, what)
    return out


def _open_vtk(path, kind):
    """The XML root of a VTK XML file of type kind ("UnstructuredGrid", "ImageData") and the layout
    that decodes its arrays."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()

    # The XML header ends where the appended data begins; that data is not XML and is parsed here
    # by hand. The header plus a closing </VTKFile> is a well-formed document.
    start = data.find(b"<AppendedData")
    raw = None
    if start < 0:
        xml = data
    else:
        xml = data[:start] + b"</VTKFile>"
        tag_end = data.find(b">", start)
        if tag_end < 0:
            raise ValueError(f"{path}: truncated file: the <AppendedData> tag is cut off")
        encoding = re.search(rb'encoding\s*=\s*"([^"]*)"', data[start:tag_end])
        if encoding is None or encoding.group(1) != b"raw":
            enc = encoding.group(1).decode("ascii", "replace") if encoding else "none"
            raise ValueError(f"{path}: unsupported AppendedData encoding {enc!r} (only raw)")
        underscore = data.find(b"_", tag_end)
        if underscore < 0 or data[tag_end + 1:underscore].strip():
            raise ValueError(f"{path}: truncated or malformed file: no '_' after <AppendedData>")
        end = data.rfind(b"</AppendedData>")
        if end <= underscore:
            raise ValueError(f"{path}: truncated file: no </AppendedData> after the appended data")
        raw = memoryview(data)[underscore + 1:end]
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as e:
        raise ValueError(f"{path}: malformed or truncated VTK file: {e}") from None
    if root.tag != "VTKFile" or root.get("type") != kind:
        raise ValueError(f"{path}: not a VTK {kind} file")
    return root, _Layout(path, root, raw)


def read_vtu(path: str, arrays: Optional[Iterable[str]] = None) -> Vtu:
    """Reads a .vtu file. arrays: names of the point/cell data arrays to decode (None: all);
    the points, the cells and the field data are always read."""
    path = os.fspath(path)
    wanted = None if arrays is None else set(arrays)
    root, layout = _open_vtk(path, "UnstructuredGrid")
    grid = root.find("UnstructuredGrid")
    if grid is None:
        raise ValueError(f"{path}: no <UnstructuredGrid> element")
    pieces = grid.findall("Piece")
    if len(pieces) != 1:
        raise ValueError(f"{path}: {len(pieces)} <Piece> elements; exactly one is supported")
    piece = pieces[0]
    try:
        n_points = int(piece.attrib["NumberOfPoints"])
        n_cells = int(piece.attrib["NumberOfCells"])
    except (KeyError, ValueError):
        raise ValueError(f"{path}: <Piece> lacks a valid NumberOfPoints/NumberOfCells") from None

    field_data = _arrays(layout, grid.find("FieldData"), None, "FieldData")
    point_data = _arrays(layout, piece.find("PointData"), n_points, "PointData", wanted)
    cell_data = _arrays(layout, piece.find("CellData"), n_cells, "CellData", wanted)

    point_arrays = piece.find("Points")
    if point_arrays is None or not point_arrays.findall("DataArray"):
        if n_points:
            raise ValueError(f"{path}: no <Points> array")
        points = np.zeros((0, 3))
    else:
        points = _data_array(layout, point_arrays.findall("DataArray")[0], n_points, "Points")
        if points.ndim != 2 or points.shape[1] != 3:
            raise ValueError(f"{path}: the Points array does not have 3 components")

    cell_section = piece.find("Cells")
    cells = {} if cell_section is None else {el.get("Name"): el for el in cell_section.findall("DataArray")}
    if n_cells:
        missing = [k for k in ("connectivity", "offsets", "types") if k not in cells]
        if missing:
            raise ValueError(f"{path}: <Cells> lacks {', '.join(missing)}")
    if "connectivity" in cells:
        connectivity = _data_array(layout, cells["connectivity"], None, "Cells").astype(np.int64, copy=False)
        offsets = _data_array(layout, cells["offsets"], n_cells, "Cells").astype(np.int64, copy=False)
        types = _data_array(layout, cells["types"], n_cells, "Cells").astype(np.uint8, copy=False)
    else:
        connectivity = offsets = np.zeros(0, np.int64)
        types = np.zeros(0, np.uint8)
    if connectivity.ndim != 1 or offsets.ndim != 1 or types.ndim != 1:
        raise ValueError(f"{path}: cell arrays must have one component")
    if n_cells:
        if np.any(np.diff(offsets) < 0) or offsets[0] < 0 or offsets[-1] != len(connectivity):
            raise ValueError(f"{path}: cell offsets are not increasing up to the connectivity's "
                             f"length {len(connectivity)}")
    if len(connectivity) and (connectivity.min() < 0 or connectivity.max() >= n_points):
        raise ValueError(f"{path}: cell connectivity refers to points outside 0..{n_points - 1}")
    return Vtu(path, points, point_data, cell_data, field_data, connectivity, offsets, types)


class Vti:
    """The contents of one .vti file of cells (coarse-grained fields): the grid and its cell data,
    each array shaped (nz, ny, nx) or (nz, ny, nx, components)."""

    def __init__(self, path, origin, spacing, cells, cell_data, field_data):
        self.path = path
        self.origin = origin        # (3,) m, the grid's corner
        self.spacing = spacing      # (3,) m, the cell size
        self.cells = cells          # (nx, ny, nz)
        self.cell_data = cell_data  # name -> array
        self.field_data = field_data

    def centres(self, axis: int) -> np.ndarray:
        """The cell centres along one axis (0 x, 1 y, 2 z), m."""
        return self.origin[axis] + (np.arange(self.cells[axis]) + 0.5) * self.spacing[axis]


def read_vti(path: str) -> Vti:
    """Reads a .vti file of cell data (the engine's fields_NNNNNN.vti)."""
    path = os.fspath(path)
    root, layout = _open_vtk(path, "ImageData")
    image = root.find("ImageData")
    if image is None:
        raise ValueError(f"{path}: no <ImageData> element")
    try:
        extent = [int(v) for v in image.attrib["WholeExtent"].split()]
        origin = np.array([float(v) for v in image.attrib["Origin"].split()])
        spacing = np.array([float(v) for v in image.attrib["Spacing"].split()])
    except (KeyError, ValueError):
        raise ValueError(f"{path}: <ImageData> lacks a valid WholeExtent, Origin or Spacing") from None
    cells = tuple(extent[2 * k + 1] - extent[2 * k] for k in range(3))
    pieces = image.findall("Piece")
    if len(pieces) != 1:
        raise ValueError(f"{path}: {len(pieces)} <Piece> elements; exactly one is supported")
    n = cells[0] * cells[1] * cells[2]
    data = _arrays(layout, pieces[0].find("CellData"), n, "CellData")
    shaped = {k: v.reshape((cells[2], cells[1], cells[0]) + v.shape[1:]) for k, v in data.items()}
    return Vti(path, origin, spacing, cells, shaped, _arrays(layout, image.find("FieldData"), None, "FieldData"))
