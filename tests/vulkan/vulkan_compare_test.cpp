// VulkanDevice::compare: the GLSL comparison kernel (backends/vulkan/src/comparison_shader.hpp)
// against the CPU computation of the same metrics, on lavapipe by default.
#include <doctest/doctest.h>

#include "comparison_cases.hpp"
#include "vulkan_test_device.hpp"

TEST_CASE("Vulkan compare: the comparison kernel agrees with compare_host") {
  auto dev = tune::testing::open_vulkan_or_skip();
  tune::testing::check_device_compare(*dev);
}
