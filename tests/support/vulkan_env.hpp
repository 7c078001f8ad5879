// Points the Vulkan loader at Mesa's lavapipe when no device was asked for, so that tests on
// a machine without a GPU do not probe the Intel/Radeon ICDs that Debian installs alongside.
// Call before the first Vulkan instance is created (e.g. from a static initialiser).
#pragma once

#include <cstdlib>

namespace tune::testing {

inline constexpr const char* kLavapipeIcd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

// Sets VK_ICD_FILENAMES to lavapipe unless TUNE_VULKAN_DEVICE, VK_ICD_FILENAMES or
// VK_DRIVER_FILES is already set. Returns true when it set it.
inline bool use_lavapipe_unless_asked() {
  for (const char* v : {"TUNE_VULKAN_DEVICE", "VK_ICD_FILENAMES", "VK_DRIVER_FILES"}) {
    const char* s = std::getenv(v);
    if (s != nullptr && *s != '\0') return false;
  }
  return ::setenv("VK_ICD_FILENAMES", kLavapipeIcd, 0) == 0;
}

}  // namespace tune::testing
