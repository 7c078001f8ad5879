// Without libcuda.so.1 (CI, this build machine) the backend reports "no CUDA driver" as an
// unavailable status: listing, opening through the registry, and driver_status() agree. On a
// machine with a driver these cases skip (they test the absence).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "skip.hpp"
#include "tune/cuda.hpp"
#include "tune/registry.hpp"

namespace {
void skip_if_driver_present() {
  if (tune::cuda::driver_status().ok()) TUNE_SKIP("a CUDA driver is present: nothing to test");
}
}  // namespace

TEST_CASE("the cuda backend is compiled in") {
  auto names = tune::compiled_backends();
  CHECK(std::find(names.begin(), names.end(), "cuda") != names.end());
}

TEST_CASE("without a driver, driver_status is unavailable and names the reason") {
  skip_if_driver_present();
  tune::Status s = tune::cuda::driver_status();
  CHECK(s.code() == tune::StatusCode::unavailable);
  const bool named = s.message().find("no CUDA driver") != std::string::npos ||
                     s.message().find("no CUDA device") != std::string::npos;
  CHECK_MESSAGE(named, s.message());
  MESSAGE("driver_status: " << s.to_string());
}

TEST_CASE("without a driver, opening cuda fails cleanly as unavailable") {
  skip_if_driver_present();
  auto dev = tune::open_device("cuda");
  REQUIRE_FALSE(dev.ok());
  CHECK(dev.status().code() == tune::StatusCode::unavailable);
  CHECK(dev.status().message().find("cuda") != std::string::npos);  // the registry's context
  auto list = tune::list_devices("cuda");
  REQUIRE_FALSE(list.ok());
  CHECK(list.status().code() == tune::StatusCode::unavailable);
  CHECK(tune::cuda::driver_symbol("cuLaunchKernel") == nullptr);
}

TEST_CASE("NVRTC works without a driver") {
  CHECK(tune::cuda::compiler_version().rfind("NVRTC ", 0) == 0);
}
