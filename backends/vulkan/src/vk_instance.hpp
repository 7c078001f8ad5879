// Instance: the one owner of a VkInstance and, when validation is on, of its debug messenger
// and the log that messenger writes into.
//
// Ownership: owns the instance, the messenger and the log; destroys the messenger before the
// instance. A VulkanDevice keeps its Instance (shared_ptr) alive until its VkDevice is gone.
// Every instance it creates also keeps the process's driver anchor (see vk_instance.cpp).
// Thread safety: immutable after create(); the log has its own mutex (the validation layer
// may call the messenger from any thread).
// Blocking: create() loads the drivers (tens of ms on first use); the rest never blocks.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tune/status.hpp"

namespace tune::vk {

// Messages of the validation layer, written by the messenger callback.
struct ValidationLog {
  mutable std::mutex mu;
  std::uint64_t errors = 0, warnings = 0;
  std::vector<std::string> messages;  // the first 64
};

class Instance {
 public:
  // With `validation`, the Khronos validation layer and a messenger recording into log();
  // unavailable when the layer is not installed or no driver is found.
  static Result<std::shared_ptr<Instance>> create(bool validation);
  // An application's instance, used and never destroyed (validation is the application's:
  // its messages go to the application's messenger, not to log()).
  static std::shared_ptr<Instance> borrow(VkInstance instance);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance get() const noexcept { return instance_; }
  // The apiVersion the instance was created with (0 for a borrowed one: unknown here). Device
  // functionality is usable up to the lower of it and the device's.
  std::uint32_t api_version() const noexcept { return api_version_; }
  bool validation() const noexcept { return validation_; }
  const ValidationLog& log() const noexcept { return log_; }
  // unavailable when the loader finds none.
  Result<std::vector<VkPhysicalDevice>> physical_devices() const;

 private:
  Instance() = default;

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  bool owned_ = true;
  std::uint32_t api_version_ = 0;
  ValidationLog log_;
};

}  // namespace tune::vk
