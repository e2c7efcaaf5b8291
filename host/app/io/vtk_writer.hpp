// ParaView output: VTK XML UnstructuredGrid files (.vtu) for particles and mesh snapshots,
// ImageData files (.vti) for fields on a grid, and a ParaView collection (.pvd) that ties the
// snapshots to simulation times.
//
// Format: VTK XML version 1.0, all arrays in one <AppendedData encoding="raw"> block after the
// XML, little endian. Uncompressed, each array is a UInt64 byte count followed by its raw values;
// with zlib (VtuOptions::zlib, compressor="vtkZLibDataCompressor"), each array is a UInt64 header
// [blocks, block size, size of the last block (0: full), compressed size of each block] followed
// by the blocks, each compressed on its own, as VTK's own writer does. Floating-point arrays are
// Float64; ids, connectivity and offsets are Int64; cell types are UInt8. Small per-file values
// (TimeValue, a body name) are written inline as FieldData. Depends on zlib only.
//
// Every file is first written to "<path>.tmp" and then renamed onto <path>, so a crash or a full
// disk never leaves a half-written file under the final name (rename is atomic on POSIX).
// I/O failures throw std::runtime_error naming the path; arrays whose tuple count does not match
// the points/cells throw std::invalid_argument naming the array.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace dem::host {

// A floating-point data array: tuples * components values, interleaved per tuple
// (x0 y0 z0 x1 y1 z1 ... for a 3-vector). Not owned: data must stay valid during the write call.
// Name the units in the name where it helps ParaView users, e.g. "velocity_m_s".
struct VtkArray {
  std::string name;
  int components;      // 1 scalar, 3 vector, 9 tensor (row-major)
  const double* data;  // tuples * components values
  std::size_t tuples;
};

// The same for integer arrays (particle ids, material ids, flags), written as Int64. A separate
// struct rather than a std::variant keeps call sites plain aggregate initialisations.
struct VtkIntArray {
  std::string name;
  int components;
  const std::int64_t* data;
  std::size_t tuples;
};

// What a file says beside its arrays.
struct VtuOptions {
  // Simulated time (s) of the snapshot, written as the TimeValue field data that ParaView reads as
  // the time of a file opened without its .pvd; NaN: none.
  double time = std::numeric_limits<double>::quiet_NaN();
  bool zlib = false;        // compress the appended arrays
  std::string global_ids;   // the integer point array to mark as GlobalIds (ParaView's particle identity)
  std::string name;         // written as field data "name" (UInt8 bytes of the text); empty: none
};

// Particles: an UnstructuredGrid of n points, one VTK_VERTEX cell per point, so ParaView can
// render them with the Point Gaussian representation or Glyph filter. xyz holds 3n interleaved
// coordinates (m). Every array in point_data and int_point_data must have n tuples.
void write_vtu_points(const std::string& path, std::size_t n, const double* xyz,
                      const std::vector<VtkArray>& point_data,
                      const std::vector<VtkIntArray>& int_point_data, const VtuOptions& options = {});

// A surface mesh snapshot: one VTK_POLYGON cell per face (quads and N-gons as they are), in the
// CSR layout of PolygonMesh (face_offsets starts with 0 and has faces + 1 entries). vertices in m.
// Every array in cell_data and int_cell_data must have one tuple per face.
void write_vtu_polygons(const std::string& path, const std::vector<std::array<double, 3>>& vertices,
                        const std::vector<std::int32_t>& face_offsets,
                        const std::vector<std::int32_t>& face_vertices,
                        const std::vector<VtkArray>& cell_data,
                        const std::vector<VtkIntArray>& int_cell_data = {}, const VtuOptions& options = {});

// A regular grid of cells (coarse-grained fields): VTK XML ImageData of cells[0] x cells[1] x
// cells[2] cells of size spacing from origin (m), every array cell data with one tuple per cell,
// x fastest, then y, then z.
void write_vti_cells(const std::string& path, const std::array<std::int32_t, 3>& cells,
                     const std::array<double, 3>& origin, const std::array<double, 3>& spacing,
                     const std::vector<VtkArray>& cell_data, const VtuOptions& options = {});

// Writes a ParaView collection (.pvd) listing snapshots with their times. Each add() rewrites the
// whole file (tmp + rename), so the .pvd on disk is always complete and well-formed up to the last
// snapshot, even if the run is killed. Nothing is written before the first add().
class PvdWriter {
 public:
  explicit PvdWriter(std::string pvd_path);
  // time in s; relative_vtu_file relative to the .pvd's directory, as ParaView resolves it.
  void add(double time, const std::string& relative_vtu_file) { add(time, {{relative_vtu_file, ""}}); }
  // Several parts at one time (one file per mesh body), each with a name that ParaView shows as
  // the block's name (the DataSet "name" attribute; "" for none).
  struct Part {
    std::string file, name;
  };
  void add(double time, const std::vector<Part>& parts);

 private:
  std::string path_;
  std::vector<std::pair<double, std::vector<Part>>> entries_;  // (time s, parts)
};

}  // namespace dem::host
