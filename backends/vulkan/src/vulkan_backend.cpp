// Instance creation, device listing and selection, and the registry entry of the Vulkan
// backend.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "tune/environment.hpp"
#include "tune/log.hpp"
#include "tune/vulkan.hpp"
#include "vk_status.hpp"
#include "vulkan_device.hpp"

namespace tune {
namespace vk {
namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(
    VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT /*types*/,
    const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* log = static_cast<ValidationLog*>(user);
  const bool error = (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0;
  std::string text = std::string(error ? "validation error: " : "validation warning: ") +
                     (data != nullptr && data->pMessage != nullptr ? data->pMessage : "");
  {
    std::lock_guard<std::mutex> lock(log->mu);
    (error ? log->errors : log->warnings) += 1;
    if (log->messages.size() < 64) log->messages.push_back(text);
  }
  tune::log(error ? LogLevel::error : LogLevel::warning, "vulkan: " + text);
  return VK_FALSE;
}

// An instance, optionally with the validation layer and a messenger recording into `log`.
struct Instance {
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  bool validation = false;
};

void destroy_instance(Instance& inst) {
  if (inst.messenger != VK_NULL_HANDLE) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(inst.instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(inst.instance, inst.messenger, nullptr);
  }
  if (inst.instance != VK_NULL_HANDLE) vkDestroyInstance(inst.instance, nullptr);
  inst = Instance{};
}

// The loader unloads the drivers (dlclose) when a process's last VkInstance is destroyed and
// loads them again for the next one. NVIDIA's driver (580.159 on the H200) does not survive
// many such cycles: after a few dozen devices opened and closed in turn, the loader reports
// "Could not get 'vkCreateInstance' via 'vk_icdGetInstanceProcAddr' for ICD
// libGLX_nvidia.so.0" and no instance can be created any more. One plain instance is
// therefore created on first use and kept for the life of the process (never destroyed, on
// purpose), so the drivers stay loaded. If it cannot be created, nothing is kept and the
// caller's own vkCreateInstance reports why.
void keep_drivers_loaded(std::uint32_t api_version) {
  static std::mutex mu;
  static VkInstance anchor = VK_NULL_HANDLE;
  std::lock_guard<std::mutex> lock(mu);
  if (anchor != VK_NULL_HANDLE) return;
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "libtune (keeps the Vulkan drivers loaded)";
  app.pEngineName = "libtune";
  app.apiVersion = api_version;
  auto ici = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ici.pApplicationInfo = &app;
  if (vkCreateInstance(&ici, nullptr, &anchor) != VK_SUCCESS) anchor = VK_NULL_HANDLE;
}

Result<Instance> create_instance(bool validation, ValidationLog* log) {
  std::uint32_t loader_version = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion(&loader_version) != VK_SUCCESS)
    loader_version = VK_API_VERSION_1_0;
  if (loader_version < VK_API_VERSION_1_1) {
    return Status(StatusCode::unavailable,
                  "the Vulkan loader supports only Vulkan 1.0; libtune needs 1.1 or newer");
  }
  std::vector<const char*> layers, extensions;
  if (validation) {
    std::uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    vkEnumerateInstanceLayerProperties(&n, props.data());
    const bool found = std::any_of(props.begin(), props.end(), [](const VkLayerProperties& p) {
      return std::strcmp(p.layerName, kValidationLayer) == 0;
    });
    if (!found) {
      return Status(StatusCode::unavailable,
                    std::string("validation was requested but ") + kValidationLayer +
                        " is not installed (apt-get install vulkan-validationlayers)");
    }
    layers.push_back(kValidationLayer);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  auto app = vk_struct<VkApplicationInfo>(VK_STRUCTURE_TYPE_APPLICATION_INFO);
  app.pApplicationName = "libtune";
  app.pEngineName = "libtune";
  app.apiVersion = std::min<std::uint32_t>(loader_version, VK_API_VERSION_1_3);
  auto ici = vk_struct<VkInstanceCreateInfo>(VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO);
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  ici.ppEnabledExtensionNames = extensions.data();
  auto mci = vk_struct<VkDebugUtilsMessengerCreateInfoEXT>(
      VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT);
  mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mci.pfnUserCallback = on_validation_message;
  mci.pUserData = log;
  if (validation) ici.pNext = &mci;  // also reports instance creation/destruction problems

  keep_drivers_loaded(app.apiVersion);
  Instance inst;
  inst.validation = validation;
  VkResult r = vkCreateInstance(&ici, nullptr, &inst.instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
    return Status(StatusCode::unavailable,
                  "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER); on "
                  "a machine without a GPU install mesa-vulkan-drivers for lavapipe");
  }
  if (r != VK_SUCCESS) return make_error("vkCreateInstance", r, StatusCode::unavailable);
  if (validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(inst.instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create == nullptr) {
      destroy_instance(inst);
      return Status(StatusCode::unavailable, "vkCreateDebugUtilsMessengerEXT is missing");
    }
    r = create(inst.instance, &mci, nullptr, &inst.messenger);
    if (r != VK_SUCCESS) {
      destroy_instance(inst);
      return make_error("vkCreateDebugUtilsMessengerEXT", r, StatusCode::unavailable);
    }
  }
  return inst;
}

Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  std::uint32_t n = 0;
  TUNE_VK_RETURN_IF_ERROR(vkEnumeratePhysicalDevices(instance, &n, nullptr),
                          "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> devs(n);
  VkResult r = vkEnumeratePhysicalDevices(instance, &n, devs.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) return make_error("vkEnumeratePhysicalDevices", r);
  devs.resize(n);
  if (devs.empty()) {
    return Status(StatusCode::unavailable,
                  "the Vulkan loader found no physical device (is a driver installed? set "
                  "VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json for lavapipe)");
  }
  return devs;
}

// Queries what `pd` supports. `why` explains why it is unusable (empty when usable).
DeviceCaps query_caps(VkPhysicalDevice pd, std::string* why) {
  DeviceCaps c;
  vkGetPhysicalDeviceProperties(pd, &c.props);
  vkGetPhysicalDeviceMemoryProperties(pd, &c.memory);
  why->clear();
  if (c.props.apiVersion < VK_API_VERSION_1_1) {
    *why = "supports only Vulkan 1.0 (1.1 needed)";
    return c;
  }
  auto sub = vk_struct<VkPhysicalDeviceSubgroupProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES);
  auto drv = vk_struct<VkPhysicalDeviceDriverProperties>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES);
  auto p2 =
      vk_struct<VkPhysicalDeviceProperties2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &sub);
  if (c.props.apiVersion >= VK_API_VERSION_1_2) sub.pNext = &drv;
  vkGetPhysicalDeviceProperties2(pd, &p2);
  c.subgroup_size = sub.subgroupSize;
  c.subgroup_ops = sub.supportedOperations;
  c.subgroup_in_compute = (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  if (c.props.apiVersion >= VK_API_VERSION_1_2) {
    c.driver_name = drv.driverName;
    c.driver_info = drv.driverInfo;
  }

  auto f2 = vk_struct<VkPhysicalDeviceFeatures2>(VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2);
  auto s16 = vk_struct<VkPhysicalDevice16BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES);
  auto f16 = vk_struct<VkPhysicalDeviceShaderFloat16Int8Features>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES);
  auto s8 = vk_struct<VkPhysicalDevice8BitStorageFeatures>(
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES);
  f2.pNext = &s16;
  if (c.props.apiVersion >= VK_API_VERSION_1_2) {
    s16.pNext = &f16;
    f16.pNext = &s8;
  }
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  c.int64 = f2.features.shaderInt64;
  c.float64 = f2.features.shaderFloat64;
  c.int16 = f2.features.shaderInt16;
  c.storage16 = s16.storageBuffer16BitAccess;
  c.uniform_storage16 = s16.uniformAndStorageBuffer16BitAccess;
  c.float16 = f16.shaderFloat16;
  c.int8 = f16.shaderInt8;
  c.storage8 = s8.storageBuffer8BitAccess;
  c.uniform_storage8 = s8.uniformAndStorageBuffer8BitAccess;

  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qs(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs.data());
  // A compute queue with timestamps; prefer one without graphics (a dedicated compute queue).
  int best = -1;
  bool compute_seen = false;
  for (std::uint32_t i = 0; i < nq; ++i) {
    if (!(qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || qs[i].queueCount == 0) continue;
    compute_seen = true;
    if (qs[i].timestampValidBits == 0) continue;
    const bool dedicated = !(qs[i].queueFlags & VK_QUEUE_GRAPHICS_BIT);
    if (best < 0 || (dedicated && (qs[best].queueFlags & VK_QUEUE_GRAPHICS_BIT))) {
      best = static_cast<int>(i);
    }
  }
  if (best < 0) {
    *why = compute_seen ? "no compute queue family supports timestamps (timestampValidBits = 0)"
                        : "no compute queue family";
    return c;
  }
  c.queue_family = static_cast<std::uint32_t>(best);
  c.timestamp_valid_bits = qs[static_cast<std::size_t>(best)].timestampValidBits;
  if (c.props.limits.timestampPeriod <= 0.0f) *why = "timestampPeriod is 0";
  return c;
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

}  // namespace
}  // namespace vk

