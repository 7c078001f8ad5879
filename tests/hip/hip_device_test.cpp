// The HIP device on real hardware (no AMD GPU exists on our machines: these skip with the
// reason there, and would run unchanged on one). What every backend must do (every bundled
// configuration verified, timing, failures) is the conformance suite's (conformance_hip).
#include <doctest/doctest.h>

#include "skip.hpp"
#include "tune/tune.hpp"

namespace {

std::unique_ptr<tune::Device> open_or_skip() {
  auto dev = tune::open_device("hip");
  if (!dev.ok()) TUNE_SKIP("no HIP device: " + dev.status().to_string());
  return std::move(*dev);
}

}  // namespace

TEST_CASE("device info comes from hipGetDeviceProperties") {
  auto dev = open_or_skip();
  const tune::DeviceInfo& i = dev->info();
  CHECK(i.backend == "hip");
  CHECK(i.arch.rfind("gfx", 0) == 0);
  CHECK(i.compute_units > 0);
  CHECK((i.warp_size == 32 || i.warp_size == 64));
}
