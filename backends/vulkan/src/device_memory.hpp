// DeviceMemory: creates and frees the backend's buffers, each a VkBuffer with its own
// (dedicated) allocation, in the memory types MemoryPlan chose (device_facts.hpp): device
// buffers (storage and transfer) and host-visible staging buffers, mapped when host-visible.
//
// Ownership: creates RawBuffers that the caller owns and hands back to destroy(); holds no
// buffer itself. The VkDevice must outlive it.
// Thread safety: create() and destroy() may be called from any thread (Vulkan allows
// concurrent creation; a buffer is destroyed once, when no device work uses it).
// Blocking: none (allocation only).
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>

#include "device_facts.hpp"
#include "tune/status.hpp"

namespace tune::vk {

// A VkBuffer and its dedicated memory; `mapped` is non-null for host-visible memory.
struct RawBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  std::uint64_t size = 0;
};

class DeviceMemory {
 public:
  DeviceMemory(VkDevice device, const MemoryPlan& plan) : device_(device), plan_(plan) {}

  // A buffer of `bytes`; out_of_resources when the allocation fails.
  Result<RawBuffer> create(std::uint64_t bytes, bool staging) const;
  // Frees `raw` (unmapping it) and resets it; nothing for an empty one.
  void destroy(RawBuffer& raw) const noexcept;

 private:
  VkDevice device_;
  MemoryPlan plan_;
};

}  // namespace tune::vk
