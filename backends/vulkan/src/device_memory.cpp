#include "device_memory.hpp"

#include <string>

#include "vk_status.hpp"

namespace tune::vk {
namespace {

constexpr VkBufferUsageFlags kBufferUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                            VK_BUFFER_USAGE_TRANSFER_DST_BIT;

}  // namespace

Result<RawBuffer> DeviceMemory::create(std::uint64_t bytes, bool staging) const {
  RawBuffer raw;
  raw.size = bytes;
  auto bci = vk_struct<VkBufferCreateInfo>(VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO);
  bci.size = bytes;
  bci.usage = staging ? (VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                      : kBufferUsage;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TUNE_VK_RETURN_IF_ERROR(vkCreateBuffer(device_, &bci, nullptr, &raw.buffer), "vkCreateBuffer");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device_, raw.buffer, &req);
  const std::uint32_t type = staging ? plan_.staging_type : plan_.device_type;
  if ((req.memoryTypeBits & (1u << type)) == 0) {
    destroy(raw);
    return Status(StatusCode::internal, "the buffer cannot live in memory type " +
                                            std::to_string(type) + " (memoryTypeBits 0x" +
                                            hex(req.memoryTypeBits) + ")");
  }
  auto mai = vk_struct<VkMemoryAllocateInfo>(VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO);
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = type;
  VkResult r = vkAllocateMemory(device_, &mai, nullptr, &raw.memory);
  if (r != VK_SUCCESS) {
    destroy(raw);
    return make_error("vkAllocateMemory(" + std::to_string(bytes) + " bytes)", r,
                      StatusCode::out_of_resources);
  }
  r = vkBindBufferMemory(device_, raw.buffer, raw.memory, 0);
  if (r == VK_SUCCESS && (staging || plan_.device_mappable))
    r = vkMapMemory(device_, raw.memory, 0, VK_WHOLE_SIZE, 0, &raw.mapped);
  if (r != VK_SUCCESS) {
    destroy(raw);
    return make_error("vkBindBufferMemory/vkMapMemory", r);
  }
  return raw;
}

void DeviceMemory::destroy(RawBuffer& raw) const noexcept {
  if (raw.buffer != VK_NULL_HANDLE) vkDestroyBuffer(device_, raw.buffer, nullptr);
  if (raw.memory != VK_NULL_HANDLE) vkFreeMemory(device_, raw.memory, nullptr);  // unmaps
  raw = RawBuffer{};
}

}  // namespace tune::vk
