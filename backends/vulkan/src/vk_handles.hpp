// Owned Vulkan handles: each destroys its object when it goes out of scope, so an error path
// releases what was created before it without a cleanup ladder.
//
// Ownership: move-only; owns one handle. The VkDevice (or VkInstance) it was created from
// must outlive it: declare owners after the LogicalDevice they use, so they are destroyed
// first. Thread safety: as the handle's (none of its own). Blocking: destruction never waits;
// the caller makes sure the device no longer uses the object.
#pragma once

#include <vulkan/vulkan.h>

#include <utility>

namespace tune::vk {

// A handle created from a VkDevice and destroyed with `Destroy(device, handle, nullptr)`.
template <class T, auto Destroy>
class Owned {
 public:
  Owned() = default;
  Owned(VkDevice device, T handle) noexcept : device_(device), handle_(handle) {}
  ~Owned() { reset(); }
  Owned(Owned&& o) noexcept : device_(o.device_), handle_(o.release()) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      device_ = o.device_;
      handle_ = o.release();
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;

  T get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != VK_NULL_HANDLE; }
  // Where a vkCreate* call writes the new handle (the previous one is destroyed first).
  T* receive(VkDevice device) noexcept {
    reset();
    device_ = device;
    return &handle_;
  }
  T release() noexcept { return std::exchange(handle_, T(VK_NULL_HANDLE)); }
  void reset() noexcept {
    if (handle_ != VK_NULL_HANDLE) Destroy(device_, release(), nullptr);
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  T handle_ = VK_NULL_HANDLE;
};

using ShaderModule = Owned<VkShaderModule, vkDestroyShaderModule>;
using DescriptorSetLayout = Owned<VkDescriptorSetLayout, vkDestroyDescriptorSetLayout>;
using PipelineLayout = Owned<VkPipelineLayout, vkDestroyPipelineLayout>;
using Pipeline = Owned<VkPipeline, vkDestroyPipeline>;
using CommandPool = Owned<VkCommandPool, vkDestroyCommandPool>;
using PipelineCacheHandle = Owned<VkPipelineCache, vkDestroyPipelineCache>;
using Fence = Owned<VkFence, vkDestroyFence>;
using DescriptorPool = Owned<VkDescriptorPool, vkDestroyDescriptorPool>;
using QueryPool = Owned<VkQueryPool, vkDestroyQueryPool>;

// The VkDevice itself: destroyed (after waiting for it to go idle) when the owner goes.
class LogicalDevice {
 public:
  LogicalDevice() = default;
  ~LogicalDevice() { reset(); }
  LogicalDevice(const LogicalDevice&) = delete;
  LogicalDevice& operator=(const LogicalDevice&) = delete;

  VkDevice get() const noexcept { return device_; }
  VkDevice* receive() noexcept {
    reset();
    return &device_;
  }
  void reset() noexcept {
    if (device_ == VK_NULL_HANDLE) return;
    vkDeviceWaitIdle(device_);
    vkDestroyDevice(std::exchange(device_, VK_NULL_HANDLE), nullptr);
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
};

}  // namespace tune::vk
