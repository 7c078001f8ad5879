// The Vulkan device a Vulkan-backend test case runs on, and what a missing one means: lavapipe
// unless a device was asked for (vulkan_env.hpp), and when no device opens, the case skips with
// the reason, except in CI (CI=true), where lavapipe must be installed and the case fails.
//
// For doctest suites built with the Vulkan backend (it needs tune/vulkan.hpp). The conformance
// suite, built for every backend, includes only vulkan_env.hpp and opens through the registry.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "skip.hpp"
#include "tune/vulkan.hpp"
#include "vulkan_env.hpp"

namespace tune::testing {

// Set during static initialisation, so before any test case creates a Vulkan instance.
inline const bool kVulkanTestEnv = use_lavapipe_unless_asked();

// Ends the case for want of a Vulkan device: a skip with `why`, a failure in CI.
[[noreturn]] inline void skip_or_fail_without_vulkan(const std::string& why) {
  if (in_ci()) FAIL(why << " (CI runs the Vulkan tests on lavapipe)");
  skip_test(why);
}

// The device vulkan::open_device("") picks (TUNE_VULKAN_DEVICE, else the first usable one),
// opened with `opts`; ends the case through skip_or_fail_without_vulkan when none opens.
inline std::unique_ptr<Device> open_vulkan_or_skip(const vulkan::OpenOptions& opts = {}) {
  (void)kVulkanTestEnv;
  auto dev = vulkan::open_device("", opts);
  if (!dev.ok()) skip_or_fail_without_vulkan("no Vulkan device: " + dev.status().to_string());
  return std::move(*dev);
}

// The same device under the Khronos validation layer where it is installed (it checks what
// the tests' pipelines and shaders use against what the device enabled); else plain, saying so.
inline std::unique_ptr<Device> open_validated_if_possible() {
  vulkan::OpenOptions opts;
  opts.validation = true;
  auto dev = vulkan::open_device("", opts);
  if (dev.ok()) return std::move(*dev);
  MESSAGE("without the validation layer: " << dev.status().to_string());
  return open_vulkan_or_skip();
}

// No validation error so far on `dev` (nothing to check without the layer).
inline void check_no_validation_error(Device& dev) {
  auto diag = vulkan::diagnostics(dev);
  REQUIRE(diag.has_value());
  if (!diag->validation_enabled) return;
  for (const auto& m : diag->messages) MESSAGE(m);
  CHECK(diag->validation_errors == 0);
}

}  // namespace tune::testing
