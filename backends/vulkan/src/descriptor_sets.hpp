// Descriptor sets of the backend's dispatches: one per launch or timing batch, in a pool of its
// own freed with its submission (make_descriptor_set), and those of dispatches recorded into
// application command buffers (RecordedSets), kept because a command buffer may run any number
// of times after the recording returns.
//
// Ownership: make_descriptor_set's caller owns the pool it writes; RecordedSets owns the pools
// of its sets until they are forgotten or it is destroyed (before its VkDevice).
// Thread safety: make_descriptor_set is reentrant; RecordedSets has its own lock.
// Blocking: none.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "argument_binding.hpp"
#include "tune/status.hpp"
#include "vk_handles.hpp"

namespace tune::vk {

class VulkanKernel;

// A descriptor set of `layout` for `a` in a new pool of its own, written to `*pool` (freed
// with it); VK_NULL_HANDLE when `a` binds no buffer.
Result<VkDescriptorSet> make_descriptor_set(VkDevice device, VkDescriptorSetLayout layout,
                                            const BoundArgs& a, VkDescriptorPool* pool);

// The descriptor sets of dispatches recorded into application command buffers, one per
// (kernel, bound buffer ranges), each in a pool of its own. Linear search: a program records
// few distinct combinations.
class RecordedSets {
 public:
  // The set of (`kernel`, a.buffers), created on first use.
  Result<VkDescriptorSet> get(VkDevice device, const VulkanKernel& kernel,
                              VkDescriptorSetLayout layout, const BoundArgs& a);
  // Drops the sets of a kernel (null: any) that name a buffer (null: any).
  void forget(const VulkanKernel* kernel, VkBuffer buffer) noexcept;

 private:
  struct RecordedSet {
    const VulkanKernel* kernel = nullptr;
    std::vector<std::pair<std::uint32_t, VkDescriptorBufferInfo>> buffers;
    DescriptorPool pool;
    VkDescriptorSet set = VK_NULL_HANDLE;
  };
  std::mutex mutex_;  // guards sets_
  std::vector<RecordedSet> sets_;
};

}  // namespace tune::vk
