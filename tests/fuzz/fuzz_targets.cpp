// Fuzz targets for the readers of user files: the scene loader, and the OBJ and STL readers.
// Built two ways from this one file:
//  - with clang and -fsanitize=fuzzer,address,undefined (tools/fuzz: libFuzzer explores);
//  - with any compiler as dem_fuzz_regression, whose main() replays every file of the corpus and
//    the crashes found so far (tests/fuzz/corpus, tests/fuzz/regressions) in every ctest run.
// A target must never crash, hang or exhaust memory: bad input is an InputError (or the reader's
// std::runtime_error / std::invalid_argument), nothing else.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "host/sim/errors.hpp"
#include "host/app/io/mesh_io.hpp"
#include "host/app/scene/scene_loader.hpp"

#ifndef DEM_FUZZ_TARGET
#define DEM_FUZZ_TARGET scene
#endif
#define DEM_STR2(x) #x
#define DEM_STR(x) DEM_STR2(x)

namespace {

// Readers of files get the input through a file of the right extension.
std::string temp_path(const char* ext) {
  static const std::string dir = [] {
    const std::filesystem::path d = std::filesystem::temp_directory_path() / ("dem_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir + "/input" + ext;
}

void run_one(const std::string& target, const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    if (target == "scene") {
      dem::host::load_scene_from_string(text, "fuzz.yaml");
    } else {
      const std::string path = temp_path(target == "obj" ? ".obj" : ".stl");
      std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
      dem::host::PolygonMesh m = dem::host::load_mesh(path);
      dem::host::check_planar_convex(m, 1e-6);
    }
  } catch (const dem::host::InputError&) {
  } catch (const std::invalid_argument&) {
  } catch (const std::runtime_error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_one(DEM_STR(DEM_FUZZ_TARGET), data, size);
  return 0;
}

#if defined(DEM_FUZZ_REGRESSION)
// Replays tests/fuzz/{corpus,regressions}/<target>/* through every target: exit 0 when none crashes.
int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: dem_fuzz_regression DIR (holding corpus/ and regressions/)\n");
    return 2;
  }
  int files = 0;
  for (const char* target : {"scene", "obj", "stl"})
    for (const char* kind : {"corpus", "regressions"}) {
      const std::filesystem::path dir = std::filesystem::path(argv[1]) / kind / target;
      if (!std::filesystem::exists(dir)) continue;
      for (const auto& e : std::filesystem::directory_iterator(dir)) {
        std::ifstream f(e.path(), std::ios::binary);
        const std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
        run_one(target, reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
        ++files;
      }
    }
  std::printf("dem_fuzz_regression: %d inputs replayed, none crashed\n", files);
  return files > 0 ? 0 : 1;
}
#endif
