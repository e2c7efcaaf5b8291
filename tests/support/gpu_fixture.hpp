// GPU tests skip themselves when no CUDA device is present, with the reason, and fail instead when
// DEM_REQUIRE_GPU=1 is set (for runs on a GPU machine, where a skip would hide a broken setup).
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cuda/core_device_check.hpp"

namespace dem::test {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (dem::cuda::device_count(&why) > 0) return;
    const char* require = std::getenv("DEM_REQUIRE_GPU");
    if (require && std::string(require) == "1") FAIL() << "DEM_REQUIRE_GPU=1 but no CUDA device: " << why;
    GTEST_SKIP() << "no CUDA device (" << why << ")";
  }
};

}  // namespace dem::test
