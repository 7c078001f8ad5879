// Device listing and selection, and the registry entry of the Vulkan backend.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "device_facts.hpp"
#include "tune/backend/registry.hpp"
#include "tune/environment.hpp"
#include "tune/log.hpp"
#include "tune/vulkan.hpp"
#include "vk_instance.hpp"
#include "vk_status.hpp"
#include "vulkan_device.hpp"

namespace tune {
namespace vk {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

std::string api_text(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch)) != 0;
  });
}

// The device `selector` names (an index, a name substring; empty: the first usable one of the
// best type), among devices with capabilities `caps` and reasons `why` they are unusable.
// `names` lists them for the messages.
Result<std::size_t> pick_device(const std::string& selector, const std::vector<DeviceCaps>& caps,
                                const std::vector<std::string>& why, const std::string& names) {
  if (all_digits(selector)) {
    const long idx = std::strtol(selector.c_str(), nullptr, 10);
    if (idx < 0 || idx >= static_cast<long>(caps.size())) {
      return Status(StatusCode::not_found,
                    "no Vulkan device with index " + selector + "; devices:" + names);
    }
    return static_cast<std::size_t>(idx);
  }
  if (!selector.empty()) {
    const std::string want = lower(selector);
    for (std::size_t i = 0; i < caps.size(); ++i)
      if (lower(caps[i].props.deviceName).find(want) != std::string::npos) return i;
    return Status(StatusCode::not_found,
                  "no Vulkan device name contains '" + selector + "'; devices:" + names);
  }
  int pick = -1;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    if (!why[i].empty()) continue;
    if (pick < 0 || type_rank(caps[i].props.deviceType) <
                        type_rank(caps[static_cast<std::size_t>(pick)].props.deviceType))
      pick = static_cast<int>(i);
  }
  if (pick < 0) {
    return Status(StatusCode::unavailable,
                  "no Vulkan device has a compute queue with timestamps; devices:" + names);
  }
  return static_cast<std::size_t>(pick);
}

}  // namespace
}  // namespace vk

namespace vulkan {

Result<std::vector<DeviceListing>> list_devices() {
  auto inst = vk::Instance::create(false);
  if (!inst.ok()) return inst.status();
  auto devs = (*inst)->physical_devices();
  if (!devs.ok()) return devs.status();
  std::vector<DeviceListing> out;
  for (std::size_t i = 0; i < devs->size(); ++i) {
    std::string why;
    vk::DeviceCaps c = vk::query_caps((*inst)->get(), (*devs)[i], &why);
    DeviceListing d;
    d.backend = "vulkan";
    d.index = static_cast<int>(i);
    d.name = c.props.deviceName;
    d.detail = vk::device_type_name(c.props.deviceType) + ", Vulkan " +
               vk::api_text(c.props.apiVersion) + ", " +
               (c.driver_name.empty() ? vk::vendor_name(c.props.vendorID)
                                      : c.driver_name + " " + c.driver_info) +
               ", " + vk::vendor_name(c.props.vendorID) + " vk:" + [&] {
                 char buf[32];
                 std::snprintf(buf, sizeof buf, "%x:%x", c.props.vendorID, c.props.deviceID);
                 return std::string(buf);
               }();
    if (!why.empty()) d.detail += " (unusable: " + why + ")";
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::unique_ptr<Device>> open_device(std::string_view selector_in,
                                            const OpenOptions& options) {
  std::string selector(selector_in);
  std::string origin;
  if (selector.empty()) {
    selector = env_text("TUNE_VULKAN_DEVICE");
    if (!selector.empty()) origin = "TUNE_VULKAN_DEVICE=" + selector + ": ";
  }
  const bool validation = options.validation.value_or(env_flag("TUNE_VULKAN_VALIDATION"));
  auto inst = vk::Instance::create(validation);
  if (!inst.ok()) return inst.status();
  auto fail = [&](Status s) -> Result<std::unique_ptr<Device>> {
    if (!origin.empty()) s.with_context(origin);
    return s;
  };
  auto devs = (*inst)->physical_devices();
  if (!devs.ok()) return fail(devs.status());

  std::vector<vk::DeviceCaps> caps(devs->size());
  std::vector<std::string> why(devs->size());
  std::string names;
  for (std::size_t i = 0; i < devs->size(); ++i) {
    caps[i] = vk::query_caps((*inst)->get(), (*devs)[i], &why[i], (*inst)->api_version());
    names += "\n  " + std::to_string(i) + ": " + caps[i].props.deviceName +
             (why[i].empty() ? "" : " (unusable: " + why[i] + ")");
  }

  auto pick = vk::pick_device(selector, caps, why, names);
  if (!pick.ok()) return fail(pick.status());
  const std::size_t p = *pick;
  if (!why[p].empty()) {
    return fail(Status(
        StatusCode::unavailable,
        std::string("Vulkan device ") + caps[p].props.deviceName + " is unusable: " + why[p]));
  }

  vk::OpenedDevice opened;
  opened.instance = std::move(*inst);
  opened.physical = (*devs)[p];
  opened.caps = caps[p];
  auto dev = vk::VulkanDevice::create(std::move(opened));
  if (!dev.ok()) {
    Status s = dev.status();
    s.with_context(std::string("opening ") + caps[p].props.deviceName);
    return s;
  }
  return std::unique_ptr<Device>(std::move(*dev));
}

std::optional<Diagnostics> diagnostics(const Device& dev) {
  const auto* v = dynamic_cast<const vk::VulkanDevice*>(&dev);
  if (v == nullptr) return std::nullopt;
  return v->diagnostics();
}

}  // namespace vulkan

namespace detail {
namespace {
Result<std::vector<DeviceListing>> list_entry() { return vulkan::list_devices(); }
Result<std::unique_ptr<Device>> open_entry(std::string_view selector) {
  return vulkan::open_device(selector);
}
}  // namespace

BackendEntry backend_entry_vulkan() { return BackendEntry{"vulkan", &list_entry, &open_entry}; }
}  // namespace detail

}  // namespace tune