Result<std::vector<DeviceListing>> list_vulkan_devices() {
  auto inst = vk::create_instance(false, nullptr);
  if (!inst.ok()) return inst.status();
  auto devs = vk::physical_devices(inst->instance);
  if (!devs.ok()) {
    vk::destroy_instance(*inst);
    return devs.status();
  }
  std::vector<DeviceListing> out;
  for (std::size_t i = 0; i < devs->size(); ++i) {
    std::string why;
    vk::DeviceCaps c = vk::query_caps((*devs)[i], &why);
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
  vk::destroy_instance(*inst);
  return out;
}

Result<std::unique_ptr<Device>> open_vulkan_device(std::string_view selector_in,
                                                   const VulkanOpenOptions& options) {
  std::string selector(selector_in);
  std::string origin;
  if (selector.empty()) {
    selector = env_text("TUNE_VULKAN_DEVICE");
    if (!selector.empty()) origin = "TUNE_VULKAN_DEVICE=" + selector + ": ";
  }
  const bool validation = options.validation.value_or(env_flag("TUNE_VULKAN_VALIDATION"));
  auto log = std::make_shared<vk::ValidationLog>();
  auto inst = vk::create_instance(validation, log.get());
  if (!inst.ok()) return inst.status();
  auto fail = [&](Status s) -> Result<std::unique_ptr<Device>> {
    vk::destroy_instance(*inst);
    if (!origin.empty()) s.with_context(origin);
    return s;
  };
  auto devs = vk::physical_devices(inst->instance);
  if (!devs.ok()) return fail(devs.status());

  std::vector<vk::DeviceCaps> caps(devs->size());
  std::vector<std::string> why(devs->size());
  std::string names;
  for (std::size_t i = 0; i < devs->size(); ++i) {
    caps[i] = vk::query_caps((*devs)[i], &why[i]);
    names += "\n  " + std::to_string(i) + ": " + caps[i].props.deviceName +
             (why[i].empty() ? "" : " (unusable: " + why[i] + ")");
  }

  int pick = -1;
  if (vk::all_digits(selector)) {
    const long idx = std::strtol(selector.c_str(), nullptr, 10);
    if (idx < 0 || idx >= static_cast<long>(devs->size())) {
      return fail(Status(StatusCode::not_found,
                         "no Vulkan device with index " + selector + "; devices:" + names));
    }
    pick = static_cast<int>(idx);
  } else if (!selector.empty()) {
    const std::string want = vk::lower(selector);
    for (std::size_t i = 0; i < devs->size() && pick < 0; ++i)
      if (vk::lower(caps[i].props.deviceName).find(want) != std::string::npos)
        pick = static_cast<int>(i);
    if (pick < 0) {
      return fail(Status(StatusCode::not_found,
                         "no Vulkan device name contains '" + selector + "'; devices:" + names));
    }
  } else {
    for (std::size_t i = 0; i < devs->size(); ++i) {
      if (!why[i].empty()) continue;
      if (pick < 0 || vk::type_rank(caps[i].props.deviceType) <
                          vk::type_rank(caps[static_cast<std::size_t>(pick)].props.deviceType))
        pick = static_cast<int>(i);
    }
    if (pick < 0) {
      return fail(Status(StatusCode::unavailable,
                         "no Vulkan device has a compute queue with timestamps; devices:" + names));
    }
  }
  const auto p = static_cast<std::size_t>(pick);
  if (!why[p].empty()) {
    return fail(Status(
        StatusCode::unavailable,
        std::string("Vulkan device ") + caps[p].props.deviceName + " is unusable: " + why[p]));
  }

  vk::OpenedDevice opened;
  opened.instance = inst->instance;
  opened.messenger = inst->messenger;
  opened.physical = (*devs)[p];
  opened.caps = caps[p];
  opened.validation = inst->validation;
  auto dev = vk::VulkanDevice::create(std::move(opened), log);  // owns the instance from here
  if (!dev.ok()) {
    Status s = dev.status();
    s.with_context(std::string("opening ") + caps[p].props.deviceName);
    return s;
  }
  return std::unique_ptr<Device>(std::move(*dev));
}

std::optional<VulkanDiagnostics> vulkan_diagnostics(const Device& dev) {
  const auto* v = dynamic_cast<const vk::VulkanDevice*>(&dev);
  if (v == nullptr) return std::nullopt;
  return v->diagnostics();
}

namespace detail {
namespace {
Result<std::vector<DeviceListing>> list_entry() { return list_vulkan_devices(); }
Result<std::unique_ptr<Device>> open_entry(std::string_view selector) {
  return open_vulkan_device(selector);
}
}  // namespace

BackendEntry backend_entry_vulkan() { return BackendEntry{"vulkan", &list_entry, &open_entry}; }
}  // namespace detail

}  // namespace tune
