// VTK XML writers. A .vtu is written in two passes over the same list of arrays: the XML header,
// in which each <DataArray> gets the offset of its block in the appended data, then the blocks
// themselves (UInt64 byte count + raw little-endian values) in the same order.
#include "host/app/io/vtk_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <zlib.h>

namespace dem::host {
namespace {

// One array of a .vtu file: what the XML says about it and where its values are.
struct Block {
  const char* type;  // VTK type name: "Float64", "Int64", "UInt8"
  std::string name;  // empty for the Points array, which has none
  int components;
  const void* data;
  std::size_t values;      // tuples * components
  std::size_t value_size;  // bytes per value
};

// A <Piece>: its attributes (sizes, or an extent) and its arrays, grouped by the XML section they
// belong to (sections without arrays are left out, except PointData and CellData).
struct Piece {
  std::string attributes;
  std::vector<Block> point_data, cell_data, coordinates, cell_arrays;
};

// Little-endian bytes of count values of value_size bytes each.
std::string le_bytes(const void* data, std::size_t count, std::size_t value_size);

// An appended block as VTK's zlib compressor writes it: the UInt64 header [blocks, block size,
// last block size (0: full), compressed sizes...] then the blocks, each compressed on its own.
std::string zlib_block(const std::string& raw) {
  constexpr std::size_t block_size = std::size_t(1) << 20;
  const std::size_t blocks = (raw.size() + block_size - 1) / block_size;
  std::vector<std::uint64_t> header{blocks, block_size, raw.size() % block_size};
  std::string body;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * block_size, size = std::min(block_size, raw.size() - begin);
    uLongf out_size = compressBound(static_cast<uLong>(size));
    std::string out(out_size, '\0');
    // Level 1: snapshots are written while the run waits; on Float64 particle data the higher
    // levels gain a few per cent of size for several times the time.
    if (compress2(reinterpret_cast<Bytef*>(out.data()), &out_size, reinterpret_cast<const Bytef*>(raw.data() + begin),
                  static_cast<uLong>(size), 1) != Z_OK)
      throw std::runtime_error("zlib could not compress a VTK array");
    header.push_back(out_size);
    body.append(out.data(), out_size);
  }
  return le_bytes(header.data(), header.size(), sizeof(std::uint64_t)) + body;
}

template <class T>
Block block(const char* type, std::string name, int components, const T* data, std::size_t values) {
  return {type, std::move(name), components, data, values, sizeof(T)};
}

template <class A>
void add_arrays(std::vector<Block>& out, const std::vector<A>& arrays, std::size_t tuples,
                const char* type, const char* what) {
  for (const A& a : arrays) {
    if (a.components < 1 || a.tuples != tuples || (a.data == nullptr && tuples > 0)) {
      throw std::invalid_argument("VTK " + std::string(what) + " array '" + a.name + "' has " +
                                  std::to_string(a.tuples) + " tuples of " +
                                  std::to_string(a.components) + " components; expected " +
                                  std::to_string(tuples) + " tuples of at least 1");
    }
    out.push_back(block(type, a.name, a.components, a.data, tuples * a.components));
  }
}

std::string xml_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    switch (c) {
      case '&':
        r += "&amp;";
        break;
      case '<':
        r += "&lt;";
        break;
      case '>':
        r += "&gt;";
        break;
      case '"':
        r += "&quot;";
        break;
      default:
        r += c;
    }
  }
  return r;
}

std::string shortest(double x) {  // the shortest text that reads back to the same double
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
}

bool host_is_little_endian() {
  const std::uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

std::string le_bytes(const void* data, std::size_t count, std::size_t value_size) {
  const char* p = static_cast<const char*>(data);
  std::string out;
  if (count == 0) return out;
  if (host_is_little_endian()) return std::string(p, count * value_size);
  out.resize(count * value_size);
  for (std::size_t i = 0; i < count; ++i, p += value_size)
    for (std::size_t b = 0; b < value_size; ++b) out[i * value_size + b] = p[value_size - 1 - b];
  return out;
}

// Writes <path>.tmp with fill(stream), then renames it onto path.
template <class F>
void write_atomically(const std::string& path, F&& fill) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (out) fill(out);
  out.close();
  std::error_code ec;
  if (out) std::filesystem::rename(tmp, path, ec);
  if (!out || ec) {
    const std::string why = ec ? ec.message() : std::string(std::strerror(errno));
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error(path + ": cannot write file: " + why);
  }
}

