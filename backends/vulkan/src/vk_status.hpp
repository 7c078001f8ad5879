// VkResult -> tune::Status, with the call name and the result name in the message.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tune/status.hpp"

namespace tune::vk {

// "VK_ERROR_DEVICE_LOST"; "VkResult(-1000)" for codes this build does not know.
std::string result_name(VkResult r);

// The StatusCode a failing VkResult maps to: out-of-memory results -> out_of_resources,
// VK_ERROR_DEVICE_LOST -> device_lost, VK_TIMEOUT -> timeout, a missing driver ->
// unavailable, anything else -> `fallback`.
StatusCode code_for(VkResult r, StatusCode fallback);

// Lower-case hexadecimal without a prefix: "10de".
std::string hex(std::uint64_t v);

// "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY".
Status make_error(std::string_view call, VkResult r, StatusCode fallback = StatusCode::internal);

}  // namespace tune::vk

// Returns a Status from the enclosing function when a Vulkan call does not return VK_SUCCESS.
#define TUNE_VK_RETURN_IF_ERROR(call_expr, call_name)                                   \
  do {                                                                                  \
    VkResult tune_vk_r_ = (call_expr);                                                  \
    if (tune_vk_r_ != VK_SUCCESS) return ::tune::vk::make_error(call_name, tune_vk_r_); \
  } while (0)

namespace tune::vk {
// A bool as a VkBool32, and back.
inline VkBool32 vk_bool(bool b) { return b ? VK_TRUE : VK_FALSE; }
inline bool is_true(VkBool32 b) { return b == VK_TRUE; }

// A zero-initialised Vulkan structure with its sType (and optional pNext) set.
template <class T>
T vk_struct(VkStructureType type, void* next = nullptr) {
  T v{};
  v.sType = type;
  v.pNext = next;
  return v;
}
}  // namespace tune::vk
