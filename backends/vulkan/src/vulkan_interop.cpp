// vulkan::open_device on an application's device, wrap_buffer, native handles
// (tune/vulkan_interop.hpp).
#include <algorithm>
#include <string>
#include <vector>

#include "device_facts.hpp"
#include "feature_mask.hpp"
#include "tune/vulkan_interop.hpp"
#include "vk_instance.hpp"
#include "vulkan_device.hpp"

namespace tune::vulkan {
namespace {

std::string version_text(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v));
}

// The application's queue family checked and made the device's; the optional features masked
// by what the application enabled.
Status adopt_caps(const ExternalDevice& e, vk::DeviceCaps& caps) {
  const std::string dev = std::string("Vulkan device ") + caps.props.deviceName;
  if (caps.props.apiVersion < VK_API_VERSION_1_1) {  // already the lower of the two
    return Status(StatusCode::unavailable, dev +
                                               ": libtune needs Vulkan 1.1 (device and instance: " +
                                               version_text(caps.props.apiVersion) + ")");
  }
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(e.physical_device, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(e.physical_device, &nq, qs.data());
  if (e.queue_family >= nq) {
    return Status(StatusCode::invalid_argument,
                  dev + ": queue family " + std::to_string(e.queue_family) + " does not exist (" +
                      std::to_string(nq) + " families)");
  }
  const VkQueueFamilyProperties& q = qs[e.queue_family];
  const std::string fam = dev + ": queue family " + std::to_string(e.queue_family);
  if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) == 0)
    return Status(StatusCode::unavailable, fam + " has no VK_QUEUE_COMPUTE_BIT");
  if (q.timestampValidBits == 0) {
    return Status(StatusCode::unavailable,
                  fam + " has no timestamps (timestampValidBits = 0): tuning cannot time on it");
  }
  if (caps.props.limits.timestampPeriod <= 0.0f)
    return Status(StatusCode::unavailable, dev + ": timestampPeriod is 0");
  caps.queue_family = e.queue_family;
  caps.timestamp_valid_bits = q.timestampValidBits;
  vk::mask_by_enabled_features(e.features, caps);
  return Status::ok_status();
}

}  // namespace

Result<std::unique_ptr<Device>> open_device(const ExternalDevice& e) {
  if (e.instance == VK_NULL_HANDLE || e.physical_device == VK_NULL_HANDLE ||
      e.device == VK_NULL_HANDLE || e.queue == VK_NULL_HANDLE) {
    return Status(StatusCode::invalid_argument,
                  "vulkan::ExternalDevice: instance, physical_device, device and queue must all "
                  "be set");
  }
  if (static_cast<bool>(e.lock_queue) != static_cast<bool>(e.unlock_queue)) {
    return Status(StatusCode::invalid_argument,
                  "vulkan::ExternalDevice: set both lock_queue and unlock_queue, or neither");
  }
  std::string why;  // query_caps' own queue choice is replaced by the application's
  vk::DeviceCaps caps = vk::query_caps(e.instance, e.physical_device, &why, e.api_version);
  TUNE_RETURN_IF_ERROR(adopt_caps(e, caps));
  vk::OpenedDevice opened;
  opened.instance = vk::Instance::borrow(e.instance);
  opened.physical = e.physical_device;
  opened.caps = caps;
  opened.external_device = e.device;
  opened.external_queue = e.queue;
  opened.queue_lock = vk::QueueLock{e.lock_queue, e.unlock_queue};
  auto dev = vk::VulkanDevice::create(std::move(opened));
  if (!dev.ok()) {
    return Status(dev.status())
        .with_context(std::string("opening the application's ") + caps.props.deviceName);
  }
  return std::unique_ptr<Device>(std::move(*dev));
}

Result<Buffer> wrap_buffer(Device& dev, VkBuffer buffer, VkDeviceSize offset, VkDeviceSize range) {
  auto* v = dynamic_cast<vk::VulkanDevice*>(&dev);
  if (v == nullptr) {
    return Status(StatusCode::invalid_argument,
                  "vulkan::wrap_buffer: " + dev.info().name + " is not a Vulkan device");
  }
  return v->wrap(buffer, offset, range);
}

VkDevice native_device(const Device& dev) noexcept {
  const auto* v = dynamic_cast<const vk::VulkanDevice*>(&dev);
  return v == nullptr ? VK_NULL_HANDLE : v->vk();
}

VkQueue native_queue(const Device& dev) noexcept {
  const auto* v = dynamic_cast<const vk::VulkanDevice*>(&dev);
  return v == nullptr ? VK_NULL_HANDLE : v->queue_handle();
}

}  // namespace tune::vulkan