// A VTK XML file of one piece: type "UnstructuredGrid" (Points and Cells) or "ImageData" (its
// extent, origin and spacing in dataset_attributes).
void write_vtk_xml(const std::string& path, const std::string& type, const std::string& dataset_attributes,
                   const Piece& piece, const VtuOptions& options) {
  std::string xml =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"" + type + "\" version=\"1.0\" byte_order=\"LittleEndian\" "
      "header_type=\"UInt64\"" +
      std::string(options.zlib ? " compressor=\"vtkZLibDataCompressor\"" : "") +
      ">\n"
      "  <" + type + dataset_attributes + ">\n";
  if (!std::isnan(options.time) || !options.name.empty()) {
    xml += "    <FieldData>\n";
    if (!std::isnan(options.time))
      xml += "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">" +
             shortest(options.time) + "</DataArray>\n";
    if (!options.name.empty()) {
      xml += "      <DataArray type=\"UInt8\" Name=\"name\" NumberOfTuples=\"" + std::to_string(options.name.size()) +
             "\" format=\"ascii\">";
      for (std::size_t k = 0; k < options.name.size(); ++k)
        xml += (k ? " " : "") + std::to_string(static_cast<unsigned char>(options.name[k]));
      xml += "</DataArray>\n";
    }
    xml += "    </FieldData>\n";
  }
  xml += "    <Piece" + piece.attributes + ">\n";
  std::vector<std::string> data;  // each array's appended block, in the order of the offsets
  std::uint64_t offset = 0;       // bytes from the '_' that starts the appended data
  auto section = [&](const char* tag, const std::vector<Block>& blocks, const std::string& attributes) {
    xml += "      <" + std::string(tag) + attributes + ">\n";
    for (const Block& b : blocks) {
      const bool is_global_ids = !options.global_ids.empty() && b.name == options.global_ids;
      xml += "        <DataArray type=\"" + std::string(b.type) + "\"";
      if (is_global_ids) xml += " IdType=\"1\"";  // read back as vtkIdTypeArray, as GlobalIds must be
      if (!b.name.empty()) xml += " Name=\"" + xml_escape(b.name) + "\"";
      std::string raw = le_bytes(b.data, b.values, b.value_size);
      if (options.zlib) {
        data.push_back(zlib_block(raw));
      } else {
        const std::uint64_t bytes = raw.size();
        data.push_back(le_bytes(&bytes, 1, sizeof bytes) + raw);
      }
      xml += " NumberOfComponents=\"" + std::to_string(b.components) + "\" format=\"appended\" offset=\"" +
             std::to_string(offset) + "\"/>\n";
      offset += data.back().size();
    }
    xml += "      </" + std::string(tag) + ">\n";
  };
  const bool has_ids = !options.global_ids.empty() &&
                       std::any_of(piece.point_data.begin(), piece.point_data.end(),
                                   [&](const Block& b) { return b.name == options.global_ids; });
  if (!options.global_ids.empty() && !has_ids)
    throw std::invalid_argument(path + ": no point array '" + options.global_ids + "' to mark as GlobalIds");
  section("PointData", piece.point_data, has_ids ? " GlobalIds=\"" + xml_escape(options.global_ids) + "\"" : "");
  section("CellData", piece.cell_data, "");
  if (!piece.coordinates.empty()) section("Points", piece.coordinates, "");
  if (!piece.cell_arrays.empty()) section("Cells", piece.cell_arrays, "");
  xml +=
      "    </Piece>\n"
      "  </" + type + ">\n"
      "  <AppendedData encoding=\"raw\">\n"
      "_";
  write_atomically(path, [&](std::ostream& out) {
    out << xml;
    for (const std::string& d : data) out.write(d.data(), static_cast<std::streamsize>(d.size()));
    out << "\n  </AppendedData>\n</VTKFile>\n";
  });
}

constexpr std::uint8_t vtk_vertex = 1, vtk_polygon = 7;  // VTK cell type ids

std::string sizes(std::size_t points, std::size_t cells) {
  return " NumberOfPoints=\"" + std::to_string(points) + "\" NumberOfCells=\"" + std::to_string(cells) + "\"";
}

}  // namespace

void write_vtu_points(const std::string& path, std::size_t n, const double* xyz,
                      const std::vector<VtkArray>& point_data,
                      const std::vector<VtkIntArray>& int_point_data, const VtuOptions& options) {
  std::vector<std::int64_t> connectivity(n), offsets(n);
  for (std::size_t i = 0; i < n; ++i) {
    connectivity[i] = static_cast<std::int64_t>(i);
    offsets[i] = static_cast<std::int64_t>(i + 1);  // VTK offsets are the end of each cell
  }
  const std::vector<std::uint8_t> types(n, vtk_vertex);
  Piece p{sizes(n, n), {}, {}, {}, {}};
  add_arrays(p.point_data, point_data, n, "Float64", "point");
  add_arrays(p.point_data, int_point_data, n, "Int64", "point");
  if (n > 0 && xyz == nullptr)
    throw std::invalid_argument(path + ": no coordinates for the points");
  p.coordinates = {block("Float64", "", 3, xyz, 3 * n)};
  p.cell_arrays = {block("Int64", "connectivity", 1, connectivity.data(), n),
                   block("Int64", "offsets", 1, offsets.data(), n),
                   block("UInt8", "types", 1, types.data(), n)};
  write_vtk_xml(path, "UnstructuredGrid", "", p, options);
}

