// GpuDevice::compare on CUDA: the NVRTC-compiled comparison kernel
// (backends/cuda_hip/src/comparison_source.hpp) against the CPU computation of the same
// metrics. Skips with the reason without a driver or device.
#include <doctest/doctest.h>

#include "comparison_cases.hpp"
#include "skip.hpp"
#include "tune/cuda.hpp"
#include "tune/tune.hpp"

TEST_CASE("CUDA compare: the comparison kernel agrees with compare_host") {
  auto dev = tune::open_device("cuda");
  tune::testing::skip_if_unavailable(dev.status(), "no CUDA device");
  REQUIRE_MESSAGE(dev.ok(), dev.status().to_string());
  tune::testing::check_device_compare(**dev);
}
