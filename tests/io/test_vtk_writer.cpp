// VTK writers: the files are parsed back here, independently of the writer: the XML must be
// balanced, each appended block's offset must follow from the byte counts before it, and the raw
// values must equal what was written, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <zlib.h>

#include "host/app/io/vtk_writer.hpp"

namespace dem::host {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the system temp directory, removed with everything in it.
class TempDir {
 public:
  TempDir()
      : path_(fs::temp_directory_path() /
              ("dem_vtk_test_" + std::to_string(std::random_device{}()))) {
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path_), {}));
  }

 private:
  fs::path path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of attribute key in an XML tag, or "" if absent.
std::string attribute(const std::string& tag, const std::string& key) {
  const std::string k = " " + key + "=\"";
  const std::size_t b = tag.find(k);
  if (b == std::string::npos) return "";
  const std::size_t v = b + k.size();
  return tag.substr(v, tag.find('"', v) - v);
}

// Checks that the tags of xml nest properly; returns "" or what is wrong.
std::string xml_nesting_error(const std::string& xml) {
  std::vector<std::string> open;
  for (std::size_t lt = xml.find('<'); lt != std::string::npos; lt = xml.find('<', lt + 1)) {
    const std::size_t gt = xml.find('>', lt);
    if (gt == std::string::npos) return "unterminated tag";
    const std::string tag = xml.substr(lt + 1, gt - lt - 1);
    if (tag.empty() || tag[0] == '?' || tag.back() == '/') continue;
    const std::string name = tag.substr(0, tag.find(' '));
    if (name[0] != '/') {
      open.push_back(name);
    } else if (open.empty() || open.back() != name.substr(1)) {
      return "unexpected " + name;
    } else {
      open.pop_back();
    }
  }
  return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

struct Array {
  std::string type, name;
  int components = 0;
  std::uint64_t offset = 0, bytes = 0;
  const char* data = nullptr;  // the raw values (after the byte count)

  template <class T>
  std::vector<T> values() const {  // decodes little-endian values, whatever the host order
    std::vector<T> r(bytes / sizeof(T));
    for (std::size_t i = 0; i < r.size(); ++i) {
      std::uint64_t u = 0;
      for (std::size_t b = sizeof(T); b-- > 0;)
        u = (u << 8) | static_cast<unsigned char>(data[i * sizeof(T) + b]);
      if constexpr (sizeof(T) == 8) {
        std::memcpy(&r[i], &u, 8);
      } else {
        r[i] = static_cast<T>(u);
      }
    }
    return r;
  }
};

// A .vtu read back: the XML header's <Piece> and arrays, with their appended blocks located (and
// decompressed, for a zlib file), and the inline field data as text.
struct Vtu {
  std::string file, piece, header;
  bool zlib = false;
  std::vector<Array> arrays;
  std::vector<std::unique_ptr<std::string>> inflated;  // decompressed blocks the arrays point into
  std::map<std::string, std::pair<std::string, std::string>> field;  // name -> (type, text)
  const Array& operator[](const std::string& name) const {
    for (const Array& a : arrays)
      if (a.name == name) return a;
    throw std::out_of_range(name);
  }
};

std::uint64_t le_u64(const char* p) {
  std::uint64_t u = 0;
  for (int b = 8; b-- > 0;) u = (u << 8) | static_cast<unsigned char>(p[b]);
  return u;
}

Vtu read_vtu(const std::string& path) {
  Vtu v;
  v.file = slurp(path);
  const std::string marker = "<AppendedData encoding=\"raw\">";
  const std::size_t appended = v.file.find(marker);
  EXPECT_NE(appended, std::string::npos);
  const std::size_t base = v.file.find('_', appended) + 1;  // offsets count from here
  const std::string header = v.file.substr(0, base - 1);
  v.header = header;
  const std::string trailer = "\n  </AppendedData>\n</VTKFile>\n";
  EXPECT_EQ(xml_nesting_error(header + trailer), "");
  const std::string start = "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\"";
  v.zlib = header.find(start + " compressor=\"vtkZLibDataCompressor\">") != std::string::npos;
  if (!v.zlib) {
    EXPECT_NE(header.find(start + ">"), std::string::npos);
  }
  const std::size_t p = header.find("<Piece ");
  v.piece = header.substr(p, header.find('>', p) - p);

  std::uint64_t expected_offset = 0;  // each block follows the previous one
  for (std::size_t t = header.find("<DataArray"); t != std::string::npos;
       t = header.find("<DataArray", t + 1)) {
    const std::size_t end = header.find('>', t);
    const std::string tag = header.substr(t, end - t);
    if (attribute(tag, "format") == "ascii") {  // inline field data
      const std::size_t close = header.find("</DataArray>", end);
      v.field[attribute(tag, "Name")] = {attribute(tag, "type"), header.substr(end + 1, close - end - 1)};
      continue;
    }
    Array a;
    a.type = attribute(tag, "type");
    a.name = attribute(tag, "Name");
    a.components = std::stoi(attribute(tag, "NumberOfComponents"));
    EXPECT_EQ(attribute(tag, "format"), "appended");
    a.offset = std::stoull(attribute(tag, "offset"));
    EXPECT_EQ(a.offset, expected_offset) << tag;
    EXPECT_LE(base + a.offset + 8, v.file.size());
    const char* block = v.file.data() + base + a.offset;
    if (!v.zlib) {
      a.bytes = le_u64(block);
      a.data = block + 8;
      expected_offset = a.offset + 8 + a.bytes;
    } else {  // [blocks, block size, last block size, compressed sizes...] then the blocks
      const std::uint64_t blocks = le_u64(block), block_size = le_u64(block + 8), last = le_u64(block + 16);
      auto out = std::make_unique<std::string>();
      const char* z = block + 24 + 8 * blocks;
      for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t csize = le_u64(block + 24 + 8 * b);
        uLongf size = static_cast<uLongf>(b + 1 == blocks && last != 0 ? last : block_size);
        std::string chunk(size, '\0');
        EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(chunk.data()), &size, reinterpret_cast<const Bytef*>(z),
                             static_cast<uLong>(csize)),
                  Z_OK);
        chunk.resize(size);
        *out += chunk;
        z += csize;
      }
      a.bytes = out->size();
      a.data = out->data();
      v.inflated.push_back(std::move(out));
      expected_offset = static_cast<std::uint64_t>(z - (v.file.data() + base));
    }
    v.arrays.push_back(a);
  }
  EXPECT_EQ(v.file.substr(base + expected_offset), trailer);  // nothing missing, nothing extra
  return v;
}

