// Without an AMD GPU (CI, this build machine) the HIP backend reports "no HIP device" as an
// unavailable status: driver_status() and opening through the registry agree. On a machine
// with a device this case skips (it tests the absence).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "skip.hpp"
#include "tune/hip.hpp"
#include "tune/registry.hpp"

TEST_CASE("without a device, hip reports 'no HIP device' as unavailable") {
  if (tune::hip::driver_status().ok()) TUNE_SKIP("a HIP device is present: nothing to test");
  tune::Status s = tune::hip::driver_status();
  CHECK(s.code() == tune::StatusCode::unavailable);
  CHECK(s.message().find("no HIP device") != std::string::npos);
  auto dev = tune::open_device("hip");
  REQUIRE_FALSE(dev.ok());
  CHECK(dev.status().code() == tune::StatusCode::unavailable);
  CHECK(dev.status().message().find("no HIP device") != std::string::npos);
  auto names = tune::compiled_backends();
  CHECK(std::find(names.begin(), names.end(), "hip") != names.end());
}
