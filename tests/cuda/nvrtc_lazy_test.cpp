// NVRTC is loaded on the first compile, not when the backend starts or reports its version
// (backends/cuda/src/nvrtc_library.hpp): a process whose kernels come from the binary cache
// never pays for loading it. This binary links no NVRTC itself (tests/cuda/CMakeLists.txt), so
// whether the library is in the process says whether libtune loaded it. No GPU needed.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <string>

#include "tune/cuda.hpp"
#include "tune/device.hpp"

namespace {

// "libnvrtc.so.13" for "NVRTC 13.0".
std::string soname_of(const std::string& version) {
  const auto dot = version.find('.');
  return "libnvrtc.so." + version.substr(6, dot - 6);
}

bool loaded(const std::string& soname) {
  void* h = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h != nullptr) ::dlclose(h);  // drops the reference NOLOAD took
  return h != nullptr;
}

tune::KernelSource saxpy() {
  tune::KernelSource s;
  s.language = tune::Language::cuda_hip;
  s.entry = "saxpy";
  s.text = R"(extern "C" __global__ void saxpy(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
})";
  return s;
}

}  // namespace

TEST_CASE("NVRTC is loaded by the first compile, not by the version or the backend") {
  const std::string version = tune::cuda::compiler_version();
  REQUIRE_MESSAGE(version.rfind("NVRTC ", 0) == 0, version);
  REQUIRE(version.find('.') != std::string::npos);
  const std::string soname = soname_of(version);
  CHECK_MESSAGE(!loaded(soname), soname << " is in the process before any compile");

  tune::Config config;
  auto cubin = tune::cuda::compile_binary("sm_80", saxpy(), config);
  REQUIRE_MESSAGE(cubin.ok(), cubin.status().to_string());
  CHECK(!cubin->empty());
  CHECK_MESSAGE(loaded(soname), soname << " not loaded after a compile");

  // The architecture check moved from the options (which also build cache keys) to the
  // compile: still refused, naming what the loaded NVRTC supports.
  auto old = tune::cuda::compile_binary("sm_10", saxpy(), config);
  REQUIRE_FALSE(old.ok());
  CHECK(old.status().code() == tune::StatusCode::invalid_argument);
  CHECK_MESSAGE(old.status().message().find("cannot target sm_10") != std::string::npos,
                old.status().message());
  CHECK_MESSAGE(old.status().message().find("supported: sm_") != std::string::npos,
                old.status().message());
}
