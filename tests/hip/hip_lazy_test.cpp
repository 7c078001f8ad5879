// The HIP runtime (libamdhip64, with hiprtc inside it on ROCm 5.2) is dlopen'ed on the first
// HIP call, not linked (backends/hip/src/hip_library.hpp): a process that never touches HIP
// never maps it, and a missing or unusable library is an unavailable status naming the culprit.
// This binary links no HIP library itself (tests/hip/CMakeLists.txt), so whether libamdhip64
// is in /proc/self/maps says whether libtune loaded it. No GPU needed: on this machine
// (libamdhip64 installed, no AMD GPU) the first open loads the library and reports "no HIP
// device", as before.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "hip_internal.hpp"
#include "skip.hpp"
#include "tune/hip.hpp"
#include "tune/registry.hpp"

namespace {

// Whether a file whose name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  REQUIRE(maps.good());
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("libamdhip64 is mapped by the first HIP device open, not at start or by other use") {
  CHECK_MESSAGE(!mapped("libamdhip64"), "libamdhip64 is in the process at start");

  // The core and the other backends compiled in (vulkan in the all preset) leave HIP alone.
  const auto names = tune::compiled_backends();
  REQUIRE(std::find(names.begin(), names.end(), "hip") != names.end());
  if (std::find(names.begin(), names.end(), "vulkan") != names.end()) {
    auto listed = tune::list_devices("vulkan");
    auto vk = tune::open_device("vulkan");
    MESSAGE("vulkan: " << (vk.ok() ? (*vk)->info().name : vk.status().to_string()));
  }
  CHECK_MESSAGE(!mapped("libamdhip64"), "libamdhip64 loaded by non-HIP use of libtune");

  auto dev = tune::open_device("hip");
  if (dev.ok()) {
    CHECK(mapped("libamdhip64"));
    return;
  }
  const tune::Status& s = dev.status();
  CHECK(s.code() == tune::StatusCode::unavailable);
  if (s.message().find("no HIP runtime") != std::string::npos) {
    // ROCm not installed: the open names what it tried, and nothing was mapped.
    MESSAGE("no libamdhip64 on this machine: " << s.message());
    CHECK(s.message().find("libamdhip64.so") != std::string::npos);
    CHECK(!mapped("libamdhip64"));
    return;
  }
  // Installed without a device (this build machine): loaded, and the status is the one the
  // backend always gave (tests/hip/no_device_test.cpp), from open (with the registry's "opening
  // hip: " context) and driver_status alike.
  CHECK_MESSAGE(s.message().find("no HIP device") != std::string::npos, s.message());
  CHECK(mapped("libamdhip64"));
  const std::string why = tune::hip::driver_status().message();
  CHECK_MESSAGE(s.message().find(why) != std::string::npos, why << " vs " << s.message());
}

TEST_CASE("the HIP library is looked for by its soname, then its unversioned name") {
  const std::vector<std::string> c = tune::hip::detail::hip_library_candidates();
  REQUIRE(c.size() == 2);
  CHECK(c[0].rfind("libamdhip64.so.", 0) == 0);
  CHECK(c[1] == "libamdhip64.so");
}

TEST_CASE("no loadable HIP library: unavailable, naming every file tried") {
  const std::vector<std::string> c = {"libtune-test-no-such-amdhip64.so.5",
                                      "/nonexistent/libamdhip64.so"};
  const tune::Status s = tune::hip::detail::check_hip_library(c);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == tune::StatusCode::unavailable);
  CHECK_MESSAGE(s.message().find("no HIP runtime") != std::string::npos, s.message());
  for (const std::string& file : c)
    CHECK_MESSAGE(s.message().find(file) != std::string::npos,
                  file << " not named: " << s.message());
  CHECK(!mapped("libamdhip64"));
}

TEST_CASE("a library without the HIP entry points: unavailable, naming the file and the symbol") {
  // libm loads (it is in every process) and has none of HIP's symbols: the first one in the
  // table is missing. The failed candidate before it is skipped.
  const std::vector<std::string> c = {"libtune-test-no-such-amdhip64.so.5", "libm.so.6"};
  const tune::Status s = tune::hip::detail::check_hip_library(c);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == tune::StatusCode::unavailable);
  CHECK_MESSAGE(s.message().find("libm.so.6 lacks hipGetErrorName") != std::string::npos,
                s.message());
}

TEST_CASE("the installed libamdhip64 has every entry point the backend uses") {
  const tune::Status s =
      tune::hip::detail::check_hip_library(tune::hip::detail::hip_library_candidates());
  if (s.code() == tune::StatusCode::unavailable &&
      s.message().find("no HIP runtime") != std::string::npos) {
    TUNE_SKIP("no libamdhip64 on this machine: " + s.message());
  }
  CHECK_MESSAGE(s.ok(), s.to_string());
  CHECK(mapped("libamdhip64"));
}