TEST(VtkWriter, PointsRoundTripBitForBit) {
  TempDir dir;
  const std::size_t n = 4;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> xyz{0.1, -0.0, 1e-300, 1.0 / 3, 2, 3, 4, 5, 6, -7, 8e300, 9};
  const std::vector<double> velocity{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, inf};
  const std::vector<double> radius{0.001, 0.002, 0.003, 0.004};
  const std::vector<std::int64_t> ids{0, -1, std::int64_t{1} << 40, 7};
  const std::string path = dir.file("particles_000001.vtu");
  write_vtu_points(path, n, xyz.data(),
                   {{"velocity", 3, velocity.data(), n}, {"radius", 1, radius.data(), n}},
                   {{"id", 1, ids.data(), n}});
  EXPECT_EQ(dir.entries(), 1u);  // no .tmp left behind

  const Vtu v = read_vtu(path);
  EXPECT_EQ(attribute(v.piece, "NumberOfPoints"), "4");
  EXPECT_EQ(attribute(v.piece, "NumberOfCells"), "4");
  ASSERT_EQ(v.arrays.size(), 7u);   // velocity, radius, id, Points, connectivity, offsets, types
  EXPECT_EQ(v.arrays[3].name, "");  // the Points array
  EXPECT_EQ(v.arrays[3].type, "Float64");
  EXPECT_EQ(v.arrays[3].components, 3);
  for (std::size_t i = 0; i < xyz.size(); ++i) {  // bitwise: -0.0 stays -0.0
    EXPECT_EQ(std::memcmp(&v.arrays[3].values<double>()[i], &xyz[i], 8), 0) << i;
  }
  EXPECT_EQ(v["velocity"].components, 3);
  EXPECT_EQ(v["velocity"].values<double>(), velocity);
  EXPECT_EQ(v["radius"].type, "Float64");
  EXPECT_EQ(v["radius"].values<double>(), radius);
  EXPECT_EQ(v["id"].type, "Int64");
  EXPECT_EQ(v["id"].values<std::int64_t>(), ids);
  EXPECT_EQ(v["connectivity"].values<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(v["offsets"].values<std::int64_t>(), (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(v["types"].type, "UInt8");
  EXPECT_EQ(v["types"].values<std::uint8_t>(), (std::vector<std::uint8_t>(4, 1)));  // VTK_VERTEX
}

TEST(VtkWriter, ZeroPointsIsAValidFile) {
  TempDir dir;
  const std::string path = dir.file("empty.vtu");
  write_vtu_points(path, 0, nullptr, {}, {});
  const Vtu v = read_vtu(path);
  EXPECT_EQ(attribute(v.piece, "NumberOfPoints"), "0");
  for (const Array& a : v.arrays) EXPECT_EQ(a.bytes, 0u);
}

TEST(VtkWriter, PolygonsKeepQuadsAndPentagons) {
  TempDir dir;
  const std::vector<std::array<double, 3>> vertices{{0, 0, 0}, {1, 0, 0}, {1, 1, 0},  {0, 1, 0},
                                                    {2, 0, 0}, {2, 1, 0}, {1.5, 2, 0}};
  const std::vector<std::int32_t> offsets{0, 3, 7, 12};
  const std::vector<std::int32_t> faces{0, 1, 3, 1, 4, 5, 2, 2, 5, 6, 3, 1};
  const std::vector<double> pressure{1e5, 2e5, 3.5e5};
  const std::string path = dir.file("wall_000003.vtu");
  write_vtu_polygons(path, vertices, offsets, faces, {{"pressure", 1, pressure.data(), 3}});
  const Vtu v = read_vtu(path);
  EXPECT_EQ(attribute(v.piece, "NumberOfPoints"), "7");
  EXPECT_EQ(attribute(v.piece, "NumberOfCells"), "3");
  ASSERT_EQ(v.arrays.size(), 5u);  // pressure, Points, connectivity, offsets, types
  EXPECT_NE(v.file.find("<CellData>\n        <DataArray type=\"Float64\" Name=\"pressure\""),
            std::string::npos);
  EXPECT_EQ(v["pressure"].values<double>(), pressure);
  const std::vector<double> xyz = v.arrays[1].values<double>();
  ASSERT_EQ(xyz.size(), 21u);
  for (std::size_t i = 0; i < vertices.size(); ++i)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(xyz[3 * i + c], vertices[i][c]);
  EXPECT_EQ(v["connectivity"].values<std::int64_t>(),
            std::vector<std::int64_t>(faces.begin(), faces.end()));
  EXPECT_EQ(v["offsets"].values<std::int64_t>(), (std::vector<std::int64_t>{3, 7, 12}));
  EXPECT_EQ(v["types"].values<std::uint8_t>(), (std::vector<std::uint8_t>(3, 7)));  // VTK_POLYGON
}

TEST(VtkWriter, RewritingReplacesTheFile) {
  TempDir dir;
  const std::string path = dir.file("p.vtu");
  const std::vector<double> a{1, 2, 3, 4, 5, 6}, b{7, 8, 9};
  write_vtu_points(path, 2, a.data(), {}, {});
  write_vtu_points(path, 1, b.data(), {}, {});
  EXPECT_EQ(read_vtu(path).arrays[0].values<double>(), b);
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(VtkWriter, RejectsArraysOfTheWrongSizeAndReportsIoFailures) {
  TempDir dir;
  const std::vector<double> xyz(6, 0.0), r(3, 0.0);
  EXPECT_THROW(write_vtu_points(dir.file("a.vtu"), 2, xyz.data(), {{"radius", 1, r.data(), 3}}, {}),
               std::invalid_argument);
  EXPECT_THROW(write_vtu_polygons(dir.file("b.vtu"), {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}, {0, 3},
                                  {0, 1, 2}, {{"p", 1, r.data(), 3}}),
               std::invalid_argument);
  EXPECT_THROW(write_vtu_polygons(dir.file("c.vtu"), {{0, 0, 0}}, {0, 3}, {0, 1, 2}, {}),
               std::invalid_argument);
  const std::string bad = dir.file("no_such_dir/x.vtu");
  try {
    write_vtu_points(bad, 2, xyz.data(), {}, {});
    ADD_FAILURE() << "no error for " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries(), 0u);
}

// Compressed files hold the same values bit for bit (several zlib blocks for the large array),
// with the time as TimeValue field data and the ids marked as ParaView's GlobalIds.
TEST(VtkWriter, ZlibTimeValueAndGlobalIdsRoundTrip) {
  TempDir dir;
  const std::size_t n = 100000;  // 2.4 MB of coordinates: three 1 MiB blocks, the last one partial
  std::vector<double> xyz(3 * n), radius(n);
  std::vector<std::int64_t> ids(n);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double& x : xyz) x = u(rng);
  for (std::size_t i = 0; i < n; ++i) radius[i] = 1e-3 * (1 + u(rng) * 0.5), ids[i] = static_cast<std::int64_t>(n - i);
  for (bool zlib : {false, true}) {
    const std::string path = dir.file(zlib ? "z.vtu" : "raw.vtu");
    VtuOptions options;
    options.time = 0.1 + 0.2;  // not a short decimal: must read back exactly
    options.zlib = zlib;
    options.global_ids = "id";
    write_vtu_points(path, n, xyz.data(), {{"radius", 1, radius.data(), n}}, {{"id", 1, ids.data(), n}}, options);
    const Vtu v = read_vtu(path);
    EXPECT_EQ(v.zlib, zlib);
    EXPECT_EQ(v.arrays[2].values<double>(), xyz);  // radius, id, Points, ...
    EXPECT_EQ(v["radius"].values<double>(), radius);
    EXPECT_EQ(v["id"].values<std::int64_t>(), ids);
    ASSERT_EQ(v.field.count("TimeValue"), 1u);
    EXPECT_EQ(v.field.at("TimeValue").first, "Float64");
    EXPECT_EQ(std::stod(v.field.at("TimeValue").second), 0.1 + 0.2);
    EXPECT_NE(v.header.find("<PointData GlobalIds=\"id\">"), std::string::npos);
    EXPECT_NE(v.header.find("<DataArray type=\"Int64\" IdType=\"1\" Name=\"id\""), std::string::npos);
    if (zlib) {
      EXPECT_LT(v.file.size(), slurp(dir.file("raw.vtu")).size());
    }
  }
  EXPECT_THROW(write_vtu_points(dir.file("bad.vtu"), 1, xyz.data(), {}, {}, VtuOptions{0.0, false, "id", ""}),
               std::invalid_argument);  // no such array to mark
}

// A mesh body's file: integer cell data, its name as field data (bytes), compressed or not.
TEST(VtkWriter, PolygonsCarryIntegerCellDataAndAName) {
  TempDir dir;
  const std::vector<std::array<double, 3>> vertices{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  const std::vector<std::int32_t> offsets{0, 4}, corners{0, 1, 2, 3};
  const std::vector<std::int64_t> body{3};
  for (bool zlib : {false, true}) {
    const std::string path = dir.file(zlib ? "mz.vtu" : "m.vtu");
    write_vtu_polygons(path, vertices, offsets, corners, {}, {{"body", 1, body.data(), 1}},
                       VtuOptions{2.5, zlib, "", "blade <1> & \"x\""});
    const Vtu v = read_vtu(path);
    EXPECT_EQ(v["body"].type, "Int64");
    EXPECT_EQ(v["body"].values<std::int64_t>(), body);
    EXPECT_EQ(v["offsets"].values<std::int64_t>(), (std::vector<std::int64_t>{4}));
    std::istringstream bytes(v.field.at("name").second);
    std::string name;
    for (int c; bytes >> c;) name += static_cast<char>(c);
    EXPECT_EQ(name, "blade <1> & \"x\"");
    EXPECT_EQ(v.field.at("TimeValue").second, "2.5");
  }
}

TEST(PvdWriter, ListsEveryTimeAndIsWellFormedAfterEachAdd) {
  TempDir dir;
  const std::string path = dir.file("run.pvd");
  PvdWriter pvd(path);
  const std::vector<double> times{0.0, 1e-4, 0.1 + 0.2};  // 0.1 + 0.2 needs all 17 digits
  for (std::size_t k = 0; k < times.size(); ++k) {
    const std::string file = "out/particles_" + std::to_string(k) + (k == 2 ? "&co" : "") + ".vtu";
    pvd.add(times[k], file);
    const std::string xml = slurp(path);
    EXPECT_EQ(xml.rfind("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\"", 0), 0u);
    EXPECT_EQ(xml_nesting_error(xml), "") << xml;
    std::vector<std::string> sets;
    for (std::size_t t = xml.find("<DataSet "); t != std::string::npos;
         t = xml.find("<DataSet ", t + 1)) {
      sets.push_back(xml.substr(t, xml.find("/>", t) - t));
    }
    ASSERT_EQ(sets.size(), k + 1);
    for (std::size_t i = 0; i <= k; ++i)
      EXPECT_EQ(std::stod(attribute(sets[i], "timestep")), times[i]);
    EXPECT_EQ(attribute(sets[k], "file"), k == 2 ? "out/particles_2&amp;co.vtu" : file);
    EXPECT_EQ(dir.entries(), 1u);  // no run.pvd.tmp left behind
  }
}

// Several parts per time (one file per mesh body): each a DataSet with its part number and name.
TEST(PvdWriter, PartsCarryTheirNames) {
  TempDir dir;
  const std::string path = dir.file("meshes.pvd");
  PvdWriter pvd(path);
  pvd.add(0.0, {{"meshes_000000_0.vtu", "drum"}, {"meshes_000000_1.vtu", "blade \"A\""}});
  pvd.add(0.5, {{"meshes_000001_0.vtu", "drum"}, {"meshes_000001_1.vtu", "blade \"A\""}});
  const std::string xml = slurp(path);
  EXPECT_EQ(xml_nesting_error(xml), "");
  std::vector<std::string> sets;
  for (std::size_t t = xml.find("<DataSet "); t != std::string::npos; t = xml.find("<DataSet ", t + 1))
    sets.push_back(xml.substr(t, xml.find("/>", t) - t));
  ASSERT_EQ(sets.size(), 4u);
  EXPECT_EQ(attribute(sets[3], "timestep"), "0.5");
  EXPECT_EQ(attribute(sets[3], "part"), "1");
  EXPECT_EQ(attribute(sets[3], "name"), "blade &quot;A&quot;");
  EXPECT_EQ(attribute(sets[2], "name"), "drum");
  EXPECT_EQ(attribute(sets[2], "file"), "meshes_000001_0.vtu");
}

}  // namespace
}  // namespace dem::host
