// The device a conformance case runs on: tune::open_device of the backend under test
// (TUNE_CONFORMANCE_BACKEND), lavapipe for Vulkan unless a device was asked for; a backend that
// cannot open one skips the case with the reason.
#pragma once

#include <memory>
#include <string>

#include "skip.hpp"
#include "tune/tune.hpp"
#include "vulkan_env.hpp"

namespace tune::testing {

inline std::unique_ptr<Device> open_conformance_device() {
  (void)use_lavapipe_unless_asked();
  auto dev = open_device(TUNE_CONFORMANCE_BACKEND);
  if (!dev.ok()) {
    TUNE_SKIP("cannot open a " + std::string(TUNE_CONFORMANCE_BACKEND) +
              " device: " + dev.status().to_string());
  }
  return std::move(*dev);
}

}  // namespace tune::testing