void write_vtu_polygons(const std::string& path, const std::vector<std::array<double, 3>>& vertices,
                        const std::vector<std::int32_t>& face_offsets,
                        const std::vector<std::int32_t>& face_vertices,
                        const std::vector<VtkArray>& cell_data,
                        const std::vector<VtkIntArray>& int_cell_data, const VtuOptions& options) {
  static_assert(sizeof(std::array<double, 3>) == 3 * sizeof(double), "vertices must be packed");
  if (face_offsets.empty() || face_offsets.front() != 0 ||
      static_cast<std::size_t>(face_offsets.back()) != face_vertices.size()) {
    throw std::invalid_argument(path + ": face_offsets must start with 0 and end with " +
                                std::to_string(face_vertices.size()));
  }
  const std::size_t faces = face_offsets.size() - 1;
  std::vector<std::int64_t> connectivity(face_vertices.begin(), face_vertices.end());
  std::vector<std::int64_t> offsets(face_offsets.begin() + 1, face_offsets.end());
  for (std::size_t f = 0; f < faces; ++f) {
    if (face_offsets[f + 1] < face_offsets[f] + 3) {
      throw std::invalid_argument(path + ": face " + std::to_string(f) +
                                  " has fewer than 3 vertices");
    }
  }
  for (std::int64_t v : connectivity) {
    if (v < 0 || static_cast<std::size_t>(v) >= vertices.size()) {
      throw std::invalid_argument(path + ": face vertex " + std::to_string(v) + " out of range");
    }
  }
  const std::vector<std::uint8_t> types(faces, vtk_polygon);
  Piece p{sizes(vertices.size(), faces), {}, {}, {}, {}};
  add_arrays(p.cell_data, cell_data, faces, "Float64", "cell");
  add_arrays(p.cell_data, int_cell_data, faces, "Int64", "cell");
  p.coordinates = {block("Float64", "", 3, vertices.empty() ? nullptr : vertices[0].data(),
                         3 * vertices.size())};
  p.cell_arrays = {block("Int64", "connectivity", 1, connectivity.data(), connectivity.size()),
                   block("Int64", "offsets", 1, offsets.data(), faces),
                   block("UInt8", "types", 1, types.data(), faces)};
  write_vtk_xml(path, "UnstructuredGrid", "", p, options);
}

void write_vti_cells(const std::string& path, const std::array<std::int32_t, 3>& cells,
                     const std::array<double, 3>& origin, const std::array<double, 3>& spacing,
                     const std::vector<VtkArray>& cell_data, const VtuOptions& options) {
  for (int k = 0; k < 3; ++k)
    if (cells[k] < 1 || !(spacing[k] > 0))
      throw std::invalid_argument(path + ": an image needs at least one cell of a positive size on every axis");
  const std::size_t n = std::size_t(cells[0]) * std::size_t(cells[1]) * std::size_t(cells[2]);
  Piece p;
  const std::string extent =
      "0 " + std::to_string(cells[0]) + " 0 " + std::to_string(cells[1]) + " 0 " + std::to_string(cells[2]);
  p.attributes = " Extent=\"" + extent + "\"";
  add_arrays(p.cell_data, cell_data, n, "Float64", "cell");
  write_vtk_xml(path, "ImageData",
                " WholeExtent=\"" + extent + "\" Origin=\"" + shortest(origin[0]) + " " + shortest(origin[1]) + " " +
                    shortest(origin[2]) + "\" Spacing=\"" + shortest(spacing[0]) + " " + shortest(spacing[1]) + " " +
                    shortest(spacing[2]) + "\"",
                p, options);
}

PvdWriter::PvdWriter(std::string pvd_path) : path_(std::move(pvd_path)) {}

void PvdWriter::add(double time, const std::vector<Part>& parts) {
  entries_.emplace_back(time, parts);
  std::string xml =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "  <Collection>\n";
  for (const auto& [t, entry] : entries_) {
    for (std::size_t k = 0; k < entry.size(); ++k) {
      xml += "    <DataSet timestep=\"" + shortest(t) + "\" group=\"\" part=\"" + std::to_string(k) + "\"";
      if (!entry[k].name.empty()) xml += " name=\"" + xml_escape(entry[k].name) + "\"";
      xml += " file=\"" + xml_escape(entry[k].file) + "\"/>\n";
    }
  }
  xml += "  </Collection>\n</VTKFile>\n";
  write_atomically(path_, [&](std::ostream& out) { out << xml; });
}

}  // namespace dem::host
