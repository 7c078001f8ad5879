// What a device fingerprint says about the device's family: the first stage of the
// device-family fallback chain (issue 37: exact device, then the same architecture, then the
// same vendor, then the nearest key, then the kernel's default). Stored rows are keyed by
// DeviceInfo::fingerprint(), "backend|name|arch|driver", so a row of another device can only
// be placed in the chain by reading its fingerprint back.
//
// Pure functions; safe from any thread. Used by tune::fallback_candidates
// (tuning/fallback_chain.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tune::cache {

struct DeviceFamily {
  std::string backend;  // "cuda", "hip", "vulkan", "simulated", ...
  std::string name;     // may itself contain '|'
  std::string arch;     // "sm_90", "gfx90a", "vk:<vendorID>:<deviceID>"
  std::string driver;
  // Who made the device, as far as the fingerprint tells: "NVIDIA" for CUDA, "AMD" for HIP,
  // "vk:<vendorID>" for Vulkan (the arch's vendor part), else the backend itself.
  std::string vendor;
};

// Splits a fingerprint: backend up to the first '|', driver after the last, arch before it,
// the name in between. Nullopt when it has fewer than three '|' or an empty backend or arch.
std::optional<DeviceFamily> parse_fingerprint(std::string_view fingerprint);

// How close a stored row's device (`have`) is to the device asking (`want`), closest first:
// exact (every part equal), same_architecture (same backend and arch: CUDA sm_XY, HIP gfx
// target with its features, Vulkan vendor and device ID; another driver or board name),
// same_vendor (same backend and vendor), other.
enum class FamilyLevel : std::uint8_t { exact, same_architecture, same_vendor, other };
std::string_view to_string(FamilyLevel level) noexcept;
FamilyLevel family_level(const DeviceFamily& want, const DeviceFamily& have) noexcept;

}  // namespace tune::cache
