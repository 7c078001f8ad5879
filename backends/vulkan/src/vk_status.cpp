#include "vk_status.hpp"

#include <cinttypes>
#include <cstdio>

namespace tune::vk {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%" PRIx64, v);
  return buf;
}

std::string result_name(VkResult r) {
  switch (r) {
#define TUNE_VK_CASE(x) \
  case x:               \
    return #x;
    TUNE_VK_CASE(VK_SUCCESS)
    TUNE_VK_CASE(VK_NOT_READY)
    TUNE_VK_CASE(VK_TIMEOUT)
    TUNE_VK_CASE(VK_EVENT_SET)
    TUNE_VK_CASE(VK_EVENT_RESET)
    TUNE_VK_CASE(VK_INCOMPLETE)
    TUNE_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    TUNE_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TUNE_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    TUNE_VK_CASE(VK_ERROR_DEVICE_LOST)
    TUNE_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    TUNE_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    TUNE_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    TUNE_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    TUNE_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    TUNE_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    TUNE_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TUNE_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    TUNE_VK_CASE(VK_ERROR_UNKNOWN)
    TUNE_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    TUNE_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    TUNE_VK_CASE(VK_ERROR_FRAGMENTATION)
    TUNE_VK_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    TUNE_VK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    TUNE_VK_CASE(VK_ERROR_VALIDATION_FAILED_EXT)
    TUNE_VK_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef TUNE_VK_CASE
    default:
      return "VkResult(" + std::to_string(static_cast<int>(r)) + ")";
  }
}

StatusCode code_for(VkResult r, StatusCode fallback) {
  switch (r) {
    case VK_SUCCESS:
      return StatusCode::ok;
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_FRAGMENTED_POOL:
      return StatusCode::out_of_resources;
    case VK_ERROR_DEVICE_LOST:
      return StatusCode::device_lost;
    case VK_TIMEOUT:
      return StatusCode::timeout;
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_INITIALIZATION_FAILED:
      return StatusCode::unavailable;
    default:
      return fallback;
  }
}

Status make_error(std::string_view call, VkResult r, StatusCode fallback) {
  return Status(code_for(r, fallback), std::string(call) + " failed: " + result_name(r));
}

}  // namespace tune::vk
